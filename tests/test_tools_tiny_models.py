"""Tool wrappers run end to end on tiny random models built offline (see ``tiny_models``).

The models' outputs are gibberish; these tests check what the agent relies on: each tool
loads through its real loader, returns a well-formed :class:`ToolResult` of the declared
modality, writes readable artifacts under the artifact store, and keeps scores in [0, 1].
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_models import BUILDERS

from graph_agent.tools import ToolCall, ToolResult, get_tool
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.pipeline_cache import PIPELINES


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """Build each task's tiny model once per session, on first use; returns its directory."""
    root = tmp_path_factory.mktemp("tiny-models")
    built: dict[str, str] = {}

    def get(task: str) -> str:
        if task not in built:
            built[task] = str(BUILDERS[task](root / task))
        return built[task]

    return get


@pytest.fixture(scope="session")
def image_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 64x64 RGB PNG: a colour gradient with noise, so no model sees a flat image."""
    from PIL import Image

    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 255, 64, dtype=np.float32)
    pixels = np.stack(
        [np.tile(ramp, (64, 1)), np.tile(ramp[:, None], (1, 64)), rng.uniform(0, 255, (64, 64))],
        axis=-1,
    )
    path = tmp_path_factory.mktemp("inputs") / "input.png"
    Image.fromarray(pixels.astype(np.uint8), mode="RGB").save(path)
    return str(path)


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts", run_id="test-run")


def _run(task: str, model_dir: str, store: ArtifactStore, **args: object) -> ToolResult:
    result = get_tool(task).run(model_dir, ToolCall(args=dict(args), artifacts=store))
    assert isinstance(result, ToolResult)
    assert result.modality == get_tool(task).output
    ToolResult.from_dict(result.to_dict())  # survives the checkpointer's round trip
    return result


def _is_score(value: object) -> bool:
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


def _under(path: str, store: ArtifactStore) -> Path:
    """``path`` as a Path, after checking it exists inside the store's run directory."""
    resolved = Path(path).resolve()
    assert resolved.is_file(), path
    assert resolved.is_relative_to(store.run_dir), path
    return resolved


def test_object_detection_boxes_and_annotated_image(tiny_model, image_path, store) -> None:
    result = _run(
        "object-detection", tiny_model("object-detection"), store, image=image_path, threshold=0.0
    )
    assert result.kind == "detections"
    assert result.data, "threshold 0 keeps every detection token's box"
    for det in result.data:
        assert det["label"] in {"person", "dog", "cat"}
        assert _is_score(det["score"])
        box = det["box"]
        assert set(box) == {"xmin", "ymin", "xmax", "ymax"}
        assert all(isinstance(v, int) for v in box.values())
        assert 0 <= box["xmin"] <= box["xmax"] <= 64
        assert 0 <= box["ymin"] <= box["ymax"] <= 64
    scores = [d["score"] for d in result.data]
    assert scores == sorted(scores, reverse=True)
    assert result.confidence == min(scores)
    assert result.text and result.text != "no objects found"

    from PIL import Image

    with Image.open(_under(result.extra["annotated_image"], store)) as boxed:
        assert boxed.size == (64, 64)


def test_object_detection_rejects_a_bad_threshold(tiny_model, image_path, store) -> None:
    from graph_agent.tools.errors import ToolError

    with pytest.raises(ToolError, match="threshold"):
        _run(
            "object-detection",
            tiny_model("object-detection"),
            store,
            image=image_path,
            threshold="high",
        )
    with pytest.raises(ToolError, match="between 0 and 1"):
        _run(
            "object-detection", tiny_model("object-detection"), store, image=image_path, threshold=2
        )


def test_depth_estimation_writes_a_png(tiny_model, image_path, store) -> None:
    from PIL import Image

    result = _run("depth-estimation", tiny_model("depth-estimation"), store, image=image_path)
    assert result.kind == "depth_map"
    assert result.value == result.path
    with Image.open(_under(result.path, store)) as depth:
        assert depth.format == "PNG"
        assert depth.size == (64, 64)  # resized back to the input image
        assert depth.mode == "L"
    assert result.data["width"] == result.data["height"] == 64
    assert result.data["min"] < result.data["max"]


def test_image_to_text_captions_through_a_chat_vlm(tiny_model, image_path, store) -> None:
    result = _run("image-to-text", tiny_model("image-to-text"), store, image=image_path)
    assert result.kind == "caption"
    assert isinstance(result.text, str) and result.text == result.text.strip()
    assert result.text
    assert "<image>" not in result.text  # the prompt is not echoed back


def test_image_to_text_takes_a_prompt(tiny_model, image_path, store) -> None:
    result = _run(
        "image-to-text",
        tiny_model("image-to-text"),
        store,
        image=image_path,
        prompt="what color is the sky ?",
    )
    assert result.kind == "caption" and result.text


def test_image_to_text_generates_greedily(tiny_model, image_path, store, monkeypatch) -> None:
    """Generation settings reach ``generate`` (not the processor, which would drop them)."""
    model_dir = tiny_model("image-to-text")
    model = get_tool("image-to-text").load(model_dir).model
    seen: dict[str, object] = {}
    real_generate = model.generate

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(model, "generate", spy)
    first = _run("image-to-text", model_dir, store, image=image_path)
    second = _run("image-to-text", model_dir, store, image=image_path)
    assert seen.get("do_sample") is False
    assert seen.get("max_new_tokens") == 48
    assert first.text == second.text


def test_visual_question_answering_ranks_answers(tiny_model, image_path, store) -> None:
    result = _run(
        "visual-question-answering",
        tiny_model("visual-question-answering"),
        store,
        image=image_path,
        question="how many dogs are in the picture?",
    )
    assert result.kind == "answer"
    answers = {"yes", "no", "dog", "cat", "two"}
    assert len(result.data) == 3
    assert len({d["label"] for d in result.data}) == 3
    for ans in result.data:
        assert ans["label"] in answers
        assert _is_score(ans["score"])
    scores = [d["score"] for d in result.data]
    assert scores == sorted(scores, reverse=True)
    assert result.text == result.data[0]["label"]
    assert result.confidence == result.data[0]["score"]


def test_visual_question_answering_needs_a_local_model(tmp_path, image_path, store) -> None:
    from graph_agent.tools.errors import ModelUnavailableError

    with pytest.raises(ModelUnavailableError, match="never downloads"):
        _run(
            "visual-question-answering",
            str(tmp_path / "not-installed"),
            store,
            image=image_path,
            question="what is this?",
        )


def test_token_classification_tags_entities(tiny_model, store) -> None:
    text = "John Smith lives in Paris and visited London yesterday."
    result = _run("token-classification", tiny_model("token-classification"), store, text=text)
    assert result.kind == "entities"
    assert isinstance(result.data, list)
    for ent in result.data:
        assert ent["entity"] in {"PER", "LOC"}  # "simple" aggregation drops B-/I- and "O"
        assert _is_score(ent["score"])
        assert isinstance(ent["start"], int) and isinstance(ent["end"], int)
        assert 0 <= ent["start"] < ent["end"] <= len(text)
        assert ent["word"]
    if result.data:
        assert result.confidence == min(e["score"] for e in result.data)
    else:
        assert result.text == "no entities found"


def test_text_to_speech_writes_a_wav(tiny_model, store) -> None:
    import soundfile as sf

    result = _run("text-to-speech", tiny_model("text-to-speech"), store, text="hello world.")
    assert result.kind == "speech"
    assert result.value == result.path
    audio, rate = sf.read(_under(result.path, store), dtype="float32")
    assert rate == result.extra["sampling_rate"] == 16_000
    assert audio.ndim == 1 and audio.size > 0
    assert np.isfinite(audio).all()


def test_text_to_speech_rejects_empty_text(tiny_model, store) -> None:
    from graph_agent.tools.errors import ToolError

    with pytest.raises(ToolError, match="text"):
        _run("text-to-speech", tiny_model("text-to-speech"), store, text="   ")


def test_warm_cache_loads_a_model_once(tmp_path: Path, store: ArtifactStore) -> None:
    model_dir = str(BUILDERS["token-classification"](tmp_path / "fresh-ner"))
    tool = get_tool("token-classification")
    before = PIPELINES.loads
    first = tool.run(model_dir, ToolCall(args={"text": "John lives in Paris."}, artifacts=store))
    assert PIPELINES.loads == before + 1
    second = tool.run(model_dir, ToolCall(args={"text": "John lives in Paris."}, artifacts=store))
    assert PIPELINES.loads == before + 1
    assert tool.load(model_dir) is tool.load(model_dir)
    assert first == second
