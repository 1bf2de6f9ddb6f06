"""Graph behaviour: context fallbacks, plan approval, parallel branches, clear errors."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph_agent import Context, build_graph
from graph_agent.graph import graph as exported


def test_context_reads_env_var_fallbacks(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPH_AGENT_APPROVE_PLAN", "true")
    monkeypatch.setenv("GRAPH_AGENT_MAX_RETRIES", "5")
    monkeypatch.setenv("GRAPH_AGENT_MODELS_DIR", str(tmp_path))
    ctx = Context()
    assert ctx.approve_plan is True and ctx.max_retries == 5 and ctx.models_dir == str(tmp_path)
    assert Context(max_retries=1).max_retries == 1  # an explicit value wins over the env
    assert Context(max_retries=2, approve_plan=False).max_retries == 2  # even the default value
    assert Context(approve_plan=False).approve_plan is False
    monkeypatch.setenv("GRAPH_AGENT_MAX_RETRIES", "many")
    with pytest.raises(ValueError, match="GRAPH_AGENT_MAX_RETRIES"):
        Context()


def test_exported_graph_has_no_checkpointer_and_public_schemas():
    assert exported.checkpointer is None
    assert set(exported.get_input_jsonschema()["properties"]) >= {"request", "inputs"}
    assert set(exported.get_output_jsonschema()["properties"]) == {
        "answer",
        "report",
        "outputs",
        "report_markdown",
    }
    assert build_graph().__class__.__name__ == "StateGraph"


def test_plan_approval_interrupts_and_a_rejection_runs_nothing(tmp_path, models_dir, sample_photo):
    graph = build_graph(InMemorySaver())
    ctx = Context(approve_plan=True, models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    config = {"configurable": {"thread_id": "approve"}}
    graph.invoke(
        {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
        config,
        context=ctx,
    )
    interrupts = graph.get_state(config).interrupts
    assert interrupts and interrupts[0].value["plan"]["subtasks"][0]["task"] == (
        "image-classification"
    )
    final = graph.invoke(Command(resume=False), config, context=ctx)
    assert "not approved" in final["answer"] and final["outputs"] == {}

    config = {"configurable": {"thread_id": "approve-yes"}}
    graph.invoke(
        {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
        config,
        context=ctx,
    )
    final = graph.invoke(Command(resume=True), config, context=ctx)
    assert final["outputs"]["node-0"] and final["report"]["failures"] == []


def test_independent_subtasks_both_run_and_are_judged(
    tmp_path, models_dir, sample_photo, speech_wav
):
    graph = build_graph(InMemorySaver())
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    request = {
        "request": "transcribe meeting.wav and tell me what is in photo.jpg",
        "inputs": {"meeting.wav": str(speech_wav[0]), "photo.jpg": str(sample_photo)},
    }
    events = [
        chunk
        for chunk in graph.stream(
            request, {"configurable": {"thread_id": "par"}}, context=ctx, stream_mode="custom"
        )
    ]
    kinds = [(e["event"], e.get("id")) for e in events if e["event"] != "plan_ready"]
    # Both start before either ends: they run side by side.
    assert {k for k in kinds[:2]} == {("subtask_started", "node-0"), ("subtask_started", "node-1")}
    verdicts = [i for kind, i in kinds if kind == "critic_verdict"]
    assert sorted(verdicts) == ["node-0", "node-1"]


def test_a_step_and_its_dependant_do_not_wait_for_a_slow_step_beside_them(tmp_path):
    """A fast step (0.25 s) and its dependant, beside a slow one (2 s): the dependant starts
    as soon as the fast step is judged, not when the slow step ends (no superstep barrier)."""
    from graph_agent.evals.bench_parallel import barrier

    times = barrier(1.0, tmp_path, Context(artifacts_dir=str(tmp_path), models_dir=str(tmp_path)))
    assert times["dependant_start_s"] < times["slow_end_s"] - 1.0, times
    assert times["dependant_start_s"] >= times["fast_end_s"], times


def test_missing_models_dir_is_a_clear_error_not_a_crash(tmp_path, sample_photo):
    ctx = Context(models_dir=str(tmp_path / "empty"), artifacts_dir=str(tmp_path))
    final = (
        build_graph()
        .compile()
        .invoke(
            {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
            context=ctx,
        )
    )
    assert "graph-agent models install" in final["answer"]
    assert "graph-agent models install" in final["report"]["error"]


def test_a_reused_thread_starts_each_request_clean(tmp_path, models_dir, sample_photo):
    graph = build_graph(InMemorySaver())
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    config = {"configurable": {"thread_id": "reuse"}}
    first = graph.invoke({"request": ""}, config, context=ctx)
    assert "empty" in first["report"]["error"]
    photo = {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}}
    second = graph.invoke(photo, config, context=ctx)
    assert "error" not in second["report"] and second["outputs"]["node-0"]
    third = graph.invoke(photo, config, context=ctx)
    assert [d["node"] for d in third["report"]["decisions"]] == ["planner", "selector", "critic"]
    assert [s["attempts"] for s in third["report"]["steps"]] == [1]


def test_a_planned_task_with_no_tool_fails_clearly(tmp_path, models_dir):
    final = (
        build_graph()
        .compile()
        .invoke(
            {"request": "generate an image of a red bicycle"},
            context=Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path)),
        )
    )
    step = final["report"]["steps"][0]
    assert step["task"] == "text-to-image" and step["status"] == "failed"
    assert "text-to-image" in final["answer"]
