"""The critic: judge each finished attempt (accept it, retry with the next model, give up),
and, once the run can do no more, send it back to the planner or on to the responder.

``judge`` runs right after each attempt, inside ``nodes.run_steps``; ``finish`` routes the
run with ``Command(goto=...)`` when nothing is left to run.

Every verdict is recorded with every check's outcome and reason (``graph_agent.verdicts``), so
the report can say why each output was trusted. When the run can make no more progress and
some steps failed for good, the critic asks for a re-plan (``nodes.planner.replan``), at most
``Context.max_replans`` times per run and only when the revision has something new to try;
otherwise it records why it did not and the run ends with the failure in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langgraph.types import Command
from typing_extensions import TypedDict

from graph_agent.chat import make_chat_model
from graph_agent.context import Context
from graph_agent.events import emit
from graph_agent.nodes.planner import revise_plan
from graph_agent.planning.plan import EMBEDDED_REF, ref_of
from graph_agent.progress import ALL_MODELS, failed_steps
from graph_agent.records import Attempt, Decision, Verdict
from graph_agent.tools.registry import REGISTRY
from graph_agent.tools.spec import TaskTool
from graph_agent.verdicts import NOT_JUDGED, REJECTED, Check, checks, llm_check


def _upstream_text(ref: str, state: Mapping[str, Any]) -> str:
    result = (state.get("results") or {}).get(ref) or {}
    return str((result.get("result") or {}).get("text") or "")


def _shown_inputs(step: dict[str, Any], state: Mapping[str, Any]) -> dict[str, str]:
    """The step's arguments as the LLM critic should read them: references become the text
    of the step they name; an input is named, not read (the critic reads no files)."""
    inputs = state.get("inputs") or {}
    shown: dict[str, str] = {}
    for role, value in step.get("args", {}).items():
        ref = ref_of(value)
        if ref is not None:
            shown[role] = _upstream_text(ref, state)
        elif isinstance(value, str) and value in inputs:
            shown[role] = f"(the user's input {value!r})"
        elif isinstance(value, str):
            shown[role] = EMBEDDED_REF.sub(lambda m: _upstream_text(m.group(1), state), value)
        else:
            shown[role] = str(value)
    return shown


def _llm_verdict(
    ctx: Context,
    state: Mapping[str, Any],
    step: dict[str, Any],
    tool: TaskTool,
    attempt: Attempt,
) -> Check | None:
    """The LLM critic's verdict on a text-to-text step, or None when it does not apply.

    It applies when ``llm_critic`` is on and ``planner`` names a chat model, and only to
    steps whose inputs are all text: the model can judge only what it can read.
    """
    if not ctx.llm_critic or ctx.planner == "offline":
        return None
    if tool.output != "text" or any(m != "text" for m in tool.input_modalities):
        return None
    try:
        model = make_chat_model(ctx.planner)  # cached per spec: the planner's own model
    except Exception as exc:  # a bad spec or a missing package must not fail the run
        return Check("llm critic", NOT_JUDGED, f"no chat model for the LLM critic: {exc}")
    text = str((attempt.get("result") or {}).get("text") or "")
    return llm_check(model, state.get("request", ""), step, _shown_inputs(step, state), text)


class Judgement(TypedDict):
    """The critic's verdict on one attempt, and what it changes in the run's record."""

    #: "accepted", "retry" (run the next candidate) or "failed" (the step gives up).
    outcome: Literal["accepted", "retry", "failed"]
    decision: Verdict
    #: The attempt as the step's result (accepted, or failed with its problems); None on retry.
    result: Attempt | None
    #: Models that failed the task for good (``ALL_MODELS`` once none is left), so a re-plan
    #: avoids them; empty unless the step failed.
    avoid: list[str]


def judge(
    ctx: Context,
    state: Mapping[str, Any],
    step: dict[str, Any],
    attempt: Attempt,
    candidates: list[dict[str, Any]],
    replans: int = 0,
) -> Judgement:
    """Judge one finished attempt of ``step``: accept it, retry with the next candidate until
    ``max_retries`` or the candidates run out, or give up.

    ``state`` needs ``request``, ``inputs`` and the ``results`` of the steps it reads (the
    LLM critic shows the model what the step was given). The verdict records every check.
    """
    tool = REGISTRY.get(step["task"])
    if tool is None:  # a planned task this machine has no tool for: a clear failure
        why = attempt.get("error") or f"graph-agent has no tool for {step['task']}"
        found = [Check("tool", REJECTED, why)]
    else:
        found = checks(tool, attempt, step.get("args"))
        if not any(c.rejected for c in found):
            llm = _llm_verdict(ctx, state, step, tool, attempt)
            found += [llm] if llm is not None else []
    problems = [c.reason for c in found if c.rejected]
    verdict: Verdict = {
        "node": "critic",
        "subtask": step["id"],
        "task": step["task"],
        "model": attempt["model"],
        "attempt": attempt["attempt"],
        "seconds": attempt.get("seconds"),  # the report times every attempt, not just the last
        "checks": [c.to_dict() for c in found],
    }
    if replans:
        verdict["replan"] = replans  # which plan of the run this attempt belongs to
    if not problems:
        decision: Verdict = {**verdict, "decision": "accepted"}
        return {"outcome": "accepted", "decision": decision, "result": attempt, "avoid": []}
    tried = attempt["attempt"]
    if tried <= ctx.max_retries and tried < len(candidates):
        decision = {**verdict, "decision": "retry with next candidate", "problems": problems}
        return {"outcome": "retry", "decision": decision, "result": None, "avoid": []}
    why = "no candidates left" if tried >= len(candidates) else "retry budget spent"
    decision = {**verdict, "decision": f"failed ({why})", "problems": problems}
    # Remember what failed, so a re-plan tries other models or another route.
    failed_models = {c["id"] for c in candidates[:tried]}
    if tried >= len(candidates):
        failed_models.add(ALL_MODELS)
    return {
        "outcome": "failed",
        "decision": decision,
        "result": {**attempt, "status": "failed", "problems": problems},
        "avoid": sorted(failed_models),
    }


def finish(
    ctx: Context, after: Mapping[str, Any], update: dict[str, Any]
) -> Command[Literal["replan", "respond"]]:
    """Where the run goes once no step is running or ready: the re-planner, when some steps
    failed for good and a revision has something new to try, else the responder.

    ``after`` is the state with this round's results in; ``update`` (its ``results`` and
    ``decisions``) gains the critic's last word on the failed steps.
    """
    if failed := failed_steps(after):
        update |= _replan_or_stop(ctx, after, failed, update["results"], update["decisions"])
        if "revision" in update:
            return Command(update=update, goto="replan")
    return Command(update=update, goto="respond")


def _replan_or_stop(
    ctx: Context,
    after: Mapping[str, Any],
    failed: list[str],
    results: dict[str, Attempt],
    decisions: list[Decision],
) -> dict[str, Any]:
    """The run is stuck on ``failed`` steps: ask for a re-plan, or record why there is none.

    Re-plans only when the budget allows and the revision would try something new, so a
    re-plan can never repeat itself. Without one, every failed step's problems end with why,
    which the answer and the report show. Appends to ``decisions`` and ``results`` in place.
    """
    done = after.get("replans") or 0
    revision = revise_plan(
        after["plan"],
        after["results"],
        after.get("selections") or {},
        after["avoid"],
        after.get("input_types") or {},
    )
    steps = {s["id"]: s for s in after["plan"]["subtasks"]}
    failures = "; ".join(
        f"{sid} ({steps[sid]['task']}) failed: "
        + "; ".join(map(str, after["results"][sid].get("problems") or ["no result"]))
        for sid in failed
    ).rstrip(".")  # a sentence follows; problems may end with their own full stop
    record = {"node": "critic", "failed": failed, "replans": done, "max_replans": ctx.max_replans}
    if revision.plan is not None and done < ctx.max_replans:
        reason = f"{failures}. Re-plan {done + 1} of at most {ctx.max_replans}: "
        reason += revision.describe()
        decisions.append({**record, "decision": "replan", "reason": reason})
        emit("replan", reason=reason)
        # The re-planner applies this revision; it does not work it out a second time.
        return {"replan_reason": reason, "revision": revision.to_dict()}
    if revision.plan is None:
        why = f"no other route ({revision.describe()})"
    elif ctx.max_replans <= 0:
        why = "re-planning is off (max_replans=0)"
    else:
        why = f"the re-plan budget is spent ({done} of {ctx.max_replans} used)"
    decisions.append({**record, "decision": "not re-planned", "reason": f"{failures}. {why}"})
    for sid in failed:
        result = after["results"][sid]
        results[sid] = {
            **result,
            "problems": [*(result.get("problems") or []), f"not re-planned: {why}"],
        }
    return {"results": results}
