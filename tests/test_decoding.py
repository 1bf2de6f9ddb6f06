"""Clause labels as a sequence: a step whose image, audio or table nothing provides pays a
penalty."""

from __future__ import annotations

import numpy as np
import pytest

from graph_agent.planning.batch import inputs_named_in
from graph_agent.planning.decoding import (
    MEDIA_PENALTY,
    label_sequence,
    media_mask,
    needed_media,
    table_mask,
)
from graph_agent.planning.offline import detector, plan_offline
from graph_agent.planning.plan import validate

LABELS = ("text-to-image", "image-classification", "automatic-speech-recognition", "none")
IMAGE = media_mask(["image"])


def _decode(rows: list[list[float]], start_media: int = 0) -> list[str]:
    return label_sequence(np.log(np.array(rows) + 1e-9), LABELS, "none", start_media)


def test_media_mask_reads_image_audio_and_table_only():
    assert media_mask([]) == 0
    assert media_mask(["text", None, "video"]) == 0
    assert media_mask(["image", "text"]) == IMAGE
    assert media_mask(["audio", "image"]) == 3
    assert media_mask(["table", "image"]) == 5


QA_LABELS = ("question-answering", "visual-question-answering", "table-question-answering", "none")


def _decode_qa(rows: list[list[float]], start_media: int = 0, **kw) -> list[str]:
    folds = {"visual-question-answering": "question-answering"}
    return label_sequence(
        np.log(np.array(rows) + 1e-9), QA_LABELS, "none", start_media, folds=folds, **kw
    )


def test_a_table_question_needs_a_table():
    table = table_mask(["sales.csv", "notes.txt"])
    assert table and needed_media("table-question-answering") == table
    assert table_mask(["photo.jpg", "notes.txt", "data.json"]) == 0
    row = [0.25, 0.0, 0.45, 0.3]  # "how many ppl in group.jpg", read as about a table
    assert _decode_qa([row], start_media=IMAGE) == ["none"]
    assert _decode_qa([row], start_media=IMAGE | table) == ["table-question-answering"]


def test_a_question_put_to_a_picture_that_is_not_there_is_a_question():
    # "who painted the Mona Lisa?": the picture question's odds go to question answering
    # when the request has no media at all...
    row = [0.2, 0.5, 0.0, 0.3]
    assert _decode_qa([row]) == ["question-answering"]
    # ...and stay with the picture when there is one.
    assert _decode_qa([row], start_media=IMAGE) == ["visual-question-answering"]


def test_a_clause_that_names_its_files_asks_about_those():
    # "translate notes.txt and caption photo.jpg": the picture is in the request, but the
    # first clause names only a text file, so a picture task pays there.
    labels = ("translation", "image-to-text", "object-detection", "none")
    log = np.log(np.array([[0.4, 0.5, 0.0, 0.1]]) + 1e-9)

    def decode(own: list[int | None]) -> list[str]:
        return label_sequence(log, labels, "none", IMAGE, clause_media=own)

    assert decode([None]) == ["image-to-text"]
    assert decode([0]) == ["translation"]
    assert decode([IMAGE]) == ["image-to-text"]


def test_a_task_without_its_image_gives_way_to_the_next_likeliest_that_can_run():
    # Image classification is likelier on its own, but nothing gives it an image.
    row = [0.4, 0.5, 0.0, 0.1]
    assert _decode([row]) == ["text-to-image"]
    # With an image in the request, the classifier's choice stands.
    assert _decode([row], start_media=IMAGE) == ["image-classification"]


def test_an_earlier_step_provides_the_image():
    rows = [
        [0.9, 0.05, 0.0, 0.05],  # text-to-image makes an image ...
        [0.1, 0.6, 0.25, 0.05],  # ... that image classification then reads
    ]
    assert _decode(rows) == ["text-to-image", "image-classification"]
    # Speech recognition has no audio from anywhere: with the penalty it is not chosen
    # even where the classifier slightly prefers it.
    rows[1] = [0.1, 0.3, 0.5, 0.1]
    assert _decode(rows) == ["text-to-image", "image-classification"]


def test_a_clause_the_classifier_is_sure_of_keeps_its_label():
    # The penalty is soft: log(0.98 / 0.01) is far above it.
    assert np.log(0.98 / 0.01) > MEDIA_PENALTY
    assert _decode([[0.01, 0.98, 0.0, 0.01]]) == ["image-classification"]


def test_clauses_that_ask_for_nothing_stay_none_and_no_clauses_give_no_labels():
    assert _decode([[0.05, 0.05, 0.0, 0.9], [0.7, 0.1, 0.1, 0.1]]) == ["none", "text-to-image"]
    assert label_sequence(np.zeros((0, 4)), LABELS, "none", 0) == []


def test_a_penalty_of_zero_is_the_likeliest_label_per_clause():
    rows = np.log(np.array([[0.4, 0.5, 0.0, 0.1], [0.2, 0.1, 0.6, 0.1]]) + 1e-9)
    assert label_sequence(rows, LABELS, "none", 0, media_penalty=0.0) == [
        LABELS[int(i)] for i in rows.argmax(1)
    ]


# Clause by clause, each of these planned a step with no image or audio to read, and the
# validator rejected the plan; as a sequence, the step that makes the input comes first.
@pytest.mark.parametrize(
    ("request_text", "tasks"),
    [
        (
            "I wrote the line 'Welcome aboard, everyone.' for a voiceover but it sounds "
            "muffled. Could you improve the audio quality and then transcribe it?",
            ["text-to-speech", "audio-to-audio", "automatic-speech-recognition"],
        ),
        (
            "I have a description in notes.txt that I want to turn into a picture. "
            "Then detect the objects in the picture you made.",
            ["text-to-image", "object-detection"],
        ),
        (
            "Take the text 'A lighthouse at dusk.' and visualize it, then find the objects "
            "in the created image",
            ["text-to-image", "object-detection"],
        ),
    ],
)
def test_the_step_that_makes_the_missing_input_is_planned(models_dir, request_text, tasks):
    if detector(models_dir) is None:
        pytest.fail(f"task detector unavailable (models {models_dir})")
    types = inputs_named_in(request_text)
    plan = validate(plan_offline(request_text, types, models_dir), types)
    assert [s.task for s in plan.subtasks] == tasks
    assert all(s.deps == [f"node-{i - 1}"] for i, s in enumerate(plan.subtasks) if i)
    assert not plan.repairs
