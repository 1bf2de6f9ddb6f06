"""TaskBench (Hugging Face tools domain): loader, a deterministic split, and its metrics.

The records live in ``../shared/benchmarks/taskbench_hf/dev.jsonl`` next to the repo (the
project reads shared data, it never copies it). The planner may learn from the *train* part
of the split and is scored on the *held-out* part; the split hashes each record's id, so it
does not depend on file order and a record never moves between parts.

Metrics follow TaskBench's own ``evaluate.py`` (microsoft/JARVIS, ``taskbench/``), default
``dependency_type="resource"``:

* **Node F1** ("Node Micro F1 [No Matching]"): per record, the *set* of gold tool names and
  the set of predicted names. Over their union, a name counts as a true positive when it is
  in both, a false positive when only predicted, a false negative when only gold. TaskBench
  scores only names among the 23 tools of ``tool_desc.json``: a name outside them (gold noise
  such as "Audio Enhancement", or a bad prediction) counts for nothing on either side.
  Counts are summed over all records (micro average), then
  ``F1 = 2PR / (P + R)``. ``strict=True`` instead counts out-of-vocabulary gold names as
  false negatives (nodes a planner cannot predict) and out-of-vocabulary predictions as false
  positives; we report both.
* **Edge F1** ("Link Binary F1"): edges are read from ``<node-j>`` references in the
  arguments, as TaskBench's resource mode does (not from ``task_links``): a reference in
  node i's argument to node j gives the pair (name of j, name of i). A reference that is
  malformed, points outside the node list, or points to the node itself gives no edge, as in
  TaskBench (its ``try``/``except`` drops it). Per record the *set* of (source, target)
  pairs is compared, counts are summed over records, and F1 is computed once. Edge names
  are not filtered by the vocabulary (TaskBench does not filter them).
* A record whose gold ``task_nodes`` is not a list of ``{"task": ...}`` dicts cannot be
  parsed; TaskBench drops such a record ("Parsing Error ... Ignore"), and so do we.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Where the shared TaskBench data sits relative to the repository root.
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "taskbench_hf"
#: Share of records in the train part; the rest are held out.
TRAIN_SHARE = 0.7
_REF = re.compile(r"<node-(\d+)>")


def data_dir(path: str | Path | None = None) -> Path:
    """The TaskBench directory: ``path`` if given, else ``../shared/benchmarks/taskbench_hf``."""
    return Path(path).expanduser() if path else DEFAULT_DIR


def load_records(path: str | Path | None = None) -> list[dict[str, Any]]:
    """All records of ``dev.jsonl`` (``path`` may be the file or its directory)."""
    p = data_dir(path)
    if p.is_dir():
        p = p / "dev.jsonl"
    with p.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def tool_names(path: str | Path | None = None) -> list[str]:
    """TaskBench's 23 tool names, in ``tool_desc.json`` order."""
    p = data_dir(path)
    if p.is_file():
        p = p.parent
    try:
        nodes = json.loads((p / "tool_desc.json").read_text(encoding="utf-8"))["nodes"]
        return [n["id"] for n in nodes]
    except FileNotFoundError:
        from graph_agent.planning.vocabulary import TASKS

        return [t.taskbench for t in TASKS.values() if t.taskbench]


def split_of(record_id: str, train_share: float = TRAIN_SHARE) -> str:
    """``"train"`` or ``"heldout"`` from a hash of the id: stable, independent of file order."""
    h = int.from_bytes(hashlib.sha256(f"taskbench:{record_id}".encode()).digest()[:8], "big")
    return "train" if (h % 10_000) / 10_000 < train_share else "heldout"


def select(records: Iterable[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """The records of ``split``: ``"train"``, ``"heldout"`` or ``"all"``."""
    if split not in ("train", "heldout", "all"):
        raise ValueError(f"split must be train, heldout or all, not {split!r}")
    return [r for r in records if split == "all" or split_of(str(r["id"])) == split]


def parse_nodes(task_nodes: Any) -> list[dict[str, Any]] | None:
    """The nodes as ``[{"task", "arguments"}]``, or None when TaskBench could not parse them."""
    if not isinstance(task_nodes, list):
        return None
    if not all(isinstance(n, dict) and isinstance(n.get("task"), str) for n in task_nodes):
        return None
    return task_nodes


def node_names(task_nodes: Sequence[dict[str, Any]]) -> list[str]:
    """Tool names as TaskBench compares them (underscores read as spaces)."""
    return [n["task"].replace("_", " ") for n in task_nodes]


def edges_from_arguments(task_nodes: Sequence[dict[str, Any]]) -> set[tuple[str, str]]:
    """(source name, target name) for each ``<node-j>`` argument, as TaskBench derives them.

    Like TaskBench, only the first reference in an argument counts; a dict argument is read
    as its first value and a list argument as its items joined by spaces.
    """
    names = node_names(task_nodes)
    edges: set[tuple[str, str]] = set()
    for i, node in enumerate(task_nodes):
        args = node.get("arguments", [])
        if isinstance(args, dict):
            args = list(args.values())
        if not isinstance(args, list):
            continue
        for arg in args:
            if isinstance(arg, dict):
                arg = next(iter(arg.values()), "")
            if isinstance(arg, list):
                arg = " ".join(str(a) for a in arg)
            if not isinstance(arg, str) or (m := _REF.search(arg)) is None:
                continue
            j = int(m.group(1))
            if j != i and 0 <= j < len(names):
                edges.add((names[j], names[i]))
    return edges


@dataclass
class Counts:
    """True positives, false positives and false negatives, summed over records."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, gold: set[Any], pred: set[Any]) -> None:
        self.tp += len(gold & pred)
        self.fp += len(pred - gold)
        self.fn += len(gold - pred)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "precision": round(100 * self.precision, 2),
            "recall": round(100 * self.recall, 2),
            "f1": round(100 * self.f1, 2),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


@dataclass
class Scores:
    """Node and edge counts for one group of records (overall, or one type)."""

    nodes: Counts = field(default_factory=Counts)
    nodes_strict: Counts = field(default_factory=Counts)
    edges: Counts = field(default_factory=Counts)
    records: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "node_f1": round(100 * self.nodes.f1, 2),
            "edge_f1": round(100 * self.edges.f1, 2),
            "node_f1_strict": round(100 * self.nodes_strict.f1, 2),
            "nodes": self.nodes.as_dict(),
            "edges": self.edges.as_dict(),
        }


def score_record(gold_nodes: Any, pred_nodes: Any, tools: Sequence[str], scores: Scores) -> bool:
    """Add one record's counts to ``scores``; False when the gold cannot be parsed (skipped).

    A prediction that cannot be parsed counts as predicting nothing.
    """
    gold = parse_nodes(gold_nodes)
    if gold is None:
        return False
    pred = parse_nodes(pred_nodes) or []
    known = set(tools)
    g, p = set(node_names(gold)), set(node_names(pred))
    scores.nodes.add(g & known, p & known)
    scores.nodes_strict.add(g, p)
    scores.edges.add(edges_from_arguments(gold), edges_from_arguments(pred))
    scores.records += 1
    return True


def score(
    pairs: Iterable[tuple[dict[str, Any], Any]], tools: Sequence[str] | None = None
) -> dict[str, Any]:
    """Scores for ``(gold record, predicted task_nodes)`` pairs: overall and by record type."""
    tools = list(tools) if tools is not None else tool_names()
    groups: dict[str, Scores] = {"overall": Scores()}
    skipped = 0
    for record, pred in pairs:
        kind = str(record.get("type", "unknown"))
        by_type = groups.setdefault(kind, Scores())
        ok = score_record(record.get("task_nodes"), pred, tools, groups["overall"])
        if ok:
            score_record(record.get("task_nodes"), pred, tools, by_type)
        else:
            skipped += 1
    out = {k: v.as_dict() for k, v in groups.items() if v.records}
    out["skipped_unparsable_gold"] = skipped
    return out
