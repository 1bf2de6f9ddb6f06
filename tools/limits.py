"""Bounds on the work one input can cause, each set by an environment variable.

A request or a file is refused before any model sees it when it is past a bound, with a
message naming the bound and the variable that raises it. Without bounds, one 200 KB paste
kept a chat model busy for minutes and took gigabytes, a 13000 x 13000 PNG of 530 KB
decoded to 3.6 GB, and a ten-minute recording ran the whole step timeout.

Each bound is read when it is checked, so a server's operator can change it by restarting
with a new environment; ``0`` turns a bound off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """One bound: its environment variable, default and unit, for messages and the README."""

    env: str
    default: float
    unit: str

    def value(self) -> float:
        """The bound in force (the environment's value, else the default; 0: no bound)."""
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{self.env}={raw!r} is not a number.") from None
        if value < 0:
            raise ValueError(f"{self.env}={raw!r} must be 0 (no limit) or more.")
        return value

    def exceeded_by(self, amount: float) -> bool:
        bound = self.value()
        return bool(bound) and amount > bound

    def describe(self, amount: float) -> str:
        """'<amount> <unit>; the limit is <bound> <unit> (raise it with ENV)'."""
        return (
            f"{_number(amount)} {self.unit}; the limit is {_number(self.value())} {self.unit} "
            f"(the server's operator can change it with {self.env})"
        )


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"


#: Characters in a request, material pasted into it included, plus its text inputs.
MAX_TEXT_CHARS = Limit("GRAPH_AGENT_MAX_TEXT_CHARS", 50_000, "characters")
#: Pixels of one input image, read from its header before anything is decoded.
MAX_IMAGE_PIXELS = Limit("GRAPH_AGENT_MAX_IMAGE_PIXELS", 40_000_000, "pixels")
#: Seconds of one input recording, read from its header before anything is decoded. A long
#: recording is transcribed piece by piece (tools/vad.py), each piece a bounded call; the
#: bound keeps whisper-tiny.en within the default 600 s step timeout on this project's shared
#: 2-core machine, where it took 0.2 to 0.3 s per second of a two-minute recording, and
#: 1.2 s when another job held a core.
MAX_AUDIO_SECONDS = Limit("GRAPH_AGENT_MAX_AUDIO_S", 600, "seconds")
#: Bytes of one input file of any kind (a first guard before any header is parsed).
MAX_FILE_BYTES = Limit("GRAPH_AGENT_MAX_FILE_MB", 200, "MB")
