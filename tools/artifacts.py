"""The artifact store: where images and audio made by tools are written.

State and reports hold the returned paths, never the bytes. Every path stays under the
store's root, which is the only place graph-agent writes outputs.
"""

from __future__ import annotations

import re
import uuid
import wave
from pathlib import Path

import numpy as np


class ArtifactStore:
    """Writes media for one run into ``root/<run_id>/``."""

    def __init__(self, root: str | Path, run_id: str | None = None) -> None:
        self.root = Path(root).expanduser().resolve()
        self.run_dir = self.root / _safe(run_id or uuid.uuid4().hex[:12])

    def path_for(self, stem: str, suffix: str) -> Path:
        """A fresh path under the run directory; the name is sanitised so it cannot escape."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        name = f"{_safe(stem)}-{uuid.uuid4().hex[:6]}{suffix}"
        return self.run_dir / name

    def save_image(self, image, stem: str) -> str:  # image: PIL.Image.Image
        path = self.path_for(stem, ".png")
        image.save(path, format="PNG")
        return str(path)

    def save_wav(self, audio: np.ndarray, sampling_rate: int, stem: str) -> str:
        """Write mono audio in [-1, 1] as 16-bit PCM WAV with the standard library."""
        path = self.path_for(stem, ".wav")
        pcm = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0) * 32767
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(int(sampling_rate))
            out.writeframes(pcm.astype("<i2").tobytes())
        return str(path)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "artifact"
