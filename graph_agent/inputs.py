"""The user's inputs: which are files (and of what kind), which are plain text.

Only paths the user gave are ever read.
"""

from __future__ import annotations

from pathlib import Path

from graph_agent.errors import RequestError
from graph_agent.file_names import file_kind
from graph_agent.tools.media import sniff_modality
from graph_agent.tools.results import Modality


def _looks_like_path(name: str, value: str) -> bool:
    """A value that names a file (by its suffix or its input name) but is not text: a value
    over several lines is text whatever its input is called."""
    if "\n" in value or len(value) >= 4096:
        return False
    return (file_kind(value) or file_kind(name)) is not None


def _existing_file(value: str) -> Path | None:
    """``value`` as a file that exists, else None.

    An input may be literal text of any length, and asking the OS whether a long text is a
    file raises (``File name too long``) rather than answering no.
    """
    try:
        path = Path(value).expanduser()
        return path if path.is_file() else None
    except (OSError, ValueError):  # too long for a path, or a NUL byte in it
        return None


def _is_dir(value: str) -> bool:
    """Whether ``value`` names an existing folder (to say so, not that it is missing)."""
    try:
        return Path(value).expanduser().is_dir()
    except (OSError, ValueError):
        return False


def input_types(inputs: dict[str, str]) -> dict[str, Modality | None]:
    """Classify every input; a path that does not exist is an error, not silently text."""
    types: dict[str, Modality | None] = {}
    for name, value in inputs.items():
        path = _existing_file(str(value))
        if path is not None:
            types[name] = sniff_modality(path)
        elif _looks_like_path(name, str(value)):
            problem = "is a folder, not a file" if _is_dir(str(value)) else "does not exist"
            raise RequestError(
                f"Input {name!r}: {value} {problem}. Check the path "
                f"(give it as --input {name}=/path/to/file)."
            )
        else:
            types[name] = "text"
    return types


def input_value(name: str, inputs: dict[str, str], kind: Modality | None) -> str:
    """What a step receives for an input: a file path for media, the text for text."""
    value = str(inputs[name])
    path = _existing_file(value)
    if path is None:
        return value
    if kind == "text":
        return path.read_text(encoding="utf-8", errors="replace")
    return str(path.resolve())
