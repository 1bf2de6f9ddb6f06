"""YAMNet's 521 AudioSet sound classes (issue 27), run on its real 8-bit ONNX weights from
the pack, with its log-mel input computed here in numpy: real speech (the pack's Piper
voice, as the other speech tests make it), a pure tone and white noise made with numpy.

The model is in the default pack, which the test command installs, so a missing model
fails (``pack_model_dir``) rather than skipping.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from graph_agent.cli import main
from graph_agent.retrieval_index.search import select, step_query
from graph_agent.retrieval_index.service import open_index
from graph_agent.tools import ToolCall, get_tool
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.yamnet import PATCH, RATE, log_mel_patches, mel_matrix

YAMNET, YAMNET_ID = "yamnet", "google/yamnet"


def _wav(tmp_path, name: str, wave: np.ndarray, rate: int = RATE):
    path = tmp_path / name
    sf.write(path, wave.astype(np.float32), rate)
    return path


def _tone(seconds: float = 3.0, hz: float = 1000.0, rate: int = RATE) -> np.ndarray:
    return 0.3 * np.sin(2 * np.pi * hz * np.arange(int(seconds * rate)) / rate)


def _classify(pack_model_dir, audio, tmp_path):
    tool = get_tool("audio-classification", "yamnet")
    assert tool.library == "yamnet"  # the card's library picks this back end
    call = ToolCall(args={"audio": str(audio)}, artifacts=ArtifactStore(tmp_path))
    return tool.run(str(pack_model_dir(YAMNET)), call)


def test_patches_follow_yamnet_framing():
    # 3 s: 298 frames of 25 ms every 10 ms, so six 96-frame patches every 48 frames, the
    # last completed with silence (as YAMNet pads); a 0.25 s beep still makes one patch.
    assert log_mel_patches(np.zeros(3 * RATE)).shape == (6, 1, PATCH, 64)
    assert log_mel_patches(np.zeros(RATE // 4)).shape == (1, 1, PATCH, 64)
    assert float(log_mel_patches(np.zeros(RATE)).min()) == pytest.approx(np.log(0.001))
    # A 1 kHz tone's energy is in the mel band whose peak is nearest 1 kHz.
    loudest = int(log_mel_patches(_tone())[0, 0].mean(axis=0).argmax())
    bin_hz = np.linspace(0, RATE / 2, 257)
    assert abs(bin_hz[mel_matrix()[:, loudest].argmax()] - 1000) < 60


def test_speech_is_speech(pack_model_dir, speech_wav, tmp_path):
    wav, _ = speech_wav  # Piper's voice at 22.05 kHz: resampled to 16 kHz on the way in
    out = _classify(pack_model_dir, wav, tmp_path)
    assert out.kind == "labels" and out.text == "Speech" and out.confidence > 0.9
    assert len(out.data) == 5 and [d["score"] for d in out.data] == sorted(
        (d["score"] for d in out.data), reverse=True
    )


def test_a_pure_tone_is_a_beep_or_sine_wave(pack_model_dir, tmp_path):
    out = _classify(pack_model_dir, _wav(tmp_path, "tone.wav", _tone()), tmp_path)
    labels = [d["label"] for d in out.data]
    # Measured: "Beep, bleep" 0.95, then "Sine wave". (A 440 Hz tone is heard as a dial
    # tone, "Telephone": 440 Hz is the dial tone's pitch, so this test uses 1 kHz.)
    assert out.text == "Beep, bleep" and out.confidence > 0.8
    assert "Sine wave" in labels[:3]
    assert "Speech" not in labels[:2]


def test_white_noise_is_noise(pack_model_dir, tmp_path):
    noise = 0.3 * np.random.default_rng(0).standard_normal(3 * RATE)
    out = _classify(pack_model_dir, _wav(tmp_path, "noise.wav", noise), tmp_path)
    labels = [d["label"] for d in out.data]
    assert out.text == "White noise"
    assert {"Noise", "Static"} <= set(labels)
    assert "Speech" not in labels and "Beep, bleep" not in labels


def test_silence_is_silence(pack_model_dir, tmp_path):
    out = _classify(pack_model_dir, _wav(tmp_path, "quiet.wav", np.zeros(2 * RATE)), tmp_path)
    assert out.text == "Silence" and out.confidence > 0.9  # measured 0.99


@pytest.mark.parametrize(
    ("request_", "chosen"),
    [
        ("is that speech or music in clip.wav", True),
        ("what sounds are in clip.wav", True),
        ("is there a dog barking in clip.wav", True),
        ("which bird species is singing in birds.wav", False),
        ("who is speaking in clip.wav", False),
    ],
)
def test_the_yamnet_card_is_chosen_for_kinds_of_sound_only(pack_model_dir, request_, chosen):
    index = open_index(pack_model_dir(YAMNET).parent)
    found = select(
        index, "audio-classification", step_query("audio-classification", None, request_)
    )
    ids = [c.id for c in found.candidates]
    if chosen:
        assert ids[:1] == [YAMNET_ID], found.reason
    else:
        assert YAMNET_ID not in ids
        assert "not for" in " ".join(found.rejected[YAMNET_ID]), found.rejected
        assert "No model here can do this audio-classification" in found.reason


def test_the_card_lists_the_521_audioset_labels(pack_model_dir):
    card = json.loads((pack_model_dir(YAMNET) / "graph-agent-card.json").read_text())
    assert len(card["labels"]) == 521 and card["labels"][0] == "Speech"
    assert {"Music", "White noise", "Sine wave", "Bird"} <= set(card["labels"])
    assert card["license"] == "apache-2.0" and "states no licence" in card["license_note"]


def test_speech_or_music_runs_yamnet_end_to_end(capsys, pack_model_dir, speech_wav, tmp_path):
    pack_model_dir(YAMNET)
    wav, _ = speech_wav
    args = ["is that speech or music in clip.wav", "--input", f"clip.wav={wav}"]
    assert main(["run", *args, "--artifacts-dir", str(tmp_path / "a"), "--json"]) == 0
    final = json.loads(capsys.readouterr().out)
    (step,) = final["report"]["steps"]
    assert (step["task"], step["model"], step["status"]) == (
        "audio-classification",
        YAMNET_ID,
        "ok",
    )
    assert final["outputs"]["node-0"] == "Speech"
