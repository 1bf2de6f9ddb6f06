"""A small version of the load test (``python -m graph_agent.evals.load_test``, 50 threads).

``langgraph dev`` with the Postgres checkpointer on 127.0.0.1, concurrent real requests on
the default pack, more threads than the server runs at once: every run must finish and be
checkpointed in Postgres, the warm cache must load each model once, and the server's memory
must stay within the cache budget (plus working memory) above what it holds when ready.
"""

from __future__ import annotations

import pytest

from graph_agent.evals import load_test
from graph_agent.evals.services import NO_POSTGRES, find_bin_dir

pytestmark = pytest.mark.server


def test_concurrent_threads_on_the_server_all_finish_with_flat_model_loads():
    if find_bin_dir() is None:
        pytest.skip(NO_POSTGRES)
    budget_mb = 3000
    result = load_test.run_load(n_threads=8, jobs=4, budget_mb=budget_mb, timeout_s=600)
    assert result["lost"] == 0, result["lost_reasons"]
    assert result["completed"] == 8 and result["checkpointed_threads"] == 8
    # All four kinds of request ran; each model loaded once and was reused after that.
    assert result["distinct_models"] == 4, result["models_by_request"]
    assert result["model_loads"] == result["distinct_models"], (
        result["models_by_request"],
        result["step_failures"],
        result["evictions"],
    )
    assert result["evictions"] == 0
    # Above the ready server (runtime, planner and card index loaded; no model in the cache):
    # the budget bounds the models the cache holds, and the calls in flight need working
    # memory it does not count (activations, audio buffers), allowed for here as 15 %.
    rss = result["rss_mb"]
    assert result["cache_held_mb"] <= budget_mb
    assert rss["peak_sampled"] <= rss["ready"] + 1.15 * budget_mb, rss


def test_a_forked_child_that_has_not_exec_d_is_not_counted_twice():
    # A child forked from the server, before it execs (a library starting a helper program),
    # maps the server's pages: summing its RSS would count the server twice.
    import subprocess
    import sys
    import time

    code = (
        "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\ntime.sleep(30)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        for _ in range(100):
            if len(load_test._group_pids(server.pid)) == 2:
                break
            time.sleep(0.05)
        assert len(load_test._group_pids(server.pid)) == 2
        assert load_test._counted_pids(server.pid) == [server.pid]
    finally:
        import os
        import signal

        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
