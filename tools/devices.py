"""Which device a model loads on: the ``device`` setting checked and resolved ("auto" is CUDA
when torch sees a GPU, else the CPU). Torch is imported only when a setting must be resolved.
"""

from __future__ import annotations

import re

_DEVICE_FORMS = "'auto', 'cpu', 'cuda' or 'cuda:<index>'"
_CUDA_DEVICE = re.compile(r"cuda(:\d+)?")


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
