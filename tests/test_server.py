"""`langgraph dev` loads the exported graph and answers a real run on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url: str, body: dict | None = None, timeout: float = 10) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method="POST" if data else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    langgraph = Path(sys.executable).with_name("langgraph")
    log = (tmp_path / "server.log").open("w")
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
            str(ROOT / "langgraph.json"),
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail("langgraph dev exited early:\n" + (tmp_path / "server.log").read_text())
            try:
                _call(f"{base}/ok", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        "langgraph dev did not come up:\n"
                        + (tmp_path / "server.log").read_text()[-3000:]
                    )
                time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_dev_server_loads_the_graph_and_runs_a_request(server, sample_photo, tmp_path):
    assistants = _call(f"{server}/assistants/search", {"graph_id": "graph-agent"})
    assert assistants and assistants[0]["graph_id"] == "graph-agent"
    run = _call(
        f"{server}/runs/wait",
        {
            "assistant_id": "graph-agent",
            "input": {
                "request": "what is in photo.jpg",
                "inputs": {"photo.jpg": str(sample_photo)},
            },
            "context": {"artifacts_dir": str(tmp_path / "artifacts")},
        },
        timeout=300,
    )
    assert run["report"]["failures"] == [], run
    assert run["report"]["steps"][0]["model"] == "efficientnet-lite0"
    assert run["outputs"]["node-0"]
