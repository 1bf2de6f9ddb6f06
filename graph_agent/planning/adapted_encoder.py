"""The planner's second encoder: the pack's MiniLM with the task adapter merged in.

``evals/train_adapter.py`` fine-tunes a low-rank adapter on MiniLM for "which task does this
clause ask for" and stores it with a small head in ``ADAPTER`` (about 1.5 MB, in the
repository). Here the adapter is merged into the base weights (``W + scale * B @ A`` for
each adapted projection) and the result exported to ONNX with 8-bit weights next to the base
export, once per adapter version (``onnx/planner-<digest>-qint8.onnx``). Unless switched
off (``task_detector.ADAPTER_ENV``), the task detector reads a request twice, side by side:
with the base encoder, whose vectors its linear classifier and implied-task head were
trained on, and with this one, whose head it blends in. 8-bit because the second pass must
fit the planning budget (about half a full-precision pass),
and the planner's held-out scores were within half a point of a full-precision export's
(CHANGELOG, 2026-11-27, fourth session). One encoder for both, the adapted one with the
linear classifier retrained on it, was tried and lost the most on the largest blind set.

The export is written atomically (a partly written file is never read) and checked against
PyTorch as the pack's own 8-bit export is. Where the models directory cannot be written (a
read-only deployment), it is built in a temporary folder on each start instead (about 8 s).
``graph-agent models install`` builds it, so the first request does not wait for it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

#: The trained adapter and head (``evals/train_adapter.py`` writes it).
ADAPTER = Path(__file__).resolve().parent / "data" / "task_adapter.npz"

_BUILD_LOCK = threading.Lock()


@functools.lru_cache(maxsize=2)
def digest(path: str = str(ADAPTER)) -> str:
    """The first 12 hex digits of the adapter file's sha256: names its export."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def export_path(model_dir: Path, adapter: Path = ADAPTER) -> Path:
    """Where the adapted encoder's export lives inside ``model_dir``."""
    return model_dir / "onnx" / f"planner-{digest(str(adapter))}-qint8.onnx"


def remove_stale_exports(model_dir: Path, adapter: Path = ADAPTER) -> list[Path]:
    """Delete the exports of earlier adapters in ``model_dir`` (about 23 MB each; a new
    adapter version builds a new one), keep the current one; return what was removed."""
    keep = export_path(model_dir, adapter)
    stale = [p for p in keep.parent.glob("planner-*-qint8.onnx") if p != keep]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def merged_model(model_dir: Path, adapter: Path = ADAPTER):  # -> transformers BertModel
    """The base MiniLM of ``model_dir`` with the adapter's deltas added to its weights."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        model_dir, local_files_only=True, attn_implementation="eager"
    ).eval()
    data = np.load(adapter, allow_pickle=False)
    scale = float(data["scale"])
    modules = dict(model.named_modules())
    names = [k[2:] for k in data.files if k.startswith("A.")]
    with torch.no_grad():
        for name in names:
            # Trained on a ``BertModel`` whose module names match AutoModel's here.
            linear = modules.get(name)
            if not isinstance(linear, torch.nn.Linear):
                raise ValueError(
                    f"The task adapter {adapter.name} adapts {name!r}, which the encoder at "
                    f"{model_dir} does not have: it was trained for another model."
                )
            delta = torch.from_numpy(data[f"B.{name}"] @ data[f"A.{name}"]) * scale
            linear.weight += delta.to(linear.weight.dtype)
    return model


def adapted_export(model_dir: Path, adapter: Path = ADAPTER) -> Path:
    """The adapted encoder's ONNX file for ``model_dir``, built first if need be."""
    out = export_path(model_dir, adapter)
    if out.is_file():
        return out
    with _BUILD_LOCK:
        if out.is_file():
            return out
        try:
            return _build(model_dir, adapter, out)
        except OSError as exc:  # a read-only models directory: build it aside
            log.info("Cannot write %s (%s); building the planner's encoder aside.", out, exc)
            aside = Path(tempfile.mkdtemp(prefix="graph-agent-planner-")) / out.name
            return _build(model_dir, adapter, aside)


def _build(model_dir: Path, adapter: Path, out: Path) -> Path:
    from transformers import AutoTokenizer

    from graph_agent.tools.model_pack.onnx_export import (
        export_token_vectors,
        quantize_for_queries,
    )

    out.parent.mkdir(parents=True, exist_ok=True)
    full = out.with_name(f".{out.name}.{os.getpid()}.full")
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    try:
        with warnings.catch_warnings():  # the tracer's notes on BERT's code: not the user's
            warnings.simplefilter("ignore")
            _, (ids, mask), expected = export_token_vectors(
                merged_model(model_dir, adapter), tokenizer, full
            )
        quantize_for_queries(full, partial, ids, mask, expected)
        os.replace(partial, out)
    finally:
        full.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
    return out


@dataclass(frozen=True)
class AdapterHead:
    """The adapter's classifier: a clause's mean last-layer vector and half the request's,
    then its hashed words (``task_detector.lexical``), to one logit per label."""

    W: np.ndarray  # (2 * hidden, K)
    b: np.ndarray  # (K,)
    lexical: np.ndarray  # (LEXICAL_DIM, K)
    labels: tuple[str, ...]

    def logits(self, vectors: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Rows: clauses. ``vectors``: (n, 2 * hidden); ``words``: (n, LEXICAL_DIM)."""
        return vectors @ self.W + words @ self.lexical + self.b


@functools.lru_cache(maxsize=2)
def load_head(path: str = str(ADAPTER)) -> AdapterHead:
    data = np.load(path, allow_pickle=False)
    return AdapterHead(
        data["head_W"].astype(np.float32),
        data["head_b"].astype(np.float32),
        data["head_lexical"].astype(np.float32),
        tuple(str(x) for x in data["labels"]),
    )
