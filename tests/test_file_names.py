"""One suffix table: the planner, the validator, the batch path and the input reader agree
on which names are files. Each case below was read differently by one of them before the
table was shared."""

from __future__ import annotations

import pytest

from graph_agent.errors import RequestError
from graph_agent.file_names import FILE_KINDS, file_kind, files_named_in, is_file_name
from graph_agent.inputs import input_types
from graph_agent.planning.batch import inputs_named_in
from graph_agent.planning.clauses import split_clauses
from graph_agent.planning.plan import Plan, PlanError, Subtask, validate


def test_every_suffix_is_found_in_words_and_has_its_kind():
    for suffix, kind in FILE_KINDS.items():
        name = f"take_2{suffix.upper()}"
        assert files_named_in(f"please look at {name}, thanks") == [name], suffix
        assert file_kind(name) == kind and is_file_name(name)


def test_names_inside_web_addresses_or_longer_names_are_not_files():
    text = "see https://example.com/img/cat.jpg, photo.jpg.bak, take.mp3s and ~/pics/dog.png."
    assert files_named_in(text) == ["~/pics/dog.png"]


def test_words_or_several_lines_are_not_a_file_name():
    assert file_kind("notes\nand more.txt") is None
    assert not is_file_name("what is said in call.wav")
    assert files_named_in("version 1.2, e.g. example.com") == []


def test_the_planner_finds_a_file_the_validator_knows():
    # The planner's table lacked .opus, so the file stayed words in the clause.
    (clause,) = split_clauses("transcribe call.opus")
    assert clause.files == ["call.opus"]


def test_the_validator_knows_a_file_the_planner_knows():
    # The validator's table lacked .pdf: answering from the words "report.pdf" passed.
    plan = Plan(subtasks=[Subtask(id="node-0", task="summarization", args={"text": "report.pdf"})])
    with pytest.raises(PlanError, match=r"'report\.pdf' is not one of the inputs"):
        validate(plan, {})


def test_batch_inputs_include_paths_and_every_known_kind():
    found = inputs_named_in("Transcribe /data/calls/monday.m4a and summarize ./brief.pdf")
    assert found == {"/data/calls/monday.m4a": "audio", "./brief.pdf": "text"}


def test_a_missing_file_of_any_known_kind_is_an_error_not_text(tmp_path):
    # .m4a was not on the input reader's list: a mistyped path became the text of the input.
    with pytest.raises(RequestError, match="does not exist"):
        input_types({"call": str(tmp_path / "call.m4a")})
