"""Catalog, FAISS index and constrained selection over the pack's real cards."""

from __future__ import annotations

import pytest

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import Embedder
from graph_agent.retrieval_index.index import CardIndex
from graph_agent.retrieval_index.ingest import pack_cards
from graph_agent.retrieval_index.search import Constraints, select


@pytest.fixture
def index(tmp_path, models_dir, pack_model_dir):
    pack_model_dir("all-minilm-l6-v2")
    catalog = Catalog(tmp_path / "catalog.sqlite")
    catalog.upsert(pack_cards(models_dir))
    idx = CardIndex(tmp_path, catalog, Embedder(models_dir))
    idx.build()
    return idx


def test_pack_cards_are_runnable_and_cover_the_demo_tasks(models_dir, pack_model_dir):
    pack_model_dir("all-minilm-l6-v2")
    cards = {c.id: c for c in pack_cards(models_dir)}
    assert all(c.runnable for c in cards.values())
    tasks = {t for c in cards.values() for t in c.tasks}
    assert {"automatic-speech-recognition", "summarization", "image-classification"} <= tasks
    qwen = cards["Qwen/Qwen2.5-Coder-0.5B-Instruct"]
    assert qwen.license == "apache-2.0" and qwen.parameters and qwen.parameters > 4e8


def test_search_is_per_task_and_prefers_the_capable_model(index):
    chosen = select(index, "summarization", "summarization: summarize the meeting notes")
    ids = [c.id for c in chosen.candidates]
    assert ids[0] == "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in ids
    assert all("whisper" not in i for i in ids)
    assert chosen.reason.startswith("Qwen/Qwen2.5-Coder-0.5B-Instruct: best match")


def test_constraints_filter_and_explain(index):
    small = select(index, "summarization", "summarize", Constraints(max_parameters=200_000_000))
    assert [c.id for c in small.candidates] == ["HuggingFaceTB/SmolLM2-135M-Instruct"]
    assert "Qwen/Qwen2.5-Coder-0.5B-Instruct" in small.rejected
    none = select(index, "summarization", "summarize", Constraints(licenses=["gpl-3.0"]))
    assert none.candidates == [] and "satisfies the constraints" in none.reason


def test_bad_constraints_are_clear_errors():
    with pytest.raises(ValueError, match="max_params: Extra inputs are not permitted"):
        Constraints.from_dict({"max_params": 5})
    with pytest.raises(ValueError, match="max_parameters"):
        Constraints.from_dict({"max_parameters": "lots"})
    assert Constraints.from_dict({"licenses": "mit"}).licenses == ["mit"]


def test_catalog_upsert_remove_and_stale_index_rebuild(index):
    extra = ModelCard(
        id="acme/summarizer",
        task="summarization",
        license="mit",
        description="Summarizes long documents into short abstracts.",
    )
    index.catalog.upsert([extra])
    assert not index.is_fresh()
    hits = dict(index.search("summarization", "summarize a long document"))
    assert "acme/summarizer" in hits  # rebuilt on demand because the catalog changed
    index.catalog.remove(["acme/summarizer"])
    assert "acme/summarizer" not in dict(index.search("summarization", "summarize"))
    # Not runnable here (no weights), so selection leaves it out and says why.
    index.catalog.upsert([extra])
    chosen = select(index, "summarization", "summarize a long document")
    assert chosen.rejected["acme/summarizer"] == ["weights not on this machine"]


def test_catalog_reads_follow_changes_made_by_another_connection(tmp_path):
    """Cards are parsed once and reused (selection's hot path), yet never served stale."""
    path = tmp_path / "catalog.sqlite"
    card = ModelCard(id="acme/asr", task="automatic-speech-recognition", license="mit")
    Catalog(path).upsert([card])
    reader = Catalog(path)
    first = reader.get("acme/asr")
    first.license = "changed-by-a-caller"
    first.languages.append("xx")  # a caller's own copy, even its lists
    assert reader.get("acme/asr").license == "mit"
    assert reader.get("acme/asr").languages == []
    Catalog(path).upsert([ModelCard(id="acme/asr", task="automatic-speech-recognition")])
    assert reader.get("acme/asr").license == "unknown"  # the other writer's change is seen


def test_single_query_search_leaves_the_threads_openmp_setting_as_it_was(index):
    """FAISS shares torch's OpenMP runtime: a search must not leave torch on one thread."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(3)
    try:
        hits = index.search("summarization", "summarize the notes", k=3)
        assert hits and faiss.omp_get_max_threads() == 3
    finally:
        faiss.omp_set_num_threads(before)
