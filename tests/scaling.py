"""Checking that reading grows linearly with the text, without a time limit."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def seconds(read: Callable[[str], Any], text: str) -> float:
    """The best of three timings of ``read(text)``: the least disturbed by a busy machine."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        read(text)
        best = min(best, time.perf_counter() - started)
    return best


def grows_linearly(read: Callable[[str], Any], text_of: Callable[[int], str]) -> bool:
    """Whether ten times the text takes well under the hundred times a quadratic pattern
    takes (a ratio in one process, so a slow machine does not fail it)."""
    short, long = seconds(read, text_of(1)), seconds(read, text_of(10))
    return long < 35 * max(short, 1e-4)
