"""A timed-out model call is stopped, not abandoned: its thread ends, the CPU goes back to
idle, and its model stays in the cache for the next attempt (no second copy)."""

from __future__ import annotations

import resource
import threading
import time

import pytest

from graph_agent.nodes.executor import SubtaskTimeoutError, call_with_timeout
from graph_agent.tools.cancel import CallCancelled, CancelToken, cancellable, check_cancelled
from graph_agent.tools.pipeline_cache import PIPELINES

torch = pytest.importorskip("torch")


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_a_check_raises_only_under_a_cancelled_token():
    check_cancelled()  # no token in this thread: nothing happens
    token = CancelToken()
    with cancellable(token):
        check_cancelled()
        token.cancel()
        with pytest.raises(CallCancelled):
            check_cancelled()
    check_cancelled()  # the token belonged to the block


def test_a_timed_out_torch_call_stops_and_the_cpu_goes_back_to_idle(tmp_path):
    model_dir = tmp_path / "busy-model"
    model_dir.mkdir()
    layer = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)])
    x = torch.randn(64, 256)

    def busy_model_call() -> None:
        # A model the cache holds, then forward passes without end, as a stuck generation.
        net = PIPELINES.get("test-busy", model_dir, lambda p: layer)
        with torch.no_grad():
            while True:
                net(x)

    started = time.perf_counter()
    with pytest.raises(SubtaskTimeoutError, match="the call was stopped"):
        call_with_timeout(busy_model_call, 0.5, what="busy")
    assert time.perf_counter() - started < 3.0, "the call did not stop at its next forward pass"
    assert not [t for t in threading.enumerate() if t.name == "graph-agent busy"]
    # Measured, not assumed: the process uses (almost) no CPU in the second after the stop.
    before, wall = _cpu_seconds(), time.perf_counter()
    time.sleep(1.0)
    busy = (_cpu_seconds() - before) / (time.perf_counter() - wall)
    assert busy < 0.2, f"{busy:.0%} of a core still busy after the timeout"
    # Its model went back to the cache: the next attempt reuses it instead of a second copy.
    assert str(model_dir) in [key[1] for key in PIPELINES.cached_keys()]
    assert PIPELINES.get("test-busy", model_dir, lambda p: object()) is layer
