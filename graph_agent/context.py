"""Run settings (the graph's ``context_schema``), each with an environment-variable fallback.

Embedders pass a ``Context`` per run; the server and CLI rely on the env-var fallbacks. The
order is: a value passed explicitly, then ``GRAPH_AGENT_<FIELD>``, then the default.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def graph_agent_home() -> Path:
    """Where models, the catalog and artifacts live unless told otherwise."""
    return Path(os.environ.get("GRAPH_AGENT_HOME", "~/.cache/graph-agent")).expanduser()


def default_models_dir() -> Path:
    return graph_agent_home() / "models"


def _from_env(name: str, default: Callable[[], Any], cast: Callable[[str], Any] = str):
    """A default factory: read ``GRAPH_AGENT_<NAME>`` when the Context is created."""

    def factory() -> Any:
        raw = os.environ.get(f"GRAPH_AGENT_{name.upper()}")
        if raw is None or raw == "":
            return default()
        try:
            return cast(raw)
        except ValueError:
            raise ValueError(f"GRAPH_AGENT_{name.upper()}={raw!r} is not a valid {name}.") from None

    return factory


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(raw)


@dataclass(kw_only=True)
class Context:
    """How one run behaves."""

    planner: str = field(
        default_factory=_from_env("planner", lambda: "offline"),
        metadata={
            "description": "'offline' (no LLM), or a chat model: 'hf:<local dir>', "
            "'openai:<model>', 'openai-compatible:<model>@<base_url>'."
        },
    )
    approve_plan: bool = field(
        default_factory=_from_env("approve_plan", lambda: False, _bool),
        metadata={"description": "Pause for approval before running the plan."},
    )
    models_dir: str = field(
        default_factory=_from_env("models_dir", lambda: str(default_models_dir())),
        metadata={"description": "Where the model pack, catalog and index live."},
    )
    artifacts_dir: str = field(
        default_factory=_from_env("artifacts_dir", lambda: str(graph_agent_home() / "artifacts")),
        metadata={"description": "Where images and audio made by tools are written."},
    )
    max_retries: int = field(
        default_factory=_from_env("max_retries", lambda: 2, int),
        metadata={"description": "Other candidate models to try when a step fails."},
    )
    max_replans: int = field(
        default_factory=_from_env("max_replans", lambda: 1, int),
        metadata={
            "description": "Re-plans allowed per run when steps fail with every model "
            "(0: never re-plan)."
        },
    )
    llm_critic: bool = field(
        default_factory=_from_env("llm_critic", lambda: False, _bool),
        metadata={
            "description": "Also ask the chat model named by `planner` whether each text "
            "result does its step's part of the request (off when the planner is 'offline')."
        },
    )
    memory_budget_mb: float = field(
        default_factory=_from_env("memory_budget_mb", lambda: 6000, float),
        metadata={
            "description": "Memory (MB) the warm pipeline cache may hold; least recently used "
            "models are dropped beyond it. 0 means no budget."
        },
    )
    device: str = field(
        default_factory=_from_env("device", lambda: "auto"),
        metadata={
            "description": "Where models run: 'auto' (CUDA when torch sees a GPU, else CPU), "
            "'cpu', 'cuda' or 'cuda:<index>'."
        },
    )
    subtask_timeout_s: float = field(
        default_factory=_from_env("subtask_timeout_s", lambda: 600, float),
        metadata={
            "description": "Seconds one tool call may take before it counts as a failed "
            "attempt ('timed out'); 0 means no timeout."
        },
    )
    answer_with_llm: bool = field(
        default_factory=_from_env("answer_with_llm", lambda: False, _bool),
        metadata={
            "description": "Let the chat model named by `planner` write the final answer "
            "(the template answers when it fails or the planner is 'offline')."
        },
    )
    inference_endpoint: str = field(
        default_factory=_from_env("inference_endpoint", lambda: ""),
        metadata={
            "description": "Where remote models run (hybrid mode; empty: everything runs "
            "locally): '<model id>=<URL>' pairs, comma-separated, or a JSON object, for "
            "TGI/TEI/Inference Endpoint deployments of those models; or a URL with {model} "
            "for a router that serves any model by id. The token comes from "
            "GRAPH_AGENT_INFERENCE_TOKEN (any endpoint) or HF_TOKEN (Hugging Face hosts only), "
            "never from here; no token goes over plain http to another machine, and Hugging "
            "Face-hosted endpoints are off while HF_HUB_OFFLINE=1."
        },
    )
    inference_provider: str = field(
        default_factory=_from_env("inference_provider", lambda: ""),
        metadata={
            "description": "An Inference Provider ('auto', 'hf-inference', 'together', ...) "
            "for models no endpoint serves; it is reached through the Hugging Face Hub, so "
            "it is not used with HF_HUB_OFFLINE=1. Empty: no provider."
        },
    )
    inference_timeout_s: float = field(
        default_factory=_from_env("inference_timeout_s", lambda: 60, float),
        metadata={
            "description": "Seconds a remote endpoint may take to answer one request before "
            "the attempt fails as timed out; 0 means no limit."
        },
    )
    remote_min_params_m: float = field(
        default_factory=_from_env("remote_min_params_m", lambda: 1000, float),
        metadata={
            "description": "Hybrid rule: a model that can run both here and remotely runs "
            "remotely from this many million parameters up, locally below (0: remote "
            "whenever an endpoint serves it)."
        },
    )
