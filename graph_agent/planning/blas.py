"""Small matrix products on the request path, kept off OpenBLAS's thread pool.

Planning runs two ONNX Runtime encoder calls around a few tiny numpy products. A product
just big enough for OpenBLAS to go multi-threaded wakes its pool, whose threads then spin
and take the cores from ONNX Runtime's next call: plan+select went from about 22 to 45 ms
(``python -m graph_agent.evals.bench_plan_latency``). Split into row blocks that OpenBLAS
runs on one thread, the same products cost microseconds and leave the cores alone.
"""

from __future__ import annotations

import numpy as np

#: OpenBLAS keeps a product on one thread while rows x columns x inner size stays at or
#: below 4 x 65536 (its GEMM_MULTITHREAD_THRESHOLD).
_ONE_THREAD_WORK = 4 * 65536


def single_thread_matmul(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``X @ W`` in row blocks small enough that OpenBLAS keeps each on one thread."""
    rows = max(1, _ONE_THREAD_WORK // max(1, W.shape[0] * W.shape[1]))
    if len(X) <= rows:
        return X @ W
    return np.vstack([X[i : i + rows] @ W for i in range(0, len(X), rows)])
