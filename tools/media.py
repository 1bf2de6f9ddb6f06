"""Reading the user's media files: what kind a file is, and decoding it for a pipeline.

Pipelines get decoded arrays, not file names, so nothing here needs ffmpeg.
"""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np

from graph_agent.tools.errors import InputFileError
from graph_agent.tools.results import Modality

_IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
_AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".oga", ".mp3", ".aiff", ".aif", ".au"}
_TEXT_SUFFIXES = {".txt", ".md", ".json", ".csv"}


def sniff_modality(path: Path) -> Modality | None:
    """Guess a file's modality from its first bytes, falling back to its suffix.

    Content wins over the name, so a JPEG renamed to ``.wav`` is still called an image.
    """
    try:
        head = path.read_bytes()[:16] if path.stat().st_size < 1 << 16 else _head(path)
    except OSError:
        return None
    if head.startswith((b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"BM")) or head[8:12] == b"WEBP":
        return "image"
    if head[:4] in (b"RIFF", b"fLaC", b"OggS", b"FORM") or head[:3] == b"ID3":
        return "audio"
    suffix = path.suffix.lower()
    if suffix in _IMAGE_SUFFIXES:
        return "image"
    if suffix in _AUDIO_SUFFIXES:
        return "audio"
    if suffix in _TEXT_SUFFIXES:
        return "text"
    return None


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(16)


def load_audio(path: str | Path, sampling_rate: int = 16_000) -> np.ndarray:
    """Decode an audio file to mono float32 at ``sampling_rate``."""
    import soundfile as sf
    from scipy.signal import resample_poly

    path = Path(path)
    try:
        data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several unrelated types
        raise InputFileError(
            f"{path.name} could not be read as audio ({exc}). Give a WAV, FLAC or OGG file."
        ) from exc
    mono = data.mean(axis=1)
    if rate != sampling_rate:
        g = gcd(rate, sampling_rate)
        mono = resample_poly(mono, sampling_rate // g, rate // g).astype(np.float32)
    return mono


def load_image(path: str | Path):  # -> PIL.Image.Image
    """Open an image as RGB, with a clear error when the file is not one."""
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise InputFileError(
            f"{path.name} could not be read as an image ({exc}). Give a JPEG or PNG file."
        ) from exc
