"""What a tool is: a task's typed inputs and output, how to load its model, how to call it.

Family modules (``text``, ``audio``, ``vision``, ``embedding``) build :class:`TaskTool` values;
``registry`` collects them. Keeping the type here avoids import cycles between the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.pipeline_cache import (
    PIPELINES,
    SENTENCE_TRANSFORMERS,
    TRANSFORMERS_PIPELINES,
    load_pipeline,
)
from graph_agent.tools.results import Modality, ToolResult

#: What a Piper voice's loader imports: ``piper``, which imports ``onnxruntime``.
PIPER_IMPORTS = ("onnxruntime", "piper")


def speech_imports(model_dir: str) -> tuple[str, ...]:
    """The modules the speech tool's loader (`graph_agent.tools.audio.load_speech_model`)
    imports for ``model_dir``: Piper for a folder holding an ONNX voice, as that loader decides,
    else transformers for its text-to-audio pipeline. A Piper voice so costs no transformers or
    torch import."""
    if any(Path(model_dir).glob("*.onnx")):
        return PIPER_IMPORTS
    return (TRANSFORMERS_PIPELINES,)


#: The modules each loader this package ships imports lazily, by model folder. Pipelines (no
#: ``make_loader``) import transformers; a loader from elsewhere (a test's fake) imports nothing
#: unless its tool says so, so it pays for no import it does not use.
PACKAGE_LOADER_IMPORTS: dict[str, Callable[[str], tuple[str, ...]]] = {
    "graph_agent.tools.audio.load_speech_model": speech_imports,
    "graph_agent.tools.embedding.load_sentence_model": lambda _dir: (SENTENCE_TRANSFORMERS,),
    # Importing the pipelines module imports the auto classes the VQA loader resolves lazily.
    "graph_agent.tools.vision.load_vqa_model": lambda _dir: (TRANSFORMERS_PIPELINES,),
}


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
    load_kwargs: dict[str, Any] = field(default_factory=dict)
    make_loader: Callable[[str], Any] | None = None
    imports: tuple[str, ...] | Callable[[str], Iterable[str]] | None = None

    @property
    def input_modalities(self) -> tuple[Modality, ...]:
        return tuple(m for _, m in self.inputs)

    def lazy_imports(self, model_dir: str) -> tuple[str, ...]:
        """Modules imported once, one at a time, before this tool loads ``model_dir``
        (`warm_imports`): only those its loader imports for that folder.

        First imports are not thread-safe, so they are not left to loaders running in parallel.
        ``imports`` when given. Otherwise transformers for a pipeline, what
        `PACKAGE_LOADER_IMPORTS` says for a loader this package ships (transformers for any
        other), and nothing for a loader from elsewhere (a test's fake).
        """
        if callable(self.imports):
            return tuple(self.imports(model_dir))
        if self.imports is not None:
            return tuple(self.imports)
        if self.make_loader is None:
            return (TRANSFORMERS_PIPELINES,)
        module = getattr(self.make_loader, "__module__", None) or ""
        if not module.startswith("graph_agent."):
            return ()
        name = f"{module}.{getattr(self.make_loader, '__qualname__', '')}"
        declared = PACKAGE_LOADER_IMPORTS.get(name)
        return declared(model_dir) if declared else (TRANSFORMERS_PIPELINES,)

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
