"""FAISS indexes on disk, one per task, so a search never scans other tasks' cards.

Each task's index is an ``IndexIDMap`` over inner-product vectors whose ids are row numbers
in a small id list saved beside it. A manifest records the catalog fingerprint and the
embedder, so a stale index is rebuilt instead of silently used.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import faiss
import numpy as np

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import Embedder


def _task_file(task: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "_", task.lower())


class CardIndex:
    """The per-task FAISS indexes under ``<models_dir>/index``."""

    def __init__(self, models_dir: str | Path, catalog: Catalog, embedder: Embedder) -> None:
        self.dir = Path(models_dir).expanduser() / "index"
        self.catalog = catalog
        self.embedder = embedder
        self._cache: dict[str, tuple[faiss.Index, list[str]]] = {}

    @property
    def manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    def is_fresh(self) -> bool:
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError):
            return False
        return (
            manifest.get("catalog") == self.catalog.version()
            and manifest.get("embedder") == self.embedder.model_id
        )

    def build(self, progress: bool = False) -> dict[str, int]:
        """(Re)build every task's index from the catalog; returns cards indexed per task."""
        cards = self.catalog.all()
        vectors = self.embedder.encode([c.embedding_text() for c in cards], progress=progress)
        row_of = {c.id: i for i, c in enumerate(cards)}
        self.dir.mkdir(parents=True, exist_ok=True)
        counts: dict[str, int] = {}
        for task in self.catalog.tasks():
            ids = [c.id for c in cards if task in c.tasks]
            index = faiss.IndexIDMap(faiss.IndexFlatIP(vectors.shape[1]))
            index.add_with_ids(
                vectors[[row_of[i] for i in ids]], np.arange(len(ids), dtype=np.int64)
            )
            name = _task_file(task)
            faiss.write_index(index, str(self.dir / f"{name}.faiss"))
            (self.dir / f"{name}.ids.json").write_text(json.dumps(ids))
            counts[task] = len(ids)
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "catalog": self.catalog.version(),
                    "embedder": self.embedder.model_id,
                    "tasks": counts,
                }
            )
        )
        tmp.replace(self.manifest_path)
        self._cache.clear()
        return counts

    def ensure(self) -> None:
        if not self.is_fresh():
            self.build()

    def search(self, task: str, query: str, k: int = 20) -> list[tuple[str, float]]:
        """Card ids for ``task`` nearest to ``query``, with cosine similarity, best first."""
        self.ensure()
        if task not in self._cache:
            name = _task_file(task)
            path = self.dir / f"{name}.faiss"
            if not path.is_file():
                return []
            ids = json.loads((self.dir / f"{name}.ids.json").read_text())
            self._cache[task] = (faiss.read_index(str(path)), ids)
        index, ids = self._cache[task]
        if index.ntotal == 0:
            return []
        scores, rows = index.search(self.embedder.encode([query]), min(k, index.ntotal))
        return [(ids[r], float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
