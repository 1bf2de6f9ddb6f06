"""How the user's inputs are read: files by kind, literal text of any length, clear errors."""

from __future__ import annotations

import pytest

from graph_agent.errors import RequestError
from graph_agent.inputs import input_types, input_value


def test_literal_text_of_any_length_is_text_not_a_crash():
    long_text = "The quarterly report says revenue grew. " * 40  # far past NAME_MAX
    inputs = {"notes": long_text, "nul": "a\0b", "minutes.txt": "Present: Ann.\nAgenda: budget."}
    # A sentence that ends in a file name, or any text under a file-like name, is text.
    inputs |= {"ask": "Please summarize chapter 3 of thesis.docx", "memo.txt": "Lunch at noon."}
    assert set(input_types(inputs).values()) == {"text"}
    assert input_value("notes", inputs, "text") == long_text


def test_files_are_read_by_kind_and_a_missing_file_is_a_clear_error(tmp_path, sample_photo):
    notes = tmp_path / "notes.txt"
    notes.write_text("Lunch is at noon.", encoding="utf-8")
    inputs = {"notes.txt": str(notes), "photo.jpg": str(sample_photo)}
    assert input_types(inputs) == {"notes.txt": "text", "photo.jpg": "image"}
    assert input_value("notes.txt", inputs, "text") == "Lunch is at noon."
    assert input_value("photo.jpg", inputs, "image") == str(sample_photo.resolve())
    with pytest.raises(RequestError, match="does not exist"):
        input_types({"a.wav": str(tmp_path / "missing.wav")})
    # A folder where a file was meant says so, not that the path is missing.
    with pytest.raises(RequestError, match="is a folder, not a file"):
        input_types({"page.jpg": str(tmp_path)})
    with pytest.raises(RequestError, match="is a folder, not a file"):
        input_types({"photos": str(tmp_path)})  # no suffix anywhere: still a path
    with pytest.raises(RequestError, match="does not exist"):
        input_types({"scan": str(tmp_path / "My Scans" / "page 1.png")})


def test_a_path_written_in_the_request_binds_to_its_input(tmp_path):
    from graph_agent.inputs import bind_named_paths

    talk = tmp_path / "talk.wav"
    talk.write_bytes(b"RIFF")
    # The user wrote the path and passed that file (named by its base name).
    request = "write a summary of this speech ./data/audios/talk.wav"
    bound, notes = bind_named_paths(request, {"talk.wav": str(talk)})
    assert bound == {"./data/audios/talk.wav": str(talk)} and len(notes) == 1
    # Absolute, home-relative and Windows-style paths, by the file itself or its base name.
    for written in (str(talk), "~/x/talk.wav", r"C:\Users\ana\talk.wav"):
        bound, _ = bind_named_paths(f"transcribe {written}", {"talk.wav": str(talk)})
        assert list(bound.values()) == [str(talk)] and len(bound) == 1, written
    # Two inputs with that base name: ambiguous, nothing is bound.
    two = {"a/talk.wav": "/x/a/talk.wav", "b/talk.wav": "/x/b/talk.wav"}
    assert bind_named_paths("transcribe ./c/talk.wav", two)[0] == two
    # A request that names the input itself keeps it.
    same = {"talk.wav": str(talk)}
    assert bind_named_paths("transcribe talk.wav", same) == (same, [])


def test_the_cli_plans_a_request_that_names_its_input_by_path(tmp_path, monkeypatch, capsys):
    from graph_agent.cli import main

    (tmp_path / "data").mkdir()
    notes = tmp_path / "data" / "notes.txt"
    notes.write_text("The ferry leaves at noon.", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # Before: "'./data/notes.txt' is not one of the inputs (inputs given: notes.txt)".
    assert main(["plan", "summarize ./data/notes.txt", "--input", "./data/notes.txt"]) == 0
    out = capsys.readouterr()
    assert '"text": "./data/notes.txt"' in out.out
    assert "'./data/notes.txt' in the request is the input 'notes.txt'" in out.err


def test_the_cli_takes_a_file_the_request_names_by_an_existing_path(tmp_path, capsys):
    """The CLI's user is the operator: a path they write that exists is an input (and said
    so). The server never does this: its inputs come only from the run's inputs."""
    from graph_agent.cli.run import _with_named_files

    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    inputs = _with_named_files(f"summarize {notes} and {tmp_path}/missing.txt", {})
    assert inputs == {str(notes): str(notes.resolve())}
    err = " ".join(capsys.readouterr().err.split())  # the console wraps long lines
    assert "is named in the request and exists: read as an input" in err


def test_the_graph_binds_a_path_in_the_request_to_its_input(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    from graph_agent import Context, build_graph

    notes = tmp_path / "notes.txt"
    notes.write_text("The ferry leaves at noon and comes back at six.", encoding="utf-8")
    graph = build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "bind"}}
    graph.invoke(
        {"request": "summarize ./docs/notes.txt", "inputs": {"notes.txt": str(notes)}},
        config,
        context=Context(approve_plan=True, artifacts_dir=str(tmp_path / "a")),
    )
    state = graph.get_state(config).values
    assert not state.get("error"), state.get("error")
    assert state["inputs"] == {"./docs/notes.txt": str(notes)}
    assert state["plan"]["subtasks"][0]["args"] == {"text": "./docs/notes.txt"}
    planned = next(d for d in state["decisions"] if d.get("decision") == "planned")
    assert planned["inputs_bound"] == ["'./docs/notes.txt' in the request is the input 'notes.txt'"]
