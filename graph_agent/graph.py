"""The graph's wiring, and nothing else.

planner -> approval -> selector -> (run_subtask x N in parallel) -> critic -> ... -> responder
                 ^                                                      |
                 +------------- replan (bounded by max_replans) --------+
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from graph_agent.context import Context
from graph_agent.nodes.approval import approve
from graph_agent.nodes.critic import critique
from graph_agent.nodes.executor import dispatch, run_subtask
from graph_agent.nodes.planner import plan, replan
from graph_agent.nodes.responder import respond
from graph_agent.nodes.selector import select_models
from graph_agent.state import InputState, OutputState, State


def _after(node_ok: str):
    """Route to ``node_ok``, or straight to the responder once the run has an error."""

    def route(state: State) -> str:
        return "respond" if state.get("error") else node_ok

    route.__name__ = f"route_to_{node_ok}"
    return route


def build_graph(checkpointer: Any = None, **compile_kwargs: Any):
    """The uncompiled builder, or, given a checkpointer, the compiled graph."""
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("plan", plan)
    builder.add_node("approve", approve)
    builder.add_node("select", select_models)
    builder.add_node("run_subtask", run_subtask)
    # The critic routes itself (Command(goto=...)): retries and newly ready steps, the
    # re-planner, or the responder.
    builder.add_node("critic", critique, destinations=("run_subtask", "replan", "respond"))
    builder.add_node("replan", replan)
    builder.add_node("respond", respond)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", _after("approve"), ["approve", "respond"])
    builder.add_conditional_edges("approve", _after("select"), ["select", "respond"])
    builder.add_conditional_edges("select", dispatch, ["run_subtask", "respond"])
    builder.add_edge("run_subtask", "critic")
    builder.add_conditional_edges("replan", _after("approve"), ["approve", "respond"])
    builder.add_edge("respond", END)
    if checkpointer is None and not compile_kwargs:
        return builder
    return builder.compile(checkpointer=checkpointer, **compile_kwargs)


#: The graph `langgraph.json` exports. Compiled without a checkpointer: the server brings one.
graph = build_graph().compile(name="graph-agent")
