"""How much edge F1 the TaskBench gold leaves to win, whatever the planner.

    python -m graph_agent.evals.edge_ceiling [--split heldout|train|all] [--data DIR] [--json]

Edge F1 reads edges from ``<node-j>`` references in the arguments (see ``taskbench``). The
dev split's gold is noisy there, and this script measures how much, with no model:

* **gold without a scorable edge**: multi-step gold plans whose references give no edge
  at all: 1-based references (``<node-1>`` in the second node reads as the node itself,
  which TaskBench drops) or no references. Any plan a planner makes for them costs false
  positives.
* **gold tasks, chained in gold order**: every gold node reads the output of the node
  before it where the typed tool graph has that link (``vocabulary.can_feed``, which a
  test holds equal to ``graph_desc.json``'s links). This is the
  edge F1 of a planner that finds exactly the gold tasks, in the gold order, and links
  them as a chain, which is how 62% of the multi-step gold plans are linked.

Measured on the dev split (2026-11-26): held-out 316 records, 179 multi-step, 32 of them
without a scorable edge; chained gold tasks score edge F1 72.48 (train: 73.10). With the
offline planner's own clause order and linking and each clause given its aligned gold task
(an oracle over the planner's clauses), node F1 is 98.66 and edge F1 59.07 in 5-fold
cross-validation on the train part. So edge F1 60 needs close to every task right and a
better order, not only better linking.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from graph_agent.evals import taskbench
from graph_agent.planning.vocabulary import TASKS, can_feed

#: TaskBench's 23 tool names -> our canonical tasks. Only these are linked: a gold name
#: outside the 23 ("Speech-to-Text") is noise the graph has no link for.
_TOOLS = {t.taskbench: name for name, t in TASKS.items() if t.taskbench}


def linked(source: str, target: str) -> bool:
    """Whether TaskBench's tool graph links two of its tools."""
    a, b = _TOOLS.get(source), _TOOLS.get(target)
    return bool(a and b and a != b and can_feed(a, b))


def has_scorable_edge(nodes: list[dict[str, Any]]) -> bool:
    """Whether TaskBench reads at least one edge from the nodes' references."""
    return bool(taskbench.edges_from_arguments(nodes))


def chained(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The gold tasks in gold order, each reading the one before it where the graph links
    them (other arguments are literals, which edge F1 does not read)."""
    names = taskbench.node_names(nodes)
    out = []
    for i, name in enumerate(names):
        args = ["input"]
        if i and linked(names[i - 1], name):
            args = [f"<node-{i - 1}>"]
        out.append({"task": name, "arguments": args})
    return out


def measure(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts and the chained-gold scores of ``records``."""
    parsed = [(r, nodes) for r in records if (nodes := taskbench.parse_nodes(r.get("task_nodes")))]
    multi = [(r, nodes) for r, nodes in parsed if len(nodes) > 1]
    blind = sum(not has_scorable_edge(nodes) for _, nodes in multi)
    scores = taskbench.score([(r, chained(nodes)) for r, nodes in parsed])
    return {
        "records": len(records),
        "multi_step": len(multi),
        "multi_step_without_scorable_edge": blind,
        "chained_gold_node_f1": scores["overall"]["node_f1"],
        "chained_gold_edge_f1": scores["overall"]["edge_f1"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["heldout", "train", "all"], default="heldout")
    ap.add_argument("--data", default=None, help="TaskBench dir (default ../shared/...)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        records = taskbench.select(taskbench.load_records(args.data), args.split)
    except taskbench.TaskBenchDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = measure(records)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        for key, value in result.items():
            print(f"{key:34} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
