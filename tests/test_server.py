"""`langgraph dev` loads the exported graph and answers a real run on 127.0.0.1."""

from __future__ import annotations

import json
import urllib.request

import pytest

# The ``server`` fixture (``langgraph dev`` on a free port) is in conftest.py, shared with
# test_server_sdk.py.
pytestmark = pytest.mark.server


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
        },
        timeout=300,
    )
    assert run["report"]["failures"] == [], run
    assert run["report"]["steps"][0]["model"] == "efficientnet-lite0"
    assert run["outputs"]["node-0"]
