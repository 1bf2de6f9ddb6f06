"""Score a planner on TaskBench through ``langsmith.evaluate``, offline or uploaded.

Why LangSmith: the same run that prints a table here becomes an experiment in LangSmith when
a key is set, comparable run to run, with every plan and its scores attached. Without a key
nothing leaves the machine.

How one run goes (:func:`run_taskbench`):

1. Each TaskBench record becomes a LangSmith ``Example``: inputs ``{"instruction", "id"}``,
   reference outputs ``{"task_nodes", "type", "id"}``, metadata ``{"type", "split"}``. The
   example id is a UUID5 of the dataset name and the record id, so re-running updates the
   same examples instead of adding copies.
2. The target plans the instruction with the chosen planner (a :data:`Predictor`) and
   returns ``{"task_nodes", "error", "problems", "fallback", "seconds"}``. A planner error
   never ends the run: the record scores as an empty plan and the error is reported.
3. A per-example evaluator (:func:`taskbench_evaluator`) reports that record's *counts*
   (``node_tp``, ``edge_fn``, ... from :func:`metrics.record_counts`) and HIVE's per-record
   ``task_selection`` / ``flow_of_thought`` (1 or 0, only when the record can be scored), plus
   a ``noise`` result whose metadata says what of the gold was read leniently.
4. A summary evaluator (:func:`taskbench_summary_evaluator`) computes the micro F1s and rates
   over the whole experiment (what LangSmith shows as experiment-level scores). The report
   also aggregates the per-example counts itself, overall and by type (single/chain/dag);
   both must agree, and the report carries both.

Offline (no ``LANGSMITH_API_KEY``): the client is the recipe in DESIGN.md, an unreachable
``api_url`` with ``info={}`` and no tracing, plus ``auto_batch_tracing=False`` so the client
starts no background thread; ``evaluate(..., upload_results=False)``. The examples are built
in memory. Nothing is sent, nothing is printed about the network, and the client is closed
with no drain, so the process can exit as soon as the report is written.

Online (``LANGSMITH_API_KEY`` set; :func:`client_from_env`): ``Client()`` reads the key and
endpoint from the environment; :func:`sync_dataset` creates the dataset (name configurable)
or adds and updates its examples, and ``evaluate(..., upload_results=True)`` uploads the
experiment. Everything after client construction except :func:`sync_dataset` and the upload
flag is the code the offline test runs; :func:`sync_dataset` is tested on a stand-in client.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import statistics
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from graph_agent.evals import metrics, taskbench

logger = logging.getLogger(__name__)

#: The default LangSmith dataset name for TaskBench's Hugging Face domain.
DEFAULT_DATASET = "graph-agent-taskbench-hf"
#: Namespace of the example UUIDs (UUID5 of dataset name and record id).
EXAMPLE_NAMESPACE = uuid.UUID("5f0c6b8e-3c57-4f0e-9a53-7d1f2b0c9e41")
#: The DESIGN.md offline recipe's unreachable endpoint.
OFFLINE_API_URL = "http://127.0.0.1:9"
#: How long an uploading run waits for LangSmith to take its last traces and feedback.
UPLOAD_DRAIN_SECONDS = 120.0

#: A planner for the runner: request -> ``{"task_nodes": [...]}`` plus optional ``problems``
#: (validator objections), ``fallback`` (who planned instead) and ``notes``.
Predictor = Callable[[str, Mapping[str, Any]], dict[str, Any]]
#: Called after each record: (records done, total, that record's prediction).
Progress = Callable[[int, int, Mapping[str, Any]], None]


class RunnerError(RuntimeError):
    """The evaluation cannot run as asked (a bad planner spec, unreadable predictions)."""


# --------------------------------------------------------------------------- clients


def offline_client() -> Any:
    """A LangSmith client that never connects (DESIGN.md's recipe, no background thread)."""
    from langsmith import Client

    return Client(
        api_url=OFFLINE_API_URL,
        api_key="offline",
        info={},
        tracing_sampling_rate=0.0,
        auto_batch_tracing=False,
    )


def client_from_env(env: Mapping[str, str] | None = None) -> tuple[Any, bool]:
    """``(client, upload)``: a real client when ``LANGSMITH_API_KEY`` is set, else offline.

    The online client reads its key and endpoint (``LANGSMITH_ENDPOINT``) from the
    environment; this is the one line the offline tests cannot run.
    """
    env = os.environ if env is None else env
    if env.get("LANGSMITH_API_KEY", "").strip():
        from langsmith import Client

        try:
            return Client(), True
        except Exception as exc:  # a malformed endpoint or key: say so, no traceback
            raise RunnerError(f"Cannot create the LangSmith client: {exc}") from exc
    return offline_client(), False


# --------------------------------------------------------------------------- examples


def dataset_uuid(dataset_name: str) -> uuid.UUID:
    """The local dataset id offline examples carry (stable per name)."""
    return uuid.uuid5(EXAMPLE_NAMESPACE, f"dataset:{dataset_name}")


def example_id(dataset_name: str, record_id: str) -> uuid.UUID:
    """The example id of a record in a dataset: the same on every run."""
    return uuid.uuid5(EXAMPLE_NAMESPACE, f"{dataset_name}:{record_id}")


def example_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs, reference outputs, metadata and split of one record's example."""
    rid = str(record.get("id", ""))
    kind = str(record.get("type", "unknown"))
    split = taskbench.split_of(rid)
    return {
        "inputs": {"instruction": taskbench.request_of(record), "id": rid},
        "outputs": {"task_nodes": record.get("task_nodes"), "type": kind, "id": rid},
        "metadata": {"type": kind, "split": split, "record_id": rid},
        "split": split,
    }


def local_examples(records: Sequence[Mapping[str, Any]], dataset_name: str) -> list[Any]:
    """In-memory ``Example`` objects for an offline run (nothing is created anywhere)."""
    from langsmith.schemas import Example

    ds = dataset_uuid(dataset_name)
    out = []
    for record in records:
        p = example_payload(record)
        out.append(
            Example(
                id=example_id(dataset_name, str(record.get("id", ""))),
                dataset_id=ds,
                inputs=p["inputs"],
                outputs=p["outputs"],
                metadata=p["metadata"],
            )
        )
    return out


def sync_dataset(
    client: Any,
    dataset_name: str,
    records: Sequence[Mapping[str, Any]],
    description: str = "TaskBench, Hugging Face tools domain (graph-agent)",
) -> list[Any]:
    """Create the LangSmith dataset or bring it up to date; its examples for ``records``.

    Examples are keyed by :func:`example_id`: missing ones are created, changed ones
    updated, others left alone (a run on one split leaves the other split's examples).
    Returns the examples in the order of ``records``.
    """
    from langsmith.schemas import ExampleCreate, ExampleUpdate

    if client.has_dataset(dataset_name=dataset_name):
        dataset = client.read_dataset(dataset_name=dataset_name)
    else:
        dataset = client.create_dataset(dataset_name, description=description)
    wanted = {example_id(dataset_name, str(r.get("id", ""))): r for r in records}
    existing = {ex.id: ex for ex in client.list_examples(dataset_id=dataset.id)}
    create, update = [], []
    for eid, record in wanted.items():
        p = example_payload(record)
        old = existing.get(eid)
        if old is None:
            create.append(
                ExampleCreate(
                    id=eid,
                    inputs=p["inputs"],
                    reference_outputs=p["outputs"],
                    metadata=p["metadata"],
                    split=p["split"],
                )
            )
        elif (old.inputs, old.outputs) != (p["inputs"], p["outputs"]):
            update.append(
                ExampleUpdate(
                    id=eid,
                    inputs=p["inputs"],
                    outputs=p["outputs"],
                    metadata=p["metadata"],
                    split=p["split"],
                )
            )
    if create:
        client.create_examples(dataset_id=dataset.id, examples=create)
    if update:
        client.update_examples(dataset_id=dataset.id, updates=update)
    logger.info(
        "LangSmith dataset %s: %d example(s) created, %d updated, %d unchanged",
        dataset_name,
        len(create),
        len(update),
        len(wanted) - len(create) - len(update),
    )
    by_id = {ex.id: ex for ex in client.list_examples(dataset_id=dataset.id)}
    missing = [str(eid) for eid in wanted if eid not in by_id]
    if missing:
        raise RunnerError(f"LangSmith dataset {dataset_name} lacks examples {missing[:3]}...")
    return [by_id[eid] for eid in wanted]


# --------------------------------------------------------------------------- planners


def offline_predictor(models_dir: str | Path | None = None, warm: bool = True) -> Predictor:
    """The offline planner exactly as ``graph-agent plan --batch`` plans (validated).

    ``warm`` plans one request up front, so loading the embedding model is not timed as
    the first record's latency.
    """
    from graph_agent.planning.batch import plan_for_taskbench

    if warm:
        plan_for_taskbench("warm up: transcribe a.wav and summarize it", models_dir)

    def predict(request: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return plan_for_taskbench(request, models_dir)

    return predict


def llm_predictor(spec: str, max_repairs: int = 2) -> Predictor:
    """The LLM planner for chat-model ``spec`` (loaded once), as ``eval_llm_planner`` runs it.

    Plans are checked against the whole task vocabulary (TaskBench asks for tools no local
    model runs); files the request names are inputs of the kind their suffix says.
    """
    from graph_agent.chat import LLMPlannerError, make_chat_model
    from graph_agent.evals.eval_llm_planner import _validator
    from graph_agent.planning.batch import inputs_named_in
    from graph_agent.planning.formats import to_taskbench
    from graph_agent.planning.llm import plan_with_llm_result

    try:
        model = make_chat_model(spec)
    except LLMPlannerError as exc:
        raise RunnerError(str(exc)) from exc

    def predict(request: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        result = plan_with_llm_result(
            request,
            dict(inputs_named_in(request)),
            model,
            max_repairs,
            planner=spec,
            validator=_validator,
        )
        return {
            "task_nodes": to_taskbench(result.plan)["task_nodes"],
            "fallback": result.fallback,
            "notes": list(result.notes),
        }

    return predict


def file_predictor(path: str | Path) -> Predictor:
    """Predictions read from a file (TaskBench or HuggingGPT format, by record id)."""
    from graph_agent.evals.datasets import load_plans

    try:
        plans = {str(r["id"]): r["task_nodes"] for r in load_plans(path)}
    except taskbench.TaskBenchDataError as exc:
        raise RunnerError(str(exc)) from exc

    def predict(request: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        rid = str(inputs.get("id", ""))
        if rid not in plans:
            raise LookupError(f"no prediction for record {rid} in {path}")
        return {"task_nodes": plans[rid]}

    return predict


# --------------------------------------------------------------------------- target, evaluators


def make_target(
    predict: Predictor, total: int = 0, progress: Progress | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The function ``evaluate`` calls per example: plan, time it, never raise."""
    done = 0

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        nonlocal done
        from graph_agent.errors import RequestError
        from graph_agent.planning.plan import PlanError

        request = str(inputs.get("instruction") or "")
        started = time.perf_counter()
        out: dict[str, Any] = {"task_nodes": [], "error": None}
        try:
            planned = predict(request, inputs)
            out["task_nodes"] = planned.get("task_nodes") or []
            for key in ("problems", "fallback", "notes"):
                if planned.get(key) is not None:
                    out[key] = planned[key]
        except (RequestError, PlanError, LookupError) as exc:
            out["error"] = f"no plan: {exc}"
        except Exception as exc:  # one record's crash must not end the run
            logger.debug("planner crashed on %s", inputs.get("id"), exc_info=True)
            out["error"] = f"crashed: {type(exc).__name__}: {exc}"
        out["seconds"] = round(time.perf_counter() - started, 4)
        done += 1
        if progress is not None:
            progress(done, total, {**out, "id": inputs.get("id")})
        return out

    return target


def taskbench_evaluator(
    tools: Sequence[str], output_types: Mapping[str, str]
) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """Per-example evaluator: this record's counts, its HIVE rates and its noise counts."""

    def taskbench_counts(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict:
        noise = taskbench.Noise()
        record = {
            "id": reference_outputs.get("id"),
            "type": reference_outputs.get("type"),
            "task_nodes": reference_outputs.get("task_nodes"),
        }
        counts = metrics.record_counts(
            record, (outputs or {}).get("task_nodes"), tools, output_types, noise
        )
        noise_result = {
            "key": "noise",
            "score": sum(noise.counts.values()),
            "metadata": noise.as_dict(),
        }
        if counts is None:
            return {"results": [{"key": "gold_unparsable", "score": 1}, noise_result]}
        unscored = {k for k in metrics.RATE_METRICS if not counts[f"{k}_scored"]}
        results = [
            {"key": key, "score": value}
            for key, value in counts.items()
            if not key.endswith("_scored") and key not in unscored
        ]
        return {"results": [*results, noise_result]}

    return taskbench_counts


def taskbench_summary_evaluator(
    tools: Sequence[str], output_types: Mapping[str, str], keep: dict[str, Any] | None = None
) -> Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]:
    """Summary evaluator: micro F1s and rates over the whole experiment.

    ``keep`` (a dict) receives the full summary (by type too) for the caller's report.
    """

    def taskbench_micro(
        outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
    ) -> dict[str, Any]:
        rows = []
        for out, ref in zip(outputs, reference_outputs, strict=True):
            record = {"id": ref.get("id"), "task_nodes": ref.get("task_nodes")}
            counts = metrics.record_counts(
                record, (out or {}).get("task_nodes"), tools, output_types
            )
            rows.append((str(ref.get("type", "unknown")), counts))
        summary = metrics.summarize(rows)
        if keep is not None:
            keep.update(summary)
        overall = summary["overall"]
        keys = [f"{k}_f1" for k in metrics.F1_METRICS] + list(metrics.RATE_METRICS)
        return {"results": [{"key": k, "score": overall[k]} for k in keys]}

    return taskbench_micro


# --------------------------------------------------------------------------- the run


def _row_counts(results: Sequence[Any]) -> tuple[dict[str, float] | None, dict[str, int]]:
    """A row's counts (as :func:`metrics.record_counts` gives them) and its noise counts."""
    by_key = {r.key: r for r in results}
    if "noise" not in by_key:  # the evaluator failed (LangSmith logged why): not scored
        return None, {"evaluator_failed": 1}
    noise = dict(by_key["noise"].metadata or {})
    if "gold_unparsable" in by_key:
        return None, noise
    counts: dict[str, float] = {
        k: float(r.score or 0) for k, r in by_key.items() if k not in ("noise",)
    }
    for key in metrics.RATE_METRICS:
        counts[f"{key}_scored"] = 1.0 if key in by_key else 0.0
    return counts, noise


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def run_taskbench(
    records: Sequence[Mapping[str, Any]],
    predict: Predictor,
    *,
    client: Any = None,
    upload: bool = False,
    dataset_name: str = DEFAULT_DATASET,
    experiment_prefix: str = "taskbench",
    metadata: Mapping[str, Any] | None = None,
    tools: Sequence[str] | None = None,
    output_types: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Plan and score ``records`` through ``langsmith.evaluate``; the JSON-ready report.

    ``client`` defaults to :func:`offline_client` (then ``upload`` must stay False). With
    ``upload`` the examples come from :func:`sync_dataset` and the experiment is uploaded.
    The client is closed before returning (without a drain when offline).
    """
    from langsmith import evaluate

    if not records:
        raise RunnerError("no TaskBench records to score (check --data, --split and --limit)")
    output_types = dict(output_types) if output_types is not None else taskbench.tool_output_types()
    tools = list(tools) if tools is not None else list(output_types)
    own_client = client is None
    if own_client:
        if upload:
            raise RunnerError("uploading needs a LangSmith client (see client_from_env)")
        client = offline_client()
    kept: dict[str, Any] = {}
    printed = io.StringIO()
    try:
        if upload:
            try:
                examples = sync_dataset(client, dataset_name, records)
            except RunnerError:
                raise
            except Exception as exc:  # auth, network, quota: one clear line
                raise RunnerError(f"LangSmith dataset {dataset_name!r}: {exc}") from exc
        else:
            examples = local_examples(records, dataset_name)
        target = make_target(predict, len(examples), progress)
        with warnings.catch_warnings(), contextlib.redirect_stdout(printed):
            # Running without upload is LangSmith's documented offline mode; its beta
            # warning and its "Starting evaluation" line are not for our users.
            warnings.filterwarnings("ignore", message=".*upload_results.*")
            results = evaluate(
                target,
                data=examples,
                evaluators=[taskbench_evaluator(tools, output_types)],
                summary_evaluators=[taskbench_summary_evaluator(tools, output_types, kept)],
                experiment_prefix=experiment_prefix,
                metadata=dict(metadata or {}),
                max_concurrency=0,
                client=client,
                upload_results=upload,
                blocking=True,
            )
            rows = list(results)
            experiment = results.experiment_name
            url = results.url if upload else None
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=UPLOAD_DRAIN_SECONDS if upload else 0)
    if printed.getvalue().strip():
        logger.log(logging.INFO if upload else logging.DEBUG, "%s", printed.getvalue().strip())
    return _report(rows, kept, experiment, url, upload, dataset_name)


def _report(
    rows: list[dict[str, Any]],
    summary: dict[str, Any],
    experiment: str,
    url: str | None,
    upload: bool,
    dataset_name: str,
) -> dict[str, Any]:
    noise: Counter[str] = Counter()
    scored: list[tuple[str, dict[str, float] | None]] = []
    predictions, seconds = [], []
    no_plan = rejected = fallbacks = 0
    for row in rows:
        example, run = row["example"], row["run"]
        out = dict(run.outputs or {})
        counts, record_noise = _row_counts(row["evaluation_results"]["results"])
        noise.update(record_noise)
        kind = str((example.outputs or {}).get("type", "unknown"))
        scored.append((kind, counts))
        seconds.append(float(out.get("seconds") or 0.0))
        no_plan += bool(out.get("error"))
        rejected += bool(out.get("problems"))
        fallbacks += out.get("fallback") is not None
        predictions.append(
            {
                "id": (example.outputs or {}).get("id"),
                "type": kind,
                "task_nodes": out.get("task_nodes") or [],
                **{k: out[k] for k in ("error", "problems", "fallback") if out.get(k)},
                "seconds": out.get("seconds"),
                "counts": {k: int(v) for k, v in (counts or {}).items()},
            }
        )
    scores = metrics.summarize(scored)
    noise_summary = taskbench.Noise()
    noise_summary.update(noise)
    noise_summary.log_summary()
    return {
        "records": len(rows),
        "scores": scores,
        "summary_evaluator": summary.get("overall", {}),
        "noise": noise_summary.as_dict(),
        "no_plan": no_plan,
        "rejected_by_validator": rejected,
        "fallbacks": fallbacks,
        "latency_ms": {
            "p50": round(1000 * _percentile(seconds, 0.5), 2),
            "p99": round(1000 * _percentile(seconds, 0.99), 2),
            "mean": round(1000 * statistics.fmean(seconds), 2) if seconds else 0.0,
        },
        "langsmith": {
            "mode": "uploaded" if upload else "offline",
            "experiment": experiment,
            "dataset": dataset_name,
            **({"url": url} if url else {}),
        },
        "predictions": predictions,
    }


__all__ = [
    "DEFAULT_DATASET",
    "Predictor",
    "RunnerError",
    "client_from_env",
    "example_id",
    "file_predictor",
    "llm_predictor",
    "local_examples",
    "make_target",
    "offline_client",
    "offline_predictor",
    "run_taskbench",
    "sync_dataset",
    "taskbench_evaluator",
    "taskbench_summary_evaluator",
]
