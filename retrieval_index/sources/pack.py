"""The offline model pack's own cards, written by the installer beside each model.

These are the only cards whose models are always runnable here, so ``local_path`` is the
model's directory. A card whose model is a system program (``"program": "apertium"``: the
pack holds its card, not the program) is runnable only while that program is on PATH, and
one whose back end needs an optional Python package (``"module": "tesserocr"``) only while
that package can be imported; without it the card has no ``local_path``, so the selector
rules it out ("weights not on this machine") instead of choosing a model that cannot start.
A damaged card file is skipped with a warning rather than breaking every selection: the
other models still work.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.sources.base import ImportReport

PACK_CARD_FILE = "graph-agent-card.json"


def pack_cards(models_dir: str | Path, *, report: ImportReport | None = None) -> list[ModelCard]:
    """Cards the model pack wrote beside each installed model, with their local paths."""
    root = Path(models_dir).expanduser()
    report = report if report is not None else ImportReport(source=f"pack:{root}")
    cards = []
    for card_file in sorted(root.glob(f"*/{PACK_CARD_FILE}")):
        report.read += 1
        try:
            raw = json.loads(card_file.read_text(encoding="utf-8"))
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            program, module = raw.get("program"), raw.get("module")
            if (not program or shutil.which(str(program))) and (
                not module or importlib.util.find_spec(str(module)) is not None
            ):
                raw["local_path"] = str(card_file.parent)
            cards.append(ModelCard.from_dict(raw))
        except (OSError, ValueError, TypeError) as exc:
            report.problem(
                str(card_file),
                f"unreadable pack card ({exc}); reinstall with `graph-agent models install`",
            )
            continue
        report.imported += 1
    return cards
