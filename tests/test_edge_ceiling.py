"""The edge-F1 ceiling the TaskBench gold leaves: no model, small made-up records."""

from __future__ import annotations

from graph_agent.evals import edge_ceiling


def _node(task: str, *args: str) -> dict:
    return {"task": task, "arguments": list(args)}


def test_one_based_references_leave_no_scorable_edge():
    zero_based = [
        _node("Automatic Speech Recognition", "a.wav"),
        _node("Summarization", "<node-0>"),
    ]
    one_based = [_node("Automatic Speech Recognition", "a.wav"), _node("Summarization", "<node-1>")]
    assert edge_ceiling.has_scorable_edge(zero_based)
    assert not edge_ceiling.has_scorable_edge(one_based)


def test_gold_tasks_are_chained_only_where_the_tool_graph_links_them():
    nodes = [
        _node("Automatic Speech Recognition", "a.wav"),
        _node("Sentence Similarity", "x", "y"),  # a score: nothing reads it onward
        _node("Translation", "z"),
    ]
    assert [n["arguments"] for n in edge_ceiling.chained(nodes)] == [
        ["input"],
        ["<node-0>"],
        ["input"],
    ]


def test_measure_counts_gold_noise_and_scores_the_chained_gold():
    records = [
        {
            "id": "1",
            "type": "chain",
            "task_nodes": [
                _node("Automatic Speech Recognition", "a.wav"),
                _node("Summarization", "<node-0>"),
            ],
        },
        {
            "id": "2",
            "type": "chain",
            "task_nodes": [
                _node("Automatic Speech Recognition", "a.wav"),
                _node("Summarization", "<node-1>"),
            ],
        },
        {"id": "3", "type": "single", "task_nodes": [_node("Summarization", "text")]},
    ]
    result = edge_ceiling.measure(records)
    assert result["multi_step"] == 2
    assert result["multi_step_without_scorable_edge"] == 1
    assert result["chained_gold_node_f1"] == 100.0
    # Two predicted edges, one gold edge (the 1-based record has none): P 0.5, R 1.
    assert result["chained_gold_edge_f1"] == round(100 * 2 / 3, 2)
    assert not edge_ceiling.linked("Summarization", "Summarization")  # no self-links
    assert not edge_ceiling.linked("Audio Enhancement", "Summarization")  # not a tool
    assert not edge_ceiling.linked("Speech-to-Text", "Summarization")  # a synonym, not a tool
