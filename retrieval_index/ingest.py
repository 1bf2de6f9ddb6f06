"""Card sources turned into catalog entries. (This module starts with the model pack.)"""

from __future__ import annotations

import json
from pathlib import Path

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog

PACK_CARD_FILE = "graph-agent-card.json"


def pack_cards(models_dir: str | Path) -> list[ModelCard]:
    """Cards the model pack wrote beside each installed model, with their local paths."""
    cards = []
    for card_file in sorted(Path(models_dir).expanduser().glob(f"*/{PACK_CARD_FILE}")):
        raw = json.loads(card_file.read_text())
        raw["local_path"] = str(card_file.parent)
        cards.append(ModelCard.from_dict(raw))
    return cards


def ingest_pack(models_dir: str | Path, catalog: Catalog) -> int:
    """Add or refresh the pack's cards in ``catalog``; returns how many were written."""
    return catalog.upsert(pack_cards(models_dir))
