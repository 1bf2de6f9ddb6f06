"""The task registry: one ``TaskSpec`` per task, everything graph-agent knows about it.

A spec says what a plan may name and how each part of the agent treats it: the typed input
roles in TaskBench's argument order and the output (the planner and validator type-check
plans with them), the names other sources use (TaskBench's tool name, aliases), the words
people say for it (the planner), how an answer introduces its output ("Transcript") and
what a follow-up request calls it ("the transcript"). Canonical names are Hugging Face
pipeline tags ("image-to-text").

Whether a task can *run here* is a question for its back ends (``registry.REGISTRY``, one
tool per task) and the model catalog: a plan may name a task this machine has no model for,
and the selector then says so. Users add a task from their own code with ``register_task``
and its back end with ``registry.register_tool``, as with transformers'
``PIPELINE_REGISTRY``; the planner, validator, selector, executor, critic and report then
treat it like any other.

This module sits in ``graph_agent.tools`` and imports nothing of the graph, so every layer
(planning, nodes, report, the card index) can read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("text", "image", "audio", "video")


@dataclass(frozen=True)
class TaskSpec:
    """One task: its roles (name, kind) in argument order, its output, how people say it,
    how answers and follow-ups name its result."""

    name: str
    roles: tuple[tuple[str, str], ...]
    output: str
    taskbench: str | None = None
    synonyms: tuple[str, ...] = ()
    #: False when the output is a verdict no other task consumes (a similarity score):
    #: TaskBench's tool graph has no links out of such tasks.
    links_onward: bool = True
    #: How the template answer introduces the output ("Transcript"); None: the task's name.
    label: str | None = None
    #: What a follow-up request on the same thread calls the output ("summary").
    result: str | None = None
    #: Other spellings of the task (lower case), e.g. those TaskBench's gold uses.
    aliases: tuple[str, ...] = ()

    @property
    def input_types(self) -> tuple[str, ...]:
        return tuple(kind for _, kind in self.roles)

    @property
    def title(self) -> str:
        """The answer's heading for this task's output."""
        return self.label or self.name.replace("-", " ").capitalize()

    @property
    def result_name(self) -> str:
        """The name a later request on the thread can use for the output."""
        return self.result or "result"


_T = TaskSpec
#: Every task, by its canonical name. ``register_task`` adds to it.
TASKS: dict[str, TaskSpec] = {
    t.name: t
    for t in (
        _T(
            "token-classification",
            (("text", "text"),),
            "text",
            "Token Classification",
            ("named entity recognition", "extract entities", "part of speech tagging", "ner"),
            label="Entities",
            aliases=(
                "named entity recognition",
                "entity recognition",
            ),
        ),
        _T(
            "translation",
            (("text", "text"),),
            "text",
            "Translation",
            ("translate", "convert to another language"),
            label="Translation",
            result="translation",
        ),
        _T(
            "summarization",
            (("text", "text"),),
            "text",
            "Summarization",
            ("summarize", "condense", "tl;dr", "text summarization", "shorten"),
            label="Summary",
            result="summary",
            aliases=("text summarization",),
        ),
        _T(
            "question-answering",
            (("text", "text"), ("question", "text")),
            "text",
            "Question Answering",
            ("answer a question about a text", "extractive qa"),
            label="Answer",
            result="answer",
        ),
        _T(
            "table-question-answering",
            (("table", "text"), ("question", "text")),
            "text",
            # Not one of TaskBench's 23 tools: people paste CSV, JSON and markdown tables
            # and ask about them, and TaskBench has no task for it.
            "Table Question Answering",
            ("answer a question about a table", "table qa", "query a table"),
            label="Answer",
        ),
        _T(
            "conversational",
            (("text", "text"),),
            "text",
            "Conversational",
            ("chat", "reply", "respond in a conversation", "dialogue"),
            result="reply",
        ),
        _T(
            "text-generation",
            (("text", "text"),),
            "text",
            "Text Generation",
            ("write", "generate text", "compose", "continue the text", "paraphrase"),
            result="text",
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
            label="Objects found",
        ),
        _T(
            "image-classification",
            (("image", "image"),),
            "text",
            "Image Classification",
            ("what is in the image", "classify an image", "recognize", "identify"),
            label="Image label",
        ),
        _T(
            "image-to-image",
            (("image", "image"),),
            "image",
            "Image-to-Image",
            ("transform an image", "enhance an image", "style transfer", "image to image"),
            result="image",
            aliases=(
                "image-to-image transformation",
                "image-to-image translation",
            ),
        ),
        _T(
            "image-to-text",
            (("image", "image"),),
            "text",
            "Image-to-Text",
            ("caption", "describe an image", "extract text from an image", "ocr"),
            label="Caption",
            result="caption",
        ),
        _T(
            "text-to-image",
            (("text", "text"),),
            "image",
            "Text-to-Image",
            ("generate an image", "draw", "create a picture", "illustrate"),
            result="image",
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
            label="Answer",
            result="answer",
        ),
        _T(
            "document-question-answering",
            (("image", "image"), ("question", "text")),
            "text",
            "Document Question Answering",
            ("answer a question about a document", "document qa"),
            result="answer",
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
            label="Depth map",
        ),
        _T(
            "text-to-speech",
            (("text", "text"),),
            "audio",
            "Text-to-Speech",
            ("read aloud", "speak", "say", "narrate", "voice over", "tts"),
            label="Speech",
            result="speech",
            aliases=("text-to-audio",),
        ),
        _T(
            "automatic-speech-recognition",
            (("audio", "audio"),),
            "text",
            "Automatic Speech Recognition",
            ("transcribe", "speech to text", "what is said"),
            label="Transcript",
            result="transcript",
        ),
        _T(
            "audio-to-audio",
            (("audio", "audio"),),
            "audio",
            "Audio-to-Audio",
            ("enhance audio", "denoise", "separate speech", "clean up the recording"),
            result="audio",
            aliases=("audio enhancement",),
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
            result="image",
        ),
        # Tasks graph-agent runs that TaskBench's Hugging Face tool list does not have.
        _T(
            "text-classification",
            (("text", "text"),),
            "text",
            None,
            ("sentiment", "classify a text", "positive or negative"),
            label="Label",
            aliases=("text classification",),
        ),
        _T(
            "zero-shot-classification",
            (("text", "text"),),
            "text",
            None,
            ("classify into given labels", "zero-shot"),
            label="Label",
        ),
        _T("feature-extraction", (("text", "text"),), "text", None, ("embed", "embedding")),
        _T("text2text-generation", (("text", "text"),), "text", None, ("rewrite", "paraphrase")),
    )
}


def _alias_entries(spec: TaskSpec) -> dict[str, str]:
    names = [spec.taskbench] if spec.taskbench else []
    return {alias.strip().lower(): spec.name for alias in [*names, *spec.aliases]}


#: Other spellings -> canonical names (TaskBench's tool names and the variants its gold uses).
ALIASES: dict[str, str] = {k: v for spec in TASKS.values() for k, v in _alias_entries(spec).items()}

_NAME = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")


def register_task(spec: TaskSpec, *, replace: bool = False) -> TaskSpec:
    """Add ``spec`` to the registry (or, with ``replace``, change an existing task).

    The planner, validator and report read the registry when they run, so a task
    registered before a request is planned is one like any other. Register at start-up,
    before runs begin: the tables are shared by every run in the process. Give it a back end with
    ``registry.register_tool`` and a model card naming it (see the README) to run it.
    """
    if not _NAME.fullmatch(spec.name):
        raise ValueError(
            f"Task name {spec.name!r} must be lower-case words joined by '-' "
            "(a Hugging Face pipeline tag, e.g. 'word-count')."
        )
    if spec.name in TASKS and not replace:
        raise ValueError(f"Task {spec.name!r} is already registered; pass replace=True.")
    kinds = {*spec.input_types, spec.output}
    if not spec.roles or not kinds <= set(KINDS):
        raise ValueError(
            f"Task {spec.name!r} needs at least one role, and roles and output of the kinds "
            f"{', '.join(KINDS)} (got {sorted(kinds)})."
        )
    entries = _alias_entries(spec)
    taken = {
        k: ALIASES.get(k, k)
        for k in entries
        if ALIASES.get(k, spec.name) != spec.name or (k in TASKS and k != spec.name)
    }
    if taken:
        raise ValueError(f"Task {spec.name!r}: these names already mean other tasks: {taken}.")
    for alias in [k for k, v in ALIASES.items() if v == spec.name and k not in entries]:
        del ALIASES[alias]  # a replaced spec's old spellings go with it
    TASKS[spec.name] = spec
    ALIASES.update(entries)
    return spec
