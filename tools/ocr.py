"""Text in pictures: the image-to-text back end for cards whose ``library`` is "rapidocr".

No captioning model can be had offline here, but PaddleOCR's PP-OCRv4 detector, direction
classifier and recogniser ship as ONNX files in RapidOCR's wheel. The pack copies those three
files (pinned) into its own folder and this back end runs them with RapidOCR, always from
that folder: the copies inside the installed package are never used, so what runs is what
the pack verified.

RapidOCR finds one box per run of text; the result joins them into lines in reading order
(top to bottom, then left to right), so a receipt's "TOTAL" and its amount, found as two
boxes, come back as one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_image
from graph_agent.tools.model_pack.manifest import OCR_DETECTOR, OCR_DIRECTION, OCR_RECOGNISER
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

#: Detection scales the image so its longer side is at most this (PaddleOCR's own default).
#: RapidOCR's default instead scales the *shorter* side up to 736 px, which blows a short,
#: wide picture (a one-line sign, a receipt) up several times and splits its lines apart.
_DETECT_MAX_SIDE = 960


def load_rapidocr(model_dir: str) -> Any:
    """RapidOCR over the three PP-OCRv4 ONNX files in ``model_dir``."""
    folder = Path(model_dir)
    files = {name: folder / name for name in (OCR_DETECTOR, OCR_RECOGNISER, OCR_DIRECTION)}
    missing = [name for name, path in files.items() if not path.is_file()]
    if missing:
        raise ModelUnavailableError(
            f"{model_dir} lacks the OCR model file(s) {', '.join(missing)}. Reinstall it with "
            "`graph-agent models install`."
        )
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        raise ModelUnavailableError(
            "rapidocr-onnxruntime is not installed, so the OCR model cannot run. Install it "
            "with `pip install rapidocr-onnxruntime==1.4.4` (graph-agent's own dependencies "
            "include it)."
        ) from None
    return RapidOCR(
        det_model_path=str(files[OCR_DETECTOR]),
        rec_model_path=str(files[OCR_RECOGNISER]),
        cls_model_path=str(files[OCR_DIRECTION]),
        det_limit_type="max",
        det_limit_side_len=_DETECT_MAX_SIDE,
    )


def _box(points: Any) -> tuple[float, float, float, float]:
    """``(xmin, ymin, xmax, ymax)`` of a detected quadrilateral."""
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def reading_order(found: list[tuple[tuple[float, float, float, float], str, float]]) -> list[dict]:
    """Pieces of text ``(box, text, score)`` joined into lines, top to bottom, each line's
    pieces left to right.

    A piece joins a line when its vertical middle lies inside the line's vertical extent,
    which keeps a receipt's item and price together while two lines stay apart however close
    they are.
    """
    lines: list[dict[str, Any]] = []
    for box, text, score in sorted(found, key=lambda f: (f[0][1] + f[0][3]) / 2):
        middle = (box[1] + box[3]) / 2
        line = next((ln for ln in lines if ln["top"] <= middle <= ln["bottom"]), None)
        if line is None:
            line = {"top": box[1], "bottom": box[3], "pieces": []}
            lines.append(line)
        line["pieces"].append((box, text, score))
        line["top"], line["bottom"] = min(line["top"], box[1]), max(line["bottom"], box[3])
    out = []
    for line in sorted(lines, key=lambda ln: ln["top"]):
        pieces = sorted(line["pieces"], key=lambda p: p[0][0])
        out.append(
            {
                "text": " ".join(p[1] for p in pieces),
                "score": round(min(p[2] for p in pieces), 4),
                "box": {
                    "xmin": round(min(p[0][0] for p in pieces)),
                    "ymin": round(line["top"]),
                    "xmax": round(max(p[0][2] for p in pieces)),
                    "ymax": round(line["bottom"]),
                },
            }
        )
    return out


def _read_text(ocr: Any, call: ToolCall) -> ToolResult:
    result, _elapsed = ocr(load_image(call.args["image"]))
    found = [
        (_box(points), str(text).strip(), float(score)) for points, text, score in result or []
    ]
    found = [f for f in found if f[1]]
    if not found:
        raise ToolError(
            "The OCR model found no text in this image. If it shows a scene rather than "
            "writing, ask for a description instead."
        )
    lines = reading_order(found)
    return ToolResult(
        kind="text",
        modality="text",
        text="\n".join(line["text"] for line in lines),
        data=lines,
        confidence=min(line["score"] for line in lines),
    )


TOOLS: list[TaskTool] = [
    TaskTool(
        task="image-to-text",
        inputs=(("image", "image"),),
        output="text",
        loader="rapidocr",
        call=_read_text,
        description="Read the text in a picture (OCR), line by line in reading order.",
        library="rapidocr",
        make_loader=load_rapidocr,
        imports=("onnxruntime", "cv2", "rapidocr_onnxruntime"),
    ),
]
