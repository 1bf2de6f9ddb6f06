"""Approval node: when ``approve_plan`` is on, pause with the plan until a human answers.

The run stops at an ``interrupt()`` whose value is the question (see ``_question``). Resume it
with ``Command(resume=answer)`` (``langgraph_sdk``: ``command={"resume": answer}``), where
``answer`` is one of:

- **approve**: ``True``, ``"y"``/``"yes"`` (any case), or ``{"approved": true}``;
- **edit**: ``{"plan": plan}`` or ``{"edit": plan}``, where ``plan`` is ``{"subtasks": [...]}``
  (the shape the question shows) or the list of subtasks itself. The edit is validated exactly
  like a planner's plan (``graph_agent.planning.plan.validate``, which may also repair it); a
  valid edit replaces the plan and runs, recorded as the decision ``"edited"``;
- **reject**: anything else (``False``, ``"no"``, ``{"approved": false}``, ...). Nothing runs;
  the responder says the plan was not approved. (Not ``None``: LangGraph reads
  ``Command(resume=None)`` as "no resume value" and the run does not continue.)

An **invalid edit asks again** rather than ending the run: the next interrupt carries the same
plan plus ``problems`` (every reason, each naming its step) and the ``rejected_edit``, so the
human can fix the edit, approve the original plan or reject. A typo in a hand-edited plan
should not throw away the run; each rejected edit is still recorded as a decision.

A re-plan (the critic gave up on some steps) passes through this node again, so the human
approves the revised plan too (the question then says ``"replan": n``). An edit at that point
keeps a finished step's result only while the step and everything it depends on is unchanged;
the others run again.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from graph_agent.boundary import run_context
from graph_agent.context import Context
from graph_agent.events import emit, plan_event
from graph_agent.planning.plan import Plan, PlanError, validate
from graph_agent.state import State

#: How to answer, shown in every question so a client needs no other documentation.
HOW_TO_ANSWER = (
    "Resume with true (or 'yes', or {'approved': true}) to run this plan; with "
    "{'plan': {'subtasks': [...]}} to run an edited plan instead; with anything else to stop."
)


def _question(
    plan: dict[str, Any], problems: list[str] | None, edit: Any, replans: int
) -> dict[str, Any]:
    question: dict[str, Any] = {"question": "Run this plan?", "plan": plan, "how": HOW_TO_ANSWER}
    if replans:  # the critic sent the run back: this is a revision of a plan that ran
        question |= {"question": "Run this revised plan?", "replan": replans}
    if problems:
        question |= {
            "question": "The edited plan is not valid. Run this plan, or send a corrected edit?",
            "problems": problems,
            "rejected_edit": edit,
        }
    return question


def is_approval(answer: Any) -> bool:
    """Whether a resume value approves the plan as it stands."""
    if answer is True:
        return True
    if isinstance(answer, str):
        return answer.strip().lower() in {"y", "yes"}
    if isinstance(answer, dict):
        return answer.get("approved") is True
    return False


def edit_of(answer: Any) -> tuple[bool, Any]:
    """``(True, plan)`` when a resume value carries an edited plan, else ``(False, None)``."""
    if isinstance(answer, dict):
        for key in ("plan", "edit"):
            if key in answer:
                return True, answer[key]
    return False, None


def check_edit(edit: Any, input_types: dict[str, Any]) -> Plan:
    """Validate a human's plan as the planner's would be; raise ``PlanError`` listing problems.

    Raises ``PlanError`` for a malformed document as well, so callers handle one error type.
    """
    if isinstance(edit, list):
        edit = {"subtasks": edit}
    if not isinstance(edit, dict):
        raise PlanError(
            [f"the edited plan must be an object with 'subtasks', not {type(edit).__name__}"]
        )
    try:
        # The validator's own repair notes start empty: they describe this edit, not the old plan.
        parsed = Plan.model_validate({**edit, "repairs": []})
    except ValidationError as exc:
        raise PlanError(
            [
                f"{'.'.join(map(str, e['loc'])) or 'plan'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
        ) from None
    return validate(parsed, input_types)


def stale_results(
    old_plan: dict[str, Any], new_plan: dict[str, Any], results: dict[str, Any]
) -> dict[str, None]:
    """Results an edit invalidates, as deletions for the ``results`` reducer.

    Before the first run there are none; after a re-plan, ``results`` keeps finished steps by
    id, and a human's edit may change what an id means. A result stays only while its step is
    unchanged and everything it depends on stays too.
    """
    old = {s["id"]: s for s in old_plan.get("subtasks") or []}
    stale: set[str] = set(results) - {s["id"] for s in new_plan["subtasks"]}
    for step in new_plan["subtasks"]:  # plan order: a step's deps come before it
        sid = step["id"]
        if old.get(sid) != step or any(d in stale for d in step.get("deps") or []):
            stale.add(sid)
    return {sid: None for sid in sorted(stale) if sid in results}


def approve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask a human to approve, edit or reject the plan before anything runs."""
    ctx = run_context(runtime)
    if not ctx.approve_plan or state.get("error"):
        return {}
    plan = state["plan"]
    decisions: list[dict[str, Any]] = []
    problems: list[str] | None = None
    edit: Any = None
    # On resume this node runs again from the top and each interrupt() returns its stored
    # answer in order, so the loop replays earlier rejected edits deterministically.
    while True:
        answer = interrupt(_question(plan, problems, edit, state.get("replans") or 0))
        is_edit, edit = edit_of(answer)
        if not is_edit:
            break
        try:
            edited = check_edit(edit, state.get("input_types") or {})
        except PlanError as exc:
            problems = exc.problems
            decisions.append(
                {"node": "approval", "decision": "edit rejected", "problems": problems}
            )
            continue
        new_plan = edited.model_dump()
        decisions.append(
            {
                "node": "approval",
                "decision": "edited",
                "steps": len(edited.subtasks),
                "repairs": edited.repairs,
            }
        )
        emit("plan_approval", decision="edited")
        emit("plan_ready", **plan_event(new_plan, "edit"))
        update: dict[str, Any] = {"plan": new_plan, "decisions": decisions}
        stale = stale_results(plan, new_plan, state.get("results") or {})
        if stale:
            update["results"] = stale
            decisions[-1]["rerun"] = sorted(stale)
        return update
    if is_approval(answer):
        emit("plan_approval", decision="approved")
        return {"decisions": [*decisions, {"node": "approval", "decision": "approved"}]}
    emit("plan_approval", decision="rejected")
    return {
        "error": "the revised plan was not approved, so the failed steps were not run again."
        if state.get("replans")
        else "the plan was not approved, so nothing was run.",
        "decisions": [
            *decisions,
            {"node": "approval", "decision": "rejected", "answer": str(answer)},
        ],
    }
