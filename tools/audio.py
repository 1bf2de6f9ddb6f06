"""Audio tasks: speech recognition (Whisper) and speech synthesis (text-to-audio)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from graph_agent.common.first_imports import TRANSFORMERS_PIPELINES
from graph_agent.tools import vad
from graph_agent.tools.cancel import check_cancelled
from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_audio
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

log = logging.getLogger(__name__)

_WHISPER_RATE = 16_000


def _transcribe(pipe: Any, call: ToolCall) -> ToolResult:
    rate = getattr(getattr(pipe, "feature_extractor", None), "sampling_rate", _WHISPER_RATE)
    audio = load_audio(call.args["audio"], sampling_rate=rate)
    if audio.size == 0:
        raise ToolError(f"{call.args['audio']} holds no audio samples.")
    seconds = round(audio.size / rate, 2)
    if audio.size <= _WINDOW_S * rate:  # one Whisper window: one call
        text = str(pipe({"raw": audio, "sampling_rate": rate})["text"]).strip()
        return ToolResult(kind="transcript", modality="text", text=text, extra={"seconds": seconds})
    return _transcribe_long(pipe, call, audio, rate)


#: Whisper's window: a recording longer than this is cut into pieces (`_transcribe_long`).
_WINDOW_S = 30


def _beside_model(pipe: Any) -> Path | None:
    """The folder holding the pipeline's model folder: the pack's models folder when the
    model came from the pack (where the speech detector is installed beside it)."""
    name = getattr(getattr(pipe, "model", None), "name_or_path", None)
    return Path(name).parent if name and Path(name).is_dir() else None


def _transcribe_long(pipe: Any, call: ToolCall, audio: np.ndarray, rate: int) -> ToolResult:
    """A recording longer than Whisper's window, cut at its pauses (`graph_agent.tools.vad`)
    and transcribed piece by piece in order.

    Each piece is one Whisper call of at most 28 s, so no call runs long; between pieces the
    call reports progress and checks for cancellation, so a step past its timeout stops at
    the next piece (or, inside one, at the next decoder step). Without the pack's speech
    detector the cuts go at the quietest moments instead, and the result says so.
    """
    if rate != vad.RATE:
        raise ToolError(f"The speech detector needs 16 kHz audio; this model wants {rate} Hz.")
    detector = vad.find_detector(call.models_dir, _beside_model(pipe))
    if detector is not None:
        scores, cut_by = vad.speech_probabilities(audio, detector), "silero-vad"
    else:
        log.warning(
            "No speech detector (%s/%s) in the models folder; cutting %s at its quiet moments. "
            "Install it with `graph-agent models install`.",
            vad.VAD_DIR,
            vad.VAD_FILE,
            call.args["audio"],
        )
        scores, cut_by = vad.loudness_scores(audio), "loudness (no speech detector installed)"
    chunks = vad.plan_chunks(scores, audio.size)
    seconds = round(audio.size / rate, 2)
    if not chunks:
        raise ToolError(
            f"No speech was found in {Path(str(call.args['audio'])).name} ({seconds:g} s). "
            "Check that it is the right recording and that it is not silent."
        )
    call.report(0, len(chunks), what="speech pieces found", seconds=seconds)
    texts = []
    for i, chunk in enumerate(chunks, start=1):
        check_cancelled()
        piece = audio[chunk.start : chunk.end]
        texts.append(str(pipe({"raw": piece, "sampling_rate": rate})["text"]).strip())
        call.report(i, len(chunks), what="pieces transcribed", up_to_s=chunk.seconds()[1])
    return ToolResult(
        kind="transcript",
        modality="text",
        text=" ".join(t for t in texts if t),
        extra={
            "seconds": seconds,
            "cut_by": cut_by,
            "pieces": [list(chunk.seconds()) for chunk in chunks],
        },
    )


def _mono(audio: Any) -> np.ndarray:
    """The pipeline's waveform as mono float32.

    Pipelines return ``(samples,)`` or ``(channels, samples)``; flattening a stereo array
    would interleave the channels into one track twice as long, so channels are averaged.
    """
    wave = np.asarray(audio, dtype=np.float32)
    if wave.ndim > 1:
        wave = wave.reshape(-1, wave.shape[-1]).mean(axis=0)
    return wave.reshape(-1)


class PiperSpeech:
    """A Piper ONNX voice behind the same call shape as the ``text-to-audio`` pipeline.

    Piper is the one real offline voice here; wrapping it this way lets one speech call serve
    a Piper voice and a transformers TTS model alike. It is the back end of the cards whose
    ``library`` is "piper" (the pack's voice card says so): the card decides, not the files.
    """

    def __init__(self, model_dir: str) -> None:
        from piper import PiperVoice

        onnx = sorted(Path(model_dir).glob("*.onnx"))
        if not onnx:
            raise ModelUnavailableError(f"No Piper .onnx voice in {model_dir}.")
        self.voice = PiperVoice.load(onnx[0])

    def __call__(self, text: str) -> dict[str, Any]:
        chunks = []
        for chunk in self.voice.synthesize(text):  # one sentence at a time
            chunks.append(chunk)
            check_cancelled()  # a timed-out step stops between sentences
        if not chunks:
            return {"audio": np.zeros(0, dtype=np.float32), "sampling_rate": 22_050}
        audio = np.concatenate([c.audio_float_array.reshape(-1) for c in chunks])
        return {"audio": audio, "sampling_rate": chunks[0].sample_rate}


def _speak(pipe: Any, call: ToolCall) -> ToolResult:
    text = str(call.args["text"]).strip()
    if not text:
        raise ToolError("Text-to-speech needs some text to read.")
    out = pipe(text)
    audio = _mono(out["audio"])
    rate = out.get("sampling_rate")
    if audio.size == 0:
        raise ToolError("The speech model produced no audio.")
    if not np.isfinite(audio).all():
        raise ToolError("The speech model produced invalid (NaN or infinite) audio.")
    if not rate:
        raise ToolError(
            "The speech model does not say its sampling rate, so its audio is unusable."
        )
    rate = int(rate)
    path = call.artifacts.save_wav(audio, rate, f"{call.subtask_id}-speech")
    return ToolResult(
        kind="speech",
        modality="audio",
        path=path,
        text=f"speech audio ({audio.size / rate:.1f} s)",
        extra={"sampling_rate": rate, "seconds": round(audio.size / rate, 2)},
    )


TOOLS: list[TaskTool] = [
    TaskTool(
        task="automatic-speech-recognition",
        inputs=(("audio", "audio"),),
        output="text",
        loader="automatic-speech-recognition",
        call=_transcribe,
        description="Transcribe speech in an audio file to text.",
        # onnxruntime runs the speech detector that cuts a long recording at its pauses.
        imports=(TRANSFORMERS_PIPELINES, "onnxruntime"),
    ),
    TaskTool(
        task="text-to-speech",
        inputs=(("text", "text"),),
        output="audio",
        loader="text-to-audio",
        call=_speak,
        description="Read a text aloud into an audio file.",
    ),
    TaskTool(
        task="text-to-speech",
        inputs=(("text", "text"),),
        output="audio",
        loader="piper",
        call=_speak,
        make_loader=PiperSpeech,
        # A voice costs no transformers or torch import.
        imports=("onnxruntime", "piper"),
        library="piper",
        description="Read a text aloud into an audio file with a Piper voice (ONNX).",
    ),
]
