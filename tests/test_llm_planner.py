"""LLM planner: fake chat models, a mock OpenAI-compatible server, the graph, a real tiny model.

The fakes pin down the planner's own logic (parsing, the repair loop, the fallback); the
mock server proves the ``ChatOpenAI(base_url=...)`` path end to end over real HTTP, including
structured output (tool calls) and a server that does not support it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from graph_agent import Context, build_graph
from graph_agent.chat import LLMPlannerError, make_chat_model
from graph_agent.errors import RequestError
from graph_agent.planning.llm import parse_plan_text, plan_with_llm, plan_with_llm_result

TYPES = {"meeting.wav": "audio", "photo.jpg": "image"}
ASR_THEN_SUMMARY = {
    "subtasks": [
        {
            "id": "node-0",
            "task": "automatic-speech-recognition",
            "args": {"audio": "meeting.wav"},
            "deps": [],
        },
        {"id": "node-1", "task": "summarization", "args": {"text": "<node-0>"}, "deps": []},
    ]
}
REQUEST = "transcribe meeting.wav and summarize it"


class Scripted(BaseChatModel):
    """Replies from a list in turn (an exception is raised), recording every prompt."""

    replies: list[Any]
    seen: list[list[BaseMessage]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.replies[min(len(self.seen) - 1, len(self.replies) - 1)]
        if isinstance(reply, Exception):
            raise reply
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


def _fake(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(t) for t in texts]))


def test_a_valid_plan_is_used_as_is():
    plan, notes = plan_with_llm(REQUEST, TYPES, _fake(json.dumps(ASR_THEN_SUMMARY)))
    assert [s.task for s in plan.subtasks] == ["automatic-speech-recognition", "summarization"]
    assert plan.subtasks[1].deps == ["node-0"]  # completed from the reference by the validator
    assert "valid plan with 2 steps" in notes[-1]
    assert not any("offline" in n for n in notes)


def test_fenced_json_with_prose_around_it_is_read():
    reply = (
        f"Sure! Here is the plan:\n```json\n{json.dumps(ASR_THEN_SUMMARY, indent=2)}\n```\nDone."
    )
    result = plan_with_llm_result(REQUEST, TYPES, _fake(reply))
    assert result.fallback is None and len(result.plan.subtasks) == 2


def test_taskbench_and_hugginggpt_shapes_are_accepted():
    taskbench = {
        "task_nodes": [
            {"task": "Automatic Speech Recognition", "arguments": ["meeting.wav"]},
            {"task": "Text Summarization", "arguments": ["<node-0>"]},
        ]
    }
    plan = parse_plan_text(json.dumps(taskbench))
    assert [s.task for s in plan.subtasks] == ["automatic-speech-recognition", "summarization"]
    assert plan.subtasks[1].args == {"text": "<node-0>"}
    hugginggpt = [
        {"id": 0, "task": "automatic-speech-recognition", "dep": [-1], "args": {"audio": "a.wav"}},
        {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
    ]
    plan = parse_plan_text(json.dumps(hugginggpt))
    assert [s.id for s in plan.subtasks] == ["node-0", "node-1"]
    assert plan.subtasks[1].args == {"text": "<node-0>"} and plan.subtasks[1].deps == ["node-0"]


def test_an_invalid_plan_is_sent_back_with_the_validators_problems():
    wrong = {
        "subtasks": [
            {"id": "node-0", "task": "automatic-speech-recognition", "args": {"audio": "photo.jpg"}}
        ]
    }
    right = {
        "subtasks": [
            {"id": "node-0", "task": "image-classification", "args": {"image": "photo.jpg"}}
        ]
    }
    model = Scripted(replies=[json.dumps(wrong), json.dumps(right)], seen=[])
    result = plan_with_llm_result("what is in photo.jpg", TYPES, model)
    assert result.fallback is None and result.attempts == 2
    assert [s.task for s in result.plan.subtasks] == ["image-classification"]
    repair = model.seen[1]
    assert repair[-2].content == json.dumps(wrong)  # the model sees its own bad plan ...
    assert "needs audio, but 'photo.jpg' is an image" in repair[-1].content  # ... and why
    assert any("attempt 1: invalid" in n for n in result.notes)


def test_garbage_every_time_falls_back_to_offline_and_says_so():
    model = Scripted(replies=["I am not sure what you mean."], seen=[])
    result = plan_with_llm_result(REQUEST, TYPES, model, max_repairs=2)
    assert len(model.seen) == 3  # one try and two repairs, then it stops
    assert result.fallback == "offline" and "not JSON" in result.why
    assert [s.task for s in result.plan.subtasks] == [
        "automatic-speech-recognition",
        "summarization",
    ]
    assert "fell back to the offline planner" in result.notes[-1]


def test_a_model_error_falls_back_at_once():
    model = Scripted(replies=[TimeoutError("read timed out")], seen=[])
    result = plan_with_llm_result(REQUEST, TYPES, model)
    assert len(model.seen) == 1 and result.fallback == "offline"
    assert "TimeoutError: read timed out" in result.why


def test_no_task_from_either_planner_is_a_clear_error():
    model = Scripted(replies=['{"subtasks": []}'], seen=[])
    with pytest.raises(RequestError, match=r"Could not find a task.*LLM planner also failed"):
        plan_with_llm("fly me to Rome", {}, model)
    assert len(model.seen) == 1  # an empty plan is an answer, not something to repair
    with pytest.raises(RequestError, match="empty"):
        plan_with_llm("  ", {}, model)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "not 'offline' or '<provider>:<model>'"),
        ("openai-compatible:no-base-url", "openai-compatible:<model>@<base_url>"),
        ("hf:/no/such/dir", "not a transformers model directory"),
        ("anthropic:claude-x", "pip install langchain-anthropic"),
        ("openai:gpt-4o-mini", "needs OPENAI_API_KEY"),
        ("nosuchprovider:x", "Unsupported provider"),
    ],
)
def test_bad_specs_say_what_to_fix(spec, message, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPH_AGENT_LLM_API_KEY", raising=False)
    with pytest.raises(LLMPlannerError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_chat_model(spec)


def test_provider_specs_are_built_by_init_chat_model(monkeypatch):
    """``provider:model`` goes through LangChain's ``init_chat_model`` (no network here)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = make_chat_model("openai:gpt-4o-mini")
    assert type(model).__name__ == "ChatOpenAI"
    assert model.model_name == "gpt-4o-mini"
    assert model.temperature == 0


# ----------------------------------------------------------------- mock OpenAI server

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def _completion(content: str | None = None, tool: tuple[str, dict] | None = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool:
        message["tool_calls"] = [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": tool[0], "arguments": json.dumps(tool[1])},
            }
        ]
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@pytest.fixture
def mock_openai() -> Iterator[Callable[[Reply], tuple[str, list[dict[str, Any]]]]]:
    """``start(reply)`` -> (base_url, requests): a server on 127.0.0.1, stopped after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Reply) -> tuple[str, list[dict[str, Any]]]:
        seen: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append(body)
                status, payload = (
                    reply(body)
                    if self.path == "/v1/chat/completions"
                    else (404, {"error": {"message": "not found"}})
                )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", seen

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _plan_reply(plan: dict[str, Any]) -> Reply:
    """Answer tool calls with the plan as arguments, plain requests with it as text."""

    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body.get("tools"):
            return 200, _completion(tool=(body["tools"][0]["function"]["name"], plan))
        return 200, _completion(json.dumps(plan))

    return reply


def test_openai_compatible_server_with_structured_output(mock_openai):
    base_url, seen = mock_openai(_plan_reply(ASR_THEN_SUMMARY))
    model = make_chat_model(f"openai-compatible:mock-model@{base_url}")
    assert make_chat_model(f"openai-compatible:mock-model@{base_url}") is model  # cached
    result = plan_with_llm_result(REQUEST, TYPES, model)
    assert result.fallback is None and len(result.plan.subtasks) == 2
    assert seen[0]["model"] == "mock-model" and seen[0]["tools"]  # asked via a tool schema
    assert "automatic-speech-recognition" in seen[0]["messages"][0]["content"]  # vocabulary
    assert "structured output" in result.notes[0]


def test_openai_compatible_server_without_tool_support_gets_plain_json(mock_openai):
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body.get("tools"):
            return 400, {"error": {"message": "tools are not supported", "type": "invalid"}}
        return 200, _completion("```json\n" + json.dumps(ASR_THEN_SUMMARY) + "\n```")

    base_url, seen = mock_openai(reply)
    result = plan_with_llm_result(
        REQUEST, TYPES, make_chat_model(f"openai-compatible:m@{base_url}")
    )
    assert result.fallback is None and len(result.plan.subtasks) == 2
    assert [bool(b.get("tools")) for b in seen] == [True, False]
    assert any("asking for plain JSON" in n for n in result.notes)


def test_graph_runs_a_plan_made_by_the_llm_planner(mock_openai, tmp_path, models_dir, sample_photo):
    plan = {
        "subtasks": [
            {"id": "node-0", "task": "image-classification", "args": {"image": "photo.jpg"}}
        ]
    }
    base_url, seen = mock_openai(_plan_reply(plan))
    spec = f"openai-compatible:mock@{base_url}"
    ctx = Context(planner=spec, models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    final = build_graph(InMemorySaver()).invoke(
        {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
        {"configurable": {"thread_id": "llm-planner"}},
        context=ctx,
    )
    assert seen and final["outputs"]["node-0"] and final["report"]["failures"] == []
    planner = final["report"]["decisions"][0]
    assert planner["node"] == "planner" and planner["planned_by"] == spec
    assert "fallback" not in planner and planner["llm_attempts"] == 1


def test_graph_reports_the_fallback_when_the_llm_server_is_down(tmp_path, models_dir, sample_photo):
    spec = "openai-compatible:mock@http://127.0.0.1:9/v1"  # discard port: nothing listens
    ctx = Context(planner=spec, models_dir=str(models_dir), artifacts_dir=str(tmp_path))
    final = build_graph(InMemorySaver()).invoke(
        {"request": "what is in photo.jpg", "inputs": {"photo.jpg": str(sample_photo)}},
        {"configurable": {"thread_id": "llm-down"}},
        context=ctx,
    )
    planner = final["report"]["decisions"][0]
    assert planner["planned_by"] == "offline" and planner["fallback"] == "offline"
    assert "the model failed" in planner["why"] and final["outputs"]["node-0"]


def test_real_smollm2_plans_or_falls_back(models_dir):
    """SmolLM2-135M may well not manage the format; the run must still end with a plan."""
    model = make_chat_model(f"hf:{models_dir / 'smollm2-135m-instruct'}")
    result = plan_with_llm_result(REQUEST, TYPES, model, max_repairs=0, planner="hf:smollm2")
    assert result.plan.subtasks[0].task == "automatic-speech-recognition"
    assert result.notes[0].startswith("asked hf:smollm2")
    assert result.fallback is None or "fell back to the offline planner" in result.notes[-1]


def test_the_llm_planner_gets_material_by_name_not_repeated(mock_openai, tmp_path, models_dir):
    """The chat model sees "summarize this article: text-1.txt", and the plan binds the name;
    the article itself travels with the plan (issue 25: material handling)."""
    article = (
        "The council voted on Tuesday to widen the bike network. Photos of crowded streets "
        "were shown, and staff will detect the worst junctions. A recording of the debate "
        "will be published, and the plan will be translated for residents next week."
    )
    plan = {"subtasks": [{"id": "node-0", "task": "summarization", "args": {"text": "text-1.txt"}}]}
    base_url, seen = mock_openai(_plan_reply(plan))
    ctx = Context(
        planner=f"openai-compatible:mock@{base_url}",
        models_dir=str(models_dir),
        artifacts_dir=str(tmp_path),
        approve_plan=True,  # stop before any model runs
    )
    graph = build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "llm-material"}}
    graph.invoke({"request": f"summarize this article: {article}"}, config, context=ctx)
    prompt = json.dumps(seen[0]["messages"])
    assert "text-1.txt" in prompt and "crowded streets" not in prompt
    state = graph.get_state(config).values
    assert state["plan"]["subtasks"][0]["args"] == {"text": "text-1.txt"}
    assert state["plan"]["material"] == {"text-1.txt": article}
