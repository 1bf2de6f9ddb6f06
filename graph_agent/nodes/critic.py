"""Critic node: judge each finished attempt; accept it, retry with the next model, give up,
or send the run back to the planner.

Every verdict is recorded with every check's outcome and reason (``graph_agent.verdicts``), so
the report can say why each output was trusted. When the run can make no more progress and
some steps failed for good, the critic asks for a re-plan (``nodes.planner.replan``), at most
``Context.max_replans`` times per run and only when the revision has something new to try;
otherwise it records why it did not and the run ends with the failure in the report.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from graph_agent.boundary import run_context
from graph_agent.context import Context
from graph_agent.events import emit, emit_verdicts
from graph_agent.nodes.executor import dispatch
from graph_agent.nodes.planner import revise_plan
from graph_agent.planning.llm import make_chat_model
from graph_agent.planning.plan import EMBEDDED_REF, ref_of
from graph_agent.progress import ALL_MODELS, failed_steps, ready_steps
from graph_agent.records import Attempt, Decision
from graph_agent.state import State, merge
from graph_agent.tools.registry import REGISTRY
from graph_agent.tools.spec import TaskTool
from graph_agent.verdicts import NOT_JUDGED, REJECTED, Check, checks, llm_check


def _upstream_text(ref: str, state: State) -> str:
    result = (state.get("results") or {}).get(ref) or {}
    return str((result.get("result") or {}).get("text") or "")


def _shown_inputs(step: dict[str, Any], state: State) -> dict[str, str]:
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
    ctx: Context, state: State, step: dict[str, Any], tool: TaskTool, attempt: dict[str, Any]
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


def critique(state: State, runtime: Runtime[Context]) -> Command:
    """Judge every pending attempt; a rejected one goes back to ``dispatch`` with the next
    candidate until ``max_retries`` or the candidates run out. Then, if the run is stuck on
    failed steps, hand the revised plan to the re-planner or record why there is none.

    Routes with ``Command(goto=...)``: the steps that are ready now (a retry, or steps
    whose inputs just arrived), the re-planner, or the responder when nothing is left."""
    ctx = run_context(runtime)
    steps = {s["id"]: s for s in state["plan"]["subtasks"]}
    replans = state.get("replans") or 0
    results: dict[str, Attempt] = {}
    rejections: dict[str, int] = {}
    cleared: dict[str, None] = {}
    decisions: list[Decision] = []
    avoid: dict[str, list[str]] = {}
    for step_id, attempt in (state.get("pending") or {}).items():
        step = steps[step_id]
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
        cleared[step_id] = None
        verdict = {
            "node": "critic",
            "subtask": step_id,
            "task": step["task"],
            "model": attempt["model"],
            "attempt": attempt["attempt"],
            "seconds": attempt.get("seconds"),  # the report times every attempt, not just the last
            "checks": [c.to_dict() for c in found],
        }
        if replans:
            verdict["replan"] = replans  # which plan of the run this attempt belongs to
        if not problems:
            results[step_id] = attempt
            decisions.append({**verdict, "decision": "accepted"})
            continue
        tried = attempt["attempt"]
        candidates = state["selections"][step_id]["candidates"]
        n_candidates = len(candidates)
        if tried <= ctx.max_retries and tried < n_candidates:
            rejections[step_id] = tried
            decisions.append(
                {**verdict, "decision": "retry with next candidate", "problems": problems}
            )
        else:
            results[step_id] = {**attempt, "status": "failed", "problems": problems}
            why = "no candidates left" if tried >= n_candidates else "retry budget spent"
            decisions.append({**verdict, "decision": f"failed ({why})", "problems": problems})
            # Remember what failed, so a re-plan tries other models or another route.
            task = step["task"]
            failed_models = {c["id"] for c in candidates[:tried]}
            if tried >= n_candidates:
                failed_models.add(ALL_MODELS)
            known = avoid.get(task) or (state.get("avoid") or {}).get(task) or []
            avoid[task] = sorted(set(known) | failed_models)
    emit_verdicts(decisions)
    update: dict[str, Any] = {
        "pending": cleared,
        "results": results,
        "rejections": rejections,
        "decisions": decisions,
    }
    if avoid:
        update["avoid"] = avoid
    after = {
        **state,
        "pending": {},
        "results": merge(state.get("results"), results),
        "rejections": merge(state.get("rejections"), rejections),
        "avoid": merge(state.get("avoid"), avoid),
    }
    if not ready_steps(after) and (failed := failed_steps(after)):
        update |= _replan_or_stop(ctx, after, failed, results, decisions)
        if "revision" in update:
            return Command(update=update, goto="replan")
    return Command(update=update, goto=dispatch(after))


def _replan_or_stop(
    ctx: Context,
    after: dict[str, Any],
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
