"""The optional Tesseract pack (``--pack tesseract``) on its real model: a lighter reader for
clean documents, run by tesserocr (libtesseract 5.5 inside its wheel).

``make test`` installs the pack and the dev extra installs tesserocr, so in CI
(``CI=true``) a missing model or module is a failure, not a skip; elsewhere the tests skip
with the command that installs them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import INSTALLED
from test_pack_more_tasks import LEASE, RECEIPT, render

from graph_agent.retrieval_index.sources.pack import PACK_CARD_FILE, pack_cards
from graph_agent.tools import ToolCall, get_tool
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.model_pack.install import is_installed
from graph_agent.tools.model_pack.manifest import MODELS
from graph_agent.tools.results import TEXT_IN_IMAGE

NAME = "tesseract-eng-fast"


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (make test does it; CI must run these tests)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def tesseract_dir() -> Path:
    """The installed pack folder of the Tesseract model (outside the tests' default home)."""
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        _missing("tesserocr is not installed: pip install tesserocr==2.13.0")
    if not is_installed(INSTALLED, MODELS[NAME]):
        _missing(f"{NAME} is not installed: graph-agent models install --pack tesseract")
    return INSTALLED / NAME


def _read(folder: Path, image: Path, tmp_path: Path):
    tool = get_tool("image-to-text", "tesseract")
    assert tool.library == "tesseract"  # the card's library picks this back end
    return tool.run(
        str(folder), ToolCall(args={"image": str(image)}, artifacts=ArtifactStore(tmp_path))
    )


def test_tesseract_reads_a_rendered_page_exactly(tesseract_dir, tmp_path):
    page = render(LEASE, tmp_path / "lease.png", size=28, width=560)
    out = _read(tesseract_dir, page, tmp_path)
    assert out.text == "\n".join(LEASE)
    assert out.kind == TEXT_IN_IMAGE and out.confidence > 0.9
    assert [line["text"] for line in out.data] == LEASE


def test_tesseract_joins_a_receipt_s_items_and_prices_in_reading_order(tesseract_dir, tmp_path):
    # Tesseract finds the items and the prices as two columns; each row comes back as a line.
    receipt = render(RECEIPT, tmp_path / "receipt.png", size=32, width=520)
    out = _read(tesseract_dir, receipt, tmp_path)
    assert out.text == "\n".join(f"{item} {price}" for item, price in RECEIPT)


def test_tesseract_on_a_page_without_writing_says_so(tesseract_dir, tmp_path):
    from PIL import Image

    blank = tmp_path / "blank.png"
    Image.new("RGB", (200, 120), "white").save(blank)
    with pytest.raises(Exception, match="found no text"):
        _read(tesseract_dir, blank, tmp_path)


def test_a_card_needing_a_module_is_runnable_only_where_it_imports(tmp_path):
    """A pack card naming a Python module (tesserocr) gets no local path where the module is
    missing, so the selector rules it out rather than choosing a reader that cannot load."""
    for name, module in (("needs-json", "json"), ("needs-nothing-here", "no_such_module_x1")):
        (tmp_path / name).mkdir()
        card = {"id": f"test/{name}", "task": "image-to-text", "module": module}
        (tmp_path / name / PACK_CARD_FILE).write_text(json.dumps(card))
    runnable = {c.id: c.runnable for c in pack_cards(tmp_path)}
    assert runnable == {"test/needs-json": True, "test/needs-nothing-here": False}
