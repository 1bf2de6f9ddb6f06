"""Faces, people and a person mask with MediaPipe's models: the object-detection and
image-segmentation back ends for cards whose ``library`` is "mediapipe".

No COCO detector or segmenter can be had offline here, but the ``mediapipe`` 0.10.21 wheel
carries its solutions' TFLite models (Apache-2.0). The pack copies three of them (pinned)
into its own folders. They run on LiteRT (``ai-edge-litert``, Google's TFLite runtime),
never through the ``mediapipe`` package: that declares ``numpy<2`` and ``protobuf<5``, and
its numpy-2 build pulls in jax and a second OpenCV. What MediaPipe's graphs do around the
models (letterboxing, SSD anchors, box decoding, weighted non-maximum suppression, the
pose detector's alignment points) is written out here from its calculator options, so
what runs is the pack's verified files and this code.

* BlazeFace short range (``face_detection_short_range.tflite``): faces up to about 2 m
  from the camera, as in a selfie or a portrait; label ``face``.
* BlazePose's person detector (``pose_detection.tflite``): one detection per person, whose
  alignment points give the hips' centre and a circle around the whole body; label
  ``person``, boxed by that circle (clipped to the picture).
* Selfie segmentation (``selfie_segmentation.tflite``): a person-versus-background mask.

Detections have the transformers detector's shape (``label``, ``score``, ``box``), so the
report and the critic read them the same whichever back end found them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_image
from graph_agent.tools.model_pack.manifest import (
    MEDIAPIPE_FACE,
    MEDIAPIPE_PERSON,
    MEDIAPIPE_SELFIE,
)
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall
from graph_agent.tools.vision import detection, detection_threshold, detections_result

#: MediaPipe's own non-maximum suppression overlap for both detectors.
_NMS_IOU = 0.3
#: Every label the detectors give, and how a count of several reads ("0 faces, 2 people").
_PLURALS = {"face": "faces", "person": "people"}
#: The mask's cut-off: the segmenter's output is a per-pixel person probability.
_MASK_THRESHOLD = 0.5


@dataclass(frozen=True)
class _Detector:
    """One SSD-style MediaPipe detector: its input size and anchors (SsdAnchorsCalculator
    with ``fixed_anchor_size``, so an anchor is only a centre)."""

    file: str
    size: int
    #: (stride, anchors per cell) per feature map, in the model's output order.
    layers: tuple[tuple[int, int], ...]
    label: str

    def anchors(self) -> np.ndarray:
        centres = []
        for stride, per_cell in self.layers:
            cells = self.size // stride
            for y in range(cells):
                for x in range(cells):
                    centres += [((x + 0.5) / cells, (y + 0.5) / cells)] * per_cell
        return np.asarray(centres, dtype=np.float32)


# face_detection_short_range.pbtxt: 128 px, strides 8, 16, 16, 16 (2 anchors each).
FACE = _Detector(MEDIAPIPE_FACE, 128, ((8, 2), (16, 6)), "face")
# pose_detection.pbtxt: 224 px, strides 8, 16, 32, 32, 32 (2 anchors each).
PERSON = _Detector(MEDIAPIPE_PERSON, 224, ((8, 2), (16, 2), (32, 6)), "person")


def _interpreter(path: Path) -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        raise ModelUnavailableError(
            "ai-edge-litert is not installed, so the MediaPipe models cannot run. Install it "
            "with `pip install 'ai-edge-litert>=2.3,<3'` (graph-agent's own dependencies "
            "include it)."
        ) from None
    interpreter = Interpreter(model_path=str(path), num_threads=2)
    interpreter.allocate_tensors()
    return interpreter


class _Models:
    """The TFLite interpreters of one model folder. An interpreter holds its tensors, so it
    must serve one call at a time: the pipeline cache runs one call per model at once."""

    def __init__(self, model_dir: str, files: tuple[str, ...]) -> None:
        folder = Path(model_dir)
        missing = [name for name in files if not (folder / name).is_file()]
        if missing:
            raise ModelUnavailableError(
                f"{model_dir} lacks the MediaPipe model file(s) {', '.join(missing)}. "
                "Reinstall it with `graph-agent models install`."
            )
        self.interpreters = {name: _interpreter(folder / name) for name in files}

    def run(self, name: str, tensor: np.ndarray) -> dict[str, np.ndarray]:
        """Outputs by name for one input tensor."""
        interpreter = self.interpreters[name]
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], tensor)
        interpreter.invoke()
        return {
            d["name"]: interpreter.get_tensor(d["index"])[0].copy()
            for d in interpreter.get_output_details()
        }


def load_detectors(model_dir: str) -> _Models:
    """The face and person detectors in ``model_dir``."""
    return _Models(model_dir, (FACE.file, PERSON.file))


def load_segmenter(model_dir: str) -> _Models:
    """The selfie segmenter in ``model_dir``."""
    return _Models(model_dir, (MEDIAPIPE_SELFIE,))


def _letterbox(image: Any, size: int) -> tuple[np.ndarray, int, int, int]:
    """The picture centred on a black square, scaled to ``size`` and to [-1, 1], as
    MediaPipe's ImageToTensorCalculator (``keep_aspect_ratio``) gives it; and the square's
    side and the picture's offsets on it, to map boxes back."""
    from PIL import Image

    side = max(image.width, image.height)
    left, top = (side - image.width) // 2, (side - image.height) // 2
    square = Image.new("RGB", (side, side))
    square.paste(image, (left, top))
    pixels = np.asarray(square.resize((size, size), Image.BILINEAR), dtype=np.float32)
    return (pixels / 127.5 - 1.0)[None], side, left, top


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Overlap of box ``a`` with each row of ``b`` (x0, y0, x1, y1)."""
    x0, y0 = np.maximum(a[0], b[:, 0]), np.maximum(a[1], b[:, 1])
    x1, y1 = np.minimum(a[2], b[:, 2]), np.minimum(a[3], b[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a + area_b - inter, 1e-9)


def _weighted_nms(boxes: np.ndarray, points: np.ndarray, scores: np.ndarray) -> list[tuple]:
    """MediaPipe's weighted non-maximum suppression: each cluster of overlapping
    detections becomes one, its box and points the score-weighted mean, its score the best."""
    order = np.argsort(-scores)
    left = list(order)
    kept = []
    while left:
        best = left[0]
        overlap = _iou(boxes[best], boxes[left]) > _NMS_IOU
        cluster = [i for i, near in zip(left, overlap, strict=True) if near]
        weights = scores[cluster][:, None]
        box = (boxes[cluster] * weights).sum(0) / weights.sum()
        pts = (points[cluster] * weights[:, :, None]).sum(0) / weights.sum()
        kept.append((box, pts, float(scores[best])))
        left = [i for i, near in zip(left, overlap, strict=True) if not near]
    return kept


def detect(models: _Models, spec: _Detector, image: Any, threshold: float) -> list[dict]:
    """``spec``'s detections in ``image`` (pixels), best first."""
    tensor, side, left, top = _letterbox(image, spec.size)
    outputs = sorted(models.run(spec.file, tensor).values(), key=lambda a: -a.shape[-1])
    raw, logits = outputs[0], outputs[1][:, 0]  # (anchors, 4 + 2 * points), (anchors,)
    scores = 1.0 / (1.0 + np.exp(-np.clip(logits.astype(np.float64), -100.0, 100.0)))
    keep = scores >= threshold
    if not keep.any():
        return []
    anchors = spec.anchors()[keep]
    raw, scores = raw[keep] / spec.size, scores[keep]
    centre = raw[:, :2] + anchors
    half = raw[:, 2:4] / 2
    boxes = np.concatenate([centre - half, centre + half], axis=1)
    points = raw[:, 4:].reshape(len(raw), -1, 2) + anchors[:, None, :]
    found = []
    for box, pts, score in _weighted_nms(boxes, points, scores):
        if spec is PERSON:  # the body: a circle around the hips through the second point
            radius = float(np.linalg.norm(pts[1] - pts[0]))
            box = np.array([*(pts[0] - radius), *(pts[0] + radius)])
        x0, y0, x1, y1 = (float(v) * side for v in box)
        pixels = {"xmin": x0 - left, "ymin": y0 - top, "xmax": x1 - left, "ymax": y1 - top}
        found.append(
            detection(
                {"label": spec.label, "score": score, "box": pixels}, image.width, image.height
            )
        )
    return found


def _detect(models: _Models, call: ToolCall) -> ToolResult:
    image = load_image(call.args["image"])
    threshold = detection_threshold(call)
    data = [d for spec in (FACE, PERSON) for d in detect(models, spec, image, threshold)]
    data.sort(key=lambda d: -d["score"])
    counts = {label: sum(d["label"] == label for d in data) for label in _PLURALS}
    text = ", ".join(f"{n} {label if n == 1 else _PLURALS[label]}" for label, n in counts.items())
    return detections_result(call, image, data, text, counts=counts)


def person_mask(models: _Models, image: Any) -> np.ndarray:
    """Per-pixel person probability at the picture's own size (selfie segmentation takes
    the whole picture stretched to 256 x 256, values in [0, 1])."""
    from PIL import Image

    pixels = np.asarray(image.resize((256, 256), Image.BILINEAR), dtype=np.float32) / 255.0
    (prob,) = models.run(MEDIAPIPE_SELFIE, pixels[None]).values()
    small = Image.fromarray(np.clip(prob[:, :, 0], 0.0, 1.0).astype(np.float32), mode="F")
    return np.asarray(small.resize(image.size, Image.BILINEAR), dtype=np.float32)


def _segment(models: _Models, call: ToolCall) -> ToolResult:
    from PIL import Image

    image = load_image(call.args["image"])
    prob = person_mask(models, image)
    mask = prob >= _MASK_THRESHOLD
    share = float(mask.mean())
    if not mask.any():
        raise ToolError(
            "The person segmenter found no person in this picture, so there is no mask. It "
            "separates people from the background only; other objects need another model."
        )
    path = call.artifacts.save_image(
        Image.fromarray(mask.astype(np.uint8) * 255, mode="L"), f"{call.subtask_id}-mask"
    )
    score = round(float(prob[mask].mean()), 4)
    return ToolResult(
        kind="segmentation",
        modality="image",
        path=path,
        text=f"person mask ({share:.0%} of the picture; white is the person)",
        confidence=score,
        data={
            "width": image.width,
            "height": image.height,
            "segments": [{"label": "person", "score": score, "share": round(share, 4)}],
        },
    )


TOOLS: list[TaskTool] = [
    TaskTool(
        task="object-detection",
        inputs=(("image", "image"),),
        output="text",
        loader="mediapipe-detection",
        call=_detect,
        options=("threshold",),
        description="Find and box the faces and people in a picture (MediaPipe).",
        library="mediapipe",
        make_loader=load_detectors,
        imports=("ai_edge_litert.interpreter",),
    ),
    TaskTool(
        task="image-segmentation",
        inputs=(("image", "image"),),
        output="image",
        loader="mediapipe-segmentation",
        call=_segment,
        description="Mask the people in a picture against its background (MediaPipe).",
        library="mediapipe",
        make_loader=load_segmenter,
        imports=("ai_edge_litert.interpreter",),
    ),
]

__all__ = ["FACE", "PERSON", "TOOLS", "detect", "load_detectors", "load_segmenter", "person_mask"]
