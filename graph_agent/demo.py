"""`make demo`: make real inputs offline, then run one multi-step request end to end.

The meeting recording is spoken by the pack's Piper voice and the photo is the sample image
matplotlib ships, so the demo downloads nothing at run time.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from graph_agent.cli import main as cli_main
from graph_agent.context import default_models_dir, graph_agent_home

MEETING_SCRIPT = (
    "Good morning, team. Revenue rose twelve percent this quarter, mainly because of the new "
    "online store. We decided to hire two more engineers next month. The budget review is "
    "moved to Friday."
)
REQUEST = "transcribe meeting.wav, summarize it in one sentence, and tell me what is in photo.jpg"
VOICE = "piper-en-us-joe-medium"


def sample_photo() -> Path:
    """The Grace Hopper portrait inside matplotlib's package data."""
    import matplotlib

    photo = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    if not photo.is_file():
        raise FileNotFoundError(f"matplotlib's sample photo is missing at {photo}")
    return photo


def speak(text: str, out: Path, models_dir: Path | None = None) -> Path:
    """Synthesize ``text`` to ``out`` with the pack's Piper voice."""
    from graph_agent.tools import ToolCall, get_tool
    from graph_agent.tools.artifacts import ArtifactStore

    voice = (models_dir or default_models_dir()) / VOICE
    store = ArtifactStore(out.parent / ".tts")
    result = get_tool("text-to-speech", "piper").run(
        str(voice), ToolCall(args={"text": text}, artifacts=store)
    )
    shutil.move(result.path, out)
    shutil.rmtree(store.root, ignore_errors=True)
    return out


def make_inputs(where: Path) -> dict[str, Path]:
    where.mkdir(parents=True, exist_ok=True)
    meeting = where / "meeting.wav"
    if not meeting.is_file():
        speak(MEETING_SCRIPT, meeting)
    photo = where / "photo.jpg"
    if not photo.is_file():
        shutil.copy(sample_photo(), photo)
    return {"meeting.wav": meeting, "photo.jpg": photo}


def main() -> int:
    inputs = make_inputs(graph_agent_home() / "demo")
    print(f"Spoken text in meeting.wav: {MEETING_SCRIPT}\n", flush=True)
    argv = ["run", REQUEST, *(a for n, p in inputs.items() for a in ("--input", f"{n}={p}"))]
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
