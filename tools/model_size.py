"""How much memory a model takes: before loading (its weight files) and once loaded (its
tensors). The warm cache (``pipeline_cache``) sizes its entries with these, and so can
anything else that must stay within a memory budget.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

MB = 1024 * 1024

#: Files that hold weights, by suffix. A directory may hold the same weights in two formats
#: (``model.safetensors`` and ``pytorch_model.bin``), so sizes are summed per suffix and the
#: largest group counts, not the sum of all of them.
WEIGHT_SUFFIXES = frozenset(
    {".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".onnx_data", ".gguf", ".h5"}
)


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
