"""Planning for evaluation: one request in, one TaskBench-format plan out, nothing run.

``graph-agent plan --batch`` and ``evals/eval_planner.py`` both call :func:`plan_for_taskbench`,
so the scores the project reports are the scores an outside tool gets from the CLI.

Batch requests (TaskBench's among them) name files such as 'example.jpg' that do not exist
on this machine; planning needs only their kinds, so the files are never opened. A plan the
validator rejects is still returned, with the validator's ``problems``: an evaluator scores
what the planner understood, and the problems say why a run would refuse that plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_agent.file_names import file_kind, files_named_in
from graph_agent.planning.formats import to_taskbench
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import PlanError, validate


def inputs_named_in(request: str) -> dict[str, str]:
    """Input name -> kind for the file names a request mentions, judged by suffix alone."""
    found: dict[str, str] = {}
    for name in files_named_in(request):
        kind = file_kind(name)
        if kind in ("text", "image", "audio"):
            found.setdefault(name, kind)
    return found


def plan_for_taskbench(request: str, models_dir: str | Path | None = None) -> dict[str, Any]:
    """``{"task_nodes", "task_links", "task_steps"}``, plus ``problems`` if it is not valid.

    Raises ``RequestError`` when nothing can be planned (an empty request, no known task).
    """
    types = inputs_named_in(request)
    plan = plan_offline(request, types, models_dir)
    try:
        return to_taskbench(validate(plan, types))
    except PlanError as exc:
        return {**to_taskbench(plan), "problems": exc.problems}
