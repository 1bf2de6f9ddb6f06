"""The model card schema every source (model pack, JSONL, Hub, local cache) is turned into.

One schema for every source means the index, the constraints and the report never ask where a
card came from. Normalisation happens here, in ``ModelCard.__post_init__``, and is idempotent:
licences become SPDX-style ids, languages lowercase ISO codes, and ``tasks`` always includes the
card's own pipeline tag. A card written by ``to_dict`` therefore reads back equal with
``from_dict``, and a catalog that re-ingests an unchanged source sees no change.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from copy import copy as shallow_copy
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.licenses import UNKNOWN, normalize_licenses


@dataclass(frozen=True)
class Benchmark:
    """One reported result, with its direction so "best" means the right thing (low WER).

    ``dataset`` is the name the card gives (falling back to the dataset id); ``dataset_id``
    is the Hub dataset id (``mozilla-foundation/common_voice_11_0``); ``config`` and
    ``split`` say which part ("en", "test"). ``metric`` is the metric's type in lowercase
    ("wer", "rouge") and ``name`` its display name ("Test WER", "ROUGE-1"), which tells
    results of the same type apart. ``task`` is the task the result was measured on.
    """

    dataset: str
    metric: str
    value: float
    higher_is_better: bool = True
    name: str | None = None
    dataset_id: str | None = None
    config: str | None = None
    split: str | None = None
    task: str | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Benchmark:
        """Read a stored benchmark, ignoring keys a newer or older schema added."""
        known = cls.__dataclass_fields__  # not fields(): this runs for every card read
        return cls(**{k: v for k, v in raw.items() if k in known})

    def better_than(self, other: Benchmark) -> bool:
        """Whether this result beats ``other`` on the same metric, honouring the direction."""
        return self.value > other.value if self.higher_is_better else self.value < other.value


# --- tasks -----------------------------------------------------------------------------------

#: Words in a text-to-audio card that mean it makes music or sound effects, not speech.
_NOT_SPEECH = {"music", "musicgen", "audioldm", "audiogen", "sound", "sfx", "text-to-music"}
#: Hub datasets that are summarisation benchmarks (evidence a text2text model summarises).
_SUMMARY_DATASETS = {
    "cnn_dailymail", "xsum", "samsum", "billsum", "big_patent", "multi_news", "gigaword",
    "scientific_papers", "dialogsum", "reddit_tifu", "wikihow", "booksum", "gov_report",
    "arxiv_summarization", "pubmed_summarization", "newsroom", "aeslc", "mlsum", "wiki_lingua",
}  # fmt: skip


def _words(values: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for v in values:
        low = str(v).lower()
        out.add(low)
        out.add(low.rsplit("/", 1)[-1])
        out.update(w for w in re.split(r"[^a-z0-9+]+", low) if w)
    return out


def serving_tasks(
    pipeline_tag: str,
    *,
    card_id: str = "",
    tags: Iterable[str] = (),
    datasets: Iterable[str] = (),
    benchmark_tasks: Iterable[str] = (),
) -> list[str]:
    """Every graph-agent task a model with this Hub pipeline tag can serve, its own tag first.

    Hub tags and graph-agent task names mostly agree; where they differ, or where one model
    type clearly serves another task, the card also lists graph-agent's name. The rules are
    deliberately conservative, because a wrong entry puts a model in front of a task it cannot
    do, while a missing one only costs a candidate:

    - ``text-to-audio`` serves ``text-to-speech`` unless the card is about music or sound;
    - ``image-text-to-text`` (vision-language chat) serves ``image-to-text`` and
      ``visual-question-answering``, which transformers 5 runs through that pipeline;
    - ``text2text-generation`` serves ``summarization`` or ``translation`` only when its tags,
      name, datasets or ``model-index`` task say so (t5-base is tagged both; a grammar fixer
      is neither);
    - ``translation_xx_to_yy`` tags are ``translation``;
    - ``text-generation`` serves ``conversational`` when tagged conversational or named chat
      or instruct;
    - ``sentence-similarity`` serves ``feature-extraction`` (sentence encoders embed), and a
      ``feature-extraction`` sentence-transformers model serves ``sentence-similarity``.
    """
    tag = pipeline_tag.strip().lower()
    out = [tag]
    tag_words = _words(tags)
    name_words = _words([card_id])
    evidence = tag_words | name_words | _words(benchmark_tasks)
    if tag.startswith("translation_") or tag == "translation":
        out.append("translation")
    elif tag == "text-to-audio":
        if not (evidence & _NOT_SPEECH):
            out.append("text-to-speech")
    elif tag == "image-text-to-text":
        out += ["image-to-text", "visual-question-answering"]
    elif tag == "text2text-generation":
        data = {d.lower().rsplit("/", 1)[-1] for d in datasets}
        if (
            {"summarization", "summarisation"} & evidence
            or data & _SUMMARY_DATASETS
            or any("summar" in w for w in name_words)
        ):
            out.append("summarization")
        if (
            "translation" in evidence
            or any(t.lower().startswith("translation_") for t in tags)
            or any(w.startswith(("opus-mt", "translat", "nllb", "m2m100")) for w in name_words)
            or any(d.startswith(("wmt", "opus")) for d in data)
        ):
            out.append("translation")
    elif tag == "text-generation":
        if {"conversational", "chat", "instruct"} & evidence or any(
            w.endswith(("-chat", "-instruct", "-it")) for w in name_words
        ):
            out.append("conversational")
    elif tag == "sentence-similarity":
        out.append("feature-extraction")
    elif tag == "feature-extraction" and {"sentence-transformers", "sentence-similarity"} & (
        tag_words
    ):
        out.append("sentence-similarity")
    return list(dict.fromkeys(out))


# --- languages -------------------------------------------------------------------------------

#: English names (and a few ISO 639-2/3 codes) of common languages, for cards that write
#: "English" or "eng" where the Hub expects "en".
LANGUAGE_NAMES: dict[str, str] = {
    "english": "en", "french": "fr", "german": "de", "spanish": "es", "chinese": "zh",
    "mandarin": "zh", "japanese": "ja", "korean": "ko", "russian": "ru", "portuguese": "pt",
    "italian": "it", "dutch": "nl", "arabic": "ar", "hindi": "hi", "turkish": "tr",
    "vietnamese": "vi", "polish": "pl", "swedish": "sv", "norwegian": "no", "danish": "da",
    "finnish": "fi", "greek": "el", "czech": "cs", "hungarian": "hu", "romanian": "ro",
    "ukrainian": "uk", "hebrew": "he", "indonesian": "id", "malay": "ms", "thai": "th",
    "persian": "fa", "farsi": "fa", "bengali": "bn", "urdu": "ur", "tamil": "ta",
    "telugu": "te", "marathi": "mr", "gujarati": "gu", "swahili": "sw", "catalan": "ca",
    "basque": "eu", "bulgarian": "bg", "croatian": "hr", "serbian": "sr", "slovak": "sk",
    "slovenian": "sl", "estonian": "et", "latvian": "lv", "lithuanian": "lt", "irish": "ga",
    "welsh": "cy", "icelandic": "is", "filipino": "tl", "tagalog": "tl", "afrikaans": "af",
    "eng": "en", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de", "spa": "es", "zho": "zh",
    "chi": "zh", "jpn": "ja", "kor": "ko", "rus": "ru", "por": "pt", "ita": "it", "nld": "nl",
    "dut": "nl", "ara": "ar", "hin": "hi", "tur": "tr", "vie": "vi", "pol": "pl",
}  # fmt: skip
#: Values that are not a language code but are what the Hub writes and users filter on.
_SPECIAL_LANGUAGES = {"multilingual", "code"}


def normalize_language(raw: Any) -> str | None:
    """A lowercase ISO 639 code for one language value, or None when it is not one.

    "English" -> "en", "en-US"/"en_us" -> "en" (a filter for "en" must match a US-English
    model), "eng_Latn" -> "en". YAML reads the Norwegian code ``no`` as False, so False
    means "no". Unrecognised names longer than a code are dropped rather than guessed.
    """
    if raw is False:
        return "no"
    if raw is None or raw is True:
        return None
    return _language_code(str(raw).strip().lower())


@functools.lru_cache(maxsize=4096)
def _language_code(text: str) -> str | None:
    """``normalize_language`` for a stripped, lowercase text (cached: cards repeat a few
    hundred values, and every card read from the catalog is normalised again)."""
    if not text:
        return None
    if text in _SPECIAL_LANGUAGES:
        return text
    if text in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[text]
    if " " in text:  # a phrase we do not know, not a code
        return None
    primary = re.split(r"[-_]", text, maxsplit=1)[0]
    if primary in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[primary]
    if re.fullmatch(r"[a-z]{2,3}", primary):
        return primary
    return None


def normalize_languages(raw: Any) -> list[str]:
    """Every language in ``raw`` (a value or a list), normalised and deduplicated in order."""
    items = raw if isinstance(raw, list | tuple | set) else [raw]
    return list(dict.fromkeys(code for item in items if (code := normalize_language(item))))


# --- text ------------------------------------------------------------------------------------

#: Hub tag prefixes that repeat other fields (licence, datasets ...): sources drop them.
#: ``NOISE_TAGS`` say nothing about what a model does; they stay in the card (a user may
#: look for "onnx") but are kept out of the embedding so they cannot drown the useful ones.
_NOISE_TAG_PREFIXES = ("license:", "dataset:", "arxiv:", "region:", "base_model:", "doi:")
NOISE_TAGS: frozenset[str] = frozenset(
    {
        "autotrain_compatible", "endpoints_compatible", "has_space", "text-generation-inference",
        "pytorch", "tf", "jax", "tensorboard", "safetensors", "model-index", "deploy:azure",
        "custom_code", "8-bit", "4-bit", "generated_from_trainer", "generated_from_keras_callback",
        "inference", "transformers", "onnx", "coreml", "tflite", "rust", "gguf", "mlx",
        "graph-agent-pack", "offline", "eval-results", "us", "autotrain", "keras",
    }
)  # fmt: skip


def clean_tags(tags: Any) -> list[str]:
    """Tags with the noise and the field-duplicating Hub prefixes removed, order kept."""
    items = tags if isinstance(tags, list | tuple) else ([tags] if tags else [])
    out = []
    for tag in items:
        if tag is None or isinstance(tag, dict | list | bool):
            continue
        text = str(tag).strip()
        if text and not text.lower().startswith(_NOISE_TAG_PREFIXES):
            out.append(text)
    return list(dict.fromkeys(out))


#: How much of a card's prose the schema keeps: enough for the embedding model (MiniLM reads
#: 256 word pieces, about 1,000 characters) and a report line, not the whole README.
DESCRIPTION_CHARS = 600

_MD_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\A---\n.*?\n---\n", re.S), " "),  # front matter
    (re.compile(r"<!--.*?-->", re.S), " "),  # comments
    (re.compile(r"```.*?(```|\Z)", re.S), " "),  # fenced code
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), " "),  # images
    (re.compile(r"\[!\[.*?\]\(.*?\)\]\(.*?\)"), " "),  # badges
    (re.compile(r"\[[^\]]*\]\(#[^)]*\)"), " "),  # table-of-contents links
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links -> their text
    (re.compile(r"<[^>]+>"), " "),  # html tags
    (re.compile(r"^\s*#+\s.*$", re.M), " "),  # headings say little ("## Model description")
    (re.compile(r"^\s*\|.*\|\s*$", re.M), " "),  # tables
    (re.compile(r"^\s*[-*_]{3,}\s*$", re.M), " "),  # rules
    (re.compile(r"^\s*(?:[-*+]|\d+\.)\s*$", re.M), " "),  # bullets left empty
    (re.compile(r"https?://\S+"), " "),  # bare urls
    (re.compile(r"[*_`>#]+"), " "),  # emphasis and quote marks
]


def short_description(markdown: str | None, limit: int = DESCRIPTION_CHARS) -> str:
    """The first ``limit`` characters of a card's prose, without markdown, HTML or code.

    The index embeds this text, so markup, badges and URLs would only add noise. The cut
    falls at the end of a sentence when one ends in the second half of the window.
    """
    if not markdown:
        return ""
    text = str(markdown)
    for pattern, repl in _MD_RULES:
        text = pattern.sub(repl, text)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end >= limit // 2 else cut.rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _int_or_none(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return None


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return list(dict.fromkeys(str(v).strip() for v in items if v is not None and str(v).strip()))


@dataclass
class ModelCard:
    """What the selector knows about one model.

    - ``task`` is the card's Hub pipeline tag; ``tasks`` lists every task graph-agent can
      serve with it (see :func:`serving_tasks`), and always starts with ``task``.
    - ``license`` is the main licence as an SPDX-style id (``unknown`` when the card gives
      none); ``licenses`` lists all of them for dual-licensed models.
    - ``languages`` are lowercase ISO 639 codes (plus ``multilingual``/``code``).
    - ``parameters`` and ``size_bytes`` are None when unknown, never guessed as 0 by sources.
    - ``benchmarks`` come from the card's ``model-index``, each with its direction.
    - ``source`` says where the card came from ("hub", "jsonl:<file>", "hf-cache", the pack).
    - ``local_path`` is set when the weights are on this machine, which makes it runnable.
    - ``uses`` and ``out_of_scope`` are short requests the model is meant for and is not
      (a model card's "Direct use" and "Out-of-scope use"): an OCR model serves
      image-to-text for "what does the sign say", not for "describe this photo". The
      selector rules a card out for a request closer to what it is not for than to any of
      its uses.
    """

    id: str
    task: str
    description: str = ""
    tasks: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    license: str | None = None
    licenses: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    parameters: int | None = None
    size_bytes: int | None = None
    downloads: int | None = None
    likes: int | None = None
    benchmarks: list[Benchmark] = field(default_factory=list)
    library: str | None = None
    source: str = ""
    local_path: str | None = None
    uses: list[str] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError(f"A model card needs a non-empty string id, got {self.id!r}.")
        if not isinstance(self.task, str) or not self.task.strip():
            raise ValueError(
                f"Model card {self.id!r} needs a task (pipeline tag), got {self.task!r}."
            )
        self.id = self.id.strip()
        self.task = self.task.strip().lower()
        self.tasks = list(dict.fromkeys([self.task, *(t.lower() for t in _str_list(self.tasks))]))
        self.tags = _str_list(self.tags)
        self.uses = _str_list(self.uses)
        self.out_of_scope = _str_list(self.out_of_scope)
        self.datasets = _str_list(self.datasets)
        self.languages = normalize_languages(self.languages)
        self._normalize_licenses()
        for name in ("parameters", "size_bytes", "downloads", "likes"):
            setattr(self, name, _int_or_none(getattr(self, name)))
        self.description = str(self.description or "")
        self.benchmarks = [
            b if isinstance(b, Benchmark) else Benchmark.from_dict(b) for b in self.benchmarks or []
        ]
        self.local_path = str(self.local_path) if self.local_path else None

    def _normalize_licenses(self) -> None:
        """``license`` is the first of ``licenses``; either may be given, both are normalised."""
        main = normalize_licenses(self.license)
        rest = normalize_licenses(list(self.licenses or []))
        ids = list(dict.fromkeys([*main, *rest]))
        if len(ids) > 1 and UNKNOWN in ids:
            ids.remove(UNKNOWN)
        self.licenses = [i for i in ids if i != UNKNOWN]
        self.license = ids[0] if ids else UNKNOWN

    def copy(self) -> ModelCard:
        """A copy whose fields and lists are its own, made without normalising again."""
        twin = shallow_copy(self)
        for name, value in vars(twin).items():
            if isinstance(value, list):
                setattr(twin, name, list(value))
        return twin

    @property
    def runnable(self) -> bool:
        """True when the weights are on disk, so running it needs no network."""
        return bool(self.local_path) and Path(self.local_path).is_dir()

    def benchmark(self, dataset: str, metric: str) -> Benchmark | None:
        """This card's result for ``dataset`` and ``metric``, matched case-insensitively.

        ``dataset`` matches the card's dataset name or Hub id; ``metric`` its type or name.
        """
        d, m = dataset.strip().lower(), metric.strip().lower()
        for b in self.benchmarks:
            if d in {b.dataset.lower(), (b.dataset_id or "").lower()} and m in {
                b.metric.lower(),
                (b.name or "").lower(),
            }:
                return b
        return None

    def embedding_text(self) -> str:
        """The short text the index embeds: name, tasks, meaningful tags and description.

        Framework and housekeeping tags are left out: "pytorch" says nothing about what a
        model does and would pull unrelated cards together.
        """
        tags = [t for t in self.tags if t.lower() not in NOISE_TAGS][:12]
        name = re.sub(r"[/_]+", " ", self.id)
        parts = [name, ", ".join(self.tasks), ", ".join(tags)]
        return ". ".join(p for p in [*parts, self.description[:DESCRIPTION_CHARS]] if p)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``from_dict`` reads it back to an equal card."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelCard:
        """Read a stored card, ignoring unknown keys so older and newer catalogs still load."""
        if not isinstance(raw, dict):
            raise ValueError(f"A model card must be a JSON object, got {type(raw).__name__}.")
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in raw.items() if k in known})
