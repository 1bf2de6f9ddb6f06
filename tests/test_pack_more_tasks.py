"""The pack's models for more tasks (issue 27), run on their real weights: spaCy entities.

Each model is in the default pack, which the test command installs, so a missing model
fails (``pack_model_dir``) rather than skipping: a skipped real-weight test proves nothing.
"""

from __future__ import annotations

import json

from graph_agent.cli import main
from graph_agent.tools import ToolCall, get_tool
from graph_agent.tools.artifacts import ArtifactStore

SPACY = "spacy-en-core-web-sm"
NEWS = "Apple opened a new office in Berlin on Monday, Tim Cook said."


def test_spacy_tags_the_entities_of_a_news_sentence(pack_model_dir, tmp_path):
    tool = get_tool("token-classification", "spacy")
    assert tool.library == "spacy"  # the card's library picks this back end
    out = tool.run(
        str(pack_model_dir(SPACY)), ToolCall(args={"text": NEWS}, artifacts=ArtifactStore(tmp_path))
    )
    found = {(d["word"], d["entity"]) for d in out.data}
    expected = {("Apple", "ORG"), ("Berlin", "GPE"), ("Monday", "DATE"), ("Tim Cook", "PERSON")}
    assert found == expected
    for d in out.data:  # offsets point at the entity in the text, as the transformers tagger's
        assert NEWS[d["start"] : d["end"]] == d["word"]
    assert out.kind == "entities" and "Tim Cook (PERSON)" in out.text


def test_spacy_finds_nothing_in_a_sentence_without_names(pack_model_dir, tmp_path):
    out = get_tool("token-classification", "spacy").run(
        str(pack_model_dir(SPACY)),
        ToolCall(args={"text": "the cat sat on the mat."}, artifacts=ArtifactStore(tmp_path)),
    )
    assert out.data == [] and out.text == "no entities found"


def _run_json(capsys, *args: str) -> dict:
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_named_entities_request_runs_spacy_end_to_end(capsys, pack_model_dir, tmp_path):
    pack_model_dir(SPACY)
    final = _run_json(
        capsys,
        f"identify the named entities in: {NEWS}",
        "--artifacts-dir",
        str(tmp_path / "artifacts"),
    )
    (step,) = final["report"]["steps"]
    # The tagger runs, not the chat model the planner falls back on when there is none.
    assert step["task"] == "token-classification" and step["model"] == "spacy/en_core_web_sm"
    assert step["status"] == "ok" and final["report"]["failures"] == []
    for entity in ("Apple (ORG)", "Berlin (GPE)", "Monday (DATE)", "Tim Cook (PERSON)"):
        assert entity in final["outputs"]["node-0"]
