"""HIVE's constraint scenarios (section 4.5 of the HIVE paper) on a three-model catalog.

The benchmark numbers are illustrative fixtures that keep HIVE's ordering (parakeet has the
lower WER on Common Voice English); only the ordering matters to the scenarios.
"""

from __future__ import annotations

import pytest

from graph_agent import Context, build_graph
from graph_agent.retrieval_index.cards import Benchmark, ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME, Embedder
from graph_agent.retrieval_index.index import CardIndex
from graph_agent.retrieval_index.search import Constraints, select

REQUEST = "transcribe the audio and find entity tokens"
WHISPER, PARAKEET, NER = (
    "openai/whisper-large-v2",
    "nvidia/parakeet-rnnt-1.1b",
    "dslim/bert-base-NER",
)


def _cards(weights_dir) -> list[ModelCard]:
    def local(name: str) -> str:
        path = weights_dir / name.replace("/", "--")
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    return [
        ModelCard(
            id=WHISPER,
            task="automatic-speech-recognition",
            license="apache-2.0",
            parameters=1_550_000_000,
            languages=["en", "de", "fr"],
            likes=1500,
            description="Whisper large v2: multilingual speech recognition and translation.",
            benchmarks=[Benchmark("Common Voice 11.0 (en)", "wer", 9.0, False)],
            local_path=local(WHISPER),
        ),
        ModelCard(
            id=PARAKEET,
            task="automatic-speech-recognition",
            license="cc-by-4.0",
            parameters=1_100_000_000,
            languages=["en"],
            likes=100,
            description="Parakeet RNNT 1.1B: English speech recognition (transducer).",
            benchmarks=[Benchmark("Mozilla Common Voice 7.0 English", "WER", 5.8, False)],
            local_path=local(PARAKEET),
        ),
        ModelCard(
            id=NER,
            task="token-classification",
            license="mit",
            parameters=110_000_000,
            languages=["en"],
            likes=400,
            datasets=["conll2003"],
            description="BERT base fine-tuned for named entity recognition (PER, ORG, LOC).",
            local_path=local(NER),
        ),
    ]


@pytest.fixture
def hive_dir(tmp_path, models_dir, pack_model_dir):
    """A models dir holding only the embedder and the three HIVE cards."""
    pack_model_dir(EMBEDDER_DIR_NAME)
    home = tmp_path / "hive"
    home.mkdir()
    (home / EMBEDDER_DIR_NAME).symlink_to(models_dir / EMBEDDER_DIR_NAME)
    Catalog.in_models_dir(home).upsert(_cards(tmp_path / "weights"))
    return home


def _pick(hive_dir, task: str, **constraints) -> list[str]:
    index = CardIndex(hive_dir, Catalog.in_models_dir(hive_dir), Embedder(hive_dir))
    return [c.id for c in select(index, task, REQUEST, Constraints(**constraints)).candidates]


def test_licence_nobody_has_selects_nothing_and_says_why(hive_dir, tmp_path, speech_wav):
    assert (
        _pick(hive_dir, "automatic-speech-recognition", licenses=["openrail++", "deepseek"]) == []
    )
    final = (
        build_graph()
        .compile()
        .invoke(
            {
                "request": REQUEST + "; the licence must be openrail++ or deepseek",
                "inputs": {"audio.wav": str(speech_wav[0])},
            },
            context=Context(models_dir=str(hive_dir), artifacts_dir=str(tmp_path / "a")),
        )
    )
    steps = {s["task"]: s for s in final["report"]["steps"]}
    asr = steps["automatic-speech-recognition"]
    assert asr["status"] == "failed" and asr["candidates"] == []
    assert "licence apache-2.0 not in ['openrail++', 'deepseek']" in asr["reason"]
    assert "licence cc-by-4.0 not in" in asr["reason"]
    assert steps["token-classification"]["status"] == "skipped"
    assert "satisfies the constraints" in final["answer"]
    assert "whisper" not in " ".join(str(s.get("model")) for s in final["report"]["steps"])


def test_smallest_possible_model_per_task(hive_dir):
    assert _pick(hive_dir, "automatic-speech-recognition", prefer_smallest=True)[0] == PARAKEET
    assert _pick(hive_dir, "token-classification", prefer_smallest=True) == [NER]


def test_best_on_common_voice_english_picks_parakeet(hive_dir):
    best = _pick(hive_dir, "automatic-speech-recognition", best_on="Common Voice English:wer")
    assert best == [PARAKEET, WHISPER]  # lower WER first, although whisper is more popular
    assert _pick(hive_dir, "automatic-speech-recognition")[0] == WHISPER  # the default order


def test_higher_is_better_metrics_rank_descending(hive_dir):
    catalog = Catalog.in_models_dir(hive_dir)
    for card_id, acc in ((WHISPER, 0.7), (PARAKEET, 0.9)):
        card = catalog.get(card_id)
        card.benchmarks = [Benchmark("speech commands", "accuracy", acc, True)]
        catalog.upsert([card])
    assert _pick(hive_dir, "automatic-speech-recognition", best_on="speech commands:accuracy") == [
        PARAKEET,
        WHISPER,
    ]


def test_constraints_stated_in_the_request_reach_the_selector(hive_dir, tmp_path, speech_wav):
    graph = build_graph().compile()
    final = graph.invoke(
        {
            "request": REQUEST + " with the smallest possible model",
            "inputs": {"audio.wav": str(speech_wav[0])},
        },
        context=Context(models_dir=str(hive_dir), artifacts_dir=str(tmp_path / "a")),
    )
    planned = final["report"]["decisions"][0]
    assert planned["constraints_from_request"] == {"prefer_smallest": True}
    asr = {s["task"]: s for s in final["report"]["steps"]}["automatic-speech-recognition"]
    assert asr["candidates"][0] == PARAKEET and "smallest allowed" in asr["reason"]
