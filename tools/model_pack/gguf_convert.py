"""Turn a GGUF chat model into a plain transformers folder that loads fast and chats correctly.

The model pack ships language models as GGUF files (llama.cpp's format) because they are small.
transformers can read GGUF, but only by dequantizing every tensor on each load, which takes
seconds to tens of seconds and several times the file's size in memory. So we do that
once, at install time: dequantize, then write safetensors plus the tokenizer and a
generation config. After that, `transformers.pipeline("text-generation", model=out_dir)`
memory-maps the safetensors and starts in about a second or two.

Two things the plain load-and-save does not get right by itself, and this module fixes:

* End of turn. Chat models end a reply with an end-of-turn token (`<|im_end|>` for Qwen and
  SmolLM2) which is not always the GGUF's `eos_token_id`. If generation does not stop there,
  the model rambles on into a made-up next turn. We collect every end marker the chat template
  uses and put them all in `generation_config.eos_token_id`.
* Determinism. We write `do_sample=False` and a modest `max_new_tokens`, so an agent that
  calls the model twice with the same prompt gets the same answer, and a forgotten
  `max_new_tokens` cannot tie up the CPU for minutes.

`gguf_metadata` reads the header alone (no tensor data), for the installer's model cards.
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MAX_NEW_TOKENS",
    "SUPPORTED_DTYPES",
    "convert_gguf",
    "cpu_has_native_bf16",
    "gguf_metadata",
    "resolve_dtype",
]

logger = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"

# The on-disk (and therefore, with pipeline's default dtype="auto", the run-time) dtype.
# Measured on a 2-core Xeon with AMX, Qwen2.5-Coder-0.5B, pipeline load + greedy generation:
#   float32:  load 1.0 s, 40 new tokens 3.6 s, 600-token prefill 2.07 s, 2.4 GB on disk
#   bfloat16: load 0.8 s, 40 new tokens 3.3 s, 600-token prefill 0.54 s, 1.2 GB on disk
# so bfloat16 wins where the CPU computes bf16 natively (AMX / AVX512-BF16 / Arm BF16). Without
# that, PyTorch emulates bf16 matmuls and float32 is the faster choice, hence "auto".
SUPPORTED_DTYPES = ("auto", "float32", "bfloat16")

# Long enough for a paragraph or a short function; short enough that a caller who forgets to
# pass max_new_tokens does not wait minutes on a CPU.
DEFAULT_MAX_NEW_TOKENS = 256

# Tokens that end a turn or a document in the chat formats we know of. Whichever of them the
# chat template writes (or the vocabulary holds as a special token) becomes a stop token.
_END_MARKERS = (
    "<|im_end|>",  # ChatML: Qwen, SmolLM2, many others
    "<|endoftext|>",  # Qwen's and GPT-2's end of document
    "<|eot_id|>",  # Llama 3
    "<|end_of_text|>",  # Llama 3 base
    "<|end|>",  # Phi-3
    "<end_of_turn>",  # Gemma
    "</s>",  # Llama 2 / Mistral
)


# CPU feature flags that mean PyTorch runs bf16 matmuls natively rather than emulating them.
_BF16_CPU_FLAGS = frozenset({"amx_bf16", "avx512_bf16", "bf16"})  # x86 AMX / AVX-512, Arm


def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU computes bfloat16 natively (read from /proc/cpuinfo; False if unknown)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:  # not Linux, or /proc not mounted: be conservative
        return False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in {"flags", "features"} and _BF16_CPU_FLAGS & set(value.split()):
            return True
    return False


def resolve_dtype(dtype: str) -> str:
    """Turn ``"auto"`` into the concrete on-disk dtype for this machine; validate the others.

    The conversion runs on the machine that will run the model (at pack install), so choosing
    by its CPU is sound: bfloat16 where bf16 is native, else float32.
    """
    if dtype not in SUPPORTED_DTYPES:
        raise ValueError(
            f"Unsupported dtype {dtype!r}; use one of {', '.join(SUPPORTED_DTYPES)} "
            '("auto" picks bfloat16 on CPUs with native bf16, else float32).'
        )
    if dtype == "auto":
        return "bfloat16" if cpu_has_native_bf16() else "float32"
    return dtype


def _check_gguf_file(gguf_path: Path) -> Path:
    """Fail early, with the path and a remedy, rather than deep inside a GGUF parser."""
    gguf_path = Path(gguf_path)
    if not gguf_path.exists():
        raise FileNotFoundError(
            f"GGUF file not found: {gguf_path}. Check the path, or re-run the model pack "
            "install so the file is fetched (and its parts concatenated) again."
        )
    if not gguf_path.is_file():
        raise ValueError(f"{gguf_path} is not a file; pass the path of the .gguf file itself.")
    with gguf_path.open("rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise ValueError(
            f"{gguf_path} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r}). "
            "If it was assembled from parts, check that all parts were concatenated in order; "
            "otherwise re-download it."
        )
    return gguf_path


def _field_value(reader: Any, key: str) -> Any:
    """A metadata value as a plain Python object, or None when the key is absent."""
    field = reader.fields.get(key)
    if field is None:
        return None
    try:
        return field.contents()
    except Exception:  # a malformed or exotic value should not break a model card
        logger.debug("Could not decode GGUF field %s", key, exc_info=True)
        return None


def _read_header(gguf_path: Path) -> tuple[dict[str, Any], int]:
    """The scalar metadata we use plus the total tensor element count.

    GGUFReader memory-maps the file, so this reads only the header pages, not the weights.
    """
    from gguf import GGUFReader

    try:
        reader = GGUFReader(str(gguf_path))
    except Exception as error:  # truncated or corrupt: say so with the path
        raise ValueError(
            f"Could not read the GGUF header of {gguf_path} ({error}). The file may be truncated; "
            "re-download it or re-assemble it from its parts."
        ) from error
    arch = _field_value(reader, "general.architecture")
    keys = [
        "general.architecture",
        "general.name",
        "general.basename",
        "general.size_label",
        "general.file_type",
        "general.license",
        "tokenizer.chat_template",
        "tokenizer.ggml.model",
        "tokenizer.ggml.bos_token_id",
        "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.eot_token_id",
        "tokenizer.ggml.padding_token_id",
    ]
    if arch:
        keys += [f"{arch}.context_length", f"{arch}.block_count", f"{arch}.embedding_length"]
    meta = {key: _field_value(reader, key) for key in keys}
    n_params = sum(int(tensor.n_elements) for tensor in reader.tensors)
    return meta, n_params


def gguf_metadata(gguf_path: Path) -> dict[str, object]:
    """Describe a GGUF model from its header, for the pack installer's model cards.

    Returns a dict with:

    * ``name`` – ``general.name`` (falls back to the file stem),
    * ``architecture`` – ``general.architecture``, e.g. ``"llama"``, ``"qwen2"``,
    * ``parameter_count`` – the sum of all tensors' element counts. This counts a separate
      output (lm_head) matrix even where the original checkpoint ties it to the embeddings,
      so it can be above the advertised size (Qwen2.5-0.5B: ~630M vs 494M),
    * ``context_length`` – ``<arch>.context_length`` or None,
    * ``chat_template_present`` – whether ``tokenizer.chat_template`` is set,
    * ``size_label``, ``num_layers``, ``hidden_size``, ``file_type`` – when present, else None.

    Raises FileNotFoundError / ValueError for a missing or non-GGUF file.
    """
    gguf_path = _check_gguf_file(gguf_path)
    meta, n_params = _read_header(gguf_path)
    arch = meta.get("general.architecture")

    def _int_or_none(value: Any) -> int | None:
        return int(value) if value is not None else None

    template = meta.get("tokenizer.chat_template")
    return {
        "name": meta.get("general.name") or gguf_path.stem,
        "architecture": arch,
        "parameter_count": n_params,
        "context_length": _int_or_none(meta.get(f"{arch}.context_length")),
        "chat_template_present": bool(template),
        "size_label": meta.get("general.size_label"),
        "num_layers": _int_or_none(meta.get(f"{arch}.block_count")),
        "hidden_size": _int_or_none(meta.get(f"{arch}.embedding_length")),
        "file_type": _int_or_none(meta.get("general.file_type")),
    }


def _load_model(gguf_path: Path, torch_dtype: Any) -> Any:
    """Dequantize the GGUF into an ordinary dense causal-LM model."""
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": torch_dtype}
    try:  # transformers >= 5.x may keep GGUF blocks packed; we want plain weights to save
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    except ImportError:  # older 5.x: always dequantizes
        pass
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_path.parent), gguf_file=gguf_path.name, **kwargs
        )
    except ValueError as error:
        raise ValueError(
            f"transformers could not load {gguf_path} as a causal LM ({error}). Its architecture "
            "may not be supported by this transformers version's GGUF reader."
        ) from error
    # Drop any trace of the GGUF quantizer, so the saved config.json describes a plain model
    # and save_pretrained does not refuse (GGUF quantization is not serializable).
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    for attribute in ("hf_quantizer", "quantization_method"):
        if getattr(model, attribute, None) is not None:
            setattr(model, attribute, None)
    if getattr(model, "is_quantized", False):
        model.is_quantized = False
    return model


def _stop_token_ids(tokenizer: Any, meta: dict[str, Any], template: str | None) -> list[int]:
    """Every token id that should end generation, the GGUF's eos first.

    The GGUF eos alone is not enough: e.g. Qwen's chat turns end in `<|im_end|>` but its base
    eos is `<|endoftext|>` in some exports, so we also stop on every end marker the chat
    template writes and on the vocabulary's special end tokens.
    """
    ids: list[int] = []

    def _add(token_id: Any) -> None:
        if token_id is None:
            return
        token_id = int(token_id)
        if token_id >= 0 and token_id not in ids:
            ids.append(token_id)

    _add(meta.get("tokenizer.ggml.eos_token_id"))
    _add(meta.get("tokenizer.ggml.eot_token_id"))
    _add(tokenizer.eos_token_id)
    vocab = tokenizer.get_vocab()
    special = set(getattr(tokenizer, "all_special_tokens", []) or [])
    special |= {str(token) for token in getattr(tokenizer, "added_tokens_decoder", {}).values()}
    for marker in _END_MARKERS:
        if marker not in vocab:
            continue
        if (template and marker in template) or marker in special:
            _add(vocab[marker])
    return ids


def _prepare_tokenizer(tokenizer: Any, meta: dict[str, Any], gguf_path: Path) -> str | None:
    """Make the tokenizer carry the GGUF's chat template and the right eos / pad tokens."""
    template = meta.get("tokenizer.chat_template")
    if template:
        # The GGUF's own template is authoritative; transformers normally copies it, but set it
        # unconditionally so a reader that drops or alters it cannot break chat formatting.
        tokenizer.chat_template = template
    elif not tokenizer.chat_template:
        logger.warning(
            "%s has no tokenizer.chat_template; chat-style messages will fail until one is set.",
            gguf_path,
        )

    convert_ids = tokenizer.convert_ids_to_tokens
    eos_id = meta.get("tokenizer.ggml.eos_token_id")
    if eos_id is not None and tokenizer.eos_token_id != int(eos_id):
        tokenizer.eos_token = convert_ids(int(eos_id))
    pad_id = meta.get("tokenizer.ggml.padding_token_id")
    if pad_id is not None and 0 <= int(pad_id) < len(tokenizer):
        if tokenizer.pad_token_id != int(pad_id):
            tokenizer.pad_token = convert_ids(int(pad_id))
    elif tokenizer.pad_token is None and tokenizer.eos_token is not None:
        # Batched generation needs a pad token; eos is the conventional stand-in.
        tokenizer.pad_token = tokenizer.eos_token
    # Decoder-only models must be padded on the left, or batched prompts continue from padding.
    tokenizer.padding_side = "left"
    tokenizer.init_kwargs["padding_side"] = "left"  # what save_pretrained writes out
    return tokenizer.chat_template


def _generation_config(tokenizer: Any, meta: dict[str, Any], template: str | None) -> Any:
    """Greedy, bounded, and stopping at the end of the assistant's turn."""
    from transformers import GenerationConfig

    stop_ids = _stop_token_ids(tokenizer, meta, template)
    bos_id = meta.get("tokenizer.ggml.bos_token_id")
    if bos_id is None:
        bos_id = tokenizer.bos_token_id
    pad_id = tokenizer.pad_token_id
    if pad_id is None and stop_ids:
        pad_id = stop_ids[0]
    return GenerationConfig(
        bos_token_id=int(bos_id) if bos_id is not None else None,
        eos_token_id=stop_ids if len(stop_ids) > 1 else (stop_ids[0] if stop_ids else None),
        pad_token_id=pad_id,
        do_sample=False,
        max_new_tokens=DEFAULT_MAX_NEW_TOKENS,
    )


def convert_gguf(gguf_path: Path, out_dir: Path, dtype: str = "auto") -> None:
    """Convert a GGUF causal LM into a transformers folder (safetensors + tokenizer + gen config).

    The result loads with ``transformers.pipeline("text-generation", model=out_dir)`` in about a
    second or two, applies the GGUF's chat template to chat messages, stops at the end of the
    assistant's turn and decodes greedily by default.

    Args:
        gguf_path: the ``.gguf`` file (one file; concatenate split parts first).
        out_dir: folder to write into; created if missing. Files of the same name are replaced,
            other files are left alone.
        dtype: weight dtype on disk, one of ``SUPPORTED_DTYPES``. With pipeline's default
            ``dtype="auto"`` this is also the dtype the model runs in. The default ``"auto"``
            picks bfloat16 on CPUs with native bf16 (faster there, and half the disk and RAM;
            measurements in the comment on ``SUPPORTED_DTYPES``) and float32 elsewhere.

    Memory: the whole model is dequantized in RAM, so the peak is a few times the dense size
    (measured peak RSS for Qwen2.5-0.5B: 3.8 GB in float32, 2.9 GB in bfloat16).

    Raises:
        FileNotFoundError: ``gguf_path`` does not exist.
        ValueError: not a GGUF file, unsupported dtype, or an architecture transformers
            cannot load from GGUF.
    """
    import torch

    gguf_path = _check_gguf_file(gguf_path)
    torch_dtype = getattr(torch, resolve_dtype(dtype))
    out_dir = Path(out_dir)
    meta, _ = _read_header(gguf_path)

    from transformers import AutoTokenizer

    model = _load_model(gguf_path, torch_dtype)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    template = _prepare_tokenizer(tokenizer, meta, gguf_path)
    generation_config = _generation_config(tokenizer, meta, template)
    model.generation_config = generation_config
    # The config's token ids are what generate() falls back on without a generation config.
    model.config.pad_token_id = generation_config.pad_token_id
    if hasattr(model.config, "name_or_path"):
        model.config.name_or_path = str(out_dir)

    # Write into a staging folder next to out_dir, then move the files in with config.json last:
    # an interrupted conversion never leaves a half-written model that looks loadable.
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        generation_config.save_pretrained(staging)
        del model
        gc.collect()
        _check_saved(staging, gguf_path, expect_template=bool(template))
        out_dir.mkdir(parents=True, exist_ok=True)
        for item in sorted(staging.iterdir(), key=lambda item: item.name == "config.json"):
            if item.is_file():  # safetensors arrives 0600 (written via a temp file): make it 0644
                item.chmod(0o644)
            target = out_dir / item.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(item, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_saved(folder: Path, gguf_path: Path, expect_template: bool) -> None:
    """Reload the saved tokenizer and fail loudly if the chat template did not survive."""
    from transformers import AutoTokenizer

    if not any(folder.glob("*.safetensors")):
        raise RuntimeError(f"Converting {gguf_path} wrote no safetensors file into {folder}.")
    reloaded = AutoTokenizer.from_pretrained(str(folder))
    if expect_template and not reloaded.chat_template:
        raise RuntimeError(
            f"The chat template of {gguf_path} was lost when saving the tokenizer to {folder}; "
            "chat prompts would be formatted wrongly."
        )
