"""Benchmark of the model-card index at 10k, 100k and 1M cards (a script, not a timed test).

Run: ``python -m graph_agent.evals.bench_index [--sizes 10k,100k,1M] [--json]``.

For each size N and each layout it builds the task indexes with the product's own code
(``TaskIndex.build``: exact flat up to ``exact_max`` vectors per task, IVF + float16 above,
nprobe tuned at build time), saves them to disk and loads them back, then reports:

- top-10 latency p50/p99 of single-query searches *with a task filter* (one task's index);
- recall@10 against exact (brute-force) search over the same task;
- build time (training, adding, nprobe tuning; plus save and load), size on disk;
- peak RAM (``ru_maxrss``): every (size, layout) runs in its own subprocess, so sizes do not
  pollute each other; the figure includes Python, numpy and FAISS themselves.

Layouts: ``per-task`` spreads N cards evenly over 24 tasks (HuggingGPT's p0 catalog has 24
tasks with near-equal counts), so each task index holds N/24 vectors; ``one-task`` puts all
N in one task, the worst case for a task filter.

Synthetic vectors (seeded, 384-d, L2-normalised), calibrated on MiniLM embeddings of the 673
p0 cards (mean cosine between random cards 0.28, within a task 0.50; the spectrum decays,
the top 50 principal directions hold 73% of the variance):

    v = normalise(0.52·g + 0.48·T_task + 0.45·S_topic + 0.55·ε)

with g a shared direction (MiniLM vectors share a mean direction), T a random unit centre per
task, S a random unit centre per topic (one topic per ~400 cards of a task, 8 to 2000 per
task), and ε Gaussian noise whose per-dimension variance falls as 1/i (i = 1..384,
E|ε|² = 1), which gives the data a low effective dimension, as real embeddings have. That
yields cosine ≈ 0.27 across tasks, 0.50 within a task, 0.70 within a topic. Queries are
fresh draws from a task's mixture with extra isotropic noise (cosine ≈ 0.9 to the clean
draw), so they resemble but never equal a card.

Embedding throughput is measured separately with the pack's real MiniLM on real card texts
(the p0 cards' ``ModelCard.embedding_text()``, repeated to ~1,350 cards): both the raw
``Embedder.encode`` rate and the rate of a real ``CardIndex.build``, and the end-to-end
latency of ``CardIndex.search`` (query embedding + FAISS + SQLite id lookup).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
WEIGHTS = (0.52, 0.48, 0.45, 0.55)  # shared, task, topic, noise
P0 = Path(__file__).resolve().parents[2] / "shared/benchmarks/hugginggpt/p0_models.jsonl"


def _parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * mult)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class SyntheticTask:
    """One task's synthetic cards: a ``VectorSource`` that regenerates chunks from seeds."""

    def __init__(self, world: SyntheticCatalog, task: int, n: int, id_offset: int) -> None:
        self.world, self.task, self.n, self.dim = world, task, n, DIM
        self.id_offset = id_offset
        rng = np.random.default_rng([world.seed, 1, task])
        self.centre = _unit(rng.standard_normal(DIM))
        self.topics = _unit(rng.standard_normal((int(np.clip(n // 400, 8, 2000)), DIM)))

    def draw(self, m: int, rng: np.random.Generator) -> np.ndarray:
        a, b, c, d = WEIGHTS
        topic = self.topics[rng.integers(len(self.topics), size=m)]
        noise = rng.standard_normal((m, DIM), dtype=np.float32) * self.world.sigma
        return _unit(a * self.world.shared + b * self.centre + c * topic + d * noise)

    def chunks(self, batch: int = 16_384):
        for j, lo in enumerate(range(0, self.n, batch)):
            m = min(batch, self.n - lo)
            rng = np.random.default_rng([self.world.seed, 2, self.task, j])
            ids = np.arange(self.id_offset + lo, self.id_offset + lo + m, dtype=np.int64)
            yield ids, self.draw(m, rng)

    def sample(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return self.draw(min(m, self.n), rng)

    def queries(self, m: int, rng: np.random.Generator) -> np.ndarray:
        clean = self.draw(m, rng)
        return _unit(clean + 0.5 * rng.standard_normal(clean.shape) / DIM**0.5)


class SyntheticCatalog:
    """N synthetic cards over ``tasks`` tasks (as even as integer division allows)."""

    def __init__(self, n: int, tasks: int, seed: int = 7) -> None:
        self.seed = seed
        rng = np.random.default_rng([seed, 0])
        self.shared = _unit(rng.standard_normal(DIM))
        sigma = 1 / np.sqrt(np.arange(1, DIM + 1))
        self.sigma = (sigma / np.sqrt((sigma**2).sum())).astype(np.float32)
        sizes = [n // tasks + (1 if t < n % tasks else 0) for t in range(tasks)]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.tasks = [
            SyntheticTask(self, t, s, int(o))
            for t, (s, o) in enumerate(zip(sizes, offsets, strict=True))
        ]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _current_rss_mb() -> float:
    """Resident memory now (after the build is freed and the saved indexes are loaded)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_scale(n: int, layout: str, queries: int, storage: str, seed: int) -> dict[str, Any]:
    """Build, save, load and query one (size, layout); runs inside its own subprocess."""
    from graph_agent.retrieval_index.index import IndexParams, TaskIndex, exact_topk, recall_at

    params = IndexParams(storage=storage)  # type: ignore[arg-type]
    world = SyntheticCatalog(n, 24 if layout == "per-task" else 1, seed)
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    built = [TaskIndex.build(task, params) for task in world.tasks]
    build_s = time.perf_counter() - t0
    kinds = sorted({b.kind for b in built})
    info = [b.info for b in built]
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        paths = [b.save(Path(tmp) / f"t{i}.faiss") for i, b in enumerate(built)]
        save_s = time.perf_counter() - t1
        del built
        gc.collect()
        t2 = time.perf_counter()
        loaded = [TaskIndex.load(Path(tmp) / f"t{i}.faiss", inf) for i, inf in enumerate(info)]
        load_s = time.perf_counter() - t2
    rng = np.random.default_rng([seed, 9])
    which = rng.integers(len(world.tasks), size=queries)
    qs = np.stack(
        [
            world.tasks[t].queries(1, np.random.default_rng([seed, 10, i]))[0]
            for i, t in enumerate(which)
        ]
    )
    for i in range(min(20, queries)):  # warm up caches and lazy allocations
        loaded[which[i]].search(qs[i : i + 1], 10)
    lat, got = [], np.full((queries, 10), -1, dtype=np.int64)
    for i, t in enumerate(which):
        t3 = time.perf_counter()
        _, ids = loaded[t].search(qs[i : i + 1], 10)
        lat.append(time.perf_counter() - t3)
        got[i, : ids.shape[1]] = ids[0]
    exact = np.full((queries, 10), -1, dtype=np.int64)
    for t in np.unique(which):
        rows = np.flatnonzero(which == t)
        exact[rows] = exact_topk(qs[rows], world.tasks[t].chunks(), 10)
    ms = np.array(lat) * 1000
    sizes = [task.n for task in world.tasks]
    return {
        "cards": n,
        "layout": layout,
        "tasks": len(world.tasks),
        "cards_per_task": max(sizes),
        "index": "+".join(kinds),
        "nlist": max((i.get("nlist", 0) for i in info), default=0) or None,
        "nprobe": max((i.get("nprobe", 0) for i in info), default=0) or None,
        "storage": storage if "ivf" in kinds else "fp32",
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "recall_at_10": round(recall_at(got, exact, 10), 4),
        "build_s": round(build_s, 1),
        "save_s": round(save_s, 1),
        "load_s": round(load_s, 1),
        "disk_mb": round(sum(paths) / 1e6, 1),
        "peak_rss_mb": round(_rss_mb(), 0),
        "serving_rss_mb": round(_current_rss_mb(), 0),
        "rss_before_build_mb": round(rss0, 0),
        "queries": queries,
    }


def _p0_cards(limit: int):
    from graph_agent.retrieval_index.cards import ModelCard

    rows = [json.loads(line) for line in P0.read_text().splitlines() if line.strip()]
    cards = []
    while len(cards) < limit:
        copy = len(cards) // len(rows)
        for r in rows[: limit - len(cards)]:
            tags = (r.get("meta") or {}).get("tags") or []
            cards.append(
                ModelCard(
                    id=r["id"] + (f"#{copy}" if copy else ""),
                    task=r["task"],
                    description=(r.get("description") or "").strip(),
                    tags=[t for t in tags if isinstance(t, str)],
                    likes=r.get("likes"),
                    downloads=r.get("downloads"),
                )
            )
    return cards


def run_embedding(models_dir: str, cards: int) -> dict[str, Any]:
    """Real MiniLM throughput on real card texts, and end-to-end search latency."""
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.embedder import Embedder
    from graph_agent.retrieval_index.index import CardIndex

    embedder = Embedder(models_dir)
    batch = _p0_cards(cards)
    texts = [c.embedding_text() for c in batch]
    embedder.encode(texts[:64])  # load the model outside the timing
    t0 = time.perf_counter()
    embedder.encode(texts)
    encode_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Catalog(Path(tmp) / "catalog.sqlite")
        catalog.upsert(batch)
        index = CardIndex(tmp, catalog, embedder)
        t1 = time.perf_counter()
        index.build()
        build_s = time.perf_counter() - t1
        rng = np.random.default_rng(3)
        picks = [batch[i] for i in rng.integers(len(batch), size=100)]
        lat = []
        for card in picks:
            query = f"{card.task.replace('-', ' ')} {card.description[:60]}"
            t2 = time.perf_counter()
            index.search(card.task, query, 10)
            lat.append(time.perf_counter() - t2)
        catalog.close()
    ms = np.array(lat) * 1000
    return {
        "cards": len(batch),
        "encode_cards_per_s": round(len(batch) / encode_s, 1),
        "index_build_cards_per_s": index.last_embedding.get("cards_per_second"),
        "index_build_s": round(build_s, 1),
        "search_e2e_p50_ms": round(float(np.percentile(ms, 50)), 2),
        "search_e2e_p99_ms": round(float(np.percentile(ms, 99)), 2),
        "threads": os.cpu_count(),
    }


def _child(argv: list[str]) -> dict[str, Any]:
    kind, *rest = argv
    if kind == "scale":
        n, layout, queries, storage, seed = rest
        return run_scale(int(n), layout, int(queries), storage, int(seed))
    return run_embedding(rest[0], int(rest[1]))


def _spawn(argv: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "graph_agent.evals.bench_index", "--child", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )
    if out.returncode != 0:
        raise RuntimeError(f"benchmark step {argv} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_table(result: dict[str, Any]) -> None:
    """The benchmark result as a Markdown table, plus the embedding line."""
    cols = [
        ("cards", "{:,}"),
        ("layout", "{}"),
        ("cards_per_task", "{:,}"),
        ("index", "{}"),
        ("nprobe", "{}"),
        ("p50_ms", "{:.3f}"),
        ("p99_ms", "{:.3f}"),
        ("recall_at_10", "{:.4f}"),
        ("build_s", "{:.1f}"),
        ("load_s", "{:.1f}"),
        ("disk_mb", "{:.0f}"),
        ("peak_rss_mb", "{:.0f}"),
        ("serving_rss_mb", "{:.0f}"),
    ]
    print(f"Vectors: {result['vectors']}. CPUs: {result['machine']['cpus']}.")
    print(" | ".join(c for c, _ in cols))
    print(" | ".join("---" for _ in cols))
    for row in result["scale"]:
        print(" | ".join(f.format(row[c]) if row.get(c) is not None else "-" for c, f in cols))
    if embedding := result.get("embedding"):
        print(
            f"\nMiniLM on {embedding['cards']} real p0 card texts: "
            f"{embedding['encode_cards_per_s']} cards/s (encode), "
            f"{embedding['index_build_cards_per_s']} cards/s inside CardIndex.build; "
            f"end-to-end CardIndex.search (embed query + FAISS + SQLite) "
            f"p50 {embedding['search_e2e_p50_ms']} ms, p99 {embedding['search_e2e_p99_ms']} ms."
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k,1M", help="comma-separated card counts")
    parser.add_argument("--layouts", default="per-task,one-task")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--storage", default="fp16", choices=["fp32", "fp16", "sq8"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embed-cards", type=int, default=1346, help="0 skips embedding")
    parser.add_argument("--models-dir", default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--table-from", metavar="FILE", help="print a saved --json result")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table_from:
        print_table(json.loads(Path(args.table_from).read_text()))
        return 0
    if args.child:
        print(json.dumps(_child(args.child)))
        return 0
    rows = []
    for size in args.sizes.split(","):
        for layout in args.layouts.split(","):
            n = _parse_size(size)
            print(f"... {n:,} cards, {layout}", file=sys.stderr, flush=True)
            rows.append(
                _spawn(["scale", str(n), layout, str(args.queries), args.storage, str(args.seed)])
            )
    embedding = None
    if args.embed_cards:
        from graph_agent.context import default_models_dir

        models_dir = args.models_dir or str(default_models_dir())
        print(f"... MiniLM on {args.embed_cards} real cards", file=sys.stderr, flush=True)
        embedding = _spawn(["embed", models_dir, str(args.embed_cards)])
    result = {
        "vectors": "synthetic 384-d clustered Gaussian mixture (shared + task + topic + "
        f"1/i-spectrum noise), L2-normalised, seed {args.seed}; see the module docstring",
        "machine": {"cpus": os.cpu_count()},
        "scale": rows,
        "embedding": embedding,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
