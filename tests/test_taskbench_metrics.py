"""TaskBench metrics: node and edge F1 as TaskBench's evaluate.py computes them."""

from __future__ import annotations

import pytest

from graph_agent.evals import taskbench

TOOLS = ["Summarization", "Translation", "Automatic Speech Recognition", "Text-to-Speech"]


def _rec(nodes, kind="chain", rid="r"):
    return {"id": rid, "type": kind, "task_nodes": nodes}


def test_edges_come_from_node_references_and_tolerate_bad_ones():
    nodes = [
        {"task": "Automatic Speech Recognition", "arguments": ["a.wav"]},
        {"task": "Summarization", "arguments": ["<node-0>"]},
        {"task": "Translation", "arguments": ["<node-9>"]},  # out of range: no edge
        {"task": "Text-to-Speech", "arguments": ["<node-3>"]},  # itself: no edge
        {"task": "Text_to_Speech", "arguments": [{"text": "<node-1>"}]},  # dict argument
    ]
    assert taskbench.edges_from_arguments(nodes) == {
        ("Automatic Speech Recognition", "Summarization"),
        ("Summarization", "Text to Speech"),
    }


def test_node_f1_is_set_based_and_micro_averaged():
    gold1 = [{"task": "Automatic Speech Recognition", "arguments": []}, {"task": "Summarization"}]
    pred1 = [{"task": "Automatic Speech Recognition"}, {"task": "Translation"}]
    gold2 = [{"task": "Summarization"}]
    pred2 = [{"task": "Summarization"}, {"task": "Summarization"}]  # a repeat counts once
    out = taskbench.score([(_rec(gold1), pred1), (_rec(gold2, "single"), pred2)], TOOLS)
    # tp = 1 + 1, fp = 1 (Translation), fn = 1 (Summarization in record 1)
    assert out["overall"]["nodes"]["tp"] == 2
    assert out["overall"]["nodes"]["fp"] == 1
    assert out["overall"]["nodes"]["fn"] == 1
    assert out["overall"]["node_f1"] == pytest.approx(66.67)
    assert out["single"]["node_f1"] == 100.0


def test_out_of_vocabulary_gold_names_are_ignored_unless_strict():
    gold = [{"task": "Summarization"}, {"task": "Audio Enhancement"}]
    pred = [{"task": "Summarization"}]
    out = taskbench.score([(_rec(gold), pred)], TOOLS)
    assert out["overall"]["node_f1"] == 100.0  # TaskBench scores only its 23 tools
    # strict: the unknown gold name is a miss -> P = 1, R = 1/2, F1 = 2/3
    assert out["overall"]["node_f1_strict"] == pytest.approx(66.67)


def test_edge_f1_by_hand():
    gold = [
        {"task": "Automatic Speech Recognition", "arguments": ["a.wav"]},
        {"task": "Summarization", "arguments": ["<node-0>"]},
        {"task": "Text-to-Speech", "arguments": ["<node-1>"]},
    ]
    pred = [
        {"task": "Automatic Speech Recognition", "arguments": ["a.wav"]},
        {"task": "Summarization", "arguments": ["<node-0>"]},
        {"task": "Text-to-Speech", "arguments": ["<node-0>"]},
    ]
    out = taskbench.score([(_rec(gold), pred)], TOOLS)
    # gold {ASR->Sum, Sum->TTS}; pred {ASR->Sum, ASR->TTS}: tp 1, fp 1, fn 1
    assert out["overall"]["edges"] == {
        "precision": 50.0,
        "recall": 50.0,
        "f1": 50.0,
        "tp": 1,
        "fp": 1,
        "fn": 1,
    }


def test_unparsable_gold_is_skipped_and_bad_prediction_counts_as_empty():
    bad_gold = {"step_1": {"task": "Summarization"}}
    good = [{"task": "Summarization", "arguments": ["x"]}]
    out = taskbench.score([(_rec(bad_gold), good), (_rec(good), "not a list")], TOOLS)
    assert out["skipped_unparsable_gold"] == 1
    assert out["overall"]["records"] == 1
    assert out["overall"]["nodes"]["fn"] == 1 and out["overall"]["nodes"]["tp"] == 0


def test_split_is_by_id_hash_deterministic_and_about_seventy_percent():
    ids = [str(i) for i in range(2000)]
    parts = [taskbench.split_of(i) for i in ids]
    assert parts == [taskbench.split_of(i) for i in reversed(ids)][::-1]
    share = parts.count("train") / len(parts)
    assert 0.65 < share < 0.75
    records = [{"id": i} for i in ids]
    train = taskbench.select(records, "train")
    held = taskbench.select(records, "heldout")
    assert len(train) + len(held) == len(records)
    assert not {r["id"] for r in train} & {r["id"] for r in held}
