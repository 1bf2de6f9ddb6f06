"""Shared fixtures: the installed model pack, real speech made offline, the sample photo.

The test command installs the pack first, so a missing model is a failure, not a skip:
a suite that silently skipped every real-model test would prove nothing.
"""

from __future__ import annotations

import os

for _name, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}.items():
    os.environ.setdefault(_name, _value)

from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from graph_agent.context import default_models_dir  # noqa: E402
from graph_agent.demo import MEETING_SCRIPT  # noqa: E402

SPOKEN = MEETING_SCRIPT


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return default_models_dir()


@pytest.fixture(scope="session")
def pack_model_dir(models_dir: Path) -> Callable[[str], Path]:
    """``pack_model_dir(name)`` -> the installed model's directory (fails if missing)."""

    def find(name: str) -> Path:
        path = models_dir / name
        if not (path / ".graph-agent-pack.json").is_file():
            pytest.fail(
                f"Model {name} is not installed in {models_dir}; "
                "run `graph-agent models install` (make test does)."
            )
        return path

    return find


@pytest.fixture(scope="session")
def speech_wav(tmp_path_factory, pack_model_dir) -> tuple[Path, str]:
    """A real English recording of ``SPOKEN``, made by the pack's Piper voice."""
    from graph_agent.demo import VOICE, speak

    pack_model_dir(VOICE)
    out = tmp_path_factory.mktemp("speech") / "meeting.wav"
    return speak(SPOKEN, out), SPOKEN


@pytest.fixture(scope="session")
def sample_photo() -> Path:
    from graph_agent.demo import sample_photo as photo

    return photo()
