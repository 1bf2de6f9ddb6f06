"""FAISS indexes on disk, one per task, so a search never scans other tasks' cards.

Each task's index is an ``IndexIDMap`` over inner-product vectors whose ids are row numbers
in a small id list saved beside it. A manifest records the catalog version, the embedder and
the tasks, so a stale index is rebuilt instead of silently used. A build is written to a new
folder and swapped in, so readers never see a half-built index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
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
        self._cache_version: object = None

    def manifest(self) -> dict:
        try:
            return json.loads((self.dir / "manifest.json").read_text())
        except (OSError, ValueError):
            return {}

    def is_fresh(self) -> bool:
        manifest = self.manifest()
        return (
            manifest.get("catalog") == self.catalog.version()
            and manifest.get("embedder") == self.embedder.model_id
        )

    def build(self, progress: bool = False) -> dict[str, int]:
        """(Re)build every task's index from the catalog; returns cards indexed per task."""
        version = self.catalog.version()
        cards = self.catalog.all()
        vectors = self.embedder.encode([c.embedding_text() for c in cards], progress=progress)
        row_of = {c.id: i for i, c in enumerate(cards)}
        staging = self.dir.with_name(f".index-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        counts: dict[str, int] = {}
        for task in self.catalog.tasks():
            ids = [c.id for c in cards if task in c.tasks]
            index = faiss.IndexIDMap(faiss.IndexFlatIP(vectors.shape[1]))
            rows = vectors[[row_of[i] for i in ids]]
            index.add_with_ids(rows, np.arange(len(ids), dtype=np.int64))
            faiss.write_index(index, str(staging / f"{_task_file(task)}.faiss"))
            (staging / f"{_task_file(task)}.ids.json").write_text(json.dumps(ids))
            counts[task] = len(ids)
        manifest = {"catalog": version, "embedder": self.embedder.model_id, "tasks": counts}
        (staging / "manifest.json").write_text(json.dumps(manifest))
        old = self.dir.with_name(f".index-old-{os.getpid()}")
        if self.dir.exists():
            self.dir.rename(old)
        staging.rename(self.dir)
        shutil.rmtree(old, ignore_errors=True)
        self._cache.clear()
        return counts

    def ensure(self) -> None:
        if not self.is_fresh():
            self.build()

    def search(self, task: str, query: str, k: int | None = None) -> list[tuple[str, float]]:
        """Card ids for ``task`` nearest to ``query`` (all of them unless ``k``), best first."""
        self.ensure()
        manifest = self.manifest()
        if manifest.get("catalog") != self._cache_version:
            self._cache.clear()
            self._cache_version = manifest.get("catalog")
        if task not in manifest.get("tasks", {}):
            return []
        if task not in self._cache:
            name = _task_file(task)
            ids = json.loads((self.dir / f"{name}.ids.json").read_text())
            self._cache[task] = (faiss.read_index(str(self.dir / f"{name}.faiss")), ids)
        index, ids = self._cache[task]
        if index.ntotal == 0:
            return []
        k = index.ntotal if k is None else min(k, index.ntotal)
        scores, rows = index.search(self.embedder.encode([query]), k)
        return [(ids[r], float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
