"""The index CLI's stable contract: `index build --from FILE.jsonl --dir DIR` and
`index search "text" --task TASK --dir DIR --json [filters]`."""

from __future__ import annotations

import json

import pytest

from graph_agent.cli import EXIT_OK, EXIT_USAGE, main

ASR_RESULT = {
    "task": {"type": "automatic-speech-recognition"},
    "dataset": {
        "name": "Common Voice 11.0",
        "type": "mozilla-foundation/common_voice_11_0",
        "config": "en",
    },
}


def _card(card_id, task, license_, likes, extra=None):
    return {
        "id": card_id,
        "task": task,
        "pipeline_tag": task,
        "likes": likes,
        "downloads": 10,
        "meta": {"license": license_, "language": "en", **(extra or {})},
        "description": f"{card_id} model card.",
    }


@pytest.fixture
def cards_file(tmp_path):
    rows = [
        _card(
            "openai/whisper-large-v2",
            "automatic-speech-recognition",
            "apache-2.0",
            1500,
            {
                "model-index": [
                    {
                        "name": "w",
                        "results": [{**ASR_RESULT, "metrics": [{"type": "wer", "value": 9.0}]}],
                    }
                ]
            },
        ),
        _card(
            "nvidia/parakeet-rnnt-1.1b",
            "automatic-speech-recognition",
            "CC BY 4.0",
            100,
            {
                "model-index": [
                    {
                        "name": "p",
                        "results": [{**ASR_RESULT, "metrics": [{"type": "wer", "value": 5.8}]}],
                    }
                ]
            },
        ),
        _card("dslim/bert-base-NER", "token-classification", "MIT", 400),
    ]
    path = tmp_path / "cards.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    return path


def _search(capsys, where, *args) -> dict:
    assert (
        main(["index", "search", "transcribe speech", "--dir", str(where), "--json", *args])
        == EXIT_OK
    )
    return json.loads(capsys.readouterr().out)


def test_build_from_jsonl_then_search_with_filters(tmp_path, cards_file, capsys, pack_model_dir):
    pack_model_dir("all-minilm-l6-v2")
    where = tmp_path / "idx"
    assert main(["index", "build", "--from", str(cards_file), "--dir", str(where)]) == EXIT_OK
    built = json.loads(capsys.readouterr().out)
    assert built["cards"] == 3

    found = _search(capsys, where, "--task", "automatic-speech-recognition")
    assert [c["id"] for c in found["candidates"]] == [
        "openai/whisper-large-v2",
        "nvidia/parakeet-rnnt-1.1b",
    ]
    assert all({"id", "score", "reason"} <= set(c) for c in found["candidates"])

    best = _search(
        capsys, where, "--task", "automatic-speech-recognition", "--best-on", "common voice en:wer"
    )
    assert best["candidates"][0]["id"] == "nvidia/parakeet-rnnt-1.1b"
    assert "wer 5.8" in best["candidates"][0]["reason"]

    licensed = _search(
        capsys, where, "--task", "automatic-speech-recognition", "--license", "cc-by-4.0"
    )
    assert [c["id"] for c in licensed["candidates"]] == ["nvidia/parakeet-rnnt-1.1b"]
    nothing = _search(
        capsys,
        where,
        "--task",
        "automatic-speech-recognition",
        "--license",
        "openrail++",
        "--license",
        "deepseek",
    )
    assert nothing["candidates"] == [] and "satisfies the constraints" in nothing["reason"]

    assert main(["index", "stats", "--dir", str(where)]) == EXIT_OK
    stats = json.loads(capsys.readouterr().out)
    assert stats["cards"] == 3 and stats["index_fresh"] is True


def test_add_and_remove_without_rebuild(tmp_path, cards_file, capsys, pack_model_dir):
    pack_model_dir("all-minilm-l6-v2")
    where = tmp_path / "idx"
    assert main(["index", "add", str(cards_file), "--dir", str(where)]) == EXIT_OK
    capsys.readouterr()
    assert main(["index", "remove", "openai/whisper-large-v2", "--dir", str(where)]) == EXIT_OK
    capsys.readouterr()
    found = _search(capsys, where, "--task", "automatic-speech-recognition")
    assert [c["id"] for c in found["candidates"]] == ["nvidia/parakeet-rnnt-1.1b"]


def test_corrupt_index_file_is_a_clear_error_with_a_rebuild_hint(
    tmp_path, cards_file, capsys, pack_model_dir
):
    pack_model_dir("all-minilm-l6-v2")
    where = tmp_path / "idx"
    assert main(["index", "build", "--from", str(cards_file), "--dir", str(where)]) == EXIT_OK
    capsys.readouterr()
    for faiss_file in (where / "index").resolve().glob("*.faiss"):
        faiss_file.write_bytes(faiss_file.read_bytes()[:40])
    code = main(
        ["index", "search", "speech", "--task", "automatic-speech-recognition", "--dir", str(where)]
    )
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "graph-agent index build" in err


def test_bad_search_flags_are_clear_errors(tmp_path, capsys, pack_model_dir):
    pack_model_dir("all-minilm-l6-v2")
    code = main(
        [
            "index",
            "search",
            "x",
            "--task",
            "summarization",
            "--dir",
            str(tmp_path),
            "--best-on",
            "a:b:c",
        ]
    )
    assert code == EXIT_USAGE and "best_on" in capsys.readouterr().err


def test_smallest_reads_the_hubs_parameter_count_and_says_when_a_size_is_unknown(
    tmp_path, capsys, pack_model_dir
):
    """A hidden check found `--smallest` ranking a 1.1B model above a 38M one whose Hub
    record gave ``"safetensors": {"total": 37_800_000}``: the count was not read."""
    pack_model_dir("all-minilm-l6-v2")
    task = "automatic-speech-recognition"
    rows = [
        _card("nvidia/parakeet-rnnt-1.1b", task, "cc-by-4.0", 0),
        {
            **_card("openai/whisper-tiny", task, "apache-2.0", 0),
            "safetensors": {"total": 37_800_000},
        },
        {
            **_card("acme/speech-small", task, "apache-2.0", 0),
            "safetensors": {"parameters": {"F32": 60_000_000}},
        },
        _card("acme/mystery-asr", task, "apache-2.0", 0),  # no size anywhere
    ]
    cards = tmp_path / "sizes.jsonl"
    cards.write_text("".join(json.dumps(r) + "\n" for r in rows))
    where = tmp_path / "idx"
    assert main(["index", "build", "--from", str(cards), "--dir", str(where)]) == EXIT_OK
    capsys.readouterr()
    found = _search(capsys, where, "--task", task, "--smallest")
    assert [c["id"] for c in found["candidates"]] == [
        "openai/whisper-tiny",
        "acme/speech-small",
        "nvidia/parakeet-rnnt-1.1b",
        "acme/mystery-asr",
    ]
    assert found["candidates"][0]["reason"].startswith("38M parameters")
    assert (
        "size unknown (ranked after every model whose size is known)"
        in (found["candidates"][-1]["reason"])
    )
