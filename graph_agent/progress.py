"""Where a run stands, derived from state alone: which steps are ready, done or blocked.

Nothing here is stored, so it can never disagree with ``results``.
"""

from __future__ import annotations

from typing import Any

from graph_agent.state import State


def _ok(results: dict[str, Any], step_id: str) -> bool:
    return results.get(step_id, {}).get("status") == "ok"


def blocked_steps(state: State) -> list[str]:
    """Steps that can never run because a step they need failed or was blocked."""
    results = state.get("results") or {}
    blocked: set[str] = set()
    changed = True
    steps = (state.get("plan") or {}).get("subtasks", [])
    while changed:
        changed = False
        for step in steps:
            if step["id"] in blocked or step["id"] in results:
                continue
            if any(d in blocked or (d in results and not _ok(results, d)) for d in step["deps"]):
                blocked.add(step["id"])
                changed = True
    return [s["id"] for s in steps if s["id"] in blocked]


def ready_steps(state: State) -> list[dict[str, Any]]:
    """Steps not yet finished whose dependencies all succeeded."""
    results = state.get("results") or {}
    pending = state.get("pending") or {}
    return [
        step
        for step in (state.get("plan") or {}).get("subtasks", [])
        if step["id"] not in results
        and step["id"] not in pending
        and all(_ok(results, d) for d in step["deps"])
    ]
