"""Installing the offline model pack: fetch, verify, convert, then move into place atomically.

Each model is built in a staging directory next to its final place and renamed into
``<models_dir>/<name>`` only when complete, so a failure at any step leaves nothing
half-written. A model whose marker records the current fingerprint is skipped, so a second
run is a no-op.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.ingest import PACK_CARD_FILE
from graph_agent.tools.model_pack.fetch import (
    PackError,
    assemble,
    download_wheels,
    member_size,
    sha256_file,
    unzip,
)
from graph_agent.tools.model_pack.manifest import MODELS, PACKS, PackModel

MARKER = ".graph-agent-pack.json"
CARD_FILE = PACK_CARD_FILE

Log = Callable[[str], None]


@dataclass
class InstallReport:
    models_dir: Path
    installed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.installed or self.refreshed)


def is_installed(models_dir: Path, model: PackModel) -> bool:
    """True when the model's directory is complete and built from the current pins."""
    try:
        marker = json.loads((models_dir / model.name / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("fingerprint") == model.fingerprint()


def verify_installed(models_dir: Path, model: PackModel) -> list[str]:
    """Re-hash an installed model's files against its marker; returns the files that differ."""
    target = models_dir / model.name
    marker = json.loads((target / MARKER).read_text())
    return [
        rel
        for rel, sha in marker["files"].items()
        if not (target / rel).is_file() or sha256_file(target / rel) != sha
    ]


def _convert(model: PackModel, src: Path, out: Path, wheels: dict[str, Path]) -> dict[str, Any]:
    """Turn the verified source files into a directory a pipeline loads; returns card facts."""
    facts: dict[str, Any] = {}
    if model.converter == "program":
        pass  # a system program: the folder holds its card, written next
    elif model.converter in ("copy", "copy_onnx"):
        archives = {u.archive for u in model.unzipped}
        for spec in model.unzipped:  # the pinned members are installed, not their archive
            unzip(spec, src / spec.archive, out / spec.name)
        for spec in model.files:
            if spec.name in archives:
                continue
            dest = out / spec.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(src / spec.name, dest)
        if labels := model.card.get("labels_from"):
            facts["labels"] = _labels(out, labels)
        if model.converter == "copy_onnx":
            from graph_agent.tools.model_pack.onnx_export import export_encoder_onnx

            export_encoder_onnx(out)
    elif model.converter == "whisper_ct2":
        from graph_agent.tools.model_pack.whisper_ct2 import convert_whisper_ct2

        convert_whisper_ct2(src, out)
    elif model.converter == "efficientnet_lite0":
        from graph_agent.tools.model_pack.efficientnet_lite import (
            convert_efficientnet_lite0,
            imagenet_labels_from_timm_wheel,
        )

        labels = imagenet_labels_from_timm_wheel(wheels["timm"])
        convert_efficientnet_lite0(src / model.files[0].name, labels, out)
    elif model.converter == "gguf":
        from graph_agent.tools.model_pack.gguf_convert import convert_gguf, gguf_metadata

        meta = gguf_metadata(src / "model.gguf")
        if not model.card.get("parameters") and meta.get("parameter_count"):
            facts["parameters"] = int(meta["parameter_count"])
        convert_gguf(src / "model.gguf", out)
    else:  # pragma: no cover - the manifest's Literal type rules this out
        raise PackError(f"Unknown converter {model.converter!r} for {model.name}.")
    return facts


def _labels(out: Path, spec: str) -> list[str]:
    """A card's class names, read from the model's own class map (``FILE:COLUMN``), so the
    card lists exactly the labels the model gives."""
    name, _, column = spec.partition(":")
    with (out / name).open(newline="", encoding="utf-8") as fh:
        return [row[column] for row in csv.DictReader(fh)]


def _card(model: PackModel, out: Path, facts: dict[str, Any], size: int) -> dict[str, Any]:
    wheels = ", ".join(f"{w.name}=={w.version}" for w in model.wheels)
    return {
        **model.card,
        **facts,
        "size_bytes": size,
        "source": f"graph-agent model pack (PyPI: {wheels}; converter: {model.converter})",
        "tags": sorted({*model.card.get("tags", []), "graph-agent-pack", "offline"}),
    }


def _write_card_and_marker(model: PackModel, out: Path, facts: dict[str, Any]) -> None:
    files = {str(p.relative_to(out)): sha256_file(p) for p in sorted(out.rglob("*")) if p.is_file()}
    size = sum((out / rel).stat().st_size for rel in files)
    if model.card:  # a helper file (no card) stays out of the selector's index
        (out / CARD_FILE).write_text(json.dumps(_card(model, out, facts, size), indent=2))
    marker = {
        "fingerprint": model.fingerprint(),
        "files": files,
        "facts": facts,
        "size": size,
        "inputs": {f.name: f.sha256 for f in model.files},
    }
    (out / MARKER).write_text(json.dumps(marker, indent=2))


def _refresh_card(model: PackModel, target: Path) -> bool:
    """Rewrite an installed model's card when only our card text changed; no re-download."""
    if not model.card:
        return False
    marker = json.loads((target / MARKER).read_text())
    card = _card(model, target, marker.get("facts", {}), marker.get("size", 0))
    path = target / CARD_FILE
    if path.is_file() and json.loads(path.read_text()) == card:
        return False
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(card, indent=2))
    tmp.replace(path)
    return True


def _place(out: Path, target: Path) -> None:
    """Swap the finished directory into place; an older copy is removed only afterwards."""
    old = None
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        target.rename(old)
    out.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def install_pack(
    pack: str,
    models_dir: Path | str,
    log: Log = print,
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
    find_links: str | None = None,
) -> InstallReport:
    """Install every model of ``pack`` that is missing or stale into ``models_dir``.

    ``progress(label, total_bytes)`` may return a callback that receives byte counts while
    files are assembled; the CLI passes a rich progress bar. ``find_links`` installs from a
    local folder of the pinned wheels instead of PyPI.
    """
    if pack not in PACKS:
        raise PackError(f"Unknown pack {pack!r}; choose one of: {', '.join(PACKS)}.")
    root = Path(models_dir).expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    with _install_lock(root):
        _sweep(root)
        return _install_locked(pack, root, log, progress, find_links)


@contextlib.contextmanager
def _install_lock(root: Path) -> Iterator[None]:
    """One installer per models directory at a time; a second one says so and stops."""
    with (root / ".install.lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PackError(
                f"Another `graph-agent models install` is running on {root}; wait for it."
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sweep(root: Path) -> None:
    """Remove what a killed install left: staging folders and replaced copies."""
    shutil.rmtree(root / ".staging", ignore_errors=True)
    for leftover in root.glob(".old-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _install_locked(
    pack: str,
    root: Path,
    log: Log,
    progress: Callable[[str, int], Callable[[int], None]] | None,
    find_links: str | None,
) -> InstallReport:
    report = InstallReport(models_dir=root)
    pending = []
    for name in PACKS[pack]:
        if not is_installed(root, MODELS[name]):
            pending.append(name)
            continue
        report.skipped.append(name)
        if _refresh_card(MODELS[name], root / name):
            report.refreshed.append(name)
            log(f"{name}: card updated")
    if not pending:
        if not report.refreshed:
            log(f"Model pack '{pack}' is already installed in {root}; nothing to do.")
        return report

    staging = root / ".staging"
    staging.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=staging) as tmp_name:
        tmp = Path(tmp_name)
        needed = {w.module: w for name in pending for w in MODELS[name].wheels}
        wheels: dict[str, Path] = {}
        if needed:  # a program's card needs no download
            with_wheels = [n for n in pending if MODELS[n].wheels]
            log(
                f"Downloading {len(needed)} pinned wheel(s) from PyPI for: {', '.join(with_wheels)}"
            )
            wheels = download_wheels(needed.values(), tmp / "wheels", find_links)
        for name in pending:
            _install_one(MODELS[name], tmp / name, wheels, root, log, progress)
            report.installed.append(name)
    return report


def _install_one(
    model: PackModel,
    work: Path,
    wheels: dict[str, Path],
    root: Path,
    log: Log,
    progress: Callable[[str, int], Callable[[int], None]] | None,
) -> None:
    src, out = work / "src", work / "out"
    src.mkdir(parents=True)
    out.mkdir()
    for spec in model.files:
        tick = (
            progress(f"{model.name}: {spec.name}", member_size(spec, wheels)) if progress else None
        )
        assemble(spec, wheels, src / spec.name, tick)
    log(
        f"{model.name}: sha256 verified for {len(model.files)} file(s); converting "
        f"({model.converter})"
    )
    try:
        facts = _convert(model, src, out, wheels)
    except Exception as exc:  # any converter failure must surface as one clear message
        raise PackError(
            f"Converting {model.name} failed ({type(exc).__name__}: {exc}). Nothing was "
            "installed for it; models installed before it are kept. Please report this."
        ) from exc
    _write_card_and_marker(model, out, facts)
    _place(out, root / model.name)
    shutil.rmtree(src, ignore_errors=True)
    log(f"{model.name}: installed in {root / model.name}")
