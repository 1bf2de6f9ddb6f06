"""The model pack's own cards: runnable, with their directories; a broken file is skipped."""

from __future__ import annotations

import json

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.ingest import (
    PACK_CARD_FILE,
    ImportReport,
    ingest_pack,
    local_models,
    pack_cards,
)


def test_installed_pack_cards_are_runnable(models_dir, tmp_path):
    cards = pack_cards(models_dir)
    assert cards and all(c.runnable for c in cards)
    assert all(c.license == c.license.lower() for c in cards)
    catalog = Catalog(tmp_path / "catalog.sqlite")
    assert ingest_pack(models_dir, catalog) == len(cards)
    assert ingest_pack(models_dir, catalog) == 0  # unchanged cards are not rewritten
    assert local_models(models_dir=models_dir) == {c.id: c.local_path for c in cards}


def test_broken_pack_card_is_skipped_and_reported(tmp_path):
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / PACK_CARD_FILE).write_text(
        json.dumps({"id": "me/good", "task": "text-to-speech", "license": "MIT License"})
    )
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / PACK_CARD_FILE).write_text("{truncated")
    report = ImportReport(source="pack")
    (card,) = pack_cards(tmp_path, report=report)
    assert card.id == "me/good" and card.license == "mit" and card.runnable
    assert report.skipped == 1 and "graph-agent models install" in report.problems[0]
