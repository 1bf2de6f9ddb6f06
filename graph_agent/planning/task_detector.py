"""Which task each clause asks for: a softmax classifier over MiniLM vectors of the clause.

The request is encoded once by the pack's all-MiniLM-L6-v2; a clause's vector is the mean of
its tokens' vectors in the last layer and in a middle one (so "convert it into audio" is
read in the context of what "it" is), and one forward pass serves every clause, which keeps
planning within milliseconds. The classifier is a single linear layer over that vector, the
request's vector and hashed words of the clause ((768 + 768 + 2048) x K, plus a bias): two
classifiers, one without the middle layer, averaged logit for logit into one matrix,
trained by
``python -m graph_agent.evals.train_planner`` on clauses of TaskBench's train split aligned
to their gold steps, on TaskBench's step descriptions and on the vocabulary's synonyms; it
has a ``none`` class for clauses that ask for nothing ("I have a photo of my cat"). It
learns what words mean for tasks, never which plan a training request had.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graph_agent.file_names import FILE_NAME
from graph_agent.planning.blas import single_thread_matmul
from graph_agent.planning.implied_tasks import ImpliedTask, load_head
from graph_agent.planning.token_states import TokenStates
from graph_agent.planning.vocabulary import TASKS

NONE = "none"
#: Output classes, in weight-matrix column order.
LABELS: tuple[str, ...] = (*TASKS, NONE)
WEIGHTS = Path(__file__).with_name("data") / "task_detector.npz"
ENCODER_DIR_NAME = "all-minilm-l6-v2"
#: MiniLM's position table has 512 entries; longer requests are encoded clause by clause.
_MAX_TOKENS = 512


#: Shorthands people type for tasks ("asr a.wav", "ocr img.png") that the encoder's
#: vocabulary does not hold whole.
_TASK_SHORTHANDS = frozenset({"asr", "stt", "tts", "ocr", "vqa", "ner", "nlp", "pos", "tldr"})


class DetectorUnavailableError(RuntimeError):
    """The embedding model or the trained weights are missing."""


class Encoder:
    """MiniLM token vectors, pooled over character spans of one text."""

    def __init__(self, model_dir: str | Path) -> None:
        self.path = Path(model_dir)
        if not (self.path / "config.json").is_file():
            raise DetectorUnavailableError(
                f"The embedding model is not installed at {self.path}. "
                "Run `graph-agent models install` first."
            )
        from graph_agent.retrieval_index.token_encoder import token_encoder

        # The selector's query encoder too: one loaded model, on ONNX Runtime when the pack
        # has the export.
        self.tokens = token_encoder(self.path)

    def unreadable(self, text: str) -> bool:
        """Whether ``text`` has words of three or more letters and the model's vocabulary
        holds none of them whole: "asdf qwerty" splits into word pieces only. Real words
        can too ("transcribe", "wav"), so the planner also asks how sure the classifier is."""
        if not text.isascii():  # "översätt texten": a language the vocabulary barely covers
            return False
        words = re.findall(r"[a-z]{3,}", text.lower())
        return bool(words) and not any(w in self.vocabulary or w in _TASK_SHORTHANDS for w in words)

    @functools.cached_property
    def vocabulary(self) -> frozenset[str]:
        """The tokenizer's whole-word entries (built once: the tokenizer copies its table)."""
        return frozenset(self.tokens.tokenizer.get_vocab())

    def token_states(self, text: str, truncate: bool = False) -> TokenStates | None:
        """The text's token vectors from one pass; past the model's 512 positions, None,
        or with ``truncate`` those of its first 512 tokens."""
        tokens = self.tokens.tokenize([text], _MAX_TOKENS if truncate else None)
        if tokens.length > _MAX_TOKENS:
            return None
        last, middle = self.tokens.layer_vectors(tokens)
        offsets = tokens.offsets[0]
        real = offsets[:, 1] > offsets[:, 0]  # drops [CLS], [SEP]
        return TokenStates(offsets[real], last[0][real], middle[0][real])

    def span_vectors(
        self, text: str, spans: Sequence[tuple[int, int]], states: TokenStates | None = None
    ) -> np.ndarray:
        """One vector per ``(start, end)`` span: the mean of the tokens inside it in the last
        layer and in layer ``MIDDLE_LAYER``, each scaled to unit length, side by side.

        The middle layer still holds much of the words themselves, which the last layer has
        blended into context, and costs no extra encoder work (the pass computes it anyway).
        ``states`` are ``token_states(text)`` when the caller has them already.
        """
        states = states or self.token_states(text)
        if states is None:  # too long for one pass: each span on its own, cut if need be
            return np.vstack(
                [
                    self.span_vectors(
                        text[s:e], [(0, e - s)], self.token_states(text[s:e], truncate=True)
                    )
                    for s, e in spans
                ]
            )
        offsets = states.offsets
        width = states.last.shape[1]
        out = np.zeros((len(spans), 2 * width), dtype=np.float32)
        for i, (s, e) in enumerate(spans):
            inside = (offsets[:, 0] < e) & (offsets[:, 1] > s)
            for j, hidden in enumerate((states.last, states.middle)):
                vec = hidden[inside].mean(0) if inside.any() else hidden.mean(0)
                out[i, j * width : (j + 1) * width] = vec / (np.linalg.norm(vec) + 1e-9)
        return out


@functools.lru_cache(maxsize=2)
def encoder(models_dir: str) -> Encoder:
    """The encoder for a models directory, loaded once per process."""
    return Encoder(Path(models_dir) / ENCODER_DIR_NAME)


#: Hashed word and word-pair buckets of the clause's own words (see ``lexical``).
LEXICAL_DIM = 2048
_WORD = re.compile(r"[a-z]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def lexical(text: str) -> np.ndarray:
    """A unit vector of hashed (crudely stemmed) words and word pairs of ``text``.

    Pooled MiniLM vectors blur a clause's key verb into its context; these buckets keep
    "segment", "depth" or "transcribe" sharp. Hashing is stable (crc32), so the same text
    always gives the same vector.
    """
    vec = np.zeros(LEXICAL_DIM, dtype=np.float32)
    words = [_stem(w) for w in _WORD.findall(text.lower())]
    for gram in [*words, *(f"{a}_{b}" for a, b in itertools.pairwise(words))]:
        vec[zlib.crc32(gram.encode()) % LEXICAL_DIM] += 1.0
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


def last_layer_columns(width: int) -> np.ndarray:
    """Columns of ``features`` that do not read the middle layer: the clause's and the
    request's last-layer halves and the hashed words (``width``: one layer's size)."""
    return np.r_[0:width, 2 * width : 3 * width, 4 * width : 4 * width + LEXICAL_DIM]


def features(vectors: np.ndarray, context: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """Classifier input: the clause vector, the request's vector (context), the clause words."""
    return np.hstack(
        [
            vectors,
            np.broadcast_to(context, vectors.shape) * 0.5,
            np.vstack([lexical(t) for t in texts]),
        ]
    ).astype(np.float32)


def neutral_files(text: str) -> str:
    """``text`` with every file name replaced by "file" (same length, so spans still hold).

    The detector reads what the words ask, not what kind of file is named: "detect the
    objects in clip.wav" stays an image task, and the validator then says the input is
    audio, instead of the planner silently re-reading the request as something else. Which
    media the request has counts only later, softly, when the clause labels are decoded as
    a sequence (``decoding.py``): an unsure "what is in clip.wav" becomes the likeliest task
    that can read a recording.
    """
    return FILE_NAME.sub(
        lambda m: "file".ljust(len(m.group(0))) if len(m.group(0)) >= 4 else m.group(0), text
    )


def clause_features(
    enc: Encoder,
    request: str,
    spans: Sequence[tuple[int, int]],
    states: TokenStates | None = None,
) -> np.ndarray:
    """Features of each span of ``request``: the one function training and planning share.

    ``states`` are ``enc.token_states(neutral_files(request))`` when the caller has them.
    """
    text = neutral_files(request)
    vecs = enc.span_vectors(text, [*spans, (0, len(text))], states)
    return features(vecs[:-1], vecs[-1], [text[s:e] for s, e in spans])


@functools.lru_cache(maxsize=4)
def load_weights(path: str = str(WEIGHTS)) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """``(W, b, labels)`` from the trained ``.npz``, cached for the process.

    ``b`` already includes the ``none`` offset chosen at training time.
    """
    if not Path(path).is_file():
        raise DetectorUnavailableError(
            f"No trained task detector at {path}; run `python -m graph_agent.evals.train_planner`."
        )
    data = np.load(path, allow_pickle=False)
    labels = tuple(str(x) for x in data["labels"])
    b = data["b"].astype(np.float32)
    b[labels.index(NONE)] += float(data["none_bias"]) if "none_bias" in data else 0.0
    return data["W"].astype(np.float32), b, labels


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class TaskDetector:
    """Probabilities over ``labels`` for every clause of a request, and the tasks it implies."""

    def __init__(self, models_dir: str | Path, weights: str | Path = WEIGHTS) -> None:
        self.encoder = encoder(str(Path(models_dir).expanduser()))
        self.W, self.b, self.labels = load_weights(str(weights))
        self.set_head = load_head(str(weights))

    def detect(
        self, request: str, spans: Sequence[tuple[int, int]]
    ) -> tuple[np.ndarray, list[ImpliedTask]]:
        """Task probabilities per clause (rows: clauses; columns: ``self.labels``), and the
        tasks the whole request implies.

        One encoder pass serves both. Requests past the encoder's 512 positions get no
        implied tasks (their clauses are encoded one by one).
        """
        states = self.encoder.token_states(neutral_files(request))
        implied = self.set_head.implied(states) if self.set_head and states else []
        if not spans:
            return np.zeros((0, len(self.labels)), dtype=np.float32), implied
        clause_input = clause_features(self.encoder, request, spans, states)
        probs = softmax(single_thread_matmul(clause_input, self.W) + self.b)
        return probs, implied
