"""The warm pipeline cache: memory budget with LRU eviction, size estimates, device choice,
abandoned (timed-out) calls, and the run settings that drive it. Fake loaders, no models."""

from __future__ import annotations

import logging
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from polling import wait_until

import graph_agent.nodes.executor as executor_module
from graph_agent import Context
from graph_agent.nodes.executor import SubtaskTimeoutError, call_with_timeout
from graph_agent.tools import pipeline_cache as pc
from graph_agent.tools import spec
from graph_agent.tools.devices import resolve_device
from graph_agent.tools.model_size import MB, estimate_bytes, torch_bytes, weight_files_bytes
from graph_agent.tools.pipeline_cache import (
    PIPELINES,
    AbandonedCallError,
    Lease,
    PipelineCache,
    load_pipeline,
    loading_device,
)
from graph_agent.tools.spec import TaskTool, ToolCall


class FakeLoader:
    """Loads a fresh object per call, with the size given in ``sizes_mb``; may be told to fail."""

    def __init__(self, sizes_mb: dict[str, float]) -> None:
        self.sizes_mb = sizes_mb
        self.calls: list[str] = []
        self.fail: set[str] = set()
        self.seen_keys: list[list[str]] = []  # what the cache held when each load started
        self.cache: PipelineCache | None = None

    def __call__(self, path: str) -> dict[str, Any]:
        self.calls.append(path)
        if self.cache is not None:
            self.seen_keys.append([k[1] for k in self.cache.cached_keys()])
        if path in self.fail:
            raise RuntimeError(f"simulated load failure for {path}")
        return {"path": path, "device": loading_device()}

    def estimate(self, obj: Any, path: str) -> int:
        return int(self.sizes_mb[path] * MB)


def make_cache(
    sizes_mb: dict[str, float],
    budget_mb: float | None = 100,
    *,
    pre_estimate: bool = False,
    **kwargs: Any,
):
    """A cache over fake models of ``sizes_mb``; ``pre_estimate``: loads reserve those sizes."""
    loader = FakeLoader(sizes_mb)
    cache = PipelineCache(
        budget_mb,
        device="cpu",
        estimate=loader.estimate,
        pre_estimate=(lambda p: int(sizes_mb[p] * MB)) if pre_estimate else (lambda p: 0),
        **kwargs,
    )
    loader.cache = cache
    return cache, loader


def paths(cache: PipelineCache) -> list[str]:
    return [key[1] for key in cache.cached_keys()]


# --------------------------------------------------------------------------- budget and LRU


def test_a_model_loads_once_and_is_reused():
    cache, loader = make_cache({"a": 10})
    first = cache.get("kind", "a", loader)
    assert cache.get("kind", "a", loader) is first
    assert loader.calls == ["a"] and cache.loads == 1 and cache.evictions == 0
    assert cache.get("other-kind", "a", loader) is not first  # the kind is part of the key
    assert cache.loads == 2


def test_least_recently_used_model_is_evicted_when_over_budget():
    cache, loader = make_cache({"a": 40, "b": 40, "c": 40}, budget_mb=100)
    cache.get("k", "a", loader)
    cache.get("k", "b", loader)
    cache.get("k", "a", loader)  # a is now the most recently used
    cache.get("k", "c", loader)
    assert paths(cache) == ["a", "c"] and cache.evictions == 1
    assert cache.loaded_bytes == 80 * MB
    cache.get("k", "b", loader)  # evicted, so loaded again (and a goes now)
    assert loader.calls == ["a", "b", "c", "b"] and paths(cache) == ["c", "b"]
    assert cache.stats() == {
        "model_loads": 4,
        "evictions": 2,
        "models_held": 2,
        "held_mb": 80.0,
        "budget_mb": 100.0,
    }


def test_a_model_larger_than_the_budget_loads_alone_with_a_warning(caplog):
    cache, loader = make_cache({"a": 30, "b": 30, "big": 150}, budget_mb=100)
    cache.get("k", "a", loader)
    cache.get("k", "b", loader)
    with caplog.at_level(logging.WARNING, logger=pc.__name__):
        big = cache.get("k", "big", loader)
    assert big["path"] == "big" and paths(cache) == ["big"] and cache.evictions == 2
    assert any("more than the whole memory budget" in r.getMessage() for r in caplog.records)
    cache.get("k", "a", loader)  # the next model pushes the big one out
    assert paths(cache) == ["a"]


def test_room_is_made_before_loading_from_the_weight_files(tmp_path):
    sizes = {}
    for name, mb in {"a": 60, "b": 60}.items():
        (tmp_path / name).mkdir()
        with open(tmp_path / name / "model.safetensors", "wb") as f:
            f.truncate(int(mb * MB))  # sparse: the size counts, not the disk
        sizes[str(tmp_path / name)] = mb
    loader = FakeLoader(sizes)
    cache = PipelineCache(100, device="cpu", estimate=loader.estimate)
    loader.cache = cache
    cache.get("k", tmp_path / "a", loader)
    cache.get("k", tmp_path / "b", loader)
    # While b loaded, a was already gone: peak memory stays within the budget.
    assert loader.seen_keys == [[], []] and paths(cache) == [str(tmp_path / "b")]


def test_a_failing_loader_leaves_nothing_behind_and_the_next_call_retries():
    cache, loader = make_cache({"a": 10, "bad": 10})
    cache.get("k", "a", loader)
    loader.fail.add("bad")
    with pytest.raises(RuntimeError, match="simulated load failure"):
        cache.get("k", "bad", loader)
    assert paths(cache) == ["a"] and cache.loads == 1 and cache._reserved == 0
    loader.fail.clear()
    assert cache.get("k", "bad", loader)["path"] == "bad"
    assert loader.calls == ["a", "bad", "bad"] and cache.loads == 2


def test_parallel_requests_for_one_model_load_it_once():
    cache, _ = make_cache({"a": 10})
    calls = []

    def slow_loader(path: str) -> object:
        calls.append(path)
        time.sleep(0.2)
        return object()

    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(cache.get("k", "a", slow_loader)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["a"] and len({id(x) for x in got}) == 1


def test_configure_applies_a_budget_and_zero_means_none():
    cache, loader = make_cache({"a": 40, "b": 40, "c": 40}, budget_mb=0)
    for name in "abc":
        cache.get("k", name, loader)
    assert paths(cache) == ["a", "b", "c"] and cache.budget_bytes is None
    cache.configure(memory_budget_mb=50)  # a smaller budget evicts at once
    assert paths(cache) == ["c"] and cache.evictions == 2
    with pytest.raises(ValueError, match="memory_budget_mb"):
        cache.configure(memory_budget_mb=-1)


def test_a_calls_lease_carries_its_runs_budget_and_device(monkeypatch):
    """Two runs in one process with different settings: each call's loads keep to its own
    run's budget and device (its Lease), and the cache's own settings do not move."""
    cache, loader = make_cache({"a": 40, "b": 40, "c": 40}, budget_mb=0)
    with cache.using(Lease(memory_budget_mb=0)):  # a run without a budget
        for name in "ab":
            cache.get("k", name, loader)
    assert paths(cache) == ["a", "b"]
    with cache.using(Lease(memory_budget_mb=50)):  # a run with 50 MB: room for one model
        cache.get("k", "c", loader)
    assert paths(cache) == ["c"] and cache.budget_bytes is None  # the cache's budget stays

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with cache.using(Lease(device="auto")):  # a run asking for the GPU
        assert cache.get("k", "c", loader)["device"] == "cuda"
    with cache.using(Lease(device="cpu")):  # a run beside it, on the CPU: its own entry
        assert cache.get("k", "c", loader)["device"] == "cpu"
    assert cache.device == "cpu" and sorted(k[2] for k in cache.cached_keys()) == ["auto", "cpu"]
    with pytest.raises(ValueError, match="memory_budget_mb"):
        Lease(memory_budget_mb=-1)
    with pytest.raises(ValueError):
        Lease(device="gpu-please")


def test_max_items_still_bounds_the_count():
    cache, loader = make_cache({"a": 1, "b": 1, "c": 1}, budget_mb=0, max_items=2)
    for name in "abc":
        cache.get("k", name, loader)
    assert paths(cache) == ["b", "c"]


# --------------------------------------------------------------------------- size estimates


def test_torch_models_are_sized_by_parameters_times_dtype_bytes():
    linear = torch.nn.Linear(10, 10)  # 100 weights + 10 biases
    assert torch_bytes(linear) == 110 * 4
    assert torch_bytes(torch.nn.Linear(10, 10).to(torch.float16)) == 110 * 2

    class Pipe:  # a pipeline holds its model as an attribute
        def __init__(self) -> None:
            self.model = linear
            self.tokenizer = "not a module"

    assert estimate_bytes(Pipe(), "/nonexistent") == 440
    tied = torch.nn.Sequential(linear, torch.nn.Linear(10, 10))
    tied[1].weight = linear.weight  # tied weights count once
    assert torch_bytes(tied) == 110 * 4 + 10 * 4
    assert torch_bytes(object()) is None


def test_models_torch_does_not_hold_are_sized_by_their_weight_files(tmp_path):
    ct2 = tmp_path / "whisper-ct2"  # CTranslate2: model.bin plus configs
    ct2.mkdir()
    (ct2 / "model.bin").write_bytes(b"\0" * 5000)
    (ct2 / "config.json").write_text("{}")
    (ct2 / "vocabulary.txt").write_text("a\nb\n")
    assert weight_files_bytes(ct2) == 5000

    piper = tmp_path / "piper"  # Piper: one ONNX voice, wrapped in a non-torch object
    piper.mkdir()
    (piper / "voice.onnx").write_bytes(b"\0" * 3000)
    (piper / "voice.onnx.json").write_text("{}")
    assert estimate_bytes(object(), piper) == 3000

    both = tmp_path / "both"  # the same weights in two formats count once (the larger)
    (both / ".cache").mkdir(parents=True)
    (both / "model.safetensors").write_bytes(b"\0" * 1000)
    (both / "pytorch_model.bin").write_bytes(b"\0" * 1200)
    (both / ".cache" / "big.safetensors").write_bytes(b"\0" * 9999)  # hidden: skipped
    (both / "2_Dense").mkdir()
    (both / "2_Dense" / "model.safetensors").write_bytes(b"\0" * 500)  # sub-modules count
    assert weight_files_bytes(both) == 1500
    assert weight_files_bytes(tmp_path / "missing") == 0


# --------------------------------------------------------------------------- devices


def test_device_choice(monkeypatch):
    assert resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device(None) == "cuda"
    assert resolve_device("cuda:1") == "cuda:1"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device(" CPU ") == "cpu"
    with pytest.raises(ValueError, match="no CUDA device"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="Unknown device 'tpu'"):
        resolve_device("tpu")
    with pytest.raises(ValueError, match="Unknown device 'gpu'"):  # checked without loading
        PipelineCache(device="gpu")


def test_this_machine_loads_on_the_cpu_unless_torch_sees_a_gpu():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto") == expected


def test_loaders_get_the_caches_device_and_it_is_part_of_the_key(monkeypatch, tmp_path):
    cache, loader = make_cache({"a": 1})
    assert cache.get("k", "a", loader)["device"] == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cache.configure(device="auto")
    assert cache.device == "cuda"
    on_gpu = cache.get("k", "a", loader)
    assert on_gpu["device"] == "cuda" and loader.calls == ["a", "a"]

    seen: dict[str, Any] = {}
    fake_transformers = types.ModuleType("transformers")
    fake_transformers.pipeline = lambda task, **kw: seen.update(kw) or "pipe"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformers", fake_transformers)
    assert cache.get("text-generation", tmp_path, lambda p: load_pipeline("x", p)) == "pipe"
    assert seen["device"] == "cuda" and seen["trust_remote_code"] is False
    assert load_pipeline("x", str(tmp_path), device="cpu") == "pipe" and seen["device"] == "cpu"


# --------------------------------------------------------------------------- abandoned calls


def test_an_abandoned_calls_models_leave_the_cache_until_it_finishes():
    cache, loader = make_cache({"a": 30, "b": 20})
    lease, release, got = Lease(), threading.Event(), {}

    def stuck_call() -> None:
        with cache.using(lease):
            got["a"] = cache.get("k", "a", loader)
            release.wait(5)
            got["b"] = cache.get("k", "b", loader)  # loaded after it was given up on

    worker = threading.Thread(target=stuck_call, daemon=True)
    worker.start()
    while "a" not in got:
        time.sleep(0.01)
    assert cache.abandon(lease) is True
    assert paths(cache) == [] and cache.retired_bytes == 30 * MB
    fresh = cache.get("k", "a", loader)  # a later call gets its own copy
    assert fresh is not got["a"] and cache.loads == 2
    release.set()
    worker.join(5)
    assert paths(cache) == ["a"]  # "b" never entered the cache
    assert cache.retired_bytes == 0 and cache.abandon(lease) is False


def test_call_with_timeout_returns_raises_or_times_out(tmp_path, monkeypatch):
    # ``stuck`` below never checks its cancel token: it is abandoned after the grace time.
    monkeypatch.setattr(executor_module, "STOP_GRACE_S", 0.2)
    assert call_with_timeout(lambda: 42, 5) == 42
    assert call_with_timeout(threading.get_ident, 0) == threading.get_ident()  # 0: inline
    with pytest.raises(KeyError, match="boom"):
        call_with_timeout(lambda: {}["boom"], 5)
    with pytest.raises(ValueError, match="subtask_timeout_s"):
        call_with_timeout(lambda: 1, -1)

    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"\0" * MB)
    release = threading.Event()
    loaded: list[object] = []

    def stuck() -> None:
        loaded.append(PIPELINES.get("test-timeout", model, lambda p: object()))
        release.wait(10)

    before = PIPELINES.retired_bytes
    started = time.perf_counter()
    with pytest.raises(SubtaskTimeoutError, match=r"timed out after 0\.3 s"):
        call_with_timeout(stuck, 0.3)
    assert time.perf_counter() - started < 1.0
    assert str(model) not in [key[1] for key in PIPELINES.cached_keys()]
    assert PIPELINES.retired_bytes == before + MB
    release.set()
    for _ in range(200):
        if PIPELINES.retired_bytes == before:
            break
        time.sleep(0.01)
    assert PIPELINES.retired_bytes == before


# --------------------------------------------------------------------------- run settings


def test_context_fields_and_env_fallbacks(monkeypatch):
    ctx = Context()
    assert (ctx.memory_budget_mb, ctx.device, ctx.subtask_timeout_s) == (6000, "auto", 600)
    monkeypatch.setenv("GRAPH_AGENT_MEMORY_BUDGET_MB", "2500")
    monkeypatch.setenv("GRAPH_AGENT_DEVICE", "cpu")
    monkeypatch.setenv("GRAPH_AGENT_SUBTASK_TIMEOUT_S", "0.5")
    ctx = Context()
    assert (ctx.memory_budget_mb, ctx.device, ctx.subtask_timeout_s) == (2500, "cpu", 0.5)
    assert Context(subtask_timeout_s=0).subtask_timeout_s == 0
    monkeypatch.setenv("GRAPH_AGENT_SUBTASK_TIMEOUT_S", "soon")
    with pytest.raises(ValueError, match="GRAPH_AGENT_SUBTASK_TIMEOUT_S"):
        Context()


def test_module_cache_reads_its_budget_from_the_env(monkeypatch):
    monkeypatch.setenv("GRAPH_AGENT_MEMORY_BUDGET_MB", "1234")
    assert pc._env_budget() == 1234
    monkeypatch.setenv("GRAPH_AGENT_MEMORY_BUDGET_MB", "lots")
    assert pc._env_budget() == pc.DEFAULT_MEMORY_BUDGET_MB
    monkeypatch.delenv("GRAPH_AGENT_MEMORY_BUDGET_MB")
    assert pc._env_budget() == pc.DEFAULT_MEMORY_BUDGET_MB


def test_default_pack_fits_in_the_default_budget(models_dir: Path):
    """The default budget is "sane": the default pack's weights fit in it together."""
    from graph_agent.tools.model_pack.manifest import PACKS

    total = sum(weight_files_bytes(models_dir / name) for name in PACKS["default"])
    assert 0 < total < pc.DEFAULT_MEMORY_BUDGET_MB * MB


# --------------------------------------------------------------------------- concurrent runs


def _overlaps(work: Any, jobs: list[Any]) -> int:
    """Run ``work(job)`` in one thread per job; the most calls seen inside ``work`` at once."""
    inside, most, guard = [0], [0], threading.Lock()
    barrier = threading.Barrier(len(jobs))

    def one(job: Any) -> None:
        barrier.wait()
        work(job, inside, most, guard)

    threads = [threading.Thread(target=one, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most[0]


def _count(inside: list[int], most: list[int], guard: threading.Lock) -> None:
    with guard:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
    time.sleep(0.05)
    with guard:
        inside[0] -= 1


def waiting(cache: PipelineCache) -> int:
    """Threads blocked in the cache (for a model's lock, a load, or room to load)."""
    return getattr(cache, "_waiting", 0)


def start(target: Any, *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def test_one_call_at_a_time_per_model_but_different_models_in_parallel():
    cache, loader = make_cache({"a": 1, "b": 1})

    def call(path, inside, most, guard):
        with cache.get_exclusive("k", path, loader):
            _count(inside, most, guard)

    assert _overlaps(call, ["a", "a", "a"]) == 1  # one pipeline is never run by two threads
    assert _overlaps(call, ["a", "b"]) == 2  # two models do run at once
    assert loader.calls == ["a", "b"]
    with (  # the same thread may nest
        cache.get_exclusive("k", "a", loader) as outer,
        cache.get_exclusive("k", "a", loader) as inner,
    ):
        assert inner is outer


def test_a_call_waiting_for_a_model_stays_serialised_when_the_model_is_evicted():
    """The lock is the entry's: evicting the model cannot unguard a call that already has it."""
    cache, loader = make_cache({"a": 10})
    holding, release = threading.Event(), threading.Event()
    got: dict[str, Any] = {}
    order: list[str] = []

    def first() -> None:
        with cache.get_exclusive("k", "a", loader) as model:
            got["first"] = model
            holding.set()
            release.wait(2)
            order.append("first done")

    def second() -> None:
        with cache.get_exclusive("k", "a", loader) as model:
            order.append("second runs")
            got["second"] = model

    threads = [start(first)]
    try:
        assert holding.wait(2)
        threads.append(start(second))
        assert wait_until(lambda: waiting(cache) == 1)  # it has the model, not yet the lock
        cache.clear()  # evicted meanwhile, as another model's load would
        with cache.get_exclusive("k", "a", loader) as fresh:  # a later call: a fresh copy
            assert fresh is not got["first"] and cache.loads == 2
    finally:
        release.set()
        for thread in threads:
            thread.join(2)
    assert order == ["first done", "second runs"] and got["second"] is got["first"]


def test_different_models_load_in_parallel_and_reserve_their_room_together():
    cache, loader = make_cache({"a": 30, "b": 40}, budget_mb=100, pre_estimate=True)
    inside = threading.Barrier(3, timeout=2)  # both loaders and this thread
    release = threading.Event()

    def slow(path: str) -> Any:
        inside.wait()
        release.wait(2)
        return loader(path)

    threads = [start(cache.get, "k", path, slow) for path in ("a", "b")]
    try:
        inside.wait()  # BrokenBarrierError if the loads ran one at a time
        assert cache._reserved == 70 * MB
    finally:
        release.set()
        for thread in threads:
            thread.join(2)
    assert sorted(paths(cache)) == ["a", "b"] and cache.loads == 2 and cache.evictions == 0
    assert cache._reserved == 0


def gated(loader: Any) -> tuple[Any, threading.Event, threading.Event]:
    """``loader`` that signals it started and waits for a release: (loader, inside, release)."""
    inside, release = threading.Event(), threading.Event()

    def slow(path: str) -> Any:
        inside.set()
        release.wait(2)
        return loader(path)

    return slow, inside, release


def test_a_load_that_does_not_fit_next_to_a_running_one_waits_without_reserving():
    """Room is reserved when a load starts: a queued load evicts nothing in use meanwhile."""
    cache, loader = make_cache({"x": 30, "a": 60, "b": 50}, budget_mb=100, pre_estimate=True)
    cache.get("k", "x", loader)
    slow_a, a_inside, a_release = gated(loader)
    threads = [start(cache.get, "k", "a", slow_a)]
    try:
        assert a_inside.wait(2)
        threads.append(start(cache.get, "k", "b", loader))  # 60 + 50 > 100: b must wait
        assert wait_until(lambda: waiting(cache) == 1 or "x" not in paths(cache))
        assert paths(cache) == ["x"]  # still there for the calls running on it
        assert cache._reserved == 60 * MB and loader.calls == ["x"]
    finally:
        a_release.set()
        for thread in threads:
            thread.join(2)
    # a fitted next to x; b then needed the room of both.
    assert loader.calls == ["x", "a", "b"] and paths(cache) == ["b"] and cache.evictions == 2


def test_a_large_load_waiting_for_room_is_not_overtaken_by_smaller_ones():
    # c fits next to a but not next to big: it must wait for big, which came first.
    cache, loader = make_cache({"a": 60, "big": 95, "c": 10}, budget_mb=100, pre_estimate=True)
    slow_a, a_inside, a_release = gated(loader)
    threads = [start(cache.get, "k", "a", slow_a)]
    try:
        assert a_inside.wait(2)
        threads.append(start(cache.get, "k", "big", loader))
        assert wait_until(lambda: waiting(cache) == 1)
        threads.append(start(cache.get, "k", "c", loader))  # would fit next to a, but waits
        assert wait_until(lambda: waiting(cache) == 2)
        assert loader.calls == []
    finally:
        a_release.set()
        for thread in threads:
            thread.join(2)
    assert loader.calls == ["a", "big", "c"]


def test_a_loader_may_load_a_model_another_thread_waits_to_load():
    """No global load lock: a loader asking for another model cannot deadlock with a thread
    that waits to load that model (the old per-key lock -> global lock ordering did)."""
    cache, loader = make_cache({"x": 60, "k": 50}, budget_mb=100, pre_estimate=True)
    x_inside = threading.Event()
    nested: list[Any] = []
    other_waited: list[bool] = []

    def x_loader(path: str) -> Any:
        x_inside.set()
        # The other thread waits for room to load k (asserted below, outside the loader).
        other_waited.append(wait_until(lambda: waiting(cache) >= 1))
        nested.append(cache.get("k", "k", loader))
        return loader(path)

    threads = [start(cache.get, "k", "x", x_loader)]
    assert x_inside.wait(2)
    threads.append(start(cache.get, "k", "k", loader))
    for thread in threads:
        thread.join(2)
    assert not any(thread.is_alive() for thread in threads), "deadlocked"
    assert other_waited == [True], "k's loader never waited, so the test proved nothing"
    assert nested and nested[0]["path"] == "k"


def test_a_loader_asking_for_its_own_model_fails_instead_of_hanging():
    cache, _ = make_cache({"a": 1})
    errors: list[BaseException] = []

    def recursive(path: str) -> Any:
        return cache.get("k", "a", recursive)

    def call() -> None:
        try:
            cache.get("k", "a", recursive)
        except RuntimeError as exc:
            errors.append(exc)

    thread = start(call)
    thread.join(2)
    assert not thread.is_alive() and "asked the cache for itself" in str(errors[0])
    assert paths(cache) == [] and cache._loading_keys == {} and cache._reserved == 0


# --------------------------------------------------------------------------- abandoned waiters


def sleepy_tool(monkeypatch, cache: PipelineCache, loader: Any, release: threading.Event):
    """A TaskTool on ``cache`` whose call named "runner" holds its model until ``release``."""
    running = threading.Event()

    def call(model: Any, tool_call: ToolCall) -> Any:
        if tool_call.subtask_id == "runner":
            running.set()
            release.wait(5)
        return model

    monkeypatch.setattr(spec, "PIPELINES", cache)
    tool = TaskTool(
        task="test",
        inputs=(),
        output="text",
        loader="k",
        call=call,
        description="Hold the model (test only).",
        make_loader=loader,
    )
    return tool, running


def run_under(cache: PipelineCache, tool: TaskTool, lease: Lease, name: str, box: dict) -> None:
    with cache.using(lease):
        try:
            box[name] = tool.run("a", ToolCall(args={}, artifacts=None, subtask_id=name))  # type: ignore[arg-type]
        except Exception as exc:
            box[name] = exc


def test_abandoned_waiters_on_one_model_count_it_once_and_stop_waiting(monkeypatch):
    cache, loader = make_cache({"a": 30})
    release = threading.Event()
    tool, running = sleepy_tool(monkeypatch, cache, loader, release)
    leases = {name: Lease() for name in ("runner", "w1", "w2", "w3")}
    box: dict[str, Any] = {}
    runner = start(run_under, cache, tool, leases["runner"], "runner", box)
    try:
        assert running.wait(2)
        waiters = [start(run_under, cache, tool, leases[n], n, box) for n in ("w1", "w2", "w3")]
        assert wait_until(lambda: waiting(cache) == 3)
        assert all(cache.abandon(lease) for lease in leases.values())  # all timed out
        assert cache.retired_bytes == 30 * MB  # once: only the runner holds it
        assert paths(cache) == []
        for waiter in waiters:
            waiter.join(2)
        assert not any(w.is_alive() for w in waiters), "abandoned waiters kept waiting"
        assert all(isinstance(box[n], AbandonedCallError) for n in ("w1", "w2", "w3"))
    finally:
        release.set()
        runner.join(2)
    assert cache.retired_bytes == 0 and cache.loads == 1


def test_two_abandoned_calls_on_one_model_count_it_once_until_both_finish():
    cache, loader = make_cache({"a": 30})
    leases = [Lease(), Lease()]
    got = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]

    def stuck(i: int) -> None:
        with cache.using(leases[i]):
            cache.get("k", "a", loader)
            got[i].set()
            release[i].wait(5)

    threads = [start(stuck, i) for i in (0, 1)]
    try:
        assert all(event.wait(2) for event in got)
        assert cache.abandon(leases[0]) and cache.abandon(leases[1])
        assert cache.retired_bytes == 30 * MB
        release[0].set()
        threads[0].join(2)
        assert cache.retired_bytes == 30 * MB  # the other one still runs on it
    finally:
        for event in release:
            event.set()
        for thread in threads:
            thread.join(2)
    assert cache.retired_bytes == 0


def test_a_waiter_takes_a_fresh_copy_instead_of_queueing_behind_an_abandoned_call(
    monkeypatch,
):
    cache, loader = make_cache({"a": 30})
    release = threading.Event()
    tool, running = sleepy_tool(monkeypatch, cache, loader, release)
    runner_lease, box = Lease(), {}
    runner = start(run_under, cache, tool, runner_lease, "runner", box)
    try:
        assert running.wait(2)
        waiter = start(run_under, cache, tool, Lease(), "waiter", box)
        assert wait_until(lambda: waiting(cache) == 1)
        assert cache.abandon(runner_lease)
        waiter.join(2)
        assert not waiter.is_alive(), "queued behind the abandoned call"
        assert box["waiter"]["path"] == "a" and cache.loads == 2 and paths(cache) == ["a"]
        assert cache.retired_bytes == 30 * MB
    finally:
        release.set()
        runner.join(2)
    assert box["runner"] is not box["waiter"] and cache.retired_bytes == 0


def test_a_call_abandoned_while_its_model_loads_leaves_the_model_cached(monkeypatch):
    """It never ran on the model, so the model is not set aside with it."""
    cache, loader = make_cache({"a": 30})
    loading, release = threading.Event(), threading.Event()

    def slow(path: str) -> Any:
        loading.set()
        release.wait(5)
        return loader(path)

    tool, _ = sleepy_tool(monkeypatch, cache, slow, threading.Event())
    lease, box = Lease(), {}
    threads = [start(cache.get, "k", "a", slow)]
    try:
        assert loading.wait(2)
        threads.append(start(run_under, cache, tool, lease, "waiter", box))
        assert wait_until(lambda: waiting(cache) == 1)
        assert cache.abandon(lease)
        threads[1].join(2)
        assert not threads[1].is_alive(), "the abandoned call kept waiting for the load"
    finally:
        release.set()
        for thread in threads:
            thread.join(2)
    assert isinstance(box["waiter"], AbandonedCallError)
    assert paths(cache) == ["a"] and cache.retired_bytes == 0 and cache.loads == 1


# --------------------------------------------------------------------------- failures mid-load


class Interrupted(BaseException):
    """Stands for KeyboardInterrupt or SystemExit, without interrupting pytest itself."""


def finishes(target: Any, *args: Any) -> bool:
    """Whether ``target(*args)`` returns (or raises) within 2 s in another thread."""
    thread = start(target, *args)
    thread.join(2)
    return not thread.is_alive()


def assert_no_load_left(cache: PipelineCache) -> None:
    assert cache._loading_keys == {} and cache._loads_running == 0 and cache._reserved == 0


def test_a_failure_freeing_evicted_models_releases_the_load(monkeypatch):
    """Making room for a load evicts x; freeing it fails (a CUDA error in empty_cache). The
    load's key, slot and reservation are released all the same, so the next call loads it."""
    cache, loader = make_cache({"x": 60, "a": 60}, budget_mb=100, pre_estimate=True)
    cache.get("k", "x", loader)
    failures = [RuntimeError("CUDA error: an illegal memory access was encountered")]

    def empty_cache() -> None:
        if failures:
            raise failures.pop()

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", empty_cache)
    with pytest.raises(RuntimeError, match="CUDA error"):
        cache.get("k", "a", loader)
    assert paths(cache) == [] and cache.evictions == 1
    assert_no_load_left(cache)
    assert finishes(cache.get, "k", "a", loader), "the key stayed claimed by the failed load"
    assert paths(cache) == ["a"] and loader.calls == ["x", "a"]
    assert_no_load_left(cache)


def test_a_base_exception_sizing_a_loaded_model_releases_its_reservation():
    """An estimate interrupted by a BaseException (Exception is already caught) ends the load:
    no phantom load keeps its reservation, so a load that fits only alone does not wait."""
    cache, loader = make_cache({"a": 60, "b": 50}, budget_mb=100, pre_estimate=True)

    def estimate(obj: Any, path: str) -> int:
        if path == "a":
            raise Interrupted
        return loader.estimate(obj, path)

    cache._estimate = estimate
    with pytest.raises(Interrupted):
        cache.get("k", "a", loader)
    assert paths(cache) == []
    assert_no_load_left(cache)
    assert finishes(cache.get, "k", "b", loader), "b waited for room next to a phantom load"
    assert paths(cache) == ["b"] and cache.loads == 1
    assert_no_load_left(cache)


def test_a_base_exception_in_the_loader_releases_its_key_and_reservation():
    cache, loader = make_cache({"a": 60, "b": 50}, budget_mb=100, pre_estimate=True)

    def interrupted(path: str) -> Any:
        raise Interrupted

    with pytest.raises(Interrupted):
        cache.get("k", "a", interrupted)
    assert_no_load_left(cache)
    assert finishes(cache.get, "k", "a", loader) and finishes(cache.get, "k", "b", loader)
    assert loader.calls == ["a", "b"]
    assert_no_load_left(cache)
