"""Planner node: request + inputs -> a validated plan, or a clear error for the responder."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.errors import RequestError
from graph_agent.inputs import input_types
from graph_agent.planning.constraints import constraints_from_request, with_default_metric
from graph_agent.planning.llm import LLMPlannerError, make_chat_model, plan_with_llm_result
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import PlanError, validate
from graph_agent.state import RESET, State

#: Keys one run accumulates; a new request on a reused thread must not inherit them.
_PER_RUN = ("selections", "pending", "results", "rejections")


def _fresh_run(decision: dict[str, Any]) -> dict[str, Any]:
    """The update that starts a run clean, with its first decision."""
    return {
        "error": "",
        "plan": {},
        "input_types": {},
        "decisions": [RESET, decision],
        **{key: {RESET: True} for key in _PER_RUN},
    }


def plan(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Plan the request; a bad request becomes ``error`` for the responder to explain."""
    ctx = runtime.context or Context()
    started = time.perf_counter()
    try:
        types = input_types(dict(state.get("inputs") or {}))
        llm: dict[str, Any] = {}
        if ctx.planner == "offline":
            plan_ = validate(plan_offline(state.get("request", ""), types, ctx.models_dir), types)
        else:
            # make_chat_model caches per spec: the model loads once per process, not per run.
            result = plan_with_llm_result(
                state.get("request", ""),
                types,
                make_chat_model(ctx.planner),
                planner=ctx.planner,
            )
            plan_ = result.plan
            llm = {
                "planned_by": result.fallback or ctx.planner,
                "llm_notes": result.notes,
                "llm_attempts": result.attempts,
            }
            if result.fallback:
                llm |= {"fallback": result.fallback, "why": result.why}
    except (RequestError, PlanError, LLMPlannerError) as exc:
        decision = {"node": "planner", "decision": "error", "detail": str(exc)}
        if ctx.planner != "offline":
            decision["planner"] = ctx.planner
        update = _fresh_run(decision)
        return {**update, "error": str(exc)}
    stated = constraints_from_request(state.get("request", ""))
    if "best_on" in stated:
        stated["best_on"] = with_default_metric(stated["best_on"], [s.task for s in plan_.subtasks])
    update = _fresh_run(
        {
            "node": "planner",
            "decision": "planned",
            "planner": ctx.planner,
            # With an LLM planner: who actually made the plan (it or the offline fallback), why.
            **llm,
            "steps": len(plan_.subtasks),
            "constraints_from_request": stated,
            "seconds": round(time.perf_counter() - started, 4),
        }
    )
    # Constraints passed explicitly win over those read from the request's words.
    constraints = {**stated, **(state.get("constraints") or {})}
    return {**update, "input_types": types, "plan": plan_.model_dump(), "constraints": constraints}
