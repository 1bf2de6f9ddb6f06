"""graph-agent as a tool for LangChain agents.

``Runnable.as_tool`` derives arguments from the graph's input schema but marks every
TypedDict key required, so a tool call without ``constraints`` would be refused. The
explicit schema here keeps ``inputs`` and ``constraints`` optional, and the tool answers with
the answer and outputs only: the full report is for people and evaluations, not for an
agent's context window.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field


class AgentRequest(BaseModel):
    """The public input contract, as a tool's arguments."""

    request: str = Field(description="What to do, in plain language, naming the inputs.")
    inputs: dict[str, str] = Field(
        default_factory=dict, description="Input name (as the request says it) -> file path."
    )
    constraints: dict[str, Any] = Field(
        default_factory=dict,
        description='Model constraints, e.g. {"licenses": ["apache-2.0"]}.',
    )


def as_tool(
    graph: Any = None,
    name: str = "graph_agent",
    description: str = (
        "Plans a request over files (audio, images, text) into Hugging Face model steps, "
        "runs them offline and returns the answer and each step's output."
    ),
) -> BaseTool:
    """A LangChain tool that runs graph-agent (``graph`` defaults to a fresh compiled one)."""
    if graph is None:
        from graph_agent.graph import build_graph

        graph = build_graph().compile()
    brief = RunnableLambda(lambda out: {"answer": out["answer"], "outputs": out["outputs"]})
    return (graph | brief).as_tool(args_schema=AgentRequest, name=name, description=description)
