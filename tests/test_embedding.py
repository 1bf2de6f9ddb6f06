"""Embedding graph-agent in other LangChain / LangGraph code: as a subgraph and as a tool."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graph_agent import Context, as_tool, build_graph


class Parent(TypedDict, total=False):
    request: str
    inputs: dict[str, str]
    answer: str
    report: dict[str, Any]
    outputs: dict[str, str]
    note: str


def test_as_a_subgraph_node(tmp_path, models_dir, sample_photo):
    parent = StateGraph(Parent, context_schema=Context)
    parent.add_node("agent", build_graph().compile())
    parent.add_node("after", lambda state: {"note": f"got {len(state['outputs'])} output(s)"})
    parent.add_edge(START, "agent")
    parent.add_edge("agent", "after")
    parent.add_edge("after", END)
    final = parent.compile().invoke(
        {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
        context=Context(models_dir=str(models_dir), artifacts_dir=str(tmp_path)),
    )
    assert final["note"] == "got 1 output(s)" and final["report"]["failures"] == []


class _ToolCallingFake(GenericFakeChatModel):
    """A scripted chat model that accepts tools, as an agent's model must."""

    def bind_tools(self, tools, **kwargs):
        return self


def test_as_a_tool_in_an_agent(tmp_path, models_dir, sample_photo, monkeypatch):
    monkeypatch.setenv("GRAPH_AGENT_MODELS_DIR", str(models_dir))
    monkeypatch.setenv("GRAPH_AGENT_ARTIFACTS_DIR", str(tmp_path))
    tool = as_tool()
    assert set(tool.args) == {"request", "inputs", "constraints"}
    assert tool.args_schema.model_json_schema()["required"] == ["request"]
    from langgraph.prebuilt import create_react_agent

    call = {
        "name": "graph_agent",
        "id": "call-1",
        "args": {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
    }
    model = _ToolCallingFake(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[call]),
                AIMessage(content="The photo shows a person in uniform."),
            ]
        )
    )
    result = create_react_agent(model, [tool]).invoke({"messages": [("user", "what is in it?")]})
    tool_message = result["messages"][2]
    assert tool_message.type == "tool" and "Image label" in tool_message.content
    assert result["messages"][-1].content == "The photo shows a person in uniform."


def test_as_tool_can_be_called_again():
    # Before: the first call imported a submodule named as_tool, which replaced the package's
    # function, so a second call raised "'module' object is not callable".
    import graph_agent

    first, second = graph_agent.as_tool(), graph_agent.as_tool()
    assert first.name == second.name and callable(graph_agent.as_tool)
