"""The server's trust boundary, tried as a hostile client would: through ``/runs/wait`` and
through ``/mcp``, against ``langgraph dev`` on 127.0.0.1 (the shared ``server`` fixture,
started and stopped by PID in conftest.py).

Each case checks three things: nothing was read, written or sent; the client got one clear
error (no ``__error__``, no traceback); and the error names inputs, not server paths. The
last tests show the same runs succeeding when the operator allows the input.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVER_TOKEN

pytestmark = pytest.mark.server

SECRET = "the-server-secret-line-42"
#: What a run reads aloud, and its follow-up transcribes back.
SPOKEN_LINE = "The meeting moved to Friday at noon."


def _post(url: str, body: dict[str, Any], timeout: float = 300, **headers: str) -> Any:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


def run_wait(server: str, inputs: Any = None, context: Any = None, **extra: Any) -> dict:
    """One stateless run through ``/runs/wait``; the final state (HTTP 200 asserted)."""
    body: dict[str, Any] = {
        "assistant_id": "graph-agent",
        "input": {"request": extra.pop("request", "summarize notes.txt"), **extra},
    }
    if inputs is not None:
        body["input"]["inputs"] = inputs
    if context is not None:
        body["context"] = context
    return _post(f"{server}/runs/wait", body)


def mcp_call(server: str, arguments: dict[str, Any], context: Any = None) -> str:
    """The same run as an MCP ``tools/call``; the tool's text result."""
    headers = {"Accept": "application/json, text/event-stream"}
    listed = _post(f"{server}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, **headers)
    (tool,) = [t["name"] for t in listed["result"]["tools"]]
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if context is not None:
        params["context"] = context
    answer = _post(
        f"{server}/mcp",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params},
        **headers,
    )
    result = answer["result"]
    assert not result.get("isError"), result  # a refusal is an answer, not a crashed run
    return " ".join(c["text"] for c in result["content"])


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory) -> Path:
    """A file outside every input root, as a key or a config on the server would be."""
    path = tmp_path_factory.mktemp("server-private") / "secret.txt"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


class _Listener(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]

    def _record(self) -> None:
        self.seen.append({"path": self.path, **dict(self.headers)})
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST = _record

    def log_message(self, *args: Any) -> None:  # keep the test output clean
        pass


@pytest.fixture
def client_url() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A URL a client controls (on 127.0.0.1), and every request it received."""
    seen: list[dict[str, str]] = []
    handler = type("Handler", (_Listener,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _clear(state: dict[str, Any], *words: str) -> str:
    """The answer of a refused run: an answer, no ``__error__``, no traceback, each word."""
    assert "__error__" not in state, state
    answer = state["answer"]
    assert "Traceback" not in json.dumps(state)
    for word in words:
        assert word in answer, answer
    return answer


# --------------------------------------------------------------------------- reading files


@pytest.mark.parametrize("via", ["runs", "mcp"])
def test_a_client_cannot_read_a_server_file(server, secret_file, via):
    inputs = {"notes.txt": str(secret_file)}
    if via == "runs":
        text = json.dumps(run_wait(server, inputs))
    else:
        text = mcp_call(server, {"request": "summarize notes.txt", "inputs": inputs})
    assert SECRET not in text
    assert str(secret_file.parent) not in text  # the path is not echoed either
    assert "Input 'notes.txt' is a file path that is not in the folders this server" in text


@pytest.mark.parametrize("via", ["runs", "mcp"])
def test_a_server_path_written_in_the_request_is_not_read(server, secret_file, via):
    request = {"request": f"summarize {secret_file} please"}
    text = json.dumps(run_wait(server, **request)) if via == "runs" else mcp_call(server, request)
    assert SECRET not in text


def test_a_symlink_in_an_input_root_to_a_server_file_is_refused(server, server_dirs, secret_file):
    link = server_dirs["uploads"] / "innocent.txt"
    link.symlink_to(secret_file)
    try:
        state = run_wait(server, {"notes.txt": str(link)})
    finally:
        link.unlink()
    assert SECRET not in json.dumps(state)
    _clear(state, "Input 'notes.txt' is a file path that is not in the folders")


def test_a_missing_path_and_an_existing_one_get_the_same_answer(server, secret_file):
    """No oracle: the client cannot tell which server paths exist."""
    there = run_wait(server, {"notes.txt": str(secret_file)})["answer"]
    missing = run_wait(server, {"notes.txt": str(secret_file.with_name("nope.txt"))})["answer"]
    assert there == missing


def _status(url: str, body: dict[str, Any]) -> tuple[int, str]:
    import urllib.error

    try:
        _post(url, body)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    return 200, ""


def test_a_client_cannot_write_thread_state(server, secret_file, server_dirs):
    """Written state could hand a step any path as an input, an earlier result or a model
    folder; the server's auth refuses the writes (the graph checks those paths too, see
    test_a_state_path_is_refused_by_the_graph_too)."""
    allowed = server_dirs["uploads"] / "allowed.txt"
    allowed.write_text("The ferry leaves at noon and returns at six.", encoding="utf-8")
    thread = _post(f"{server}/threads", {})["thread_id"]
    waiting = _post(
        f"{server}/threads/{thread}/runs/wait",
        {
            "assistant_id": "graph-agent",
            "input": {"request": "summarize notes.txt", "inputs": {"notes.txt": str(allowed)}},
            "context": {"approve_plan": True},  # stop before anything runs
        },
    )
    assert waiting.get("__interrupt__"), waiting
    evil = {"inputs": {"notes.txt": str(secret_file)}}
    status, body = _status(f"{server}/threads/{thread}/state", {"values": evil})
    assert status == 403 and "cannot write a thread's state" in body
    for command in ({"update": evil, "resume": True}, {"goto": "run_steps"}):
        status, body = _status(
            f"{server}/threads/{thread}/runs/wait",
            {"assistant_id": "graph-agent", "command": command},
        )
        assert status == 403 and "command.update, command.goto" in body
    # A thread created with state (``supersteps``) is created empty: the write is refused.
    superstep = {"updates": [{"values": evil, "as_node": "plan"}]}
    answer = _post(f"{server}/threads", {"supersteps": [superstep]})
    assert "cannot write a thread's state" in answer["detail"]
    # Resuming is what clients do: the plan runs on the allowed file.
    final = _post(
        f"{server}/threads/{thread}/runs/wait",
        {"assistant_id": "graph-agent", "command": {"resume": True}},
    )
    assert SECRET not in json.dumps(final) and final.get("report"), final


# --------------------------------------------------------------------------- writing, settings


@pytest.mark.parametrize("via", ["runs", "mcp"])
@pytest.mark.parametrize("setting", ["artifacts_dir", "models_dir"])
def test_a_client_cannot_choose_where_the_server_writes(server, tmp_path, setting, via):
    target = tmp_path / "client-chosen"
    context = {setting: str(target)}
    request = {"request": "summarize this: the meeting moved to Friday at noon."}
    if via == "runs":
        text = _clear(run_wait(server, context=context, **request), setting)
    else:
        text = mcp_call(server, request, context=context)
    assert f"{setting} is set by the server's operator, not by a client" in text
    assert not target.exists()


def test_a_client_cannot_send_the_servers_token_elsewhere(server, client_url):
    url, seen = client_url
    context = {
        "inference_endpoint": f"openai-community/gpt2={url}",
        "remote_min_params_m": 0,
        "inference_provider": "hf-inference",
    }
    state = run_wait(server, context=context, request="summarize this: the bus leaves at 9.")
    answer = _clear(state, "inference_endpoint", "remote_min_params_m", "inference_provider")
    assert "set by the server's operator" in answer
    assert seen == []  # nothing reached the client's URL, so no token either
    assert SERVER_TOKEN not in json.dumps(state)


@pytest.mark.parametrize("via", ["runs", "mcp"])
def test_a_client_cannot_point_the_planner_at_its_url(server, client_url, via):
    url, seen = client_url
    context = {"planner": f"openai-compatible:any-model@{url}/v1"}
    request = {"request": "summarize this: the bus leaves at 9."}
    if via == "runs":
        text = _clear(run_wait(server, context=context, **request))
    else:
        text = mcp_call(server, request, context=context)
    assert "planner is set by the server's operator" in text
    assert seen == []


def test_client_numbers_are_capped(server):
    state = run_wait(server, context={"max_retries": 1000}, request="summarize this: hi.")
    _clear(state, "max_retries may be at most 5")


# --------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    ("payload", "context", "words"),
    [
        ({"inputs": ["a.wav"]}, None, "'inputs' must be an object"),
        ({"inputs": {"a.txt": 5}}, None, "Input 'a.txt' must be a file path or text"),
        ({"constraints": [1, 2]}, None, "'constraints' must be an object"),
        ({}, {"max_retries": "lots"}, "Setting 'max_retries' must be a number"),
        ({}, {"approve_plan": "maybe"}, "Setting 'approve_plan' must be true or false"),
    ],
)
def test_wrong_types_are_one_clear_error(server, payload, context, words):
    body = {"request": "summarize this: hello.", **payload}
    _clear(run_wait(server, context=context, **body), words)


def test_an_error_names_the_input_not_the_server_path(server, server_dirs):
    """A damaged recording inside an input root: the client learns its input's name only."""
    broken = server_dirs["uploads"] / "sub" / "rec-0017.wav"
    broken.parent.mkdir(exist_ok=True)
    broken.write_bytes(b"RIFF" + bytes(200))
    state = run_wait(server, {"talk.wav": str(broken)}, request="transcribe talk.wav")
    _clear(state, "talk.wav could not be read as audio")
    text = json.dumps(state)
    assert str(server_dirs["uploads"]) not in text and "rec-0017" not in text


# --------------------------------------------------------------------------- allowed inputs


@pytest.mark.parametrize("via", ["runs", "mcp"])
def test_an_input_under_an_operator_root_runs(server, server_dirs, via):
    notes = server_dirs["uploads"] / f"notes-{via}.txt"
    notes.write_text(
        "The library opens at nine on weekdays and at ten on Saturdays. It is closed on "
        "Sundays. Members may borrow twelve books at a time for three weeks.",
        encoding="utf-8",
    )
    arguments = {
        "request": "how many books can members borrow? use notes.txt",
        "inputs": {"notes.txt": str(notes)},
    }
    if via == "runs":
        state = run_wait(server, arguments["inputs"], request=arguments["request"])
        assert state["report"]["failures"] == [], state["answer"]
        text = json.dumps(state)
    else:
        text = mcp_call(server, arguments)
    assert "twelve" in text.lower() or "12" in text
    # Its outputs were written under the operator's artifact folder, nowhere else.
    assert any(server_dirs["artifacts"].rglob("report.json"))


# --------------------------------------------------------------------------- what a client sees


async def _speak_then_transcribe(server: str) -> dict[str, Any]:
    """A run that makes audio, streamed with every mode the web page reads, then a follow-up
    that reads that audio: (custom events, update chunks, state after each)."""
    from langgraph_sdk import get_client

    client = get_client(url=server, api_key=None)
    thread = (await client.threads.create())["thread_id"]
    seen: dict[str, Any] = {"thread": thread, "events": [], "updates": []}
    for turn, request in enumerate((f"read '{SPOKEN_LINE}' aloud", "transcribe that speech")):
        async for part in client.runs.stream(
            thread,
            "graph-agent",
            input={"request": request},
            stream_mode=["custom", "updates"],
        ):
            assert part.event != "error", part.data
            if part.event == "custom":
                seen["events"].append(part.data)
            elif part.event == "updates":
                seen["updates"].append(part.data)
        seen[f"state-{turn}"] = (await client.threads.get_state(thread))["values"]
    return seen


def test_a_client_sees_artifacts_by_name_never_server_folders(server, server_dirs):
    """The answer, outputs, both reports and the progress events of a run that made audio
    name it by file name; the page fetches it by that name, and a follow-up on the thread
    still reads it (the state's results keep the real path, server-side)."""
    import asyncio

    from conftest import INSTALLED, TEST_HOME

    seen = asyncio.run(_speak_then_transcribe(server))
    first = seen["state-0"]
    (name,) = first["outputs"].values()
    assert name.startswith("node-0-speech-") and name.endswith(".wav"), name
    assert first["report"]["steps"][0]["artifact"] == name and name in first["answer"]
    assert f"[`{name}`](<{name}>)" in first["report_markdown"]
    shown = {k: first[k] for k in ("answer", "outputs", "report", "report_markdown")}
    responded = [chunk["respond"] for chunk in seen["updates"] if "respond" in chunk]
    assert len(responded) == 2
    text = json.dumps([shown, responded, seen["events"], seen["state-1"]["outputs"]])
    folders = {
        server_dirs["artifacts"],
        server_dirs["artifacts"].resolve(),
        TEST_HOME / "models",
        INSTALLED,
        TEST_HOME / "uploads",
    }
    for folder in folders:
        assert str(folder) not in text, folder
    # The server still finds the file by its real path: the page's file route serves it ...
    url = f"{server}/app/api/threads/{seen['thread']}/files/outputs/{name}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.headers["content-type"].startswith("audio/") and answer.read(4) == b"RIFF"
    # ... and a follow-up transcribes it.
    follow = seen["state-1"]
    assert follow["report"]["failures"] == [], follow["answer"]
    heard = follow["outputs"]["node-0"].lower()
    assert "friday" in heard and "noon" in heard, heard


# --------------------------------------------------------------------------- bounded work


def _server_rss_mb(server: str) -> float:
    """Resident memory of the ``langgraph dev`` process group serving ``server`` (/proc)."""
    port = server.rsplit(":", 1)[1]
    groups: dict[str, list[Path]] = {}
    leader = None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            group = (proc / "stat").read_text().rsplit(")", 1)[1].split()[2]
        except OSError:
            continue
        groups.setdefault(group, []).append(proc)
        if b"dev" in args and port.encode() in args:
            leader = group
    assert leader is not None, f"no langgraph dev process for port {port}"
    total = 0
    for proc in groups[leader]:
        try:
            status = (proc / "status").read_text()
        except OSError:
            continue
        rss = [ln.split()[1] for ln in status.splitlines() if ln.startswith("VmRSS")]
        total += int(rss[0]) if rss else 0  # a zombie has none
    return total / 1024


def test_a_200_kb_request_is_refused_fast_without_growing_the_server(server):
    """It kept the server at 200 % CPU after the run and grew it from 3.8 to 10.7 GB."""
    import time

    pasted = ("The committee reviewed the budget and agreed to revisit it in spring. " * 3000)[
        :200_000
    ]
    before = _server_rss_mb(server)
    started = time.perf_counter()
    state = run_wait(server, request=f"summarize this: {pasted}")
    seconds = time.perf_counter() - started
    after = _server_rss_mb(server)
    print(f"200 KB request on the server: {seconds:.2f} s, RSS {before:.0f} -> {after:.0f} MB")
    _clear(state, "The request and its text are too long", "GRAPH_AGENT_MAX_TEXT_CHARS")
    assert seconds < 30
    assert after - before < 300, f"the server grew by {after - before:.0f} MB"


# --------------------------------------------------------------------------- in the graph


def test_a_state_path_is_refused_by_the_graph_too(tmp_path, secret_file):
    """Behind the auth: a server run's step refuses an input, an earlier result or a model
    folder that lies outside the operator's folders, however it reached the state."""
    from graph_agent.boundary import Reader
    from graph_agent.context import Context
    from graph_agent.errors import RequestError
    from graph_agent.nodes.executor import _checked_model, _resolve

    reader = Reader((tmp_path / "uploads",))
    step = {"args": {"audio": "<node-9>"}}
    view = {
        "inputs": {},
        "upstream": {
            "node-9": {"kind": "audio", "modality": "audio", "text": "", "path": str(secret_file)}
        },
    }
    with pytest.raises(RequestError, match="'audio' is a file path that is not in the folders"):
        _resolve(step, view, reader)
    with pytest.raises(RequestError, match="is a file path that is not in the folders"):
        _resolve({"args": {"text": str(secret_file)}}, {"inputs": {}, "upstream": {}}, reader)
    ctx = Context(models_dir=str(tmp_path / "models"))
    with pytest.raises(RequestError, match="not one this server selected"):
        _checked_model({"id": "evil", "path": str(secret_file.parent)}, ctx, reader)
    _checked_model({"id": "ok", "path": str(tmp_path / "models" / "m")}, ctx, reader)


def test_the_answer_does_not_tell_whether_a_path_exists(tmp_path):
    """Paths with no suffix, folders and relative paths: refused the same, present or not."""
    from graph_agent.boundary import Reader
    from graph_agent.errors import RequestError
    from graph_agent.inputs import input_types

    (tmp_path / "plain").write_text("x")
    reader = Reader((tmp_path / "uploads",))
    for there, missing in (
        (str(tmp_path / "plain"), str(tmp_path / "plainX")),
        (str(tmp_path), str(tmp_path / "nope") + "/"),
        ("/etc/hostname", "/etc/hostnamX"),
    ):
        answers = []
        for value in (there, missing):
            with pytest.raises(RequestError) as err:
                input_types({"notes": value}, reader)
            answers.append(str(err.value))
        assert answers[0] == answers[1]
    # Words stay words: nothing is asked of the disk for them.
    assert input_types({"notes": "plain", "dot": "."}, reader) == {"notes": "text", "dot": "text"}
