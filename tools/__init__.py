"""Tool wrappers: one module per task family over `transformers` pipelines.

Imported as ``graph_agent.tools``. Tools run models and know nothing of the graph: they take
resolved arguments (text, or paths to images and audio) and return a :class:`ToolResult`.
"""

from graph_agent.tools.registry import REGISTRY, TaskTool, ToolCall, get_tool, known_tasks
from graph_agent.tools.results import ToolResult

__all__ = ["REGISTRY", "TaskTool", "ToolCall", "ToolResult", "get_tool", "known_tasks"]
