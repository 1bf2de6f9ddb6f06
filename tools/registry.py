"""The registry: every task graph-agent can run, mapped to its tool.

Planner, validator and executor all ask the registry, so a task's types are declared once
(``tasks.TASKS``) and its back end here. ``register_task`` and ``register_tool`` add a task
or a back end from user code.
"""

from __future__ import annotations

from graph_agent.tools import (
    apertium,
    audio,
    embedding,
    mediapipe_vision,
    ocr,
    spacy_ner,
    tesseract,
    text,
    vision,
    yamnet,
)
from graph_agent.tools.spec import TaskTool, ToolCall
from graph_agent.tools.tasks import TASKS, TaskSpec, register_task

_FAMILIES = (
    audio,
    vision,
    text,
    embedding,
    spacy_ner,
    ocr,
    tesseract,
    mediapipe_vision,
    yamnet,
    apertium,
)
_BUILT_IN = [tool for family in _FAMILIES for tool in family.TOOLS]

#: Each task's default back end: it runs the cards that name no library with a back end.
#: A task whose only back ends name a library (a person mask: MediaPipe's) gets the first
#: of them, as `register_tool` does, so the planner, critic and report know the task.
REGISTRY: dict[str, TaskTool] = {tool.task: tool for tool in _BUILT_IN if not tool.library}
for _tool in _BUILT_IN:
    REGISTRY.setdefault(_tool.task, _tool)


#: Back ends for a task beside its default, by the library a model card names: a card whose
#: ``library`` is "spacy" is run by the task's spaCy back end, another by the default.
BACKENDS: dict[tuple[str, str], TaskTool] = {
    (tool.task, tool.library.lower()): tool for tool in _BUILT_IN if tool.library
}


def register_tool(tool: TaskTool) -> TaskTool:
    """Give ``tool``'s task (registered first with ``tasks.register_task``) a back end.

    A tool with a ``library`` runs the models whose cards name that library, beside the
    task's other back ends (and is the task's default while it has none); a tool without
    one replaces the default back end, which runs every other card of the task."""
    if tool.task not in TASKS:
        raise ValueError(
            f"There is no task {tool.task!r} to give a back end: register its TaskSpec first "
            "(graph_agent.tools.tasks.register_task)."
        )
    if tool.output != TASKS[tool.task].output:
        raise ValueError(
            f"The tool for {tool.task!r} gives {tool.output}, but the task gives "
            f"{TASKS[tool.task].output}."
        )
    if tool.input_modalities != TASKS[tool.task].input_types:
        raise ValueError(
            f"The tool for {tool.task!r} takes {list(tool.input_modalities)}, but the task's "
            f"roles are {list(TASKS[tool.task].input_types)}."
        )
    if tool.library:
        BACKENDS[(tool.task, tool.library.lower())] = tool
        REGISTRY.setdefault(tool.task, tool)
    else:
        REGISTRY[tool.task] = tool
    return tool


def known_tasks() -> list[str]:
    return sorted(REGISTRY)


def get_tool(task: str, library: str | None = None) -> TaskTool:
    """The back end for ``task`` and a card of ``library`` (the task's default when no back
    end names that library), or a KeyError that lists the tasks there are."""
    if library and (tool := BACKENDS.get((task, library.lower()))):
        return tool
    try:
        return REGISTRY[task]
    except KeyError:
        raise KeyError(
            f"No tool for task {task!r}. Known tasks: {', '.join(known_tasks())}."
        ) from None


__all__ = [
    "BACKENDS",
    "REGISTRY",
    "TaskSpec",
    "TaskTool",
    "ToolCall",
    "get_tool",
    "known_tasks",
    "register_task",
    "register_tool",
]
