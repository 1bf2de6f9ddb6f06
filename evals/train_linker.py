"""Train the learned linker (``planning/learned_linking.py``); writes ``data/linker.json``.

    python -m graph_agent.evals.train_linker [--data DIR] [--out FILE] [--folds K]

It learns on the steps the planner predicts by default, both readings blended (``--reading
base`` sets ``GRAPH_AGENT_PLANNER_ADAPTER=0`` and learns on the base reading's alone). A step
run again on the next file is left as bound (``learned_linking.kept``): without that, the
model trained on both readings linked a second picture's question to the first picture's
answer ("Answer 'what color is the car?' about a.jpg and b.jpg").

What it learns from: TaskBench's *train* part (``taskbench.split_of``) and the human
training sets (``train_planner.HUMAN_TRAINING``), never TaskBench's held-out part nor a
set with "blind" in its name. Each request is planned as ``plan_offline`` plans it, up to
the hand rules' binding (``offline.bound_steps``), so the linker learns on the steps the
planner really predicts, wrong ones included. For every step that has a choice
(``learned_linking.candidates``), a candidate is right when gold links the two tasks
(TaskBench's edges are pairs of task names, read from ``<node-j>`` arguments), and reading
no earlier step is right when no candidate is: a step gold does not have, or whose gold
parent the planner did not predict, is best linked to nothing.

The two tables behind ``src_pair_rate`` and ``none_parent_rate`` are counted on the same
gold; while the weights are fit, each record's features read tables counted without its
own fold (``--folds``), so the weights do not learn to trust a rate that saw the answer.

The model is a conditional logit: per step, a softmax over its candidates of a linear
score; the loss is minus the log of the probability of the right candidates, with an L2
penalty, minimised by L-BFGS from zero (deterministic). The same folds give a
cross-validated comparison with the hand rules, printed at the end (edge F1 of the plans
as ``validate`` leaves them, before the planner's material steps; node F1 moves only when
a conversion step comes or goes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from graph_agent.errors import RequestError
from graph_agent.evals import taskbench
from graph_agent.evals.train_planner import HUMAN_TRAINING
from graph_agent.planning.batch import inputs_named_in
from graph_agent.planning.formats import to_taskbench
from graph_agent.planning.learned_linking import (
    FEATURES,
    WEIGHTS,
    LinkerModel,
    candidates,
    relink,
)
from graph_agent.planning.linking import Bound
from graph_agent.planning.offline import bound_steps
from graph_agent.planning.plan import Plan, PlanError, validate
from graph_agent.planning.task_detector import ADAPTER_ENV
from graph_agent.planning.vocabulary import TASKS, canonical, taskbench_name

#: L2 penalty on the weights (per step of training data).
L2 = 1e-3
#: Pseudo-counts pulling a table's rate towards the overall rate.
SMOOTHING = 2.0
SEED = 13


def training_records(data: str | Path | None) -> list[dict[str, Any]]:
    """TaskBench's train part (inputs named inline, as ``plan --batch`` reads them) and
    the human training sets (inputs declared). Never a blind set or the held-out part."""
    records = [
        {**r, "inputs": inputs_named_in(r["instruction"])}
        for r in taskbench.select(taskbench.load_records(data), "train")
    ]
    for path in HUMAN_TRAINING:
        if "blind" in path.name or not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        records += [json.loads(line) for line in lines if line.strip()]
    return records


def _gold(record: dict[str, Any]) -> tuple[list[str], set[tuple[int, int]]] | None:
    """Gold task names (TaskBench's, as this planner writes them) and edges by index; None
    for gold that cannot be parsed or whose references count from 1 (a node that reads
    ``<node-i>`` as itself): 68 of the 388 multi-step train records, whose edges are all
    off by one, so learning from them would teach links no request asks for."""
    nodes = taskbench.parse_nodes(record.get("task_nodes"))
    if nodes is None:
        return None
    names = [taskbench_name(canonical(n["task"]) or n["task"]) for n in nodes]
    edges: set[tuple[int, int]] = set()
    for i, node in enumerate(nodes):
        for arg in taskbench.node_arguments(node):
            text = taskbench.argument_text(arg)
            kind, j = taskbench.read_reference(text or "", i, len(nodes))
            if kind == "self":
                return None  # numbered from 1: every edge it gives is off by one
            if kind == "reference" and j is not None:
                edges.add((j % len(nodes), i))
    return names, edges


def _fits(source: str, target: str) -> bool:
    """Whether TaskBench task ``source``'s output can be read by ``target`` (by name)."""
    s, t = TASKS.get(canonical(source) or ""), TASKS.get(canonical(target) or "")
    return bool(s and t and s.links_onward and s.output in t.input_types)


def tables(golds: list[tuple[list[str], set[tuple[int, int]]]]) -> dict[str, Any]:
    """How often gold links task A to a later task B that can read it, and how often a
    task that could read an earlier step does, smoothed towards the overall rates."""
    pair_seen, pair_linked, child_seen, child_linked = Counter(), Counter(), Counter(), Counter()
    for names, edges in golds:
        for i, target in enumerate(names):
            fitting = [j for j in range(i) if _fits(names[j], target)]
            for j in fitting:
                key = f"{names[j]}>{target}"
                pair_seen[key] += 1
                pair_linked[key] += (j, i) in edges
            if fitting:
                child_seen[target] += 1
                child_linked[target] += any((j, i) in edges for j in range(i))
    pair_all = sum(pair_linked.values()) / max(1, sum(pair_seen.values()))
    child_all = sum(child_linked.values()) / max(1, sum(child_seen.values()))
    return {
        "pair_rates": {
            k: (pair_linked[k] + SMOOTHING * pair_all) / (n + SMOOTHING)
            for k, n in sorted(pair_seen.items())
        },
        "parent_rates": {
            k: (child_linked[k] + SMOOTHING * child_all) / (n + SMOOTHING)
            for k, n in sorted(child_seen.items())
        },
        "default_pair_rate": pair_all,
        "default_parent_rate": child_all,
    }


def model_of(table: dict[str, Any], weights: np.ndarray | None = None) -> LinkerModel:
    return LinkerModel(
        weights=np.zeros(len(FEATURES)) if weights is None else weights,
        pair_rates=table["pair_rates"],
        parent_rates=table["parent_rates"],
        default_pair_rate=table["default_pair_rate"],
        default_parent_rate=table["default_parent_rate"],
    )


def choices(
    bound: list[Bound], types: dict[str, Any], gold: tuple[list[str], set], model: LinkerModel
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(candidate features, which are right) for each step of one plan that has a choice."""
    names, edges = gold
    gold_pairs = {(names[j], names[i]) for j, i in edges}
    out = []
    for i in range(1, len(bound)):
        # Steps ``relink`` keeps as bound are learned from too: their gold still says how
        # often one task reads another (edge F1 on TaskBench's held-out part 40.06 with
        # them, 39.94 without).
        options = candidates(bound, i, model, types)
        if len(options) < 2:
            continue
        target = taskbench_name(bound[i].subtask.task)
        right = [
            c.source is not None
            and (taskbench_name(bound[c.source].subtask.task), target) in gold_pairs
            for c in options
        ]
        if not any(right):
            right = [c.source is None for c in options]
        if any(right):
            out.append((np.vstack([c.features for c in options]), np.array(right)))
    return out


def fit(groups: list[tuple[np.ndarray, np.ndarray]], l2: float = L2) -> np.ndarray:
    """Weights of the conditional logit (see the module docstring)."""
    n = max(1, len(groups))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 * l2 * n * w @ w, l2 * n * w
        for X, right in groups:
            s = X @ w
            s -= s.max()
            p = np.exp(s)
            p /= p.sum()
            q = p * right
            mass = q.sum()
            total -= np.log(mass + 1e-12)
            grad -= X.T @ (q / (mass + 1e-12) - p)
        return float(total / n), grad / n

    result = minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B")
    return result.x


def _planned(bound: list[Bound], types: dict[str, Any], model: LinkerModel | None) -> list:
    """The plan's TaskBench nodes after the linker (``model`` None: the hand rules)."""
    steps = relink(bound, types, model) if model else [b.subtask for b in bound]
    plan = Plan(subtasks=steps)
    with contextlib.suppress(PlanError):  # a rejected plan is scored as planned
        plan = validate(plan, types)
    return to_taskbench(plan)["task_nodes"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="TaskBench dir (default ../shared/...)")
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--reading",
        choices=("base", "default"),
        default="default",
        help="whose steps to learn on: the planner's default, both readings blended "
        "(default), or the base reading's alone (GRAPH_AGENT_PLANNER_ADAPTER=0)",
    )
    args = ap.parse_args(argv)
    # The chosen reading's steps (see the module docstring), before any detector is built.
    os.environ[ADAPTER_ENV] = "0" if args.reading == "base" else "1"
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    items = []
    for r in training_records(args.data):
        gold = _gold(r)
        if gold is None:
            continue
        try:
            bound, types = bound_steps(r["instruction"], dict(r["inputs"]))
        except RequestError:
            continue
        items.append((r, bound, types, gold))
    folds = [i % args.folds for i in range(len(items))]
    np.random.default_rng(SEED).shuffle(folds)
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    fold_groups: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(args.folds)]
    fold_tables = []
    for k in range(args.folds):
        table = tables([g for (_, _, _, g), f in zip(items, folds, strict=True) if f != k])
        fold_tables.append(table)
        for (_, bound, types, gold), f in zip(items, folds, strict=True):
            if f == k:
                fold_groups[k] += choices(bound, types, gold, model_of(table))
    groups = [g for fg in fold_groups for g in fg]
    weights = fit(groups)
    # Cross-validation: weights fit without fold k, tables counted without it, scored on it.
    hand, learned = [], []
    for k in range(args.folds):
        w = fit([g for m, fg in enumerate(fold_groups) if m != k for g in fg])
        model = model_of(fold_tables[k], w)
        for (r, bound, types, _), f in zip(items, folds, strict=True):
            if f == k:
                hand.append((r, _planned(bound, types, None)))
                learned.append((r, _planned(bound, types, model)))
    before, after = taskbench.score(hand)["overall"], taskbench.score(learned)["overall"]
    table = tables([g for _, _, _, g in items])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stored = {
        "features": list(FEATURES),
        "weights": [round(float(x), 6) for x in weights],
        **{
            k: ({n: round(v, 6) for n, v in t.items()} if isinstance(t, dict) else round(t, 6))
            for k, t in table.items()
        },
        "trained_on": f"{len(items)} requests (TaskBench train, human training sets), "
        f"{len(groups)} steps with a choice",
    }
    out.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:24} {w:+.3f}", file=sys.stderr)
    print(
        f"{args.folds}-fold cross-validation on the training requests, node / edge F1: "
        f"hand rules {before['node_f1']:.2f} / {before['edge_f1']:.2f}, learned "
        f"{after['node_f1']:.2f} / {after['edge_f1']:.2f}\n"
        f"trained on {len(groups)} steps of {len(items)} requests in "
        f"{time.perf_counter() - t0:.1f}s -> {out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
