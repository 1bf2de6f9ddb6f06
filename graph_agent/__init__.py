"""graph-agent: plan a request into subtasks, pick a Hugging Face model for each, run them,
check every result, and report how.

``from graph_agent import build_graph`` gives the uncompiled builder, or a compiled graph
when you pass a checkpointer.
"""

import os

# ONNX Runtime (1.32) writes a telemetry queue to ~/.cache/Microsoft/DeveloperTools/ as soon
# as it is imported, a write outside every folder graph-agent names. Its own switch turns
# that off; it must be set before onnxruntime is first imported, and every import of ours
# (graph_agent.tools, graph_agent.retrieval_index) passes through this package first.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from graph_agent.context import Context


def build_graph(checkpointer=None, **compile_kwargs):
    """See :func:`graph_agent.graph.build_graph` (imported lazily to keep imports light)."""
    from graph_agent.graph import build_graph as _build

    return _build(checkpointer, **compile_kwargs)


def as_tool(graph=None, **kwargs):
    """See :func:`graph_agent.langchain_tool.as_tool`: graph-agent as a LangChain tool."""
    from graph_agent.langchain_tool import as_tool as _as_tool

    return _as_tool(graph, **kwargs)


__all__ = ["Context", "as_tool", "build_graph"]
