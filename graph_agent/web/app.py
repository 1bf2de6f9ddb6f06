"""The web page's server side: the page itself, file uploads, and a run's files to show.

``langgraph.json`` mounts this Starlette app as ``http.app``, so ``langgraph dev`` (and the
production server) serve the API and the page on one port, with no second process. The page
(``static/``: plain HTML, CSS and JavaScript, nothing fetched from elsewhere) talks to the
server's own thread and run endpoints; this app adds only what those cannot do:

- ``GET /`` redirects to ``/app/``; ``GET /app/`` and ``/app/static/*`` are the page;
- ``PUT /app/api/threads/{thread_id}/uploads/{name}``: one file, the request body, into the
  thread's upload folder (`graph_agent.uploads`: sanitised name, size, count and content
  checked). A run on that thread then names it by its file name;
- ``GET /app/api/threads/{thread_id}/files/{uploads|outputs}/{name}``: a file from the
  thread's upload folder or its artifact folder (the images and sounds its runs made), and
  nothing else;
- ``GET /app/api/models?task=...``: the models this server can run for a task, so the plan
  approval can offer a choice (sent back as the step's ``constraints.models``).

The server's auth (``auth.path``, ``graph_agent.server_auth``) runs before every route here
(``enable_custom_route_auth``); the page shell is served to a browser without a key, the API
routes are not, and a caller reaches only the threads it owns, as on the server's own thread
endpoints. Missing and foreign threads get the same 404, so ids cannot be probed.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import uuid
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from graph_agent.context import Context
from graph_agent.errors import RequestError
from graph_agent.file_names import file_kind
from graph_agent.server_auth import PAGE_PREFIX
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.uploads import (
    check_upload,
    is_thread_id,
    safe_name,
    thread_upload_dir,
    too_large,
    too_many,
)

STATIC = Path(__file__).with_name("static")
#: What a file is served as: only the kinds the agent reads and writes, text as plain text
#: (never HTML, so an uploaded file cannot run script in the page's origin).
_SERVED_KINDS = ("image", "audio", "text")


def _error(status: int, message: str) -> JSONResponse:
    """The one error shape the page shows: ``{"detail": message}``, as the server's own."""
    return JSONResponse({"detail": message}, status_code=status)


class Refused(Exception):
    """A request this app answers with an error: its status and words for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _thread_owner(thread_id: str) -> str | None:
    """The owner recorded on a thread (``metadata.owner``), or None when it does not exist.

    Read through the server's in-process client, which the server's own code uses; the
    caller's rights are then checked here against the owner, as `server_auth` tags it.
    """
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import APIStatusError

    client = get_client()
    try:
        thread = await client.threads.get(thread_id)
    except APIStatusError as exc:
        if exc.status_code in (404, 422):  # no such thread, or an id that is not a UUID
            return None
        raise
    return str((thread.get("metadata") or {}).get("owner") or "")


async def _owned_thread(request: Request) -> str:
    """The path's thread id, when the caller is authenticated and owns that thread."""
    user = request.scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        raise Refused(
            401,
            "This server needs an API key: enter it in the page's key box (the operator sets "
            "them in GRAPH_AGENT_API_KEYS).",
        )
    thread_id = request.path_params["thread_id"]
    missing = Refused(404, "No such conversation: start a new one.")
    if not is_thread_id(thread_id):  # a plain token, or no thread of ours
        raise missing
    owner = await _thread_owner(thread_id)
    if owner is None or owner != user.identity:
        raise missing
    return thread_id


async def page(request: Request) -> Response:
    """The page is one HTML file; its script does the rest against the server's API.

    (The server reads the YAML after the rule below into its OpenAPI description.)

    ---
    summary: The web page
    """
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")


async def root(request: Request) -> Response:
    """The root is where people type the server's address, so it sends them to the page.

    ---
    summary: Redirects to the web page at /app/
    """
    return RedirectResponse(f"{PAGE_PREFIX}/", status_code=307)


def _save(thread_id: str, name: str, body: bytes) -> str:
    """Write one upload (blocking: run in a worker thread) and check it; its kind.

    Written under a hidden temporary name first, so a refused file never appears under its
    real name, and a file of the same name is replaced only by one that passed the checks.
    """
    folder = thread_upload_dir(thread_id)
    folder.mkdir(parents=True, exist_ok=True)
    reason = too_many(folder, name)
    if reason:
        raise Refused(413, reason)
    staged = folder / f".upload-{uuid.uuid4().hex}"
    try:
        staged.write_bytes(body)
        kind = check_upload(staged, name)
        staged.replace(folder / name)
    except RequestError as exc:
        raise Refused(415, str(exc)) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()
    return kind


async def _body(request: Request) -> bytes:
    """The request body, refused (413) as soon as it passes the size bound."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit():
        reason = too_large(int(declared))
        if reason:
            raise Refused(413, reason)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        reason = too_large(size)
        if reason:
            raise Refused(413, reason)
        chunks.append(chunk)
    if not size:
        raise Refused(400, "The file is empty: choose the file again.")
    return b"".join(chunks)


async def upload(request: Request) -> Response:
    """Store one file in the thread's upload folder; answer its name, kind and size.

    ---
    summary: Upload one file (the request body) to a thread's upload folder
    """
    try:
        thread_id = await _owned_thread(request)
        try:
            name = safe_name(request.path_params["name"])
        except RequestError as exc:
            raise Refused(415, str(exc)) from None
        body = await _body(request)
        kind = await asyncio.to_thread(_save, thread_id, name, body)
    except Refused as exc:
        return _error(exc.status, exc.message)
    return JSONResponse({"name": name, "kind": kind, "size": len(body)}, status_code=201)


def _folder(where: str, thread_id: str) -> Path:
    """The folder ``where`` names for a thread: its uploads or its outputs (artifacts)."""
    if where == "uploads":
        return thread_upload_dir(thread_id)
    # The operator's artifacts folder (Context() reads the server's environment, never a
    # client's setting), and in it the folder the executor writes this thread's files to.
    return ArtifactStore(Context().artifacts_dir, run_id=thread_id).run_dir


def _served(where: str, thread_id: str, name: str) -> Path:
    """The file ``name`` in the thread's folder ``where`` (blocking: run in a worker thread);
    404 for anything else: another folder's file, a link out of the folder, a kind the page
    does not show."""
    folder = _folder(where, thread_id)
    gone = Refused(404, f"No file {name!r} in this conversation.")
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise gone
    if file_kind(name) not in _SERVED_KINDS:
        raise gone
    try:
        path = (folder / name).resolve()
        inside = path.parent == folder.resolve() and path.is_file()
    except (OSError, RuntimeError, ValueError):
        raise gone from None
    if not inside:
        raise gone
    return path


async def thread_file(request: Request) -> Response:
    """Serve one of a thread's files, to show in the page or download.

    ---
    summary: A file from a thread's uploads or outputs
    """
    where = request.path_params["where"]
    if where not in ("uploads", "outputs"):
        return _error(404, "Files are under 'uploads' or 'outputs'.")
    try:
        thread_id = await _owned_thread(request)
        name = request.path_params["name"]
        path = await asyncio.to_thread(_served, where, thread_id, name)
    except Refused as exc:
        return _error(exc.status, exc.message)
    kind = file_kind(path.name)
    media = "text/plain; charset=utf-8" if kind == "text" else mimetypes.guess_type(path.name)[0]
    headers: dict[str, Any] = {
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-store",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }
    return FileResponse(path, media_type=media or "application/octet-stream", headers=headers)


def _runnable_models(task: str) -> list[dict[str, Any]]:
    """The models of ``task`` this server can run (blocking: run in a worker thread)."""
    from graph_agent.retrieval_index.service import open_index

    catalog = open_index(Context().models_dir).catalog
    return [
        {"id": card.id, "license": card.license, "parameters": card.parameters}
        for card in catalog.by_task(task)
        if card.runnable
    ]


async def models(request: Request) -> Response:
    """List the models a plan step of a task could use here, for the approval's choice.

    ---
    summary: Models this server can run for a task
    """
    user = request.scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return _error(401, "This server needs an API key: enter it in the page's key box.")
    task = request.query_params.get("task", "")
    if not task or len(task) > 100:
        return _error(400, "Say which task: /app/api/models?task=image-classification.")
    return JSONResponse({"task": task, "models": await asyncio.to_thread(_runnable_models, task)})


app = Starlette(
    routes=[
        Route("/", root, methods=["GET", "HEAD"]),
        Mount(
            PAGE_PREFIX,
            routes=[
                Route("/", page, methods=["GET", "HEAD"]),
                Mount("/static", StaticFiles(directory=STATIC), name="static"),
                Route("/api/models", models, methods=["GET"]),
                Route(
                    "/api/threads/{thread_id}/uploads/{name}",
                    upload,
                    methods=["PUT"],
                ),
                Route(
                    "/api/threads/{thread_id}/files/{where}/{name}",
                    thread_file,
                    methods=["GET", "HEAD"],
                ),
            ],
        ),
    ]
)
