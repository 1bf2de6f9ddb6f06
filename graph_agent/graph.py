"""The graph's wiring, and nothing else.

planner -> approval -> selector -> run_steps -> responder
                 ^                          |
                 +--- replan (bounded by ---+
                      max_replans)

``run_steps`` runs each step as soon as its inputs are ready and has the critic judge each
attempt as soon as it ends (see ``nodes.run_steps``).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from graph_agent.context import Context
from graph_agent.nodes.approval import approve
from graph_agent.nodes.planner import plan, replan
from graph_agent.nodes.responder import respond
from graph_agent.nodes.run_steps import run_steps
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
    # Routes itself once no step is left to run (Command(goto=...)): to the re-planner when
    # steps failed and a revision has something new to try, else to the responder.
    builder.add_node("run_steps", run_steps, destinations=("replan", "respond"))
    builder.add_node("replan", replan)
    builder.add_node("respond", respond)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", _after("approve"), ["approve", "respond"])
    builder.add_conditional_edges("approve", _after("select"), ["select", "respond"])
    builder.add_conditional_edges("select", _after("run_steps"), ["run_steps", "respond"])
    builder.add_conditional_edges("replan", _after("approve"), ["approve", "respond"])
    builder.add_edge("respond", END)
    if checkpointer is None and not compile_kwargs:
        return builder
    return builder.compile(checkpointer=checkpointer, **compile_kwargs)


#: The graph `langgraph.json` exports. Compiled without a checkpointer: the server brings one.
graph = build_graph().compile(name="graph-agent")
