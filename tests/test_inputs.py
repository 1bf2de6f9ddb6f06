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
