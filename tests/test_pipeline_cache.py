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

from graph_agent import Context
from graph_agent.nodes.executor import SubtaskTimeoutError, call_with_timeout
from graph_agent.tools import pipeline_cache as pc
from graph_agent.tools.pipeline_cache import (
    MB,
    PIPELINES,
    Lease,
    PipelineCache,
    estimate_bytes,
    load_pipeline,
    loading_device,
    resolve_device,
    torch_bytes,
    weight_files_bytes,
)


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


def make_cache(sizes_mb: dict[str, float], budget_mb: float | None = 100, **kwargs: Any):
    loader = FakeLoader(sizes_mb)
    cache = PipelineCache(
        budget_mb, device="cpu", estimate=loader.estimate, pre_estimate=lambda p: 0, **kwargs
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


def test_call_with_timeout_returns_raises_or_times_out(tmp_path):
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


def test_one_call_at_a_time_per_model_but_different_models_in_parallel():
    cache, loader = make_cache({"a": 1, "b": 1})
    a, b = cache.get("k", "a", loader), cache.get("k", "b", loader)

    def call(model, inside, most, guard):
        with cache.exclusive(model):
            _count(inside, most, guard)

    assert _overlaps(call, [a, a, a]) == 1  # one pipeline is never run by two threads
    assert _overlaps(call, [a, b]) == 2  # two models do run at once
    assert _overlaps(call, [{"not": "cached"}] * 2) == 2  # unknown objects are not guarded


def test_loads_happen_one_at_a_time_even_for_different_models():
    cache, loader = make_cache({"a": 1, "b": 1, "c": 1}, budget_mb=None)

    def load(path, inside, most, guard):
        def slow(p: str) -> Any:
            _count(inside, most, guard)
            return loader(p)

        cache.get("k", path, slow)

    assert _overlaps(load, ["a", "b", "c"]) == 1
    assert sorted(loader.calls) == ["a", "b", "c"]
