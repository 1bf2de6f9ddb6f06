"""Card sources turned into catalog entries: one function per source, and ``ingest_*`` to store.

Sources (each returns ``ModelCard``s; see :mod:`graph_agent.retrieval_index.sources`):

- :func:`pack_cards`: the offline model pack's own cards (runnable);
- :func:`jsonl_cards`: HuggingGPT-format JSONL such as ``p0_models.jsonl`` (streamed);
- :func:`hub_cards`: the Hugging Face Hub, only with ``allow_network=True``;
- :func:`hf_cache_cards`: models downloaded into the local HF cache (runnable).

:func:`local_models` gathers the ids whose weights are on this machine, so a JSONL or Hub card
for a model you already have is marked runnable. The ``ingest_*`` functions write a source
into a :class:`Catalog` in batches, so a long import that fails late keeps what it stored and
re-running it only rewrites cards that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.sources import (
    PACK_CARD_FILE,
    CardSourceError,
    ImportReport,
    NetworkDisabledError,
    hf_cache_cards,
    hub_cards,
    jsonl_cards,
    pack_cards,
)

__all__ = [
    "PACK_CARD_FILE",
    "CardSourceError",
    "ImportReport",
    "NetworkDisabledError",
    "hf_cache_cards",
    "hub_cards",
    "ingest_cards",
    "ingest_hf_cache",
    "ingest_hub",
    "ingest_jsonl",
    "ingest_pack",
    "jsonl_cards",
    "local_models",
    "pack_cards",
]

#: Cards written per catalog transaction: large enough to be fast, small enough that an
#: import failing at card 900,000 has stored the first 899,000.
BATCH_SIZE = 1000


def ingest_cards(cards: Iterable[ModelCard], catalog: Catalog, batch_size: int = BATCH_SIZE) -> int:
    """Upsert ``cards`` into ``catalog`` in batches; returns how many were new or changed."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    changed = 0
    it = iter(cards)
    while batch := list(islice(it, batch_size)):
        changed += catalog.upsert(batch)
    return changed


def ingest_pack(models_dir: str | Path, catalog: Catalog) -> int:
    """Add or refresh the pack's cards in ``catalog``; returns how many were written."""
    return catalog.upsert(pack_cards(models_dir))


def local_models(
    models_dir: str | Path | None = None, *, hf_cache: str | Path | None = None
) -> dict[str, str]:
    """Model id -> weights directory for everything runnable here (pack and/or HF cache).

    Pass the result as ``local_models`` to :func:`jsonl_cards` or :func:`hub_cards` so cards
    for models already on disk are runnable. Only sources you name are read.
    """
    found: dict[str, str] = {}
    if hf_cache is not None:
        found.update({c.id: c.local_path for c in hf_cache_cards(hf_cache) if c.local_path})
    if models_dir is not None:
        found.update({c.id: c.local_path for c in pack_cards(models_dir) if c.local_path})
    return found


def ingest_jsonl(
    path: str | Path,
    catalog: Catalog,
    *,
    local_models: Mapping[str, str | Path] | None = None,
    report: ImportReport | None = None,
) -> ImportReport:
    """Import a HuggingGPT-format JSONL file into ``catalog``; returns what happened.

    Bad lines are in the report (with line numbers); the import fails only when no line is
    a card.
    """
    report = report if report is not None else ImportReport(source=str(path))
    ingest_cards(jsonl_cards(path, local_models=local_models, report=report), catalog)
    return report


def ingest_hub(catalog: Catalog, *, allow_network: bool = False, **options: Any) -> ImportReport:
    """Import cards from the Hub into ``catalog`` (see :func:`hub_cards` for ``options``)."""
    report = options.pop("report", None) or ImportReport(source="hub")
    ingest_cards(hub_cards(allow_network=allow_network, report=report, **options), catalog)
    return report


def ingest_hf_cache(catalog: Catalog, cache_dir: str | Path | None = None) -> ImportReport:
    """Import the models of the local Hugging Face cache into ``catalog``."""
    report = ImportReport(source=f"hf-cache:{cache_dir or 'default'}")
    ingest_cards(hf_cache_cards(cache_dir, report=report), catalog)
    return report
