"""First imports of heavy libraries, once per process and one at a time.

The pipeline cache's loaders (``graph_agent.tools``) and the card index's embedder
(``graph_agent.retrieval_index``) both import transformers or sentence-transformers lazily, on
their first load, possibly in several threads at once. This module is what they share, so
neither has to import the other; it imports only the standard library.
"""

from __future__ import annotations

import logging
import threading
from importlib import import_module

log = logging.getLogger(__name__)

#: The module behind ``from transformers import pipeline``. Importing it also imports
#: transformers' auto classes, which the other transformers loaders (VQA) resolve lazily.
TRANSFORMERS_PIPELINES = "transformers.pipelines"
#: The module the sentence-transformers loaders import.
SENTENCE_TRANSFORMERS = "sentence_transformers"

_IMPORT_LOCK = threading.Lock()
_warmed: set[str] = set()  # modules `warm_imports` has imported


def warm_imports(*modules: str) -> None:
    """Import ``modules`` once per process, one import at a time, before a load needs them.

    First imports inside loaders are not thread-safe: transformers resolves ``from transformers
    import pipeline`` lazily, and ten concurrent first requests on a fresh server raised "cannot
    import name 'pipeline' from 'transformers'" (threads importing its submodules in different
    orders are handed each other's half-initialised modules). Only these first imports are
    serialised, so the loads themselves run in parallel and a slow load holds up no other. A
    module that fails to import is left to its loader, which reports the error in context; the
    next call tries again.
    """
    if all(name in _warmed for name in modules):
        return
    with _IMPORT_LOCK:
        for name in modules:
            if name in _warmed:
                continue
            try:
                import_module(name)
            except Exception:  # not installed, or broken: the loader reports it in context
                log.debug("Could not import %s ahead of a load", name, exc_info=True)
                continue
            _warmed.add(name)


__all__ = ["SENTENCE_TRANSFORMERS", "TRANSFORMERS_PIPELINES", "warm_imports"]
