"""Model constraints stated in the request itself, as HIVE users state them.

"use the smallest possible model", "licence must be apache-2.0 or mit", "the best model on
Common Voice English" become the same constraints the API accepts. Constraints passed
explicitly win over what is read from the words.
"""

from __future__ import annotations

import re
from typing import Any

from graph_agent.retrieval_index.licenses import normalize_licenses

_SMALLEST = re.compile(r"\b(smallest|as small as possible|tiniest|lightest)\b", re.IGNORECASE)
_LICENSE = re.compile(
    r"\blicen[cs]es?\b(?:\s+(?:must|should|has to|have to|need to)\s+be|\s*(?:is|:|=|of))?\s+"
    r"(?P<list>[\w.+-]+(?:\s*(?:,|\bor\b|/)\s*[\w.+-]+)*)",
    re.IGNORECASE,
)
#: A licence written by name ("Apache-2.0", "MIT", "CC BY-NC 4.0", "GPLv3", "Llama 2").
_LICENSE_NAME = (
    r"(?:apache(?:[- ]?2(?:\.0)?)?|mit|isc|unlicense|bsd(?:-[23]-clause)?|"
    r"cc[- ]?by(?:[- ](?:nc|sa|nd))*(?:[- ]\d\.\d)?|cc0(?:-1\.0)?|"
    r"(?:a|l)?gpl(?:[- ]?v?\d(?:\.\d)?)?|openrail(?:\+\+|-m)?|llama[- ]?\d(?:\.\d)?|mpl(?:-2\.0)?)"
)
#: A licence named as what the models must have: "only Apache-2.0 models", "MIT-licensed
#: ones", "apache 2.0 or MIT weights".
_LICENSED_MODELS = re.compile(
    rf"\b(?P<list>{_LICENSE_NAME}(?:\s*(?:,|/|\bor\b|\band\b)\s*{_LICENSE_NAME})*)"
    r"(?:[- ]licen[cs]ed\b|\s+(?:models?|weights|checkpoints|ones)\b)",
    re.IGNORECASE,
)
_BEST_ON = re.compile(
    r"\bbest\b(?:\s+\w+){0,4}?\s+on\s+(?:[\w\s-]+?\s+on\s+)?(?P<dataset>[A-Z][\w-]*(?:\s+[A-Z0-9][\w.-]*)*)",
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
    if m := _LICENSE.search(request) or _LICENSED_MODELS.search(request):
        names = re.split(r"\s*(?:,|\bor\b|\band\b|/)\s*", m.group("list"))
        found["licenses"] = normalize_licenses([x for x in names if x])
    if m := _BEST_ON.search(request):
        found["best_on"] = m.group("dataset").strip()
    if m := _MAX_PARAMS.search(request):
        scale = 1e6 if m.group(2).upper() == "M" else 1e9
        found["max_parameters"] = int(float(m.group(1)) * scale)
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
