"""The local Hugging Face cache, scanned from a fake cache the test builds on disk."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.ingest import (
    CardSourceError,
    ImportReport,
    hf_cache_cards,
    ingest_hf_cache,
    jsonl_cards,
    local_models,
)

README = """---
language: en
license: Apache 2.0
pipeline_tag: automatic-speech-recognition
model-index:
- name: tiny
  results:
  - dataset: {name: LibriSpeech (clean), type: librispeech_asr, split: test}
    metrics:
    - {type: wer, name: Test WER, value: 7.5}
---
# Tiny ASR

A tiny speech recogniser for tests.
"""


def _safetensors(shapes: dict[str, list[int]]) -> bytes:
    header = {n: {"dtype": "F32", "shape": s, "data_offsets": [0, 0]} for n, s in shapes.items()}
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw


def _repo(
    cache: Path, repo_id: str, files: dict[str, bytes], commit: str, ref: str | None = "main"
):
    """Lay out ``models--org--name`` as huggingface_hub does: blobs, a snapshot of links, refs."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for name, data in files.items():
        blob = repo / "blobs" / f"{commit[:8]}-{name.replace('/', '_')}"
        blob.write_bytes(data)
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).symlink_to(blob)
    if ref:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot


@pytest.fixture()
def fake_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "hub"
    cache.mkdir()
    _repo(cache, "org/tiny-asr", {"README.md": README.encode(),
          "config.json": b'{"architectures": ["WhisperForConditionalGeneration"]}',
          "model.safetensors": _safetensors({"a": [10, 20], "b": [5]})}, "a" * 40)  # fmt: skip
    _repo(cache, "org/tiny-asr", {"README.md": b"old"}, "b" * 40, ref=None)  # older revision
    _repo(cache, "org/tiny-gpt", {"config.json": b'{"architectures": ["GPT2LMHeadModel"]}',
          "pytorch_model.bin": b"\0" * 16}, "c" * 40)  # fmt: skip
    _repo(cache, "org/readme-only", {"README.md": b"---\npipeline_tag: fill-mask\n---\nhi"},
          "d" * 40)  # fmt: skip
    _repo(cache, "org/mystery", {"config.json": b'{"architectures": ["Mystery"]}'}, "e" * 40)
    return cache


def test_cached_models_become_runnable_cards(fake_cache):
    report = ImportReport(source="cache")
    cards = {c.id: c for c in hf_cache_cards(fake_cache, report=report)}
    assert set(cards) == {"org/tiny-asr", "org/tiny-gpt", "org/readme-only"}
    assert report.skipped == 1 and "org/mystery: cannot tell its task" in report.problems[0]

    asr = cards["org/tiny-asr"]
    assert asr.local_path == str(fake_cache / "models--org--tiny-asr" / "snapshots" / ("a" * 40))
    assert asr.runnable and asr.source == "hf-cache"
    assert asr.task == "automatic-speech-recognition" and asr.license == "apache-2.0"
    assert asr.parameters == 205 and asr.size_bytes and asr.size_bytes > 0
    assert asr.languages == ["en"] and asr.description == "A tiny speech recogniser for tests."
    (wer,) = asr.benchmarks
    assert (wer.dataset, wer.metric, wer.value, wer.higher_is_better) == (
        "LibriSpeech (clean)", "wer", 7.5, False)  # fmt: skip

    gpt = cards["org/tiny-gpt"]
    assert gpt.task == "text-generation" and gpt.runnable and gpt.license == "unknown"
    readme_only = cards["org/readme-only"]
    assert readme_only.task == "fill-mask" and not readme_only.runnable  # no weights


def test_cache_feeds_other_sources_and_the_catalog(fake_cache, tmp_path):
    have = local_models(hf_cache=fake_cache)
    assert set(have) == {"org/tiny-asr", "org/tiny-gpt"}
    path = tmp_path / "cards.jsonl"
    path.write_text(json.dumps({"id": "org/tiny-gpt", "pipeline_tag": "text-generation",
                                "meta": {}}) + "\n")  # fmt: skip
    (card,) = jsonl_cards(path, local_models=have)
    assert card.runnable and card.local_path == have["org/tiny-gpt"]

    catalog = Catalog(tmp_path / "catalog.sqlite")
    assert ingest_hf_cache(catalog, fake_cache).imported == 3
    assert [c.id for c in catalog.by_task("automatic-speech-recognition")] == ["org/tiny-asr"]


def test_missing_cache(tmp_path, monkeypatch):
    with pytest.raises(CardSourceError, match="No Hugging Face cache"):
        list(hf_cache_cards(tmp_path / "nope"))
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "never-downloaded"))
    assert list(hf_cache_cards()) == []  # the default cache may simply not exist yet
