"""A CLI run killed with SIGKILL after its first subtask resumes without redoing it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from langgraph.checkpoint.sqlite import SqliteSaver

from graph_agent.context import graph_agent_home
from graph_agent.graph import build_graph

REQUEST = "transcribe meeting.wav and summarize it in one sentence"


def _results(thread: str) -> dict:
    db = graph_agent_home() / "checkpoints.sqlite"
    if not db.is_file():
        return {}
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        state = build_graph(SqliteSaver(conn)).get_state({"configurable": {"thread_id": thread}})
        return dict(state.values.get("results") or {})
    except sqlite3.OperationalError:  # the writer holds a lock or the tables are not made yet
        return {}
    finally:
        conn.close()


def _cli(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "graph_agent.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )


def test_sigkill_after_first_subtask_then_resume(speech_wav):
    thread = f"kill-{os.getpid()}-{time.monotonic_ns()}"
    proc = _cli("run", REQUEST, "--input", f"meeting.wav={speech_wav[0]}", "--thread", thread)
    deadline = time.monotonic() + 240
    try:
        while "node-0" not in _results(thread):
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
    assert set(_results(thread)) == {"node-0"}  # killed before the summary was accepted

    resumed = _cli("resume", thread, "--json")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err[-2000:]
    final = json.loads(out)
    assert "ran node-0" not in err  # the transcription was not run again
    assert "ran node-1" in err
    steps = {s["id"]: s for s in final["report"]["steps"]}
    assert steps["node-0"]["status"] == "ok" and steps["node-1"]["status"] == "ok"
    assert final["outputs"]["node-1"]
