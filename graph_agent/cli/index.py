"""``graph-agent index build | add | remove | search | stats``: the model-card index.

Evaluation tools outside the project call ``index build --from FILE.jsonl --dir DIR`` and
``index search "text" --task TASK --dir DIR --json ...``: keep those flags stable.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from graph_agent.cli.common import EXIT_OK, UsageError, console, out
from graph_agent.context import default_models_dir


def _open(args: argparse.Namespace):
    """Catalog + index in ``--dir`` (default: the models dir), embedder from the pack."""
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.embedder import Embedder, EmbedderMissingError
    from graph_agent.retrieval_index.index import CardIndex

    models_dir = Path(args.models_dir or default_models_dir()).expanduser()
    where = Path(args.dir).expanduser() if args.dir else models_dir
    try:
        embedder = Embedder(models_dir)
    except EmbedderMissingError as exc:
        raise UsageError(str(exc)) from exc
    catalog = Catalog.in_models_dir(where)
    return where, models_dir, catalog, CardIndex(where, catalog, embedder)


def _read_jsonl(paths: list[str], models_dir: Path) -> list[Any]:
    from graph_agent.retrieval_index.ingest import local_models
    from graph_agent.retrieval_index.sources.base import CardSourceError, ImportReport
    from graph_agent.retrieval_index.sources.jsonl import jsonl_cards

    cards = []
    for path in paths:
        report = ImportReport(source=path)
        try:
            cards += list(jsonl_cards(path, local_models=local_models(models_dir), report=report))
        except CardSourceError as exc:
            raise UsageError(str(exc)) from exc
        console.print(report.summary())
    return cards


def cmd_index(args: argparse.Namespace) -> int:
    from graph_agent.retrieval_index.index import IndexCorruptError
    from graph_agent.retrieval_index.ingest import ingest_pack

    where, models_dir, catalog, index = _open(args)
    try:
        if args.action == "build":
            if where == models_dir:
                ingest_pack(models_dir, catalog)
            if args.from_:
                catalog.upsert(_read_jsonl(args.from_, models_dir))
            counts = index.build(progress=True)
            out.print_json(data={"dir": str(where), "cards": catalog.count(), "per_task": counts})
        elif args.action == "add":
            cards = _read_jsonl(args.files, models_dir)
            catalog.upsert(cards)
            added = index.add(cards, progress=True)
            out.print_json(data={"dir": str(where), "added": added, "cards": catalog.count()})
        elif args.action == "remove":
            removed = index.remove(args.ids)
            out.print_json(data={"dir": str(where), "removed": removed, "cards": catalog.count()})
        elif args.action == "search":
            return _search(args, index)
        else:
            out.print_json(data=_stats(where, catalog, index))
    except IndexCorruptError as exc:
        raise UsageError(str(exc)) from exc
    return EXIT_OK


def _search(args: argparse.Namespace, index) -> int:
    from graph_agent.retrieval_index.search import Constraints, select

    if not args.task:
        raise UsageError("index search needs --task, e.g. --task summarization.")
    try:
        constraints = Constraints.from_dict(
            {
                "licenses": args.license,
                "max_parameters": args.max_params,
                "languages": args.language,
                "prefer_smallest": args.smallest,
                "best_on": args.best_on,
                "runnable_only": args.runnable,
            }
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    chosen = select(index, args.task, args.text, constraints)
    shown = chosen.candidates[: args.k]
    if args.json:
        out.print_json(
            data={
                "task": chosen.task,
                "reason": chosen.reason,
                "rejected": chosen.rejected,
                "candidates": [
                    {
                        "id": c.id,
                        "score": c.score,
                        "relevance": c.relevance,
                        "reason": c.why,
                        "path": c.path,
                    }
                    for c in shown
                ],
            }
        )
    else:
        out.print(chosen.reason)
        for rank, c in enumerate(shown, start=1):
            out.print(f"{rank:>3}. {c.id}  score {c.score:.3f}  ({c.why})")
    return EXIT_OK


def _stats(where: Path, catalog, index) -> dict[str, Any]:
    cards = catalog.all()
    manifest = index.manifest()
    return {
        "dir": str(where),
        "cards": len(cards),
        "runnable": sum(c.runnable for c in cards),
        "catalog_version": catalog.version(),
        "index_fresh": index.is_fresh(),
        "tasks": {
            t: {"cards": n, "index": manifest.get("tasks", {}).get(t, {}).get("kind")}
            for t, n in sorted(Counter(t for c in cards for t in c.tasks).items())
        },
        "licenses": dict(Counter(c.license or "unknown" for c in cards).most_common(10)),
    }


def register(sub: argparse._SubParsersAction) -> None:
    index = sub.add_parser("index", help="the model-card catalog and its search index")
    actions = index.add_subparsers(dest="action", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--dir", help="folder holding the catalog and index (default: models dir)")
        p.add_argument("--models-dir", help="where the embedding model is installed")
        p.set_defaults(func=cmd_index)
        return p

    build = common(actions.add_parser("build", help="(re)build the index from the catalog"))
    build.add_argument(
        "--from",
        dest="from_",
        action="append",
        default=[],
        metavar="FILE.jsonl",
        help="import HuggingGPT-format cards first (repeatable)",
    )
    add = common(actions.add_parser("add", help="add or update cards without a full rebuild"))
    add.add_argument("files", nargs="+", metavar="FILE.jsonl")
    remove = common(actions.add_parser("remove", help="remove cards by id"))
    remove.add_argument("ids", nargs="+", metavar="MODEL_ID")
    common(actions.add_parser("stats", help="what the catalog and index hold"))

    search = common(actions.add_parser("search", help="rank models for a task and a text"))
    search.add_argument("text")
    search.add_argument("--task", required=True)
    search.add_argument("--json", action="store_true")
    search.add_argument("--license", action="append", default=[], metavar="L")
    search.add_argument("--max-params", type=int, metavar="N")
    search.add_argument("--smallest", action="store_true")
    search.add_argument("--language", action="append", default=[], metavar="L")
    search.add_argument("--best-on", metavar="DATASET:METRIC")
    search.add_argument("--runnable", action="store_true", help="only models runnable here")
    search.add_argument("-k", type=int, default=10, help="how many candidates to print")
