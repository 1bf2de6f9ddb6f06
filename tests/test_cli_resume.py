"""A CLI run killed with SIGKILL after its first subtask resumes without redoing it.

The first subtask's attempt is checkpointed when its task ends, while the node that runs
the plan is still running (``nodes.run_steps``); the resumed run replays it.

The same test runs on both checkpoint stores: SQLite (the default) and Postgres (a throw-away
cluster, see ``postgres_server.py``). On Postgres the killed run is configured by the
environment variable and the resume by ``--checkpoint-uri``, so both ways of choosing the
store are exercised.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from graph_agent.checkpointing import ENV_VAR, open_checkpointer, sqlite_path
from graph_agent.graph import build_graph

REQUEST = "transcribe meeting.wav and summarize it in one sentence"


@pytest.fixture(params=["sqlite", "postgres"])
def store_uri(request) -> str | None:
    """``None`` for the SQLite default, else the throw-away cluster's URI (started only then)."""
    if request.param == "sqlite":
        return None
    uri = request.getfixturevalue("postgres_uri")
    with open_checkpointer(uri):  # make the tables now, not while the CLI starts
        pass
    return uri


def _results(thread: str, uri: str | None) -> dict:
    if uri is None and not sqlite_path().is_file():
        return {}
    try:
        with open_checkpointer(uri) as saver:
            state = build_graph(saver).get_state({"configurable": {"thread_id": thread}})
            return dict(state.values.get("results") or {})
    except sqlite3.OperationalError:  # the writer holds a lock or the tables are not made yet
        return {}


def _checkpointed_steps(thread: str, uri: str | None) -> set[str]:
    """Steps whose attempt is in the checkpoint: accepted in the state, or returned by a
    ``run_step`` task of the node still running (written when the task ended)."""
    if uri is None and not sqlite_path().is_file():
        return set()
    try:
        with open_checkpointer(uri) as saver:
            saved = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    except sqlite3.OperationalError:
        return set()
    if saved is None:
        return set()
    steps = set(saved.checkpoint["channel_values"].get("results") or {})
    for _, channel, value in saved.pending_writes or ():
        returned = channel == "__return__" and isinstance(value, dict) and "judgement" in value
        if returned and value["judgement"]["outcome"] == "accepted":
            steps.add(value["id"])
    return steps


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "graph_agent.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def test_sigkill_after_first_subtask_then_resume(speech_wav, store_uri):
    thread = f"kill-{os.getpid()}-{time.monotonic_ns()}"
    env = {ENV_VAR: store_uri} if store_uri else None
    proc = _cli(
        "run", REQUEST, "--input", f"meeting.wav={speech_wav[0]}", "--thread", thread, env=env
    )
    deadline = time.monotonic() + 240
    try:
        while "node-0" not in _checkpointed_steps(thread, store_uri):
            assert proc.poll() is None, (
                "the run ended before it could be killed:\n" + (proc.communicate()[1][-2000:])
            )
            assert time.monotonic() < deadline, "the first subtask never finished"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # Killed inside run_steps, after the transcript was accepted and before the summary was.
    assert _checkpointed_steps(thread, store_uri) == {"node-0"}
    assert _results(thread, store_uri) == {}

    flag = ["--checkpoint-uri", store_uri] if store_uri else []
    resumed = _cli("resume", thread, "--json", *flag)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err[-2000:]
    final = json.loads(out)
    assert "ran node-0" not in err  # the transcription was not run again
    assert "ran node-1" in err
    steps = {s["id"]: s for s in final["report"]["steps"]}
    assert steps["node-0"]["status"] == "ok" and steps["node-1"]["status"] == "ok"
    assert final["outputs"]["node-1"]
