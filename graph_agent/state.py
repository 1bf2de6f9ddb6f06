"""Typed graph state. Keys that parallel branches write carry reducers.

Large outputs never live here: images and audio are artifact paths (see ``tools.artifacts``).
"""

from __future__ import annotations

from typing import Annotated, Any

from typing_extensions import TypedDict

from graph_agent.records import Attempt, Decision, Selection, Verdict

#: Returned by the planner at the start of a run so a reused thread starts clean: the
#: reducers below drop everything the previous run on the thread accumulated.
RESET = "__reset__"


def merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge per-subtask dicts from parallel branches; a ``None`` value deletes its key.

    ``{RESET: True}`` clears the dict first.
    """
    right = dict(right or {})
    out = {} if right.pop(RESET, False) else dict(left or {})
    for key, value in right.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def append(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append records from parallel branches; a list starting with ``RESET`` starts over."""
    right = list(right or [])
    if right and right[0] == RESET:
        return right[1:]
    return [*(left or []), *right]


def extend(
    left: dict[str, list[Any]] | None, right: dict[str, list[Any]] | None
) -> dict[str, list[Any]]:
    """Per-subtask lists: each key's new records are appended; ``{RESET: True}`` starts over."""
    right = dict(right or {})
    out = {} if right.pop(RESET, False) else {k: list(v) for k, v in (left or {}).items()}
    for key, records in right.items():
        out[key] = [*out.get(key, []), *records]
    return out


def text(_left: str | None, right: str | None) -> str:
    """The newest value, without NUL characters: the reducer of every top-level text key.

    A NUL is never meaningful in a request or an answer, and Postgres cannot store one (the
    Postgres checkpointer keeps top-level strings inline in JSONB): a request pasted with a
    stray ``\x00`` would otherwise fail at the first checkpoint, before any node could clean
    it. Nested values are stored as binary blobs and are unaffected.
    """
    if right is None:
        return ""
    # A caller may send a non-string (``{"request": 123}``): as text, the planner can say
    # what is wrong with it instead of the reducer failing on it.
    return (right if isinstance(right, str) else str(right)).replace("\x00", "")


#: A text key of the state: last value wins, NUL characters dropped (see `text`).
Text = Annotated[str, text]


class _Request(TypedDict):
    request: Text


class InputState(_Request, total=False):
    """What callers send: the public contract in DESIGN.md. Only ``request`` is required.

    Optional keys are declared with ``total=False`` rather than ``NotRequired`` because
    schema converters (``Runnable.as_tool``, the server's JSON schema) honour it reliably.
    """

    inputs: dict[str, str]
    constraints: dict[str, Any]


class OutputState(TypedDict, total=False):
    """What callers get back."""

    answer: Text
    report: dict[str, Any]
    outputs: dict[str, str]
    #: The report for people: Markdown with a Mermaid diagram of the plan.
    report_markdown: Text


class State(InputState, total=False):
    """Everything the nodes share during a run."""

    #: name -> "image" | "audio" | "text" | None, for every input.
    input_types: dict[str, str | None]
    #: The validated plan (``Plan.model_dump()``).
    plan: dict[str, Any]
    #: Subtask id -> ranked candidate models and the reason (``Selection.to_dict()``).
    selections: Annotated[dict[str, Selection], merge]
    #: Subtask id -> the accepted attempt, or the final failed one.
    results: Annotated[dict[str, Attempt], merge]
    #: Subtask id -> how many attempts the critic has rejected.
    rejections: Annotated[dict[str, int], merge]
    #: Subtask id -> the critic's verdict on each of its attempts, in order (across re-plans).
    verdicts: Annotated[dict[str, list[Verdict]], extend]
    #: Every decision the planner, selector and critic made, in order.
    decisions: Annotated[list[Decision], append]
    #: Task -> models that failed it in this run, so a re-plan does not pick them again;
    #: ``"*"`` in the list once no model was left for the task (a re-plan routes around it).
    avoid: Annotated[dict[str, list[str]], merge]
    #: Re-plans made in this run (at most ``Context.max_replans``).
    replans: int
    #: Why the critic sent the run back to the planner; the re-planner records it and clears it.
    replan_reason: Text
    #: The revised plan the critic sends to the re-planner (``planner.Revision.to_dict``),
    #: so the plan is revised once; the re-planner clears it.
    revision: dict[str, Any]
    #: Outputs of the thread's previous request, offered to this one as named inputs
    #: ("summary", "transcript", "image"; see ``graph_agent.turns``).
    earlier_inputs: dict[str, str]
    #: Set when the run cannot go on (bad request, invalid plan); the responder explains it.
    error: Text
    answer: Text
    report: dict[str, Any]
    outputs: dict[str, str]
    report_markdown: Text
