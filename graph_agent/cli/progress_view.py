"""Live progress for ``graph-agent run``: one line per event, as it happens, on stderr.

The run is streamed with ``STREAM_MODES``. Most lines come from the ``custom`` stream
(``graph_agent.events``), which reports a subtask when it *starts*, not only when its node
returns, so a slow model shows what it is doing. ``updates`` still supply what no event
carries (the selector's choice of model per step).

rich is a hard dependency of the package (the CLI's consoles are rich consoles), so lines use
rich markup, and every value from the run is escaped: a model id or error message containing
``[`` must not be read as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from graph_agent.events import KIND_KEY, is_event

#: What the CLI streams: node updates and the nodes' progress events.
STREAM_MODES: Final[list[str]] = ["updates", "custom"]

#: The node each event kind comes from, shown as the line's prefix (as the old update lines
#: were, so ``grep``-ing a log for "run_subtask" or "critic" still works).
_SOURCE = {
    "plan_ready": "plan",
    "plan_approval": "approve",
    "subtask_started": "run_subtask",
    "subtask_progress": "run_subtask",
    "subtask_finished": "run_subtask",
    "critic_verdict": "critic",
    "replan": "replan",
}


def _tasks(event: Mapping[str, Any]) -> str:
    parts = []
    for t in event.get("tasks") or []:
        after = f" after {', '.join(t['deps'])}" if t.get("deps") else ""
        parts.append(f"{t.get('id')} {t.get('task')}{after}")
    return " | ".join(parts)


def describe_event(event: Mapping[str, Any]) -> str | None:
    """The progress line (plain text, not yet escaped) for one event; None to show nothing."""
    kind = event.get(KIND_KEY)
    if kind == "plan_ready":
        by = event.get("planned_by")
        return f"planned: {_tasks(event)}" + (f"  (by {by})" if by else "")
    if kind == "plan_approval":
        return f"plan {event.get('decision')}"
    if kind == "subtask_started":
        return (
            f"started {event.get('id')} ({event.get('task')}) on {event.get('model')}, "
            f"attempt {event.get('attempt')}"
        )
    if kind == "subtask_progress":
        what = event.get("what") or "pieces done"
        at = (
            f" (up to {event['up_to_s']:g} s)"
            if isinstance(event.get("up_to_s"), int | float)
            else ""
        )
        return f"{event.get('id')}: {event.get('done')}/{event.get('total')} {what}{at}"
    if kind == "subtask_finished":
        status = event.get("status")
        shown = "ok" if status == "ok" else f"error: {(event.get('error') or status or '')[:120]}"
        return (
            f"ran {event.get('id')} on {event.get('model')} "
            f"in {event.get('seconds') or 0:.1f}s: {shown}"
        )
    if kind == "critic_verdict":
        reason = event.get("reason")
        return f"{event.get('id')}: {event.get('verdict')}" + (f" ({reason})" if reason else "")
    if kind == "replan":
        return f"re-planning: {event.get('reason')}"
    return None  # an event kind this CLI does not know: newer graph, older CLI


def describe_update(node: str, update: Mapping[str, Any]) -> str | None:
    """A line for a node update that no event covers (the selector's choices)."""
    if node == "select":
        return (
            "; ".join(
                f"{d['subtask']} -> {d.get('model') or 'no model'}"
                for d in update.get("decisions", [])
                if "subtask" in d
            )
            or None
        )
    return None


class ProgressView:
    """Prints progress lines for ``(mode, chunk)`` pairs from ``graph.stream``.

    ``status`` is the spinner shown while the run works; it names the subtasks running now.
    """

    def __init__(self, console: Console, status: Status | None = None) -> None:
        self.console = console
        self.status = status
        self.running: dict[str, str] = {}  # subtask id -> model, for the spinner

    def feed(self, mode: str, chunk: Any) -> None:
        if mode == "custom" and is_event(chunk):
            self._event(chunk)
        elif mode == "updates" and isinstance(chunk, Mapping):
            for node, update in chunk.items():
                if node == "__interrupt__" or not isinstance(update, Mapping):
                    continue
                line = describe_update(node, update)
                if line:
                    self._print(node, line)

    def _event(self, event: Mapping[str, Any]) -> None:
        kind = event[KIND_KEY]
        if kind == "subtask_started":
            self.running[str(event.get("id"))] = str(event.get("model"))
        elif kind == "subtask_finished":
            self.running.pop(str(event.get("id")), None)
        line = describe_event(event)
        if line:
            self._print(_SOURCE.get(kind, kind), line)
        self._spin()

    def _print(self, source: str, line: str) -> None:
        colour = "yellow" if source == "replan" else "cyan"
        # soft_wrap: one event, one line, however narrow the terminal (logs stay grep-able).
        self.console.print(f"[{colour}]{escape(source)}[/{colour}] {escape(line)}", soft_wrap=True)

    def _spin(self) -> None:
        if self.status is None:
            return
        if self.running:
            now = ", ".join(f"{i} on {m}" for i, m in self.running.items())
            self.status.update(f"working... running {escape(now)}")
        else:
            self.status.update("working...")
