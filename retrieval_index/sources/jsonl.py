"""JSONL model cards: HuggingGPT's format, or graph-agent's own card dicts.

HuggingGPT shipped its catalog as one JSON object per line::

    {"id": "ProsusAI/finbert", "pipeline_tag": "text-classification",
     "task": "text-classification", "downloads": 1677372, "likes": 186,
     "meta": {<card front matter: language, license, tags, datasets, model-index ...>},
     "description": "<card text (markdown)>"}

so ``../shared/benchmarks/hugginggpt/p0_models.jsonl`` imports as is. A line without ``meta``
that has ``task`` is read as a graph-agent card (``ModelCard.to_dict``), so an exported catalog
reads back too.

The reader streams: a million-line file costs one line of memory. A bad line is reported with
its number and skipped; only a file where every line fails raises, because that is a wrong
file, not a few bad cards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.sources.base import (
    CardSourceError,
    ImportReport,
    card_from_metadata,
    lookup_local,
)


def hub_parameters(raw: Mapping[str, Any]) -> int | None:
    """The parameter count a record carries as the Hub API gives it (``"safetensors":
    {"total": N, "parameters": {"F32": N}}``), or None. Records exported from the Hub's model
    info have it; without it a size is only guessed from the name ("-1.1b")."""
    safetensors = raw.get("safetensors")
    if not isinstance(safetensors, Mapping):
        return None
    total = safetensors.get("total")
    if isinstance(total, int) and not isinstance(total, bool) and total > 0:
        return total
    by_dtype = safetensors.get("parameters")
    if isinstance(by_dtype, Mapping):
        counts = [v for v in by_dtype.values() if isinstance(v, int) and not isinstance(v, bool)]
        return sum(counts) or None
    return None


def card_from_hugginggpt(
    raw: Mapping[str, Any], *, source: str = "jsonl", local_path: str | None = None
) -> ModelCard:
    """One HuggingGPT record (or a graph-agent card dict) as a card; ValueError if unusable."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    card_id = raw.get("id")
    if not isinstance(card_id, str) or not card_id.strip():
        raise ValueError("no model id ('id' is missing or empty)")
    if "meta" not in raw and "pipeline_tag" not in raw and "task" in raw:
        card = dict(raw)
        card.setdefault("source", source)
        if local_path:
            card["local_path"] = local_path
        return ModelCard.from_dict(card)
    meta = raw.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise ValueError(f"'meta' must be an object (the card's front matter), got {meta!r:.60}")
    task = raw.get("pipeline_tag") or raw.get("task")
    return card_from_metadata(
        card_id,
        meta=meta,
        parameters=hub_parameters(raw),
        pipeline_tag=task if isinstance(task, str) and task.strip() else None,
        readme=raw.get("description") if isinstance(raw.get("description"), str) else None,
        downloads=raw.get("downloads"),
        likes=raw.get("likes"),
        source=source,
        local_path=local_path,
    )


def jsonl_cards(
    path: str | Path,
    *,
    local_models: Mapping[str, str | Path] | None = None,
    report: ImportReport | None = None,
) -> Iterator[ModelCard]:
    """Stream the cards of a JSONL file, one per good line.

    ``local_models`` maps model ids to directories holding their weights (see
    ``ingest.local_models``); a card whose id is there gets that ``local_path`` and is
    runnable, every other card is not (the file describes models, it does not hold them).
    Problems go to ``report`` (pass one to read them); raises :class:`CardSourceError` when the
    file is missing, or when it has lines and none of them is a card.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise CardSourceError(f"Card file {path} does not exist (or is not a file).")
    report = report if report is not None else ImportReport(source=str(path))
    local = lookup_local(local_models)
    source = f"jsonl:{path.name}"
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            report.read += 1
            try:
                raw = json.loads(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                report.problem(f"line {number}", f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            except json.JSONDecodeError as exc:
                report.problem(f"line {number}", f"not JSON ({exc.msg} at column {exc.colno})")
                continue
            card_id = raw.get("id") if isinstance(raw, dict) else None
            try:
                card = card_from_hugginggpt(
                    raw,
                    source=source,
                    local_path=local.get(card_id.lower()) if isinstance(card_id, str) else None,
                )
            except (ValueError, TypeError) as exc:
                where = f"line {number}" + (f" ({card_id})" if isinstance(card_id, str) else "")
                report.problem(where, str(exc))
                continue
            report.imported += 1
            yield card
    if report.read and not report.imported:
        raise CardSourceError(
            f"No model card could be read from {path}: all {report.read} lines failed "
            f"(first: {report.problems[0] if report.problems else 'unknown'}). Is it a "
            "HuggingGPT-format JSONL file (one JSON object per line with 'id', 'pipeline_tag' "
            "or 'task', and 'meta')?"
        )
