"""Shared fixtures: the installed model pack, real speech made offline, the sample photo.

The test command installs the pack first, so a missing model is a failure, not a skip:
a suite that silently skipped every real-model test would prove nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

for _name in [k for k in os.environ if k.startswith("GRAPH_AGENT_") and k != "GRAPH_AGENT_HOME"]:
    del os.environ[_name]  # a developer's own settings must not change what the tests see
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

from graph_agent.context import default_models_dir  # noqa: E402
from graph_agent.tools.model_pack.manifest import PACKS  # noqa: E402

#: The installed pack (make test installs it). Tests see only its default models, through
#: links in a throwaway GRAPH_AGENT_HOME, so models a developer added (the large pack, their
#: own) cannot change which model a test selects, and checkpoints and artifacts stay out of
#: the real home.
INSTALLED = default_models_dir()
TEST_HOME = Path(tempfile.mkdtemp(prefix="graph-agent-test-home-"))
(TEST_HOME / "models").mkdir()
for _model in PACKS["default"]:
    if (INSTALLED / _model).is_dir():
        (TEST_HOME / "models" / _model).symlink_to(INSTALLED / _model)
os.environ["GRAPH_AGENT_HOME"] = str(TEST_HOME)

import pytest  # noqa: E402
from postgres_server import postgres_uri  # noqa: E402, F401  (the throw-away cluster fixture)

from graph_agent.demo import MEETING_SCRIPT  # noqa: E402

SPOKEN = MEETING_SCRIPT


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(TEST_HOME, ignore_errors=True)


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
                f"Model {name} is not installed in {INSTALLED}; "
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


@contextlib.contextmanager
def dev_server(log_dir: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """``langgraph dev`` on 127.0.0.1 (``graph_agent.evals.services``); yield its URL."""
    from graph_agent.evals.services import ServiceError
    from graph_agent.evals.services import dev_server as serve

    try:
        with serve(log_dir, env) as running:
            yield running.url
    except ServiceError as exc:
        pytest.fail(str(exc))


#: What the shared test server's operator configured: inputs are read from ``uploads`` (and
#: the sample photo's folder), outputs are written under ``artifacts``, and a token goes to
#: configured endpoints only (there are none; a test checks that no client can add one).
SERVER_TOKEN = "test-token-that-must-never-leave-the-server"


@pytest.fixture(scope="session")
def server_dirs(tmp_path_factory) -> dict[str, Path]:
    """The shared server's folders: ``uploads`` (an input root), ``artifacts``, ``log``."""
    base = tmp_path_factory.mktemp("server")
    dirs = {name: base / name for name in ("uploads", "artifacts", "log")}
    for path in dirs.values():
        path.mkdir()
    return dirs


@pytest.fixture(scope="session")
def server(server_dirs, sample_photo) -> Iterator[str]:
    """A ``langgraph dev`` server with its default checkpointer, shared by the server tests.

    Session-scoped because starting it loads the graph and takes many seconds. Its settings
    are the operator's (environment), as a deployment's would be: clients cannot change them.
    """
    env = {
        "GRAPH_AGENT_ARTIFACTS_DIR": str(server_dirs["artifacts"]),
        "GRAPH_AGENT_INPUT_ROOTS": os.pathsep.join(
            [str(server_dirs["uploads"]), str(sample_photo.parent)]
        ),
        "GRAPH_AGENT_INFERENCE_TOKEN": SERVER_TOKEN,
    }
    with dev_server(server_dirs["log"], env) as base:
        yield base
