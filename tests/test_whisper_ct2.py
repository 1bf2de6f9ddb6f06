"""Tests for the CTranslate2 Whisper -> transformers converter.

The parser and converter tests build tiny CTranslate2 files themselves, so they need no
weights; the transcript test uses a real packed model through conftest fixtures.
"""

from __future__ import annotations

import json
import re
import struct
from math import gcd
from pathlib import Path

import numpy as np
import pytest

from graph_agent.tools.model_pack.whisper_ct2 import convert_whisper_ct2, read_ct2_model

# CTranslate2 dtype ids, in the order of its serializer.
_DTYPE_IDS = {"float32": 0, "int8": 1, "int16": 2, "int32": 3, "float16": 4, "bfloat16": 5}


def _string(text: str) -> bytes:
    raw = text.encode("utf-8") + b"\0"
    return struct.pack("<H", len(raw)) + raw


def write_ct2(
    path: Path,
    variables: dict[str, np.ndarray | tuple[str, bytes, tuple[int, ...]]],
    aliases: dict[str, str] | None = None,
    version: int = 6,
    spec: str = "WhisperSpec",
) -> None:
    """Write a model.bin in CTranslate2's binary layout (version 6).

    A variable is a numpy array, or (dtype name, raw bytes, shape) for dtypes numpy lacks.
    """
    out = [struct.pack("<I", version), _string(spec), struct.pack("<I", 3)]
    out.append(struct.pack("<I", len(variables)))
    for name, value in variables.items():
        if isinstance(value, tuple):
            dtype, raw, shape = value
        else:
            dtype, raw, shape = (
                value.dtype.name,
                value.astype(value.dtype.newbyteorder("<")).tobytes(),
                value.shape,
            )
        out += [_string(name), struct.pack("<B", len(shape))]
        out += [struct.pack("<I", dim) for dim in shape]
        out += [struct.pack("<B", _DTYPE_IDS[dtype]), struct.pack("<I", len(raw)), raw]
    aliases = aliases or {}
    out.append(struct.pack("<I", len(aliases)))
    for alias, target in aliases.items():
        out += [_string(alias), _string(target)]
    path.write_bytes(b"".join(out))


def test_read_ct2_model_parses_every_dtype_and_alias(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((3, 4)).astype(np.float16)
    bias = rng.standard_normal(3).astype(np.float32)
    bf16_values = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    bf16_raw = (bf16_values.view(np.uint32) >> 16).astype("<u2").tobytes()
    model = tmp_path / "model.bin"
    write_ct2(
        model,
        {
            "decoder/activation": np.array(3, dtype=np.int8),
            "decoder/num_heads": np.array(6, dtype=np.int16),
            "layer/linear_0/weight": weight,
            "layer/linear_0/bias": bias,
            "layer/ids": np.arange(5, dtype=np.int32),
            "layer/bf16": ("bfloat16", bf16_raw, (3,)),
        },
        aliases={"layer/projection/weight": "layer/linear_0/weight"},
    )

    variables = read_ct2_model(model)

    assert set(variables) == {
        "decoder/activation",
        "decoder/num_heads",
        "layer/linear_0/weight",
        "layer/linear_0/bias",
        "layer/ids",
        "layer/bf16",
        "layer/projection/weight",
    }
    assert variables["decoder/activation"].shape == () and int(variables["decoder/activation"]) == 3
    assert (
        variables["decoder/num_heads"].dtype == np.int16
        and int(variables["decoder/num_heads"]) == 6
    )
    assert variables["layer/linear_0/weight"].dtype == np.float16
    np.testing.assert_array_equal(variables["layer/linear_0/weight"], weight)
    np.testing.assert_array_equal(variables["layer/linear_0/bias"], bias)
    np.testing.assert_array_equal(variables["layer/ids"], np.arange(5))
    assert variables["layer/bf16"].dtype == np.float32
    np.testing.assert_array_equal(variables["layer/bf16"], bf16_values)
    assert variables["layer/projection/weight"] is variables["layer/linear_0/weight"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda raw: struct.pack("<I", 5) + raw[4:], "binary version 5"),
        (lambda raw: raw[:-7], "truncated"),
        (lambda raw: raw + b"\0\0", "trailing bytes"),
        (lambda raw: b"PK\x03\x04" + raw[4:], "binary version"),
    ],
)
def test_read_ct2_model_rejects_damaged_files(tmp_path: Path, mutate, message: str) -> None:
    model = tmp_path / "model.bin"
    write_ct2(model, {"w": np.ones((2, 2), dtype=np.float32)})
    model.write_bytes(mutate(model.read_bytes()))
    with pytest.raises(ValueError, match=f"not a CTranslate2 model: .*{message}"):
        read_ct2_model(model)


def test_read_ct2_model_rejects_unknown_dtype_and_size_mismatch(tmp_path: Path) -> None:
    model = tmp_path / "model.bin"
    write_ct2(model, {"w": np.ones(2, dtype=np.float32)})
    raw = bytearray(model.read_bytes())
    dtype_at = raw.index(b"w\0") + 2 + 1 + 4  # name, rank byte, one dim
    raw[dtype_at] = 9
    model.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="unknown dtype id 9"):
        read_ct2_model(model)
    raw[dtype_at] = _DTYPE_IDS["float16"]  # 8 bytes of data no longer fit 2 float16 values
    model.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="declares 8 bytes, expected 4"):
        read_ct2_model(model)


# --- a miniature Whisper in CTranslate2 form, to exercise the converter without weights ---

_D, _HEADS, _FFN, _MELS, _SRC_POS, _TGT_POS = 8, 2, 16, 4, 6, 10
_SPECIALS = [
    "<|endoftext|>",
    "<|startoftranscript|>",
    "<|en|>",
    "<|de|>",
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nocaptions|>",
    "<|notimestamps|>",
]


def _write_tokenizer(path: Path) -> int:
    """A byte-level BPE tokenizer.json laid out like Whisper's; returns the model vocab size."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in _SPECIALS])
    tokenizer.save(str(path))
    return len(alphabet) + len(_SPECIALS) + 1501  # + the timestamp tokens


def _fake_whisper(
    src: Path, quantize: bool = False, extra: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """Write model.bin/config.json/tokenizer.json of a 1-layer Whisper; return float weights."""
    src.mkdir()
    vocab = _write_tokenizer(src / "tokenizer.json")
    rng = np.random.default_rng(1)

    def rand(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    weights = {
        "encoder/conv1/weight": rand(_D, _MELS, 3),
        "encoder/conv1/bias": rand(_D),
        "encoder/conv2/weight": rand(_D, _D, 3),
        "encoder/conv2/bias": rand(_D),
        "encoder/position_encodings/encodings": rand(_SRC_POS, _D),
        "encoder/layer_norm/gamma": rand(_D),
        "encoder/layer_norm/beta": rand(_D),
        "decoder/embeddings/weight": rand(vocab, _D),
        "decoder/position_encodings/encodings": rand(_TGT_POS, _D),
        "decoder/layer_norm/gamma": rand(_D),
        "decoder/layer_norm/beta": rand(_D),
    }
    blocks = {
        "encoder/layer_0/self_attention": 3,
        "decoder/layer_0/self_attention": 3,
        "decoder/layer_0/attention": 2,
    }
    for prefix, fused in blocks.items():
        weights[f"{prefix}/layer_norm/gamma"] = rand(_D)
        weights[f"{prefix}/layer_norm/beta"] = rand(_D)
        linears = [(fused * _D, _D), (_D, _D)]
        if fused == 2:  # cross-attention: linear_0 = q, linear_1 = fused k/v, linear_2 = out
            linears = [(_D, _D), (2 * _D, _D), (_D, _D)]
        for i, (rows, cols) in enumerate(linears):
            weights[f"{prefix}/linear_{i}/weight"] = rand(rows, cols)
            weights[f"{prefix}/linear_{i}/bias"] = rand(rows)
    for stack in ("encoder", "decoder"):
        weights[f"{stack}/layer_0/ffn/layer_norm/gamma"] = rand(_D)
        weights[f"{stack}/layer_0/ffn/layer_norm/beta"] = rand(_D)
        weights[f"{stack}/layer_0/ffn/linear_0/weight"] = rand(_FFN, _D)
        weights[f"{stack}/layer_0/ffn/linear_0/bias"] = rand(_FFN)
        weights[f"{stack}/layer_0/ffn/linear_1/weight"] = rand(_D, _FFN)
        weights[f"{stack}/layer_0/ffn/linear_1/bias"] = rand(_D)

    stored: dict[str, np.ndarray] = {}
    for name, value in weights.items():
        if quantize and name.endswith("linear_0/weight"):
            # CTranslate2's int8 scheme: one scale per output row, q = round(w * scale).
            scale = 127.0 / np.abs(value).max(axis=1)
            stored[name] = np.rint(value * scale[:, None]).astype(np.int8)
            stored[name + "_scale"] = scale.astype(np.float32)
            weights[name] = stored[name].astype(np.float32) / scale[:, None]
        else:
            stored[name] = value.astype(np.float16)
            weights[name] = stored[name].astype(np.float32)
    stored |= {
        "encoder/num_heads": np.array(_HEADS, dtype=np.int16),
        "decoder/num_heads": np.array(_HEADS, dtype=np.int16),
        "decoder/activation": np.array(3, dtype=np.int8),
        "decoder/pre_norm": np.array(1, dtype=np.int8),
        "decoder/scale_embeddings": np.array(0, dtype=np.int8),
        "decoder/alignment_heads": np.array(1, dtype=np.int16),
        "decoder/alignment_layer": np.array(-1, dtype=np.int16),
    }
    stored |= extra or {}
    write_ct2(
        src / "model.bin",
        stored,
        aliases={"decoder/projection/weight": "decoder/embeddings/weight"},
    )
    config = {
        "alignment_heads": [[0, 1]],
        "lang_ids": [258, 259],
        "suppress_ids": [1, 2],
        "suppress_ids_begin": [220, 256],
    }
    (src / "config.json").write_text(json.dumps(config))
    return weights


@pytest.mark.parametrize("quantize", [False, True], ids=["float16", "int8"])
def test_convert_maps_every_variable(tmp_path: Path, quantize: bool) -> None:
    from safetensors.numpy import load_file
    from transformers import GenerationConfig, WhisperConfig, WhisperProcessor

    weights = _fake_whisper(tmp_path / "ct2", quantize=quantize)
    out = tmp_path / "hf"
    out.mkdir()
    convert_whisper_ct2(tmp_path / "ct2", out)

    config = WhisperConfig.from_pretrained(out)
    assert (config.d_model, config.encoder_layers, config.decoder_attention_heads) == (
        _D,
        1,
        _HEADS,
    )
    assert (config.num_mel_bins, config.max_source_positions) == (_MELS, _SRC_POS)
    assert config.max_target_positions == _TGT_POS and config.tie_word_embeddings

    state = load_file(str(out / "model.safetensors"))
    fused_qkv = weights["decoder/layer_0/self_attention/linear_0/weight"]
    np.testing.assert_allclose(
        state["model.decoder.layers.0.self_attn.k_proj.weight"], fused_qkv[_D : 2 * _D]
    )
    fused_kv = weights["decoder/layer_0/attention/linear_1/weight"]
    np.testing.assert_allclose(
        state["model.decoder.layers.0.encoder_attn.v_proj.weight"], fused_kv[_D:]
    )
    assert "model.decoder.layers.0.encoder_attn.k_proj.bias" not in state
    np.testing.assert_allclose(
        state["model.encoder.layers.0.fc1.weight"],
        weights["encoder/layer_0/ffn/linear_0/weight"],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        state["model.encoder.conv1.weight"], weights["encoder/conv1/weight"], rtol=1e-6
    )

    generation = GenerationConfig.from_pretrained(out)
    assert generation.decoder_start_token_id == 257 and generation.no_timestamps_token_id == 265
    assert generation.eos_token_id == 256 and generation.is_multilingual is False
    assert generation.suppress_tokens == [1, 2] and generation.alignment_heads == [[0, 1]]

    processor = WhisperProcessor.from_pretrained(out)
    assert processor.feature_extractor.feature_size == _MELS
    assert len(processor.tokenizer) == config.vocab_size
    ids = processor.tokenizer("hi").input_ids
    assert (
        ids[:2] == [257, 265] and processor.tokenizer.decode(ids, skip_special_tokens=True) == "hi"
    )


def test_convert_refuses_leftover_variables_and_nonempty_output(tmp_path: Path) -> None:
    _fake_whisper(tmp_path / "ct2", extra={"decoder/mystery/weight": np.ones(3, np.float16)})
    out = tmp_path / "hf"
    out.mkdir()
    with pytest.raises(ValueError, match=r"no transformers counterpart.*decoder/mystery/weight"):
        convert_whisper_ct2(tmp_path / "ct2", out)
    (out / "stray").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        convert_whisper_ct2(tmp_path / "ct2", out)


def test_convert_refuses_unsupported_dtype(tmp_path: Path) -> None:
    _fake_whisper(
        tmp_path / "ct2",
        extra={"encoder/layer_0/ffn/linear_1/weight": np.ones((_D, _FFN), np.int32)},
    )
    out = tmp_path / "hf"
    out.mkdir()
    with pytest.raises(ValueError, match="unsupported dtype int32"):
        convert_whisper_ct2(tmp_path / "ct2", out)


# --- a real model: fixtures come from conftest.py ---


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def _word_error_rate(reference: list[str], hypothesis: list[str]) -> float:
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, 1):
        current = [i]
        for j, hyp_word in enumerate(hypothesis, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref_word != hyp_word))
            )
        previous = current
    return previous[-1] / max(len(reference), 1)


def test_real_transcript(pack_model_dir, speech_wav) -> None:
    import soundfile
    from scipy.signal import resample_poly
    from transformers import pipeline

    model_dir = pack_model_dir("whisper-tiny.en")
    wav_path, spoken_text = speech_wav
    audio, rate = soundfile.read(wav_path, dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    if rate != 16000:
        common = gcd(rate, 16000)
        audio = resample_poly(audio, 16000 // common, rate // common).astype(np.float32)

    asr = pipeline("automatic-speech-recognition", model=str(model_dir))
    text = asr({"raw": audio, "sampling_rate": 16000})["text"]

    wer = _word_error_rate(_words(spoken_text), _words(text))
    assert wer <= 0.15, f"transcript {text!r} vs spoken {spoken_text!r}: WER {wer:.2f}"
