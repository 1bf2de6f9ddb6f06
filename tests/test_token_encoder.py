"""The fast encoder path: ONNX Runtime and PyTorch agree with sentence-transformers."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from graph_agent.planning.task_detector import Encoder
from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME, load_sentence_transformer
from graph_agent.retrieval_index.token_encoder import ONNX_FILE, QUERY_ONNX_FILE, TokenEncoder
from graph_agent.tools.model_pack.onnx_export import QUERY_MIN_COSINE

TEXTS = [
    "automatic-speech-recognition: transcribe meeting.wav",
    "translation: then translate the summary into German, please",
    "a",
    "summarization: " + "a very long clause that goes on " * 60,  # past 256 tokens: cut
]


@pytest.fixture(scope="module")
def minilm(models_dir):
    path = models_dir / EMBEDDER_DIR_NAME
    for export in (ONNX_FILE, QUERY_ONNX_FILE):
        if not (path / export).is_file():
            pytest.fail(f"{path / export} is missing: run `graph-agent models install`")
    return path


@pytest.mark.parametrize(
    ("prefer_onnx", "backend", "min_cosine"),
    [(True, "onnxruntime-int8", QUERY_MIN_COSINE), (False, "torch", 0.99999)],
    ids=["onnxruntime-int8", "torch"],
)
def test_sentence_vectors_match_sentence_transformers(minilm, prefer_onnx, backend, min_cosine):
    encoder = TokenEncoder(minilm, prefer_onnx=prefer_onnx)
    assert encoder.query_backend == backend
    ours = encoder.sentence_vectors(TEXTS)
    reference = load_sentence_transformer(str(minilm)).encode(TEXTS, normalize_embeddings=True)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float((ours * reference).sum(1).min()) > min_cosine
    assert encoder.sentence_vectors([]).shape == (0, encoder.hidden_size) == (0, 384)


def test_queries_on_the_8_bit_export_are_close_but_really_from_it(minilm, tmp_path):
    full = _copy_without_export(minilm, tmp_path)
    (full / ONNX_FILE).symlink_to(minilm / ONNX_FILE)  # the full-precision file only
    precise, fast = TokenEncoder(full), TokenEncoder(minilm)
    assert (precise.query_backend, fast.query_backend) == ("onnxruntime", "onnxruntime-int8")
    a, b = precise.sentence_vectors(TEXTS), fast.sentence_vectors(TEXTS)
    cosine = (a * b).sum(1)
    assert cosine.min() > QUERY_MIN_COSINE and cosine.min() < 0.99999  # not the same file
    # The planner's token vectors stay full precision on both.
    tokens = fast.tokenize(TEXTS[:2])
    assert np.array_equal(fast.layer_vectors(tokens)[0], precise.layer_vectors(tokens)[0])


def test_a_broken_8_bit_export_leaves_queries_at_full_precision(minilm, tmp_path, caplog):
    copy = _copy_without_export(minilm, tmp_path)
    (copy / ONNX_FILE).symlink_to(minilm / ONNX_FILE)
    (copy / QUERY_ONNX_FILE).write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING):
        encoder = TokenEncoder(copy)
    assert (encoder.backend, encoder.query_backend) == ("onnxruntime", "onnxruntime")
    assert "encoding queries at full precision instead" in caplog.text
    reference = load_sentence_transformer(str(minilm)).encode(TEXTS, normalize_embeddings=True)
    assert float((encoder.sentence_vectors(TEXTS) * reference).sum(1).min()) > 0.99999


def test_planner_token_vectors_are_the_same_on_both_backends(minilm):
    request = "transcribe meeting.wav, then summarize it and read the summary aloud"
    spans = [(0, 22), (23, 46), (47, len(request))]
    onnx, torch = Encoder(minilm), Encoder(minilm)
    # The base encoder on both (the adapted one: test_adapted_encoder.py).
    onnx.tokens = TokenEncoder(minilm)
    torch.tokens = TokenEncoder(minilm, prefer_onnx=False)
    assert onnx.tokens.backend == "onnxruntime"
    a, b = onnx.span_vectors(request, spans), torch.span_vectors(request, spans)
    assert a.shape == (3, 768)  # the last layer's mean, then the middle layer's
    assert np.allclose(np.linalg.norm(a[:, :384], axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.linalg.norm(a[:, 384:], axis=1), 1.0, atol=1e-5)
    assert float(np.abs(a - b).max()) < 1e-4
    for half in (slice(0, 384), slice(384, 768)):  # the spans really are pooled apart
        assert float((a[0, half] * a[2, half]).sum()) < 0.95
    # The halves are the two layers: not the same numbers twice.
    assert float(np.abs(a[:, :384] - a[:, 384:]).max()) > 0.1


def test_both_layers_are_the_same_on_both_backends(minilm):
    onnx, torch = TokenEncoder(minilm), TokenEncoder(minilm, prefer_onnx=False)
    tokens = onnx.tokenize(TEXTS[:3])
    (a_last, a_mid), (b_last, b_mid) = onnx.layer_vectors(tokens), torch.layer_vectors(tokens)
    real = tokens.attention_mask.astype(bool)
    assert a_mid.shape == a_last.shape == (3, tokens.length, 384)
    assert float(np.abs(a_last - b_last)[real].max()) < 1e-4
    assert float(np.abs(a_mid - b_mid)[real].max()) < 1e-4
    assert float(np.abs(a_mid - a_last)[real].max()) > 0.1  # really another layer


def _copy_without_export(minilm, tmp_path):
    copy = tmp_path / EMBEDDER_DIR_NAME
    copy.mkdir()
    for item in minilm.iterdir():
        if item.name != "onnx":
            (copy / item.name).symlink_to(item)
    (copy / ONNX_FILE).parent.mkdir()
    return copy


def test_a_broken_export_falls_back_to_torch_and_says_so(minilm, tmp_path, caplog):
    copy = _copy_without_export(minilm, tmp_path)
    (copy / ONNX_FILE).write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING):
        encoder = TokenEncoder(copy)
    assert encoder.backend == "torch"
    assert "encoding with PyTorch instead" in caplog.text
    vec = encoder.sentence_vectors(["detect objects in photo.jpg"])
    assert vec.shape == (1, 384) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5


def test_an_export_from_an_older_pack_falls_back_to_torch_and_says_how_to_refresh(
    minilm, tmp_path, caplog
):
    import onnx
    from onnx import TensorProto, helper

    copy = _copy_without_export(minilm, tmp_path)
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "t"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"])
    out = helper.make_tensor_value_info("token_vectors", TensorProto.FLOAT, ["b", "t"])
    cast = helper.make_node("Cast", ["input_ids"], ["token_vectors"], to=TensorProto.FLOAT)
    graph = helper.make_graph([cast], "one_output", [ids, mask], [out])
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), copy / ONNX_FILE
    )
    with caplog.at_level(logging.WARNING):
        encoder = TokenEncoder(copy)
    assert encoder.backend == "torch"
    assert "older pack" in caplog.text and "graph-agent models install" in caplog.text
    last, middle = encoder.layer_vectors(encoder.tokenize(["detect objects in photo.jpg"]))
    assert last.shape == middle.shape and last.shape[-1] == 384


def test_the_8_bit_export_is_checked_against_full_precision_and_dropped_when_off(minilm, tmp_path):
    from graph_agent.tools.model_pack.onnx_export import quantize_for_queries

    encoder = TokenEncoder(minilm, prefer_onnx=False)
    tokens = encoder.tokenize(TEXTS[:3])
    expected = encoder.token_vectors(tokens)
    out = tmp_path / "q.onnx"
    args = (minilm / ONNX_FILE, out, tokens.input_ids, tokens.attention_mask)
    assert QUERY_MIN_COSINE < quantize_for_queries(*args, expected) < 0.99999
    assert out.is_file()
    # Vectors from another text stand in for a quantizer that broke the model.
    wrong = np.roll(expected, 1, axis=0)
    with pytest.raises(ValueError, match="8-bit ONNX export's sentence vectors reach only"):
        quantize_for_queries(*args, wrong)
    assert not out.exists()
