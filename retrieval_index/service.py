"""One ready-to-search index per models directory, opened once per process."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import Embedder
from graph_agent.retrieval_index.index import CardIndex
from graph_agent.retrieval_index.ingest import ingest_pack

_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _open(models_dir: str) -> CardIndex:
    catalog = Catalog.in_models_dir(models_dir)
    ingest_pack(models_dir, catalog)  # a no-op unless the pack changed
    return CardIndex(models_dir, catalog, Embedder(models_dir))


def open_index(models_dir: str | Path) -> CardIndex:
    """The catalog + FAISS index for ``models_dir``, built on first use if needed."""
    key = str(Path(models_dir).expanduser().resolve())
    with _lock:
        index = _open(key)
        index.ensure()
    return index
