"""A warm cache of loaded pipelines, so a second call with the same model does not reload it.

Loading is the slow part of every step (seconds for a 0.5B model on two cores), and parallel
branches may ask for the same model at once, so each key loads exactly once under its own lock.

The cache is bounded by memory, not by a count: every entry carries an estimate of the memory
it holds (parameters x bytes per dtype for torch models; the size of the weight files for
models torch does not hold, such as a Piper ONNX voice or a CTranslate2 Whisper), and the least
recently used entries are dropped whenever the total would exceed the budget. A model larger
than the whole budget still loads, alone, with a warning: refusing it would fail a run the
machine may well manage.

Concurrent runs share the cache. Loads happen one at a time (first imports inside loaders
are not thread-safe), and calls on one loaded model run one at a time (`exclusive`:
transformers pipelines are not thread-safe either); different models still run in parallel.

A tool call that the executor abandons after a timeout keeps running in its thread (Python
cannot kill a thread). Such a call holds a :class:`Lease`; abandoning the lease takes the
models it used out of the cache, so no later call shares a pipeline with a call still running
on it, and keeps their memory counted against the budget until the abandoned call finishes.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph_agent.tools.errors import ModelUnavailableError

log = logging.getLogger(__name__)

#: The budget when neither the run's Context nor GRAPH_AGENT_MEMORY_BUDGET_MB sets one: the
#: default pack's models all fit at once (about 2 GB in float32) with room for a larger one.
DEFAULT_MEMORY_BUDGET_MB = 6000
MB = 1024 * 1024

#: Files that hold weights, by suffix. A directory may hold the same weights in two formats
#: (``model.safetensors`` and ``pytorch_model.bin``), so sizes are summed per suffix and the
#: largest group counts, not the sum of all of them.
WEIGHT_SUFFIXES = frozenset(
    {".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".onnx_data", ".gguf", ".h5"}
)

_DEVICE_FORMS = "'auto', 'cpu', 'cuda' or 'cuda:<index>'"
_CUDA_DEVICE = re.compile(r"cuda(:\d+)?")

#: Per thread: the cache whose load is in progress, read by loaders through `loading_device`.
_loading = threading.local()
#: One load at a time in the process. Loaders import lazily (transformers resolves
#: ``from transformers import pipeline`` on first use), and those first imports are not
#: thread-safe: ten concurrent first requests on a fresh server raised "cannot import name
#: 'pipeline' from 'transformers'". Two cores gain little from parallel loads anyway.
_LOAD_LOCK = threading.RLock()


# --------------------------------------------------------------------------- size estimates


def weight_files_bytes(model_dir: str | Path) -> int:
    """Bytes of weight files under ``model_dir``: the estimate for models torch does not hold.

    Also the estimate made *before* a load, so room is made before the memory is used.
    Hidden folders (``.cache``, ``.git``) are skipped. 0 when the folder does not exist.
    """
    root = Path(model_dir)
    if not root.is_dir():
        return 0
    per_suffix: dict[str, int] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).parts
        if any(part.startswith(".") for part in rel) or path.suffix.lower() not in WEIGHT_SUFFIXES:
            continue
        try:
            if path.is_file():
                suffix = path.suffix.lower()
                per_suffix[suffix] = per_suffix.get(suffix, 0) + path.stat().st_size
        except OSError:
            continue
    return max(per_suffix.values(), default=0)


def torch_bytes(obj: Any) -> int | None:
    """Parameter and buffer bytes of the torch modules ``obj`` holds, or None if it holds none.

    ``obj`` may be a module itself (a SentenceTransformer), or hold modules as attributes (a
    pipeline's ``.model``, a wrapper's ``.model``). Tied weights count once. Torch is not
    imported here: an object can only hold torch modules if torch is already loaded.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    module_type = torch.nn.Module
    if isinstance(obj, module_type):
        modules = [obj]
    else:
        attrs = getattr(obj, "__dict__", None) or {}
        modules = [value for value in attrs.values() if isinstance(value, module_type)]
    if not modules:
        return None
    seen: set[int] = set()
    total = 0
    for module in modules:
        for tensor in (*module.parameters(), *module.buffers()):
            if id(tensor) in seen or tensor.device.type == "meta":
                continue
            seen.add(id(tensor))
            total += tensor.numel() * tensor.element_size()
    return total


def estimate_bytes(obj: Any, model_dir: str | Path) -> int:
    """Memory a loaded model holds: from its tensors when it has any, else its weight files."""
    counted = torch_bytes(obj)
    return counted if counted is not None else weight_files_bytes(model_dir)


# --------------------------------------------------------------------------- devices


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def resolve_device(requested: str | None) -> str:
    """The torch device to load on: ``"auto"`` is CUDA when torch sees a GPU, else the CPU.

    An explicit ``"cuda"`` on a machine without one is an error rather than a silent CPU run,
    so a misconfigured GPU host is noticed.
    """
    value = check_device(requested)
    if value == "cpu":
        return "cpu"
    if value == "auto":
        return "cuda" if _cuda_available() else "cpu"
    if not _cuda_available():
        raise ValueError(
            f"device={requested!r} asks for a GPU, but torch sees no CUDA device here. "
            "Use 'auto' (GPU when there is one) or 'cpu'."
        )
    return value


def check_device(requested: str | None) -> str:
    """The device setting, normalised, or a ValueError naming the accepted forms.

    Checks the form only, without importing torch, so a typo fails at once even when no
    model ends up being loaded.
    """
    value = (requested or "auto").strip().lower()
    if value in ("auto", "cpu") or _CUDA_DEVICE.fullmatch(value):
        return value
    raise ValueError(f"Unknown device {requested!r}: use {_DEVICE_FORMS}.")


def loading_device() -> str:
    """The device a loader should put its model on.

    Inside `PipelineCache.get` it is the device of the cache that is loading; elsewhere, the
    process-wide cache's. Loaders that build models themselves should use it rather than a
    fixed ``"cpu"``. It is resolved only when a loader asks, so loaders that never touch
    torch (a Piper voice, a test fake) do not pay for importing it.
    """
    cache = getattr(_loading, "cache", None) or PIPELINES
    return cache.device


# --------------------------------------------------------------------------- the cache


@dataclass(eq=False)
class _Entry:
    value: Any
    nbytes: int


class Lease:
    """The cache entries one tool call has used, so an abandoned call's models can be set aside.

    Enter it with `PipelineCache.using` in the thread that runs the call; call
    `PipelineCache.abandon` from the thread that gave up waiting.
    """

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, str], _Entry] = {}
        self.abandoned = False
        self.finished = False
        self.held_bytes = 0


class PipelineCache:
    """Least-recently-used cache of loaded models keyed by (kind, model path, device setting).

    ``memory_budget_mb`` bounds the estimated memory of the entries (``None`` or 0: no bound).
    ``max_items`` optionally bounds their number as well. ``estimate(obj, model_dir)`` sizes a
    loaded model and ``pre_estimate(model_dir)`` sizes it before loading; both are parameters
    so tests can use fakes.
    """

    def __init__(
        self,
        memory_budget_mb: float | None = DEFAULT_MEMORY_BUDGET_MB,
        *,
        device: str = "auto",
        max_items: int | None = None,
        estimate: Callable[[Any, str], int] = estimate_bytes,
        pre_estimate: Callable[[str], int] = weight_files_bytes,
    ) -> None:
        self.max_items = max_items
        self.budget_bytes: int | None = None
        self._estimate = estimate
        self._pre_estimate = pre_estimate
        self._items: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self._local = threading.local()
        self._device_request = "auto"
        self._device: str | None = None
        self._reserved = 0  # pre-estimates of loads in progress
        # id(loaded model) -> the lock `exclusive` holds while one call runs it.
        self._use_locks: dict[int, threading.RLock] = {}
        self._retired = 0  # entries held by abandoned calls, until they finish
        self.loads = 0
        self.evictions = 0
        self.configure(memory_budget_mb=memory_budget_mb, device=device)

    # -- settings

    def configure(
        self, *, memory_budget_mb: float | None = None, device: str | None = None
    ) -> None:
        """Apply a run's settings; the executor calls this with the run's Context.

        A smaller budget evicts at once. A new device setting only changes which entries later
        calls get (the setting is part of the key); it is resolved when a loader first asks
        (`loading_device`). The settings are process-wide: with concurrent runs that disagree,
        the last one to start a step wins.
        """
        evicted: list[_Entry] = []
        if memory_budget_mb is not None:
            if memory_budget_mb < 0:
                raise ValueError(
                    f"memory_budget_mb={memory_budget_mb} must be 0 (no budget) or positive."
                )
            budget = int(memory_budget_mb * MB) or None
            with self._guard:
                if budget != self.budget_bytes:
                    self.budget_bytes = budget
                    evicted = self._make_room(0)
        if device is not None and (device := check_device(device)) != self._device_request:
            with self._guard:
                self._device_request, self._device = device, None
        self._dropped(evicted)

    @property
    def device(self) -> str:
        """The resolved device (``"cpu"``, ``"cuda"`` ...) new entries load on."""
        if self._device is None:
            self._device = resolve_device(self._device_request)
        return self._device

    # -- what is held

    @property
    def loaded_bytes(self) -> int:
        """Estimated bytes of the entries in the cache."""
        with self._guard:
            return sum(e.nbytes for e in self._items.values())

    @property
    def retired_bytes(self) -> int:
        """Estimated bytes held by abandoned calls that have not finished yet."""
        return self._retired

    def stats(self) -> dict[str, Any]:
        """Counters for a run's report: a server operator checks that loads stay flat.

        They are process-wide (since the process started), not per run: a warm server shows
        as loads that stop growing while requests go on.
        """
        with self._guard:
            held = len(self._items)
            loaded = sum(e.nbytes for e in self._items.values())
        return {
            "model_loads": self.loads,
            "evictions": self.evictions,
            "models_held": held,
            "held_mb": round(loaded / MB, 1),
            "budget_mb": round(self.budget_bytes / MB, 1) if self.budget_bytes else None,
        }

    def cached_keys(self) -> list[tuple[str, str, str]]:
        """Cached keys, least recently used first."""
        with self._guard:
            return list(self._items)

    # -- lookup and loading

    def get(self, kind: str, model: str | Path, loader: Callable[[str], Any]) -> Any:
        """Return the loaded object for ``(kind, model)``, loading it once if needed.

        A loader that raises leaves nothing behind: the next call tries again.
        """
        path = str(model)
        key = (kind, path, self._device_request)
        lease: Lease | None = getattr(self._local, "lease", None)
        with self._guard:
            entry = self._hit(key, lease)
            if entry is not None:
                return entry.value
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                entry = self._hit(key, lease)
                if entry is not None:
                    return entry.value
            return self._load(key, path, loader, lease)

    @contextmanager
    def exclusive(self, model: Any) -> Iterator[None]:
        """Run one call at a time on a loaded ``model`` (concurrent runs share the cache).

        transformers pipelines are not thread-safe: under load, two threads transcribing with
        one Whisper pipeline returned garbage (NUL characters and all). Different models still
        run in parallel; a call waiting here counts toward its subtask timeout. An object this
        cache did not load runs unguarded.
        """
        lock = self._use_locks.get(id(model))
        if lock is None:
            yield
            return
        with lock:
            yield

    def _hit(self, key: tuple[str, str, str], lease: Lease | None) -> _Entry | None:
        entry = self._items.get(key)
        if entry is not None:
            self._items.move_to_end(key)
            self._note_use(key, entry, lease)
        return entry

    def _load(
        self,
        key: tuple[str, str, str],
        path: str,
        loader: Callable[[str], Any],
        lease: Lease | None,
    ) -> Any:
        expected = max(0, int(self._pre_estimate(path) or 0))
        with self._guard:
            evicted = self._make_room(expected)
            self._reserved += expected
        self._dropped(evicted)
        previous = getattr(_loading, "cache", None)
        _loading.cache = self
        try:
            with _LOAD_LOCK:
                loaded = loader(path)
        finally:
            _loading.cache = previous
            with self._guard:
                self._reserved -= expected
        try:
            nbytes = max(0, int(self._estimate(loaded, path)))
        except Exception:  # an estimate must never fail a load that worked
            log.debug("Could not size %s; using its weight files", path, exc_info=True)
            nbytes = expected
        with self._guard:
            evicted = self._make_room(nbytes, adding=True)
            if self.budget_bytes is not None and nbytes > self.budget_bytes:
                log.warning(
                    "Model %s needs about %.0f MB, more than the whole memory budget of %.0f MB "
                    "(Context.memory_budget_mb / GRAPH_AGENT_MEMORY_BUDGET_MB); it is loaded "
                    "alone, with every other model dropped from the cache.",
                    path,
                    nbytes / MB,
                    self.budget_bytes / MB,
                )
            entry = _Entry(loaded, nbytes)
            self._items[key] = entry
            self._use_locks[id(loaded)] = threading.RLock()
            self.loads += 1
            self._note_use(key, entry, lease)
        self._dropped(evicted)
        return loaded

    def _make_room(self, need: int, adding: bool = False) -> list[_Entry]:
        """Drop least recently used entries until ``need`` more bytes (and, when ``adding``,
        one more entry) fit. Call under the guard.

        Returns the dropped entries so the caller can release them outside the lock.
        """
        evicted: list[_Entry] = []
        budget = self.budget_bytes

        def over() -> bool:
            if adding and self.max_items is not None and len(self._items) >= self.max_items:
                return True
            if budget is None:
                return False
            used = sum(e.nbytes for e in self._items.values()) + self._reserved + self._retired
            return used + need > budget

        while self._items and over():
            (kind, path, _), entry = self._items.popitem(last=False)
            self.evictions += 1
            evicted.append(entry)
            log.info(
                "Dropped %s %s (about %.0f MB) from the pipeline cache to stay within the "
                "memory budget.",
                kind,
                path,
                entry.nbytes / MB,
            )
        return evicted

    def _dropped(self, evicted: list[_Entry]) -> None:
        """Free evicted models now rather than at the next garbage collection."""
        if not evicted:
            return
        for entry in evicted:  # a call still running keeps its own reference to the lock
            self._use_locks.pop(id(entry.value), None)
        evicted.clear()
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    # -- abandoned calls

    def _note_use(self, key: tuple[str, str, str], entry: _Entry, lease: Lease | None) -> None:
        """Record that ``lease``'s call uses ``entry``. Call under the guard."""
        if lease is None or lease.finished:
            return
        if key in lease.entries and lease.entries[key] is entry:
            return
        lease.entries[key] = entry
        if lease.abandoned:  # a call already given up on loaded it: keep it out of the cache
            if self._items.get(key) is entry:
                del self._items[key]
            self._retired += entry.nbytes
            lease.held_bytes += entry.nbytes

    @contextmanager
    def using(self, lease: Lease) -> Iterator[Lease]:
        """Track the entries this thread's call uses under ``lease``, until the block ends."""
        previous = getattr(self._local, "lease", None)
        self._local.lease = lease
        try:
            yield lease
        finally:
            self._local.lease = previous
            with self._guard:
                lease.finished = True
                if lease.abandoned:
                    self._retired -= lease.held_bytes
                    released, lease.held_bytes = lease.held_bytes, 0
                else:
                    released = 0
            if released:
                log.info(
                    "An abandoned (timed-out) call finished; its %.0f MB of models are released.",
                    released / MB,
                )
                gc.collect()

    def abandon(self, lease: Lease) -> bool:
        """Give up on a call still running under ``lease``.

        Its models leave the cache (the next call loads a fresh copy instead of sharing one
        with a call still running) and stay counted against the budget until it finishes.
        Returns False when the call had already finished, and nothing changes.
        """
        with self._guard:
            if lease.finished or lease.abandoned:
                return False
            lease.abandoned = True
            for key, entry in lease.entries.items():
                if self._items.get(key) is entry:
                    del self._items[key]
                lease.held_bytes += entry.nbytes
            self._retired += lease.held_bytes
        return True

    def clear(self) -> None:
        with self._guard:
            evicted = list(self._items.values())
            self._items.clear()
        self._dropped(evicted)


def load_pipeline(task: str, model: str, device: str | None = None, **kwargs: Any) -> Any:
    """Load a `transformers` pipeline from a local directory, never from the Hub.

    Remote code stays off: model cards and repositories are data, not code we run. The device
    defaults to the one the cache is loading for (`loading_device`).
    """
    path = Path(model)
    if not path.is_dir():
        raise ModelUnavailableError(
            f"Model {model!r} is not on this machine and graph-agent never downloads at run "
            "time. Install it with `graph-agent models install`, or pick another model."
        )
    from transformers import pipeline

    return pipeline(
        task,
        model=str(path),
        device=device or loading_device(),
        trust_remote_code=False,
        **kwargs,
    )


def _env_budget() -> float:
    """GRAPH_AGENT_MEMORY_BUDGET_MB for tools used outside a run; a bad value is not fatal here
    (the run's Context reports it clearly), so it falls back to the default."""
    raw = os.environ.get("GRAPH_AGENT_MEMORY_BUDGET_MB", "")
    try:
        budget = float(raw) if raw.strip() else DEFAULT_MEMORY_BUDGET_MB
    except ValueError:
        budget = -1.0
    if budget < 0:
        log.warning("Ignoring GRAPH_AGENT_MEMORY_BUDGET_MB=%r: not a number >= 0.", raw)
        return DEFAULT_MEMORY_BUDGET_MB
    return budget


#: The process-wide cache the tools share. The executor applies each run's Context to it.
PIPELINES = PipelineCache(_env_budget(), device=os.environ.get("GRAPH_AGENT_DEVICE") or "auto")
