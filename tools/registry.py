"""The registry: every task graph-agent can run, mapped to its tool.

Planner, validator and executor all ask the registry, so a task's types are declared once.
"""

from __future__ import annotations

from graph_agent.tools import audio, embedding, text, vision
from graph_agent.tools.spec import TaskTool, ToolCall

REGISTRY: dict[str, TaskTool] = {
    tool.task: tool for family in (audio, vision, text, embedding) for tool in family.TOOLS
}


def known_tasks() -> list[str]:
    return sorted(REGISTRY)


def get_tool(task: str) -> TaskTool:
    """The tool for ``task``, or a KeyError that lists the tasks there are."""
    try:
        return REGISTRY[task]
    except KeyError:
        raise KeyError(
            f"No tool for task {task!r}. Known tasks: {', '.join(known_tasks())}."
        ) from None


__all__ = ["REGISTRY", "TaskTool", "ToolCall", "get_tool", "known_tasks"]
