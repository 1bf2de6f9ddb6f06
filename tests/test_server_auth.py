"""LangGraph custom auth (``auth.path`` in ``langgraph.json`` -> ``graph_agent/server_auth.py``)
on a real ``langgraph dev`` started with API keys, on 127.0.0.1, stopped by PID.

Without a key nothing answers (``/mcp`` included); with one, a caller runs the graph, sees only
its own threads, and cannot make assistants. The same server has low upload bounds, to try the
web page's upload route past them.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.server

KEYS = {"alice": "alice-key-1234567890", "bob": "bob-key-0987654321"}
#: The keyed server's upload bounds (its operator's environment).
UPLOAD_MAX_MB, UPLOAD_MAX_FILES = 0.1, 3


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory) -> Iterator[str]:
    from conftest import dev_server

    base = tmp_path_factory.mktemp("keyed-server")
    env = {
        "GRAPH_AGENT_API_KEYS": ",".join(f"{name}={key}" for name, key in KEYS.items()),
        "GRAPH_AGENT_ARTIFACTS_DIR": str(base / "artifacts"),
        # Low upload bounds, so one test sees the real route refuse a file and a conversation
        # past them without sending megabytes (the sample photo, 61 KB, still fits).
        "GRAPH_AGENT_UPLOAD_MAX_MB": str(UPLOAD_MAX_MB),
        "GRAPH_AGENT_UPLOAD_MAX_FILES": str(UPLOAD_MAX_FILES),
    }
    with dev_server(base, env) as url:
        yield url


def call(url: str, body: dict[str, Any] | None = None, key: str | None = None, **headers: str):
    """(status, JSON body) of one request; errors are returned, not raised."""
    if key:
        headers["x-api-key"] = key
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body is not None else None,
        method="POST" if body is not None else "GET",
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def test_no_key_or_a_wrong_key_gets_401_on_every_door(keyed_server):
    run = {"assistant_id": "graph-agent", "input": {"request": "summarize this: hi."}}
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    for key in (None, "not-a-key"):
        status, body = call(f"{keyed_server}/runs/wait", run, key=key)
        assert status == 401 and "needs an API key" in body["detail"], body
        status, _ = call(f"{keyed_server}/mcp", mcp, key=key, **accept)
        assert status == 401
        status, _ = call(f"{keyed_server}/threads/search", {}, key=key)
        assert status == 401
    status, _ = call(f"{keyed_server}/runs/wait", run, Authorization=f"Bearer {KEYS['alice']}")
    assert status == 200  # a bearer token works as well as x-api-key


def test_a_caller_sees_only_its_own_threads(keyed_server):
    status, thread = call(f"{keyed_server}/threads", {}, key=KEYS["alice"])
    assert status == 200
    tid = thread["thread_id"]
    status, state = call(
        f"{keyed_server}/threads/{tid}/runs/wait",
        {"assistant_id": "graph-agent", "input": {"request": "summarize this: the bus is late."}},
        key=KEYS["alice"],
    )
    assert status == 200 and state.get("answer"), state
    # Bob can neither read Alice's thread nor find it, nor write into it.
    assert call(f"{keyed_server}/threads/{tid}", key=KEYS["bob"])[0] == 404
    _, found = call(f"{keyed_server}/threads/search", {}, key=KEYS["bob"])
    assert tid not in {t["thread_id"] for t in found}
    status, _ = call(
        f"{keyed_server}/threads/{tid}/state", {"values": {"request": "x"}}, key=KEYS["bob"]
    )
    assert status in (403, 404)  # no state writes for anyone, and not Alice's thread
    # Alice still can.
    assert call(f"{keyed_server}/threads/{tid}", key=KEYS["alice"])[0] == 200


def test_clients_run_the_operators_assistants_but_do_not_make_them(keyed_server):
    status, body = call(
        f"{keyed_server}/assistants",
        {"graph_id": "graph-agent", "context": {"artifacts_dir": "/"}},
        key=KEYS["alice"],
    )
    assert status == 403 and "operator" in body["detail"]
    status, found = call(
        f"{keyed_server}/assistants/search", {"graph_id": "graph-agent"}, key=KEYS["alice"]
    )
    assert status == 200 and found


def _put(url: str, data: bytes, key: str | None = None) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of one upload to the web page's upload route."""
    req = urllib.request.Request(url, data=data, method="PUT")
    if key:
        req.add_header("x-api-key", key)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def test_the_web_page_follows_the_servers_auth(keyed_server, sample_photo):
    # The page's shell holds no data and loads without a key; its API does not.
    with urllib.request.urlopen(f"{keyed_server}/", timeout=30) as resp:
        assert resp.url == f"{keyed_server}/app/" and b"<title>graph-agent" in resp.read()
    status, thread = call(f"{keyed_server}/threads", {}, key=KEYS["alice"])
    assert status == 200
    photo = sample_photo.read_bytes()
    uploads = f"{keyed_server}/app/api/threads/{thread['thread_id']}/uploads"
    files = f"{keyed_server}/app/api/threads/{thread['thread_id']}/files"
    for key in (None, "not-a-key"):
        assert _put(f"{uploads}/photo.jpg", photo, key)[0] == 401
        assert call(f"{keyed_server}/app/api/models?task=image-classification", key=key)[0] == 401
    # Bob cannot upload into Alice's thread, nor read what she uploaded: the same 404 as for
    # a thread that does not exist.
    status, body = _put(f"{uploads}/photo.jpg", photo, KEYS["bob"])
    assert status == 404 and "No such conversation" in body["detail"]
    status, body = _put(f"{uploads}/photo.jpg", photo, KEYS["alice"])
    assert status == 201 and body == {"name": "photo.jpg", "kind": "image", "size": len(photo)}
    assert call(f"{files}/uploads/photo.jpg", key=KEYS["bob"])[0] == 404
    req = urllib.request.Request(f"{files}/uploads/photo.jpg", headers={"x-api-key": KEYS["alice"]})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.read() == photo and resp.headers["Content-Type"] == "image/jpeg"
    # Names are cut to a plain name inside the thread's folder; nothing outside is served.
    status, body = _put(f"{uploads}/my%20photo%20(2).jpg", photo, KEYS["alice"])
    assert status == 201 and body["name"] == "my_photo_2.jpg", body
    assert _put(f"{uploads}/..%2F..%2Fphoto3.jpg", photo, KEYS["alice"])[0] == 404
    for name in ("..%2F..%2Fserver.log", "%2Fetc%2Fpasswd", ".upload-x"):
        assert call(f"{files}/uploads/{name}", key=KEYS["alice"])[0] == 404, name
    assert call(f"{files}/elsewhere/photo.jpg", key=KEYS["alice"])[0] == 404


def _put_chunked(url: str, data: bytes, key: str) -> tuple[int, dict[str, Any]]:
    """One upload sent in chunks with no Content-Length, so only the streamed bound can stop
    it (the declared length is checked before anything is read)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    chunks = (data[i : i + 16_384] for i in range(0, len(data), 16_384))
    try:
        conn.request(
            "PUT", parts.path, body=chunks, headers={"x-api-key": key}, encode_chunked=True
        )
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_uploads_past_the_operators_bounds_are_refused_and_say_why(keyed_server):
    status, thread = call(f"{keyed_server}/threads", {}, key=KEYS["alice"])
    assert status == 200
    uploads = f"{keyed_server}/app/api/threads/{thread['thread_id']}/uploads"
    files = f"{keyed_server}/app/api/threads/{thread['thread_id']}/files/uploads"
    big = b"The ferry leaves at noon.\n" * 6_000  # 156 KB of text: over 0.1 MB
    for send in (_put, _put_chunked):
        status, body = send(f"{uploads}/big.txt", big, KEYS["alice"])
        assert status == 413, (send.__name__, body)
        # The declared length is refused whole; a stream, once past the bound.
        size = "0.156" if send is _put else r"0\.1\d*"
        assert re.match(rf"The file is too large: {size} MB; the limit is 0\.1 MB", body["detail"])
        assert "GRAPH_AGENT_UPLOAD_MAX_MB" in body["detail"]
        assert call(f"{files}/big.txt", key=KEYS["alice"])[0] == 404  # nothing landed
    # As many files as the bound allows, then one too many.
    for n in range(UPLOAD_MAX_FILES):
        status, body = _put(f"{uploads}/note-{n}.txt", f"note {n}\n".encode(), KEYS["alice"])
        assert status == 201, body
    status, body = _put(f"{uploads}/one-more.txt", b"one more\n", KEYS["alice"])
    assert status == 413
    assert body["detail"] == (
        f"This conversation already holds {UPLOAD_MAX_FILES} files: 4 files; the limit is "
        f"{UPLOAD_MAX_FILES} files (the server's operator can change it with "
        "GRAPH_AGENT_UPLOAD_MAX_FILES). Start a new conversation."
    )
    assert call(f"{files}/one-more.txt", key=KEYS["alice"])[0] == 404
    # Replacing a file the conversation holds is not one more.
    assert _put(f"{uploads}/note-0.txt", b"note zero\n", KEYS["alice"])[0] == 201
