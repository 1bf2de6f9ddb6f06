"""Progress events a run sends on LangGraph's ``custom`` stream, as it happens.

Why a separate channel: ``updates`` arrive only when a node *finishes*, and say nothing while a
slow model runs. A node calls ``emit(kind, **data)`` at the moment something happens (a plan is
ready, a subtask starts, a verdict is made); callers that stream with ``stream_mode`` including
``"custom"`` (the CLI, ``langgraph_sdk`` clients of ``langgraph dev``) receive each event as a
JSON-serialisable dict::

    {"event": "subtask_started", "id": "node-0", "task": "...", "model": "...", "attempt": 1}

Events are advisory. ``emit`` is a no-op outside a running graph (a node called directly in a
unit test, ``graph.invoke`` without custom streaming) and never raises: progress reporting
must never be the reason a run fails. State and the report stay the record of truth.

A node that calls ``interrupt()`` is run again from its start on resume, so it must emit only
after the interrupt has returned, or the event would be sent once per resume.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

log = logging.getLogger(__name__)

#: Every event kind, and the fields it always carries besides ``event``. A field may be None
#: (e.g. ``model`` when no model could be chosen); extra fields are allowed.
EVENT_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    # The plan passed validation (or a human's edit of it did: ``planned_by`` is "edit").
    # ``steps`` is the count; ``tasks`` lists {"id", "task", "deps"} in plan order.
    "plan_ready": ("steps", "tasks", "planned_by"),
    # The approval node's outcome: "approved", "rejected" or "edited".
    "plan_approval": ("decision",),
    # A subtask starts an attempt with a model (``attempt`` counts from 1).
    "subtask_started": ("id", "task", "model", "attempt"),
    # A long attempt's progress, as the tool works through its pieces: ``done`` of ``total``
    # (a long recording's speech pieces: one event when they are found, with done 0, then
    # one per piece transcribed). Extra fields say what the pieces are ("what") and where
    # the tool is ("up_to_s": seconds of the recording transcribed so far).
    "subtask_progress": ("id", "done", "total"),
    # The attempt ended: ``status`` is "ok" or "error" (the critic has not judged it yet).
    "subtask_finished": ("id", "status", "seconds"),
    # The critic's verdict on an attempt: "accepted", "retry with next candidate", "failed ...".
    "critic_verdict": ("id", "verdict", "reason"),
    # The run goes back to the planner (bounded by ``max_replans``).
    "replan": ("reason",),
}

#: The key that names the event kind in every payload.
KIND_KEY: Final = "event"


def _writer() -> Any | None:
    """The current node's stream writer, or None outside a running graph."""
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except Exception:  # RuntimeError outside a runnable context, KeyError without a runtime
        return None


def emit(kind: str, **data: Any) -> None:
    """Send one progress event on the ``custom`` stream; do nothing when no one can listen.

    Never raises: a broken or missing writer is logged at debug level and ignored.
    """
    try:
        writer = _writer()
        if writer is None:
            return
        if kind not in EVENT_FIELDS:
            log.debug("emitting an event of undeclared kind %r", kind)
        writer({KIND_KEY: kind, **data})
    except Exception:  # progress must never break a run
        log.debug("could not emit %r", kind, exc_info=True)


def plan_event(plan: Mapping[str, Any], planned_by: str) -> dict[str, Any]:
    """The ``plan_ready`` fields for a plan (``Plan.model_dump()``), so nodes emit in one line."""
    steps = list(plan.get("subtasks") or [])
    return {
        "steps": len(steps),
        "tasks": [
            {"id": s.get("id"), "task": s.get("task"), "deps": list(s.get("deps") or [])}
            for s in steps
        ],
        "planned_by": planned_by,
    }


def emit_started(step: Mapping[str, Any], attempt: Mapping[str, Any]) -> None:
    """``subtask_started`` for a plan step and the attempt the executor is about to make."""
    emit(
        "subtask_started",
        id=step.get("id"),
        task=step.get("task"),
        model=attempt.get("model"),
        attempt=attempt.get("attempt"),
    )


def progress_reporter(step: Mapping[str, Any], attempt: Mapping[str, Any]) -> Any:
    """The ``progress`` callback a tool call gets (`ToolCall.report`): each report becomes a
    ``subtask_progress`` event for ``step``'s current attempt."""

    def report(done: int, total: int, **detail: Any) -> None:
        emit(
            "subtask_progress",
            id=step.get("id"),
            done=done,
            total=total,
            model=attempt.get("model"),
            attempt=attempt.get("attempt"),
            **detail,
        )

    return report


#: An error longer than this is cut in ``subtask_finished``: the report keeps the full text.
_MAX_ERROR = 500


def emit_finished(step: Mapping[str, Any], attempt: Mapping[str, Any]) -> None:
    """``subtask_finished`` for an attempt the executor made (before the critic judges it)."""
    error = attempt.get("error")
    emit(
        "subtask_finished",
        id=step.get("id"),
        status=attempt.get("status"),
        seconds=attempt.get("seconds"),
        model=attempt.get("model"),
        attempt=attempt.get("attempt"),
        error=str(error)[:_MAX_ERROR] if error else None,
    )


def emit_verdicts(decisions: Iterable[Mapping[str, Any]]) -> None:
    """One ``critic_verdict`` per critic decision about a subtask (other decisions are skipped).

    ``reason`` joins the critic's problems; an accepted attempt has an empty reason.
    """
    for d in decisions:
        if d.get("node") != "critic" or "subtask" not in d:
            continue
        problems = d.get("problems") or []
        emit(
            "critic_verdict",
            id=d["subtask"],
            verdict=d.get("decision"),
            reason="; ".join(map(str, problems)),
            model=d.get("model"),
            attempt=d.get("attempt"),
        )


def is_event(chunk: Any) -> bool:
    """Whether a ``custom`` stream chunk is one of ours (other code may write there too)."""
    return isinstance(chunk, Mapping) and isinstance(chunk.get(KIND_KEY), str)
