"""The catalog: model cards kept in SQLite beside the vectors.

SQLite gives atomic upserts, so an interrupted install never leaves a half-written catalog,
and it lets the index look cards up by task without reading them all.
"""

from __future__ import annotations

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
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('version', 0);
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
        """Insert or replace cards in one transaction; returns how many changed.

        An unchanged card is left alone, so re-ingesting a source does not make the index
        stale; any change bumps the catalog version.
        """
        n = 0
        with self._db:
            for card in cards:
                body = json.dumps(card.to_dict(), sort_keys=True)
                row = self._db.execute("SELECT body FROM cards WHERE id = ?", (card.id,))
                if (old := row.fetchone()) and old[0] == body:
                    continue
                self._db.execute("DELETE FROM cards WHERE id = ?", (card.id,))
                self._db.execute("INSERT INTO cards (id, body) VALUES (?, ?)", (card.id, body))
                self._db.executemany(
                    "INSERT OR IGNORE INTO card_tasks (task, id) VALUES (?, ?)",
                    [(t, card.id) for t in card.tasks],
                )
                n += 1
            if n:
                self._bump()
        return n

    def remove(self, ids: Iterable[str]) -> int:
        with self._db:
            cur = self._db.executemany("DELETE FROM cards WHERE id = ?", [(i,) for i in ids])
            if cur.rowcount:
                self._bump()
        return max(cur.rowcount, 0)

    def _bump(self) -> None:
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")

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

    def version(self) -> int:
        """A counter that grows with every change, so a stale index is detected cheaply."""
        return int(self._db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])

    def close(self) -> None:
        self._db.close()
