"""Parallel overlap: do independent subtasks really run at the same time in the compiled graph,
and does a step's dependant start as soon as that step is done?

    python -m graph_agent.evals.bench_parallel [--seconds 1.0] [--runs 3] [--json]

``run_steps`` starts each step as its own task; if something serialised them (a lock, a
blocking node, the timeout thread) a two-step request would take twice as long as it
should. And if the graph waited at a barrier (as a ``Send`` superstep does), a fast step's
dependant would start only when the slow step beside it ended. The run uses the real
compiled graph (``build_graph``) with its planner and selector replaced by fixed nodes and
one test tool that sleeps, so the numbers measure the graph and the executor, not a model.

Reported, as medians over ``--runs``: wall time of two independent S-second steps, and
``wall / sum`` (sum = 2S; 0.5 is perfect overlap, 1.0 is none). Baseline, in the same run:
the same graph with one S-second step; ``wall(2) / wall(1)`` should be close to 1.0.
Barrier: a fast step (S/4) followed by a dependant (S/4), beside a slow step (2S): when the
dependant starts and when the slow step ends, in seconds from the run's start.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any
from unittest import mock

TASK = "text-classification"  # a real task, so the critic judges the result as it would


def fixed_plan_nodes(
    task: str,
    candidates: list[list[Any]],
    reason: str,
    deps: list[list[str]] | None = None,
) -> tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]:
    """Planner and selector stand-ins: one ``task`` step per entry of ``candidates`` (a list
    of ``Candidate`` for that step), each given those candidates; step i waits for the steps
    ``deps[i]`` names (independent when ``deps`` is None).

    The benchmark and tests/test_parallel_timeout.py use them, so what is timed is the graph
    and the executor, not planning or model search.
    """
    from graph_agent.planning.plan import Plan, Subtask
    from graph_agent.retrieval_index.search import Selection
    from graph_agent.state import RESET

    after = deps or [[] for _ in candidates]
    steps = [
        Subtask(
            id=f"node-{i}",
            task=task,
            args={"text": f"<{after[i][0]}>" if after[i] else f"text {i}"},
            deps=after[i],
        )
        for i in range(len(candidates))
    ]

    def plan(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
        return {
            "error": "",
            "input_types": {},
            "plan": Plan(subtasks=steps).model_dump(),
            "decisions": [RESET, {"node": "planner", "decision": "planned"}],
            **{k: {RESET: True} for k in ("selections", "results", "rejections")},
        }

    def select(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
        chosen = {
            step.id: asdict(Selection(task=task, candidates=cands, reason=reason))
            for step, cands in zip(steps, candidates, strict=True)
        }
        return {"selections": chosen, "decisions": []}

    return plan, select


def _graph_with_fixed_steps(
    where: Path,
    seconds: float | list[float],
    n: int,
    stack: ExitStack,
    deps: list[list[str]] | None = None,
    times: dict[str, tuple[float, float]] | None = None,
) -> Any:
    """The compiled graph, planning ``n`` steps where step i sleeps ``seconds`` (or
    ``seconds[i]``) and waits for ``deps[i]``; ``times`` receives each step's (start, end)."""
    import graph_agent.graph as graph_module
    import graph_agent.nodes.executor as executor
    from graph_agent.retrieval_index.search import Candidate
    from graph_agent.tools.results import ToolResult
    from graph_agent.tools.spec import TaskTool, ToolCall

    sleeps = seconds if isinstance(seconds, list) else [seconds] * n

    def call(model: dict[str, str], tool_call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        time.sleep(sleeps[int(tool_call.subtask_id.rsplit("-", 1)[1])])
        if times is not None:
            times[tool_call.subtask_id] = (started, time.perf_counter())
        return ToolResult(kind="labels", modality="text", text=f"slept in {tool_call.subtask_id}")

    tool = TaskTool(
        task=TASK,
        inputs=(("text", "text"),),
        output="text",
        loader="bench-sleep",
        call=call,
        description="Sleep, then answer (benchmark only).",
        make_loader=lambda path: {"path": path},
    )
    models = []
    for i in range(n):
        path = where / f"sleep-{n}-{i}"  # a folder, so the cache treats it as a model
        path.mkdir(exist_ok=True)
        models.append(Candidate(f"bench/sleep-{i}", str(path), 1.0, 1.0, "benchmark"))
    plan, select = fixed_plan_nodes(TASK, [[m] for m in models], "fixed for the benchmark", deps)

    real_get_tool = executor.get_tool
    stack.enter_context(mock.patch.object(graph_module, "plan", plan))
    stack.enter_context(mock.patch.object(graph_module, "select_models", select))
    stack.enter_context(
        mock.patch.object(
            executor,
            "get_tool",
            lambda task, library=None: tool if task == TASK else real_get_tool(task, library),
        )
    )
    return graph_module.build_graph().compile()


def _time(graph: Any, context: Any, expect: int) -> float:
    started = time.perf_counter()
    final = graph.invoke({"request": "sleep"}, context=context)
    wall = time.perf_counter() - started
    if final["report"]["failures"] or len(final["outputs"]) != expect:
        raise RuntimeError(f"the sleeping steps did not all succeed: {final['answer']}")
    return wall


def barrier(seconds: float, where: Path, context: Any) -> dict[str, float]:
    """One run of fast step -> dependant, beside a slow step: when each starts and ends."""
    times: dict[str, tuple[float, float]] = {}
    with ExitStack() as stack:
        sleeps = [seconds / 4, seconds / 4, 2 * seconds]
        deps: list[list[str]] = [[], ["node-0"], []]
        graph = _graph_with_fixed_steps(where, sleeps, 3, stack, deps, times)
        started = time.perf_counter()
        _time(graph, context, 3)
    return {
        "fast_end_s": round(times["node-0"][1] - started, 3),
        "dependant_start_s": round(times["node-1"][0] - started, 3),
        "slow_end_s": round(times["node-2"][1] - started, 3),
    }


def run(seconds: float = 1.0, runs: int = 3) -> dict[str, Any]:
    """Median wall time of one and of two independent sleeping steps, and when a fast step's
    dependant starts against when the slow step beside it ends; see the docstring."""
    from graph_agent import Context

    walls: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="graph-agent-bench-par-") as tmp:
        where = Path(tmp)
        context = Context(artifacts_dir=str(where / "artifacts"), models_dir=str(where))
        for n in (1, 2):
            with ExitStack() as stack:
                graph = _graph_with_fixed_steps(where, seconds, n, stack)
                _time(graph, context, n)  # first run pays imports and thread start-up
                for _ in range(runs):
                    walls[n].append(_time(graph, context, n))
        gaps = [barrier(seconds, where, context) for _ in range(runs)]
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    middle = sorted(gaps, key=lambda g: g["dependant_start_s"])[len(gaps) // 2]
    return {
        "step_seconds": seconds,
        "runs": runs,
        "one_step_wall_s": round(one, 3),
        "two_steps_wall_s": round(two, 3),
        "sum_of_steps_s": 2 * seconds,
        "ratio_wall_over_sum": round(two / (2 * seconds), 3),
        "ratio_vs_one_step": round(two / one, 3),
        # The median run (by dependant start) of the barrier case.
        "barrier_fast_end_s": middle["fast_end_s"],
        "barrier_dependant_start_s": middle["dependant_start_s"],
        "barrier_slow_end_s": middle["slow_end_s"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graph_agent.evals.bench_parallel", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="sleep per step")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.runs < 1:
        parser.error("--seconds must be > 0 and --runs >= 1")
    result = run(args.seconds, args.runs)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"two independent {args.seconds:g} s steps: {result['two_steps_wall_s']} s wall "
            f"(wall/sum {result['ratio_wall_over_sum']}; 0.5 = full overlap); one step: "
            f"{result['one_step_wall_s']} s (ratio {result['ratio_vs_one_step']})\n"
            f"barrier: the fast step ended at {result['barrier_fast_end_s']} s, its dependant "
            f"started at {result['barrier_dependant_start_s']} s, the slow step beside them "
            f"ended at {result['barrier_slow_end_s']} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
