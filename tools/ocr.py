"""Text in pictures: the image-to-text back end for cards whose ``library`` is "rapidocr".

No captioning model can be had offline here, but PaddleOCR's PP-OCRv4 detector, direction
classifier and recogniser ship as ONNX files in RapidOCR's wheel. The pack copies those three
files (pinned) into its own folder and this back end runs them with RapidOCR, always from
that folder: the copies inside the installed package are never used, so what runs is what
the pack verified.

RapidOCR finds one box per run of text; the result joins them into lines in reading order
(top to bottom, then left to right), so a receipt's "TOTAL" and its amount, found as two
boxes, come back as one line.

PP-OCRv4's recogniser is a Chinese-and-English model and often leaves out the space between
two Latin words ("Leaseagreement", "on31 March2027"). The recogniser knows where each
character sits (RapidOCR's ``return_word_box``), and the picture shows where the blank
between words is, so ``restore_spaces`` puts a space back wherever the blank between two
characters is as wide as a word space rather than the gap between two letters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_image
from graph_agent.tools.model_pack.manifest import OCR_DETECTOR, OCR_DIRECTION, OCR_RECOGNISER
from graph_agent.tools.results import TEXT_IN_IMAGE, ToolResult
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


#: A blank between two characters at least this fraction of the text box's height is a word
#: space, when the recogniser read no space in the box to compare with. Measured on 20,000
#: character pairs in lines rendered in six fonts (DejaVu Sans, Sans Bold, Serif, Serif
#: Italic, Sans Mono, STIX) at 18-72 px, PNG and JPEG, dark on light and light on dark:
#: the blank between two letters of a word is under 0.2 of the box height in 95 % of pairs,
#: and a space the recogniser left out leaves 0.3 to 0.6.
_SPACE_GAP = 0.28

#: When the recogniser did read spaces in the box, a left-out space is a blank at least this
#: share of the narrowest space it read. In a monospaced font the blank beside a narrow ":"
#: or "." reaches 0.4 of the box height, as wide as a proportional font's space, while the
#: same font's spaces are wider still: comparing with the line's own spaces keeps those in.
_READ_SPACE_SHARE = 0.7

#: A left-out space is also at least this many times as wide as the middle (median) blank
#: between the box's neighbouring letters. A large monospaced word alone in its box has
#: blanks of 0.3 of its height beside a narrow "r" or "j", and no read space to compare with;
#: there a space stands out from the letter blanks of its own line, those blanks do not.
_LETTER_BLANK_FACTOR = 2.0

#: Characters a space never comes before in English text, however wide the blank before them
#: looks (a monospaced "." sits in the middle of a wide cell).
_NO_SPACE_BEFORE = frozenset(".,:;!?%)]}")

#: Characters that join the digits either side of them into one number (42.10, 1,500, 10:30).
_IN_NUMBERS = frozenset(".,:")

#: A box this much taller than wide holds vertical text, which RapidOCR turns before reading;
#: its characters are not laid out left to right, so no space is inferred in it.
_VERTICAL = 1.5


def _crop(gray: np.ndarray, quad: Any) -> tuple[np.ndarray, np.ndarray]:
    """The text box ``quad`` cut out of ``gray`` and straightened, as RapidOCR cuts it for the
    recogniser, and the transform from picture to crop coordinates."""
    import cv2

    q = np.asarray(quad, dtype=np.float32)
    width = int(max(np.linalg.norm(q[0] - q[1]), np.linalg.norm(q[2] - q[3])))
    height = int(max(np.linalg.norm(q[0] - q[3]), np.linalg.norm(q[1] - q[2])))
    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    to_crop = cv2.getPerspectiveTransform(q, target)
    crop = cv2.warpPerspective(
        gray, to_crop, (max(width, 1), max(height, 1)), borderMode=cv2.BORDER_REPLICATE
    )
    return crop, to_crop


def _inked_columns(crop: np.ndarray) -> np.ndarray:
    """For each column of the crop, whether any of it is ink. Ink is the darker or the lighter
    side of an Otsu threshold, whichever covers less of the box, so light text on a dark sign
    reads like dark text on paper."""
    import cv2

    _, ink = cv2.threshold(crop, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if ink.mean() > 0.5:
        ink = 1 - ink
    return ink.any(axis=0)


def _word_gaps(inked: np.ndarray, min_width: float) -> list[float]:
    """Middles of the runs of blank columns at least ``min_width`` wide with ink on both
    sides. The blank margins at either end of the box are not gaps between words."""
    middles: list[float] = []
    start = None  # first blank column of the current run, once ink has been seen
    seen_ink = False
    for x, column in enumerate(inked):
        if column:
            if start is not None and x - start >= min_width:
                middles.append((start + x - 1) / 2)
            seen_ink, start = True, None
        elif seen_ink and start is None:
            start = x
    return middles


def _blanks(inked: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` of each run of blank columns with ink on both sides. The blank
    margins at either end of the box are not gaps between characters."""
    runs: list[tuple[int, int]] = []
    start = None  # first blank column of the current run, once ink has been seen
    seen_ink = False
    for x, column in enumerate(inked):
        if column:
            if start is not None:
                runs.append((start, x))
            seen_ink, start = True, None
        elif seen_ink and start is None:
            start = x
    return runs


def _may_space(left: str, right: str, before_left: str) -> bool:
    """Whether a space may be put between ``left`` and ``right`` on the picture's evidence
    alone: none before closing punctuation, none inside a number such as 42.10
    (``before_left`` is the character before ``left``), and none between two digits, whose
    blanks say little (digits are set in cells of one width, so a "1" stands in a wide
    blank) while a wrong space there changes the number read."""
    if right in _NO_SPACE_BEFORE or (left.isdigit() and right.isdigit()):
        return False
    return not (left in _IN_NUMBERS and before_left.isdigit() and right.isdigit())


def restore_spaces(gray: np.ndarray, quad: Any, chars: list[str], char_boxes: list) -> str:
    """The recognised characters of one text box, with a space put back between two of them
    wherever the picture shows a word-sized blank between them and the recogniser gave none.

    ``chars`` and ``char_boxes`` are what RapidOCR returns with ``return_word_box``: each
    character, spaces included, and a box around its position (from the recogniser's CTC
    column). A blank belongs to the two characters whose positions lie either side of its
    middle: matching by the middle rather than searching between the two positions keeps a
    position estimated a little into the blank (a narrow ":" or ".") from hiding it.

    A blank is a left-out word space when it is at least as wide as each of: ``_SPACE_GAP``
    of the box height; ``_LETTER_BLANK_FACTOR`` times the box's median letter blank; and,
    where the recogniser read spaces in this box, ``_READ_SPACE_SHARE`` of the narrowest of
    them; and ``_may_space`` allows a space there. Spaces the recogniser read are kept (a
    run of them becomes one). When the characters are not laid out left to right in the box
    (vertical or upside-down text), the text is left as read.
    """
    text = " ".join("".join(chars).split())
    letters = [i for i, c in enumerate(chars) if c.strip()]
    if len(letters) < 2 or len(chars) != len(char_boxes):
        return text
    crop, to_crop = _crop(gray, quad)
    height, width = crop.shape
    if height == 0 or width == 0 or height > _VERTICAL * width:
        return text
    import cv2

    centres = np.asarray(
        [np.mean(np.asarray(char_boxes[i], dtype=np.float32), axis=0) for i in letters]
    )
    xs = cv2.perspectiveTransform(centres[None].astype(np.float32), to_crop)[0, :, 0]
    if np.any(np.diff(xs) < 0):
        return text
    # The widest blank between each two neighbouring letters, and whether a space was read
    # between them.
    widest = np.zeros(len(letters))
    for start, stop in _blanks(_inked_columns(crop)):
        after = int(np.searchsorted(xs, (start + stop - 1) / 2, side="right"))
        if 0 < after < len(letters):
            widest[after] = max(widest[after], stop - start)
    read = [False] + [letters[j] - letters[j - 1] > 1 for j in range(1, len(letters))]
    spaces_read = [widest[j] for j in range(len(letters)) if read[j]]
    letter_blanks = [widest[j] for j in range(1, len(letters)) if not read[j]]
    threshold = _SPACE_GAP * height
    if letter_blanks:
        threshold = max(threshold, _LETTER_BLANK_FACTOR * float(np.median(letter_blanks)))
    if spaces_read:
        threshold = max(threshold, _READ_SPACE_SHARE * min(spaces_read))
    out = chars[letters[0]]
    for j in range(1, len(letters)):
        left, right = chars[letters[j - 1]], chars[letters[j]]
        before_left = chars[letters[j - 2]] if j > 1 else ""
        if read[j] or (widest[j] >= threshold and _may_space(left, right, before_left)):
            out += " "
        out += right
    return out


def _box(points: Any) -> tuple[float, float, float, float]:
    """``(xmin, ymin, xmax, ymax)`` of a detected quadrilateral."""
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return min(xs), min(ys), max(xs), max(ys)


#: A piece of text an OCR back end found: ``((xmin, ymin, xmax, ymax), text, score)``.
Piece = tuple[tuple[float, float, float, float], str, float]


def reading_order(found: list[Piece]) -> list[dict]:
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


def text_in_image(found: list[Piece]) -> ToolResult:
    """An OCR back end's result from the pieces of text ``(box, text, score)`` it found: the
    lines in reading order, or an error saying there is no text when it found none."""
    found = [f for f in found if f[1]]
    if not found:
        raise ToolError(
            "The OCR model found no text in this image. If it shows a scene rather than "
            "writing, ask for a description instead."
        )
    lines = reading_order(found)
    return ToolResult(
        kind=TEXT_IN_IMAGE,  # the answer calls it text in the image, not a caption
        modality="text",
        text="\n".join(line["text"] for line in lines),
        data=lines,
        confidence=min(line["score"] for line in lines),
    )


def _read_text(ocr: Any, call: ToolCall) -> ToolResult:
    image = load_image(call.args["image"])
    # ``return_word_box`` adds each character and its position to every box RapidOCR finds,
    # which ``restore_spaces`` needs; the text and scores are the same as without it.
    result, _elapsed = ocr(image, return_word_box=True)
    gray = np.asarray(image.convert("L"))
    return text_in_image(
        [
            (_box(points), restore_spaces(gray, points, chars, boxes).strip(), float(score))
            for points, _text, score, boxes, chars, *_ in result or []
        ]
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
