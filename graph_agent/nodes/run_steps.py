"""Run the plan: every step starts as soon as its own inputs are ready, and is checked as
soon as its own attempt ends.

Why one node and not a fan-out of ``Send``s: a superstep ends only when every branch in it
has finished, so with ``Send`` a fast step's check, and the step that needs its result,
waited for the slowest step running beside it (in the demo the image label waited 26 s for
the transcript). Here each attempt is a LangGraph task (``run_step``: run, then judge) and
the node starts the next attempt (a retry, or a step whose inputs just arrived) the moment
one ends.

Durability is LangGraph's: a task's return is written to the checkpointer when the task
ends, so a run killed mid-node and resumed replays the finished attempts from the
checkpoint instead of running them again. The node is deterministic given those returns,
and each return names its own step and attempt, so even when attempts finished in another
order than the resumed node asks for them again, every result lands on its own step.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any

from langgraph.config import get_config
from langgraph.func import task
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from graph_agent.boundary import Reader, reader_for, run_context
from graph_agent.context import Context
from graph_agent.events import emit_verdicts
from graph_agent.nodes.critic import Judgement, finish, judge
from graph_agent.nodes.executor import run_attempt, step_view
from graph_agent.planning.plan import refs_in
from graph_agent.progress import ready_steps
from graph_agent.records import Attempt, Decision, Verdict
from graph_agent.state import State


class StepOutcome(TypedDict):
    """What one ``run_step`` task returns (and the checkpointer keeps)."""

    id: str
    attempt: Attempt
    judgement: Judgement


@task(name="run_step")
def run_step(
    step: dict[str, Any],
    view: dict[str, Any],
    seen: dict[str, Any],
    ctx: Context,
    reader: Reader,
    thread: str,
    replans: int,
) -> StepOutcome:
    """One attempt of ``step`` and the critic's verdict on it, as one checkpointed unit.

    The verdict is made here, not by the node, so a resumed run replays it (an LLM critic
    is not asked twice) and its event is sent once, when it is made.
    """
    attempt = run_attempt(step, view, ctx, reader, thread)
    verdict = judge(ctx, seen, step, attempt, view["selection"]["candidates"], replans)
    emit_verdicts([verdict["decision"]])
    return {"id": step["id"], "attempt": attempt, "judgement": verdict}


class _Run:
    """The node's running record: what finished, what was rejected, what is in flight."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.order = [s["id"] for s in state["plan"]["subtasks"]]
        self.results: dict[str, Attempt] = dict(state.get("results") or {})
        self.rejections: dict[str, int] = dict(state.get("rejections") or {})
        self.avoid: dict[str, list[str]] = dict(state.get("avoid") or {})
        # What this node adds: the update it returns.
        self.new_results: dict[str, Attempt] = {}
        self.new_rejections: dict[str, int] = {}
        self.new_avoid: dict[str, list[str]] = {}
        self.decisions: list[Decision] = []
        self.verdicts: dict[str, list[Verdict]] = {}
        self.running: dict[Future, str] = {}

    def now(self) -> dict[str, Any]:
        return {**self.state, "results": self.results, "rejections": self.rejections}

    def ready(self) -> list[dict[str, Any]]:
        return ready_steps(self.now(), running=set(self.running.values()))

    def record(self, outcome: StepOutcome) -> None:
        """Apply one attempt's verdict; a return seen twice (a replay) is applied once."""
        sid, verdict = outcome["id"], outcome["judgement"]
        expected = self.rejections.get(sid, 0) + 1
        if sid in self.results or outcome["attempt"].get("attempt") != expected:
            return
        self.decisions.append(verdict["decision"])
        self.verdicts.setdefault(sid, []).append(verdict["decision"])
        if verdict["outcome"] == "retry":
            self.rejections[sid] = self.new_rejections[sid] = expected
            return
        assert verdict["result"] is not None  # accepted or failed: the step's final attempt
        self.results[sid] = self.new_results[sid] = verdict["result"]
        if verdict["avoid"]:
            name = next(s["task"] for s in self.state["plan"]["subtasks"] if s["id"] == sid)
            avoided = sorted(set(self.avoid.get(name) or ()) | set(verdict["avoid"]))
            self.avoid[name] = self.new_avoid[name] = avoided

    def update(self) -> dict[str, Any]:
        update: dict[str, Any] = {
            "results": self.new_results,
            "rejections": self.new_rejections,
            "verdicts": self.verdicts,
            "decisions": self.decisions,
        }
        if self.new_avoid:
            update["avoid"] = self.new_avoid
        return update


def _seen(state: Mapping[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """What the critic may read about ``step``: the request, the input names, and the
    results of the steps it reads (for the LLM critic)."""
    results = state.get("results") or {}
    return {
        "request": state.get("request", ""),
        "inputs": state.get("inputs") or {},
        "results": {r: results[r] for r in refs_in(step["args"]) if r in results},
    }


def run_steps(state: State, runtime: Runtime[Context]) -> Command:
    """Run every step of the plan, each as soon as its inputs are ready, each attempt
    judged as soon as it ends; then go to the re-planner or the responder (``finish``)."""
    ctx = run_context(runtime)
    thread = str(get_config().get("configurable", {}).get("thread_id", "run"))
    reader = reader_for(runtime, ctx, thread)
    run = _Run(state)
    replans = state.get("replans") or 0

    def start_ready() -> None:
        for step in run.ready():
            now = run.now()
            view, seen = step_view(now, step), _seen(now, step)
            future = run_step(step, view, seen, ctx, reader, thread, replans)
            run.running[future] = step["id"]

    start_ready()
    while run.running:
        done, _ = wait(run.running, return_when=FIRST_COMPLETED)
        # In plan order, so a resumed run, whose replayed attempts are all done at once,
        # starts the next ones in one order every time.
        for future in sorted(done, key=lambda f: run.order.index(run.running[f])):
            del run.running[future]
            run.record(future.result())
        start_ready()
    after = {**run.now(), "avoid": run.avoid}
    return finish(ctx, after, run.update())
