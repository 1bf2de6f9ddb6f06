"""Who may call the LangGraph server, and what each caller may see: the ``auth.path`` that
``langgraph.json`` names (LangGraph's custom auth, ``langgraph_sdk.Auth``).

- **Authentication**: with ``GRAPH_AGENT_API_KEYS`` set (comma-separated ``name=key`` pairs,
  or bare keys), every request must carry one of the keys, as ``x-api-key: KEY`` or
  ``Authorization: Bearer KEY``; anything else is a 401. Unset, the server is open: every
  caller is the same ``anonymous`` user, which is what ``langgraph dev`` on 127.0.0.1 is for.
  Set keys before the server listens on any other address.
- **Ownership**: a caller sees and changes only the threads (and their runs) it created, so
  one client cannot read another's requests, files or answers. Assistants are the
  operator's: clients may read and run them, not create or change them (an assistant's
  config would otherwise carry a client's settings).
- **No state writes**: a client starts runs and resumes interrupted ones; it cannot write a
  thread's state (``POST /threads/{id}/state``, ``supersteps``) or send ``command.update`` /
  ``command.goto``, which would hand a step any path as an earlier result. The store and
  crons are not offered.

What a run may do once it starts is decided in the graph (`graph_agent.boundary`): this module
answers who is calling, the boundary what any caller may set and read.
"""

from __future__ import annotations

import hmac
import os
from typing import Any

from langgraph_sdk import Auth

#: Environment: the keys callers present (``name=key`` pairs or bare keys, comma-separated).
API_KEYS_ENV = "GRAPH_AGENT_API_KEYS"

auth = Auth()


def api_keys() -> dict[str, str]:
    """key -> caller name, from ``GRAPH_AGENT_API_KEYS`` (read at each request, so tests and
    operators can change it with a restart)."""
    keys: dict[str, str] = {}
    for number, item in enumerate(os.environ.get(API_KEYS_ENV, "").split(","), start=1):
        item = item.strip()
        if not item:
            continue
        name, sep, key = item.partition("=")
        if not sep:
            name, key = f"key-{number}", item
        keys[key.strip()] = name.strip() or f"key-{number}"
    return keys


def _presented(headers: dict[Any, Any]) -> str:
    """The key a request presents: ``x-api-key``, else a bearer token."""

    def header(name: str) -> str:
        value = headers.get(name.encode()) or headers.get(name) or b""
        return value.decode("latin-1") if isinstance(value, bytes) else str(value)

    key = header("x-api-key").strip()
    if key:
        return key
    scheme, _, token = header("authorization").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


#: The web page's shell (``graph_agent.web``): its HTML, scripts and styles, and the redirect
#: to it. They hold no data, and a browser cannot send a key on the first page load, so they
#: are served without one; everything they then fetch (threads, runs, uploads, outputs)
#: needs the key like any other client's request.
PAGE_PREFIX = "/app"
PUBLIC_PAGE_PATHS = frozenset({"/", PAGE_PREFIX, f"{PAGE_PREFIX}/"})
PUBLIC_PAGE_FOLDER = f"{PAGE_PREFIX}/static/"
#: The identity of a browser loading the page shell without a key (never an owner).
PAGE_VISITOR = "page-visitor"


def is_public_page(path: str, method: str) -> bool:
    """Whether a request only loads the page shell (GET or HEAD of its fixed paths)."""
    if method.upper() not in {"GET", "HEAD"} or ".." in path:
        return False
    return path in PUBLIC_PAGE_PATHS or path.startswith(PUBLIC_PAGE_FOLDER)


@auth.authenticate
async def authenticate(
    headers: dict[Any, Any], path: str = "", method: str = ""
) -> Auth.types.MinimalUserDict:
    """The caller's identity from its key; everyone is ``anonymous`` when no keys are set.

    Without a valid key, only the page shell is served (`is_public_page`), to an
    unauthenticated visitor who owns nothing.
    """
    keys = api_keys()
    if not keys:
        return {"identity": "anonymous", "is_authenticated": True}
    presented = _presented(headers)
    for key, name in keys.items():
        if presented and hmac.compare_digest(presented.encode(), key.encode()):
            return {"identity": name, "is_authenticated": True}
    if is_public_page(path, method):
        return {"identity": PAGE_VISITOR, "is_authenticated": False}
    raise Auth.exceptions.HTTPException(
        status_code=401,
        detail="This server needs an API key: send it as 'x-api-key: KEY' or "
        "'Authorization: Bearer KEY' (the operator sets them in GRAPH_AGENT_API_KEYS).",
    )


def _own(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Tag what the caller creates with its identity; filter what it touches to its own."""
    owner = ctx.user.identity
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            metadata = {}
            value["metadata"] = metadata
        metadata["owner"] = owner
    return {"owner": owner}


def _forbid(detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads belong to the caller that made them: new ones are tagged with its identity,
    and every read, search, update, run and deletion is filtered to its own."""
    return _own(ctx, value)


@auth.on.threads.update
async def no_state_writes(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A caller may rename its threads (metadata) and cancel its runs, not write their state.

    Writing state (``POST /threads/{id}/state``, threads created with ``supersteps``) would let
    a client hand a step any file path or model folder as an earlier result; the graph checks
    those too, but the door is shut here first.
    """
    if isinstance(value, dict) and not value.get("metadata") and not value.get("action"):
        raise _forbid("Clients cannot write a thread's state on this server; start a run instead.")
    return _own(ctx, value)


@auth.on.threads.create_run
async def runs_resume_only(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A run may start from input or resume an interrupted one (``command.resume``: the
    plan approval). ``command.update`` and ``command.goto`` write state or jump to a node with
    a client's payload, so they are refused."""
    command = ((value or {}).get("kwargs") or {}).get("command") or {}
    if isinstance(command, dict) and (command.get("update") or command.get("goto")):
        raise _forbid(
            "Clients may resume a run (command.resume) but not update its state or jump to a "
            "node (command.update, command.goto) on this server."
        )
    return _own(ctx, value)


@auth.on.assistants.create
@auth.on.assistants.update
@auth.on.assistants.delete
async def operator_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Clients run the operator's assistants; they do not make or change them."""
    raise _forbid("Assistants are configured by the server's operator; clients may run them.")


@auth.on.crons
async def no_crons(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The agent has no scheduled runs; a client cannot add any."""
    raise _forbid("Scheduled runs (crons) are not offered by this server.")


@auth.on.store
async def no_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """The graph keeps nothing in the server's store; clients may not use it either."""
    raise _forbid("The key-value store is not offered by this server.")
