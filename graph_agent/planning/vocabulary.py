"""The task vocabulary: every task a plan may name, with typed inputs, output and synonyms.

Canonical names are Hugging Face pipeline tags ("image-to-text"); TaskBench's tool names
("Image-to-Text") and common synonyms map onto them. Input roles are listed in TaskBench's
argument order, so a plan converts to and from TaskBench's positional arguments.
Whether a task can *run here* is a separate question for the tool registry and the
model catalog; a plan may name a task that this machine has no model for, and the selector
then says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph_agent.tools.results import Modality

Kind = Modality  # "text" | "image" | "audio"; video outputs are carried as "video" below


@dataclass(frozen=True)
class TaskType:
    """One task: its roles (name, modality) in argument order, its output, how people say it."""

    name: str
    roles: tuple[tuple[str, str], ...]
    output: str
    taskbench: str | None = None
    synonyms: tuple[str, ...] = ()
    #: False when the output is a verdict no other task consumes (a similarity score):
    #: TaskBench's tool graph has no links out of such tasks.
    links_onward: bool = True

    @property
    def input_types(self) -> tuple[str, ...]:
        return tuple(kind for _, kind in self.roles)


_T = TaskType
TASKS: dict[str, TaskType] = {
    t.name: t
    for t in (
        _T(
            "token-classification",
            (("text", "text"),),
            "text",
            "Token Classification",
            ("named entity recognition", "extract entities", "part of speech tagging", "ner"),
        ),
        _T(
            "translation",
            (("text", "text"),),
            "text",
            "Translation",
            ("translate", "convert to another language"),
        ),
        _T(
            "summarization",
            (("text", "text"),),
            "text",
            "Summarization",
            ("summarize", "condense", "tl;dr", "text summarization", "shorten"),
        ),
        _T(
            "question-answering",
            (("text", "text"), ("question", "text")),
            "text",
            "Question Answering",
            ("answer a question about a text", "extractive qa"),
        ),
        _T(
            "table-question-answering",
            (("table", "text"), ("question", "text")),
            "text",
            # Not one of TaskBench's 23 tools: people paste CSV, JSON and markdown tables
            # and ask about them, and TaskBench has no task for it.
            "Table Question Answering",
            ("answer a question about a table", "table qa", "query a table"),
        ),
        _T(
            "conversational",
            (("text", "text"),),
            "text",
            "Conversational",
            ("chat", "reply", "respond in a conversation", "dialogue"),
        ),
        _T(
            "text-generation",
            (("text", "text"),),
            "text",
            "Text Generation",
            ("write", "generate text", "compose", "continue the text", "paraphrase"),
        ),
        _T(
            "sentence-similarity",
            (("text", "text"), ("other", "text")),
            "text",
            "Sentence Similarity",
            ("compare two sentences", "semantic similarity"),
            links_onward=False,
        ),
        _T(
            "tabular-classification",
            (("image", "image"),),
            "text",
            "Tabular Classification",
            ("classify a table", "table classification"),
        ),
        _T(
            "object-detection",
            (("image", "image"),),
            "text",
            "Object Detection",
            ("detect objects", "find objects", "bounding boxes", "locate"),
        ),
        _T(
            "image-classification",
            (("image", "image"),),
            "text",
            "Image Classification",
            ("what is in the image", "classify an image", "recognize", "identify"),
        ),
        _T(
            "image-to-image",
            (("image", "image"),),
            "image",
            "Image-to-Image",
            ("transform an image", "enhance an image", "style transfer", "image to image"),
        ),
        _T(
            "image-to-text",
            (("image", "image"),),
            "text",
            "Image-to-Text",
            ("caption", "describe an image", "extract text from an image", "ocr"),
        ),
        _T(
            "text-to-image",
            (("text", "text"),),
            "image",
            "Text-to-Image",
            ("generate an image", "draw", "create a picture", "illustrate"),
        ),
        _T(
            "text-to-video",
            (("text", "text"),),
            "video",
            "Text-to-Video",
            ("generate a video", "create a video", "animate"),
        ),
        _T(
            "visual-question-answering",
            (("image", "image"), ("question", "text")),
            "text",
            "Visual Question Answering",
            ("answer a question about an image", "vqa"),
        ),
        _T(
            "document-question-answering",
            (("image", "image"), ("question", "text")),
            "text",
            "Document Question Answering",
            ("answer a question about a document", "document qa"),
        ),
        _T(
            "image-segmentation",
            (("image", "image"),),
            "image",
            "Image Segmentation",
            ("segment", "segmentation mask", "separate objects"),
        ),
        _T(
            "depth-estimation",
            (("image", "image"),),
            "image",
            "Depth Estimation",
            ("depth map", "estimate depth", "how far"),
        ),
        _T(
            "text-to-speech",
            (("text", "text"),),
            "audio",
            "Text-to-Speech",
            ("read aloud", "speak", "say", "narrate", "voice over", "tts"),
        ),
        _T(
            "automatic-speech-recognition",
            (("audio", "audio"),),
            "text",
            "Automatic Speech Recognition",
            ("transcribe", "speech to text", "what is said"),
        ),
        _T(
            "audio-to-audio",
            (("audio", "audio"),),
            "audio",
            "Audio-to-Audio",
            ("enhance audio", "denoise", "separate speech", "clean up the recording"),
        ),
        _T(
            "audio-classification",
            (("audio", "audio"),),
            "text",
            "Audio Classification",
            ("classify a sound", "recognize the emotion in speech", "identify the spoken language"),
        ),
        _T(
            "image-editing",
            (("text", "text"), ("image", "image")),
            "image",
            "Image Editing",
            ("edit an image", "change the color", "modify the picture"),
        ),
        # Tasks graph-agent runs that TaskBench's Hugging Face tool list does not have.
        _T(
            "text-classification",
            (("text", "text"),),
            "text",
            None,
            ("sentiment", "classify a text", "positive or negative"),
        ),
        _T(
            "zero-shot-classification",
            (("text", "text"),),
            "text",
            None,
            ("classify into given labels", "zero-shot"),
        ),
        _T("feature-extraction", (("text", "text"),), "text", None, ("embed", "embedding")),
        _T("text2text-generation", (("text", "text"),), "text", None, ("rewrite", "paraphrase")),
    )
}

#: TaskBench's spellings (and a few variants its generated gold uses) -> canonical names.
ALIASES: dict[str, str] = {
    **{t.taskbench.lower(): t.name for t in TASKS.values() if t.taskbench},
    "text summarization": "summarization",
    "named entity recognition": "token-classification",
    "entity recognition": "token-classification",
    "text classification": "text-classification",
    "audio enhancement": "audio-to-audio",
    "image-to-image transformation": "image-to-image",
    "image-to-image translation": "image-to-image",
    "text-to-audio": "text-to-speech",
}


def canonical(name: str) -> str | None:
    """The canonical task for a pipeline tag, a TaskBench name or an alias; None if unknown."""
    key = name.strip().lower()
    if key in TASKS:
        return key
    if key in ALIASES:
        return ALIASES[key]
    slug = re.sub(r"[\s_]+", "-", key)
    return slug if slug in TASKS else ALIASES.get(slug.replace("-", " "))


def taskbench_name(task: str) -> str:
    """TaskBench's name for a canonical task (the canonical name when TaskBench has none)."""
    t = TASKS.get(task)
    return t.taskbench if t and t.taskbench else task


def can_feed(source: str, target: str) -> bool:
    """Whether ``source``'s output can be an input of ``target`` (the typed tool graph)."""
    s, t = TASKS.get(source), TASKS.get(target)
    return bool(s and t and s.links_onward and s.output in t.input_types)
