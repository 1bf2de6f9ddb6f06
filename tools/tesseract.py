"""Text in clean documents: the image-to-text back end for cards whose ``library`` is
"tesseract".

Tesseract 5 (libtesseract inside the ``tesserocr`` wheel) reads clean printed pages, scans
and screenshots exactly and in about a second, with a 4 MB English model (tessdata_fast's
``eng.traineddata``), where PP-OCRv4 (tools/ocr.py) is the reader for text in photos: signs,
labels, receipts at an angle. It is an optional pack (``graph-agent models install --pack
tesseract``) with an optional dependency (``pip install tesserocr==2.13.0``): the pack's
card is runnable only while tesserocr can be imported (retrieval_index/sources/pack.py).

The model folder is Tesseract's data path: the pack puts the pinned ``eng.traineddata``
there, and only that file is read, never a system tessdata folder.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from graph_agent.tools.errors import ModelUnavailableError
from graph_agent.tools.media import load_image
from graph_agent.tools.model_pack.manifest import TESSERACT_LANGUAGE
from graph_agent.tools.ocr import Piece, text_in_image
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall


class TesseractReader:
    """One Tesseract engine over the pack's model folder. An engine holds one page at a
    time, and the warm model cache shares a loaded model between parallel steps, so calls
    take turns."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self._lock = threading.Lock()

    def read(self, image: Any) -> list[Piece]:
        """``(box, text, confidence 0-1)`` of each line Tesseract finds in ``image``."""
        from tesserocr import RIL, iterate_level

        with self._lock:
            self._api.SetImage(image)
            self._api.Recognize()
            found: list[Piece] = []
            iterator = self._api.GetIterator()
            for line in iterate_level(iterator, RIL.TEXTLINE):
                try:
                    text = (line.GetUTF8Text(RIL.TEXTLINE) or "").strip()
                except RuntimeError:  # tesserocr's "No text returned": a page with no text
                    continue
                box = line.BoundingBox(RIL.TEXTLINE)
                if text and box:
                    found.append(
                        (tuple(map(float, box)), text, line.Confidence(RIL.TEXTLINE) / 100)
                    )
            self._api.Clear()
            return found


def load_tesseract(model_dir: str) -> TesseractReader:
    """Tesseract with the pack's ``eng.traineddata`` in ``model_dir`` as its only data."""
    folder = Path(model_dir)
    if not (folder / f"{TESSERACT_LANGUAGE}.traineddata").is_file():
        raise ModelUnavailableError(
            f"{model_dir} lacks {TESSERACT_LANGUAGE}.traineddata. Install it with "
            "`graph-agent models install --pack tesseract`."
        )
    try:
        from tesserocr import PyTessBaseAPI
    except ImportError:
        raise ModelUnavailableError(
            "tesserocr is not installed, so the Tesseract OCR model cannot run. Install it "
            "with `pip install tesserocr==2.13.0` (or graph-agent's `tesseract` extra)."
        ) from None
    # Tesseract wants the data path with a trailing separator.
    return TesseractReader(PyTessBaseAPI(path=f"{folder}/", lang=TESSERACT_LANGUAGE))


def _read_text(reader: TesseractReader, call: ToolCall) -> ToolResult:
    # Tesseract reads a receipt's items and its prices as two columns; reading order joins
    # each item with its price, as for the PP-OCRv4 back end.
    return text_in_image(reader.read(load_image(call.args["image"])))


TOOLS: list[TaskTool] = [
    TaskTool(
        task="image-to-text",
        inputs=(("image", "image"),),
        output="text",
        loader="tesseract",
        call=_read_text,
        description="Read the text of a clean printed page or screenshot (OCR), line by line.",
        library="tesseract",
        make_loader=load_tesseract,
        imports=("tesserocr",),
    ),
]
