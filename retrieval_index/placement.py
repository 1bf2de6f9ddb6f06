"""Where a selected model runs in hybrid mode: on this machine or on a remote endpoint.

The selector applies this one rule to every candidate (``nodes.selector.place``); the
executor then sends the candidate to the local back end or the remote one.
"""

from __future__ import annotations

from typing import Literal

Backend = Literal["local", "remote"]


def choose_backend(
    *,
    parameters: int | None,
    size_bytes: int | None,
    local: bool,
    remote: bool,
    min_remote_params_m: float,
) -> tuple[Backend | None, str]:
    """Where a model runs in hybrid mode, and why: the one rule for local versus remote.

    1. Only one place can run it (weights on disk, or an endpoint that serves it): there.
       Neither: None.
    2. Both can: remote when the model has at least ``min_remote_params_m`` million
       parameters, local below that. A large model is slow on this CPU and fast on a GPU
       server; a small one answers locally sooner than a network round trip would, costs
       nothing and keeps the data on this machine. The size is the card's parameter count,
       or its size on disk / 4 bytes when only that is known. An unknown size means local:
       the weights are here and nothing says they are too big. ``min_remote_params_m <= 0``
       sends everything an endpoint serves to the endpoint.
    """
    if not (local and remote):
        if remote:
            return "remote", "weights not on this machine; the endpoint serves it"
        return ("local", "weights on this machine") if local else (None, "nowhere to run it")
    size = parameters or ((size_bytes or 0) / 4) or None
    threshold = min_remote_params_m * 1e6
    if threshold <= 0:
        return "remote", "remote_min_params_m <= 0: every model an endpoint serves runs there"
    if size is None:
        return "local", "weights on this machine; size unknown, so not sent remote"
    shown = f"{size / 1e6:,.0f}M parameters"
    if size >= threshold:
        return "remote", f"{shown}, at least remote_min_params_m={min_remote_params_m:g}M"
    return "local", f"{shown}, below remote_min_params_m={min_remote_params_m:g}M"
