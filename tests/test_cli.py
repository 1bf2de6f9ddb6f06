"""The CLI's handling of bad input: one clear message and exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from graph_agent.cli import EXIT_USAGE, main


@pytest.fixture
def wav(speech_wav):
    return speech_wav[0]


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graph_agent.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=300,
        check=False,
    )


def test_missing_file(capsys, tmp_path):
    code = main(["run", "transcribe meeting.wav", "--input", f"meeting.wav={tmp_path}/nope.wav"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "meeting.wav" in err and "does not exist" in err
    # A folder where the file was meant is named as such.
    code = main(["plan", "read page.jpg", "--input", f"page.jpg={tmp_path}"])
    assert code == EXIT_USAGE
    err = " ".join(capsys.readouterr().err.split())  # the console wraps long paths
    assert "Input 'page.jpg':" in err and "is a folder, not a file." in err


def test_empty_request(capsys):
    assert main(["run", "  "]) == EXIT_USAGE
    assert "request is empty" in capsys.readouterr().err


def test_image_where_audio_is_needed_in_a_real_process(sample_photo):
    proc = _run_cli("run", "transcribe photo.jpg", "--input", f"photo.jpg={sample_photo}")
    assert proc.returncode == EXIT_USAGE, proc.stderr
    combined = proc.stdout + proc.stderr
    assert "needs audio, but 'photo.jpg' is an image" in combined
    assert "Traceback" not in combined


def test_audio_where_image_is_needed(capsys, wav):
    # An unmistakably visual task: an unsure one ("what is in clip.wav") is read as the
    # likeliest task that can take audio (planning/decoding.py).
    code = main(["run", "detect the objects in clip.wav", "--input", f"clip.wav={wav}"])
    captured = capsys.readouterr()
    assert code == EXIT_USAGE
    assert "needs image, but 'clip.wav' is audio" in captured.out + captured.err


def test_bare_input_path_uses_the_file_name(capsys, wav):
    assert main(["plan", "transcribe meeting.wav", "--input", str(wav)]) == 0
    assert '"audio": "meeting.wav"' in capsys.readouterr().out
