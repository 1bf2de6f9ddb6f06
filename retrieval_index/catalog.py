"""The catalog: model cards kept in SQLite beside the vectors.

SQLite gives atomic upserts, so an interrupted install never leaves a half-written catalog,
and it lets the index look cards up by task without reading them all.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from graph_agent.retrieval_index.cards import ModelCard

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS card_tasks (
    task TEXT NOT NULL, id TEXT NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
    PRIMARY KEY (task, id)
);
"""


class Catalog:
    """Model cards in ``<models_dir>/catalog.sqlite``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)

    @classmethod
    def in_models_dir(cls, models_dir: str | Path) -> Catalog:
        return cls(Path(models_dir).expanduser() / "catalog.sqlite")

    def upsert(self, cards: Iterable[ModelCard]) -> int:
        """Insert or replace cards in one transaction; returns how many were written."""
        n = 0
        with self._db:
            for card in cards:
                self._db.execute("DELETE FROM cards WHERE id = ?", (card.id,))
                self._db.execute(
                    "INSERT INTO cards (id, body) VALUES (?, ?)",
                    (card.id, json.dumps(card.to_dict())),
                )
                self._db.executemany(
                    "INSERT OR IGNORE INTO card_tasks (task, id) VALUES (?, ?)",
                    [(t, card.id) for t in card.tasks],
                )
                n += 1
        return n

    def remove(self, ids: Iterable[str]) -> None:
        with self._db:
            self._db.executemany("DELETE FROM cards WHERE id = ?", [(i,) for i in ids])

    def get(self, card_id: str) -> ModelCard | None:
        row = self._db.execute("SELECT body FROM cards WHERE id = ?", (card_id,)).fetchone()
        return ModelCard.from_dict(json.loads(row[0])) if row else None

    def by_task(self, task: str) -> list[ModelCard]:
        rows = self._db.execute(
            "SELECT c.body FROM cards c JOIN card_tasks t ON t.id = c.id WHERE t.task = ? "
            "ORDER BY c.id",
            (task,),
        ).fetchall()
        return [ModelCard.from_dict(json.loads(r[0])) for r in rows]

    def all(self) -> list[ModelCard]:
        rows = self._db.execute("SELECT body FROM cards ORDER BY id").fetchall()
        return [ModelCard.from_dict(json.loads(r[0])) for r in rows]

    def tasks(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT task FROM card_tasks ORDER BY 1")]

    def version(self) -> str:
        """A fingerprint of the catalog's content, so a stale index can be detected."""
        digest = hashlib.sha256()
        for (body,) in self._db.execute("SELECT body FROM cards ORDER BY id"):
            digest.update(body.encode())
        return digest.hexdigest()[:16]

    def close(self) -> None:
        self._db.close()
