"""A NUL character in a request cannot lose a run on the Postgres checkpointer.

Postgres keeps a state's top-level strings inline in JSONB, which cannot hold ``\\x00``; the
state's text keys drop it (``graph_agent.state.text``) before the first checkpoint is written.
"""

from __future__ import annotations

import json
import os
import time

from graph_agent import Context, build_graph
from graph_agent.checkpointing import open_checkpointer


def test_a_request_with_a_nul_character_runs_and_is_checkpointed_in_postgres(
    postgres_uri, sample_photo, models_dir, tmp_path
):
    thread = f"nul-{os.getpid()}-{time.monotonic_ns()}"
    config = {"configurable": {"thread_id": thread}}
    ctx = Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    request = {"request": "what is\x00 in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}}
    with open_checkpointer(postgres_uri) as saver:
        final = build_graph(saver).invoke(request, config, context=ctx)
    assert final["report"]["failures"] == []
    assert not final.get("error")
    with open_checkpointer(postgres_uri) as fresh:
        stored = build_graph(fresh).get_state(config).values
    assert stored["request"] == "what is in photo.jpg"
    for key in ("request", "answer", "report_markdown"):
        assert "\x00" not in json.dumps(stored[key])
