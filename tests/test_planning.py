"""Offline planner and plan validator."""

from __future__ import annotations

import pytest

from graph_agent.errors import RequestError
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import Plan, PlanError, Subtask, validate

TYPES = {"meeting.wav": "audio", "photo.jpg": "image"}


def _tasks(plan: Plan) -> list[str]:
    return [s.task for s in plan.subtasks]


def test_demo_request_plans_three_steps_with_a_dependency():
    request = (
        "transcribe meeting.wav, summarize it in one sentence, and tell me what is in photo.jpg"
    )
    plan = validate(plan_offline(request, TYPES), TYPES)
    assert _tasks(plan) == ["automatic-speech-recognition", "summarization", "image-classification"]
    asr, summary, image = plan.subtasks
    assert asr.args == {"audio": "meeting.wav"}
    assert summary.args["text"] == "<node-0>" and summary.deps == ["node-0"]
    assert summary.args["instruction"] == "in one sentence"
    assert image.args == {"image": "photo.jpg"} and image.deps == []


def test_translation_picks_target_language_and_chains():
    plan = plan_offline("transcribe meeting.wav then translate it into German", TYPES)
    assert _tasks(plan) == ["automatic-speech-recognition", "translation"]
    assert plan.subtasks[1].args["target_language"] == "German"


def test_empty_request_is_a_clear_error():
    with pytest.raises(RequestError, match="empty"):
        plan_offline("   ", TYPES)


def test_request_with_no_known_task_is_a_clear_error():
    with pytest.raises(RequestError, match="Could not find a task"):
        plan_offline("hmm, well", TYPES)


def test_image_given_where_audio_is_needed_fails_validation():
    plan = plan_offline("transcribe photo.jpg", TYPES)
    with pytest.raises(PlanError) as err:
        validate(plan, TYPES)
    assert "needs audio, but 'photo.jpg' is an image" in str(err.value)


def test_validator_reports_unknown_task_bad_reference_and_type_mismatch():
    plan = Plan(
        subtasks=[
            Subtask(id="node-0", task="image-classification", args={"image": "photo.jpg"}),
            Subtask(id="node-1", task="automatic-speech-recognition", args={"audio": "<node-0>"}),
            Subtask(id="node-2", task="summarization", args={"text": "<node-7>"}),
            Subtask(id="node-3", task="no-such-task", args={}),
        ]
    )
    with pytest.raises(PlanError) as err:
        validate(plan, TYPES)
    problems = err.value.problems
    assert any("node-1" in p and "<node-0> produces text" in p for p in problems)
    assert any("node-2" in p and "node-7" in p for p in problems)
    assert any("unknown task 'no-such-task'" in p for p in problems)


def test_validator_rejects_cycles():
    plan = Plan(
        subtasks=[
            Subtask(id="node-0", task="summarization", args={"text": "<node-1>"}),
            Subtask(id="node-1", task="summarization", args={"text": "<node-0>"}),
        ]
    )
    with pytest.raises(PlanError, match="cycle"):
        validate(plan, {})


MORE = {**TYPES, "notes.txt": "text"}


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            "classify notes.txt into sports, politics or tech",
            [
                (
                    "zero-shot-classification",
                    {"text": "notes.txt", "labels": ["sports", "politics", "tech"]},
                )
            ],
        ),
        (
            "translate 'salt and pepper' into French",
            [("translation", {"text": "salt and pepper", "target_language": "French"})],
        ),
        (
            "answer 'when does it close?' using notes.txt",
            [("question-answering", {"text": "notes.txt", "question": "when does it close?"})],
        ),
        (
            "classify photo.jpg and detect objects in it",
            [
                ("image-classification", {"image": "photo.jpg"}),
                ("object-detection", {"image": "photo.jpg"}),
            ],
        ),
        (
            "tell me what's in photo.jpg and what's said in meeting.wav",
            [
                ("image-classification", {"image": "photo.jpg"}),
                ("automatic-speech-recognition", {"audio": "meeting.wav"}),
            ],
        ),
        (
            "summarize notes.txt and read it aloud",
            [("summarization", {"text": "notes.txt"}), ("text-to-speech", {"text": "<node-0>"})],
        ),
        (
            'how similar are "a cat sat" and "a dog ran"',
            [("sentence-similarity", {"text": "a cat sat", "other": "a dog ran"})],
        ),
    ],
)
def test_everyday_phrasings(request_, expected):
    plan = validate(plan_offline(request_, MORE), MORE)
    assert [(s.task, s.args) for s in plan.subtasks] == expected


def test_input_names_match_whole_words_only():
    plan = plan_offline("transcribe data.wav", {"a.wav": "audio", "data.wav": "audio"})
    assert plan.subtasks[0].args == {"audio": "data.wav"}
