"""The records a run keeps per step, typed: what was selected, each attempt, each check and
each decision.

They are ``TypedDict``s, so they stay plain JSON in the state: the SQLite and Postgres
checkpointers store them and the server sends them as they are, and older checkpoints still
read. Keys a record may lack are marked ``total=False``; the state's reducers
(``state.merge``) may also hold ``None`` (a deletion) or the ``RESET`` marker for a moment.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict


class Candidate(TypedDict, total=False):
    """A model that can run a step (``search.Candidate``), and where it runs in hybrid mode."""

    id: str
    path: str | None
    score: float
    relevance: float
    why: str
    #: The card's model library, which picks the back end that loads it.
    library: str | None
    runs: Literal["local", "remote"]
    endpoint: str | None
    remote_call: str


class Selection(TypedDict, total=False):
    """The ranked candidates for one step and why the first was chosen."""

    task: str
    candidates: list[Candidate]
    reason: str
    #: Model id -> the constraints that ruled it out.
    rejected: dict[str, list[str]]


class Check(TypedDict):
    """One check of an attempt (``verdicts.Check.to_dict``)."""

    check: str
    verdict: Literal["passed", "rejected", "not checked", "not judged"]
    reason: str


class Attempt(TypedDict, total=False):
    """One try of a step on one model: what ran, how long, and what came of it."""

    model: str | None
    model_path: str
    attempt: int
    status: Literal["ok", "error", "failed"]
    seconds: float
    #: ``ToolResult.to_dict()`` when the call returned.
    result: dict[str, Any]
    error: str
    trace: str
    timed_out: bool
    #: Characters of the text the step read (the critic's condensing check).
    input_chars: int
    #: Why the critic rejected the last attempt, when the step failed.
    problems: list[str]
    runs: Literal["local", "remote"]
    endpoint: str | None


class _AttemptFacts(TypedDict, total=False):
    """What a verdict says about the attempt it judged (shared by `Verdict` and `Decision`)."""

    decision: str
    subtask: str
    task: str
    model: str | None
    attempt: int
    seconds: float | None
    checks: list[Check]
    problems: list[str]
    #: Which plan of the run the attempt belongs to (after a re-plan; absent for the first).
    replan: int


class Verdict(_AttemptFacts, total=False):
    """The critic's verdict on one attempt of a step: every check, and what came of it
    (``decision``: "accepted", "retry with next candidate" or "failed (...)").

    The state keeps them per step (``State.verdicts``), so the report reads a step's
    attempts directly; the run's ``decisions`` log holds the same records in order.
    """

    node: Literal["critic"]


class Decision(_AttemptFacts, total=False):
    """One decision the planner, selector or critic made, in the order made."""

    node: Literal["planner", "selector", "critic", "approval"]
    reason: str
    # A re-plan's record: the steps that failed, the budget, what changes and what is kept.
    failed: list[str]
    replans: int
    max_replans: int
    changes: dict[str, str]
    unchanged_failures: dict[str, str]
    kept: list[str]
    detail: str
    runs: Literal["local", "remote"]
