"""Score the LLM planner on TaskBench (Hugging Face tools domain): node F1, edge F1, fallbacks.

Each record's ``instruction`` is the request; a file it mentions ('example.jpg') is an input
of its extension's kind. Plans are checked against the whole task vocabulary (TaskBench's 23
tools), not only the tasks this machine can run, because TaskBench asks for tools such as
Text-to-Image that no local tool runs. When ``plan.validate`` checks against the vocabulary
it is used as is; an older one that checks against the tool registry would send every such
record to the offline fallback (scoring the fallback, not the LLM), so then a local
vocabulary check stands in for it. Metrics are TaskBench's, from
``graph_agent.evals.taskbench`` when it is installed (a minimal local copy otherwise; the
output says which).

Run (the large pack's Qwen 1.5B on 50 held-out records, 15-60 s each on 2 busy cores):

    python -m graph_agent.evals.eval_llm_planner \\
        --planner hf:$HOME/.cache/graph-agent/models/qwen2.5-coder-1.5b-instruct --n 50
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from graph_agent.chat import make_chat_model
from graph_agent.errors import RequestError
from graph_agent.file_names import file_kind, files_named_in
from graph_agent.planning.llm import plan_with_llm_result
from graph_agent.planning.plan import Plan, PlanError, Subtask, arg_modality, ref_of, validate
from graph_agent.planning.vocabulary import TASKS, taskbench_name
from graph_agent.tools.results import MODALITIES

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "taskbench_hf"


def inputs_of(instruction: str) -> dict[str, str | None]:
    """Files the instruction names, each as the kind its suffix says; a video (no step reads
    one) is still an input, of unknown kind, so the model sees every file it was given."""
    kinds = {name: file_kind(name) for name in files_named_in(instruction)}
    return {name: kind if kind in MODALITIES else None for name, kind in kinds.items()}


def validate_vocabulary(plan: Plan, input_types: dict[str, Any]) -> Plan:
    """``plan.validate``'s checks against the task vocabulary instead of the tool registry.

    Tasks the registry knows go through the real validator; the rest (Text-to-Image, ...)
    get the same checks here: known task, required roles, references, types, no cycles.
    """
    steps = plan.by_id()
    problems: list[str] = []
    for step in plan.subtasks:
        task = TASKS.get(step.task)
        if task is None:
            problems.append(f"{step.id}: unknown task {step.task!r}")
            continue
        refs = {r for v in step.args.values() if (r := ref_of(v))}
        problems += [f"{step.id}: refers to <{r}>, which is not a step" for r in refs - set(steps)]
        step.deps = sorted(set(step.deps) | (refs & set(steps)))
        for role, needed in task.roles:
            value = step.args.get(role)
            if value in ("", None):
                problems.append(f"{step.id} ({step.task}): missing the {needed} argument {role!r}")
                continue
            ref = ref_of(value)
            got = (
                TASKS[steps[ref].task].output
                if ref in steps and steps[ref].task in TASKS
                else arg_modality(value, input_types, {})
            )
            if got is not None and got != needed:
                problems.append(f"{step.id} ({step.task}) needs {needed}, but {value!r} is {got}")
    if not plan.subtasks:
        problems.append("the plan has no steps")
    if problems:
        raise PlanError(problems)
    # Cycles (and id uniqueness) via the real validator's helper on a registry-free copy.
    from graph_agent.planning.plan import _cycles

    if cyc := _cycles(plan):
        raise PlanError(cyc)
    return plan


def _validator(plan: Plan, input_types: dict[str, Any]) -> Plan:
    if _VALIDATE_KNOWS_VOCABULARY or all(_in_registry(s) for s in plan.subtasks):
        return validate(plan, input_types)
    return validate_vocabulary(plan, input_types)


def _knows_vocabulary() -> bool:
    """Whether ``plan.validate`` accepts vocabulary tasks that no local tool runs."""
    probe = Plan(subtasks=[Subtask(id="node-0", task="text-to-image", args={"text": "a cat"})])
    try:
        validate(probe, {})
    except PlanError:
        return False
    return True


_VALIDATE_KNOWS_VOCABULARY = _knows_vocabulary()


def _in_registry(step: Subtask) -> bool:
    from graph_agent.tools.registry import REGISTRY

    return step.task in REGISTRY


def to_task_nodes(plan: Plan) -> list[dict[str, Any]]:
    """TaskBench ``task_nodes``: TaskBench names, positional arguments, ``<node-j>`` by index."""
    index = {s.id: i for i, s in enumerate(plan.subtasks)}

    def arg(value: Any) -> Any:
        ref = ref_of(value)
        return f"<node-{index[ref]}>" if ref in index else value

    nodes = []
    for step in plan.subtasks:
        roles = [r for r, _ in TASKS[step.task].roles] if step.task in TASKS else []
        ordered = [step.args[r] for r in roles if r in step.args]
        ordered += [v for r, v in step.args.items() if r not in roles]
        nodes.append({"task": taskbench_name(step.task), "arguments": [arg(v) for v in ordered]})
    return nodes


def _metrics() -> tuple[Any, str]:
    """TaskBench's metrics from the project's module, or a minimal local copy."""
    try:
        from graph_agent.evals.taskbench import score

        return score, "graph_agent.evals.taskbench"
    except ImportError:
        return _local_score, "local copy (graph_agent.evals.taskbench not importable)"


def _local_score(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    """Micro node F1 over name sets and edge F1 over (source, target) name pairs."""
    counts = {"nodes": [0, 0, 0], "edges": [0, 0, 0]}

    def add(key: str, gold: set[Any], pred: set[Any]) -> None:
        c = counts[key]
        c[0] += len(gold & pred)
        c[1] += len(pred - gold)
        c[2] += len(gold - pred)

    def edges(nodes: list[dict[str, Any]]) -> set[tuple[str, str]]:
        out = set()
        for i, n in enumerate(nodes):
            for a in n.get("arguments", []):
                m = re.search(r"<node-(\d+)>", str(a))
                if m and int(m.group(1)) < len(nodes) and int(m.group(1)) != i:
                    out.add((nodes[int(m.group(1))]["task"], n["task"]))
        return out

    for record, pred in pairs:
        gold = record["task_nodes"]
        add("nodes", {n["task"] for n in gold}, {n["task"] for n in pred})
        add("edges", edges(gold), edges(pred))

    def f1(tp: int, fp: int, fn: int) -> float:
        return round(100 * 2 * tp / (2 * tp + fp + fn), 2) if tp else 0.0

    return {
        "overall": {
            "records": len(pairs),
            "node_f1": f1(*counts["nodes"]),
            "edge_f1": f1(*counts["edges"]),
        }
    }


def load(data: Path, n: int, split: str) -> list[dict[str, Any]]:
    """The first ``n`` records of ``split`` (the taskbench module's hash split when present)."""
    path = data / "dev.jsonl" if data.is_dir() else data
    records = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    if split != "all":
        try:
            from graph_agent.evals.taskbench import select
        except ImportError:
            print("graph_agent.evals.taskbench is missing: using all records", file=sys.stderr)
        else:
            records = select(records, split)
    return records[:n]


def score_file(predictions: Path, data: Path) -> int:
    """Scores of a predictions file written by ``--out``, for the records it holds."""
    rows = [json.loads(line) for line in predictions.open(encoding="utf-8") if line.strip()]
    by_id = {str(r["id"]): r for r in load(data, 10**9, "all")}
    score, metrics_from = _metrics()
    pairs = [(by_id[str(row["id"])], row["task_nodes"]) for row in rows]
    llm_only = [p for p, row in zip(pairs, rows, strict=True) if row["fallback"] is None]
    report = {
        "records": len(rows),
        "metrics_from": metrics_from,
        "scores": score(pairs),
        "scores_llm_only": score(llm_only) if llm_only else None,
        "fallback_rate": round(sum(r["fallback"] is not None for r in rows) / max(len(rows), 1), 3),
    }
    print(json.dumps(report, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--planner", help="chat model spec, e.g. hf:<dir> (required unless --score-only)"
    )
    parser.add_argument("--n", type=int, default=50, help="records to score (default 50)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="taskbench_hf dir")
    parser.add_argument(
        "--split",
        default="heldout",
        choices=("heldout", "train", "all"),
        help="which part of the dev split (default: the part the offline planner held out)",
    )
    parser.add_argument("--max-repairs", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write per-record predictions as JSON lines")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the records already in --out and plan only the rest (appends to it)",
    )
    parser.add_argument(
        "--score-only",
        type=Path,
        metavar="PREDICTIONS",
        help="score a --out file (complete or part-way) instead of running the planner",
    )
    args = parser.parse_args(argv)
    if args.score_only:
        return score_file(args.score_only, args.data)
    if not args.planner:
        parser.error("--planner is required (e.g. hf:<model dir>) unless --score-only is given")

    records = load(args.data, args.n, args.split)
    done: set[str] = set()
    if args.resume:
        if not args.out:
            parser.error("--resume needs --out (the predictions file to continue)")
        if args.out.is_file():
            with args.out.open(encoding="utf-8") as fh:
                done = {str(json.loads(line)["id"]) for line in fh if line.strip()}
        print(f"resuming: {len(done)} record(s) already in {args.out}", flush=True)
    score, metrics_from = _metrics()
    started = time.perf_counter()
    model = make_chat_model(args.planner)
    load_seconds = time.perf_counter() - started
    print(f"loaded {args.planner} in {load_seconds:.1f}s; {len(records)} records", flush=True)

    pairs: list[tuple[dict[str, Any], Any]] = []
    llm_pairs: list[tuple[dict[str, Any], Any]] = []
    fallbacks = errors = repaired = 0
    seconds: list[float] = []
    out = args.out.open("a" if args.resume else "w", encoding="utf-8") if args.out else None
    for i, record in enumerate(records):
        if str(record["id"]) in done:
            continue
        request, types = record["instruction"], inputs_of(record["instruction"])
        t0 = time.perf_counter()
        try:
            result = plan_with_llm_result(
                request,
                types,
                model,
                args.max_repairs,
                planner=args.planner,
                validator=_validator,
            )
            nodes, fallback, notes = to_task_nodes(result.plan), result.fallback, result.notes
            repaired += result.fallback is None and result.attempts > 1
        except (RequestError, PlanError) as exc:
            nodes, fallback, notes = [], "none", [f"no plan: {exc}"]
            errors += 1
        except Exception as exc:  # a crash in one record (e.g. the fallback) must not end the run
            nodes, fallback, notes = [], "crash", [f"crashed: {type(exc).__name__}: {exc}"]
            errors += 1
        elapsed = time.perf_counter() - t0
        seconds.append(elapsed)
        fallbacks += fallback is not None
        pairs.append((record, nodes))
        if fallback is None:
            llm_pairs.append((record, nodes))
        gold = [n["task"] for n in record.get("task_nodes", []) if isinstance(n, dict)]
        print(
            f"[{i + 1}/{len(records)}] {elapsed:5.1f}s fallback={fallback} "
            f"pred={[n['task'] for n in nodes]} gold={gold}",
            flush=True,
        )
        if out:
            row = {"id": record["id"], "task_nodes": nodes, "fallback": fallback, "notes": notes}
            out.write(json.dumps(row) + "\n")
            out.flush()  # a long run can be scored part-way (see --score-only)
    if out:
        out.close()

    report = {
        "planner": args.planner,
        "split": args.split,
        "records": len(records),
        "metrics_from": metrics_from,
        "validator": "plan.validate"
        if _VALIDATE_KNOWS_VOCABULARY
        else "plan.validate for runnable tasks, local vocabulary check for the rest",
        "scores": score(pairs),
        "scores_llm_only": score(llm_pairs) if llm_pairs else None,
        "fallback_rate": round(fallbacks / max(len(records), 1), 3),
        "repaired_then_valid": repaired,
        "no_plan_at_all": errors,
        "seconds_per_request": round(sum(seconds) / max(len(seconds), 1), 2),
        "model_load_seconds": round(load_seconds, 1),
    }
    print(json.dumps(report, indent=2))
    if done:
        print(f"(these scores cover this run only; `--score-only {args.out}` scores all of it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
