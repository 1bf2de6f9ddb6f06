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
traceback: a wrong URI or a stopped database is a setting to fix, not a bug.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

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


def redact(uri: str) -> str:
    """``uri`` without its password, so errors and logs never print a secret."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", uri)


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
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return CheckpointerError(
        f"Cannot use the Postgres checkpoint database {redact(uri)} ({detail}). "
        "Check that the server is running and the URI (user, password, host, port, database) "
        f"is right, or unset {ENV_VAR} (and drop --checkpoint-uri) to use SQLite."
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

    With a Postgres ``$GRAPH_AGENT_CHECKPOINT_URI``: an ``AsyncPostgresSaver`` over a
    connection pool (the server runs many threads at once, each run needs a connection
    while it writes). Otherwise the server's own default, so ``langgraph dev`` without the
    variable behaves as it always did. The server enters this once per event loop and
    closes the pool at shutdown.
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
    kwargs = _connect_kwargs(uri)
    try:  # one plain connection first: a pool only says "incomplete after N s", this says why
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
    """The checkpointer the LangGraph server uses when ``langgraph.json`` names none.

    For ``langgraph dev`` (the in-memory runtime) that is its in-memory saver, persisted to
    ``.langgraph_api/`` between restarts. ``langgraph_runtime`` picks the running edition's
    module, so this stays right if the server runs another edition.
    """
    from langgraph_runtime.checkpoint import Checkpointer

    return Checkpointer()
