"""The Apertium translator (issue 27): Debian's rule-based apertium with apertium-eng-spa,
run as a separate program for cards whose library is "apertium".

Everything runs the real program. .ci/run installs it when missing, and in CI (``CI=true``) a
missing program is a failure, not a skip; elsewhere (`make test` on a machine without it) the
tests skip with the command that installs it, as the browser tests do. The selector gives
English->Spanish and Spanish->English to it, keeps English->German on the chat model, and a
text in neither language goes to the next candidate after Apertium refuses it.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from polling import wait_until

from graph_agent.cli import main
from graph_agent.retrieval_index.search import select, step_query
from graph_agent.retrieval_index.service import open_index
from graph_agent.retrieval_index.sources.pack import pack_cards
from graph_agent.tools import ToolCall, get_tool
from graph_agent.tools.apertium import detect_language
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.errors import ModelUnavailableError, ToolError

PAIR = "apertium-eng-spa"
CARD = "apertium/apertium-eng-spa"
ENGLISH = "The house is red and the cat is black."
SPANISH = "La casa es roja y el gato es negro."


@pytest.fixture(scope="module", autouse=True)
def _apertium_installed() -> None:
    if shutil.which("apertium") is None:
        reason = "apertium is not installed: apt-get install apertium apertium-eng-spa"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (.ci/run does it; CI must run these tests)")
        pytest.skip(reason)


def _translate(pack_model_dir, tmp_path, text: str, target: str):
    tool = get_tool("translation", "apertium")
    assert tool.library == "apertium"  # the card's library picks this back end
    call = ToolCall(
        args={"text": text, "target_language": target}, artifacts=ArtifactStore(tmp_path)
    )
    return tool.run(str(pack_model_dir(PAIR)), call)


def test_english_into_spanish(pack_model_dir, tmp_path):
    out = _translate(pack_model_dir, tmp_path, ENGLISH, "Spanish")
    assert out.text == SPANISH
    assert out.extra["mode"] == "eng-spa" and out.extra["source_language"] == "English"


def test_spanish_into_english(pack_model_dir, tmp_path):
    out = _translate(pack_model_dir, tmp_path, SPANISH, "English")
    assert out.text == ENGLISH and out.extra["mode"] == "spa-eng"


def test_a_text_in_neither_language_is_refused_with_the_reason(pack_model_dir, tmp_path):
    with pytest.raises(ToolError, match=r"looks in French .*eng-spa mode translates English"):
        _translate(pack_model_dir, tmp_path, "Le chat est noir et la maison est rouge.", "Spanish")
    with pytest.raises(ToolError, match="looks already in Spanish"):
        _translate(pack_model_dir, tmp_path, SPANISH, "Spanish")


def test_a_target_outside_the_pair_is_refused(pack_model_dir, tmp_path):
    with pytest.raises(ToolError, match="between English and Spanish only, not into German"):
        _translate(pack_model_dir, tmp_path, ENGLISH, "German")


def test_langid_tells_the_two_languages_apart():
    assert detect_language(ENGLISH)[0] == "en" and detect_language(SPANISH)[0] == "es"
    assert detect_language(ENGLISH)[1] > 0.95 and detect_language(SPANISH)[1] > 0.95


def test_without_the_program_the_card_is_not_runnable_and_the_call_says_what_to_install(
    pack_model_dir, tmp_path, monkeypatch
):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without apertium
    (card,) = [c for c in pack_cards(pack_model_dir(PAIR).parent) if c.id == CARD]
    assert card.local_path is None and not card.runnable
    with pytest.raises(ModelUnavailableError, match="apt-get install apertium apertium-eng-spa"):
        get_tool("translation", "apertium").make_loader(str(pack_model_dir(PAIR)))
    monkeypatch.setenv("PATH", os.defpath)
    (card,) = [c for c in pack_cards(pack_model_dir(PAIR).parent) if c.id == CARD]
    assert card.runnable


@pytest.mark.parametrize(
    ("request_", "target", "chosen"),
    [
        (f"translate '{ENGLISH}' into Spanish", "es", True),
        (f"translate '{SPANISH}' into English", "en", True),
        (f"translate '{ENGLISH}' into German", "de", False),
    ],
)
def test_the_selector_gives_english_and_spanish_to_apertium_only(
    models_dir, request_, target, chosen
):
    index = open_index(models_dir)
    picked = select(
        index, "translation", step_query("translation", None, request_), language=target
    )
    ids = [c.id for c in picked.candidates]
    if chosen:
        assert ids[0] == CARD, picked.reason
        assert "dedicated to the task" in picked.candidates[0].why
    else:
        assert CARD not in ids and ids, picked.reason  # the chat models remain
        assert "works in en, es only" in picked.rejected[CARD][0]


def _run(capsys, request_: str, tmp_path) -> dict:
    assert main(["run", request_, "--json", "--artifacts-dir", str(tmp_path / "art")]) == 0
    return json.loads(capsys.readouterr().out)


def test_english_into_spanish_end_to_end(capsys, pack_model_dir, tmp_path):
    pack_model_dir(PAIR)
    final = _run(capsys, f"translate '{ENGLISH}' into Spanish", tmp_path)
    (step,) = final["report"]["steps"]
    assert step["task"] == "translation" and step["model"] == CARD  # the report names it
    assert step["status"] == "ok" and final["report"]["failures"] == []
    out = final["outputs"]["node-0"].lower()
    assert "casa" in out and "gato" in out
    assert CARD in final["answer"] or CARD in json.dumps(final["report"])


def test_spanish_into_english_end_to_end(capsys, pack_model_dir, tmp_path):
    pack_model_dir(PAIR)
    final = _run(capsys, f"translate '{SPANISH}' into English", tmp_path)
    (step,) = final["report"]["steps"]
    assert step["model"] == CARD and step["status"] == "ok"
    out = final["outputs"]["node-0"].lower()
    assert "house" in out and "cat" in out


def test_english_into_german_stays_on_the_chat_model(capsys, pack_model_dir, tmp_path):
    pack_model_dir(PAIR)
    final = _run(capsys, f"translate '{ENGLISH}' into German", tmp_path)
    (step,) = final["report"]["steps"]
    assert step["model"].startswith("Qwen/") and step["status"] == "ok"
    assert CARD not in step["candidates"] and all(t["model"] != CARD for t in step["tries"])
    assert "works in en, es only" in " ".join(step["ruled_out"][CARD])


def test_a_french_text_goes_to_the_next_candidate_after_apertium_refuses_it(
    capsys, pack_model_dir, tmp_path
):
    """The selector cannot know the text's language; the back end can, and refuses: the
    critic then retries with the next candidate, and the report shows both tries."""
    pack_model_dir(PAIR)
    final = _run(
        capsys, "translate 'Le chat est noir et la maison est rouge.' into Spanish", tmp_path
    )
    (step,) = final["report"]["steps"]
    first, second = step["tries"][:2]
    assert first["model"] == CARD and first["verdict"] != "accepted"
    assert "looks in French" in json.dumps(first)
    assert second["model"].startswith("Qwen/") and step["model"] == second["model"]


def _pipeline_processes() -> set[int]:
    """Running processes of Apertium's pipeline (the programs its modes chain); a killed
    one waiting to be reaped (a zombie) runs nothing and is not counted."""
    import subprocess
    from pathlib import Path

    found = subprocess.run(
        ["pgrep", "-f", "^(lt-proc|lrx-proc|apertium)"], capture_output=True, text=True
    )
    running = set()
    for pid in map(int, found.stdout.split()):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if state != "Z":
            running.add(pid)
    return running


def test_a_step_timeout_kills_the_program(pack_model_dir, tmp_path):
    """About 1 s of work (47,000 characters) under a 0.3 s step timeout: the call stops at
    its next 0.1 s check and the whole pipeline is killed, not left translating."""
    import time

    from graph_agent.nodes.executor import SubtaskTimeoutError, call_with_timeout

    tool = get_tool("translation", "apertium")
    pair = str(pack_model_dir(PAIR))
    tool.load(pair)
    detect_language(ENGLISH)  # langid loaded first: the timeout falls inside the program
    call = ToolCall(
        args={"text": " ".join([ENGLISH] * 1200), "target_language": "Spanish"},
        artifacts=ArtifactStore(tmp_path),
    )
    before = _pipeline_processes()
    started = time.perf_counter()
    with pytest.raises(SubtaskTimeoutError, match="the call was stopped"):
        call_with_timeout(lambda: tool.run(pair, call), 0.3, what="long translation")
    assert time.perf_counter() - started < 1.0  # stopped, not waited out (about 1 s of work)
    # The group was sent SIGKILL before the call returned; the kernel may take a moment to
    # end a dozen processes, so wait for it (a pipeline left translating would stay).
    assert wait_until(lambda: not _pipeline_processes() - before), _pipeline_processes() - before
