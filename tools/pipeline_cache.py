"""A warm cache of loaded pipelines, so a second call with the same model does not reload it.

Loading is the slow part of every step (seconds for a 0.5B model on two cores), and parallel
branches may ask for the same model at once, so each key loads exactly once: later requests for
it wait for the load in progress.

The cache is bounded by memory, not by a count: every entry carries an estimate of the memory
it holds (parameters x bytes per dtype for torch models; the size of the weight files for
models torch does not hold, such as a Piper ONNX voice or a CTranslate2 Whisper), and the least
recently used entries are dropped whenever the total would exceed the budget. A model larger
than the whole budget still loads, alone, with a warning: refusing it would fail a run the
machine may well manage.

Concurrent runs share the cache. Different models load in parallel. What loaders cannot do in
parallel is their first lazy imports (`warm_imports`: done once each, one at a time, before the
first load that needs them). A load reserves the memory its weight files predict when it starts,
not while it waits, and starts only when it fits next to the loads in progress (or none is in
progress), so parallel loads stay within the budget together. Calls on one loaded model run one
at a time (`get_exclusive`: transformers pipelines are not thread-safe); the lock belongs to the
cache entry, so a call that got a model just before it was evicted is still serialised with the
others on it. Different models run in parallel.

A tool call that the executor abandons after a timeout keeps running in its thread (Python
cannot kill a thread). Such a call holds a :class:`Lease`; abandoning the lease takes the
models it ran on out of the cache, so no later call shares a pipeline with a call still running
on it, and keeps their memory counted against the budget (once per model, however many
abandoned calls hold it) until the last abandoned call on it finishes. A call abandoned while it
still waits (for a model's lock, a load, or room to load) stops waiting instead.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graph_agent.common.first_imports import TRANSFORMERS_PIPELINES, warm_imports
from graph_agent.tools.cancel import CancelToken, install_torch_hook
from graph_agent.tools.devices import check_device, resolve_device
from graph_agent.tools.errors import ModelUnavailableError
from graph_agent.tools.model_size import MB, estimate_bytes, weight_files_bytes

log = logging.getLogger(__name__)

#: The budget when neither the run's Context nor GRAPH_AGENT_MEMORY_BUDGET_MB sets one: the
#: default pack's models all fit at once (about 2 GB in float32) with room for a larger one.
DEFAULT_MEMORY_BUDGET_MB = 6000


#: Per thread: the cache whose load is in progress, read by loaders through `loading_device`.
_loading = threading.local()


class AbandonedCallError(TimeoutError):
    """A call the executor gave up on (past ``subtask_timeout_s``) stopped waiting for a model."""


# --------------------------------------------------------------------------- devices


def loading_device() -> str:
    """The device a loader should put its model on.

    Inside `PipelineCache.get` it is the device of the call that is loading (its lease's, else
    the cache's); elsewhere, the process-wide cache's. Loaders that build models themselves
    should use it rather than a fixed ``"cpu"``. It is resolved only when a loader asks, so
    loaders that never touch torch (a Piper voice, a test fake) do not pay for importing it.
    """
    requested = getattr(_loading, "device", None)
    if requested is not None:
        return resolve_device(requested)
    cache = getattr(_loading, "cache", None) or PIPELINES
    return cache.device


# --------------------------------------------------------------------------- the cache


Key = tuple[str, str, str]


@dataclass(eq=False)
class _Entry:
    """A loaded model, its estimated size, and the lock calls on it hold (`get_exclusive`).

    The lock is this entry's own (``owner``, ``depth``, changed under the cache's guard), so it
    lives as long as anyone holds the entry: evicting the entry cannot unlock the model for a
    call that got it before the eviction. It is reentrant, like the RLock it replaces.
    """

    value: Any
    nbytes: int
    owner: int | None = None  # the thread running a call on it
    depth: int = 0  # that thread's nested holds
    abandoned_users: int = 0  # abandoned calls that ran on it and have not finished


@dataclass(eq=False)
class _Claim:
    """A load in progress: its key is claimed and ``expected`` bytes are reserved for it.

    ``ended`` makes releasing it (`PipelineCache._end_load`) happen exactly once, whichever
    path the load takes: the entry replacing the reservation, or any exception on the way.
    """

    expected: int
    ended: bool = False


class Lease:
    """One tool call's settings, and the cache entries it has used, so an abandoned call's
    models can be set aside.

    ``device`` and ``memory_budget_mb`` are the run's own (its Context): they apply to the
    loads this call makes, so concurrent runs with different settings do not see each
    other's (None: the cache's). Enter it with `PipelineCache.using` in the thread that runs
    the call; call `PipelineCache.abandon` from the thread that gave up waiting.
    """

    def __init__(self, device: str | None = None, memory_budget_mb: float | None = None) -> None:
        self.device = check_device(device) if device is not None else None
        if memory_budget_mb is not None and memory_budget_mb < 0:
            raise ValueError(
                f"memory_budget_mb={memory_budget_mb} must be 0 (no budget) or positive."
            )
        #: "cache": the cache's own budget; None: no budget (0 MB in the Context).
        self.budget: int | Literal["cache"] | None = (
            "cache" if memory_budget_mb is None else (int(memory_budget_mb * MB) or None)
        )
        #: entry -> its key. An entry counts once the call runs on it: as soon as `get` returns
        #: it, or once `get_exclusive` holds its lock (a call still waiting uses nothing).
        self.entries: dict[_Entry, Key] = {}
        self.abandoned = False
        self.finished = False
        #: Cancelled when the executor stops the call (`PipelineCache.cancel`): its model
        #: calls and its waits here stop at their next check (`graph_agent.tools.cancel`).
        self.token = CancelToken()


class PipelineCache:
    """Least-recently-used cache of loaded models keyed by (kind, model path, device setting).

    ``memory_budget_mb`` bounds the estimated memory of the entries (``None`` or 0: no bound).
    ``max_items`` optionally bounds their number as well. ``estimate(obj, model_dir)`` sizes a
    loaded model and ``pre_estimate(model_dir)`` sizes it before loading; both are parameters
    so tests can use fakes.

    One condition (``_changed``, on the guard) carries every wait: for a model's lock, for a
    load of the same key, for room to load. Whatever frees one of them notifies it, and so
    does `abandon`, so an abandoned call's waits end at once.
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
        self._items: OrderedDict[Key, _Entry] = OrderedDict()
        self._guard = threading.Lock()
        self._changed = threading.Condition(self._guard)
        self._local = threading.local()
        self._device_request = "auto"
        self._device: str | None = None
        self._loading_keys: dict[Key, int] = {}  # key -> the thread loading it
        self._loads_running = 0
        self._reserved = 0  # pre-estimates of the loads running
        self._room_queue: deque[object] = deque()  # loads waiting for room, first come first
        self._retired = 0  # entries held by abandoned calls, until they finish
        self._waiting = 0  # threads blocked in `_wait` (tests synchronise on it)
        self.loads = 0
        self.evictions = 0
        self.configure(memory_budget_mb=memory_budget_mb, device=device)

    # -- settings

    def configure(
        self, *, memory_budget_mb: float | None = None, device: str | None = None
    ) -> None:
        """Change the cache's own settings, which apply to calls whose lease sets none.

        A smaller budget evicts at once. A new device setting only changes which entries later
        calls get (the setting is part of the key); it is resolved when a loader first asks
        (`loading_device`). The executor does not call this: each run's settings travel with
        its calls (`Lease`).
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
                    self._changed.notify_all()  # loads waiting for room may fit now
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

    def cached_keys(self) -> list[Key]:
        """Cached keys, least recently used first."""
        with self._guard:
            return list(self._items)

    # -- lookup and loading

    def get(
        self,
        kind: str,
        model: str | Path,
        loader: Callable[[str], Any],
        imports: Iterable[str] = (),
    ) -> Any:
        """Return the loaded object for ``(kind, model)``, loading it once if needed.

        The caller runs it unguarded: to run a call on a model, use `get_exclusive`. Under a
        lease the entry counts as used at once, since the caller holds it. ``imports`` are the
        modules the loader imports lazily (`warm_imports`). A loader that raises leaves nothing
        behind: the next call tries again.
        """
        key, path = self._key(kind, model)
        value = self._fetch(key, path, loader, tuple(imports), self._lease(), guarded=False).value
        install_torch_hook()  # a loaded torch model can be stopped mid-call from now on
        return value

    @contextmanager
    def get_exclusive(
        self,
        kind: str,
        model: str | Path,
        loader: Callable[[str], Any],
        imports: Iterable[str] = (),
    ) -> Iterator[Any]:
        """The loaded object for ``(kind, model)``, held by this call alone while the block runs.

        transformers pipelines are not thread-safe: under load, two threads transcribing with
        one Whisper pipeline returned garbage (NUL characters and all). So a call runs on a
        model only while it holds the entry's lock, and the entry and its lock come together:
        a call that got the model just before it was evicted still waits for the call running
        on it. Different models run in parallel; the same thread may nest.

        Waiting counts toward the subtask timeout: when the executor abandons the call, it stops
        waiting (`AbandonedCallError`), and only a call that holds the lock counts as using the
        model. When the call holding the model is abandoned, the model leaves the cache and the
        waiters stop queueing behind it: they take the cache's copy, loading a fresh one if need
        be.
        """
        key, path = self._key(kind, model)
        lease = self._lease()
        self._check(lease, path)
        imports = tuple(imports)
        while True:
            entry = self._fetch(key, path, loader, imports, lease, guarded=True)
            with self._guard:
                if self._acquire(entry, key, path, lease):
                    break
        install_torch_hook()  # a loaded torch model can be stopped mid-call from now on
        try:
            yield entry.value
        finally:
            with self._guard:
                entry.depth -= 1
                if entry.depth == 0:
                    entry.owner = None
                    self._changed.notify_all()

    def _key(self, kind: str, model: str | Path) -> tuple[Key, str]:
        path = str(model)
        lease = self._lease()
        device = lease.device if lease is not None and lease.device else self._device_request
        return (kind, path, device), path

    def _budget(self, lease: Lease | None) -> int | None:
        """The memory budget a call's loads keep to: its lease's, else the cache's."""
        if lease is None or lease.budget == "cache":
            return self.budget_bytes
        return lease.budget

    def _lease(self) -> Lease | None:
        return getattr(self._local, "lease", None)

    def _acquire(self, entry: _Entry, key: Key, path: str, lease: Lease | None) -> bool:
        """Take ``entry``'s lock for this thread and count it as the lease's. Call under the guard.

        False when the entry was set aside for an abandoned call while this one waited for it:
        the caller should fetch the cache's copy instead of queueing behind a call that may
        never end (or sharing a model an abandoned call may still run unguarded).
        """
        me = threading.get_ident()
        while True:
            self._check(lease, path)
            if entry.owner == me:
                break
            if entry.abandoned_users:
                return False
            if entry.owner is None:
                break
            self._wait(lease, f"{path}, which another call is running")
        entry.owner = me
        entry.depth += 1
        self._note_use(entry, key, lease)
        return True

    def _fetch(
        self,
        key: Key,
        path: str,
        loader: Callable[[str], Any],
        imports: tuple[str, ...],
        lease: Lease | None,
        *,
        guarded: bool,
    ) -> _Entry:
        """The entry for ``key``: cached, loaded by another thread (waited for), or loaded here.

        ``guarded``: for `get_exclusive`, which counts the entry as the lease's only once it
        holds the lock, and starts no load for a call already abandoned.
        """
        with self._guard:
            entry = self._cached(key, lease, note=not guarded)
            if entry is not None:
                return entry
        # Waiting for the imports holds no memory: a load reserves its room when it starts.
        warm_imports(*imports)
        expected = max(0, int(self._pre_estimate(path) or 0))
        me = threading.get_ident()
        nested = getattr(_loading, "cache", None) is self  # a loader asking for another model
        ticket = object()
        with self._guard:
            try:
                while True:
                    entry = self._cached(key, lease, note=not guarded)
                    if entry is not None:
                        return entry
                    loading = self._loading_keys.get(key)
                    if loading == me:
                        raise RuntimeError(f"The loader for {path} asked the cache for itself.")
                    if loading is not None:  # wait for that load, not for room
                        self._leave_queue(ticket)
                        self._wait(lease, f"{path} to load in another call")
                        continue
                    if nested or self._may_start(ticket, expected, self._budget(lease)):
                        break
                    if ticket not in self._room_queue:
                        self._room_queue.append(ticket)
                    self._wait(lease, f"room in the memory budget to load {path}")
            finally:
                self._leave_queue(ticket)
            if guarded:
                self._check(lease, path)
            # The load starts now: claim the key and reserve its memory together.
            evicted = self._make_room(expected, budget=self._budget(lease))
            claim = _Claim(expected)
            self._loading_keys[key] = me
            self._loads_running += 1
            self._reserved += expected
        # Whatever fails from here on (freeing the evicted models, the loader, sizing what it
        # loaded, even a KeyboardInterrupt), the claim is released: a key left claimed would
        # keep every later call for it waiting, and a reservation left behind every load that
        # does not fit next to it.
        try:
            self._dropped(evicted)
            return self._load(key, path, loader, claim, lease, note=not guarded)
        finally:
            with self._guard:
                self._end_load(claim)
                del self._loading_keys[key]
                self._changed.notify_all()

    def _cached(self, key: Key, lease: Lease | None, *, note: bool) -> _Entry | None:
        """The cached entry for ``key``, now the most recently used. Call under the guard."""
        entry = self._items.get(key)
        if entry is not None:
            self._items.move_to_end(key)
            if note:
                self._note_use(entry, key, lease)
        return entry

    def _may_start(self, ticket: object, expected: int, budget: int | None) -> bool:
        """Whether a load of ``expected`` bytes may start now. Call under the guard.

        It may when no load is running (a model larger than the budget then loads alone) or
        when it fits next to the running loads' reservations and the abandoned calls' models;
        and, so a large model is not starved by small ones, only when no load that came
        earlier is still waiting for room.
        """
        if self._room_queue and self._room_queue[0] is not ticket:
            return False
        if budget is None or self._loads_running == 0:
            return True
        return self._reserved + self._retired + expected <= budget

    def _leave_queue(self, ticket: object) -> None:
        if ticket in self._room_queue:
            self._room_queue.remove(ticket)
            self._changed.notify_all()  # the next load in line may start

    def _load(
        self,
        key: Key,
        path: str,
        loader: Callable[[str], Any],
        claim: _Claim,
        lease: Lease | None,
        *,
        note: bool,
    ) -> _Entry:
        """Run ``loader`` for a load `_fetch` started (key claimed, room reserved).

        On success the reservation becomes the entry; on any failure `_fetch` releases it.
        """
        previous = getattr(_loading, "cache", None), getattr(_loading, "device", None)
        _loading.cache, _loading.device = self, key[2]
        try:
            loaded = loader(path)
        finally:
            _loading.cache, _loading.device = previous
        try:
            nbytes = max(0, int(self._estimate(loaded, path)))
        except Exception:  # an estimate must never fail a load that worked
            log.debug("Could not size %s; using its weight files", path, exc_info=True)
            nbytes = claim.expected
        with self._guard:
            # The reservation becomes the entry in one step: no other load sees the room free.
            self._end_load(claim)
            budget = self._budget(lease)
            evicted = self._make_room(nbytes, adding=True, budget=budget)
            if budget is not None and nbytes > budget:
                log.warning(
                    "Model %s needs about %.0f MB, more than the whole memory budget of %.0f MB "
                    "(Context.memory_budget_mb / GRAPH_AGENT_MEMORY_BUDGET_MB); it is loaded "
                    "alone, with every other model dropped from the cache.",
                    path,
                    nbytes / MB,
                    budget / MB,
                )
            entry = _Entry(loaded, nbytes)
            self._items[key] = entry
            self.loads += 1
            if note:
                self._note_use(entry, key, lease)
        self._dropped(evicted)
        return entry

    def _end_load(self, claim: _Claim) -> None:
        """Release a load's reservation and slot, once however often called. Under the guard."""
        if claim.ended:
            return
        claim.ended = True
        self._reserved -= claim.expected
        self._loads_running -= 1
        self._changed.notify_all()

    def _check(self, lease: Lease | None, what: str) -> None:
        if lease is not None and (lease.abandoned or lease.token.cancelled):
            raise AbandonedCallError(
                f"Stopped waiting for {what}: the call was abandoned after its timeout "
                "(subtask_timeout_s)."
            )

    def _wait(self, lease: Lease | None, what: str) -> None:
        """Wait until something changes (a lock freed, a load done, a lease abandoned).

        Call under the guard, in a loop that checks again. A call abandoned meanwhile stops
        waiting: that is how the executor's timeout reaches a call queued here.
        """
        self._check(lease, what)
        self._waiting += 1
        try:
            self._changed.wait()
        finally:
            self._waiting -= 1

    def _make_room(
        self, need: int, adding: bool = False, budget: int | Literal["cache"] | None = "cache"
    ) -> list[_Entry]:
        """Drop least recently used entries until ``need`` more bytes (and, when ``adding``,
        one more entry) fit within ``budget`` (the cache's own by default). Call under the
        guard.

        Returns the dropped entries so the caller can release them outside the lock.
        """
        evicted: list[_Entry] = []
        if budget == "cache":
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
        """Free evicted models now rather than at the next garbage collection.

        A call still running on one keeps it (and its lock) alive until it is done.
        """
        if not evicted:
            return
        evicted.clear()
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    # -- abandoned calls

    def _note_use(self, entry: _Entry, key: Key, lease: Lease | None) -> None:
        """Record that ``lease``'s call runs on ``entry``. Call under the guard."""
        if lease is None or lease.finished or entry in lease.entries:
            return
        lease.entries[entry] = key
        if lease.abandoned:  # a call already given up on loaded it: keep it out of the cache
            self._retire(entry, key)

    def _retire(self, entry: _Entry, key: Key) -> None:
        """Set ``entry`` aside for one more abandoned call. Call under the guard.

        It leaves the cache, and its bytes count against the budget once, however many
        abandoned calls hold it, until the last of them finishes.
        """
        if self._items.get(key) is entry:
            del self._items[key]
        entry.abandoned_users += 1
        if entry.abandoned_users == 1:
            self._retired += entry.nbytes

    @contextmanager
    def using(self, lease: Lease) -> Iterator[Lease]:
        """Track the entries this thread's call uses under ``lease``, until the block ends."""
        previous = getattr(self._local, "lease", None)
        self._local.lease = lease
        try:
            yield lease
        finally:
            self._local.lease = previous
            released = 0
            with self._guard:
                lease.finished = True
                if lease.abandoned:
                    for entry in lease.entries:
                        entry.abandoned_users -= 1
                        if entry.abandoned_users == 0:
                            self._retired -= entry.nbytes
                            released += entry.nbytes
                    self._changed.notify_all()  # loads waiting for room may fit now
                lease.entries.clear()
            if released:
                log.info(
                    "An abandoned (timed-out) call finished; its %.0f MB of models are released.",
                    released / MB,
                )
                gc.collect()

    def cancel(self, lease: Lease) -> None:
        """Stop the call running under ``lease`` at its next check (a forward pass, a wait
        here); it unwinds in its own thread and gives its models back as usual."""
        lease.token.cancel()
        with self._guard:
            self._changed.notify_all()  # a wait of its ends now

    def abandon(self, lease: Lease) -> bool:
        """Give up on a call still running under ``lease``.

        The models it ran on leave the cache (the next call loads a fresh copy instead of
        sharing one with a call still running) and stay counted against the budget until it
        finishes. If it is still waiting (for a model's lock, a load or room to load), it stops
        waiting. Returns False when the call had already finished, and nothing changes.
        """
        with self._guard:
            if lease.finished or lease.abandoned:
                return False
            lease.abandoned = True
            for entry, key in lease.entries.items():
                self._retire(entry, key)
            self._changed.notify_all()  # its waits end, and waiters on its models look again
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
    warm_imports(TRANSFORMERS_PIPELINES)  # a no-op when the cache has done it before the load
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
