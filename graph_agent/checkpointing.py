"""Where a run's checkpoints live, chosen by configuration: SQLite (the default) or Postgres.

One setting picks the store: ``GRAPH_AGENT_CHECKPOINT_URI`` (or an explicit URI, such as the
CLI's ``--checkpoint-uri``):

- unset, empty, a file path or ``sqlite:///path`` -> SQLite (``$GRAPH_AGENT_HOME/checkpoints
  .sqlite`` when unset): one machine, one file, nothing to run;
- ``postgresql://...`` (or ``postgres://...``) -> langgraph's Postgres saver: many processes
  and machines can share threads, and a ``langgraph dev`` server keeps them across restarts.

``open_checkpointer`` is for synchronous callers (the CLI, embedders); ``server_checkpointer``
is the async factory that ``langgraph.json`` names for the LangGraph server. Both are context
managers because each owns a connection (or a pool) that must be closed.

Failures raise ``CheckpointerError`` with what went wrong and what to do, never a driver
traceback: a wrong URI or a stopped database is a setting to fix, not a bug. URIs are shown
through `graph_agent.common.redact.redact` (the same helper the remote back end and the
executor use), which masks a password wherever libpq accepts one: ``user:pass@``, ``?password=`` and
``password=`` in a keyword/value DSN.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from graph_agent.common.redact import redact
from graph_agent.context import graph_agent_home

logger = logging.getLogger(__name__)

#: The environment variable that picks the checkpoint store.
ENV_VAR = "GRAPH_AGENT_CHECKPOINT_URI"
#: Largest number of connections the server's Postgres pool opens (Postgres allows 100 by
#: default; the server runs many threads at once, the CLI needs one connection).
POOL_SIZE_ENV_VAR = "GRAPH_AGENT_CHECKPOINT_POOL_SIZE"
DEFAULT_POOL_SIZE = 20
#: Seconds to wait for Postgres before saying it is unreachable (libpq waits forever).
CONNECT_TIMEOUT_S = 10
#: Postgres advisory-lock key held while the saver creates or migrates its tables: two
#: processes starting at once on a fresh database would otherwise race on CREATE TABLE and
#: on the migrations table's primary key.
SETUP_LOCK_KEY = 0x6741_5345  # "gASE": graph-agent setup
_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SQLITE_SCHEME = "sqlite://"
_INSTALL_HINT = (
    "install them with `pip install 'langgraph-checkpoint-postgres>=3.2,<4' "
    "'psycopg[binary,pool]>=3.2,<4'` (graph-agent's own dependencies include them)"
)


class CheckpointerError(Exception):
    """The checkpoint store cannot be used; the message says why and what to do."""


def checkpoint_uri(uri: str | None = None) -> str:
    """The configured URI: ``uri`` if given, else ``$GRAPH_AGENT_CHECKPOINT_URI``, else ``""``."""
    if uri is not None and uri.strip():
        return uri.strip()
    return os.environ.get(ENV_VAR, "").strip()


def is_postgres(uri: str | None) -> bool:
    """Whether ``uri`` names a Postgres database (libpq accepts both schemes)."""
    return bool(uri) and uri.lower().startswith(_POSTGRES_SCHEMES)


def sqlite_path(uri: str | None = None) -> Path:
    """The SQLite file for ``uri`` (a path, ``sqlite:///relative`` or ``sqlite:////absolute``).

    ``sqlite:`` URIs follow SQLAlchemy's convention, the one most users already know.
    """
    if not uri:
        return graph_agent_home() / "checkpoints.sqlite"
    if uri.lower().startswith(_SQLITE_SCHEME):
        rest = uri[len(_SQLITE_SCHEME) :]
        if not rest.startswith("/") or rest == "/":
            raise CheckpointerError(
                f"{uri!r} is not a SQLite URI with a file: write sqlite:///relative/path.sqlite "
                "or sqlite:////absolute/path.sqlite (or just the path)."
            )
        return Path(rest[1:]).expanduser()
    if "://" in uri:
        raise CheckpointerError(
            f"Unsupported checkpoint store {redact(uri)!r}: use postgresql://user@host:port/db "
            f"for Postgres, or a file path or sqlite:///path for SQLite (via {ENV_VAR} "
            "or --checkpoint-uri)."
        )
    return Path(uri).expanduser()


def describe(uri: str | None = None) -> str:
    """A one-line, password-free description of where checkpoints go (for logs and the CLI)."""
    uri = checkpoint_uri(uri)
    if is_postgres(uri):
        return f"Postgres {redact(uri)}"
    return f"SQLite {sqlite_path(uri)}"


def _connect_kwargs(uri: str) -> dict[str, Any]:
    """The connection settings langgraph's Postgres saver requires, plus a connect timeout.

    ``autocommit`` because the saver manages its own transactions, ``dict_row`` because it
    reads rows by column name, ``prepare_threshold=0`` so poolers such as PgBouncer work.
    """
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.rows import dict_row

    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    if "connect_timeout" not in conninfo_to_dict(uri):
        kwargs["connect_timeout"] = CONNECT_TIMEOUT_S
    return kwargs


def _unreachable(uri: str, exc: BaseException) -> CheckpointerError:
    # libpq quotes the part of a DSN it cannot parse, which may be the password.
    detail = redact(" ".join(str(exc).split())) or type(exc).__name__
    return CheckpointerError(
        f"Cannot use the Postgres checkpoint database {redact(uri)} ({detail}). "
        "Check that the server is running and the URI (user, password, host, port, database) "
        f"is right, or unset {ENV_VAR} (and drop --checkpoint-uri) to use SQLite."
    )


def _unstorable(exc: Any) -> CheckpointerError:
    """A checkpoint write Postgres refused for its content (``psycopg.DataError``).

    Postgres cannot keep some values SQLite can: a NUL character in text or JSONB (the saver
    stores strings of the state inline in JSONB) is the one a run meets, in a request, an
    input file or a model's output. Only the server's message and detail are shown, not its
    CONTEXT line, which quotes the state itself.
    """
    diag = getattr(exc, "diag", None)
    parts = (getattr(diag, "message_primary", None), getattr(diag, "message_detail", None))
    said = " ".join(part for part in parts if part) or next(
        iter(str(exc).splitlines()), type(exc).__name__
    )
    return CheckpointerError(
        f"Postgres refused to store this run's checkpoint ({type(exc).__name__}: "
        f"{redact(' '.join(said.split()))}). The run's state holds a value Postgres cannot keep; "
        "the usual cause is a NUL character (\\x00) in the request, an input or a model's "
        "output. Remove it and run again, or use SQLite checkpoints, which can store it (unset "
        f"{ENV_VAR} and drop --checkpoint-uri)."
    )


def _import_postgres() -> tuple[Any, Any]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError as exc:
        raise CheckpointerError(
            f"Postgres checkpointing needs langgraph-checkpoint-postgres and psycopg ({exc}); "
            f"{_INSTALL_HINT}."
        ) from exc
    return psycopg, PostgresSaver


@contextmanager
def open_checkpointer(uri: str | None = None) -> Iterator[Any]:
    """A checkpointer for ``uri`` (or ``$GRAPH_AGENT_CHECKPOINT_URI``; SQLite when unset).

    Postgres gets one autocommit connection: the saver serialises its own use of it, which is
    enough for one process running one graph (parallel branches included). The tables are
    created on first use (``setup()``, idempotent). The connection closes on exit.

    The graph runs inside the ``with`` block and its checkpoint writes raise here, so two
    driver errors a user can act on become ``CheckpointerError``: the database going away,
    and a write Postgres refuses for its content (a NUL character; see `_unstorable`).
    """
    uri = checkpoint_uri(uri)
    if not is_postgres(uri):
        from langgraph.checkpoint.sqlite import SqliteSaver

        db = sqlite_path(uri)
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(db, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise CheckpointerError(
                f"Cannot open the SQLite checkpoint file {db}: {exc}. "
                f"Pick a writable path with {ENV_VAR} or --checkpoint-uri."
            ) from exc
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
        return

    psycopg, PostgresSaver = _import_postgres()
    try:
        conn = psycopg.Connection.connect(uri, **_connect_kwargs(uri))
    except psycopg.Error as exc:
        raise _unreachable(uri, exc) from exc
    try:
        saver = PostgresSaver(conn)
        try:
            conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_KEY,))
            saver.setup()
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
        except psycopg.Error as exc:
            raise _unreachable(uri, exc) from exc
        try:
            yield saver
        except psycopg.OperationalError as exc:  # the database went away during the run
            raise _unreachable(uri, exc) from exc
        except psycopg.DataError as exc:  # a value Postgres cannot store, e.g. "\x00"
            raise _unstorable(exc) from exc
    finally:
        conn.close()


def _pool_size() -> int:
    raw = os.environ.get(POOL_SIZE_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_POOL_SIZE
    try:
        size = int(raw)
    except ValueError:
        size = 0
    if size < 1:
        raise CheckpointerError(
            f"{POOL_SIZE_ENV_VAR}={raw!r} is not a positive whole number; "
            f"set it to how many Postgres connections the server may open (default "
            f"{DEFAULT_POOL_SIZE}), or unset it."
        )
    return size


@asynccontextmanager
async def server_checkpointer() -> AsyncIterator[Any]:
    """The LangGraph server's checkpointer, named in ``langgraph.json``.

    How langgraph-api (0.16) uses it: ``"checkpointer": {"path": ...}`` is loaded once at
    start-up. The server calls this function and enters the context it returns the first
    time a (Python) thread asks for a checkpointer; it keeps the result in a thread-local and
    exits it at shutdown. In ``langgraph dev`` that is once, on the server's event-loop thread
    during start-up, so one saver, and one pool, serves every run and every LangGraph thread
    (conversation) of the server: nothing here is per run or per conversation.

    Because ``langgraph.json`` names this factory, the server always runs in its
    custom-checkpointer mode, whatever this yields: it wraps the saver in its adapter and logs
    "Using custom checkpointer: <class name>".

    With a Postgres ``$GRAPH_AGENT_CHECKPOINT_URI`` this yields an ``AsyncPostgresSaver`` over
    a connection pool: runs execute concurrently and each holds a connection while it
    writes. The pool checks a connection before lending it (``check_connection``), so one
    that a Postgres restart or an idle timeout closed is replaced instead of failing a run.
    Otherwise it yields the runtime's own saver (`_server_default_checkpointer`), so
    ``langgraph dev`` without the variable keeps its usual storage, through that adapter.
    """
    uri = checkpoint_uri()
    if not is_postgres(uri):
        if uri:
            logger.warning(
                "%s=%s is not a Postgres URI; the LangGraph server keeps its own checkpointer "
                "(only postgresql:// URIs replace it).",
                ENV_VAR,
                redact(uri),
            )
        yield _server_default_checkpointer()
        return

    psycopg, _ = _import_postgres()
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool, PoolTimeout

    size = _pool_size()
    try:  # one plain connection first: a pool only says "incomplete after N s", this says why
        kwargs = _connect_kwargs(uri)
        probe = await psycopg.AsyncConnection.connect(uri, **kwargs)
    except psycopg.Error as exc:
        raise _unreachable(uri, exc) from exc
    pool = AsyncConnectionPool(
        uri,
        min_size=1,
        max_size=size,
        kwargs=kwargs,
        open=False,
        name="graph-agent-checkpoints",
        check=AsyncConnectionPool.check_connection,
    )
    try:
        async with probe:  # it holds the setup lock while a pooled connection makes the tables
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            await probe.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_KEY,))
            saver = AsyncPostgresSaver(pool)
            await saver.setup()
    except (PoolTimeout, psycopg.Error) as exc:
        await pool.close()
        raise _unreachable(uri, exc) from exc
    try:
        logger.info("graph-agent checkpoints: %s (pool of up to %d)", redact(uri), size)
        yield saver
    finally:
        await pool.close()


def _server_default_checkpointer() -> Any:
    """The saver the LangGraph server would use if ``langgraph.json`` named no checkpointer.

    For ``langgraph dev`` (the in-memory runtime) that is its in-memory saver, persisted to
    ``.langgraph_api/`` between restarts. ``langgraph_runtime`` picks the running edition's
    module, so this stays right if the server runs another edition. The server still treats
    it as a custom checkpointer (see `server_checkpointer`).
    """
    from langgraph_runtime.checkpoint import Checkpointer

    return Checkpointer()
