"""The task vocabulary covers TaskBench's tools and reproduces its typed tool graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_agent.planning.vocabulary import TASKS, can_feed, canonical, taskbench_name
from graph_agent.tools.registry import REGISTRY

TASKBENCH = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks" / "taskbench_hf"


@pytest.fixture(scope="module")
def graph_desc() -> dict:
    path = TASKBENCH / "graph_desc.json"
    if not path.is_file():
        pytest.skip(f"TaskBench tool graph not found at {path}")
    return json.loads(path.read_text())


def test_every_taskbench_tool_maps_with_its_types(graph_desc):
    for node in graph_desc["nodes"]:
        task = canonical(node["id"])
        assert task is not None, node["id"]
        assert taskbench_name(task) == node["id"]
        assert list(TASKS[task].input_types) == node["input-type"]
        if node["output-type"]:
            assert TASKS[task].output == node["output-type"][0]


def test_links_are_exactly_taskbenchs_tool_graph(graph_desc):
    theirs = {(canonical(x["source"]), canonical(x["target"])) for x in graph_desc["links"]}
    # TaskBench's 23 tools; a task of ours beyond them (table question answering) has a
    # TaskBench-style name for the --format taskbench output but no place in its graph.
    tools = {canonical(node["id"]) for node in graph_desc["nodes"]}
    ours = {(a, b) for a in tools for b in tools if a != b and can_feed(a, b)}
    assert ours == theirs


def test_aliases_and_registry_agree():
    assert canonical("Image-to-Text") == canonical("image_to_text") == "image-to-text"
    assert canonical("Named Entity Recognition") == "token-classification"
    assert canonical("no such thing") is None
    for task, tool in REGISTRY.items():  # every runnable tool is in the vocabulary, same types
        assert TASKS[task].output == tool.output, task
        assert TASKS[task].input_types == tool.input_modalities, task
