"""Multi-turn: a later request on the same thread can work on what an earlier one produced.

"Transcribe meeting.wav and summarize it", then, on the same thread, "now translate that
summary into German". The checkpointer keeps the first run's plan and results; when the next
request arrives, the planner offers each earlier output as a named input, named for what it
is ("summary", "transcript", "caption", "image"...). The planners already bind inputs by
name ("that summary") and fall back to the declared inputs of the right kind ("translate
it"), so no new planning logic is needed: the most recent output is listed first, which is
what "it" most often means.

Text outputs are offered as their text; images and audio as the artifact paths this project
wrote (under the artifact directory), never as anything the user did not give or we did not
make. A user's own input with the same name wins.
"""

from __future__ import annotations

from typing import Any

from graph_agent.tools.results import ToolResult
from graph_agent.tools.tasks import TASKS


def earlier_outputs(state: dict[str, Any]) -> dict[str, str]:
    """Name -> value for every successful output of the thread's previous run, newest first.

    Empty on a fresh thread. Call it before the planner resets the run's keys.
    """
    results = state.get("results") or {}
    steps = (state.get("plan") or {}).get("subtasks") or []
    offered: dict[str, str] = {}
    for step in reversed(steps):
        done = results.get(step["id"]) or {}
        if done.get("status") != "ok" or not done.get("result"):
            continue
        value = ToolResult.from_dict(done["result"]).value
        if not value:
            continue
        spec = TASKS.get(step["task"])
        base = spec.result_name if spec else "result"  # "summary", "transcript", ...
        name, n = base, 2
        while name in offered:
            name, n = f"{base}-{n}", n + 1
        offered[name] = value
    return offered


def carried_inputs(state: dict[str, Any]) -> dict[str, str]:
    """Earlier outputs to offer a new request, minus names the user's own inputs take.

    Kept apart from ``inputs`` (the state's ``earlier_inputs``), so that a third request
    is offered the second run's outputs, not the first's again.
    """
    own = state.get("inputs") or {}
    return {k: v for k, v in earlier_outputs(state).items() if k not in own}
