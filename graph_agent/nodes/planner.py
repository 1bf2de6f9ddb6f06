"""Planner node: request + inputs -> a validated plan, or a clear error for the responder."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.errors import RequestError
from graph_agent.inputs import input_types
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import PlanError, validate
from graph_agent.state import State


def plan(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context or Context()
    started = time.perf_counter()
    try:
        types = input_types(dict(state.get("inputs") or {}))
        if ctx.planner != "offline":
            raise RequestError(
                f"Planner {ctx.planner!r} is not available yet; use planner='offline'."
            )
        plan_ = validate(plan_offline(state.get("request", ""), types), types)
    except (RequestError, PlanError) as exc:
        return {
            "error": str(exc),
            "input_types": {},
            "decisions": [{"node": "planner", "decision": "error", "detail": str(exc)}],
        }
    return {
        "input_types": types,
        "plan": plan_.model_dump(),
        "decisions": [
            {
                "node": "planner",
                "decision": "planned",
                "planner": ctx.planner,
                "steps": len(plan_.subtasks),
                "seconds": round(time.perf_counter() - started, 4),
            }
        ],
    }
