"""The throw-away PostgreSQL cluster fixture for the checkpointer tests.

The cluster itself (``graph_agent.evals.services.PostgresCluster``: a temp dir, 127.0.0.1 on a
free port, stopped by PID) is shared with the load test. ``.ci/run`` installs the binaries
when they are missing, so the tests skip only where PostgreSQL is not installed at all (a
developer's machine without it), and say so.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graph_agent.evals.services import NO_POSTGRES, PostgresCluster, ServiceError, find_bin_dir


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    """``postgresql://postgres@127.0.0.1:<port>/postgres`` of a cluster made for this session."""
    if find_bin_dir() is None:
        pytest.skip(NO_POSTGRES)
    try:
        with PostgresCluster.started() as cluster:
            yield cluster.uri
    except ServiceError as exc:
        pytest.fail(str(exc))
