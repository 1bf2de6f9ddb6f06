"""Export the pack's sentence encoder to ONNX, so planning and search run it on ONNX Runtime.

Every request pays two encoder calls before any model step runs: the task detector's pass
over the request and the selector's step queries. On a 2-core CPU, ONNX Runtime (2 threads)
runs MiniLM on a request-sized text in about 9 ms, where eager PyTorch takes about 22 ms on
one thread and 19 ms on two (plan+select: ``python -m graph_agent.evals.bench_plan_latency``).
sentence-transformers' own ONNX backend needs optimum-onnx, which requires
transformers < 4.58, so the install exports the graph once with ``torch.onnx`` instead.

The export is checked against the PyTorch model on a padded batch before it is kept; a
mismatch fails the install with a clear message rather than leaving a file that silently
changes what the index finds.

A second file holds the same graph with 8-bit weights (ONNX Runtime's dynamic quantization,
one scale per output channel) for the selector's step queries: about twice as fast on this
CPU, with sentence vectors within ``QUERY_MIN_COSINE`` of the full-precision ones. It is
checked the same way, on sentence vectors, since only those are read from it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.token_encoder import (
    MIDDLE_LAYER,
    ONNX_FILE,
    OUTPUTS,
    QUERY_ONNX_FILE,
    mean_pooled,
)

#: Largest difference in any token vector the export may show against PyTorch.
TOLERANCE = 1e-4
#: Smallest cosine between the 8-bit file's sentence vector of a probe and PyTorch's
#: (measured: 0.99 and up; held-out step queries 0.98 at worst).
QUERY_MIN_COSINE = 0.98

_PROBES = (
    "transcribe meeting.wav, summarize it in French and read the summary aloud",
    "a",
    "Which model detects objects in photos under an Apache-2.0 licence?",
)


def export_encoder_onnx(model_dir: Path) -> float:
    """Write ``model_dir/onnx/model.onnx`` (token vectors of two layers) and its 8-bit twin
    ``model_qint8.onnx``, check both, return the full-precision file's largest error."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(
        model_dir, local_files_only=True, attn_implementation="eager"
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    out = model_dir / ONNX_FILE
    diff, (input_ids, mask), expected = export_token_vectors(model, tokenizer, out)
    quantize_for_queries(out, model_dir / QUERY_ONNX_FILE, input_ids, mask, expected)
    return diff


def export_token_vectors(model: Any, tokenizer: Any, out: Path) -> tuple[float, Any, Any]:
    """Export ``model`` (a loaded ``BertModel``) to ``out`` with the two outputs the runtime
    reads, and check it on padded probes. Returns the largest error, the probes' (ids, mask)
    and PyTorch's last-layer vectors of them. The planner's adapted encoder
    (``planning/adapted_encoder.py``) is exported the same way."""
    import numpy as np
    import onnxruntime as ort
    import torch

    class TokenVectors(torch.nn.Module):
        """The encoder with the two inputs the runtime passes, by name, and two outputs:
        the last layer's token vectors and ``MIDDLE_LAYER``'s (the task detector reads both).
        """

        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            out = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
            )
            return out.last_hidden_state, out.hidden_states[MIDDLE_LAYER]

    batch = tokenizer(list(_PROBES), padding=True, return_tensors="pt")
    inputs = (batch["input_ids"], batch["attention_mask"])
    out.parent.mkdir(parents=True, exist_ok=True)
    axes = {0: "batch", 1: "tokens"}
    with torch.inference_mode():
        expected = [t.numpy() for t in TokenVectors(model)(*inputs)]
    torch.onnx.export(
        TokenVectors(model),
        inputs,
        str(out),
        input_names=["input_ids", "attention_mask"],
        output_names=list(OUTPUTS),
        dynamic_axes={"input_ids": axes, "attention_mask": axes, **dict.fromkeys(OUTPUTS, axes)},
        opset_version=17,
        dynamo=False,
    )
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    got = session.run(
        list(OUTPUTS), {"input_ids": inputs[0].numpy(), "attention_mask": inputs[1].numpy()}
    )
    real = inputs[1].numpy().astype(bool)
    diff = max(float(np.abs(g - e)[real].max()) for g, e in zip(got, expected, strict=True))
    if not diff <= TOLERANCE:
        out.unlink()
        raise ValueError(
            f"the ONNX export differs from the PyTorch model by {diff:.2e} (allowed "
            f"{TOLERANCE:.0e}); the onnx or onnxruntime version may be at fault"
        )
    return diff, (inputs[0].numpy(), inputs[1].numpy()), expected[0]


def quantize_for_queries(src: Path, out: Path, input_ids: Any, mask: Any, expected: Any) -> float:
    """Write ``src`` with 8-bit weights to ``out``; check its sentence vectors against
    ``expected`` (PyTorch's last-layer token vectors of the probes); return the lowest cosine.
    """
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer logs, on the root logger, a suggestion to pre-process the model; it does
    # not apply to a graph exported straight from torch, so it would only alarm whoever
    # installs. A handler for the call's duration also stops `logging.warning` from
    # configuring the root logger behind the application's back.
    root, quiet = logging.getLogger(), logging.NullHandler()
    level = root.level
    root.addHandler(quiet)
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(src, out, weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)
        root.removeHandler(quiet)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (got,) = session.run([OUTPUTS[0]], {"input_ids": input_ids, "attention_mask": mask})
    cosine = float((mean_pooled(got, mask) * mean_pooled(expected, mask)).sum(1).min())
    if not cosine >= QUERY_MIN_COSINE:
        out.unlink()
        raise ValueError(
            f"the 8-bit ONNX export's sentence vectors reach only cosine {cosine:.4f} with the "
            f"PyTorch model's (needed {QUERY_MIN_COSINE}); the onnxruntime version may be at "
            "fault"
        )
    return cosine
