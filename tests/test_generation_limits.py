"""Per-task generation limits and repetition controls on the chat model (issue 27, item 6)."""

from __future__ import annotations

from typing import Any

from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.registry import get_tool
from graph_agent.tools.spec import ToolCall
from graph_agent.verdicts import check_repetition

QWEN = "qwen2.5-coder-0.5b-instruct"


class RecordingPipe:
    """A text-generation pipeline stand-in that records the settings each call gets."""

    def __init__(self) -> None:
        self.settings: list[dict[str, Any]] = []

    def __call__(self, messages: list[dict[str, str]], **settings: Any) -> list[dict[str, str]]:
        self.settings.append(settings)
        return [{"generated_text": "fine"}]


def _settings(task: str, **args: Any) -> dict[str, Any]:
    """The settings ``task``'s tool gives the pipeline (text tools write no files)."""
    pipe = RecordingPipe()
    get_tool(task).call(pipe, ToolCall(args=args, artifacts=None))  # type: ignore[arg-type]
    return pipe.settings[-1]


def test_free_writing_holds_repetition_back_and_copying_tasks_do_not():
    for task in ("text-generation", "conversational"):
        got = _settings(task, text="write a poem about the sea")
        assert got["repetition_penalty"] > 1.0 and got["no_repeat_ngram_size"] == 4, task
        assert got["do_sample"] is False
    # Summaries, translations and answers copy names and numbers from their input: a
    # penalty on tokens already seen would push the model away from them.
    copying = {
        "summarization": {"text": "Anna met Bob in Oslo on 3 May."},
        "translation": {"text": "Anna met Bob in Oslo.", "target_language": "German"},
        "question-answering": {"text": "Anna met Bob in Oslo.", "question": "Where?"},
    }
    for task, args in copying.items():
        got = _settings(task, **args)
        assert "repetition_penalty" not in got and "no_repeat_ngram_size" not in got, task
    assert _settings("translation", text="x")["max_new_tokens"] == 256
    assert _settings("question-answering", text="x", question="y")["max_new_tokens"] == 96


def test_a_poem_on_the_pack_chat_model_does_not_loop(pack_model_dir, tmp_path):
    """Left greedy, the 0.5B model repeated one line of this poem until its token limit."""
    out = get_tool("text-generation").run(
        str(pack_model_dir(QWEN)),
        ToolCall(
            args={"text": "write a short poem about the sea"}, artifacts=ArtifactStore(tmp_path)
        ),
    )
    lines = [line.strip() for line in out.text.splitlines() if line.strip()]
    assert len(lines) >= 4, out.text
    assert check_repetition(out.text) is None, out.text
    assert len(set(lines)) == len(lines), out.text  # no line written twice
