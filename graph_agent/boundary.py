"""The trust boundary: what a run that arrives through the server may set and read.

The CLI's user and a Python embedder are the operator: they choose where the agent writes,
which models and endpoints it uses, and which files it reads. A run that arrives through the
LangGraph server (HTTP or MCP) comes from a client, who is not trusted with any of that:

- **settings** that touch the machine or the network (``OPERATOR_ONLY``: where it writes,
  which models directory, chat-model planner and endpoints, memory, device, timeouts) keep
  the operator's values (environment or server config). A client that sends one is refused
  with the setting's name, unless the operator lists it in ``GRAPH_AGENT_CLIENT_SETTINGS``.
  Numbers a client may set are capped (``CLIENT_CAPS``), so a client cannot buy unbounded
  work with ``max_retries: 1000``;
- **files**: a client's input is read only when it lies, after resolving symlinks, under one
  of the operator's input roots (``GRAPH_AGENT_INPUT_ROOTS``, paths separated by ``:``) or
  in this thread's own artifact folder (outputs of its earlier requests) or upload folder
  (files sent through the web page, `graph_agent.uploads`; named by their file name, so the
  client never learns where the server keeps them). Anything else is
  refused with the input's name, never the path, and with the same words whether or not the
  path exists, so a client cannot probe the server's disk;
- **tokens** follow from the settings: the inference endpoints, and so where
  ``GRAPH_AGENT_INFERENCE_TOKEN`` goes, are the operator's.

A run is a server run when LangGraph gives the node a ``server_info`` (the server puts the
assistant and graph ids into every run's config, and a client cannot remove them). Every node
reads its settings through :func:`run_context`, so a resumed run cannot change them either.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph_agent.context import Context
from graph_agent.errors import RequestError
from graph_agent.file_names import file_kind
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.uploads import thread_upload_dir

#: Settings only the operator may choose: each touches the machine (files, memory, CPU time)
#: or the network (which hosts are called, and so which of them receive a token).
OPERATOR_ONLY = frozenset(
    {
        "planner",
        "models_dir",
        "artifacts_dir",
        "memory_budget_mb",
        "device",
        "subtask_timeout_s",
        "inference_endpoint",
        "inference_provider",
        "inference_timeout_s",
        "remote_min_params_m",
    }
)
#: The most a client may ask of these (the operator's own value wins when it is higher).
CLIENT_CAPS: dict[str, int] = {"max_retries": 5, "max_replans": 3}
#: Environment: extra settings the operator lets clients choose (comma-separated names).
CLIENT_SETTINGS_ENV = "GRAPH_AGENT_CLIENT_SETTINGS"
#: Environment: folders whose files a server client may name as inputs (``os.pathsep``).
INPUT_ROOTS_ENV = "GRAPH_AGENT_INPUT_ROOTS"


def is_server_run(runtime: Any) -> bool:
    """Whether this run came through the LangGraph server (and so from a client)."""
    return getattr(runtime, "server_info", None) is not None


def client_settable() -> frozenset[str]:
    """Operator-only settings the operator opened to clients, by name."""
    raw = os.environ.get(CLIENT_SETTINGS_ENV, "")
    return frozenset(n.strip() for n in raw.split(",") if n.strip())


def input_roots() -> tuple[Path, ...]:
    """The operator's input roots, resolved; none by default (clients send text only)."""
    raw = os.environ.get(INPUT_ROOTS_ENV, "")
    roots = []
    for part in raw.split(os.pathsep):
        if part.strip():
            roots.append(Path(part.strip()).expanduser().resolve())
    return tuple(roots)


_FIELDS = {f.name: f for f in dataclasses.fields(Context)}


def _coerce(name: str, value: Any, kind: type) -> Any:
    """``value`` as the field's type, or RequestError naming the setting."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {"true", "false", "1", "0"}:
            return value.strip().lower() in {"true", "1"}
        raise RequestError(f"Setting {name!r} must be true or false, not {value!r}.")
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise RequestError(f"Setting {name!r} must be a number, not {value!r}.")
        try:
            number = float(value)
        except ValueError:
            raise RequestError(f"Setting {name!r} must be a number, not {value!r}.") from None
        if number != number or number in (float("inf"), float("-inf")) or number < 0:
            raise RequestError(f"Setting {name!r} must be a number of 0 or more, not {value!r}.")
        if kind is int:
            if number != int(number):
                raise RequestError(f"Setting {name!r} must be a whole number, not {value!r}.")
            return int(number)
        return number
    if not isinstance(value, str):
        raise RequestError(f"Setting {name!r} must be text, not {value!r}.")
    return value


_KINDS = {"bool": bool, "int": int, "float": float, "str": str}


def checked(ctx: Context) -> Context:
    """``ctx`` with every field of its declared type, or RequestError naming the bad one.

    The server builds the Context from a client's JSON without checking types, and a string
    where a number belongs would otherwise fail deep inside a node with a TypeError.
    """
    values = {}
    for name, f in _FIELDS.items():
        kind = _KINDS.get(f.type if isinstance(f.type, str) else f.type.__name__, str)
        values[name] = _coerce(name, getattr(ctx, name), kind)
    return dataclasses.replace(ctx, **values)


def refused_settings(ctx: Context) -> list[str]:
    """The settings in ``ctx`` a client chose but may not: operator-only ones that differ
    from the operator's value, and numbers above their cap."""
    operator = Context()
    opened = client_settable()
    refused = [
        name
        for name in sorted(OPERATOR_ONLY - opened)
        if getattr(ctx, name) != getattr(operator, name)
    ]
    for name, cap in CLIENT_CAPS.items():
        if name not in opened and getattr(ctx, name) > max(cap, getattr(operator, name)):
            refused.append(name)
    return refused


def run_context(runtime: Any, strict: bool = False) -> Context:
    """The settings a node runs with: type-checked, and for a server run the operator's
    values for everything a client may not set (a refused client value never takes effect,
    also on a resumed run; the planner says which were refused, see `refusal`).

    ``strict`` (the planner, where a run starts) raises RequestError for a setting of the
    wrong type, so the run is refused with its name. Later nodes never raise: a server run
    falls back to the operator's settings, an embedder's run keeps its own.
    """
    raw = getattr(runtime, "context", None) or Context()
    try:
        ctx = checked(raw)
    except RequestError:
        if strict:
            raise
        return Context() if is_server_run(runtime) else raw
    if not is_server_run(runtime):
        return ctx
    refused = refused_settings(ctx)
    if not refused:
        return ctx
    operator = Context()
    return dataclasses.replace(ctx, **{name: getattr(operator, name) for name in refused})


def refusal(runtime: Any) -> str | None:
    """Why a server run is refused for its settings, or None when it may go ahead."""
    raw = getattr(runtime, "context", None)
    if not is_server_run(runtime) or raw is None:
        return None
    refused = refused_settings(checked(raw))
    if not refused:
        return None
    capped = [n for n in refused if n in CLIENT_CAPS]
    fixed = [n for n in refused if n not in CLIENT_CAPS]
    parts = []
    if fixed:
        parts.append(
            f"{', '.join(fixed)} {'is' if len(fixed) == 1 else 'are'} set by the server's "
            "operator, not by a client"
        )
    if capped:
        parts.append(
            ", ".join(
                f"{n} may be at most {max(CLIENT_CAPS[n], getattr(Context(), n))}" for n in capped
            )
        )
    return (
        f"This server does not accept these run settings: {'; '.join(parts)}. Leave them out "
        f"(the operator can open one to clients with {CLIENT_SETTINGS_ENV})."
    )


@dataclass(frozen=True)
class Reader:
    """Which files a run may read: any (the operator's runs) or those under ``roots``.

    ``uploads`` is the thread's upload folder: a bare file name that names a file there
    ("meeting.wav") means that file, which is how a client refers to what it uploaded.
    """

    roots: tuple[Path, ...] | None = None
    uploads: Path | None = None

    @property
    def restricted(self) -> bool:
        return self.roots is not None

    def allows(self, path: Path) -> bool:
        """Whether ``path``, symlinks resolved, lies under one of the roots."""
        if self.roots is None:
            return True
        try:
            real = path.expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            return False
        return any(real == root or real.is_relative_to(root) for root in self.roots)

    def locate(self, value: str) -> str:
        """``value``, or the uploaded file it names: a bare file name (no folder part) of a
        file in the thread's upload folder. Anything else is returned as it is."""
        if self.uploads is None:
            return value
        bare = value.strip()
        if not bare or "/" in bare or "\\" in bare or bare.startswith((".", "~")):
            return value
        candidate = self.uploads / bare
        try:
            return str(candidate) if candidate.is_file() else value
        except (OSError, ValueError):  # too long for a name, or a NUL in it
            return value

    def check_path(self, name: str, value: str) -> None:
        """Refuse ``value`` when it is written like a path that lies outside the roots.

        Decided by how the value is written and by the roots alone, never by asking the disk
        first, so the answer is the same whether the path exists or not.
        """
        if self.restricted and written_like_path(value) and not self.allows(Path(value)):
            raise self.refuse(name)

    def refuse(self, name: str) -> RequestError:
        """The one refusal for a path outside the roots: the input's name, never the path,
        the same whether the path exists or not."""
        where = (
            "in the folders this server reads inputs from"
            if self.roots
            else "readable: this server reads no files from clients"
        )
        return RequestError(
            f"Input {name!r} is a file path that is not {where}. Send the content as text, "
            f"or ask the server's operator to add its folder to {INPUT_ROOTS_ENV}."
        )


OPERATOR = Reader()

#: How a path starts when it is not a bare name: absolute, home-relative, relative, or a
#: Windows drive.
PATH_START = re.compile(r"(?:/|~|\.{1,2}[/\\]|[A-Za-z]:[/\\])")


def written_like_path(value: str) -> bool:
    """Whether a client's value is written like a file path: one line, and it starts like
    a path ("/", "~", "./", "C:\\") or is one word with a folder separator or a file suffix
    ("data/a.wav", "notes.txt"). Words and sentences are not."""
    value = value.strip()
    if not value or "\n" in value or len(value) >= 4096:
        return False
    if PATH_START.match(value):
        return True
    if any(c.isspace() for c in value):
        return False
    return "/" in value or "\\" in value or file_kind(value) is not None


def reader_for(runtime: Any, ctx: Context, thread_id: str | None) -> Reader:
    """The file policy of a run: the operator's runs read anything; a server run reads its
    input roots, its own thread's artifact folder (earlier outputs on the thread) and its
    own thread's upload folder (files sent through the web page)."""
    if not is_server_run(runtime):
        return OPERATOR
    roots: list[Path] = list(input_roots())
    uploads = None
    if thread_id:
        roots.append(ArtifactStore(ctx.artifacts_dir, run_id=thread_id).run_dir)
        with contextlib.suppress(RequestError):  # an id that is not a plain token: no uploads
            uploads = thread_upload_dir(thread_id)
            roots.append(uploads)
    return Reader(tuple(roots), uploads)


def hide_paths(message: str, paths: Iterable[str]) -> str:
    """``message`` with each of ``paths`` (and its resolved form) replaced by its base name:
    a client sees names, not where the server keeps files."""
    for raw in sorted({p for p in paths if p}, key=len, reverse=True):
        variants = {raw}
        with contextlib.suppress(OSError, RuntimeError, ValueError):
            variants.add(str(Path(raw).expanduser().resolve()))
        for variant in sorted(variants, key=len, reverse=True):
            if len(variant) > 1 and variant in message:
                message = message.replace(variant, Path(variant).name or "(file)")
    return message


def _folder_forms(folder: str | Path) -> set[str]:
    """``folder`` as written and resolved (a symlinked home shows up either way)."""
    forms = {str(folder).rstrip("/\\")}
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        forms.add(str(Path(folder).expanduser().resolve()))
    return {f for f in forms if len(f) > 1}


def for_client(value: Any, folders: Iterable[str | Path]) -> Any:
    """``value`` (text, or JSON-like lists and dicts of it) as a server client may see it:
    every path inside one of ``folders`` written relative to that folder, and a folder named
    on its own written as its last part.

    A server run's answer, outputs and report name its artifacts by file name
    ("node-0-speech-3f2a.wav"), which is how the web page fetches them
    (``/app/api/threads/{id}/files/outputs/{name}``), and never where the server keeps them.
    Folders may nest (a thread's artifact folder in the artifacts root): the longest is cut
    first, so a path is written relative to the innermost folder that holds it. The state's
    own results keep their real paths, which later steps and turns read.
    """
    forms = sorted({f for folder in folders if folder for f in _folder_forms(folder)}, key=len)
    patterns = [
        (re.compile(re.escape(form) + r"[/\\]"), "") for form in reversed(forms)
    ] + [  # the folder itself, not followed by more of a name ("/a/t1" but not "/a/t10")
        (re.compile(re.escape(form) + r"(?![\w.-])"), Path(form).name or "(folder)")
        for form in reversed(forms)
    ]

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            for pattern, replacement in patterns:
                item = pattern.sub(replacement, item)
            return item
        if isinstance(item, dict):
            return {clean(k): clean(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return type(item)(clean(v) for v in item)
        return item

    return clean(value)
