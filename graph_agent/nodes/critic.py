"""Critic node: judge each finished attempt; accept it, retry with the next model, or give up.

Every verdict is recorded, so the report can say why each output was trusted.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.state import State
from graph_agent.tools.registry import REGISTRY
from graph_agent.verdicts import judge


def critique(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Judge every pending attempt; a rejected one goes back to ``dispatch`` with the next
    candidate until ``max_retries`` or the candidates run out."""
    ctx = runtime.context or Context()
    steps = {s["id"]: s for s in state["plan"]["subtasks"]}
    results, rejections, cleared, decisions = {}, {}, {}, []
    for step_id, attempt in (state.get("pending") or {}).items():
        step = steps[step_id]
        tool = REGISTRY.get(step["task"])
        if tool is None:  # a planned task this machine has no tool for: a clear failure
            problems = [attempt.get("error") or f"graph-agent has no tool for {step['task']}"]
        else:
            problems = judge(tool, attempt)
        cleared[step_id] = None
        verdict = {
            "node": "critic",
            "subtask": step_id,
            "model": attempt["model"],
            "attempt": attempt["attempt"],
        }
        if not problems:
            results[step_id] = attempt
            decisions.append({**verdict, "decision": "accepted"})
            continue
        tried = attempt["attempt"]
        n_candidates = len(state["selections"][step_id]["candidates"])
        if tried <= ctx.max_retries and tried < n_candidates:
            rejections[step_id] = tried
            decisions.append(
                {**verdict, "decision": "retry with next candidate", "problems": problems}
            )
        else:
            results[step_id] = {**attempt, "status": "failed", "problems": problems}
            why = "no candidates left" if tried >= n_candidates else "retry budget spent"
            decisions.append({**verdict, "decision": f"failed ({why})", "problems": problems})
    return {
        "pending": cleared,
        "results": results,
        "rejections": rejections,
        "decisions": decisions,
    }
