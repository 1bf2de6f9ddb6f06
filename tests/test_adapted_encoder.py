"""The planner's adapted encoder: the adapter merged into MiniLM, exported once, and read at
plan time exactly as it was trained."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from graph_agent.planning import adapted_encoder
from graph_agent.planning.adapted_encoder import (
    ADAPTER,
    adapted_export,
    export_path,
    merged_model,
    remove_stale_exports,
)
from graph_agent.planning.task_detector import (
    ADAPTER_ENV,
    LEXICAL_DIM,
    NONE,
    Encoder,
    TaskDetector,
    encoder,
)
from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME

REQUEST = "transcribe meeting.wav, then summarize it and read the summary aloud"
SPANS = [(0, 22), (23, 46), (47, len(REQUEST))]


def _train_adapter_module():
    """``evals/train_adapter.py`` as the GPU machine runs it: a plain file, not the package."""
    path = Path(__file__).resolve().parents[1] / "evals" / "train_adapter.py"
    spec = importlib.util.spec_from_file_location("train_adapter_file", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def minilm(models_dir):
    return models_dir / EMBEDDER_DIR_NAME


def test_the_adapter_is_in_the_repository_and_names_the_detector_tasks():
    assert ADAPTER.is_file() and ADAPTER.stat().st_size < 3_000_000
    head = adapted_encoder.load_head()
    assert NONE in head.labels and "automatic-speech-recognition" in head.labels
    assert head.W.shape == (768, len(head.labels))
    assert head.lexical.shape == (LEXICAL_DIM, len(head.labels))


def test_merging_adds_each_low_rank_delta_to_its_projection(minilm):
    from transformers import AutoModel

    base = dict(AutoModel.from_pretrained(minilm, local_files_only=True).named_parameters())
    merged = dict(merged_model(minilm).named_parameters())
    data = np.load(ADAPTER)
    name = "encoder.layer.3.attention.self.query"
    delta = float(data["scale"]) * data[f"B.{name}"] @ data[f"A.{name}"]
    got = merged[f"{name}.weight"].detach().numpy() - base[f"{name}.weight"].detach().numpy()
    assert np.abs(delta).max() > 1e-3  # a real change, not a zero adapter
    assert np.allclose(got, delta, atol=1e-5)
    untouched = "embeddings.word_embeddings.weight"
    assert np.array_equal(merged[untouched].detach().numpy(), base[untouched].detach().numpy())


def test_the_export_is_named_by_the_adapter_and_built_once(minilm):
    out = adapted_export(minilm)
    assert out == export_path(minilm) and out.name.startswith("planner-")
    assert out.name == f"planner-{adapted_encoder.digest()}-qint8.onnx"
    before = out.stat().st_mtime_ns
    assert adapted_export(minilm) == out and out.stat().st_mtime_ns == before
    assert not list(out.parent.glob(".*.partial"))


def test_a_second_reading_that_fails_leaves_the_first(models_dir, monkeypatch, caplog):
    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    det = TaskDetector(models_dir)
    head = det.adapter_head
    det.adapter_head = None
    first, _ = det.detect(REQUEST, SPANS)
    det.adapter_head = head

    def broken(text: str, truncate: bool = False):
        raise RuntimeError("session lost")

    monkeypatch.setattr(det.adapted, "token_states", broken)
    probs, _ = det.detect(REQUEST, SPANS)
    assert np.array_equal(probs, first)
    assert "second reading failed (session lost)" in caplog.text


def test_exports_of_earlier_adapters_are_removed_and_the_current_one_kept(tmp_path):
    onnx = tmp_path / "onnx"
    onnx.mkdir()
    current = export_path(tmp_path)
    names = [current.name, "planner-000000000000-qint8.onnx", "model.onnx", "model_qint8.onnx"]
    for name in names:
        (onnx / name).write_bytes(b"x")
    removed = remove_stale_exports(tmp_path)
    assert [p.name for p in removed] == ["planner-000000000000-qint8.onnx"]
    assert sorted(p.name for p in onnx.iterdir()) == sorted(n for n in names if "0000" not in n)


def test_a_models_directory_it_cannot_write_gets_the_export_built_aside(
    minilm, monkeypatch, tmp_path
):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the export's folder would go")
    monkeypatch.setattr(adapted_encoder, "export_path", lambda *_: blocked / "planner-x.onnx")
    out = adapted_export(minilm)
    assert out.is_file() and out.parent != blocked and out.name == "planner-x.onnx"
    assert not list(out.parent.glob(".*"))  # the full-precision step is not left behind
    os.remove(out)


def test_plan_time_inputs_match_training_inputs(minilm):
    """The runtime's ONNX pass and pooling give the head what training gave it: the merged
    PyTorch model through ``train_adapter.span_vectors``, and the same hashed words."""
    import torch
    from transformers import AutoTokenizer

    ta = _train_adapter_module()
    assert ta.LEXICAL_DIM == LEXICAL_DIM
    enc = Encoder(minilm, adapted_export(minilm))
    assert enc.tokens.backend == "onnxruntime"
    states = enc.token_states(REQUEST)
    ours = enc.span_means(REQUEST, SPANS, states)
    tokenizer = AutoTokenizer.from_pretrained(minilm, local_files_only=True)
    with torch.inference_mode():
        theirs = ta.span_vectors(
            merged_model(minilm), tokenizer, [{"text": REQUEST, "spans": SPANS}], "cpu"
        ).numpy()
    assert ours.shape == theirs.shape == (3, 768)
    # The export has 8-bit weights: close to the merged model, not equal.
    cosine = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert float(cosine.min()) > 0.98
    # ...and not what the base encoder gives: the export really is the adapted one.
    base = Encoder(minilm)
    base_means = base.span_means(REQUEST, SPANS, base.token_states(REQUEST))
    assert float(np.abs(base_means - ours).max()) > 0.05


def test_the_adapter_is_on_unless_switched_off(models_dir, monkeypatch):
    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    det = TaskDetector(models_dir)
    assert det.adapted is not None and det.adapter_head is not None
    assert det.encoder is encoder(str(models_dir), True)  # the base pass at 8 bits beside it
    for off in ("0", "off", "False"):
        monkeypatch.setenv(ADAPTER_ENV, off)
        det = TaskDetector(models_dir)
        assert det.adapted is None and det.adapter_head is None
        assert det.encoder is encoder(str(models_dir))  # the base pass, full precision


def test_a_planner_encoder_that_cannot_be_built_leaves_the_base_pass(
    models_dir, monkeypatch, caplog
):
    from graph_agent.planning import task_detector

    def broken(models: str):
        raise RuntimeError("no ONNX exporter here")

    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    monkeypatch.setattr(task_detector, "adapted_encoder", broken)
    det = TaskDetector(models_dir)
    assert det.adapted is None and det.adapter_head is None
    assert det.encoder is encoder(str(models_dir))
    assert "could not be built (no ONNX exporter here)" in caplog.text
    probs, _ = det.detect(REQUEST, SPANS)
    assert det.labels[int(probs[0].argmax())] == "automatic-speech-recognition"


LONG = (
    "I have a recording of our weekly meeting in meeting.wav, could you transcribe it for me, "
    "then summarize the discussion and read the summary aloud"
)
LONG_SPANS = [(0, 87), (89, 118), (123, len(LONG))]


def test_the_detector_blends_the_adapter_head_into_its_odds(models_dir, monkeypatch):
    monkeypatch.setenv(ADAPTER_ENV, "1")
    det = TaskDetector(models_dir)
    assert det.adapter_head is not None and det.adapted is not None
    # Two passes, both on 8-bit exports: the base one and the adapted one.
    assert {det.encoder.tokens.backend, det.adapted.tokens.backend} == {"onnxruntime"}
    assert det.adapted.tokens is not det.encoder.tokens
    assert det.encoder is encoder(str(models_dir), True) is not encoder(str(models_dir))
    with_head, _ = det.detect(LONG, LONG_SPANS)
    short_with, _ = det.detect(REQUEST, SPANS)
    det.adapter_head = None
    without, _ = det.detect(LONG, LONG_SPANS)
    short_without, _ = det.detect(REQUEST, SPANS)
    assert with_head.shape == without.shape == (3, len(det.labels))
    assert np.allclose(with_head.sum(1), 1.0, atol=1e-5)
    assert float(np.abs(with_head - without).max()) > 1e-3
    picks = [det.labels[i] for i in with_head.argmax(1)]
    assert picks == ["automatic-speech-recognition", "summarization", "text-to-speech"]
    # A short request is read by both too (the 20-word floor of the first adapter is gone).
    assert float(np.abs(short_with - short_without).max()) > 1e-3
