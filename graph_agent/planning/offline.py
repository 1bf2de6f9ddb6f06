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
            r"\b(transcri\w*|speech[- ]to[- ]text|what(?:'s| is| was) (?:said|spoken)|dictat\w*)",
        ),
        (
            "text-to-speech",
            r"\b(read (?:it |this |that |them )?(?:out|aloud)|aloud|speak|say it)\b|\b("
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
        (
            "token-classification",
            r"\b(named entit\w*|entit(?:y|ies)\b|\bNER\b|part[- ]of[- ]speech)",
        ),
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
#: Separators between clauses; the group keeps them so fragments can be glued back.
_SPLIT = re.compile(
    r"(\s*(?:[;.]\s+|,\s*(?:and\s+|then\s+)?|\s+and then\s+|\s+then\s+|\s+and\s+))",
    re.IGNORECASE,
)
#: Quoted literals: double or curly quotes, or single quotes that are not apostrophes.
_QUOTED = re.compile(r"\"([^\"]{2,})\"|“([^”]{2,})”|(?<!\w)'([^']{2,}?)'(?!\w)")
_MASK = re.compile(r"\x00(\d+)\x00")
_LANGUAGE = re.compile(r"\b(?:into|to)\s+([A-Z][a-z]+)")
_HOW = re.compile(
    r"\b(in (?:one|a single|two|three|\d+) (?:sentences?|words?|bullet points?|lines?))",
    re.IGNORECASE,
)


def _clauses(request: str) -> list[tuple[str, list[str]]]:
    """Split into clauses that each ask for one task, with each clause's quoted literals.

    Quoted text is masked first so separators inside it do not split; a fragment that asks
    for no task ("politics or tech") is glued back onto the clause before it.
    """
    quotes: list[str] = []

    def mask(m: re.Match[str]) -> str:
        quotes.append(next(g for g in m.groups() if g is not None))
        return f"\x00{len(quotes) - 1}\x00"

    pieces = _SPLIT.split(_QUOTED.sub(mask, request.strip()))
    clauses: list[str] = []
    for i in range(0, len(pieces), 2):
        piece = pieces[i].strip(" ,.;")
        if not piece:
            continue
        if clauses and _task_for(_MASK.sub("", piece)) is None:
            clauses[-1] += pieces[i - 1] + piece
        else:
            clauses.append(piece)
    return [
        (
            _MASK.sub(lambda m: quotes[int(m.group(1))], c),
            [quotes[int(i)] for i in _MASK.findall(c)],
        )
        for c in clauses
    ]


def _task_for(clause: str) -> str | None:
    for task, pattern in _TASK_PATTERNS:
        if pattern.search(clause):
            return task
    return None


def _mentioned(clause: str, inputs: dict[str, Modality | None]) -> list[str]:
    """Inputs the clause names as whole words ("a.wav" does not match "data.wav")."""
    return [
        name
        for name in inputs
        if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", clause, re.IGNORECASE)
    ]


def plan_offline(request: str, input_types: dict[str, Modality | None]) -> Plan:
    """Plan ``request`` over inputs whose kinds are ``input_types`` (name -> modality)."""
    if not request or not request.strip():
        raise RequestError(
            "The request is empty. Say what you want done, e.g. "
            "'transcribe meeting.wav and summarize it'."
        )
    steps: list[Subtask] = []
    used: set[str] = set()
    for clause, quotes in _clauses(request):
        task = _task_for(clause)
        if task is None:
            continue
        tool = REGISTRY[task]
        named = _mentioned(clause, input_types)
        args: dict[str, object] = {}
        for position, (role, needed) in enumerate(tool.inputs):
            pick = _Pick(clause, needed, named, input_types, steps, used, quotes)
            args[role] = pick.primary(role) if position == 0 else pick.secondary()
        if task == "summarization" and (m := _HOW.search(clause)):
            args["instruction"] = m.group(1)
        if task == "translation" and (m := _LANGUAGE.search(clause)):
            args["target_language"] = m.group(1)
        if task == "zero-shot-classification":
            tail = re.split(r"\b(?:into|as one of|among)\b", clause, maxsplit=1)[-1]
            args["labels"] = [
                w.strip(" .") for w in re.split(r",|\bor\b|\band\b", tail) if w.strip(" .")
            ]
        steps.append(Subtask(id=f"node-{len(steps)}", task=task, args=args, description=clause))
    if not steps:
        raise RequestError(
            "Could not find a task in the request. Name what to do, e.g. transcribe, "
            "summarize, translate, classify an image, detect objects, read aloud."
        )
    return Plan(subtasks=steps)


class _Pick:
    """Chooses argument values for one clause, in a fixed order of preference."""

    def __init__(
        self,
        clause: str,
        needed: Modality,
        named: list[str],
        input_types: dict[str, Modality | None],
        steps: list[Subtask],
        used: set[str],
        quotes: list[str],
    ) -> None:
        self.clause, self.needed, self.named = clause, needed, named
        self.input_types, self.steps, self.used, self.quotes = input_types, steps, used, quotes

    def primary(self, role: str) -> object:
        """The main input: a named file, a quote, an earlier output, then any input."""
        for name in self.named:
            # A single named file fills a media role even of the wrong kind, so the
            # validator can say exactly what is wrong with it.
            wrong_kind_ok = len(self.named) == 1 and role in ("audio", "image")
            if self.input_types.get(name) == self.needed or wrong_kind_ok:
                self.used.add(name)
                return name
        if self.needed == "text" and self.quotes:
            return self.quotes.pop(0)
        for step in reversed(self.steps):
            if REGISTRY[step.task].output == self.needed:
                return f"<{step.id}>"
        fitting = [n for n, kind in self.input_types.items() if kind == self.needed]
        for name in sorted(fitting, key=lambda n: n in self.used):
            self.used.add(name)
            return name
        return ""

    def secondary(self) -> object:
        """A further text argument (a question, a second text): a quote, else the clause."""
        return self.quotes.pop(0) if self.quotes else self.clause
