"""Where a run stands, derived from state alone: which steps are ready, done or blocked.

Nothing here is stored, so it can never disagree with ``results``.
"""

from __future__ import annotations

from collections.abc import Collection
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


def ready_steps(state: State, running: Collection[str] = ()) -> list[dict[str, Any]]:
    """Steps not yet finished nor ``running`` whose dependencies all succeeded."""
    results = state.get("results") or {}
    return [
        step
        for step in (state.get("plan") or {}).get("subtasks", [])
        if step["id"] not in results
        and step["id"] not in running
        and all(_ok(results, d) for d in step["deps"])
    ]


def failed_steps(state: State) -> list[str]:
    """Steps whose final attempt failed (the critic gave up on them), in plan order."""
    results = state.get("results") or {}
    return [
        s["id"]
        for s in (state.get("plan") or {}).get("subtasks", [])
        if s["id"] in results and not _ok(results, s["id"])
    ]


#: In an ``avoid`` list: every model for the task failed, so a re-plan should route around it.
ALL_MODELS = "*"


def drop_avoided(selection: dict[str, Any], avoid: list[str] | None) -> dict[str, Any]:
    """``selection`` (``Selection.to_dict()``) without the models listed in ``avoid``.

    After a re-plan the selector ranks the same models again; those that already failed the
    task in this run are dropped, so the executor starts with a model not yet tried. The
    reason says which were dropped and why.
    """
    skip = set(avoid or ()) - {ALL_MODELS}
    candidates = list(selection.get("candidates") or [])
    kept = [c for c in candidates if c["id"] not in skip]
    if len(kept) == len(candidates):
        return selection
    dropped = ", ".join(c["id"] for c in candidates if c["id"] in skip)
    if kept:
        reason = (
            f"{kept[0]['id']}, the best model not yet tried ({dropped} failed this task earlier "
            f"in the run): {kept[0].get('why', '')}"
        )
    else:
        reason = f"Every model for {selection.get('task')} failed earlier in the run ({dropped})."
    return {**selection, "candidates": kept, "reason": reason}
