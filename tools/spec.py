"""What a tool is: a task's typed inputs and output, how to load its model, how to call it.

Family modules (``text``, ``audio``, ``vision``, ``embedding``) build :class:`TaskTool` values;
``registry`` collects them. Keeping the type here avoids import cycles between the two.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from graph_agent.common.first_imports import TRANSFORMERS_PIPELINES
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.pipeline_cache import PIPELINES, load_pipeline
from graph_agent.tools.results import Modality, ToolResult

log = logging.getLogger(__name__)


@dataclass
class ToolCall:
    """Arguments resolved for one run: text values, or paths for images and audio.

    ``args`` holds one entry per role the tool declares (``"audio"``, ``"image"``,
    ``"text"``, ``"question"`` ...) plus any optional settings (``"labels"``,
    ``"target_language"``, ``"instruction"``).
    """

    args: dict[str, Any]
    artifacts: ArtifactStore
    subtask_id: str = "node-0"
    #: The run's models folder: where a back end finds the pack's helper files (the speech
    #: detector that cuts long recordings), whichever folder its own model came from.
    models_dir: str | None = None
    #: Called as ``progress(done, total, **detail)`` while a long call works through its
    #: pieces (a long recording's chunks); the executor turns it into a progress event.
    progress: Callable[..., None] | None = None

    def report(self, done: int, total: int, **detail: Any) -> None:
        """Say how far the call is (``done`` of ``total`` pieces); never raises, since a
        progress report must not be why a model call fails."""
        if self.progress is None:
            return
        try:
            self.progress(done, total, **detail)
        except Exception:  # a listener's failure is not the call's
            log.debug("progress report failed", exc_info=True)


@dataclass(frozen=True)
class TaskTool:
    """One task the agent can run, and everything the planner and executor need to know.

    ``inputs`` are the required roles and their modalities, in TaskBench argument order, so a
    plan can be type-checked before anything runs. ``loader`` is the `transformers` pipeline
    task (or another loader kind) used to load a model for this tool; ``call`` runs it.
    ``imports`` are the modules the loader imports lazily, or a function of the model folder
    that names them (see `lazy_imports`).
    """

    task: str
    inputs: tuple[tuple[str, Modality], ...]
    output: Modality
    loader: str
    call: Callable[[Any, ToolCall], ToolResult]
    description: str
    options: tuple[str, ...] = ()
    #: The model library this back end loads (a card's ``library``: "transformers", "piper",
    #: "spacy" ...); None: the task's default back end, for cards that name no other.
    library: str | None = None
    load_kwargs: dict[str, Any] = field(default_factory=dict)
    make_loader: Callable[[str], Any] | None = None
    imports: tuple[str, ...] | Callable[[str], Iterable[str]] | None = None

    @property
    def input_modalities(self) -> tuple[Modality, ...]:
        return tuple(m for _, m in self.inputs)

    def lazy_imports(self, model_dir: str) -> tuple[str, ...]:
        """Modules imported once, one at a time, before this tool loads ``model_dir``
        (`warm_imports`): first imports are not thread-safe, so they are not left to loaders
        running in parallel.

        ``imports`` when the tool declares them (a tuple, or a function of the model folder
        for a loader that decides by folder); else transformers for a pipeline, and nothing
        for a ``make_loader`` that declares nothing (a test's fake pays for no import).
        """
        if callable(self.imports):
            return tuple(self.imports(model_dir))
        if self.imports is not None:
            return tuple(self.imports)
        return (TRANSFORMERS_PIPELINES,) if self.make_loader is None else ()

    def _loader(self) -> Callable[[str], Any]:
        if self.make_loader is not None:
            return self.make_loader
        return lambda path: load_pipeline(self.loader, path, **self.load_kwargs)

    def load(self, model_dir: str) -> Any:
        """The loaded model for ``model_dir``, from the warm cache when possible.

        Unguarded: `run` is what runs a call on it.
        """
        imports = self.lazy_imports(model_dir)
        return PIPELINES.get(self.loader, model_dir, self._loader(), imports)

    def run(self, model_dir: str, call: ToolCall) -> ToolResult:
        """Load (or reuse) the model and run this tool on ``call``, one call per model at once.

        The model and its lock come from the cache together (`PipelineCache.get_exclusive`),
        so an eviction between the two cannot let a second call onto the same pipeline.
        """
        imports = self.lazy_imports(model_dir)
        with PIPELINES.get_exclusive(self.loader, model_dir, self._loader(), imports) as model:
            return self.call(model, call)
