"""Where the speech is in a long recording, so Whisper can transcribe it in pieces.

Whisper sees 30 s at a time. The transformers pipeline's own ``chunk_length_s`` cuts a long
recording every 30 s wherever that falls, often inside a word, and runs the whole file in
one call that reports nothing until it ends. Instead, a voice-activity detector finds the
pauses, the recording is cut there into pieces of at most `MAX_CHUNK_S`, stretches without
speech are skipped (Whisper makes up text for silence: "Thank you."), and each piece is
transcribed in order, one bounded call at a time, with a progress report and a cancellation
check between pieces.

The detector is Silero VAD (MIT), the ONNX file that the ``silero-vad`` wheel ships. The
model pack copies that one file (pinned) into ``<models>/silero-vad``; it is a helper of the
speech-recognition back end, not a model a request asks for, so it has no card and the
selector never sees it. It is run here with onnxruntime directly: the silero-vad package's
own code needs torch tensors (and torchaudio to read files), none of which the model needs.

The ONNX model takes one frame at a time: 512 new samples at 16 kHz after the previous
frame's last 64 (its context), a recurrent ``state`` of shape (2, 1, 128) and the rate; it
returns the frame's speech probability and the next state.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graph_agent.tools.cancel import check_cancelled
from graph_agent.tools.errors import ModelUnavailableError

log = logging.getLogger(__name__)

#: The pack folder the detector is installed in, and the file the back end loads.
VAD_DIR = "silero-vad"
VAD_FILE = "silero_vad.onnx"
#: The only rate the detector and Whisper share (the detector also takes 8 kHz).
RATE = 16_000
FRAME = 512
_CONTEXT = 64
#: Longest piece handed to Whisper: under its 30 s window, with room for the padding
#: around the speech.
MAX_CHUNK_S = 28.0
#: A frame at or above this probability is speech (Silero's own default threshold).
SPEECH_THRESHOLD = 0.5
#: Kept around each stretch of speech, so a word's soft start and end are not cut off.
_PAD_S = 0.2
#: Frames between cancellation checks while the detector runs (256 frames: 8 s of audio).
_CHECK_EVERY = 256


@dataclass(frozen=True)
class Chunk:
    """One piece of the recording for Whisper, in samples at 16 kHz: ``[start, end)``."""

    start: int
    end: int

    def seconds(self) -> tuple[float, float]:
        return round(self.start / RATE, 2), round(self.end / RATE, 2)


def find_detector(*folders: str | Path | None) -> Path | None:
    """The detector's ONNX file in the first of ``folders`` (models folders) that has one.

    The speech back end passes the run's models folder and the folder its Whisper model
    sits in, so the pack's detector is found whether the model came from the pack or not.
    """
    for folder in folders:
        if folder is None:
            continue
        path = Path(folder) / VAD_DIR / VAD_FILE
        if path.is_file():
            return path
    return None


_SESSION_LOCK = threading.Lock()


@functools.lru_cache(maxsize=2)
def _session(path: str) -> Any:
    """One onnxruntime session per detector file, shared: the model's state is passed in
    each call, so the session itself holds none and concurrent calls are safe."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise ModelUnavailableError(
            "onnxruntime is not installed, so the speech detector for long recordings cannot "
            "run. Install it with `pip install onnxruntime` (graph-agent depends on it)."
        ) from None
    options = ort.SessionOptions()
    # One frame is 512 samples: threads cost more than they save, and the CPU is shared.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def speech_probabilities(audio: np.ndarray, detector: Path) -> np.ndarray:
    """The detector's speech probability for each 512-sample frame of 16 kHz ``audio``.

    About 0.4 s for 90 s of audio on one core; a cancelled step stops here within 8 s of
    audio (`check_cancelled` every `_CHECK_EVERY` frames).
    """
    with _SESSION_LOCK:  # the first load of a file, once
        session = _session(str(detector))
    frames = -(-audio.size // FRAME)
    padded = np.zeros(frames * FRAME, dtype=np.float32)
    padded[: audio.size] = audio
    state = np.zeros((2, 1, 128), dtype=np.float32)
    context = np.zeros((1, _CONTEXT), dtype=np.float32)
    rate = np.array(RATE, dtype=np.int64)
    probs = np.empty(frames, dtype=np.float32)
    for i in range(frames):
        if i % _CHECK_EVERY == 0:
            check_cancelled()
        x = np.concatenate([context, padded[None, i * FRAME : (i + 1) * FRAME]], axis=1)
        out, state = session.run(None, {"input": x, "state": state, "sr": rate})
        context = x[:, -_CONTEXT:]
        probs[i] = out[0, 0]
    return probs


def loudness_scores(audio: np.ndarray) -> np.ndarray:
    """A stand-in for speech probabilities when no detector is installed: each frame's
    loudness, 0 to 1 against the recording's loud frames.

    Cruder than the detector (a noisy room is all "speech"), but it still puts the cuts in
    the quietest moments rather than every 30 s wherever that falls.
    """
    frames = -(-audio.size // FRAME)
    padded = np.zeros(frames * FRAME, dtype=np.float32)
    padded[: audio.size] = audio
    rms = np.sqrt(np.mean(padded.reshape(frames, FRAME) ** 2, axis=1))
    loud = float(np.percentile(rms, 95)) if frames else 0.0
    if loud <= 0:
        return np.zeros(frames, dtype=np.float32)
    # A frame at a tenth of the loud frames' level (-20 dB) or more scores 1.
    return np.clip(rms / (0.1 * loud), 0.0, 1.0).astype(np.float32)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, end)`` frame ranges where ``mask`` is true."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(s), int(e)) for s, e in zip(edges[::2], edges[1::2], strict=True)]


def plan_chunks(
    probs: np.ndarray,
    samples: int,
    max_chunk_s: float = MAX_CHUNK_S,
    threshold: float = SPEECH_THRESHOLD,
) -> list[Chunk]:
    """Pieces of at most ``max_chunk_s`` that cover every stretch of speech, cut at pauses.

    Stretches of speech (frames at or above ``threshold``, padded by 0.2 s) are gathered in
    order into one piece while it stays within ``max_chunk_s``; the silence between two
    pieces is left out. A single stretch longer than that (speech with no pause the detector
    hears) is cut at its least speech-like frame in the second half of the window, so even
    then no cut falls in the middle of a loud word if a softer moment is near.
    """
    max_frames = int(max_chunk_s * RATE) // FRAME
    pad = int(_PAD_S * RATE) // FRAME
    total = probs.size
    stretches: list[tuple[int, int]] = []
    for start, end in _runs(probs >= threshold):
        start, end = max(0, start - pad), min(total, end + pad)
        if stretches and start <= stretches[-1][1]:
            stretches[-1] = (stretches[-1][0], end)  # padding joined two stretches
        else:
            stretches.append((start, end))
    pieces: list[tuple[int, int]] = []
    for start, end in stretches:
        while end - start > max_frames:  # one stretch too long for a window: cut it
            window = probs[start + max_frames // 2 : start + max_frames]
            cut = start + max_frames // 2 + int(np.argmin(window))
            pieces.append((start, cut))
            start = cut
        if pieces and end - pieces[-1][0] <= max_frames:  # (never true after a cut)
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
    return [Chunk(s * FRAME, min(samples, e * FRAME)) for s, e in pieces if e > s]
