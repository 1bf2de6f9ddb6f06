"""The report: JSON and Markdown (with a Mermaid plan) built from a hand-made final state,
the chat-model answer and its fallback, and where the report files may be written.

No model runs here: the state is what the planner, selector, executor and critic would have
left after a run in which one step failed twice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.nodes import responder
from graph_agent.report import build_report, mermaid, render_markdown, template_answer
from graph_agent.state import OutputState, State

TRANSCRIPT = "We agreed to ship the release on Friday and to meet again on Monday."


def _attempt(model: str, attempt: int, seconds: float) -> dict[str, Any]:
    return {"model": model, "model_path": f"/m/{model}", "attempt": attempt, "seconds": seconds}


def _state(audio_path: str = "/artifacts/t1/node-2-abc123.wav", tts_after: str = "node-0") -> State:
    """A finished 3-step run: node-0 transcribed, node-1 (summary) failed on both of its
    candidates, node-2 spoke ``tts_after``'s text into a WAV artifact (or was skipped)."""
    plan = {
        "subtasks": [
            {
                "id": "node-0",
                "task": "automatic-speech-recognition",
                "args": {"audio": "meeting.wav"},
                "deps": [],
                "description": "transcribe meeting.wav",
            },
            {
                "id": "node-1",
                "task": "summarization",
                "args": {"text": "<node-0>"},
                "deps": ["node-0"],
                "description": "summarize it",
            },
            {
                "id": "node-2",
                "task": "text-to-speech",
                "args": {"text": f"<{tts_after}>"},
                "deps": [tts_after],
                "description": "read it aloud",
            },
        ],
        "repairs": ["node-2: dropped the unknown argument 'voice'"],
    }
    cand = {
        "node-0": [("openai/whisper-tiny.en", 0.91, 0.62)],
        "node-1": [("Qwen/Qwen2.5-Coder-0.5B-Instruct", 0.8, 0.5), ("org/tiny-sum", 0.4, 0.3)],
        "node-2": [("piper/en-us-joe", 0.7, 0.55)],
    }
    selections = {
        step_id: {
            "task": next(s["task"] for s in plan["subtasks"] if s["id"] == step_id),
            "candidates": [
                {"id": m, "path": f"/m/{m}", "score": sc, "relevance": rel, "why": f"why {m}"}
                for m, sc, rel in ranked
            ],
            "reason": f"{ranked[0][0]}: best score of {len(ranked)} allowed candidate(s)",
            "rejected": {"org/gpl-model": ["licence gpl-3.0 is not allowed"]}
            if step_id == "node-1"
            else {},
        }
        for step_id, ranked in cand.items()
    }
    sum_fail_1 = "RuntimeError: out of memory while loading Qwen"
    sum_fail_2 = "the summary does not condense the text (90 of 70 characters)"
    results: dict[str, Any] = {
        "node-0": {
            **_attempt("openai/whisper-tiny.en", 1, 1.25),
            "status": "ok",
            "result": {
                "kind": "transcript",
                "modality": "text",
                "text": TRANSCRIPT,
                "path": None,
                "confidence": None,
                "data": None,
                "extra": {},
            },
        },
        "node-1": {
            **_attempt("org/tiny-sum", 2, 0.75),
            "status": "failed",
            "problems": [sum_fail_2],
        },
    }
    decisions: list[dict[str, Any]] = [
        {
            "node": "planner",
            "decision": "planned",
            "planner": "offline",
            "steps": 3,
            "seconds": 0.01,
        },
        *[
            {"node": "selector", "subtask": k, "decision": "selected", "model": v[0][0]}
            for k, v in cand.items()
        ],
        {
            "node": "critic",
            "subtask": "node-0",
            "model": "openai/whisper-tiny.en",
            "attempt": 1,
            "seconds": 1.25,
            "decision": "accepted",
        },
        {
            "node": "critic",
            "subtask": "node-1",
            "model": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
            "attempt": 1,
            "seconds": 3.5,
            "decision": "retry with next candidate",
            "problems": [sum_fail_1],
        },
        {
            "node": "critic",
            "subtask": "node-1",
            "model": "org/tiny-sum",
            "attempt": 2,
            "seconds": 0.75,
            "decision": "failed (no candidates left)",
            "problems": [sum_fail_2],
        },
    ]
    if tts_after == "node-0":
        results["node-2"] = {
            **_attempt("piper/en-us-joe", 1, 0.5),
            "status": "ok",
            "result": {
                "kind": "speech",
                "modality": "audio",
                "text": "",
                "path": audio_path,
                "confidence": None,
                "data": None,
                "extra": {},
            },
        }
        decisions.append(
            {
                "node": "critic",
                "subtask": "node-2",
                "model": "piper/en-us-joe",
                "attempt": 1,
                "seconds": 0.5,
                "decision": "accepted",
            }
        )
    return {
        "request": "transcribe meeting.wav, summarize it and read the transcript aloud",
        "inputs": {"meeting.wav": "/in/meeting.wav"},
        "plan": plan,
        "selections": selections,
        "results": results,
        "decisions": decisions,
    }


def _section(markdown: str, title: str) -> str:
    """The text of one '## ' or '### ' section, up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(title)}.*?$(.*?)(?=^#+ |\Z)", markdown, re.M | re.S)
    assert match, f"no section {title!r} in:\n{markdown}"
    return match.group(1)


def test_json_report_keeps_every_attempt_and_the_failure():
    report = build_report(_state())
    json.dumps(report)  # the public contract: JSON-serialisable
    steps = {s["id"]: s for s in report["steps"]}
    assert [s["status"] for s in report["steps"]] == ["ok", "failed", "ok"]
    assert report["failures"] == ["node-1"]
    tries = steps["node-1"]["tries"]
    assert [(t["attempt"], t["model"], t["seconds"]) for t in tries] == [
        (1, "Qwen/Qwen2.5-Coder-0.5B-Instruct", 3.5),
        (2, "org/tiny-sum", 0.75),
    ]
    assert tries[0]["verdict"] == "retry with next candidate"
    assert "out of memory" in tries[0]["problems"][0]
    assert steps["node-2"]["artifact"] == "/artifacts/t1/node-2-abc123.wav"
    assert report["repairs"] == ["node-2: dropped the unknown argument 'voice'"]
    assert report["planned_by"] == "offline"
    # model time counts final attempts; every attempt adds the rejected 3.5 s too
    assert report["timings"]["model_seconds_total"] == 2.5
    assert report["timings"]["all_attempts_seconds_total"] == 6.0
    # The process's warm cache: a server operator watches these counters stay flat.
    assert set(report["cache"]) == {
        "model_loads",
        "evictions",
        "models_held",
        "held_mb",
        "budget_mb",
    }
    assert "Warm model cache of this process" in render_markdown(report)


def test_markdown_shows_plan_diagram_attempts_failure_and_artifacts():
    state = _state()
    report = build_report(state)
    md = render_markdown(
        report, template_answer(state), {"written_by": "template"}, "/artifacts/t1"
    )

    diagram = re.search(r"```mermaid\n(.*?)\n```", md, re.S)
    assert diagram, md
    chart = diagram.group(1)
    assert chart.startswith("flowchart TD")
    assert 's_node_0["node-0: automatic-speech-recognition<br/>openai/whisper-tiny.en' in chart
    assert 's_node_1["node-1: summarization<br/>org/tiny-sum<br/>failed"]' in chart
    assert "s_node_0 --> s_node_1" in chart and "s_node_0 --> s_node_2" in chart
    assert "s_node_1 --> s_node_2" not in chart
    assert re.search(r"^\s*class s_node_1 failed;$", chart, re.M)
    assert re.search(r"^\s*class s_node_0,s_node_2 ok;$", chart, re.M)

    failed = _section(md, "node-1 · summarization · failed")
    assert (
        "| 1 | `Qwen/Qwen2.5-Coder-0.5B-Instruct` | 3.50 s | retry with next candidate |" in failed
    )
    assert "| 2 | `org/tiny-sum` | 0.75 s | failed (no candidates left) |" in failed
    assert "out of memory" in failed and "does not condense" in failed
    assert "`org/gpl-model`: licence gpl-3.0 is not allowed" in failed  # ruled out
    assert "| 2 | `org/tiny-sum` | 0.400 | 0.300 | why org/tiny-sum |" in failed  # candidates
    assert "**Chosen model:** `Qwen/Qwen2.5-Coder-0.5B-Instruct`" in failed
    assert "**Why:** Qwen/Qwen2.5-Coder-0.5B-Instruct: best score" in failed
    assert "**Last tried:** `org/tiny-sum` (attempt 2)" in failed

    spoken = _section(md, "node-2 · text-to-speech · ok")
    assert "[`/artifacts/t1/node-2-abc123.wav`](<node-2-abc123.wav>)" in spoken  # relative link
    assert TRANSCRIPT in _section(md, "node-0 · automatic-speech-recognition · ok")

    failures = _section(md, "Failures")
    assert "**node-1** (summarization): failed after 2 attempt(s)" in failures
    assert "attempt 1 with `Qwen/Qwen2.5-Coder-0.5B-Instruct`" in failures
    assert "attempt 2 with `org/tiny-sum`" in failures
    assert "node-0" not in failures

    plan = _section(md, "Plan")
    assert "Planned by: `offline`." in plan
    assert "- node-2: dropped the unknown argument 'voice'" in plan
    assert "Every attempt: 6.00 s".lower() in _section(md, "Timings").lower()
    assert "Done: 2 of 3 step(s) succeeded." in _section(md, "Answer")


def _replanned_state() -> State:
    """``_state()`` after one re-plan: summarization failed with both models, so the critic
    asked for a re-plan and node-1 became a text-generation step that worked."""
    state = _state()
    state["plan"]["subtasks"][1]["task"] = "text-generation"
    for d in state["decisions"]:
        if d.get("subtask") == "node-1":
            d["task"] = "summarization"
    reason = "node-1 (summarization) failed. Re-plan 1 of at most 1: node-1: ..."
    change = "summarization failed with every model; text-generation instead"
    state["decisions"] += [
        {"node": "critic", "decision": "replan", "failed": ["node-1"], "reason": reason},
        {
            "node": "planner",
            "replan": 1,
            "decision": "replanned",
            "reason": reason,
            "changes": {"node-1": change},
            "kept": ["node-0", "node-2"],
        },
        {
            "node": "critic",
            "subtask": "node-1",
            "task": "text-generation",
            "model": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
            "attempt": 1,
            "replan": 1,
            "seconds": 2.0,
            "decision": "accepted",
            "checks": [{"check": "not empty", "verdict": "passed", "reason": "has text"}],
        },
    ]
    state["results"]["node-1"] = {
        **_attempt("Qwen/Qwen2.5-Coder-0.5B-Instruct", 1, 2.0),
        "status": "ok",
        "result": {
            "kind": "text",
            "modality": "text",
            "text": "Ship Friday.",
            "path": None,
            "confidence": None,
            "data": None,
            "extra": {},
        },
    }
    return state


def test_a_step_the_planner_inferred_says_so_in_both_reports():
    state = _state()
    why = "the request implies it though no clause names it (implied-task head, probability 0.91)"
    state["plan"]["subtasks"][1]["inferred"] = why
    report = build_report(state)
    assert [s["inferred"] for s in report["steps"]] == ["", why, ""]
    md = render_markdown(report, template_answer(state), {"written_by": "template"}, "/a/t1")
    assert f"Not asked for in words; inferred: {why}" in _section(md, "node-1 · summarization")
    assert "inferred" not in _section(md, "node-0 · automatic-speech-recognition")


def test_a_replan_shows_every_plan_s_attempts_and_what_changed():
    report = build_report(_replanned_state())
    assert report["failures"] == []
    (replanned,) = report["replanning"]
    assert replanned["decision"] == "replanned" and "text-generation instead" in str(replanned)
    step = {s["id"]: s for s in report["steps"]}["node-1"]
    assert [(t["plan"], t["attempt"], t["seconds"]) for t in step["tries"]] == [
        (0, 1, 3.5),
        (0, 2, 0.75),
        (1, 1, 2.0),
    ]
    assert step["replanned"] == [
        "re-plan 1: summarization failed with every model; text-generation instead"
    ]
    md = render_markdown(report, "", None)
    attempts = _section(md, "node-1 · text-generation · ok")
    assert "| first | 2 | `org/tiny-sum (summarization)` | 0.75 s |" in attempts
    assert "| re-plan 1 | 1 | `Qwen/Qwen2.5-Coder-0.5B-Instruct` | 2.00 s | accepted |" in attempts
    assert "| not empty ✓ |" in attempts
    assert "- Re-plan 1: node-1 (summarization) failed." in _section(md, "Plan")
    assert "text-generation<br/>Qwen/Qwen2.5-Coder-0.5B-Instruct<br/>ok · re-planned" in md


def test_a_step_after_a_failure_is_skipped_and_drawn_apart():
    report = build_report(_state(tts_after="node-1"))
    assert report["failures"] == ["node-1", "node-2"]
    chart = mermaid(report)
    assert 's_node_2["node-2: text-to-speech<br/>skipped<br/>skipped"]' in chart
    assert re.search(r"^\s*class s_node_2 skipped;$", chart, re.M)
    assert "s_node_1 --> s_node_2" in chart
    md = render_markdown(report, "", None)
    assert "**node-2** (text-to-speech): skipped, because node-1 did not succeed." in md


def test_labels_with_quotes_cannot_break_the_diagram():
    state = _state()
    state["plan"]["subtasks"][0]["id"] = 'odd "id" <x>'
    state["plan"]["subtasks"][1]["deps"] = ['odd "id" <x>']
    state["results"] = {}
    chart = mermaid(build_report(state))
    assert 'odd "id"' not in chart and "<x>" not in chart and "#quot;id#quot; #lt;x#gt;" in chart
    assert "s_odd__id___x_ --> s_node_1" in chart


def test_error_report_still_renders_with_its_reason():
    state: State = {
        "request": "do something",
        "error": "The request is empty: say what to do.",
        "decisions": [{"node": "planner", "decision": "error", "detail": "empty"}],
    }
    report = build_report(state)
    md = render_markdown(report, template_answer(state), {"written_by": "template"})
    assert "## The run stopped" in md and "The request is empty: say what to do." in md
    assert "I could not run this request" in _section(md, "Answer")


# --------------------------------------------------------------------------- the responder


def _run_responder(state: State, ctx: Context, thread_id: str = "t1") -> dict[str, Any]:
    """Run only the responder node in a graph, as the real graph does at the end of a run."""
    builder = StateGraph(State, context_schema=Context, output_schema=OutputState)
    builder.add_node("respond", responder.respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile().invoke(state, {"configurable": {"thread_id": thread_id}}, context=ctx)


def test_llm_writes_the_answer_from_the_results(tmp_path, monkeypatch):
    seen: list[Any] = []

    def fake_model(spec: str) -> FakeListChatModel:
        seen.append(spec)
        return FakeListChatModel(responses=[f'The transcript says: "{TRANSCRIPT}"'])

    monkeypatch.setattr(responder, "answer_model", fake_model)
    ctx = Context(
        planner="openai:fake", answer_with_llm=True, artifacts_dir=str(tmp_path / "artifacts")
    )
    final = _run_responder(_state(), ctx)
    assert seen == ["openai:fake"]
    assert final["answer"] == f'The transcript says: "{TRANSCRIPT}"'
    assert final["report"]["answer_source"] == {"written_by": "openai:fake"}
    assert "Written by the chat model `openai:fake`" in final["report_markdown"]


def test_prompt_quotes_results_and_failures(monkeypatch, tmp_path):
    prompts: list[Any] = []

    class Recorder(FakeListChatModel):
        def invoke(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            prompts.append(messages)
            return super().invoke(messages, *args, **kwargs)

    monkeypatch.setattr(responder, "answer_model", lambda spec: Recorder(responses=["ok"]))
    ctx = Context(planner="openai:x", answer_with_llm=True, artifacts_dir=str(tmp_path))
    _run_responder(_state(), ctx)
    human = prompts[0][1][1]
    assert TRANSCRIPT in human and "/artifacts/t1/node-2-abc123.wav" in human
    assert (
        f'Step node-0 (automatic-speech-recognition, model openai/whisper-tiny.en): "{TRANSCRIPT}"'
        in human
    )
    assert "Step node-1 (summarization, model org/tiny-sum): failed: the summary does not" in human


@pytest.mark.parametrize("failure", ["raises", "empty"])
def test_llm_failure_falls_back_to_the_template_and_says_why(tmp_path, monkeypatch, failure):
    def broken(spec: str) -> FakeListChatModel:
        if failure == "raises":
            raise ConnectionError("connection refused by 127.0.0.1:9")
        return FakeListChatModel(responses=["   "])

    monkeypatch.setattr(responder, "answer_model", broken)
    ctx = Context(planner="openai:down", answer_with_llm=True, artifacts_dir=str(tmp_path))
    state = _state()
    final = _run_responder(state, ctx)
    assert final["answer"] == template_answer(state)
    source = final["report"]["answer_source"]
    assert source["written_by"] == "template" and source["llm"] == "openai:down"
    expected = "connection refused" if failure == "raises" else "returned an empty answer"
    assert expected in source["fallback_reason"]
    assert expected in _section(final["report_markdown"], "Answer")


def test_without_answer_with_llm_no_model_is_asked(tmp_path, monkeypatch):
    def must_not_be_called(spec: str) -> None:
        raise AssertionError("the chat model was asked although answer_with_llm is off")

    monkeypatch.setattr(responder, "answer_model", must_not_be_called)
    ctx = Context(planner="openai:x", artifacts_dir=str(tmp_path))
    final = _run_responder(_state(), ctx)
    assert final["answer"].startswith("Done: 2 of 3")
    assert final["report"]["answer_source"] == {"written_by": "template"}


def test_answer_with_llm_reads_its_env_var(monkeypatch):
    monkeypatch.setenv("GRAPH_AGENT_ANSWER_WITH_LLM", "yes")
    assert Context().answer_with_llm is True
    monkeypatch.setenv("GRAPH_AGENT_ANSWER_WITH_LLM", "perhaps")
    with pytest.raises(ValueError, match="GRAPH_AGENT_ANSWER_WITH_LLM"):
        Context()


def _tree(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_report_files_are_written_only_under_the_run_artifact_dir(tmp_path, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # a relative write would land here
    artifacts = tmp_path / "artifacts"
    before = _tree(tmp_path)
    final = _run_responder(
        _state(), Context(artifacts_dir=str(artifacts)), thread_id="../../escape"
    )
    written = _tree(tmp_path) - before
    run_dir = artifacts.resolve() / "escape"  # the thread id is sanitised as the executor does
    assert written == {run_dir / "report.json", run_dir / "report.md"}
    files = final["report"]["files"]
    assert files == {"json": str(run_dir / "report.json"), "markdown": str(run_dir / "report.md")}
    assert (run_dir / "report.md").read_text(encoding="utf-8") == final["report_markdown"]
    saved = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert saved["failures"] == ["node-1"] and saved["files"] == files
    assert final["outputs"] == {"node-0": TRANSCRIPT, "node-2": "/artifacts/t1/node-2-abc123.wav"}


def test_an_unwritable_artifact_dir_costs_the_files_not_the_answer(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the artifact folder should be")
    final = _run_responder(_state(), Context(artifacts_dir=str(blocker)))
    assert final["answer"].startswith("Done: 2 of 3")
    assert "files" not in final["report"]
    assert "--artifacts-dir" in final["report"]["files_error"]


def test_responder_called_directly_uses_the_default_run_folder(tmp_path):
    update = responder.respond(_state(), Runtime(context=Context(artifacts_dir=str(tmp_path))))
    assert Path(update["report"]["files"]["markdown"]) == tmp_path.resolve() / "run" / "report.md"


def test_a_server_run_names_artifacts_by_file_name_and_the_cli_keeps_paths(tmp_path, monkeypatch):
    """A server client sees its artifacts by file name in the answer, outputs and both
    reports (the web page fetches them by that name); the operator sees the full path; the
    state's results, which follow-ups read, keep the real path either way."""
    from langgraph.runtime import ServerInfo

    artifacts, models = tmp_path / "artifacts", tmp_path / "models"
    monkeypatch.setenv("GRAPH_AGENT_ARTIFACTS_DIR", str(artifacts))
    monkeypatch.setenv("GRAPH_AGENT_MODELS_DIR", str(models))
    run_dir = artifacts.resolve() / "run"  # a direct call's run folder
    wav = run_dir / "node-2-abc123.wav"
    state = _state(audio_path=str(wav))
    state["decisions"].append(  # a model error that named the models folder
        {"node": "executor", "detail": f"could not load {models}/piper/en-us-joe/model.onnx"}
    )
    server = ServerInfo(assistant_id="a", graph_id="graph-agent")

    client = responder.respond(state, Runtime(context=Context(), server_info=server))
    shown = json.dumps(client)
    for folder in (str(tmp_path), str(artifacts), str(models)):
        assert folder not in shown
    assert client["outputs"]["node-2"] == "node-2-abc123.wav"
    assert "node-2-abc123.wav" in client["answer"]
    (step,) = [s for s in client["report"]["steps"] if s["id"] == "node-2"]
    assert step["artifact"] == step["output"]["path"] == "node-2-abc123.wav"
    assert client["report"]["files"] == {"json": "report.json", "markdown": "report.md"}
    assert "[`node-2-abc123.wav`](<node-2-abc123.wav>)" in client["report_markdown"]
    assert "could not load piper/en-us-joe/model.onnx" in shown
    assert state["results"]["node-2"]["result"]["path"] == str(wav)  # what follow-ups read

    operator = responder.respond(state, Runtime(context=Context()))
    assert operator["outputs"]["node-2"] == str(wav)
    assert str(wav) in operator["answer"] and str(wav) in operator["report_markdown"]
    assert operator["report"]["files"]["json"] == str(run_dir / "report.json")


def test_for_client_cuts_only_the_named_folders(tmp_path):
    from graph_agent.boundary import for_client

    root = tmp_path / "art"
    value = {
        "a": f"{root}/t1/x.wav and {root}/t10/y.wav",
        "b": [f"in {root}/t1: full", f"{root}/t1"],
        "c": 3,
        "d": "/elsewhere/z.wav",
    }
    assert for_client(value, [root / "t1", root]) == {
        "a": "x.wav and t10/y.wav",
        "b": ["in t1: full", "t1"],
        "c": 3,
        "d": "/elsewhere/z.wav",
    }
    assert for_client(value, []) == value


# --------------------------------------------------------------------------- PNG and CLI


def _pixels_like(image: Any, hex_colour: str, tolerance: float = 0.03) -> int:
    import numpy as np

    target = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return int((np.abs(image[..., :3] - target).max(axis=-1) < tolerance).sum())


def test_png_draws_each_step_in_its_outcome_colour(tmp_path):
    from matplotlib.image import imread

    from graph_agent.report_png import COLOURS, layers, render_png

    report = build_report(_state(tts_after="node-1"))
    assert layers(report["steps"]) == {"node-0": 0, "node-1": 1, "node-2": 2}
    path = render_png(report, tmp_path / "report.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = imread(path)
    assert image.shape[1] > image.shape[0]  # three columns side by side
    for status in ("ok", "failed", "skipped"):
        fill = COLOURS[status][0]
        assert _pixels_like(image, fill) > 2000, f"no {status} box ({fill}) in the PNG"


def test_cli_prints_the_report_path_and_draws_the_png_next_to_it(tmp_path, capsys):
    from graph_agent.cli.common import EXIT_STEP_FAILED
    from graph_agent.cli.run import _print_result

    final = _run_responder(_state(), Context(artifacts_dir=str(tmp_path)), thread_id="cli")
    assert _print_result(final, as_json=False, png=True) == EXIT_STEP_FAILED
    printed = capsys.readouterr().out
    run_dir = tmp_path.resolve() / "cli"
    assert f"Report: {run_dir / 'report.md'}" in printed
    assert f"Diagram: {run_dir / 'report.png'}" in printed
    assert (run_dir / "report.png").stat().st_size > 1000


def test_cli_json_has_answer_outputs_report_and_markdown(tmp_path, capsys):
    from graph_agent.cli.run import _print_result

    final = _run_responder(_state(), Context(artifacts_dir=str(tmp_path)), thread_id="cli")
    _print_result(final, as_json=True)
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"answer", "outputs", "report", "report_markdown"}
    assert printed["report_markdown"] == final["report_markdown"]
    assert "```mermaid" in printed["report_markdown"]
    assert printed["report"]["files"]["markdown"].endswith("report.md")


def _two_pictures_state() -> State:
    """Two image-to-text steps: one a captioning model described, one the OCR back end read."""
    plan = {
        "subtasks": [
            {"id": f"node-{i}", "task": "image-to-text", "args": {"image": name}, "deps": []}
            for i, name in enumerate(("photo.jpg", "sign.png"))
        ]
    }

    def ok(model: str, kind: str, text: str) -> dict[str, Any]:
        result = {"kind": kind, "modality": "text", "text": text, "path": None}
        return {**_attempt(model, 1, 0.5), "status": "ok", "result": result}

    return {
        "request": "describe photo.jpg and read sign.png",
        "inputs": {},
        "plan": plan,
        "results": {
            "node-0": ok("org/tiny-vlm", "caption", "a dog on a beach"),
            "node-1": ok("PaddlePaddle/PP-OCRv4", "text_in_image", "EXIT 12"),
        },
    }


def test_text_read_off_a_picture_is_labelled_so_and_a_caption_stays_a_caption():
    from graph_agent.chat import answer_messages

    state = _two_pictures_state()
    answer = template_answer(state)
    assert "- Caption (node-0, org/tiny-vlm): a dog on a beach" in answer
    assert "- Text in the image (node-1, PaddlePaddle/PP-OCRv4): EXIT 12" in answer
    report = build_report(state)
    assert [s["output_title"] for s in report["steps"]] == ["Caption", "Text in the image"]
    md = render_markdown(report, answer, {"written_by": "template"}, "/a/t1")
    assert "**Output: Caption**" in _section(md, "node-0 · image-to-text")
    assert "**Output: Text in the image**" in _section(md, "node-1 · image-to-text")
    # A chat model writing the answer is told which text was read off the picture.
    human = answer_messages(report)[1][1]
    assert "Step node-0 (image-to-text, model org/tiny-vlm)" in human
    assert "Step node-1 (image-to-text, text in the image, model PaddlePaddle/PP-OCRv4)" in human
