"""The remote back end against a local fake of TGI / TEI / HF Inference on 127.0.0.1.

The fake speaks the protocol InferenceClient speaks to a real server: chat completion on
``<url>/v1/chat/completions`` (TGI's Messages API), ``POST <url>`` with ``{"inputs": ...}``
for HF Inference tasks, raw bytes for binary inputs, the same answer shapes, and the same
error statuses. Tests run with HF_HUB_OFFLINE=1, which proves an explicit endpoint still
works offline; no test uses a provider, and nothing reaches the Hub.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import constants

from graph_agent import Context, build_graph
from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.remote import (
    CHAT,
    RemoteAuthError,
    RemoteBackend,
    RemoteConfig,
    RemoteInferenceError,
    RemoteTimeoutError,
    RetryPolicy,
    choose_backend,
    remote_call,
)
from graph_agent.tools.spec import ToolCall

TOKEN = "hf_fake_token_for_tests"
BIG = "big-org/Big-Chat-70B-Instruct"
GATED = "gated-org/Gated-Chat-34B-Instruct"
SUMMARY = "The team moved the launch to May and will hire two engineers."
NOTES = (
    "Meeting notes. We discussed the product launch, which was planned for April. Because "
    "the payment integration is not finished and the security review found two issues, the "
    "team agreed to move the launch to May. We also agreed to hire two more engineers for "
    "the platform team, and Maria will write the job descriptions by Friday. The budget for "
    "the marketing campaign stays the same. Next meeting is on Tuesday at ten."
)


# --------------------------------------------------------------------------- the fake server


@dataclass
class FakeInference:
    """State of the fake: what each model does, scripted failures, and every request seen."""

    #: model id -> its task, for router-style paths ``/models/<model id>``.
    tasks: dict[str, str] = field(default_factory=dict)
    #: Statuses answered (in order) before the normal answer, e.g. [503] = one 5xx first.
    fail_first: list[int] = field(default_factory=list)
    #: Seconds to wait before answering (a slow or stuck server).
    delay_s: float = 0.0
    #: Models whose requests are refused with 401 whatever the token.
    refuse: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def router(self) -> str:
        return self.url("/models/{model}")

    def answer(self, model: str, chat: bool, body: Any, content_type: str) -> Any:
        """The answer a real server gives for this model's task."""
        if chat:  # TGI's Messages API (OpenAI-compatible)
            return {
                "id": "",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "3.0.0-native",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": SUMMARY},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 90, "completion_tokens": 14, "total_tokens": 104},
            }
        task = self.tasks[model]
        if task == "summarization":
            return [{"summary_text": SUMMARY}]
        if task == "feature-extraction":  # TEI: one row per input
            return [[0.3, 0.4, 0.0, 1.2]]
        if task == "image-classification":
            assert content_type.startswith("image/"), content_type
            assert isinstance(body, bytes) and body.startswith(b"\x89PNG")
            return [{"label": "tabby cat", "score": 0.91}, {"label": "tiger cat", "score": 0.06}]
        raise AssertionError(f"the fake does not serve {task}")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeInference

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def do_POST(self) -> None:
        fake = self.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        content_type = self.headers.get("Content-Type", "")
        body: Any = json.loads(raw) if "json" in content_type else raw
        path = self.path.split("?", 1)[0]
        chat = path.endswith("/v1/chat/completions")
        model = path.removeprefix("/models/").removesuffix("/v1/chat/completions")
        fake.requests.append({"path": path, "model": model, "body": body, "headers": self.headers})
        if fake.delay_s and fake.stop.wait(fake.delay_s):
            return  # the test is over
        if self.headers.get("Authorization") != f"Bearer {TOKEN}" or model in fake.refuse:
            # What TGI and Inference Endpoints answer to a missing or wrong token.
            return self._send(401, {"error": "Authorization header is invalid"})
        if fake.fail_first:
            status = fake.fail_first.pop(0)
            return self._send(status, {"error": "Model is overloaded", "error_type": "overloaded"})
        try:
            self._send(200, fake.answer(model, chat, body, content_type))
        except (AssertionError, KeyError) as exc:
            self._send(422, {"error": f"fake: {exc}"})


@pytest.fixture
def fake(monkeypatch) -> Iterator[FakeInference]:
    """The fake on a free port in a thread, with the right token in HF_TOKEN."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("GRAPH_AGENT_INFERENCE_TOKEN", raising=False)
    # Offline, for certain (conftest sets it, but a developer's env could override it):
    # the endpoint must still work, and the Hub must never be reached.
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    state = FakeInference()
    handler = type("Handler", (_Handler,), {"fake": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    state.stop.set()  # wake a handler that is "slow"
    server.shutdown()
    server.server_close()
    thread.join(5)


FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.05)


def _backend(endpoint: str, timeout_s: float = 5.0, **kw: Any) -> RemoteBackend:
    config = RemoteConfig.parse(endpoint, None, timeout_s)
    assert config is not None
    return RemoteBackend(config, policy=kw.pop("policy", FAST), **kw)


def _call(tmp_path: Path, **args: Any) -> ToolCall:
    return ToolCall(args=args, artifacts=ArtifactStore(str(tmp_path / "a"), run_id="t"))


# --------------------------------------------------------------------------- (a) success


def test_chat_text_task_runs_the_local_prompt_on_the_chat_route_while_offline(fake, tmp_path):
    assert constants.is_offline_mode()  # an explicit endpoint works regardless
    result = _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    assert result.kind == "summary" and result.text == SUMMARY
    (req,) = fake.requests
    assert req["path"] == f"/models/{BIG}/v1/chat/completions"
    assert req["body"]["model"] == BIG and req["body"]["max_tokens"] > 0
    prompt = req["body"]["messages"][-1]["content"]
    assert NOTES in prompt and "Summarize the text above" in prompt  # the local tool's prompt
    assert req["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_native_summarization_embedding_and_image_classification(fake, tmp_path):
    from PIL import Image

    fake.tasks = {
        "facebook/bart-large-cnn": "summarization",
        "BAAI/bge-large-en-v1.5": "feature-extraction",
        "google/vit-base-patch16-224": "image-classification",
    }
    backend = _backend(fake.router)
    summary = backend.run(
        "summarization", "facebook/bart-large-cnn", "summarization", _call(tmp_path, text=NOTES)
    )
    assert summary.text == SUMMARY
    assert fake.requests[-1]["body"] == {"inputs": NOTES, "parameters": {}}

    vector = backend.run(
        "feature-extraction",
        "BAAI/bge-large-en-v1.5",
        "feature-extraction",
        _call(tmp_path, text="hello"),
    )
    assert vector.kind == "embedding" and vector.text == "4-dimensional embedding"
    assert vector.data == pytest.approx([0.230769, 0.307692, 0.0, 0.923077], abs=1e-5)

    photo = tmp_path / "cat.png"
    Image.new("RGB", (8, 8), "orange").save(photo)
    labels = backend.run(
        "image-classification",
        "google/vit-base-patch16-224",
        "image-classification",
        _call(tmp_path, image=str(photo)),
    )
    assert labels.kind == "labels" and labels.text == "tabby cat" and labels.confidence == 0.91
    assert fake.requests[-1]["path"] == "/models/google/vit-base-patch16-224"
    assert fake.requests[-1]["headers"]["Content-Type"] == "image/png"


def test_per_model_deployment_url(fake, tmp_path):
    """A TGI serving one model: '<model id>=<URL>'; the chat route is appended to that URL."""
    backend = _backend(f"{BIG}={fake.url()}, other/model={fake.url('/other')}")
    backend.run("text-generation", BIG, CHAT, _call(tmp_path, text="Write a haiku."))
    assert fake.requests[-1]["path"] == "/v1/chat/completions"


# --------------------------------------------------------------------------- (b) timeout


def test_a_slow_server_is_a_clear_timeout_error_and_is_not_retried(fake, tmp_path):
    fake.delay_s = 3.0
    started = time.perf_counter()
    with pytest.raises(RemoteTimeoutError) as caught:
        _backend(fake.router, timeout_s=0.3).run(
            "summarization", BIG, CHAT, _call(tmp_path, text=NOTES)
        )
    assert time.perf_counter() - started < 2.0
    message = str(caught.value)
    assert fake.url(f"/models/{BIG}") in message
    assert "did not answer within 0.3 s" in message and "GRAPH_AGENT_INFERENCE_TIMEOUT_S" in message
    assert len(fake.requests) == 1


# --------------------------------------------------------------------------- (c) 5xx, retried


def test_a_5xx_is_retried_with_backoff_and_then_succeeds(fake, tmp_path):
    fake.fail_first = [503, 500]
    waits: list[float] = []
    result = _backend(fake.router, sleep=waits.append).run(
        "summarization", BIG, CHAT, _call(tmp_path, text=NOTES)
    )
    assert result.text == SUMMARY
    assert len(fake.requests) == 3  # two failures, then the answer
    assert len(waits) == 2 and all(0 < w <= FAST.max_s for w in waits)


def test_backoff_grows_with_jitter_and_stays_bounded():
    policy = RetryPolicy(attempts=5, base_s=0.5, max_s=2.0)
    for retry, cap in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 2.0)):
        waits = [policy.delay(retry) for _ in range(50)]
        assert all(cap / 2 <= w <= cap for w in waits) and len(set(waits)) > 1
    assert policy.delay(1, retry_after=30) == 2.0  # a server's Retry-After, capped


def test_a_5xx_that_persists_fails_after_the_bounded_attempts(fake, tmp_path):
    fake.fail_first = [502] * 10
    with pytest.raises(RemoteInferenceError, match=r"after 3 attempts: HTTP 502"):
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    assert len(fake.requests) == 3


def test_other_4xx_are_not_retried(fake, tmp_path):
    fake.fail_first = [422]
    with pytest.raises(RemoteInferenceError, match="HTTP 422") as caught:
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    assert not isinstance(caught.value, RemoteAuthError)
    assert len(fake.requests) == 1


def test_connection_refused_is_retried_then_says_to_check_the_server(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    backend = _backend(f"http://127.0.0.1:{port}/models/{{model}}", sleep=waits.append)
    with pytest.raises(RemoteInferenceError, match="is the server running") as caught:
        backend.run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    assert "after 3 attempts" in str(caught.value) and len(waits) == 2


# --------------------------------------------------------------------------- (d) 401


def test_401_is_a_clear_auth_error_naming_the_endpoint_and_not_retried(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(RemoteAuthError) as caught:
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    message = str(caught.value)
    assert fake.url(f"/models/{BIG}") in message
    assert "HTTP 401 Unauthorized" in message
    assert "the token from HF_TOKEN was not accepted" in message
    assert "Set HF_TOKEN (or GRAPH_AGENT_INFERENCE_TOKEN)" in message
    assert "hf_wrong" not in message
    assert len(fake.requests) == 1


def test_credentials_in_an_endpoint_url_are_never_shown():
    config = RemoteConfig.parse("m/x=http://user:s3cret@127.0.0.1:9/gen?api_key=s3cret")
    assert config is not None and config.where("m/x") == "http://127.0.0.1:9/gen"


def test_hub_endpoints_are_refused_offline_without_any_request(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    backend = _backend("https://router.huggingface.co/hf-inference/models/{model}")
    with pytest.raises(RemoteInferenceError, match="HF_HUB_OFFLINE"):
        backend.run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))


# --------------------------------------------------------------------------- configuration


def test_endpoint_settings_parse_or_say_what_to_write():
    assert RemoteConfig.parse("", "") is None  # nothing configured: everything stays local
    router = RemoteConfig.parse("http://h:1/models/{model}")
    assert router.url_for("a/b") == "http://h:1/models/a/b"
    pairs = RemoteConfig.parse("a/b=http://h:1, c/d=https://e.endpoints.huggingface.cloud")
    assert pairs.url_for("A/B") == "http://h:1" and pairs.url_for("x/y") is None
    assert RemoteConfig.parse('{"a/b": "http://h:2"}').url_for("a/b") == "http://h:2"
    with pytest.raises(ValueError, match=r"names one server but not the model"):
        RemoteConfig.parse("http://127.0.0.1:8080")
    with pytest.raises(ValueError, match="not an http"):
        RemoteConfig.parse("a/b=ftp://h")
    with pytest.raises(ValueError, match="not an Inference Provider"):
        RemoteConfig.parse(None, "no-such-provider")


def test_provider_mode_is_off_while_offline(monkeypatch):
    """A provider needs the Hub router: configured but offline, it serves nothing."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    config = RemoteConfig.parse(None, "hf-inference")
    assert config is not None and not config.provider_usable
    assert not config.serves(BIG, CHAT)


def test_which_task_runs_remotely_on_which_model():
    assert remote_call("summarization", "text-generation") == CHAT
    assert remote_call("summarization", "summarization") == "summarization"
    assert remote_call("translation", "translation_en_to_de") == "translation"
    assert remote_call("text-classification", "text-generation") is None  # needs logits
    assert remote_call("automatic-speech-recognition", "automatic-speech-recognition")
    assert remote_call("text-to-speech", "text-to-speech") is None


# --------------------------------------------------------------------------- (f) hybrid rule


@pytest.mark.parametrize(
    ("parameters", "size_bytes", "local", "remote", "expected"),
    [
        (70_000_000_000, None, False, True, "remote"),  # only the endpoint has it
        (135_000_000, None, True, False, "local"),  # no endpoint serves it
        (135_000_000, None, True, True, "local"),  # small: here
        (1_540_000_000, None, True, True, "remote"),  # large: the GPU server
        (None, 8_000_000_000, True, True, "remote"),  # size on disk / 4 = 2,000M
        (None, 0, True, True, "local"),  # size unknown: keep it here
        (None, None, False, False, None),  # nowhere
    ],
)
def test_hybrid_rule(parameters, size_bytes, local, remote, expected):
    runs, why = choose_backend(
        parameters=parameters,
        size_bytes=size_bytes,
        local=local,
        remote=remote,
        min_remote_params_m=1000,
    )
    assert runs == expected and why


def test_hybrid_rule_threshold_zero_sends_everything_served_remotely():
    runs, _ = choose_backend(
        parameters=10, size_bytes=None, local=True, remote=True, min_remote_params_m=0
    )
    assert runs == "remote"


# --------------------------------------------------------------------------- (e) the graph


@pytest.fixture
def hybrid_dir(tmp_path, models_dir, pack_model_dir) -> Path:
    """A models dir: the embedder, the small local SmolLM2, and two big remote-only cards."""
    home = tmp_path / "hybrid"
    home.mkdir()
    for name in (EMBEDDER_DIR_NAME, "smollm2-135m-instruct"):
        pack_model_dir(name)
        (home / name).symlink_to(models_dir / name)
    tasks = ["text-generation", "summarization", "conversational"]
    Catalog.in_models_dir(home).upsert(
        [
            ModelCard(
                id=BIG,
                task="text-generation",
                tasks=tasks,
                parameters=70_000_000_000,
                license="apache-2.0",
                languages=["en"],
                description="A 70B instruction-tuned chat model: summaries, answers, writing.",
            ),
            ModelCard(
                id=GATED,
                task="text-generation",
                tasks=tasks,
                parameters=34_000_000_000,
                license="apache-2.0",
                languages=["en"],
                description="A 34B instruction-tuned chat model for summarization and chat.",
            ),
        ]
    )
    return home


def _run(hybrid_dir: Path, tmp_path: Path, **ctx: Any) -> dict[str, Any]:
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    final = (
        build_graph()
        .compile()
        .invoke(
            {"request": "summarize notes.txt in one sentence", "inputs": {"notes.txt": str(notes)}},
            context=Context(models_dir=str(hybrid_dir), artifacts_dir=str(tmp_path / "art"), **ctx),
        )
    )
    (step,) = final["report"]["steps"]
    return {**final, "step": step}


def test_graph_runs_a_large_candidate_remotely_and_the_report_says_so(fake, hybrid_dir, tmp_path):
    final = _run(hybrid_dir, tmp_path, inference_endpoint=fake.router)
    step = final["step"]
    assert step["status"] == "ok" and final["outputs"][step["id"]] == SUMMARY
    endpoint = fake.url(f"/models/{step['model']}")
    assert step["model"] in (BIG, GATED) and step["runs"] == "remote"
    assert step["endpoint"] == endpoint
    considered = {c["id"]: c for c in step["candidates_considered"]}
    assert considered["HuggingFaceTB/SmolLM2-135M-Instruct"]["runs"] == "local"  # small: here
    assert considered[BIG]["runs"] == "remote"
    assert f"It runs remotely at {endpoint}" in step["reason"]
    assert "weights not on this machine; the endpoint serves it" in step["reason"]
    assert f"(remote at `{endpoint}`)" in final["report_markdown"]
    assert TOKEN not in json.dumps(final["report"]) + final["report_markdown"]
    assert [r["path"] for r in fake.requests] == [f"/models/{step['model']}/v1/chat/completions"]


def test_graph_moves_on_after_a_remote_failure_and_reports_endpoint_and_error(
    fake, hybrid_dir, tmp_path
):
    fake.refuse = {BIG, GATED}  # both large models refuse: the small local model takes over
    final = _run(hybrid_dir, tmp_path, inference_endpoint=fake.router, max_retries=2)
    step = final["step"]
    assert step["status"] == "ok" and step["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert step["runs"] == "local" and "endpoint" not in step
    remote_tries = [t for t in step["tries"] if t.get("runs") == "remote"]
    assert len(remote_tries) == 2
    for t in remote_tries:
        assert t["verdict"] == "retry with next candidate"
        assert t["endpoint"] == fake.url(f"/models/{t['model']}")
        assert "HTTP 401 Unauthorized" in t["problems"][0] and t["endpoint"] in t["problems"][0]
    assert len(fake.requests) == 2  # a 401 is never retried


def test_nothing_changes_without_an_endpoint(hybrid_dir, tmp_path):
    """No endpoint: remote-only cards are ruled out as before, and nothing is marked."""
    final = _run(hybrid_dir, tmp_path)
    step = final["step"]
    assert step["candidates"] == ["HuggingFaceTB/SmolLM2-135M-Instruct"]
    assert "runs" not in step and "runs" not in step["candidates_considered"][0]
    assert step["ruled_out"][BIG] == ["weights not on this machine"]
