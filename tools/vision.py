"""Vision tasks over `transformers` pipelines: labels, boxes, depth, captions, answers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph_agent.common.first_imports import TRANSFORMERS_PIPELINES
from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.media import load_image
from graph_agent.tools.pipeline_cache import loading_device
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

#: The pipeline's own default: below this a detection is too unsure to report.
_DEFAULT_THRESHOLD = 0.5
#: Greedy and short: a caption is one sentence, and the same image should get the same one.
_CAPTION_GENERATION = {"max_new_tokens": 48, "do_sample": False}


def labels_result(kind: str, preds: list[dict[str, Any]]) -> ToolResult:
    """``[{label, score}]`` as a labels result, best first; the remote back end's too, so a
    step reports the same shape wherever it ran."""
    if not preds:
        raise ToolError("The model returned no labels.")
    data = [{"label": str(p["label"]), "score": round(float(p["score"]), 4)} for p in preds]
    data.sort(key=lambda d: -d["score"])
    return ToolResult(
        kind=kind, modality="text", text=data[0]["label"], confidence=data[0]["score"], data=data
    )


def _classify(pipe: Any, call: ToolCall) -> ToolResult:
    return labels_result("labels", pipe(load_image(call.args["image"]), top_k=5))


def detection_threshold(call: ToolCall) -> float:
    """The score cut-off for detections; plans pass it as text, so parse and range-check it."""
    raw = call.args.get("threshold", _DEFAULT_THRESHOLD)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ToolError(f"threshold must be a number between 0 and 1, not {raw!r}.") from None
    if not 0.0 <= value <= 1.0:
        raise ToolError(f"threshold must be between 0 and 1, not {value}.")
    return value


def _span(low: Any, high: Any, limit: int) -> tuple[int, int]:
    """A box edge pair as ints inside ``[0, limit]``, low first (models may overshoot)."""
    a, b = (min(max(int(v), 0), limit) for v in (low, high))
    return min(a, b), max(a, b)


def detection(d: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """One detection as plain numbers, its box clipped to the image so it can be drawn."""
    box = d["box"]
    xmin, xmax = _span(box["xmin"], box["xmax"], width)
    ymin, ymax = _span(box["ymin"], box["ymax"], height)
    return {
        "label": str(d["label"]),
        "score": round(float(d["score"]), 4),
        "box": {"xmin": xmin, "ymin": ymin, "xmax": xmax, "ymax": ymax},
    }


def _draw_boxes(image: Any, data: list[dict[str, Any]]) -> Any:
    """A copy of ``image`` with every detection boxed and labelled in red."""
    from PIL import ImageDraw

    boxed = image.copy()
    draw = ImageDraw.Draw(boxed)
    for d in data:
        b = d["box"]
        draw.rectangle((b["xmin"], b["ymin"], b["xmax"], b["ymax"]), outline="red", width=2)
        draw.text((b["xmin"] + 2, b["ymin"] + 2), d["label"], fill="red")
    return boxed


def detections_result(
    call: ToolCall, image: Any, data: list[dict[str, Any]], text: str, **extra: Any
) -> ToolResult:
    """Detections (``detection``'s shape, best first) as a result, boxed on a copy of the
    picture saved as an artifact: one builder for every detection back end, so the report
    and the critic read them alike."""
    boxed = call.artifacts.save_image(_draw_boxes(image, data), f"{call.subtask_id}-boxes")
    return ToolResult(
        kind="detections",
        modality="text",
        text=text,
        data=data,
        confidence=min((d["score"] for d in data), default=None),
        extra={"annotated_image": boxed, **extra},
    )


def _detect(pipe: Any, call: ToolCall) -> ToolResult:
    image = load_image(call.args["image"])
    found = pipe(image, threshold=detection_threshold(call))
    data = [detection(d, image.width, image.height) for d in found]
    data.sort(key=lambda d: -d["score"])
    counts: dict[str, int] = {}
    for d in data:
        counts[d["label"]] = counts.get(d["label"], 0) + 1
    text = ", ".join(f"{n} {label}" for label, n in counts.items()) or "no objects found"
    return detections_result(call, image, data, text)


def _depth(pipe: Any, call: ToolCall) -> ToolResult:
    image = load_image(call.args["image"])
    out = pipe(image)
    predicted = out["predicted_depth"].float()
    if not bool(predicted.isfinite().all()) or float(predicted.max() - predicted.min()) == 0.0:
        raise ToolError("The depth model returned a flat or invalid depth map for this image.")
    path = call.artifacts.save_image(out["depth"], f"{call.subtask_id}-depth")
    return ToolResult(
        kind="depth_map",
        modality="image",
        path=path,
        text="depth map (brighter is nearer for relative-depth models)",
        data={
            "width": out["depth"].width,
            "height": out["depth"].height,
            "min": float(f"{float(predicted.min()):.6g}"),  # model units: metres or relative
            "max": float(f"{float(predicted.max()):.6g}"),
        },
    )


def _caption(pipe: Any, call: ToolCall) -> ToolResult:
    """Caption through a chat VLM: the image and an instruction go in one user turn."""
    prompt = call.args.get("prompt") or "Describe this image in one sentence."
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "image", "image": load_image(call.args["image"])},
                {"type": "text", "text": prompt},
            ],
        }
    ]
    # Generation settings must go in ``generate_kwargs``: the pipeline hands other keywords
    # to the processor, which ignores them with only a warning.
    out = pipe(text=messages, generate_kwargs=dict(_CAPTION_GENERATION), return_full_text=False)
    text = out[0]["generated_text"]
    if isinstance(text, list):  # a whole conversation: the reply is the last turn
        text = text[-1]["content"]
    text = str(text).strip()
    if not text:
        raise ToolError("The captioning model produced no text for this image.")
    return ToolResult(kind="caption", modality="text", text=text)


@dataclass(frozen=True)
class VqaModel:
    """A visual-question-answering model and its processor.

    transformers 5 removed the ``visual-question-answering`` pipeline, but VQA models
    (ViLT's answer classifier, BLIP's answer generator) still load through
    ``AutoModelForVisualQuestionAnswering``, so this pair stands in for the pipeline.
    """

    processor: Any
    model: Any


def load_vqa_model(path: str) -> VqaModel:
    """Load a VQA model and its processor from a local directory, no remote code.

    It goes on the device the pipeline cache chose (CUDA when present, else the CPU).
    """
    from transformers import AutoModelForVisualQuestionAnswering, AutoProcessor

    if not Path(path).is_dir():
        raise ModelUnavailableError(
            f"VQA model {path!r} is not on this machine and graph-agent never downloads at run "
            "time. Install it with `graph-agent models install`, or pick another model."
        )
    processor = AutoProcessor.from_pretrained(path, local_files_only=True)
    model = AutoModelForVisualQuestionAnswering.from_pretrained(path, local_files_only=True)
    return VqaModel(processor=processor, model=model.to(loading_device()).eval())


def _vqa_answers(vqa: VqaModel, image: Any, question: str, top_k: int) -> list[dict[str, Any]]:
    """Ranked answers: a classifier's top labels, or one generated answer without a score.

    ViLT-style heads are trained with a per-answer sigmoid (several answers can be right),
    so scores are sigmoids, as the old transformers pipeline reported them.
    """
    import torch

    inputs = vqa.processor(images=image, text=question, return_tensors="pt", truncation=True)
    inputs = inputs.to(vqa.model.device)
    with torch.inference_mode():
        if vqa.model.can_generate():
            ids = vqa.model.generate(**inputs, max_new_tokens=16, do_sample=False)
            answer = vqa.processor.batch_decode(ids, skip_special_tokens=True)[0].strip()
            return [{"label": answer, "score": None}] if answer else []
        probs = vqa.model(**inputs).logits[0].float().sigmoid()
    scores, ids = probs.topk(min(top_k, probs.shape[-1]))
    id2label = vqa.model.config.id2label
    return [
        {"label": id2label[i], "score": s}
        for s, i in zip(scores.tolist(), ids.tolist(), strict=True)
    ]


def _vqa(vqa: VqaModel, call: ToolCall) -> ToolResult:
    question = str(call.args["question"]).strip()
    if not question:
        raise ToolError("Visual question answering needs a non-empty question.")
    answers = _vqa_answers(vqa, load_image(call.args["image"]), question, top_k=3)
    if not answers:
        raise ToolError("The VQA model returned no answer.")
    if answers[0]["score"] is None:  # a generated answer carries no probability
        return ToolResult(kind="answer", modality="text", text=answers[0]["label"], data=answers)
    return labels_result("answer", answers)


TOOLS: list[TaskTool] = [
    TaskTool(
        task="image-classification",
        inputs=(("image", "image"),),
        output="text",
        loader="image-classification",
        call=_classify,
        description="Say what an image shows, with ImageNet-style labels and scores.",
    ),
    TaskTool(
        task="object-detection",
        inputs=(("image", "image"),),
        output="text",
        loader="object-detection",
        call=_detect,
        options=("threshold",),
        description="Find and box the objects in an image.",
    ),
    TaskTool(
        task="depth-estimation",
        inputs=(("image", "image"),),
        output="image",
        loader="depth-estimation",
        call=_depth,
        description="Estimate a depth map for an image.",
    ),
    TaskTool(
        task="image-to-text",
        inputs=(("image", "image"),),
        output="text",
        loader="image-text-to-text",
        call=_caption,
        options=("prompt",),
        description="Describe an image in words.",
    ),
    TaskTool(
        task="visual-question-answering",
        inputs=(("image", "image"), ("question", "text")),
        output="text",
        loader="visual-question-answering",
        call=_vqa,
        make_loader=load_vqa_model,
        # The pipelines module imports the auto classes this loader resolves lazily.
        imports=(TRANSFORMERS_PIPELINES,),
        description="Answer a question about an image.",
    ),
]
