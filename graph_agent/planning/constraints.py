"""Model constraints stated in the request itself, as HIVE users state them.

"use the smallest possible model", "licence must be apache-2.0 or mit", "the best model on
Common Voice English" become the same constraints the API accepts. Constraints passed
explicitly win over what is read from the words.
"""

from __future__ import annotations

import re
from typing import Any

_SMALLEST = re.compile(r"\b(smallest|as small as possible|tiniest|lightest)\b", re.IGNORECASE)
_LICENSE = re.compile(
    r"\blicen[cs]es?\b(?:\s+(?:must|should|has to|have to|need to)\s+be|\s*(?:is|:|=|of))?\s+"
    r"(?P<list>[\w.+-]+(?:\s*(?:,|\bor\b|/)\s*[\w.+-]+)*)",
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
    if m := _LICENSE.search(request):
        found["licenses"] = [x for x in re.split(r"\s*(?:,|\bor\b|/)\s*", m.group("list")) if x]
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
