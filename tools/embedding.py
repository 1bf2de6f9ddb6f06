"""Embedding tasks on a sentence-transformers model: vectors, similarity, zero-shot labels."""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_agent.common.first_imports import SENTENCE_TRANSFORMERS
from graph_agent.tools.errors import ToolError
from graph_agent.tools.pipeline_cache import loading_device
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

#: Cosine similarities of a small sentence encoder sit in a narrow band; this temperature
#: spreads them before the softmax so label probabilities are informative.
_ZERO_SHOT_TEMPERATURE = 0.05


def load_sentence_model(path: str) -> Any:
    """Load a sentence-transformers model from a local directory on the CPU."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(
        path, device=loading_device(), trust_remote_code=False, local_files_only=True
    )


def embedding_result(vec: Any) -> ToolResult:
    """A unit-length sentence vector as a result; the remote back end's vectors too, so a step
    reports the same shape wherever it ran."""
    return ToolResult(
        kind="embedding",
        modality="text",
        text=f"{len(vec)}-dimensional embedding",
        data=[round(float(x), 6) for x in vec],
    )


def similarity_result(a: Any, b: Any) -> ToolResult:
    """The cosine of two unit-length vectors as a result (local and remote alike)."""
    score = float(np.dot(a, b))
    return ToolResult(
        kind="similarity", modality="text", text=f"{score:.3f}", data={"cosine": round(score, 4)}
    )


def candidate_labels(call: ToolCall) -> list[str]:
    """A zero-shot call's candidate labels: a list, or one comma-separated string.

    Plans carry a list, but a plan file, the CLI or an LLM planner may write
    ``labels=sports,politics``; both forms must mean the same labels wherever the step runs
    (locally here, or remotely in ``graph_agent.tools.remote``).
    """
    raw = call.args.get("labels") or []
    items = raw.split(",") if isinstance(raw, str) else raw
    labels = [str(label).strip() for label in items if str(label).strip()]
    if not labels:
        raise ToolError(
            "Zero-shot classification needs candidate labels, e.g. labels=sports,politics."
        )
    return labels


def _embed(model: Any, call: ToolCall) -> ToolResult:
    return embedding_result(model.encode([call.args["text"]], normalize_embeddings=True)[0])


def _similarity(model: Any, call: ToolCall) -> ToolResult:
    a, b = model.encode([call.args["text"], call.args["other"]], normalize_embeddings=True)
    return similarity_result(a, b)


def _zero_shot(model: Any, call: ToolCall) -> ToolResult:
    labels = candidate_labels(call)
    vecs = model.encode(
        [call.args["text"], *(f"This text is about {lb}." for lb in labels)],
        normalize_embeddings=True,
    )
    sims = vecs[1:] @ vecs[0]
    probs = np.exp((sims - sims.max()) / _ZERO_SHOT_TEMPERATURE)
    probs /= probs.sum()
    ranked = sorted(zip(labels, probs.tolist(), strict=True), key=lambda lp: -lp[1])
    return ToolResult(
        kind="labels",
        modality="text",
        text=ranked[0][0],
        confidence=ranked[0][1],
        data=[{"label": lb, "score": round(p, 4)} for lb, p in ranked],
    )


def _tool(task: str, call, description: str, inputs=(("text", "text"),), options=()) -> TaskTool:
    return TaskTool(
        task=task,
        inputs=inputs,
        output="text",
        loader="sentence-transformers",
        call=call,
        description=description,
        options=options,
        make_loader=load_sentence_model,
        imports=(SENTENCE_TRANSFORMERS,),
    )


TOOLS: list[TaskTool] = [
    _tool("feature-extraction", _embed, "Turn a text into an embedding vector."),
    _tool(
        "sentence-similarity",
        _similarity,
        "Score how similar two texts are in meaning.",
        inputs=(("text", "text"), ("other", "text")),
    ),
    _tool(
        "zero-shot-classification",
        _zero_shot,
        "Pick the best of several candidate labels for a text.",
        options=("labels",),
    ),
]
