"""The whole graph on real models: the demo request, and resuming a checkpointed run."""

from __future__ import annotations

import re
import sqlite3

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from graph_agent import Context, build_graph
from graph_agent.tools.spec import TaskTool

REQUEST = "transcribe meeting.wav, summarize it in one sentence, and tell me what is in photo.jpg"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@pytest.fixture
def ctx(tmp_path, models_dir) -> Context:
    return Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path / "artifacts"))


@pytest.fixture
def inputs(speech_wav, sample_photo):
    return {"meeting.wav": str(speech_wav[0]), "photo.jpg": str(sample_photo)}


@pytest.fixture
def tool_calls(monkeypatch):
    """Record every tool run (task, model) while still running the real tool."""
    calls: list[tuple[str, str]] = []
    real_run = TaskTool.run

    def spy(self, model_dir, call):
        calls.append((self.task, model_dir))
        return real_run(self, model_dir, call)

    monkeypatch.setattr(TaskTool, "run", spy)
    return calls


def test_demo_request_end_to_end(ctx, inputs, speech_wav):
    graph = build_graph().compile()
    final = graph.invoke({"request": REQUEST, "inputs": inputs}, context=ctx)
    assert set(final) == {"answer", "report", "outputs", "report_markdown"}
    outputs, report = final["outputs"], final["report"]
    transcript = outputs["node-0"]
    spoken = _words(speech_wav[1])
    assert len(_words(transcript) & spoken) >= 0.8 * len(spoken), transcript
    summary = outputs["node-1"]
    assert summary and summary.count(".") <= 2 and len(summary) < len(transcript) * 1.5
    steps = {s["id"]: s for s in report["steps"]}
    assert steps["node-0"]["model"] == "openai/whisper-tiny.en"
    assert steps["node-1"]["model"] == "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    assert steps["node-2"]["model"] == "efficientnet-lite0"
    assert steps["node-2"]["output"]["kind"] == "labels" and outputs["node-2"]
    assert all(s["status"] == "ok" and s["reason"] and s["seconds"] > 0 for s in steps.values())
    assert report["failures"] == []
    assert "Transcript" in final["answer"] and "Image label" in final["answer"]
    import json

    json.dumps(report)  # the report must be JSON-serialisable


class _ProcessKilled(BaseException):
    """Stands for the process dying mid-run: no ``except Exception`` in the graph stops it."""


def test_interrupted_run_resumes_without_redoing_finished_subtasks(
    tmp_path, ctx, speech_wav, tool_calls, monkeypatch
):
    """The run dies while the summary runs, after the transcript was accepted: the resumed
    run (a new graph over the same database) replays the transcript from the checkpoint."""
    spied_run = TaskTool.run

    def dies_in_summary(self, model_dir, call):
        if self.task == "summarization" and not killed:
            killed.append(call.subtask_id)
            raise _ProcessKilled
        return spied_run(self, model_dir, call)

    killed: list[str] = []
    monkeypatch.setattr(TaskTool, "run", dies_in_summary)
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    graph = build_graph(SqliteSaver(conn))
    config = {"configurable": {"thread_id": "resume-test"}}
    request = {
        "request": "transcribe meeting.wav and summarize it in one sentence",
        "inputs": {"meeting.wav": str(speech_wav[0])},
    }
    with pytest.raises(_ProcessKilled):
        graph.invoke(request, config, context=ctx)
    assert killed == ["node-1"]
    assert [t for t, _ in tool_calls] == ["automatic-speech-recognition"]

    # A new process would rebuild the graph over the same database: do exactly that.
    conn.close()
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    graph = build_graph(SqliteSaver(conn))
    final = graph.invoke(None, config, context=ctx)
    tasks = [t for t, _ in tool_calls]
    assert tasks.count("automatic-speech-recognition") == 1  # node-0 was not run again
    assert tasks[1:] == ["summarization"]
    assert final["report"]["failures"] == []
    assert final["outputs"]["node-1"]
    steps = {s["id"]: s for s in final["report"]["steps"]}
    assert steps["node-0"]["attempts"] == 1 and steps["node-1"]["attempts"] == 1
    conn.close()


def test_failed_model_falls_back_to_the_next_candidate(ctx, speech_wav, monkeypatch):
    """Break the first summarizer: the critic retries with the next candidate and says so."""
    real_run = TaskTool.run

    def flaky(self, model_dir, call):
        if self.task == "summarization" and "qwen" in model_dir:
            raise RuntimeError("simulated out-of-memory")
        return real_run(self, model_dir, call)

    monkeypatch.setattr(TaskTool, "run", flaky)
    graph = build_graph().compile()
    final = graph.invoke(
        {
            "request": "transcribe meeting.wav and summarize it",
            "inputs": {"meeting.wav": str(speech_wav[0])},
        },
        context=ctx,
    )
    step = {s["id"]: s for s in final["report"]["steps"]}["node-1"]
    assert step["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and step["attempts"] == 2
    decisions = [v["decision"] for v in step["verdicts"]]
    assert decisions == ["retry with next candidate", "accepted"]
    assert "simulated out-of-memory" in step["verdicts"][0]["problems"][0]


def test_a_broken_model_directory_falls_back_and_the_report_shows_both_attempts(
    ctx, speech_wav, models_dir, tmp_path, monkeypatch
):
    """The first-choice summarizer's directory holds corrupt weights: a real load failure.

    The directory is a copy of the real model's small files with its weights replaced by
    garbage; the selector is made to rank it first, and nothing else is faked.
    """
    import shutil

    import graph_agent.nodes.selector as selector_node

    real = models_dir / "qwen2.5-coder-0.5b-instruct"
    broken = tmp_path / "broken-qwen"
    broken.mkdir()
    for item in real.iterdir():
        if item.is_file() and item.stat().st_size < 20_000_000:
            shutil.copy(item, broken / item.name)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file" * 100)
    real_select = selector_node.select

    def broken_first(index, task, query, constraints, **kwargs):
        chosen = real_select(index, task, query, constraints, **kwargs)
        if task == "summarization":
            chosen.candidates[0].path = str(broken)
        return chosen

    monkeypatch.setattr(selector_node, "select", broken_first)
    graph = build_graph().compile()
    request = {
        "request": "transcribe meeting.wav and summarize it",
        "inputs": {"meeting.wav": str(speech_wav[0])},
    }
    final = graph.invoke(request, context=ctx)
    step = {s["id"]: s for s in final["report"]["steps"]}["node-1"]
    assert final["report"]["failures"] == []
    assert [v["decision"] for v in step["verdicts"]] == ["retry with next candidate", "accepted"]
    first, second = step["tries"]
    assert first["model"] != second["model"] and second["model"] == step["model"]
    assert final["outputs"]["node-1"]
    assert "retry with next candidate" in final["report_markdown"]
