"""The offline planner: no LLM, deterministic, milliseconds.

It splits the request into clauses, finds the task each clause asks for by its wording, and
wires arguments: a file the clause names, else the latest earlier output of the right type
("summarize it"), else an unused input of the right type, else quoted text.
"""

from __future__ import annotations

import re

from graph_agent.errors import RequestError
from graph_agent.planning.plan import Plan, Subtask
from graph_agent.tools.registry import REGISTRY
from graph_agent.tools.results import Modality

# Ordered: the first pattern that matches a clause decides its task.
_TASK_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (task, re.compile(pattern, re.IGNORECASE))
    for task, pattern in [
        (
            "automatic-speech-recognition",
            r"\b(transcri\w*|speech[- ]to[- ]text|what (?:is|was) (?:said|spoken)|dictat\w*)",
        ),
        (
            "text-to-speech",
            r"\b(read (?:it |this |that |them )?(?:out|aloud)|aloud|speak|say it|"
            r"text[- ]to[- ]speech|voice ?over|narrat\w*)",
        ),
        ("summarization", r"\b(summar\w*|tl;?dr|condense|gist)"),
        ("translation", r"\btranslat\w*"),
        (
            "object-detection",
            r"\b(detect\w*|bounding box\w*|locate|find (?:all )?(?:the )?objects?)",
        ),
        ("depth-estimation", r"\bdepth\b"),
        (
            "image-to-text",
            r"\b(caption\w*|describe (?:the |this )?(?:image|photo|picture|\S+\.(?:jpe?g|png)))",
        ),
        ("visual-question-answering", r"\b(?:ask|answer)\b.*\b(?:image|photo|picture)\b"),
        ("token-classification", r"\b(named entit\w*|entities|\bNER\b|part[- ]of[- ]speech)"),
        ("zero-shot-classification", r"\bclassify\b.*\b(?:into|as one of|among)\b"),
        (
            "text-classification",
            r"\b(sentiment|positive or negative|classify (?:the )?(?:text|review))",
        ),
        (
            "image-classification",
            r"(what(?:'s| is) (?:in|shown in|on)|classify|identify|recogni[sz]e|label)\b",
        ),
        ("sentence-similarity", r"\bsimilar\w*"),
        ("feature-extraction", r"\b(embedding|embed|vectori[sz]e)"),
        ("question-answering", r"\b(answer|question)\b"),
        ("text-generation", r"\b(write|generate|compose|draft)\b"),
        ("conversational", r"\b(chat|reply|respond)\b"),
    ]
]
_SPLIT = re.compile(
    r"\s*(?:[;.]\s+|,\s*(?:and\s+|then\s+)?|\s+and then\s+|\s+then\s+|\s+and\s+)", re.IGNORECASE
)
_QUOTED = re.compile(r"[\"“']([^\"”']{2,})[\"”']")
_LANGUAGE = re.compile(r"\b(?:into|to)\s+([A-Z][a-z]+)")
_HOW = re.compile(
    r"\b(in (?:one|a single|two|three|\d+) (?:sentences?|words?|bullet points?|lines?))",
    re.IGNORECASE,
)


def _clauses(request: str) -> list[str]:
    parts = [p.strip(" ,.;") for p in _SPLIT.split(request.strip())]
    return [p for p in parts if p]


def _task_for(clause: str) -> str | None:
    for task, pattern in _TASK_PATTERNS:
        if pattern.search(clause):
            return task
    return None


def _mentioned(clause: str, inputs: dict[str, Modality | None]) -> list[str]:
    lowered = clause.lower()
    return [name for name in inputs if name.lower() in lowered]


def plan_offline(request: str, input_types: dict[str, Modality | None]) -> Plan:
    """Plan ``request`` over inputs whose kinds are ``input_types`` (name -> modality)."""
    if not request or not request.strip():
        raise RequestError(
            "The request is empty. Say what you want done, e.g. "
            "'transcribe meeting.wav and summarize it'."
        )
    steps: list[Subtask] = []
    used: set[str] = set()
    for clause in _clauses(request):
        task = _task_for(clause)
        if task is None:
            continue
        tool = REGISTRY[task]
        named = _mentioned(clause, input_types)
        args: dict[str, object] = {}
        for role, needed in tool.inputs:
            args[role] = _pick(clause, needed, named, input_types, steps, used, role)
        if task == "summarization" and (m := _HOW.search(clause)):
            args["instruction"] = m.group(1)
        if task == "translation" and (m := _LANGUAGE.search(clause)):
            args["target_language"] = m.group(1)
        if task == "zero-shot-classification":
            tail = re.split(r"\b(?:into|as one of|among)\b", clause, maxsplit=1)[-1]
            args["labels"] = [w.strip() for w in re.split(r",|\bor\b", tail) if w.strip()]
        steps.append(Subtask(id=f"node-{len(steps)}", task=task, args=args, description=clause))
    if not steps:
        raise RequestError(
            "Could not find a task in the request. Name what to do, e.g. transcribe, "
            "summarize, translate, classify an image, detect objects, read aloud."
        )
    return Plan(subtasks=steps)


def _pick(
    clause: str,
    needed: Modality,
    named: list[str],
    input_types: dict[str, Modality | None],
    steps: list[Subtask],
    used: set[str],
    role: str,
) -> object:
    """Choose the value for one argument, preferring what the clause itself names."""
    for name in named:
        if input_types.get(name) == needed or (len(named) == 1 and role in ("audio", "image")):
            used.add(name)
            return name
    if needed == "text" and role != "text" and (m := _QUOTED.search(clause)):
        return m.group(1)
    for step in reversed(steps):
        if REGISTRY[step.task].output == needed:
            return f"<{step.id}>"
    for name, kind in input_types.items():
        if kind == needed and name not in used:
            used.add(name)
            return name
    if needed == "text" and (m := _QUOTED.search(clause)):
        return m.group(1)
    return ""
