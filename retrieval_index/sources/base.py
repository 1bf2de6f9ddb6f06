"""What every card source shares: front matter to card, and a report of what failed.

Sources differ in where front matter and counts come from (a JSONL line, the Hub API, a
README on disk), but the mapping from Hub front matter to a :class:`ModelCard` is one, so a
model reads the same whichever way it entered the catalog.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.cards import (
    ModelCard,
    clean_tags,
    normalize_languages,
    serving_tasks,
    short_description,
)
from graph_agent.retrieval_index.licenses import normalize_licenses
from graph_agent.retrieval_index.model_index import parse_model_index

log = logging.getLogger("graph_agent.retrieval_index.sources")

#: How many problems a report keeps word for word; the rest are only counted, so a
#: million-line file full of errors cannot exhaust memory.
MAX_PROBLEMS_KEPT = 200


class CardSourceError(RuntimeError):
    """A card source could not be read at all (every entry failed, or it is unreachable)."""


@dataclass
class ImportReport:
    """What a source read: how many entries, how many became cards, and what went wrong.

    Bad entries do not stop an import (one broken line must not lose 672 good cards), so
    this is where they are reported, each with its line number or model id.
    """

    source: str
    read: int = 0
    imported: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def problem(self, where: str, message: str) -> None:
        """Record one bad entry and log it; counts every one, keeps the first few hundred."""
        self.skipped += 1
        text = f"{where}: {message}"
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(text)
        log.warning("%s: %s", self.source, text)

    def note(self, where: str, message: str) -> None:
        """Record something that degraded an entry without dropping it (a README not read)."""
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(f"{where}: {message}")
        log.info("%s: %s: %s", self.source, where, message)

    def summary(self) -> str:
        """One line for a CLI or a log: "read 673, imported 672, skipped 1 (line 5: ...)"."""
        head = f"{self.source}: read {self.read}, imported {self.imported}, skipped {self.skipped}"
        if self.problems:
            more = f" (+{len(self.problems) - 3} more)" if len(self.problems) > 3 else ""
            head += " (" + "; ".join(self.problems[:3]) + more + ")"
        return head


def read_readme(path: str | Path) -> tuple[dict[str, Any], str]:
    """A README's front matter (the raw YAML mapping) and its text, via ``huggingface_hub``.

    ``ModelCard.load`` splits the file, but its ``data`` passes through ``ModelCardData``,
    which drops a whole ``model-index`` it finds invalid (a result without ``task``, common in
    hand-written cards), and its ``content`` is rebuilt from that. So the front matter is read
    from the file's own YAML, which keeps every result for the tolerant parser here.
    """
    import yaml
    from huggingface_hub import ModelCard as HubCard
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    card = HubCard.load(path, ignore_metadata_errors=True)
    meta: Any = None
    if match := REGEX_YAML_BLOCK.search(raw):
        try:
            meta = yaml.safe_load(match.group(2))
        except yaml.YAMLError:
            meta = None
    if not isinstance(meta, dict):
        meta = card.data.to_dict()
    return meta, card.text


def meta_get(meta: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` present in the front matter (authors write "licence", too)."""
    for key in keys:
        if key in meta and meta[key] is not None:
            return meta[key]
    return None


_SIZE_IN_NAME = re.compile(r"(?:^|[-_.])(\d+(?:\.\d+)?)([mb])(?=$|[-_.])", re.I)


def parameters_from_name(card_id: str) -> int | None:
    """A parameter count written in the model's name ("opt-1.3b", "bloom-560m"), or None.

    Only a number directly followed by "m" or "b" as its own name segment counts, so
    "bert-base" or "t5-v1_1" give None rather than a guess.
    """
    m = _SIZE_IN_NAME.search(card_id.rsplit("/", 1)[-1])
    if not m:
        return None
    scale = 1_000_000 if m.group(2).lower() == "m" else 1_000_000_000
    return int(float(m.group(1)) * scale)


def card_from_metadata(
    card_id: str,
    *,
    meta: Mapping[str, Any] | None,
    pipeline_tag: str | None = None,
    readme: str | None = None,
    tags: Any = None,
    downloads: Any = None,
    likes: Any = None,
    parameters: int | None = None,
    size_bytes: int | None = None,
    library: str | None = None,
    source: str = "",
    local_path: str | Path | None = None,
) -> ModelCard:
    """A card from Hub front matter (``meta``) and what the source knows besides.

    Explicit arguments win over the front matter: the Hub's computed pipeline tag and tags
    are more reliable than what an author typed. Raises ValueError when no task is known,
    since a card without a task can never be selected.
    """
    meta = meta if isinstance(meta, Mapping) else {}
    task = pipeline_tag or meta_get(meta, "pipeline_tag", "pipeline-tag")
    if not task or not isinstance(task, str):
        raise ValueError("no pipeline tag (neither the source nor the card's front matter)")
    all_tags = clean_tags(list(clean_tags(tags)) + clean_tags(meta_get(meta, "tags")))
    datasets = meta_get(meta, "datasets", "dataset")
    datasets = [str(d) for d in (datasets if isinstance(datasets, list) else [datasets]) if d]
    benchmarks = parse_model_index(meta_get(meta, "model-index", "model_index"))
    raw_tags = [*(tags if isinstance(tags, list) else []), *(meta_get(meta, "tags") or [])]
    licenses = normalize_licenses(meta_get(meta, "license", "licence", "licenses"))
    if not licenses:  # the Hub also states the licence as a "license:<id>" tag
        licenses = normalize_licenses([t for t in raw_tags if str(t).startswith("license:")])
    languages = normalize_languages(meta_get(meta, "language", "languages"))
    return ModelCard(
        id=card_id,
        task=task,
        tasks=serving_tasks(
            task,
            card_id=card_id,
            tags=all_tags,
            datasets=datasets,
            benchmark_tasks=[b.task for b in benchmarks if b.task],
        ),
        description=short_description(readme),
        tags=all_tags,
        license=licenses[0] if licenses else None,
        licenses=licenses,
        languages=languages,
        datasets=datasets,
        parameters=parameters if parameters else parameters_from_name(card_id),
        size_bytes=size_bytes,
        downloads=downloads,
        likes=likes,
        benchmarks=benchmarks,
        library=library or meta_get(meta, "library_name"),
        source=source,
        local_path=str(local_path) if local_path else None,
    )


def lookup_local(local_models: Mapping[str, str | Path] | None) -> dict[str, str]:
    """``local_models`` keyed by lowercase id: Hub ids are case-insensitive."""
    return {k.lower(): str(v) for k, v in (local_models or {}).items()}
