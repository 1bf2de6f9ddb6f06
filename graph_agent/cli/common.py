"""What every ``graph-agent`` command shares: exit codes, consoles, the usage error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from graph_agent.file_names import not_a_file

EXIT_OK, EXIT_STEP_FAILED, EXIT_USAGE = 0, 1, 2
#: Progress and errors go to stderr, results to stdout, so results can be piped.
console = Console(stderr=True, highlight=False)
out = Console(highlight=False, soft_wrap=True)


class UsageError(Exception):
    """A problem with what the user asked for; printed without a traceback."""


def parse_inputs(items: Sequence[str]) -> dict[str, str]:
    """``NAME=PATH`` pairs (or bare paths, named after the file) -> the graph's ``inputs``."""
    inputs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            name, value = Path(item).name, item
        name, value = name.strip(), value.strip()
        if not name or not value:
            raise UsageError(f"--input {item!r} should look like NAME=PATH or PATH.")
        path = Path(value).expanduser()
        if not path.is_file():
            raise UsageError(f"Input {name!r}: {value} {not_a_file(value)}.")
        inputs[name] = str(path.resolve())
    return inputs
