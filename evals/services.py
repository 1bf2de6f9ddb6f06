"""Throw-away local services for tests and benchmarks: PostgreSQL and ``langgraph dev``.

Both listen on 127.0.0.1 only, on a free port, in a temp dir of their own, and are stopped by
their own PID (process group), so nothing else on the machine is touched. The test suite
(``tests/conftest.py``, ``tests/postgres_server.py``) and the load test
(``evals/load_test.py``) share them, so what is measured is what is tested.

PostgreSQL: ``initdb`` makes a cluster in a fresh temp dir and ``postgres`` serves it (and a
unix socket in the same dir, never the system's). initdb and postgres refuse to run as root,
so under root (CI) the cluster runs as the ``postgres`` system user that Debian's package
creates (``subprocess``'s ``user=``/``group=``, no su/sudo needed) and the temp dir is given
to that user. The cluster trusts local connections and skips fsync: it is for tests.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NO_POSTGRES = (
    "PostgreSQL server binaries (initdb, postgres) are not installed: "
    "`apt-get install postgresql` (.ci/run does it), or put initdb on PATH."
)
#: Seconds ``langgraph dev`` may take to answer /ok (it imports the graph and its models).
SERVER_START_TIMEOUT_S = 120


class ServiceError(RuntimeError):
    """A local service could not start; the message says why (and its log's tail)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (it may be taken again before use)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVICE_USER = "postgres"
START_TIMEOUT_S = 60


def find_bin_dir() -> Path | None:
    """Where initdb and postgres are: Debian's layout (the newest version), else PATH."""
    candidates: list[str] = []

    def version(path: str) -> tuple[int, ...]:
        name = Path(path).parent.parent.name  # /usr/lib/postgresql/<version>/bin/initdb
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version, reverse=True)
    candidates += [str(Path(p).parent) for p in debian]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for candidate in candidates:
        folder = Path(candidate)
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


class PostgresCluster:
    """One throw-away cluster: ``start()``, use ``uri``, ``stop()`` (idempotent)."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="graph-agent-pg-"))
        self.data = self.root / "data"
        self.log_path = self.root / "postgres.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(SERVICE_USER)
                os.chown(self.root, user.pw_uid, user.pw_gid)
            except (KeyError, OSError) as exc:
                shutil.rmtree(self.root, ignore_errors=True)  # nothing left behind
                raise ServiceError(
                    f"Running as root, the throw-away cluster needs the {SERVICE_USER!r} system "
                    "user (apt-get install postgresql creates it): initdb refuses to run as "
                    f"root ({type(exc).__name__}: {exc})."
                ) from None
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    @property
    def uri(self) -> str:
        return f"postgresql://{SERVICE_USER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        done = subprocess.run(args, capture_output=True, text=True, cwd=self.root, **self._as)
        if done.returncode != 0:
            raise ServiceError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> None:
        # trust on 127.0.0.1 and the private socket only; no sync: a test cluster
        # needs no durability against power loss, and fsync makes every commit slow here.
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SERVICE_USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-locale",
            "--no-sync",
        )
        last_error = ""
        for _ in range(3):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            with self.log_path.open("ab") as log:  # postgres keeps its own descriptor
                self.proc = subprocess.Popen(
                    [
                        str(self.bin_dir / "postgres"),
                        "-D",
                        str(self.data),
                        "-h",
                        "127.0.0.1",
                        "-p",
                        str(self.port),
                        "-k",
                        str(self.root),
                        "-c",
                        "fsync=off",
                        "-c",
                        "synchronous_commit=off",
                        "-c",
                        "full_page_writes=off",
                        "-c",
                        "max_connections=200",
                    ],
                    cwd=self.root,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    **self._as,
                )
            last_error = self._wait_ready()
            if not last_error:
                return
            self._stop_proc()
        raise ServiceError(f"PostgreSQL did not start: {last_error}\n{self._log_tail()}")

    def _wait_ready(self) -> str:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return f"postgres exited with code {self.proc.returncode}"
            try:
                with psycopg.connect(self.uri, connect_timeout=2):
                    return ""
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    return f"not accepting connections after {START_TIMEOUT_S} s ({exc})"
            time.sleep(0.2)

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def _stop_proc(self) -> None:
        """Stop our postmaster by its PID: SIGINT (fast shutdown), then SIGKILL."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # Its own session's group: the postmaster and its backends, nothing else.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        self._stop_proc()
        shutil.rmtree(self.root, ignore_errors=True)

    @classmethod
    @contextlib.contextmanager
    def started(cls) -> Iterator[PostgresCluster]:
        """A running cluster for the ``with`` block; stopped and deleted after it."""
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise ServiceError(NO_POSTGRES)
        cluster = cls(bin_dir)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()


@dataclass
class DevServer:
    """A running ``langgraph dev``: its base URL and process group id (for RSS sampling)."""

    url: str
    pgid: int
    log_path: Path


@contextlib.contextmanager
def dev_server(
    log_dir: Path, env: dict[str, str] | None = None, extra_args: list[str] | None = None
) -> Iterator[DevServer]:
    """Run ``langgraph dev`` on 127.0.0.1 (a free port) with ``env`` added, until the block ends.

    It starts in a session of its own and is stopped by that process group id (SIGTERM, then
    SIGKILL after 20 s), so no other process is touched.
    """
    root = Path(__file__).resolve().parents[1]
    if not (root / "langgraph.json").is_file():
        raise ServiceError(
            f"No langgraph.json in {root}: run this from a source checkout of graph-agent "
            "(pip install -e .), where the server's config lives."
        )
    langgraph = Path(sys.executable).with_name("langgraph")
    if not langgraph.is_file():
        raise ServiceError(
            f"The langgraph CLI is not installed next to {sys.executable}: "
            "pip install -e '.[server]' (make test installs it)."
        )
    port = free_port()
    log_path = log_dir / "server.log"
    with log_path.open("w") as log:  # the child keeps its own copy of the descriptor
        try:
            proc = subprocess.Popen(
                [
                    str(langgraph),
                    "dev",
                    "--no-browser",
                    "--no-reload",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--config",
                    str(root / "langgraph.json"),
                    *(extra_args or []),
                ],
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={
                    **os.environ,
                    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
                    "LANGSMITH_TRACING": "false",
                    **(env or {}),
                },
            )
        except OSError as exc:
            raise ServiceError(f"Could not start {langgraph} dev: {exc}") from None
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise ServiceError("langgraph dev exited early:\n" + log_path.read_text())
            try:
                with urllib.request.urlopen(f"{base}/ok", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise ServiceError(
                        "langgraph dev did not come up:\n" + log_path.read_text()[-3000:]
                    ) from None
                time.sleep(1)
        yield DevServer(url=base, pgid=proc.pid, log_path=log_path)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have exited on its own
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
