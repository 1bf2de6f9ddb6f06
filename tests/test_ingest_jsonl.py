"""JSONL import: HuggingGPT's p0 catalog as is, plus small files with good and bad lines."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.ingest import (
    CardSourceError,
    ImportReport,
    ingest_jsonl,
    jsonl_cards,
)

P0 = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks" / "hugginggpt"
P0_FILE = P0 / "p0_models.jsonl"

needs_p0 = pytest.mark.skipif(
    not P0_FILE.is_file(),
    reason=f"shared HuggingGPT catalog not found at {P0_FILE.resolve()} (../shared is absent)",
)


def _line(**raw) -> str:
    return json.dumps(raw) + "\n"


@needs_p0
def test_p0_catalog_imports_as_is(tmp_path):
    report = ImportReport(source="p0")
    cards = list(jsonl_cards(P0_FILE, report=report))
    assert (report.read, report.imported, report.skipped) == (673, 673, 0), report.summary()
    assert len({c.id for c in cards}) == 673
    assert not any(c.runnable for c in cards)  # a catalog of names, no weights
    assert all(c.source == "jsonl:p0_models.jsonl" for c in cards)
    licences = Counter(c.license for c in cards)
    assert licences["apache-2.0"] >= 249 and licences["mit"] == 97
    assert licences["unknown"] < 200
    assert all(lic == lic.lower() and " " not in lic for lic in licences)
    assert sum(1 for c in cards if c.benchmarks) >= 80
    # every card serves its HuggingGPT task (the catalog's task for the card)
    raw_tasks = {json.loads(line)["id"]: json.loads(line)["task"] for line in P0_FILE.open()}
    assert all(raw_tasks[c.id] in c.tasks for c in cards)

    finbert = next(c for c in cards if c.id == "ProsusAI/finbert")
    assert finbert.languages == ["en"] and "financial-sentiment-analysis" in finbert.tags
    assert finbert.description.startswith("FinBERT is a pre-trained NLP model")
    sst2 = next(c for c in cards if c.id == "distilbert-base-uncased-finetuned-sst-2-english")
    accuracy = sst2.benchmark("glue", "accuracy")
    assert accuracy and accuracy.higher_is_better and accuracy.value == pytest.approx(0.9106, 1e-3)
    wer = [b for c in cards for b in c.benchmarks if b.metric == "wer"]
    assert wer and not any(b.higher_is_better for b in wer)

    catalog = Catalog(tmp_path / "catalog.sqlite")
    assert ingest_jsonl(P0_FILE, catalog).imported == 673
    assert len(catalog.all()) == 673
    assert {c.id for c in catalog.by_task("automatic-speech-recognition")} >= {
        c.id for c in cards if c.task == "automatic-speech-recognition"
    }
    stored = catalog.get("ProsusAI/finbert")
    assert stored == finbert
    version = catalog.version()
    ingest_jsonl(P0_FILE, catalog)  # re-import: nothing changed, index not stale
    assert catalog.version() == version


def test_small_file_with_bad_lines_imports_the_good_ones(tmp_path):
    weights = tmp_path / "weights"
    weights.mkdir()
    path = tmp_path / "cards.jsonl"
    path.write_bytes(
        (
            _line(
                id="org/asr",
                pipeline_tag="automatic-speech-recognition",
                task="x",
                likes=3,
                downloads=10,
                meta={
                    "license": "Apache 2.0",
                    "language": ["English"],
                    "model-index": [
                        {
                            "results": [
                                {
                                    "dataset": {"name": "cv"},
                                    "metrics": [{"type": "wer", "value": "7%"}],
                                }
                            ]
                        }
                    ],
                },
                description="# Title\nTranscribes speech.",
            )
            + "\n"  # blank lines are not entries
            + "{not json\n"
            + _line(pipeline_tag="fill-mask", meta={})  # no id
            + _line(id="org/notask", meta={"license": "mit"})  # no task anywhere
            + _line(id="org/mask", meta={"pipeline_tag": "fill-mask"}, description=None)
            + _line(id="org/own-format", task="summarization", tasks=["summarization"])
        ).encode()
        + b'{"id": "\xff"}\n'
    )
    report = ImportReport(source="small")
    cards = {c.id: c for c in jsonl_cards(path, report=report, local_models={"ORG/ASR": weights})}
    assert set(cards) == {"org/asr", "org/mask", "org/own-format"}
    assert (report.read, report.imported, report.skipped) == (7, 3, 4)
    problems = "\n".join(report.problems)
    assert "line 3: not JSON" in problems
    assert "line 4: no model id" in problems
    assert "line 5 (org/notask): no pipeline tag" in problems
    assert "line 8: not UTF-8" in problems
    asr = cards["org/asr"]
    assert asr.runnable and asr.local_path == str(weights)  # matched case-insensitively
    assert asr.license == "apache-2.0" and asr.languages == ["en"]
    assert asr.benchmarks[0].value == pytest.approx(0.07) and not asr.benchmarks[0].higher_is_better
    assert asr.description == "Transcribes speech." and asr.likes == 3
    assert not cards["org/mask"].runnable and cards["org/mask"].license == "unknown"
    assert cards["org/own-format"].source == "jsonl:cards.jsonl"


def test_a_file_where_every_line_fails_is_an_error(tmp_path):
    path = tmp_path / "wrong.jsonl"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(CardSourceError, match=r"all 2 lines failed.*line 1: not JSON"):
        list(jsonl_cards(path))
    with pytest.raises(CardSourceError, match="does not exist"):
        list(jsonl_cards(tmp_path / "missing.jsonl"))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert list(jsonl_cards(empty)) == []
