"""The pack's models for more tasks (issue 27), run on their real weights: spaCy entities,
PP-OCRv4 text reading (RapidOCR) on pictures rendered here with a TrueType font.

Each model is in the default pack, which the test command installs, so a missing model
fails (``pack_model_dir``) rather than skipping: a skipped real-weight test proves nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_agent.cli import main
from graph_agent.retrieval_index.search import select, step_query
from graph_agent.retrieval_index.service import open_index
from graph_agent.tools import ToolCall, get_tool
from graph_agent.tools.artifacts import ArtifactStore

SPACY = "spacy-en-core-web-sm"
OCR = "pp-ocrv4-rapidocr"
OCR_ID = "PaddlePaddle/PP-OCRv4"
RECEIPT = [("Coffee", "3.50"), ("Bagel", "2.25"), ("Orange juice", "4.00"), ("TOTAL", "9.75")]
NEWS = "Apple opened a new office in Berlin on Monday, Tim Cook said."


def test_spacy_tags_the_entities_of_a_news_sentence(pack_model_dir, tmp_path):
    tool = get_tool("token-classification", "spacy")
    assert tool.library == "spacy"  # the card's library picks this back end
    out = tool.run(
        str(pack_model_dir(SPACY)), ToolCall(args={"text": NEWS}, artifacts=ArtifactStore(tmp_path))
    )
    found = {(d["word"], d["entity"]) for d in out.data}
    expected = {("Apple", "ORG"), ("Berlin", "GPE"), ("Monday", "DATE"), ("Tim Cook", "PERSON")}
    assert found == expected
    for d in out.data:  # offsets point at the entity in the text, as the transformers tagger's
        assert NEWS[d["start"] : d["end"]] == d["word"]
    assert out.kind == "entities" and "Tim Cook (PERSON)" in out.text


def test_spacy_finds_nothing_in_a_sentence_without_names(pack_model_dir, tmp_path):
    out = get_tool("token-classification", "spacy").run(
        str(pack_model_dir(SPACY)),
        ToolCall(args={"text": "the cat sat on the mat."}, artifacts=ArtifactStore(tmp_path)),
    )
    assert out.data == [] and out.text == "no entities found"


def _run_json(capsys, *args: str) -> dict:
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_named_entities_request_runs_spacy_end_to_end(capsys, pack_model_dir, tmp_path):
    pack_model_dir(SPACY)
    final = _run_json(
        capsys,
        f"identify the named entities in: {NEWS}",
        "--artifacts-dir",
        str(tmp_path / "artifacts"),
    )
    (step,) = final["report"]["steps"]
    # The tagger runs, not the chat model the planner falls back on when there is none.
    assert step["task"] == "token-classification" and step["model"] == "spacy/en_core_web_sm"
    assert step["status"] == "ok" and final["report"]["failures"] == []
    for entity in ("Apple (ORG)", "Berlin (GPE)", "Monday (DATE)", "Tim Cook (PERSON)"):
        assert entity in final["outputs"]["node-0"]


# --------------------------------------------------------------------------- OCR


def _font(size: int, name: str = "DejaVuSans.ttf"):
    """One of matplotlib's DejaVu fonts: TrueType fonts every machine with the dev extra has."""
    import matplotlib
    from PIL import ImageFont

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name
    return ImageFont.truetype(str(path), size)


def render(
    rows: list, path: Path, size: int, width: int, font_name: str = "DejaVuSans.ttf"
) -> Path:
    """Black text on white: a row is a line of text, or (left, right) such as an item and
    its price at the two edges, as on a receipt."""
    from PIL import Image, ImageDraw

    font, step = _font(size, font_name), int(size * 1.6)
    image = Image.new("RGB", (width, 40 + len(rows) * step), "white")
    draw = ImageDraw.Draw(image)
    for i, row in enumerate(rows):
        left, right = (row, "") if isinstance(row, str) else row
        draw.text((30, 20 + i * step), left, font=font, fill="black")
        if right:
            draw.text(
                (width - 30 - font.getlength(right), 20 + i * step), right, font=font, fill="black"
            )
    image.save(path)
    return path


@pytest.fixture
def sign(tmp_path) -> Path:
    return render(["EXIT 12"], tmp_path / "sign.png", size=80, width=400)


@pytest.fixture
def receipt(tmp_path) -> Path:
    return render(RECEIPT, tmp_path / "receipt.png", size=32, width=520)


def _read(pack_model_dir, image: Path, tmp_path):
    tool = get_tool("image-to-text", "rapidocr")
    assert tool.library == "rapidocr"  # not the captioning back end
    call = ToolCall(args={"image": str(image)}, artifacts=ArtifactStore(tmp_path))
    return tool.run(str(pack_model_dir(OCR)), call)


def test_ocr_reads_a_sign(pack_model_dir, sign, tmp_path):
    out = _read(pack_model_dir, sign, tmp_path)
    assert out.text == "EXIT 12" and out.confidence > 0.9


def test_ocr_reads_a_receipt_line_by_line_in_reading_order(pack_model_dir, receipt, tmp_path):
    out = _read(pack_model_dir, receipt, tmp_path)
    # Item and price are two boxes each; reading order joins them into one line per row.
    assert out.text == "\n".join(f"{item} {price}" for item, price in RECEIPT)
    assert [line["box"]["ymin"] for line in out.data] == sorted(
        line["box"]["ymin"] for line in out.data
    )


def _as_jpeg(png: Path) -> Path:
    from PIL import Image

    jpg = png.with_suffix(".jpg")
    Image.open(png).convert("RGB").save(jpg, quality=95)
    return jpg


def _recogniser_alone(pack_model_dir, image: Path) -> list[str]:
    """What PP-OCRv4 reads in each box with nothing done after it."""
    from graph_agent.tools.media import load_image
    from graph_agent.tools.ocr import load_rapidocr

    found, _ = load_rapidocr(str(pack_model_dir(OCR)))(load_image(image))
    return [text for _box, text, _score in found]


NOTICE = [
    "The quick brown fox jumps over the lazy dog.",
    "Open daily from 9 am to 5 pm",
    "Please keep this door closed",
]


def test_ocr_puts_back_the_spaces_the_recogniser_leaves_out(pack_model_dir, tmp_path):
    page = _as_jpeg(render(LEASE, tmp_path / "lease.png", size=28, width=560))
    notice = render(NOTICE, tmp_path / "notice.png", size=24, width=700)
    # The recogniser alone glues words together on both pictures ...
    alone = _recogniser_alone(pack_model_dir, page) + _recogniser_alone(pack_model_dir, notice)
    assert "Leaseagreement" in alone and "Pleasekeep this door closed" in alone, alone
    # ... and the blanks in the picture put every space back, and no other.
    assert _read(pack_model_dir, page, tmp_path).text == "\n".join(LEASE)
    assert _read(pack_model_dir, notice, tmp_path).text == "\n".join(NOTICE)


MONO = "DejaVuSansMono.ttf"


def test_ocr_adds_no_space_inside_a_word_a_number_or_before_punctuation(pack_model_dir, tmp_path):
    # In a monospaced font a narrow letter or a "." or ":" sits in the middle of a wide cell,
    # so the blank beside it can be as wide as a proportional font's word space. Inside
    # numbers and before punctuation no space is put; elsewhere the spaces the recogniser
    # read on the same line set the width of a space.
    rows = ["Total due: 42.10 USD", "Open from 9:15 to 17:45.", "Landlord: Acme Homes Ltd"]
    page = render(rows, tmp_path / "mono.png", size=32, width=560, font_name=MONO)
    assert _read(pack_model_dir, page, tmp_path).text == "\n".join(rows)
    juice = render(["Orange juice"], tmp_path / "juice.png", size=48, width=900, font_name=MONO)
    assert _read(pack_model_dir, juice, tmp_path).text == "Orange juice"
    # Lines with no space read to compare with: only the rules keep these whole.
    bare = ["42.10", "17:45", "Total:"]
    tags = render(bare, tmp_path / "tags.png", size=32, width=300, font_name=MONO)
    assert _read(pack_model_dir, tags, tmp_path).text == "\n".join(bare)


def test_ocr_on_a_picture_without_writing_says_so(pack_model_dir, tmp_path):
    from PIL import Image

    blank = tmp_path / "blank.png"
    Image.new("RGB", (200, 120), "white").save(blank)
    with pytest.raises(Exception, match="found no text"):
        _read(pack_model_dir, blank, tmp_path)


@pytest.mark.parametrize(
    ("request_", "reads"),
    [
        ("what does the sign in sign.png say", True),
        ("read the receipt in receipt.png", True),
        ("extract the text from scan.png", True),
        ("describe this photo", False),
        ("caption photo.jpg", False),
    ],
)
def test_the_ocr_card_is_chosen_for_text_in_pictures_only(pack_model_dir, request_, reads):
    pack_model_dir(OCR)
    index = open_index(pack_model_dir(OCR).parent)
    found = select(index, "image-to-text", step_query("image-to-text", None, request_))
    ids = [c.id for c in found.candidates]
    if reads:
        assert ids[:1] == [OCR_ID], found.reason
    else:  # ruled out by its own card's out-of-scope uses, and the reason says so
        assert OCR_ID not in ids
        assert "not for" in " ".join(found.rejected[OCR_ID]), found.rejected


def test_what_the_sign_says_runs_ocr_end_to_end(capsys, pack_model_dir, sign, tmp_path):
    pack_model_dir(OCR)
    final = _run_json(
        capsys,
        "what does the sign in sign.png say",
        "--input",
        f"sign.png={sign}",
        "--artifacts-dir",
        str(tmp_path / "artifacts"),
    )
    (step,) = final["report"]["steps"]
    assert (step["task"], step["model"], step["status"]) == ("image-to-text", OCR_ID, "ok")
    assert final["outputs"]["node-0"] == "EXIT 12"
    # Read off the picture, so the answer and the report call it that, not a caption
    # (image-to-text's label), which would tell the user it describes the picture.
    assert f"- Text in the image (node-0, {OCR_ID}): EXIT 12" in final["answer"]
    assert step["output_title"] == "Text in the image"
    assert "**Output: Text in the image**" in final["report_markdown"]
    assert "Caption" not in final["answer"] + final["report_markdown"]


# --------------------------------------------------------------------------- document QA

LEASE = [
    "Lease agreement",
    "Tenant: Jane Doe",
    "Landlord: Acme Homes Ltd",
    "The lease starts on 1 April 2025.",
    "The lease ends on 31 March 2027.",
    "Monthly rent: 950 euros.",
]


def test_a_question_about_a_document_reads_it_then_answers_on_the_chat_model(
    capsys, pack_model_dir, tmp_path
):
    pack_model_dir(OCR)
    page = render(LEASE, tmp_path / "lease.png", size=28, width=560)
    jpg = tmp_path / "lease.jpg"
    from PIL import Image

    Image.open(page).convert("RGB").save(jpg, quality=95)
    final = _run_json(
        capsys,
        "when does my lease end according to lease.jpg?",
        "--input",
        f"lease.jpg={jpg}",
        "--artifacts-dir",
        str(tmp_path / "artifacts"),
    )
    steps = {s["id"]: s for s in final["report"]["steps"]}
    # No document-QA model here: the re-plan reads the page (OCR), then the chat model
    # answers over its text.
    read = next(s for s in steps.values() if s["task"] == "image-to-text")
    assert read["model"] == OCR_ID and read["status"] == "ok"
    answer = steps["node-0"]
    assert answer["task"] == "question-answering" and answer["status"] == "ok"
    assert answer["model"] == "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    # The OCR text has its spaces (PP-OCRv4's recogniser alone reads "on31 March2027."), so
    # the answer, which copies the date from it, has them too.
    assert "31 March 2027" in final["outputs"]["node-0"]
    # The report shows the text the answer was read from.
    ocr_text = final["outputs"][read["id"]]
    assert ocr_text == "\n".join(LEASE)
    assert ocr_text in final["answer"] and ocr_text in final["report_markdown"]
    assert final["report"]["failures"] == []
