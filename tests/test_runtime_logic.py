"""State reducers, run progress and the critic's checks: pure logic, no models."""

from __future__ import annotations

from graph_agent.progress import blocked_steps, ready_steps
from graph_agent.state import RESET, append, merge
from graph_agent.tools.registry import get_tool
from graph_agent.verdicts import judge

PLAN = {
    "subtasks": [
        {"id": "node-0", "task": "automatic-speech-recognition", "args": {}, "deps": []},
        {"id": "node-1", "task": "summarization", "args": {}, "deps": ["node-0"]},
        {"id": "node-2", "task": "translation", "args": {}, "deps": ["node-1"]},
        {"id": "node-3", "task": "image-classification", "args": {}, "deps": []},
    ]
}


def test_merge_combines_parallel_writes_and_deletes_on_none():
    assert merge({"a": 1, "b": 2}, {"b": None, "c": 3}) == {"a": 1, "c": 3}
    assert merge(None, {"x": 1}) == {"x": 1}


def test_ready_steps_are_the_independent_ones_first():
    state = {"plan": PLAN, "results": {}}
    assert [s["id"] for s in ready_steps(state)] == ["node-0", "node-3"]
    state["results"] = {"node-0": {"status": "ok"}}
    assert [s["id"] for s in ready_steps(state, running={"node-3"})] == ["node-1"]


def test_a_failed_step_blocks_everything_downstream():
    state = {"plan": PLAN, "results": {"node-0": {"status": "failed"}, "node-3": {"status": "ok"}}}
    assert blocked_steps(state) == ["node-1", "node-2"]
    assert ready_steps(state) == []


def _attempt(**result):
    return {"status": "ok", "result": {"modality": "text", "text": "x", **result}}


def test_judge_accepts_good_text_and_rejects_empty_wrong_type_and_unsure():
    asr = get_tool("automatic-speech-recognition")
    assert judge(asr, _attempt(text="hello")) == []
    assert judge(asr, _attempt(text="  ")) == ["the output text is empty"]
    assert "expected text output" in judge(asr, _attempt(modality="audio"))[0]
    labels = get_tool("image-classification")
    assert "below" in judge(labels, _attempt(confidence=0.001))[0]
    assert judge(asr, {"status": "error", "error": "boom"}) == ["boom"]


def test_judge_requires_media_files_to_exist(tmp_path):
    tts = get_tool("text-to-speech")
    missing = {"status": "ok", "result": {"modality": "audio", "path": str(tmp_path / "no.wav")}}
    assert judge(tts, missing) == ["no audio file was written"]
    wav = tmp_path / "a.wav"
    wav.write_bytes(b"RIFF0000")
    assert judge(tts, {"status": "ok", "result": {"modality": "audio", "path": str(wav)}}) == []


def test_judge_rejects_a_summary_that_does_not_condense_its_input():
    summarizer = get_tool("summarization")
    echo = {**_attempt(text="a" * 90), "input_chars": 100}
    assert judge(summarizer, echo) == [
        "the summary does not condense the text (90 of 100 characters)"
    ]
    assert judge(summarizer, {**_attempt(text="a" * 80), "input_chars": 100}) == []


def test_reset_markers_clear_accumulated_state():
    assert merge({"a": 1}, {RESET: True, "b": 2}) == {"b": 2}
    assert append([1, 2], [3]) == [1, 2, 3]
    assert append([1, 2], [RESET, 3]) == [3]


def test_arguments_take_whole_and_embedded_references_and_inputs():
    from graph_agent.nodes.executor import _resolve, step_view
    from graph_agent.tools.results import ToolResult

    caption = ToolResult(kind="caption", modality="text", text="a red car").to_dict()
    step = {
        "id": "node-2",
        "task": "visual-question-answering",
        "args": {"image": "car.jpg", "question": "What is the price of the <node-1>?"},
        "deps": ["node-1"],
    }
    state = {
        "inputs": {"car.jpg": "/data/car.jpg"},
        "input_types": {"car.jpg": "image"},
        "selections": {"node-2": {"candidates": []}},
        "results": {"node-1": {"status": "ok", "result": caption}},
    }
    view = step_view(state, step)
    assert set(view["upstream"]) == {"node-1"}  # an embedded reference is fetched too
    args = _resolve(step, view)
    assert args["question"] == "What is the price of the a red car?"
    assert args["image"] == "/data/car.jpg"
    whole = {**step, "args": {"text": "<node-1>"}}
    assert _resolve(whole, step_view(state, whole)) == {"text": "a red car"}
