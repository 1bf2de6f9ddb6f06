"""Model constraints stated in the request itself, as HIVE users state them.

"use the smallest possible model", "licence must be apache-2.0 or mit", "the best model on
Common Voice English" become the same constraints the API accepts. Constraints passed
explicitly win over what is read from the words.
"""

from __future__ import annotations

import re
from typing import Any

_SMALLEST = re.compile(r"\b(smallest|as small as possible|tiniest|lightest)\b", re.IGNORECASE)
#: Names in a list: "a, b", "a or b", "a, b, and c", "a and/or b" (at most eight names,
#: which keeps matching linear on long text).
_LIST_SEP = r"\s*(?:,\s*)?(?:\band/or\b|\bor\b|\band\b|,|/)\s*"
_LICENSE = re.compile(
    r"\blicen[cs]es?\b(?:\s+(?:must|should|has to|have to|need to)\s+be|\s*(?:is|:|=|of))?\s+"
    rf"(?P<list>[\w.+-]+(?:{_LIST_SEP}[\w.+-]+){{0,7}})",
    re.IGNORECASE,
)
#: A licence written by name ("Apache-2.0", "MIT", "CC BY-NC 4.0", "GPLv3"). Model families
#: ("Llama 2") are left out: "use a Llama 3 model" names a model, not a licence.
_LICENSE_NAME = (
    r"(?:apache(?:[- ]?2(?:\.0)?)?|mit|isc|unlicense|bsd(?:-[23]-clause)?|"
    r"cc[- ]?by(?:[- ](?:nc|sa|nd))*(?:[- ]\d\.\d)?|cc0(?:-1\.0)?|"
    r"(?:a|l)?gpl(?:[- ]?v?\d(?:\.\d)?)?|openrail(?:\+\+|-m)?|mpl(?:-2\.0)?)"
)
#: Licences named as what models have: "Apache-2.0 models", "MIT-licensed ones", "the MIT
#: license", "apache 2.0 or MIT weights". Only a constraint when the words around it ask
#: for it (``_CUE_BEFORE``, ``_CUE_AFTER``) and do not exclude it (``_NEGATION``).
_LICENSED_MODELS = re.compile(
    rf"\b(?P<list>{_LICENSE_NAME}(?:{_LIST_SEP}{_LICENSE_NAME}){{0,7}})"
    r"(?:[- ]licen[cs]ed\b|\s+licen[cs]e\b|\s+(?:models?|weights|checkpoints|ones)\b)",
    re.IGNORECASE,
)
_CUE_BEFORE = re.compile(
    r"\b(?:only|just|use|using|must|should|need|needs|require[sd]?|prefer|want|allowed|"
    r"permitted|stick to|restrict\w*|limit\w*|under|with)\b",
    re.IGNORECASE,
)
_CUE_AFTER = re.compile(
    r"\W*(?:(?:models?|weights|ones)\s+)?(?:only|please|are (?:fine|ok|okay|allowed))\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:no|not|never|except|avoid|without|exclud\w*|but|don't|dont|do not|can't|cannot)\b",
    re.IGNORECASE,
)
#: The words before a match that belong to its sentence (at most this many characters).
_WINDOW = 60
_BEST_ON = re.compile(
    r"\bbest\b(?:\s+\w+){0,4}?\s+on\s+(?:[\w\s-]{1,60}?\s+on\s+)?"
    r"(?P<dataset>[A-Z][\w-]*(?:\s+[A-Z0-9][\w.-]*){0,7})",
)
_MAX_PARAMS = re.compile(
    r"\b(?:under|below|at most|less than|fewer than)\s+(\d+(?:\.\d+)?)\s*([MB])"
    r"(?:\s*param\w*)?\b",
    re.IGNORECASE,
)
#: Languages a request may ask its output in ("in French", "into German").
LANGUAGES = [
    "English",
    "French",
    "German",
    "Spanish",
    "Italian",
    "Portuguese",
    "Dutch",
    "Russian",
    "Chinese",
    "Mandarin",
    "Japanese",
    "Korean",
    "Arabic",
    "Hindi",
    "Turkish",
    "Polish",
    "Swedish",
    "Norwegian",
    "Danish",
    "Finnish",
    "Greek",
    "Hebrew",
    "Czech",
    "Ukrainian",
    "Vietnamese",
    "Thai",
    "Indonesian",
    "Romanian",
    "Hungarian",
    "Bengali",
    "Urdu",
    "Persian",
    "Swahili",
]
_TARGET_LANGUAGE = re.compile(r"\b(?:in|into|to)\s+(" + "|".join(LANGUAGES) + r")\b", re.IGNORECASE)
#: The metric "best" means for a task when the request names only a dataset.
DEFAULT_METRIC = {"automatic-speech-recognition": "wer"}


def constraints_from_request(request: str) -> dict[str, Any]:
    """The constraints a request states in words (an empty dict when it states none)."""
    found: dict[str, Any] = {}
    if _SMALLEST.search(request):
        found["prefer_smallest"] = True
    if licenses := _licenses(request):
        found["licenses"] = licenses
    if m := _BEST_ON.search(request):
        found["best_on"] = m.group("dataset").strip()
    if m := _MAX_PARAMS.search(request):
        scale = 1e6 if m.group(2).upper() == "M" else 1e9
        found["max_parameters"] = int(float(m.group(1)) * scale)
    return found


def _licenses(request: str) -> list[str]:
    """Licence ids the request allows: "licence must be X or Y", or licences named as what
    the models must have ("use only Apache-2.0 models"), each unless the words exclude it
    ("no GPL models", "anything except CC BY-NC ones")."""
    # Imported here: the index package loads faiss, which planning alone does not need.
    from graph_agent.retrieval_index.licenses import KNOWN_IDS, OTHER, UNKNOWN, normalize_license

    found: list[str] = []
    for pattern in (_LICENSE, _LICENSED_MODELS):
        for m in pattern.finditer(request):
            before = re.split(r"[.?!;]", request[max(0, m.start() - _WINDOW) : m.start()])[-1]
            if _NEGATION.search(before):
                continue
            if pattern is _LICENSED_MODELS and not (
                _CUE_BEFORE.search(before) or _CUE_AFTER.match(request, m.end())
            ):
                continue
            for name in re.split(_LIST_SEP, m.group("list")):
                license_id = normalize_license(name)
                # "the license terms matter" names no licence: only known ids count.
                if license_id in KNOWN_IDS - {OTHER, UNKNOWN} and license_id not in found:
                    found.append(license_id)
    return found


def target_language(text: str) -> str | None:
    """The language ``text`` asks the output in ("summarize it in French" -> "French").

    It becomes a translation step's ``target_language``, and a step that writes text "in
    French" without a translation step gets one (see ``offline.plan_offline``).
    """
    m = _TARGET_LANGUAGE.search(text)
    return m.group(1).capitalize() if m else None


def with_default_metric(best_on: str, tasks: list[str]) -> str:
    """``DATASET`` -> ``DATASET:METRIC`` when the plan's tasks imply the metric."""
    if ":" in best_on:
        return best_on
    for task in tasks:
        if task in DEFAULT_METRIC:
            return f"{best_on}:{DEFAULT_METRIC[task]}"
    return best_on


def stated_constraints(request: str, tasks: list[str]) -> dict[str, Any]:
    """The constraints the request states, with "best on DATASET" given the metric the
    plan's ``tasks`` imply: what a run applies to every step, and what ``plan`` shows."""
    stated = constraints_from_request(request)
    if "best_on" in stated:
        stated["best_on"] = with_default_metric(stated["best_on"], tasks)
    return stated
