"""The model card schema every source (model pack, JSONL, Hub, local cache) is turned into."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """One reported result, with its direction so "best" means the right thing (low WER)."""

    dataset: str
    metric: str
    value: float
    higher_is_better: bool = True


@dataclass
class ModelCard:
    """What the selector knows about one model.

    ``task`` is the card's pipeline tag; ``tasks`` lists every task graph-agent can serve
    with it (a chat model serves summarization, translation, question answering ...).
    ``local_path`` is set when the weights are on this machine, which makes it runnable here.
    """

    id: str
    task: str
    description: str = ""
    tasks: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    license: str | None = None
    languages: list[str] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    parameters: int | None = None
    size_bytes: int | None = None
    downloads: int | None = None
    likes: int | None = None
    benchmarks: list[Benchmark] = field(default_factory=list)
    source: str = ""
    local_path: str | None = None

    def __post_init__(self) -> None:
        if not self.tasks:
            self.tasks = [self.task]
        self.benchmarks = [
            b if isinstance(b, Benchmark) else Benchmark(**b) for b in self.benchmarks
        ]

    @property
    def runnable(self) -> bool:
        """True when the weights are on disk, so running it needs no network."""
        return bool(self.local_path) and Path(self.local_path).is_dir()

    def embedding_text(self) -> str:
        """The short text the index embeds: name, tasks, tags and description."""
        parts = [self.id.replace("/", " "), ", ".join(self.tasks), ", ".join(self.tags[:12])]
        return ". ".join(p for p in [*parts, self.description[:600]] if p)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelCard:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in raw.items() if k in known})
