"""Waiting on other threads in tests without fixed sleeps."""

from __future__ import annotations

import time
from typing import Any


def wait_until(condition: Any, timeout: float = 2.0) -> bool:
    """Poll ``condition`` until it holds; False after ``timeout`` (the assertions then fail)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True
