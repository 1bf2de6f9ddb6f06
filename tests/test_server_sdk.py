"""A ``langgraph_sdk`` client drives the served graph: approval interrupt, resume, live events.

This is how a web app would use the agent: stream a run with ``stream_mode=["custom",
"updates"]``, show the plan from the interrupt, resume with ``command={"resume": True}``, and
show progress from the custom events while the models run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk import get_client

from graph_agent.events import EVENT_FIELDS, KIND_KEY

# The ``server`` fixture (``langgraph dev`` on 127.0.0.1) is in conftest.py.
pytestmark = pytest.mark.server


async def _stream(client, thread_id: str, **kwargs: Any) -> tuple[list[dict], list[dict], list]:
    """One streamed run: (custom events, update chunks, interrupt values)."""
    events, updates, interrupts = [], [], []
    async for part in client.runs.stream(
        thread_id, "graph-agent", stream_mode=["custom", "updates"], **kwargs
    ):
        if part.event == "error":
            pytest.fail(f"the run failed on the server: {part.data}")
        if part.event == "custom":
            events.append(part.data)
        elif part.event == "updates":
            updates.append(part.data)
            interrupts += [i["value"] for i in part.data.get("__interrupt__", [])]
    return events, updates, interrupts


async def _approve_and_run(url: str, photo: str) -> dict[str, Any]:
    client = get_client(url=url, api_key=None)  # a local server: send no key
    thread = await client.threads.create()
    context = {"approve_plan": True}
    request = {"request": "what is in photo.jpg", "inputs": {"photo.jpg": photo}}
    first = await _stream(client, thread["thread_id"], input=request, context=context)
    waiting = await client.threads.get_state(thread["thread_id"])
    second = await _stream(client, thread["thread_id"], command={"resume": True}, context=context)
    final = await client.threads.get_state(thread["thread_id"])
    return {"first": first, "waiting": waiting, "second": second, "final": final}


def test_sdk_client_approves_the_plan_and_sees_progress_events(server, sample_photo, tmp_path):
    seen = asyncio.run(_approve_and_run(server, str(sample_photo)))

    # First run: planned, then paused for approval with the plan in the interrupt.
    events, updates, interrupts = seen["first"]
    assert [e[KIND_KEY] for e in events] == ["plan_ready"]
    assert events[0]["tasks"] == [{"id": "node-0", "task": "image-classification", "deps": []}]
    (question,) = interrupts
    assert question["plan"]["subtasks"][0]["task"] == "image-classification"
    assert "resume" in question["how"].lower()
    assert [n for chunk in updates for n in chunk] == ["plan", "__interrupt__"]
    assert seen["waiting"]["next"] == ["approve"]

    # Resumed with approval: every progress event arrives, in order, with its fields.
    events, updates, interrupts = seen["second"]
    assert not interrupts
    assert [e[KIND_KEY] for e in events] == [
        "plan_approval",
        "subtask_started",
        "subtask_finished",
        "critic_verdict",
    ]
    for event in events:
        assert set(EVENT_FIELDS[event[KIND_KEY]]) <= set(event), event
    started, finished = events[1], events[2]
    assert started["id"] == finished["id"] == "node-0"
    assert started["model"] == "efficientnet-lite0" and finished["status"] == "ok"
    assert [n for chunk in updates for n in chunk] == [
        "approve",
        "select",
        "run_step",  # the task inside run_steps that ran and judged node-0
        "run_steps",
        "respond",
    ]

    # The thread's final state holds the public output: answer, outputs, report.
    values = seen["final"]["values"]
    assert seen["final"]["next"] == []
    assert values["outputs"]["node-0"] and "Image label" in values["answer"]
    assert values["report"]["failures"] == []
    assert values["report"]["steps"][0]["model"] == "efficientnet-lite0"
    assert {"node": "approval", "decision": "approved"} in values["report"]["decisions"]
