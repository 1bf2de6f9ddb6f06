"""Stopping a model call that ran out of time, so it stops using the CPU and memory.

Python cannot kill a thread, so a timed-out call used to be abandoned and keep running: a
200 KB request left the server at 200 % CPU after its run had ended, and each retry loaded
another copy of the model beside the one still running. Instead, a call runs under a
:class:`CancelToken` (:func:`cancellable`), and cancelling the token stops it at the next
check:

- every torch module's forward pass checks first (one process-wide forward pre-hook,
  installed once torch is loaded), so generation stops within one token, a transcription
  within one decoder step, a classifier within one layer;
- model code that is not torch calls :func:`check_cancelled` between its pieces of work (a
  Piper voice, between sentences); a single ONNX Runtime call is short by the input bounds
  (`graph_agent.tools.limits`) and is not interrupted;
- waits in the pipeline cache (for a model's lock, a load, room in the budget) end too.

A stopped call raises :class:`CallCancelled` in its own thread and unwinds normally, so the
models it held go back to the cache and the next attempt reuses them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CallCancelled(TimeoutError):
    """The call's token was cancelled (its step ran past ``subtask_timeout_s``)."""


class CancelToken:
    """Set once, from any thread; read by the call's own thread at each check."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


_local = threading.local()
_hook_lock = threading.Lock()
_hook_installed = False


def current_token() -> CancelToken | None:
    """The token of the call running in this thread, if it runs under one."""
    return getattr(_local, "token", None)


def check_cancelled() -> None:
    """Raise `CallCancelled` when this thread's call was cancelled; otherwise nothing."""
    token = getattr(_local, "token", None)
    if token is not None and token.cancelled:
        raise CallCancelled("the call was stopped after its step's timeout (subtask_timeout_s)")


def _before_forward(_module: object, _args: object) -> None:
    check_cancelled()


def install_torch_hook() -> None:
    """Make every torch forward pass a cancellation check, once torch is imported.

    Does nothing before torch is loaded (nothing can run a forward pass then) and nothing
    the second time. The hook costs a thread-local read per module call.
    """
    global _hook_installed
    if _hook_installed or "torch" not in sys.modules:
        return
    with _hook_lock:
        if _hook_installed:
            return
        from torch.nn.modules.module import register_module_forward_pre_hook

        register_module_forward_pre_hook(_before_forward)
        _hook_installed = True


@contextmanager
def cancellable(token: CancelToken) -> Iterator[CancelToken]:
    """Run the block's model calls under ``token``, in this thread."""
    previous = getattr(_local, "token", None)
    _local.token = token
    install_torch_hook()
    try:
        yield token
    finally:
        _local.token = previous
