"""Score the offline planner on TaskBench (and on our own human-phrased set).

    python -m graph_agent.evals.eval_planner [--split heldout|train|all] [--human] [--json]
                                             [--data DIR] [--limit N]

Each record's ``instruction`` is planned with no declared inputs (TaskBench requests name
their files inline, e.g. 'example.jpg'); the plan is converted to TaskBench's
``task_nodes`` (TaskBench tool names, positional arguments, ``<node-j>`` references) and
scored with ``taskbench.score``: node F1 and edge F1, overall and by type
(single/chain/dag), plus the p50/p99 time to plan one request once the model is warm.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from graph_agent.errors import RequestError
from graph_agent.evals import taskbench
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import Plan
from graph_agent.planning.vocabulary import TASKS, taskbench_name

HUMAN = Path(__file__).resolve().parent / "data" / "human_requests.jsonl"


def to_task_nodes(plan: Plan) -> list[dict[str, Any]]:
    """A plan as TaskBench ``task_nodes``: TaskBench names, arguments in role order."""
    nodes = []
    for step in plan.subtasks:
        roles = [r for r, _ in TASKS[step.task].roles] if step.task in TASKS else []
        args = [step.args[r] for r in roles if r in step.args] or list(step.args.values())
        nodes.append({"task": taskbench_name(step.task), "arguments": [str(a) for a in args]})
    return nodes


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def run(records: list[dict[str, Any]], label: str) -> dict[str, Any]:
    """Plan every record and score the plans; also time each plan."""
    pairs, times, failed = [], [], 0
    plan_offline("warm up: transcribe a.wav", {})
    for r in records:
        t0 = time.perf_counter()
        try:
            nodes = to_task_nodes(plan_offline(r["instruction"], dict(r.get("inputs") or {})))
        except RequestError:
            nodes, failed = [], failed + 1
        times.append(time.perf_counter() - t0)
        pairs.append((r, nodes))
    result = taskbench.score(pairs)
    result["set"] = label
    result["no_plan"] = failed
    result["latency_ms"] = {
        "p50": round(1000 * _percentile(times, 0.5), 2),
        "p99": round(1000 * _percentile(times, 0.99), 2),
        "mean": round(1000 * statistics.fmean(times), 2) if times else 0.0,
    }
    return result


def _print(result: dict[str, Any]) -> None:
    print(f"== {result['set']}  (records without a plan: {result['no_plan']})")
    print(f"{'group':10} {'records':>7} {'node F1':>8} {'edge F1':>8} {'node F1 strict':>15}")
    for group in ("overall", "single", "chain", "dag"):
        if group in result:
            g = result[group]
            print(
                f"{group:10} {g['records']:>7} {g['node_f1']:>8.2f} {g['edge_f1']:>8.2f} "
                f"{g['node_f1_strict']:>15.2f}"
            )
    lat = result["latency_ms"]
    print(f"latency ms: p50 {lat['p50']}  p99 {lat['p99']}  mean {lat['mean']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["heldout", "train", "all"], default="heldout")
    ap.add_argument("--human", action="store_true", help="also score evals/data/human_requests")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--data", default=None, help="TaskBench dir (default ../shared/...)")
    ap.add_argument("--limit", type=int, default=0, help="score only the first N records")
    ap.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 is fastest for MiniLM)"
    )
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    results = []
    records = taskbench.select(taskbench.load_records(args.data), args.split)
    if args.limit:
        records = records[: args.limit]
    results.append(run(records, f"taskbench-{args.split}"))
    if args.human:
        with HUMAN.open(encoding="utf-8") as fh:
            human = [json.loads(line) for line in fh if line.strip()]
        results.append(run(human, "human"))
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    else:
        for r in results:
            _print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
