"""Sentence embeddings for cards and queries (all-MiniLM-L6-v2 from the model pack).

Texts are embedded in batches (``batch_size``) by sentence-transformers, which also draws the
progress bar; every call records its throughput in ``last_stats`` so builds and the
benchmark can report cards per second.
"""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path

import numpy as np

EMBEDDER_DIR_NAME = "all-minilm-l6-v2"


class EmbedderMissingError(RuntimeError):
    """The embedding model is not installed, so the index cannot be built or searched."""


_LOAD_LOCK = threading.Lock()


def load_sentence_transformer(path: str):
    """The sentence-transformers model at ``path``, loaded once per process and shared (the
    planner's task detector reuses its transformer and tokenizer).

    Locked: `functools.lru_cache` does not hold other callers while the first one loads, so
    concurrent first calls (parallel runs on a fresh server) each loaded a copy. Later calls
    take the lock only for the lookup.
    """
    with _LOAD_LOCK:
        return _load_sentence_transformer(path)


@functools.lru_cache(maxsize=2)
def _load_sentence_transformer(path: str):
    # The first import of sentence-transformers (and the transformers modules it pulls in) goes
    # through the one-at-a-time warm-up the tools use: a tool may be importing transformers now.
    from graph_agent.common.first_imports import SENTENCE_TRANSFORMERS, warm_imports

    warm_imports(SENTENCE_TRANSFORMERS)
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu", local_files_only=True, trust_remote_code=False)


class Embedder:
    """Embeds texts in batches into unit vectors, so inner product is cosine similarity."""

    def __init__(self, models_dir: str | Path) -> None:
        self.path = Path(models_dir).expanduser() / EMBEDDER_DIR_NAME
        if not (self.path / "modules.json").is_file():
            raise EmbedderMissingError(
                f"The embedding model is not installed at {self.path}. "
                "Run `graph-agent models install` first."
            )
        #: ``{"texts", "seconds", "per_second"}`` of the last ``encode`` call.
        self.last_stats: dict[str, float] = {}

    @property
    def model_id(self) -> str:
        return EMBEDDER_DIR_NAME

    def encode(self, texts: list[str], progress: bool = False, batch_size: int = 64) -> np.ndarray:
        """Unit vectors, one row per text (float32, C-contiguous, ready for FAISS)."""
        model = load_sentence_transformer(str(self.path))
        t0 = time.perf_counter()
        vecs = model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            show_progress_bar=progress,
            convert_to_numpy=True,
        )
        seconds = time.perf_counter() - t0
        self.last_stats = {
            "texts": len(texts),
            "seconds": seconds,
            "per_second": len(texts) / seconds if seconds > 0 else 0.0,
        }
        return np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(texts), -1)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for a few short texts (a plan's step queries), on the fast path.

        Same space as ``encode`` (see ``token_encoder``), without sentence-transformers'
        per-call overhead and on ONNX Runtime when the pack has the export.
        """
        from graph_agent.retrieval_index.token_encoder import token_encoder

        return token_encoder(self.path).sentence_vectors(texts)
