"""Approval node: when ``approve_plan`` is on, pause with the plan until a human answers."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph_agent.context import Context
from graph_agent.state import State


def approve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Resume with ``Command(resume=True)`` to run the plan, anything falsy to stop."""
    ctx = runtime.context or Context()
    if not ctx.approve_plan or state.get("error"):
        return {}
    answer = interrupt({"question": "Run this plan?", "plan": state["plan"]})
    approved = (
        answer is True
        or (isinstance(answer, str) and answer.lower() in {"y", "yes"})
        or (isinstance(answer, dict) and bool(answer.get("approved")))
    )
    if approved:
        return {"decisions": [{"node": "approval", "decision": "approved"}]}
    return {
        "error": "the plan was not approved, so nothing was run.",
        "decisions": [{"node": "approval", "decision": "rejected", "answer": str(answer)}],
    }
