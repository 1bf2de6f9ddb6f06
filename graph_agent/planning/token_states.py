"""One encoder pass over a text, as the clause classifier and the implied-task head read it.

Its own module so the detector (which makes it) and the head (which reads it) import it
from below rather than from each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TokenStates:
    """One text's real tokens (no [CLS]/[SEP]): character spans and two layers' vectors."""

    offsets: np.ndarray  # (tokens, 2)
    last: np.ndarray  # (tokens, 384)
    middle: np.ndarray  # (tokens, 384), layer MIDDLE_LAYER
