"""Every bad input is one clear error, and big inputs are bounded in time and memory.

Each case runs the real ``graph-agent`` command in a fresh process, as a user would, and
checks the exit code (2: bad input, 1: failed steps), the message, that no traceback or abort
came out, and for the big inputs the wall time and the process's peak RSS.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
import wave
import zlib
from pathlib import Path

import numpy as np
import pytest

#: Runs the command and prints its exit code and its peak RSS in KB (Linux ru_maxrss).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'\\n@@ {code} {peak}', file=sys.stderr)\n"
)


def graph_agent(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """``graph-agent ARGS`` in a fresh process: (exit code, stdout, all it printed with
    whitespace collapsed, seconds, peak RSS in MB). A run's errors are its answer (stdout),
    the command's own go to stderr; the tests read both."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "graph_agent.cli", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    err = proc.stderr.decode("utf-8", "replace")
    head, _, tail = err.rpartition("\n@@ ")
    code, peak_kb = (int(x) for x in tail.split())
    out = proc.stdout.decode("utf-8", "replace")
    assert "Traceback" not in out + head, out + head
    assert code not in (134, -6), f"aborted: {head[-2000:]}"
    return code, out, " ".join((out + head).split()), seconds, peak_kb / 1024


# --------------------------------------------------------------------------- clear errors


def test_a_request_that_is_not_utf8_is_one_clear_error():
    proc = subprocess.run(
        [sys.executable, "-m", "graph_agent.cli", "plan", b"transcribe \xff\xfe talk.wav"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = " ".join(proc.stderr.decode("utf-8", "replace").split())
    assert proc.returncode == 2, err
    assert "not valid UTF-8 text (byte 0xff" in err and "Traceback" not in err


def test_constraints_that_are_not_an_object_are_one_clear_error():
    code, _, err, _, _ = graph_agent("run", "summarize this: hi there.", "--constraints", "[1,2]")
    assert code == 2 and "--constraints must be a JSON object" in err


def test_a_text_file_without_a_suffix_is_read_not_ignored(tmp_path):
    """It used to be ignored, and the words 'summarize notes.txt' were summarised."""
    notes = tmp_path / "notes"
    notes.write_text("Ceci est un texte.\nLe train part à midi.\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(notes)
    from graph_agent.inputs import input_types, input_value

    types = input_types({"notes.txt": str(notes), "other.txt": str(link)})
    assert types == {"notes.txt": "text", "other.txt": "text"}
    assert "Le train part à midi." in input_value("notes.txt", {"notes.txt": str(notes)}, "text")
    code, out, err, _, _ = graph_agent(
        "plan", "summarize notes.txt", "--input", f"notes.txt={notes}"
    )
    assert code == 0, err
    assert 'summarization  {"text": "notes.txt"}' in out


def test_a_binary_file_without_a_suffix_is_not_taken_for_text(tmp_path):
    blob = tmp_path / "blob"
    blob.write_bytes(bytes(range(256)) * 8)
    from graph_agent.inputs import input_types

    assert input_types({"blob": str(blob)}) == {"blob": None}


def test_a_damaged_image_is_one_clear_error_not_a_missing_model(tmp_path, sample_photo):
    broken = tmp_path / "photo.jpg"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2000))
    code, out, err, _, _ = graph_agent(
        "run", "describe photo.jpg", "--input", f"photo.jpg={broken}"
    )
    assert code == 2, out + err
    assert "photo.jpg could not be read as an image" in err
    assert "No model in the catalog" not in out + err


@pytest.mark.parametrize("request_", ["order a pizza", "Can you please book a flight to Paris"])
def test_an_errand_no_model_can_do_is_refused_not_chatted_about(request_):
    code, out, err, _, _ = graph_agent("run", request_)
    assert code == 2, out + err
    assert "No model here can do that" in err
    assert "happy to" not in out.lower()


def test_writing_about_an_errand_is_still_planned():
    code, out, err, _, _ = graph_agent("plan", "write an email ordering a pizza for the team")
    assert code == 0, err
    assert "text-generation" in out


def test_onnx_runtime_writes_no_telemetry_outside_our_folders(tmp_path):
    # As on a user's machine: ONNX Runtime stays quiet by itself when CI is set.
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "CI")}
    env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    script = "import graph_agent, onnxruntime; onnxruntime.get_available_providers()"
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
    assert not (tmp_path / ".cache" / "Microsoft").exists()
    # The switch is what stops it: without graph_agent, ONNX Runtime writes its queue there.
    other = tmp_path / "other"
    env |= {"HOME": str(other), "XDG_CACHE_HOME": str(other / ".cache")}
    subprocess.run([sys.executable, "-c", "import onnxruntime"], env=env, check=True, timeout=120)
    assert (other / ".cache" / "Microsoft").exists()


# --------------------------------------------------------------------------- bounded work


def _huge_png(path: Path, width: int, height: int) -> Path:
    """A valid, highly compressible PNG of ``width`` x ``height`` black pixels (530 KB for
    13000 x 13000), written row by row so the test itself stays small in memory."""
    raw = zlib.compressobj(9)
    row = b"\x00" + b"\x00" * (3 * width)
    body = b"".join(raw.compress(row) for _ in range(height)) + raw.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )
    return path


def test_a_13000_pixel_square_image_is_refused_fast_and_small(tmp_path):
    big = _huge_png(tmp_path / "big.png", 13000, 13000)
    code, out, err, seconds, peak_mb = graph_agent(
        "run", "what is in big.png", "--input", f"big.png={big}"
    )
    print(f"13000x13000 PNG ({big.stat().st_size // 1000} KB): {seconds:.1f} s, {peak_mb:.0f} MB")
    assert code == 2, out + err
    assert "big.png is too large an image (13000 x 13000)" in err
    assert "GRAPH_AGENT_MAX_IMAGE_PIXELS" in err
    assert peak_mb < 1500, f"{peak_mb:.0f} MB: the image was decoded"


def test_a_fifteen_minute_recording_is_refused_at_once(tmp_path):
    """Ten minutes are transcribed in pieces (tests/test_long_audio.py); past the bound the
    file is refused from its header, before it is decoded, saying how to split it."""
    talk = tmp_path / "talk.wav"
    with wave.open(str(talk), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(np.zeros(16000 * 900, dtype="<i2").tobytes())
    code, out, err, seconds, peak_mb = graph_agent(
        "run", "transcribe talk.wav", "--input", f"talk.wav={talk}"
    )
    print(f"15-minute WAV: {seconds:.1f} s, {peak_mb:.0f} MB")
    assert code == 2, out + err
    assert "talk.wav is too long a recording: 900 seconds; the limit is 600 seconds" in err
    assert "parts of at most 10 minutes" in err
    assert seconds < 60


def test_a_120_kb_request_is_refused_fast_and_small():
    """It reached 4.6 GB and ran past 300 s. (One argument can hold at most 128 KB on Linux;
    the 200 KB case goes through the server, in test_server_security.py.)"""
    pasted = ("The committee reviewed the budget and agreed to revisit it next spring. " * 2000)[
        :120_000
    ]
    code, out, err, seconds, peak_mb = graph_agent("run", f"summarize this: {pasted}")
    print(f"120 KB request: {seconds:.1f} s, {peak_mb:.0f} MB")
    assert code == 2, out[-500:] + err[-500:]
    assert "The request and its text are too long" in err
    assert "GRAPH_AGENT_MAX_TEXT_CHARS" in err
    assert seconds < 60 and peak_mb < 2500


def test_a_step_timeout_ends_the_cli_with_exit_1_not_an_abort(speech_wav, tmp_path):
    """It used to print the report, then 'terminate called without an active exception'
    (SIGABRT, exit 134). Now the timed-out call is stopped and the run fails cleanly."""
    wav, _ = speech_wav
    code, out, err, seconds, _ = graph_agent(
        "run",
        "transcribe talk.wav",
        "--input",
        f"talk.wav={wav}",
        "--json",
        env={"GRAPH_AGENT_SUBTASK_TIMEOUT_S": "0.3", "GRAPH_AGENT_ARTIFACTS_DIR": str(tmp_path)},
    )
    assert code == 1, err[-2000:]
    report = json.loads(out)["report"]
    problems = " ".join(p for s in report["steps"] for p in s.get("problems") or [])
    assert "timed out after 0.3 s" in problems
    assert "the call was stopped" in problems  # stopped, not left running in a thread
    assert seconds < 120
