"""A warm cache of loaded pipelines, so a second call with the same model does not reload it.

Loading is the slow part of every step (seconds for a 0.5B model on two cores), and parallel
branches may ask for the same model at once, so each key loads exactly once under its own lock.
The cache is bounded: the least recently used model is dropped when it is full.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graph_agent.tools.errors import ModelUnavailableError


class PipelineCache:
    """Least-recently-used cache of loaded models keyed by (kind, model path)."""

    def __init__(self, max_items: int = 6) -> None:
        self.max_items = max_items
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self.loads = 0

    def get(self, kind: str, model: str | Path, loader: Callable[[str], Any]) -> Any:
        """Return the loaded object for ``(kind, model)``, loading it once if needed."""
        key = (kind, str(model))
        with self._guard:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._items:
                    return self._items[key]
            loaded = loader(str(model))
            with self._guard:
                self.loads += 1
                self._items[key] = loaded
                while len(self._items) > self.max_items:
                    self._items.popitem(last=False)
            return loaded

    def clear(self) -> None:
        with self._guard:
            self._items.clear()


def load_pipeline(task: str, model: str, **kwargs: Any) -> Any:
    """Load a `transformers` pipeline from a local directory, never from the Hub.

    Remote code stays off: model cards and repositories are data, not code we run.
    """
    path = Path(model)
    if not path.is_dir():
        raise ModelUnavailableError(
            f"Model {model!r} is not on this machine and graph-agent never downloads at run "
            "time. Install it with `graph-agent models install`, or pick another model."
        )
    from transformers import pipeline

    return pipeline(task, model=str(path), device="cpu", trust_remote_code=False, **kwargs)


#: The process-wide cache the tools share.
PIPELINES = PipelineCache()
