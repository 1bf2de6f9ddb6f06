"""Models already downloaded into the local Hugging Face cache, as runnable cards.

The cache (``~/.cache/huggingface/hub`` unless ``HF_HUB_CACHE``/``HF_HOME`` say otherwise)
holds ``models--org--name/snapshots/<commit>/...`` with ``refs/main`` naming the current
commit. ``huggingface_hub.scan_cache_dir`` reads that layout, including its corner cases
(dangling refs, missing blobs), so this module only turns each model's chosen snapshot into a
card: front matter from its README, the task from the front matter or, failing that, from
``config.json``'s architecture, the parameter count from the safetensors headers, and
``local_path`` = the snapshot directory.

A snapshot without weight files (only a README or config was fetched) gets no ``local_path``:
it is known, but not runnable.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.sources.base import (
    CardSourceError,
    ImportReport,
    card_from_metadata,
    read_readme,
)

#: File endings that mean "the weights are here" for the formats graph-agent can load.
WEIGHT_SUFFIXES = (
    ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".gguf", ".h5", ".msgpack",
)  # fmt: skip

#: Architectures whose class name alone does not say the task.
_ARCHITECTURE_TASKS = {
    "WhisperForConditionalGeneration": "automatic-speech-recognition",
    "Speech2TextForConditionalGeneration": "automatic-speech-recognition",
    "SpeechEncoderDecoderModel": "automatic-speech-recognition",
    "VisionEncoderDecoderModel": "image-to-text",
    "BlipForConditionalGeneration": "image-to-text",
    "Blip2ForConditionalGeneration": "image-to-text",
    "GitForCausalLM": "image-to-text",
    "BlipForQuestionAnswering": "visual-question-answering",
    "ViltForQuestionAnswering": "visual-question-answering",
    "SpeechT5ForTextToSpeech": "text-to-speech",
    "VitsModel": "text-to-speech",
    "BarkModel": "text-to-speech",
    "MusicgenForConditionalGeneration": "text-to-audio",
    "CLIPModel": "zero-shot-image-classification",
    "MarianMTModel": "translation",
    "DPTForDepthEstimation": "depth-estimation",
}
#: Class-name endings and the task they mean, checked in order.
_ARCHITECTURE_SUFFIXES = (
    ("ForCausalLM", "text-generation"),
    ("LMHeadModel", "text-generation"),
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForQuestionAnswering", "question-answering"),
    ("ForMaskedLM", "fill-mask"),
    ("ForImageClassification", "image-classification"),
    ("ForImageClassificationWithTeacher", "image-classification"),
    ("ForObjectDetection", "object-detection"),
    ("ForDepthEstimation", "depth-estimation"),
    ("ForSemanticSegmentation", "image-segmentation"),
    ("ForUniversalSegmentation", "image-segmentation"),
    ("ForInstanceSegmentation", "image-segmentation"),
    ("ForCTC", "automatic-speech-recognition"),
    ("ForSpeechSeq2Seq", "automatic-speech-recognition"),
    ("ForAudioClassification", "audio-classification"),
    ("ForImageTextToText", "image-text-to-text"),
    ("ForVision2Seq", "image-text-to-text"),
    ("ForTextToSpeech", "text-to-speech"),
    ("ForConditionalGeneration", "text2text-generation"),
)


def task_from_config(config: dict[str, Any]) -> str | None:
    """The pipeline tag a ``config.json``'s first architecture implies, or None."""
    architectures = config.get("architectures") or []
    for arch in architectures if isinstance(architectures, list) else []:
        arch = str(arch)
        if arch in _ARCHITECTURE_TASKS:
            return _ARCHITECTURE_TASKS[arch]
        for suffix, task in _ARCHITECTURE_SUFFIXES:
            if arch.endswith(suffix):
                return task
    return None


#: A safetensors header larger than this is not a header: stop rather than read gigabytes.
_MAX_HEADER = 100_000_000


def safetensors_parameters(path: Path) -> int | None:
    """Parameter count from a safetensors file's header alone (no tensor data is read)."""
    try:
        with path.open("rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            if size > _MAX_HEADER:
                return None
            header = json.loads(f.read(size))
    except (OSError, struct.error, ValueError):
        return None
    total = 0
    for name, entry in header.items():
        if name != "__metadata__" and isinstance(entry, dict):
            total += math.prod(int(d) for d in entry.get("shape") or [])
    return total or None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _pick_revision(repo: Any) -> Any:
    """The snapshot ``refs/main`` points to, else the most recently modified one."""
    revisions = sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True)
    for rev in revisions:
        if "main" in rev.refs:
            return rev
    return revisions[0] if revisions else None


def default_cache_dir() -> Path:
    """The HF hub cache huggingface_hub uses (``HF_HUB_CACHE``/``HF_HOME`` honoured)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hf_cache_cards(
    cache_dir: str | Path | None = None, *, report: ImportReport | None = None
) -> Iterator[ModelCard]:
    """Cards for every model in the local HF cache, runnable when their weights are there.

    With no ``cache_dir`` the default cache is scanned, and a missing one simply yields
    nothing (no model was ever downloaded). An explicit ``cache_dir`` that does not exist
    raises :class:`CardSourceError`, since that is a typo, not an empty cache. A model whose
    task cannot be told (no ``pipeline_tag``, unknown architecture) is skipped and reported.
    """
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    explicit = cache_dir is not None
    root = Path(cache_dir).expanduser() if explicit else default_cache_dir()
    report = report if report is not None else ImportReport(source=f"hf-cache:{root}")
    try:
        info = scan_cache_dir(root)
    except CacheNotFound as exc:
        if explicit:
            raise CardSourceError(f"No Hugging Face cache at {root}: {exc}") from exc
        return
    for warning in info.warnings:
        report.note("scan", str(warning))
    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model":
            continue
        report.read += 1
        card = _card(repo, report)
        if card is not None:
            report.imported += 1
            yield card


def _card(repo: Any, report: ImportReport) -> ModelCard | None:
    revision = _pick_revision(repo)
    if revision is None:
        report.problem(repo.repo_id, "no snapshot in the cache")
        return None
    snapshot = Path(revision.snapshot_path)
    meta: dict[str, Any] = {}
    text = None
    if (snapshot / "README.md").is_file():
        try:
            meta, text = read_readme(snapshot / "README.md")
        except Exception as exc:  # bad YAML and the like: the config may still say enough
            report.note(repo.repo_id, f"README not parsed ({type(exc).__name__}: {exc})")
    config = _read_json(snapshot / "config.json")
    task = meta.get("pipeline_tag") or task_from_config(config)
    if not task and (snapshot / "modules.json").is_file():
        task = "sentence-similarity"  # a sentence-transformers model
    if not task:
        report.problem(repo.repo_id, "cannot tell its task (no pipeline_tag, unknown config)")
        return None
    files = [Path(f.file_path) for f in revision.files]
    weights = [f for f in files if f.name.endswith(WEIGHT_SUFFIXES) and f.exists()]
    params = [safetensors_parameters(f) for f in weights if f.name.endswith(".safetensors")]
    try:
        return card_from_metadata(
            repo.repo_id,
            meta=meta,
            pipeline_tag=str(task),
            readme=text,
            parameters=sum(p for p in params if p) or None,
            size_bytes=revision.size_on_disk or None,
            library=meta.get("library_name") or ("transformers" if config else None),
            source="hf-cache",
            local_path=snapshot if weights else None,
        )
    except (ValueError, TypeError) as exc:
        report.problem(repo.repo_id, str(exc))
        return None
