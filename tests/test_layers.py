"""The layers hold: ``lint-imports`` checks the contracts in pyproject.toml.

The folders ``tools/``, ``retrieval_index/`` and ``evals/`` import as ``graph_agent.*`` through
setuptools' package-dir mapping, which import-linter's file scan does not follow, so the test
lays the package out as it imports (a copy in a temp dir) and runs ``lint-imports`` there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Where each part of the package lives in the source tree (pyproject's package-dir).
LAYOUT = {
    "graph_agent": ROOT / "graph_agent",
    "graph_agent/tools": ROOT / "tools",
    "graph_agent/retrieval_index": ROOT / "retrieval_index",
    "graph_agent/evals": ROOT / "evals",
}


def _lay_out(where: Path) -> Path:
    for target, source in LAYOUT.items():
        shutil.copytree(source, where / target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", where / "pyproject.toml")
    return where


def _lint(where: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.is_file():
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]' (make test does)")
    return subprocess.run(
        [str(lint), "pyproject.toml"],
        cwd=where,
        env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_import_contracts_are_kept(tmp_path):
    done = _lint(_lay_out(tmp_path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_tool_that_imports_a_node_breaks_a_contract(tmp_path):
    where = _lay_out(tmp_path)
    (where / "graph_agent" / "tools" / "leaky.py").write_text(
        "from graph_agent.nodes.executor import run_attempt\n", encoding="utf-8"
    )
    done = _lint(where)
    assert done.returncode != 0
    assert "tools and the card index know nothing of the graph BROKEN" in done.stdout
