"""MiniLM on short texts, fast: the task detector's token vectors and the selector's queries.

Both run before any model step of a request, so their encoder calls are most of what the
request waits for before work starts. When the model pack holds the ONNX export of the
encoder (``tools/model_pack/onnx_export.py``), ONNX Runtime runs it, about twice as fast
as eager PyTorch on this kind of text (see ``onnx_export``); otherwise (a pack installed
before the export existed) the loaded PyTorch model does, with the same results.

Bulk embedding of cards stays with sentence-transformers (``embedder.Embedder.encode``):
it batches by length and draws the progress bar. ``sentence_vectors`` here does what that
model's modules do (mean of the token vectors, then unit length, at most ``max_seq_length``
tokens), so queries and cards land in the same space; a test holds the two together. The
queries run on the export's 8-bit twin when the pack has it: close to, not exactly, the
cards' space (``QUERY_ONNX_FILE`` says how close and why that is enough).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: The export's place inside the model directory (sentence-transformers' convention),
#: written by the model pack's ``onnx_export``.
ONNX_FILE = Path("onnx") / "model.onnx"
#: The same export with 8-bit weights, for ``sentence_vectors`` (the selector's queries)
#: only. It halves the query encode (the larger half of selection's time) and its
#: vectors keep cosine >= 0.98 with the full-precision ones: on TaskBench's held-out steps
#: the first choice over HuggingGPT's 673 cards stays the same for 95% of steps (the rest
#: are near-ties) and the labelled relevance set scores the same. The task detector keeps
#: full precision: on these vectors its held-out edge F1 fell 1.7 points, even retrained.
QUERY_ONNX_FILE = Path("onnx") / "model_qint8.onnx"
#: The task detector also reads this layer's token vectors (``hidden_states`` numbering:
#: 0 is the embeddings): mid-depth vectors still say which words are there, which the
#: last layer has blended into the sentence's topic. The export returns them as a second
#: output, so one pass serves both.
MIDDLE_LAYER = 4
#: The export's outputs, by name.
OUTPUTS = ("token_vectors", "middle_vectors")
#: ONNX Runtime threads per call: two cores are the target machine; a request-sized text
#: gains little past that and concurrent requests would only contend.
THREADS_ENV = "GRAPH_AGENT_ENCODER_THREADS"


@dataclass(frozen=True)
class Tokens:
    """A tokenized batch: ids, mask and each token's character span in its text."""

    input_ids: np.ndarray  # (batch, tokens) int64
    attention_mask: np.ndarray  # (batch, tokens) int64
    offsets: np.ndarray  # (batch, tokens, 2); (0, 0) for [CLS], [SEP] and padding

    @property
    def length(self) -> int:
        return int(self.input_ids.shape[1])


class TokenEncoder:
    """Token vectors of a MiniLM directory, on ONNX Runtime when its export is there."""

    def __init__(
        self, model_dir: str | Path, prefer_onnx: bool = True, onnx_file: Path | None = None
    ) -> None:
        """``onnx_file``: another export of the same architecture to run instead of the
        base one (the planner's adapted encoder); it must load, there is no fallback."""
        from transformers import AutoTokenizer

        self.path = Path(model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        config = self.path / "sentence_bert_config.json"
        settings = json.loads(config.read_text()) if config.is_file() else {}
        #: Queries are cut here, as sentence-transformers cuts the cards.
        self.max_seq_length = int(settings.get("max_seq_length", 256))
        hf_config = self.path / "config.json"
        model_config = json.loads(hf_config.read_text()) if hf_config.is_file() else {}
        #: Width of the vectors (384 for MiniLM-L6), so no texts still give the right shape.
        self.hidden_size = int(model_config.get("hidden_size", 384))
        self._session: Any = None
        self._query_session: Any = None
        self._torch: Any = None
        self._lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()
        if onnx_file is not None:
            # The planner's pair (its 8-bit base pass and the adapted export) runs side by
            # side, half the threads each: two passes at once on two cores, one thread each,
            # took 4.7 ms, one after the other at two threads each 7.7 ms. Sleeping threads,
            # as for the queries below, so neither waits on the other's (or the selector's)
            # spinning ones.
            self._session = _ort_session(onnx_file, spin=False, threads=max(1, _threads() // 2))
            return
        onnx = self.path / ONNX_FILE
        if prefer_onnx and onnx.is_file():
            try:
                self._session = _ort_session(onnx)
            except Exception as exc:  # a broken or foreign file: PyTorch still works
                log.warning("Cannot load %s (%s); encoding with PyTorch instead.", onnx, exc)
            else:
                if [o.name for o in self._session.get_outputs()] != list(OUTPUTS):
                    log.warning(
                        "The ONNX export at %s is from an older pack (no %s output); encoding "
                        "with PyTorch until `graph-agent models install` refreshes it.",
                        onnx,
                        OUTPUTS[1],
                    )
                    self._session = None
        if self._session is not None and (self.path / QUERY_ONNX_FILE).is_file():
            try:
                # The queries are encoded right after the planner's pass, while that
                # session's threads still spin on both cores; spinning here too made both
                # wait (plan+select p50 21 -> 31 ms), sleeping does not (-> 18 ms).
                self._query_session = _ort_session(self.path / QUERY_ONNX_FILE, spin=False)
            except Exception as exc:
                log.warning(
                    "Cannot load %s (%s); encoding queries at full precision instead.",
                    self.path / QUERY_ONNX_FILE,
                    exc,
                )
        if self._session is None:
            from graph_agent.retrieval_index.embedder import load_sentence_transformer

            # The card index's loaded model: one copy of the weights in memory, not two.
            self._torch = load_sentence_transformer(str(self.path))[0].auto_model.eval()

    @property
    def backend(self) -> str:
        """What runs ``layer_vectors``: ``onnxruntime`` or ``torch``."""
        return "onnxruntime" if self._session is not None else "torch"

    @property
    def query_backend(self) -> str:
        """What runs ``sentence_vectors``: ``onnxruntime-int8`` when the 8-bit file loaded."""
        return "onnxruntime-int8" if self._query_session is not None else self.backend

    def tokenize(self, texts: Sequence[str], max_length: int | None = None) -> Tokens:
        """Tokens of ``texts`` padded to the longest; cut at ``max_length`` when given.

        One call at a time: a fast tokenizer changes its own truncation state per call, so
        two threads planning at once (a server's requests) could meet "Already borrowed"."""
        with self._tokenizer_lock:
            enc = self.tokenizer(
                list(texts),
                padding=True,
                truncation=max_length is not None,
                max_length=max_length,
                return_offsets_mapping=True,
                return_tensors="np",
            )
        return Tokens(
            enc["input_ids"].astype(np.int64),
            enc["attention_mask"].astype(np.int64),
            enc["offset_mapping"],
        )

    def token_vectors(self, tokens: Tokens) -> np.ndarray:
        """Last-layer vectors, ``(batch, tokens, hidden_size)`` float32."""
        return self.layer_vectors(tokens)[0]

    def layer_vectors(self, tokens: Tokens) -> tuple[np.ndarray, np.ndarray]:
        """Last-layer and ``MIDDLE_LAYER`` vectors, each ``(batch, tokens, hidden_size)``."""
        if self._session is not None:
            feed = {"input_ids": tokens.input_ids, "attention_mask": tokens.attention_mask}
            last, middle = self._session.run(list(OUTPUTS), feed)
            return last, middle
        import torch

        with self._lock, torch.inference_mode():
            out = self._torch(
                input_ids=torch.from_numpy(tokens.input_ids),
                attention_mask=torch.from_numpy(tokens.attention_mask),
                output_hidden_states=True,
            )
        return out.last_hidden_state.numpy(), out.hidden_states[MIDDLE_LAYER].numpy()

    def sentence_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit sentence vectors, one row per text, as the model's sentence-transformers
        modules compute them (mean over real tokens, then normalized); from the 8-bit
        export when the pack has it (see ``QUERY_ONNX_FILE``)."""
        if not texts:
            return np.zeros((0, self.hidden_size), dtype=np.float32)
        tokens = self.tokenize(texts, self.max_seq_length)
        if self._query_session is not None:
            feed = {"input_ids": tokens.input_ids, "attention_mask": tokens.attention_mask}
            (hidden,) = self._query_session.run([OUTPUTS[0]], feed)
        else:
            hidden = self.token_vectors(tokens)
        return mean_pooled(hidden, tokens.attention_mask)


def mean_pooled(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Unit vectors of the mean over each text's real tokens: sentence-transformers' pooling
    for this model, shared with the install's check of the 8-bit export."""
    mask = attention_mask[:, :, None].astype(np.float32)
    mean = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    return np.ascontiguousarray(mean / np.clip(norms, 1e-12, None), dtype=np.float32)


def _threads() -> int:
    default = min(2, os.cpu_count() or 1)
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return default
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    log.warning("%s=%r is not a positive whole number; using %d.", THREADS_ENV, raw, default)
    return default


def _ort_session(path: Path, spin: bool = True, threads: int | None = None) -> Any:
    """An ONNX Runtime session on ``path``; ``spin=False`` lets its idle threads sleep;
    ``threads`` overrides ``_threads()`` for a session that runs beside another.

    Spinning (ONNX Runtime's default) keeps a call's worker threads busy-waiting for a
    while after it returns, which is faster for back-to-back calls on the same session.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or _threads()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings about unused initializers are noise here
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


_LOAD_LOCK = threading.Lock()


def token_encoder(model_dir: str | Path, onnx_file: Path | None = None) -> TokenEncoder:
    """The encoder for ``model_dir`` (or for its other export ``onnx_file``), loaded once per
    process (locked, as the index's is)."""
    with _LOAD_LOCK:
        return _token_encoder(str(Path(model_dir).expanduser()), onnx_file)


@functools.lru_cache(maxsize=4)
def _token_encoder(model_dir: str, onnx_file: Path | None) -> TokenEncoder:
    return TokenEncoder(model_dir, onnx_file=onnx_file)
