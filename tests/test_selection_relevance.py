"""Selection over HuggingGPT's 673 p0 cards: task purity and top-1 relevance."""

from __future__ import annotations

import pytest

from graph_agent.evals.selection_relevance import DEFAULT_CARDS, evaluate, open_p0_index
from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.search import _language_bonus, query_languages


@pytest.fixture(scope="module")
def p0_index(tmp_path_factory, models_dir, pack_model_dir):
    if not DEFAULT_CARDS.is_file():
        pytest.skip(f"shared p0 cards not found at {DEFAULT_CARDS}")
    pack_model_dir("all-minilm-l6-v2")
    return open_p0_index(DEFAULT_CARDS, tmp_path_factory.mktemp("p0"), models_dir)


def test_every_selection_is_of_its_task_and_top1_is_relevant(p0_index):
    result = evaluate(p0_index)
    assert p0_index.catalog.count() == 673
    assert result["selections_of_wrong_task"] == []
    assert result["top1"] >= 0.8, [r for r in result["rows"] if not r["hit1"]]
    assert result["top3"] >= 0.85


def test_language_words_and_direction():
    assert query_languages("translate Japanese into English") == ["ja", "en"]
    forward = ModelCard(id="Helsinki-NLP/opus-mt-ja-en", task="translation")
    backward = ModelCard(id="staka/fugumt-en-ja", task="translation", languages=["en", "ja"])
    assert _language_bonus(forward, ["ja", "en"])[0] > _language_bonus(backward, ["ja", "en"])[0]
    assert _language_bonus(backward, [])[0] == 0
