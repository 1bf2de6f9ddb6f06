"""Tests for the GGUF -> transformers converter of the model pack.

The unit tests build a tiny GGUF file themselves, so they need no model download. The real-model
test uses conftest.py's `pack_model_dir` fixture for the pack's converted SmolLM2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graph_agent.tools.model_pack.gguf_convert import (
    cpu_has_native_bf16,
    gguf_metadata,
    resolve_dtype,
)

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
)


def _write_tiny_gguf(path: Path, *, chat_template: str | None) -> None:
    """A header-valid GGUF with two small tensors, enough for gguf_metadata."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_name("tiny-test-model")
    writer.add_context_length(128)
    writer.add_block_count(1)
    writer.add_embedding_length(8)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    writer.add_tensor("token_embd.weight", np.zeros((16, 8), dtype=np.float32))
    writer.add_tensor("output_norm.weight", np.ones(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_gguf_metadata_reads_header(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    _write_tiny_gguf(path, chat_template=CHAT_TEMPLATE)

    meta = gguf_metadata(path)

    assert meta["architecture"] == "llama"
    assert meta["name"] == "tiny-test-model"
    assert meta["parameter_count"] == 16 * 8 + 8  # sum of the tensors' element counts
    assert meta["context_length"] == 128
    assert meta["chat_template_present"] is True
    assert meta["num_layers"] == 1
    assert meta["hidden_size"] == 8


def test_gguf_metadata_without_chat_template(tmp_path: Path) -> None:
    path = tmp_path / "base.gguf"
    _write_tiny_gguf(path, chat_template=None)

    assert gguf_metadata(path)["chat_template_present"] is False


def test_not_a_gguf_file_is_a_clear_value_error(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"PK\x03\x04 this is a zip, not a gguf")

    with pytest.raises(ValueError, match="not a GGUF file") as excinfo:
        gguf_metadata(path)
    assert str(path) in str(excinfo.value)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"missing\.gguf"):
        gguf_metadata(tmp_path / "missing.gguf")


def test_resolve_dtype() -> None:
    assert resolve_dtype("float32") == "float32"
    assert resolve_dtype("bfloat16") == "bfloat16"
    assert resolve_dtype("auto") == ("bfloat16" if cpu_has_native_bf16() else "float32")
    with pytest.raises(ValueError, match="Unsupported dtype"):
        resolve_dtype("int4")


def test_cpu_has_native_bf16_reads_flags(tmp_path: Path) -> None:
    with_amx = tmp_path / "amx"
    with_amx.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile\n")
    plain = tmp_path / "plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2\n")

    assert cpu_has_native_bf16(with_amx) is True
    assert cpu_has_native_bf16(plain) is False
    assert cpu_has_native_bf16(tmp_path / "absent") is False


def test_smollm2_chat_reply(pack_model_dir) -> None:
    """The converted SmolLM2 chats: template applied, greedy, stops at its end-of-turn token."""
    from transformers import pipeline

    model_dir = pack_model_dir("smollm2-135m-instruct")
    generator = pipeline("text-generation", model=str(model_dir))

    assert generator.tokenizer.chat_template, "the GGUF chat template did not survive conversion"
    im_end = generator.tokenizer.convert_tokens_to_ids("<|im_end|>")
    eos = generator.model.generation_config.eos_token_id
    assert im_end in (eos if isinstance(eos, list) else [eos])
    assert generator.model.generation_config.do_sample is False

    messages = [{"role": "user", "content": "What is the capital of France? Answer briefly."}]
    prompt = generator.tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert "<|im_start|>assistant" in prompt

    result = generator(messages, max_new_tokens=40)
    reply = result[0]["generated_text"][-1]
    assert reply["role"] == "assistant"
    assert reply["content"].strip()
    assert "<|im_start|>" not in reply["content"]  # it stopped at the end of its turn
