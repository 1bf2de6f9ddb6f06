"""Checkpoints in Postgres: a real run written and read back, an approval pause resumed by
another process, the LangGraph server on Postgres, and clear errors when it is unreachable.

All against a throw-away cluster on 127.0.0.1 (``postgres_server.py``) and the pack's real
models; the kill -9 resume test on Postgres is in ``test_cli_resume.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from graph_agent import Context, build_graph
from graph_agent.checkpointing import (
    ENV_VAR,
    CheckpointerError,
    describe,
    open_checkpointer,
    redact,
    server_checkpointer,
    sqlite_path,
)
from graph_agent.cli import main

PHOTO_REQUEST = "what is in photo.jpg"


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _thread(name: str) -> str:
    return f"{name}-{os.getpid()}-{time.monotonic_ns()}"


def _checkpoint_rows(uri: str, thread: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,))
        return row.fetchone()[0]


def test_a_real_run_is_checkpointed_in_postgres_and_read_back(
    postgres_uri, sample_photo, models_dir, tmp_path
):
    thread = _thread("run")
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    request = {"request": PHOTO_REQUEST, "inputs": {"photo.jpg": str(sample_photo)}}
    with open_checkpointer(postgres_uri) as saver:
        assert type(saver).__name__ == "PostgresSaver"
        final = build_graph(saver).invoke(request, _config(thread), context=ctx)
    assert final["report"]["failures"] == []
    assert final["report"]["steps"][0]["model"] == "efficientnet-lite0"

    assert _checkpoint_rows(postgres_uri, thread) > 1  # one per super-step, not just the end
    with open_checkpointer(postgres_uri) as fresh:  # a new connection: only the rows remain
        graph = build_graph(fresh)
        state = graph.get_state(_config(thread))
        history = list(graph.get_state_history(_config(thread)))
    assert not state.next  # finished
    assert state.values["answer"] == final["answer"]
    assert state.values["outputs"] == final["outputs"]
    assert state.values["results"]["node-0"]
    assert len(history) == _checkpoint_rows(postgres_uri, thread)


def test_an_approval_pause_is_resumed_by_another_process(
    postgres_uri, sample_photo, models_dir, tmp_path
):
    thread = _thread("approve")
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path), approve_plan=True)
    request = {"request": PHOTO_REQUEST, "inputs": {"photo.jpg": str(sample_photo)}}
    with open_checkpointer(postgres_uri) as saver:
        graph = build_graph(saver)
        graph.invoke(request, _config(thread), context=ctx)
        paused = graph.get_state(_config(thread))
    assert paused.interrupts, "approve_plan should pause before anything runs"
    assert paused.interrupts[0].value["plan"]["subtasks"][0]["task"] == "image-classification"
    assert not paused.values.get("results")

    # A new process, a new connection, only the URI in common: the CLI approves and finishes.
    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "graph_agent.cli",
            "resume",
            thread,
            "--yes",
            "--json",
            "--checkpoint-uri",
            postgres_uri,
            "--artifacts-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    final = json.loads(resumed.stdout)
    assert final["report"]["failures"] == []
    assert final["outputs"]["node-0"]
    with open_checkpointer(postgres_uri) as fresh:
        done = build_graph(fresh).get_state(_config(thread))
    assert not done.interrupts and not done.next
    assert done.values["answer"] == final["answer"]


def test_the_langgraph_server_checkpoints_to_postgres(postgres_uri, sample_photo, tmp_path):
    """``langgraph dev`` with the variable set writes its threads' checkpoints to Postgres."""
    from conftest import dev_server

    env = {
        ENV_VAR: postgres_uri,
        # The operator's settings: a client may not choose where the server writes or reads.
        "GRAPH_AGENT_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        "GRAPH_AGENT_INPUT_ROOTS": str(sample_photo.parent),
    }
    with dev_server(tmp_path, env) as base:

        def call(path: str, body: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
            req = urllib.request.Request(
                base + path,
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.loads(resp.read())

        thread = call("/threads", {})["thread_id"]
        run = call(
            f"/threads/{thread}/runs/wait",
            {
                "assistant_id": "graph-agent",
                "input": {"request": PHOTO_REQUEST, "inputs": {"photo.jpg": str(sample_photo)}},
            },
            timeout=300,
        )
        assert run["report"]["failures"] == [], run
        log = (tmp_path / "server.log").read_text()
    assert "Using custom checkpointer: AsyncPostgresSaver" in log
    assert _checkpoint_rows(postgres_uri, thread) > 1
    # The server's checkpoints are ordinary graph state: the CLI's saver reads them.
    with open_checkpointer(postgres_uri) as saver:
        state = build_graph(saver).get_state(_config(thread))
    assert state.values["outputs"] == run["outputs"]


def test_an_unreachable_postgres_is_one_clear_cli_error(capsys):
    dead = "postgresql://graph:s3cret@127.0.0.1:1/nowhere"  # port 1: nothing listens there
    code = main(["run", PHOTO_REQUEST, "--checkpoint-uri", dead])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "Cannot use the Postgres checkpoint database postgresql://graph:***@127.0.0.1:1" in err
    assert "Connection refused" in err
    assert "s3cret" not in err and "Traceback" not in err
    with pytest.raises(CheckpointerError, match="Cannot use the Postgres"), open_checkpointer(dead):
        pass


def test_the_store_follows_the_uri_or_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert sqlite_path() == sqlite_path("") and sqlite_path().name == "checkpoints.sqlite"
    assert sqlite_path("sqlite:///rel/c.sqlite").as_posix() == "rel/c.sqlite"
    assert sqlite_path("sqlite:////abs/c.sqlite").as_posix() == "/abs/c.sqlite"
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    monkeypatch.setenv(ENV_VAR, "postgresql://u:pw@h:5/db")
    assert describe() == "Postgres postgresql://u:***@h:5/db"
    assert describe(str(tmp_path / "x.sqlite")) == f"SQLite {tmp_path / 'x.sqlite'}"
    with pytest.raises(CheckpointerError, match="Unsupported checkpoint store"):
        sqlite_path("mysql://u:pw@h/db")
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{tmp_path / 'env.sqlite'}")
    with open_checkpointer() as saver:
        assert type(saver).__name__ == "SqliteSaver"
    assert (tmp_path / "env.sqlite").is_file()


def test_approval_resume_with_a_fresh_saver_in_process(
    postgres_uri, sample_photo, models_dir, tmp_path
):
    """The same pause, resumed here with Command(resume=...) through a second saver."""
    thread = _thread("approve-inproc")
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path), approve_plan=True)
    request = {"request": PHOTO_REQUEST, "inputs": {"photo.jpg": str(sample_photo)}}
    with open_checkpointer(postgres_uri) as saver:
        build_graph(saver).invoke(request, _config(thread), context=ctx)
    with open_checkpointer(postgres_uri) as fresh:
        final = build_graph(fresh).invoke(Command(resume=False), _config(thread), context=ctx)
    assert not final.get("outputs")  # rejected: nothing ran
    assert final["report"]["decisions"][-1]["decision"] == "rejected"


class _Text(TypedDict):
    text: str


def test_a_nul_character_postgres_cannot_store_is_a_clear_error(postgres_uri):
    """Postgres refuses "\\x00" in JSONB, where the saver keeps the state's strings: the
    write fails inside the run, and comes out as CheckpointerError saying what to do (the
    graph strips NULs itself; this is the defence behind that)."""
    graph = StateGraph(_Text)
    graph.add_node("emit", lambda s: {"text": s["text"] + "\x00 and the rest"})
    graph.add_edge(START, "emit")
    graph.add_edge("emit", END)
    with pytest.raises(CheckpointerError) as caught, open_checkpointer(postgres_uri) as saver:
        graph.compile(checkpointer=saver).invoke({"text": "model output"}, _config(_thread("nul")))
    message = str(caught.value)
    assert "Postgres refused to store this run's checkpoint" in message
    assert "UntranslatableCharacter" in message and "NUL character" in message
    assert f"unset {ENV_VAR}" in message
    assert "model output" not in message  # the server's CONTEXT line quotes the state: left out
    assert isinstance(caught.value.__cause__, psycopg.DataError)


def test_the_server_pool_replaces_a_connection_postgres_closed(postgres_uri, monkeypatch):
    """The server's pool checks a connection before lending it, so one a Postgres restart or
    an idle timeout closed is replaced instead of failing the next run."""
    monkeypatch.setenv(ENV_VAR, postgres_uri)
    thread = _config(_thread("pool"))

    async def main() -> None:
        async with server_checkpointer() as saver:
            assert await saver.aget_tuple(thread) is None  # the pool's connection works
            async with await psycopg.AsyncConnection.connect(postgres_uri, autocommit=True) as c:
                await c.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = '' AND pid <> pg_backend_pid() "
                    "AND datname = current_database()"
                )
            assert await saver.aget_tuple(thread) is None  # a fresh one, not an error

    asyncio.run(main())
