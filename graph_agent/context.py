"""Run settings (the graph's ``context_schema``), each with an environment-variable fallback.

Embedders pass a ``Context`` per run; the server and CLI rely on the env-var fallbacks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path


def graph_agent_home() -> Path:
    """Where models, the catalog and artifacts live unless told otherwise."""
    return Path(os.environ.get("GRAPH_AGENT_HOME", "~/.cache/graph-agent")).expanduser()


def default_models_dir() -> Path:
    return graph_agent_home() / "models"


def _env(name: str, default: str) -> str:
    return os.environ.get(f"GRAPH_AGENT_{name.upper()}", default)


def _env_bool(name: str, default: bool) -> bool:
    raw = _env(name, "1" if default else "0").strip().lower()
    return raw in {"1", "true", "yes", "on"}


@dataclass(kw_only=True)
class Context:
    """How one run behaves.

    Every field falls back to ``GRAPH_AGENT_<FIELD>`` in the environment, then to a default.
    """

    planner: str = field(
        default="offline",
        metadata={"description": "'offline', or a chat model spec such as 'openai:gpt-4o-mini'."},
    )
    approve_plan: bool = field(
        default=False, metadata={"description": "Pause for approval before running the plan."}
    )
    models_dir: str = field(
        default="", metadata={"description": "Where the model pack and catalog live."}
    )
    artifacts_dir: str = field(
        default="", metadata={"description": "Where images and audio made by tools are written."}
    )
    max_retries: int = field(
        default=2, metadata={"description": "Other candidate models to try when a step fails."}
    )
    max_replans: int = field(default=1, metadata={"description": "Re-plans allowed per run."})

    def __post_init__(self) -> None:
        for f in fields(self):
            env = os.environ.get(f"GRAPH_AGENT_{f.name.upper()}")
            if env is None or getattr(self, f.name) != f.default:
                continue
            if f.type in ("bool", bool):
                setattr(self, f.name, _env_bool(f.name, bool(f.default)))
            elif f.type in ("int", int):
                setattr(self, f.name, int(env))
            else:
                setattr(self, f.name, env)
        if not self.models_dir:
            self.models_dir = str(default_models_dir())
        if not self.artifacts_dir:
            self.artifacts_dir = str(graph_agent_home() / "artifacts")
