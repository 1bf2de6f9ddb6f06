"""Responder node: the answer, the per-subtask outputs, and the explainable report."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.progress import blocked_steps
from graph_agent.state import State
from graph_agent.tools.results import ToolResult

_LABELS = {
    "automatic-speech-recognition": "Transcript",
    "summarization": "Summary",
    "translation": "Translation",
    "image-classification": "Image label",
    "object-detection": "Objects found",
    "image-to-text": "Caption",
    "visual-question-answering": "Answer",
    "question-answering": "Answer",
    "text-to-speech": "Speech",
    "depth-estimation": "Depth map",
    "text-classification": "Label",
    "zero-shot-classification": "Label",
    "token-classification": "Entities",
}


def _line(step: dict[str, Any], result: dict[str, Any] | None, blocked: bool) -> str:
    title = _LABELS.get(step["task"], step["task"].replace("-", " ").capitalize())
    if blocked:
        return f"- {title} ({step['id']}): skipped, because a step it needs failed."
    if result is None:
        return f"- {title} ({step['id']}): not run."
    if result.get("status") != "ok":
        problems = "; ".join(result.get("problems") or [result.get("error", "failed")])
        return f"- {title} ({step['id']}): failed: {problems}"
    out = result["result"]
    shown = ToolResult.from_dict(out).value
    if out.get("confidence") is not None and out["kind"] == "labels":
        shown = f"{shown} (score {out['confidence']:.2f})"
    return f"- {title} ({step['id']}, {result['model']}): {shown}"


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer, the per-subtask outputs and the report; explain errors instead."""
    ctx = runtime.context or Context()
    if state.get("error"):
        return {
            "answer": f"I could not run this request: {state['error']}",
            "outputs": {},
            "report": {
                "request": state.get("request", ""),
                "error": state["error"],
                "plan": state.get("plan"),
                "decisions": state.get("decisions", []),
            },
        }
    results = state.get("results") or {}
    blocked = set(blocked_steps(state))
    steps = state["plan"]["subtasks"]
    outputs: dict[str, str] = {}
    report_steps = []
    for step in steps:
        result = results.get(step["id"])
        selection = (state.get("selections") or {}).get(step["id"], {})
        entry: dict[str, Any] = {
            "id": step["id"],
            "task": step["task"],
            "args": step["args"],
            "deps": step["deps"],
            "status": "skipped"
            if step["id"] in blocked
            else (result.get("status") if result else "not run"),
            "candidates": [c["id"] for c in selection.get("candidates", [])],
            "reason": selection.get("reason"),
            "verdicts": [
                d
                for d in state.get("decisions", [])
                if d.get("node") == "critic" and d.get("subtask") == step["id"]
            ],
        }
        if result:
            entry.update(
                model=result.get("model"),
                seconds=result.get("seconds"),
                attempts=result.get("attempt"),
            )
            if result.get("status") == "ok":
                out = result["result"]
                outputs[step["id"]] = ToolResult.from_dict(out).value
                entry["output"] = out
            else:
                entry["problems"] = result.get("problems")
        report_steps.append(entry)
    ok = sum(1 for s in report_steps if s["status"] == "ok")
    lines = [f"Done: {ok} of {len(steps)} step(s) succeeded."]
    lines += [_line(s, results.get(s["id"]), s["id"] in blocked) for s in steps]
    timings = {s["id"]: s.get("seconds") for s in report_steps}
    report = {
        "request": state["request"],
        "planner": ctx.planner,
        "plan": state["plan"],
        "steps": report_steps,
        "timings": {
            "per_step_seconds": timings,
            "model_seconds_total": round(sum(t or 0 for t in timings.values()), 3),
        },
        "failures": [s["id"] for s in report_steps if s["status"] not in ("ok",)],
        "decisions": state.get("decisions", []),
    }
    return {"answer": "\n".join(lines), "outputs": outputs, "report": report}
