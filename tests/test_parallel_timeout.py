"""Through the real compiled graph: independent subtasks run at the same time, and a tool call
past ``subtask_timeout_s`` becomes a failed attempt while the run still ends with a report.

Planning and selection are replaced by fixed nodes and the tool by one that sleeps, so the
timings measure the graph and the executor, not a model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graph_agent.graph as graph_module
import graph_agent.nodes.executor as executor
from graph_agent import Context
from graph_agent.evals.bench_parallel import fixed_plan_nodes
from graph_agent.retrieval_index.search import Candidate
from graph_agent.tools.cancel import check_cancelled
from graph_agent.tools.pipeline_cache import PIPELINES
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

TASK = "text-classification"  # a real task (the critic judges it), run by the sleepy tool


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so calls abandoned by a timeout end instead of sleeping on."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def sleepy(monkeypatch, tmp_path, release) -> dict[str, float]:
    """Register a test tool for TASK whose call sleeps as long as its model says.

    Returns model path -> seconds; a model is a folder, so the cache treats it as real.
    """
    seconds: dict[str, float] = {}

    def call(model: dict[str, str], tool_call: ToolCall) -> ToolResult:
        if model["path"].endswith("stubborn"):  # like a C call that never checks
            release.wait(seconds[model["path"]])
        else:  # like a torch model: a cancellation check at every step of its work
            deadline = time.monotonic() + seconds[model["path"]]
            while time.monotonic() < deadline and not release.is_set():
                check_cancelled()
                time.sleep(0.01)
        return ToolResult(kind="labels", modality="text", text=f"slept in {tool_call.subtask_id}")

    tool = TaskTool(
        task=TASK,
        inputs=(("text", "text"),),
        output="text",
        loader="test-sleep",
        call=call,
        description="Sleep, then answer (test only).",
        make_loader=lambda path: {"path": path},
    )
    real_get_tool = executor.get_tool
    monkeypatch.setattr(
        executor,
        "get_tool",
        lambda task, library=None: tool if task == TASK else real_get_tool(task, library),
    )
    return seconds


def model(tmp_path: Path, seconds: dict[str, float], name: str, sleep: float) -> Candidate:
    path = tmp_path / name
    path.mkdir(exist_ok=True)
    seconds[str(path)] = sleep
    return Candidate(id=f"test/{name}", path=str(path), score=1.0, relevance=1.0, why="test")


@pytest.fixture
def run(monkeypatch, tmp_path):
    """``run(candidates_per_step, **context)`` -> (final state, wall seconds), on a graph whose
    planner returns one independent TASK step per entry and whose selector returns them."""

    def go(candidates: list[list[Candidate]], **settings: Any) -> tuple[dict[str, Any], float]:
        plan, select = fixed_plan_nodes(TASK, candidates, "fixed for a test")

        monkeypatch.setattr(graph_module, "plan", plan)
        monkeypatch.setattr(graph_module, "select_models", select)
        graph = graph_module.build_graph().compile()
        ctx = Context(artifacts_dir=str(tmp_path / "artifacts"), **settings)
        started = time.perf_counter()
        final = graph.invoke({"request": "sleep twice"}, context=ctx)
        return final, time.perf_counter() - started

    return go


def test_independent_subtasks_run_in_parallel(run, sleepy, tmp_path):
    a = model(tmp_path, sleepy, "sleep-a", 1.0)
    b = model(tmp_path, sleepy, "sleep-b", 1.0)
    final, wall = run([[a], [b]])
    assert final["report"]["failures"] == []
    assert final["outputs"] == {"node-0": "slept in node-0", "node-1": "slept in node-1"}
    assert wall <= 0.6 * (1.0 + 1.0), f"two 1.0 s steps took {wall:.2f} s: not parallel"


def test_a_call_past_the_timeout_is_a_failed_attempt_and_the_run_still_reports(
    run, sleepy, tmp_path
):
    stuck = model(tmp_path, sleepy, "stuck", 30.0)
    final, wall = run([[stuck]], subtask_timeout_s=0.5)
    assert wall < 5.0
    step = final["report"]["steps"][0]
    assert step["status"] == "failed" and step["attempts"] == 1
    assert "timed out after 0.5 s" in step["problems"][0]
    assert "the call was stopped" in step["problems"][0]
    assert "timed out after 0.5 s" in final["answer"]
    # The call stopped, so its thread is gone and its model went back to the cache for the
    # next call, instead of a second copy being loaded beside one still running.
    assert not [t for t in threading.enumerate() if "stuck" in t.name]
    assert any(key[1] == stuck.path for key in PIPELINES.cached_keys())


def test_a_call_that_cannot_be_stopped_is_abandoned_and_its_model_set_aside(
    run, sleepy, tmp_path, monkeypatch
):
    monkeypatch.setattr(executor, "STOP_GRACE_S", 0.3)
    stubborn = model(tmp_path, sleepy, "stubborn", 30.0)
    final, wall = run([[stubborn]], subtask_timeout_s=0.5)
    assert wall < 5.0
    step = final["report"]["steps"][0]
    assert step["status"] == "failed" and "could not be stopped" in step["problems"][0]
    # The abandoned call's pipeline is out of the cache: nothing else will share it.
    assert not any(key[1] == stubborn.path for key in PIPELINES.cached_keys())


def test_a_timed_out_model_falls_back_to_the_next_candidate(run, sleepy, tmp_path):
    stuck = model(tmp_path, sleepy, "stuck", 30.0)
    quick = model(tmp_path, sleepy, "quick", 0.0)
    final, _ = run([[stuck, quick]], subtask_timeout_s=0.5)
    step = final["report"]["steps"][0]
    assert step["status"] == "ok" and step["model"] == "test/quick" and step["attempts"] == 2
    assert [v["decision"] for v in step["verdicts"]] == ["retry with next candidate", "accepted"]
    assert "timed out" in step["verdicts"][0]["problems"][0]
