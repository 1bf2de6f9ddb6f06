"""Plan + select latency: the offline planner and the selector on requests they never saw.

    python -m graph_agent.evals.bench_plan_latency [--limit N] [--catalog p0|pack] [--json]

Planning and selection run before any model does, so every request pays them. This times,
per request, ``plan_offline`` + ``validate`` (as the planner node does) and then ``select``
for every step (as the selector node does, with the same query: the task and the words of
the request the step serves). Requests are TaskBench's held-out split (its ``instruction``,
with inline file names as inputs, as ``graph-agent plan --batch`` treats them); without the
TaskBench data, our human-phrased set. The catalog is HuggingGPT's 673 p0 model cards
(a realistic size; only the fact that nothing is installed is unrealistic, so the selector
does not filter on "runnable here"), or the installed pack's cards with ``--catalog pack``.

Both encoder calls (the detector's pass over the request, the batch of step queries) run on
ONNX Runtime when the pack has the encoder's export, else on PyTorch; the queries run on the
export's 8-bit twin when the pack has it. The result names the backends (``encoder``,
``query_encoder``), and ``GRAPH_AGENT_ENCODER_THREADS`` sets ONNX Runtime's threads.

``--paste-kb N`` pastes N KB of article text under each request (after a blank line), as
people paste what they want worked on: the planner reads it as material, so plan + select
should cost about what the bare request costs.

Baseline, measured in the same run: one warm call of the cheapest real model step the pack
has (EfficientNet-Lite0 on matplotlib's sample photo). The ratio says what share of that
step planning and selection cost. HIVE's paper does not give a per-request planning latency
this could be set beside, so no external anchor is shown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HUMAN = Path(__file__).resolve().parent / "data" / "human_requests.jsonl"


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1); 0.0 for no values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(1000 * percentile(values, 0.5), 2),
        "p99": round(1000 * percentile(values, 0.99), 2),
        "mean": round(1000 * statistics.fmean(values), 2) if values else 0.0,
    }


def load_requests(data: str | None, limit: int) -> tuple[str, list[tuple[str, dict[str, str]]]]:
    """(label, [(request, input name -> kind)]): TaskBench held-out, else our human set."""
    from graph_agent.evals import taskbench
    from graph_agent.planning.batch import inputs_named_in

    try:
        records = taskbench.select(taskbench.load_records(data), "heldout")
        label = "taskbench-heldout"
        pairs = [(r["instruction"], inputs_named_in(r["instruction"])) for r in records]
    except taskbench.TaskBenchDataError as exc:
        print(f"note: {exc}; using the human set instead", file=sys.stderr)
        with HUMAN.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        label = "human"
        pairs = [(r["instruction"], dict(r["inputs"])) for r in rows]
    return label, pairs[:limit] if limit > 0 else pairs


def open_catalog(kind: str, models_dir: Path, where: Path) -> tuple[Any, Any, str]:
    """(index, constraints, description) for the p0 catalog or the installed pack."""
    from graph_agent.retrieval_index.search import Constraints

    if kind == "p0":
        from graph_agent.evals.selection_relevance import DEFAULT_CARDS, open_p0_index

        if DEFAULT_CARDS.is_file():
            index = open_p0_index(DEFAULT_CARDS, where, models_dir)
            n = index.catalog.count()
            return index, Constraints(runnable_only=False), f"HuggingGPT p0 ({n} cards)"
        print(f"note: {DEFAULT_CARDS} not found; using the installed pack", file=sys.stderr)
    from graph_agent.retrieval_index.service import open_index

    return open_index(models_dir), Constraints(), f"installed pack in {models_dir}"


def model_step_baseline(models_dir: Path, where: Path, calls: int) -> dict[str, Any]:
    """p50 of a warm EfficientNet-Lite0 call on the sample photo (the cheapest real step)."""
    from graph_agent.demo import sample_photo
    from graph_agent.tools.artifacts import ArtifactStore
    from graph_agent.tools.registry import get_tool
    from graph_agent.tools.spec import ToolCall

    model = models_dir / "efficientnet-lite0"
    if not model.is_dir():
        return {"skipped": f"efficientnet-lite0 is not installed in {models_dir}"}
    tool = get_tool("image-classification")
    call = ToolCall(args={"image": str(sample_photo())}, artifacts=ArtifactStore(where / "art"))
    tool.run(str(model), call)  # load outside the timing
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        tool.run(str(model), call)
        times.append(time.perf_counter() - started)
    return {"step": "image-classification (efficientnet-lite0)", "calls": calls, **_ms(times)}


#: Prose pasted by ``--paste-kb``: an article whose words name tasks, as real ones do.
PASTE = (
    "The council met on Tuesday to discuss the new transit plan. Photos of the crowded "
    "platforms were shown, and staff were asked to detect where delays begin. A recording "
    "of the debate will be published, and the summary will be translated for residents. "
)


def pasted(request: str, kb: int) -> str:
    """``request`` with ``kb`` KB of article text pasted under it."""
    if not kb:
        return request
    body = (PASTE * (1 + kb * 1000 // len(PASTE)))[: kb * 1000]
    return f"{request}\n\n{body}"


def plan_as_node(request: str, types: dict[str, Any], models_dir: Path) -> Any | None:
    """The offline plan the planner node makes of ``request`` (``None`` when it refuses the
    request). A plan the validator refuses is kept as planned: the node does the same work,
    so the timing must include it."""
    from graph_agent.errors import RequestError
    from graph_agent.planning.offline import plan_offline
    from graph_agent.planning.plan import PlanError, validate

    try:
        plan = plan_offline(request, types, models_dir)
        with contextlib.suppress(PlanError):
            plan = validate(plan, types)
    except RequestError:
        return None
    return plan


def run(
    limit: int = 0,
    catalog: str = "p0",
    data: str | None = None,
    models_dir: Path | None = None,
    baseline_calls: int = 20,
    paste_kb: int = 0,
) -> dict[str, Any]:
    """Time plan and select per request; see the module docstring."""
    from graph_agent.context import default_models_dir
    from graph_agent.planning.offline import plan_offline
    from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME
    from graph_agent.retrieval_index.search import select, step_query
    from graph_agent.retrieval_index.token_encoder import token_encoder

    models_dir = Path(models_dir or default_models_dir())
    label, requests = load_requests(data, limit)
    with tempfile.TemporaryDirectory(prefix="graph-agent-bench-plan-") as tmp:
        where = Path(tmp)
        started = time.perf_counter()
        index, constraints, described = open_catalog(catalog, models_dir, where)
        index_s = time.perf_counter() - started
        plan_offline("warm up: transcribe a.wav", {"a.wav": "audio"}, models_dir)
        select(index, "automatic-speech-recognition", "warm up", constraints)
        plan_t, select_t, total_t, steps, no_plan = [], [], [], 0, 0
        for bare, types in requests:
            request = pasted(bare, paste_kb)
            t0 = time.perf_counter()
            plan = plan_as_node(request, types, models_dir)
            if plan is None:
                no_plan += 1
                continue
            t1 = time.perf_counter()
            # As the selector node does: the plan's queries embedded in one batch.
            queries = [step_query(s.task, s.description, request) for s in plan.subtasks]
            vectors = index.embed_queries(queries) if queries else None
            for i, (step, query) in enumerate(zip(plan.subtasks, queries, strict=True)):
                select(index, step.task, query, constraints, vector=vectors[i : i + 1])
            t2 = time.perf_counter()
            steps += len(plan.subtasks)
            plan_t.append(t1 - t0)
            select_t.append(t2 - t1)
            total_t.append(t2 - t0)
        baseline = model_step_baseline(models_dir, where, baseline_calls)
    total = _ms(total_t)
    encoder = token_encoder(models_dir / EMBEDDER_DIR_NAME)
    ratio = (
        round(total["p50"] / baseline["p50"], 4) if baseline.get("p50") else None
    )  # plan + select p50 as a share of one warm model step
    return {
        "requests": label + (f" + {paste_kb} KB pasted" if paste_kb else ""),
        "planned": len(total_t),
        "no_plan": no_plan,
        "steps": steps,
        "catalog": described,
        "encoder": encoder.backend,
        "query_encoder": encoder.query_backend,
        "index_open_s": round(index_s, 1),
        "plan_ms": _ms(plan_t),
        "select_ms": _ms(select_t),
        "plan_select_ms": total,
        "baseline": baseline,
        "ratio_p50_vs_baseline": ratio,
        "hive_reference": None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graph_agent.evals.bench_plan_latency", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N requests")
    parser.add_argument("--catalog", choices=("p0", "pack"), default="p0")
    parser.add_argument("--data", default=None, help="TaskBench dir (default ../shared/...)")
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument(
        "--paste-kb", type=int, default=0, help="paste N KB of article text under each request"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    result = run(args.limit, args.catalog, args.data, args.models_dir, paste_kb=args.paste_kb)
    if args.json:
        print(json.dumps(result))
        return 0
    p, s, t = result["plan_ms"], result["select_ms"], result["plan_select_ms"]
    print(
        f"{result['planned']} {result['requests']} requests, {result['steps']} steps; "
        f"catalog {result['catalog']}; encoder on {result['encoder']}, queries on "
        f"{result['query_encoder']}"
    )
    for name, ms in (("plan", p), ("select", s), ("plan+select", t)):
        print(f"{name:12} p50 {ms['p50']:8.2f} ms  p99 {ms['p99']:8.2f} ms")
    b = result["baseline"]
    if b.get("p50"):
        print(f"baseline {b['step']}: p50 {b['p50']} ms; ratio {result['ratio_p50_vs_baseline']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
