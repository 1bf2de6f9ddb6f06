"""The card schema: licence and language normalisation, model-index parsing, task mapping,
and an exact JSON round trip that tolerates keys from other schema versions."""

from __future__ import annotations

import json

import pytest

from graph_agent.retrieval_index.cards import (
    Benchmark,
    ModelCard,
    normalize_languages,
    serving_tasks,
    short_description,
)
from graph_agent.retrieval_index.licenses import (
    license_allowed,
    normalize_license,
    normalize_licenses,
)
from graph_agent.retrieval_index.model_index import (
    higher_is_better,
    parse_model_index,
    parse_value,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Apache 2.0", "apache-2.0"),
        ("apache license 2.0", "apache-2.0"),
        ("Apache License, Version 2.0", "apache-2.0"),
        ("apache-2.0", "apache-2.0"),
        ("MIT License", "mit"),
        ("mit", "mit"),
        ("CC BY 4.0", "cc-by-4.0"),
        ("cc-by-4.0", "cc-by-4.0"),
        ("CC BY-NC 4.0", "cc-by-nc-4.0"),
        ("Creative Commons Attribution-NonCommercial-ShareAlike 4.0", "cc-by-nc-sa-4.0"),
        ("CC0 1.0", "cc0-1.0"),
        ("openrail", "openrail"),
        ("OpenRAIL++", "openrail++"),
        ("CreativeML OpenRAIL-M", "creativeml-openrail-m"),
        ("bigscience-openrail-m", "bigscience-openrail-m"),
        ("GPLv3", "gpl-3.0"),
        ("GNU General Public License v3.0", "gpl-3.0"),
        ("Llama 2 Community License", "llama2"),
        ("BSD 3-Clause", "bsd-3-clause"),
        ("license:mit", "mit"),
        ("other", "other"),
        ("see the LICENSE file", "other"),
        (None, "unknown"),
        ("", "unknown"),
        (["apache-2.0", "bsd-3-clause"], "apache-2.0"),
    ],
)
def test_licence_variants_normalise_to_one_id(raw, expected):
    assert normalize_license(raw) == expected
    assert normalize_license(expected) == expected  # idempotent


def test_licence_lists_keep_every_alternative_and_allow_lists_match_any():
    assert normalize_licenses(["Apache 2.0", "BSD 3-Clause", "apache-2.0"]) == [
        "apache-2.0",
        "bsd-3-clause",
    ]
    assert normalize_licenses(["unknown", "MIT"]) == ["mit"]
    assert license_allowed(["cc-by-nc-sa-4.0", "apache-2.0"], ["Apache 2.0"])
    assert not license_allowed(["cc-by-nc-4.0"], ["cc-by-4.0"])


def test_languages_become_lowercase_iso_codes():
    assert normalize_languages(["English", "en-US", "FR", "eng_Latn", False, None, "code"]) == [
        "en",
        "fr",
        "no",  # YAML reads the Norwegian code `no` as False
        "code",
    ]
    assert normalize_languages("German") == ["de"]
    assert normalize_languages("not a language at all") == []


def test_metric_direction():
    for lower in ["wer", "Test WER", "cer", "loss", "validation loss", "perplexity", "mae", "rmse",
                  "fid", "mean absolute error", "error_rate"]:  # fmt: skip
        assert not higher_is_better(lower), lower
    for higher in ["accuracy", "f1", "bleu", "rouge", "map_at_10", "exact_match", "pass@1"]:
        assert higher_is_better(higher), higher


@pytest.mark.parametrize(
    ("raw", "value"),
    [(0.5, 0.5), (3, 3.0), ("0.91", 0.91), ("72%", 0.72), ("12,5", 12.5), ("0.9 ± 0.1", 0.9),
     ("n/a", None), (True, None), (None, None), (float("nan"), None), ({"x": 1}, None)],
)  # fmt: skip
def test_metric_values_parse_or_are_skipped(raw, value):
    assert parse_value(raw) == (pytest.approx(value) if value is not None else None)


def test_model_index_parsing_is_tolerant():
    block = [
        {
            "name": "m",
            "results": [
                {
                    "task": {"type": "automatic-speech-recognition"},
                    "dataset": {
                        "name": "Common Voice 11 (en)",
                        "type": "mozilla-foundation/common_voice_11_0",
                        "config": "en",
                        "split": "test",
                    },
                    "metrics": [
                        {"type": "wer", "name": "Test WER", "value": "9.5"},
                        {"type": "cer", "value": "bad"},  # skipped: not a number
                        {"value": 3},  # skipped: no metric
                    ],
                },
                {"metrics": [{"type": "f1", "value": 0.9}]},  # skipped: no dataset
                "garbage",
            ],
        }
    ]
    (b,) = parse_model_index(block)
    assert b == Benchmark(
        dataset="Common Voice 11 (en)",
        metric="wer",
        value=9.5,
        higher_is_better=False,
        name="Test WER",
        dataset_id="mozilla-foundation/common_voice_11_0",
        config="en",
        split="test",
        task="automatic-speech-recognition",
    )
    assert parse_model_index({"results": block[0]["results"]}) == [b]  # a dict, not a list
    assert parse_model_index(None) == parse_model_index("nonsense") == []


def test_hub_tags_map_to_graph_agent_tasks_conservatively():
    assert serving_tasks("text-to-audio", card_id="suno/bark") == [
        "text-to-audio",
        "text-to-speech",
    ]
    assert serving_tasks("text-to-audio", card_id="facebook/musicgen-small") == ["text-to-audio"]
    assert "visual-question-answering" in serving_tasks("image-text-to-text")
    t5 = serving_tasks(
        "text2text-generation", card_id="t5-base", tags=["summarization", "translation"]
    )
    assert t5 == ["text2text-generation", "summarization", "translation"]
    assert serving_tasks("text2text-generation", datasets=["samsum"])[1:] == ["summarization"]
    assert serving_tasks("text2text-generation", card_id="Helsinki-NLP/opus-mt-en-de")[1:] == [
        "translation"
    ]
    assert serving_tasks("text2text-generation", card_id="vennify/t5-base-grammar-correction") == [
        "text2text-generation"
    ]
    assert serving_tasks("text-generation", card_id="Qwen/Qwen2.5-0.5B-Instruct")[1:] == [
        "conversational"
    ]
    assert serving_tasks("text-generation", card_id="gpt2") == ["text-generation"]
    assert serving_tasks("sentence-similarity") == ["sentence-similarity", "feature-extraction"]


def test_card_normalises_and_round_trips_exactly():
    card = ModelCard(
        id="openai/whisper-large-v2",
        task="automatic-speech-recognition",
        tasks=["automatic-speech-recognition"],
        license="Apache 2.0",
        languages=["English", "fr"],
        parameters=1_550_000_000,
        benchmarks=[
            {
                "dataset": "librispeech",
                "metric": "wer",
                "value": 2.7,
                "higher_is_better": False,
                "future_field": 1,
            }
        ],
        source="test",
    )
    assert card.license == "apache-2.0" and card.licenses == ["apache-2.0"]
    assert card.languages == ["en", "fr"]
    assert card.benchmarks[0].higher_is_better is False
    wire = json.loads(json.dumps(card.to_dict()))
    assert ModelCard.from_dict(wire) == card
    assert ModelCard.from_dict(wire).to_dict() == card.to_dict()
    wire["a_key_from_a_newer_schema"] = {"x": 1}
    assert ModelCard.from_dict(wire) == card
    assert not card.runnable
    assert card.benchmark("LibriSpeech", "WER") == card.benchmarks[0]


def test_card_defaults_and_errors(tmp_path):
    card = ModelCard(id="x/y", task="Image-Classification", local_path=tmp_path)
    assert card.tasks == ["image-classification"] and card.license == "unknown"
    assert card.runnable and card.local_path == str(tmp_path)
    assert ModelCard.from_dict(card.to_dict()) == card
    with pytest.raises(ValueError, match="needs a task"):
        ModelCard(id="x/y", task="")
    with pytest.raises(ValueError, match="non-empty string id"):
        ModelCard(id="", task="fill-mask")
    with pytest.raises(ValueError, match="JSON object"):
        ModelCard.from_dict(["not", "a", "dict"])  # type: ignore[arg-type]


def test_embedding_text_is_short_and_skips_framework_tags():
    card = ModelCard(
        id="ProsusAI/finbert",
        task="text-classification",
        tags=["pytorch", "financial-sentiment-analysis"],
        description=short_description(
            "# FinBERT\n[![b](x)](y) **FinBERT** analyses [finance]"
            "(http://a) sentiment.\n```python\ncode()\n```"
        ),
    )
    assert card.description == "FinBERT analyses finance sentiment."
    text = card.embedding_text()
    assert "financial-sentiment-analysis" in text and "pytorch" not in text
    assert len(short_description("word " * 1000)) <= 602
