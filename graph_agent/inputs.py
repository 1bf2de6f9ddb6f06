"""The user's inputs: which are files (and of what kind), which are plain text.

Only paths the user gave are ever read.
"""

from __future__ import annotations

import re
from pathlib import Path

from graph_agent.errors import RequestError
from graph_agent.file_names import file_kind, is_folder, not_a_file
from graph_agent.tools.media import sniff_modality
from graph_agent.tools.results import Modality

#: How a path starts when it is not a bare name: absolute, home-relative, relative, or a
#: Windows drive.
_PATH_START = re.compile(r"(?:/|~|\.{1,2}[/\\]|[A-Za-z]:[/\\])")


def _looks_like_path(name: str, value: str) -> bool:
    """Whether a value that is not an existing file was meant as one.

    It must be written like a path: one line, and no spaces unless it starts like a path
    ("/", "~", "./", "C:\\"), so a sentence that ends in a file name ("summarize chapter 3
    of thesis.docx") stays text. Then a known file suffix on it or on the input's name, or
    a folder where a file was meant, says it was.
    """
    value = value.strip()
    if "\n" in value or len(value) >= 4096:
        return False
    starts_like_path = bool(_PATH_START.match(value))
    if any(c.isspace() for c in value) and not starts_like_path:
        return False
    return (file_kind(value) or file_kind(name)) is not None or (
        starts_like_path and is_folder(value)
    )


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


def input_types(inputs: dict[str, str]) -> dict[str, Modality | None]:
    """Classify every input; a path that does not exist is an error, not silently text."""
    types: dict[str, Modality | None] = {}
    for name, value in inputs.items():
        path = _existing_file(str(value))
        if path is not None:
            types[name] = sniff_modality(path)
        elif _looks_like_path(name, str(value)):
            raise RequestError(
                f"Input {name!r}: {value} {not_a_file(str(value))}. Check the path "
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
