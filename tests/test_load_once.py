"""Loads that must happen once with threads about: the lazy imports loaders share (imported one
at a time, before a load reserves memory) and the card index's sentence-transformers model.

Fake modules and loaders only: nothing here imports transformers or loads a model.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types
import uuid
from typing import Any

from polling import wait_until

from graph_agent.common import first_imports as fi
from graph_agent.retrieval_index import embedder
from graph_agent.tools import pipeline_cache as pc
from graph_agent.tools.pipeline_cache import MB, PipelineCache
from graph_agent.tools.registry import get_tool
from graph_agent.tools.spec import TaskTool


def test_warm_imports_imports_each_module_once_and_one_at_a_time(monkeypatch):
    imported: list[str] = []
    inside, most, guard = [0], [0], threading.Lock()

    def fake_import(name: str) -> None:
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        imported.append(name)
        with guard:
            inside[0] -= 1

    monkeypatch.setattr(fi, "_warmed", set(), raising=False)
    monkeypatch.setattr(fi, "import_module", fake_import)  # only the name warm_imports uses
    barrier = threading.Barrier(4)

    def warm(names: tuple[str, ...]) -> None:
        barrier.wait()
        fi.warm_imports(*names)

    jobs = [("fake.one", "fake.two"), ("fake.two",), ("fake.one",), ("fake.one", "fake.two")]
    threads = [threading.Thread(target=warm, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(2)
    assert sorted(imported) == ["fake.one", "fake.two"] and most[0] == 1


def test_a_failed_warm_up_is_left_to_the_loader_and_tried_again(monkeypatch):
    monkeypatch.setattr(fi, "_warmed", set(), raising=False)
    fi.warm_imports("graph_agent_no_such_module")  # no error here: the loader reports it
    assert "graph_agent_no_such_module" not in fi._warmed


def test_the_cache_warms_a_loads_imports_before_reserving_its_room(monkeypatch):
    seen: list[tuple[tuple[str, ...], int]] = []
    cache = PipelineCache(100, device="cpu", estimate=lambda o, p: MB, pre_estimate=lambda p: MB)
    monkeypatch.setattr(pc, "warm_imports", lambda *names: seen.append((names, cache._reserved)))
    cache.get("k", "a", lambda p: object(), imports=["fake.module"])
    cache.get("k", "a", lambda p: object(), imports=["fake.module"])  # a hit: no load, no warm-up
    assert seen == [(("fake.module",), 0)]


def test_tools_declare_the_imports_their_loaders_make(tmp_path):
    voice, tts = tmp_path / "voice", tmp_path / "tts"  # a Piper voice, a transformers TTS model
    voice.mkdir()
    tts.mkdir()
    (voice / "en_US-joe-medium.onnx").write_bytes(b"")
    transformers = (fi.TRANSFORMERS_PIPELINES,)
    for task in ("text-generation", "visual-question-answering"):
        assert get_tool(task).lazy_imports(str(tts)) == transformers
    # Speech recognition also runs the speech detector (ONNX) that cuts long recordings.
    asr = get_tool("automatic-speech-recognition").lazy_imports(str(tts))
    assert asr == (*transformers, "onnxruntime")
    assert get_tool("feature-extraction").lazy_imports(str(tts)) == (fi.SENTENCE_TRANSFORMERS,)
    # The card's library picks the back end, not the files in the folder: a Piper voice
    # costs no transformers import, and a folder with an .onnx file is not taken for one.
    piper = get_tool("text-to-speech", "piper")
    assert piper.library == "piper" and piper.lazy_imports(str(voice)) == ("onnxruntime", "piper")
    assert get_tool("text-to-speech").lazy_imports(str(voice)) == transformers
    assert get_tool("text-to-speech").lazy_imports(str(tts)) == transformers

    # A loader from outside the package (a test's fake) pays for no transformers import.
    assert _tool(make_loader=lambda path: object()).lazy_imports("m") == ()
    assert _tool(imports=("fake.module",)).lazy_imports("m") == ("fake.module",)
    by_folder = _tool(imports=lambda model_dir: [f"fake.{model_dir}"])
    assert by_folder.lazy_imports("m") == ("fake.m",)


def _tool(**settings: Any) -> TaskTool:
    """A tool for these tests only, with ``settings`` (its loader and imports)."""
    return TaskTool(
        task="t",
        inputs=(),
        output="text",
        loader="x",
        call=lambda model, call: None,
        description="test only",
        **settings,
    )


def test_warming_a_piper_voice_imports_piper_and_onnxruntime_not_transformers(tmp_path):
    """In a fresh process, as on a server whose first call is text to speech."""
    (tmp_path / "voice.onnx").write_bytes(b"")
    script = (
        "import sys\n"
        "from graph_agent.common.first_imports import warm_imports\n"
        "from graph_agent.tools.registry import get_tool\n"
        f"warm_imports(*get_tool('text-to-speech', 'piper').lazy_imports({str(tmp_path)!r}))\n"
        "print(sorted(m for m in ('piper', 'onnxruntime', 'transformers', 'torch')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split("\n")[-2] == "['onnxruntime', 'piper']"


class CountingLock:
    """A lock that counts the threads that reached it, so a test knows all are queued."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.arrived = 0
        self._count = threading.Lock()

    def __enter__(self) -> None:
        with self._count:
            self.arrived += 1
        self.lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()


def test_concurrent_first_calls_load_the_sentence_transformer_once(monkeypatch):
    constructed: list[str] = []
    entered, release = threading.Event(), threading.Event()

    class FakeSentenceTransformer:
        def __init__(self, path: str, **kwargs: Any) -> None:
            constructed.append(path)
            entered.set()
            release.wait(2)

    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    monkeypatch.setattr(fi, "_warmed", set(), raising=False)
    lock = CountingLock()
    monkeypatch.setattr(embedder, "_LOAD_LOCK", lock, raising=False)
    path = f"/nonexistent/minilm-{uuid.uuid4().hex}"  # no other test has it cached
    got: list[Any] = []
    threads = [
        threading.Thread(target=lambda: got.append(embedder.load_sentence_transformer(path)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    try:
        assert entered.wait(2)
        assert wait_until(lambda: lock.arrived == 4 or len(constructed) > 1)  # all four are in
    finally:
        release.set()
        for thread in threads:
            thread.join(2)
    assert constructed == [path]
    assert len(got) == 4 and all(model is got[0] for model in got)
    assert embedder.load_sentence_transformer(path) is got[0]
