"""The canonical result every tool returns.

Results travel through graph state and the checkpointer, so they hold text, numbers and
artifact paths only, never image or audio bytes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Modality = Literal["text", "image", "audio"]
MODALITIES: tuple[Modality, ...] = ("text", "image", "audio")

#: The kind of text an OCR back end read off a picture. Its task, image-to-text, is named for
#: captions, but such text is what the picture says, not a description of it.
TEXT_IN_IMAGE = "text_in_image"

#: How the answer and the report introduce a result of these kinds, in place of its task's
#: label: a back end can make something more exact than its task's usual output.
KIND_TITLES: dict[str, str] = {TEXT_IN_IMAGE: "Text in the image"}


@dataclass(frozen=True)
class ToolResult:
    """One subtask's output in a form both the critic and later subtasks can use.

    ``modality`` says what a later subtask receives when it refers to this result with
    ``<node-j>``: the ``text`` for text, the artifact ``path`` for images and audio.
    ``data`` keeps the structured output (labels with scores, boxes, tokens) for the report.
    """

    kind: str
    modality: Modality
    text: str = ""
    path: str | None = None
    confidence: float | None = None
    data: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A NUL character is never meaningful text (a model emits one when it garbles its
        # output): keep it out of later steps' inputs, the answer and the report. The state's
        # text keys drop NULs too (`graph_agent.state.text`), for the Postgres checkpointer.
        if "\x00" in self.text:
            object.__setattr__(self, "text", self.text.replace("\x00", ""))
            object.__setattr__(self, "extra", {**self.extra, "removed_nul_characters": True})

    @property
    def value(self) -> str:
        """What a dependent subtask consumes: a path for media, otherwise the text."""
        return self.path if self.modality in ("image", "audio") and self.path else self.text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ToolResult:
        return cls(**raw)
