"""The remote back end against a local fake of TGI / TEI / HF Inference on 127.0.0.1.

The fake speaks the protocol InferenceClient speaks to a real server: chat completion on
``<url>/v1/chat/completions`` (TGI's Messages API), ``POST <url>`` with ``{"inputs": ...}``
for HF Inference tasks, raw bytes for binary inputs, the same answer shapes, and the same
error statuses. Tests run with HF_HUB_OFFLINE=1, which proves an explicit endpoint still
works offline; no test uses a provider, and nothing reaches the Hub.

The fake expects ``GRAPH_AGENT_INFERENCE_TOKEN``; ``HF_TOKEN`` is set too, to a token that must
never reach it (127.0.0.1 is not a Hugging Face host).
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import constants
from langgraph.checkpoint.memory import InMemorySaver

from graph_agent import Context, build_graph
from graph_agent.nodes import executor
from graph_agent.nodes.selector import place
from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.catalog import Catalog
from graph_agent.retrieval_index.embedder import EMBEDDER_DIR_NAME
from graph_agent.retrieval_index.placement import choose_backend
from graph_agent.tools.artifacts import ArtifactStore
from graph_agent.tools.errors import ToolError
from graph_agent.tools.remote import (
    CHAT,
    RemoteAuthError,
    RemoteBackend,
    RemoteConfig,
    RemoteInferenceError,
    RemoteTimeoutError,
    RetryPolicy,
    endpoint_token,
    is_hf_host,
    remote_call,
)
from graph_agent.tools.spec import ToolCall

TOKEN = "fake_inference_token_for_tests"
#: The user's Hugging Face token: it must only ever go to Hugging Face hosts.
HUB_TOKEN = "hf_users_own_hub_token_never_sent_to_others"
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
    #: False: any Authorization (or none) is accepted, e.g. Basic auth from URL userinfo.
    require_token: bool = True
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
        if task == "zero-shot-classification":  # worst first: the client must sort
            labels = body["parameters"]["candidate_labels"]
            return [{"label": lb, "score": (i + 1) / 10} for i, lb in enumerate(labels)]
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
        authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
        if (fake.require_token and not authorized) or model in fake.refuse:
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
    """The fake on a free port in a thread, with the right token in GRAPH_AGENT_INFERENCE_TOKEN
    and the user's own Hugging Face token in HF_TOKEN (which the fake must never see)."""
    monkeypatch.setenv("GRAPH_AGENT_INFERENCE_TOKEN", TOKEN)
    monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
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


def test_zero_shot_labels_are_read_and_reported_as_the_local_tool_does(fake, tmp_path):
    """One helper reads the labels (a list, or a comma-separated string) and one builds the
    result, for local and remote runs alike."""
    from graph_agent.tools.embedding import candidate_labels

    model = "facebook/bart-large-mnli"
    fake.tasks = {model: "zero-shot-classification"}
    call = _call(tmp_path, text="The match went to extra time.", labels="politics, sports,")
    assert candidate_labels(call) == ["politics", "sports"]
    result = _backend(fake.router).run(
        "zero-shot-classification", model, "zero-shot-classification", call
    )
    assert fake.requests[-1]["body"]["parameters"]["candidate_labels"] == ["politics", "sports"]
    assert result.kind == "labels" and result.text == "sports" and result.confidence == 0.2
    assert [d["label"] for d in result.data] == ["sports", "politics"]  # best first
    with pytest.raises(ToolError, match="needs candidate labels"):
        candidate_labels(_call(tmp_path, text="x", labels=" , "))


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
    monkeypatch.setenv("GRAPH_AGENT_INFERENCE_TOKEN", "wrong-token")
    with pytest.raises(RemoteAuthError) as caught:
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    message = str(caught.value)
    assert fake.url(f"/models/{BIG}") in message
    assert "HTTP 401 Unauthorized" in message
    assert "the token from GRAPH_AGENT_INFERENCE_TOKEN was not accepted" in message
    assert "Set GRAPH_AGENT_INFERENCE_TOKEN to a token this endpoint accepts" in message
    assert "wrong-token" not in message
    assert len(fake.requests) == 1


# --------------------------------------------------------------------------- which token where


def test_the_inference_token_is_sent_and_the_hub_token_is_not(fake, tmp_path):
    _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    (req,) = fake.requests
    assert req["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert HUB_TOKEN not in str(req["headers"])


def test_hf_token_is_never_sent_to_a_non_hf_endpoint(fake, tmp_path, monkeypatch):
    """HF_TOKEN set, GRAPH_AGENT_INFERENCE_TOKEN not: 127.0.0.1 gets no token at all, and the
    401 says why and what to set."""
    monkeypatch.delenv("GRAPH_AGENT_INFERENCE_TOKEN")
    with pytest.raises(RemoteAuthError) as caught:
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    (req,) = fake.requests
    assert "Authorization" not in req["headers"]
    message = str(caught.value)
    assert "no token was sent, as GRAPH_AGENT_INFERENCE_TOKEN is not set" in message
    assert "only sent to Hugging Face hosts" in message and HUB_TOKEN not in message


def test_the_saved_login_token_is_never_sent_to_a_non_hf_endpoint(fake, tmp_path, monkeypatch):
    """InferenceClient falls back to the token `hf auth login` saved; not for this host."""
    saved = tmp_path / "token"
    saved.write_text("hf_saved_login_token_of_the_user_0123456789")
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(saved))
    monkeypatch.delenv("GRAPH_AGENT_INFERENCE_TOKEN")
    monkeypatch.delenv("HF_TOKEN")
    from huggingface_hub import get_token

    assert get_token() == saved.read_text()  # what InferenceClient would send by itself
    with pytest.raises(RemoteAuthError):
        _backend(fake.router).run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))
    (req,) = fake.requests
    assert "Authorization" not in req["headers"]


@pytest.mark.parametrize(
    "url",
    [
        "https://router.huggingface.co/hf-inference/models/a/b",
        "https://huggingface.co/api/x",
        "https://abc123.us-east-1.aws.endpoints.huggingface.cloud",
        "https://user-demo.hf.space/generate",
        "https://hf.co/x",
    ],
)
def test_hf_hosts_get_the_hub_token(url, monkeypatch):
    monkeypatch.delenv("GRAPH_AGENT_INFERENCE_TOKEN", raising=False)
    monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
    assert is_hf_host(url)
    choice = endpoint_token(url)
    assert choice.token == HUB_TOKEN and choice.said.startswith("the token from HF_TOKEN")


@pytest.mark.parametrize(
    "url",
    [
        "https://huggingface.co.evil.example/x",  # a look-alike host
        "https://evil-huggingface.co/x",
        "https://gpu-box.internal:8080",
        "http://127.0.0.1:8080",
    ],
)
def test_other_hosts_get_only_the_inference_token(url, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
    monkeypatch.delenv("GRAPH_AGENT_INFERENCE_TOKEN", raising=False)
    assert not is_hf_host(url)
    assert endpoint_token(url).token is None
    monkeypatch.setenv("GRAPH_AGENT_INFERENCE_TOKEN", TOKEN)
    assert endpoint_token(url).token == TOKEN


def test_no_token_over_plain_http_to_another_machine(monkeypatch, caplog):
    monkeypatch.setenv("GRAPH_AGENT_INFERENCE_TOKEN", TOKEN)
    with caplog.at_level(logging.WARNING, logger="graph_agent.tools.remote_policy"):
        choice = endpoint_token("http://gpu-box:8080")
    assert choice.token is None
    assert "plain http://" in choice.said and "https://" in choice.fix
    assert "Not sending the token from GRAPH_AGENT_INFERENCE_TOKEN" in caplog.text
    assert TOKEN not in caplog.text
    # This machine is fine: the token never leaves it (an SSH tunnel, a local TGI).
    for local in ("http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"):
        assert endpoint_token(local).token == TOKEN, local
    assert endpoint_token("https://gpu-box:8080").token == TOKEN


def test_userinfo_in_the_url_replaces_the_token(monkeypatch):
    monkeypatch.setenv("GRAPH_AGENT_INFERENCE_TOKEN", TOKEN)
    choice = endpoint_token("https://u:p@gpu-box:8080")
    assert choice.token is None and "HTTP Basic" in choice.said and choice.basic_auth
    assert endpoint_token("http://u:p@127.0.0.1:8080").basic_auth  # never leaves this machine


def test_no_password_over_plain_http_to_another_machine(caplog):
    with caplog.at_level(logging.WARNING, logger="graph_agent.tools.remote_policy"):
        choice = endpoint_token("http://u:s3cret@gpu-box:8080/x")
    assert choice.token is None and not choice.basic_auth
    assert "plain http://" in choice.said and "https://" in choice.fix
    assert "Not sending the user and password" in caplog.text and "s3cret" not in caplog.text


def test_credentials_in_an_endpoint_url_are_never_shown():
    config = RemoteConfig.parse("m/x=http://user:s3cret@127.0.0.1:9/gen?api_key=s3cret")
    assert config is not None and config.where("m/x") == "http://127.0.0.1:9/gen"
    with pytest.raises(ValueError) as caught:
        RemoteConfig.parse("m/x=ftp://user:s3cret@h/gen")
    assert "s3cret" not in str(caught.value) and "not an http(s) URL" in str(caught.value)


def _free_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("failure", ["connection refused", "HTTP 500", "timeout"])
def test_secrets_in_the_endpoint_url_stay_out_of_the_errors_and_the_graph_state(
    failure, fake, hybrid_dir, tmp_path, monkeypatch, caplog
):
    """Credentials in the URL (userinfo, ?api_key=) never reach an attempt's error or trace,
    and so never the checkpointed state: every remote attempt fails, the local model answers.
    """
    monkeypatch.setattr(executor, "RemoteBackend", partial(RemoteBackend, policy=FAST))
    fake.require_token = False  # userinfo is sent as Basic auth, not our token
    port, timeout_s = fake.port, 5.0
    if failure == "connection refused":
        port = _free_port()
    elif failure == "HTTP 500":
        fake.fail_first = [500] * 20
    else:
        fake.delay_s, timeout_s = 5.0, 0.3
    endpoint = f"http://alice:PASSWORD@127.0.0.1:{port}/models/{{model}}?api_key=SECRET&x=1"
    saver = InMemorySaver()
    # httpx logs each request's URL at INFO, which the LangGraph server shows.
    caplog.set_level(logging.INFO, logger="httpx")
    final = _run(
        hybrid_dir,
        tmp_path,
        saver,
        inference_endpoint=endpoint,
        inference_timeout_s=timeout_s,
        max_retries=2,
    )
    if failure == "HTTP 500":
        assert "HTTP Request: POST http://127.0.0.1" in caplog.text
        assert "api_key=***" in caplog.text
    for secret in ("SECRET", "PASSWORD"):
        assert secret not in caplog.text
    step = final["step"]
    assert step["status"] == "ok" and step["runs"] == "local"
    remote_tries = [t for t in step["tries"] if t.get("runs") == "remote"]
    assert len(remote_tries) == 2 and all(t["problems"] for t in remote_tries)
    # The failed attempts (error and trace) live in the checkpoints taken after the executor
    # ran, not in the final state (the critic clears them): look at every one, and at the
    # saver's raw bytes, which is what a database would hold.
    history = list(
        build_graph(saver).get_state_history({"configurable": {"thread_id": "remote-test"}})
    )
    stored = json.dumps([final, *(h.values for h in history)], default=str)
    stored += repr(saver.storage) + repr(saver.writes)
    assert "Traceback (most recent call last)" in stored and "tools.remote_http.Remote" in stored
    for secret in ("SECRET", "PASSWORD", TOKEN, HUB_TOKEN):
        assert secret not in stored


def test_hub_endpoints_are_refused_offline_without_any_request(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    backend = _backend("https://router.huggingface.co/hf-inference/models/{model}")
    with pytest.raises(RemoteInferenceError, match="HF_HUB_OFFLINE"):
        backend.run("summarization", BIG, CHAT, _call(tmp_path, text=NOTES))


@pytest.mark.parametrize(
    "url",
    [
        "https://router.huggingface.co/hf-inference/models/{model}",
        "https://abc.us-east-1.aws.endpoints.huggingface.cloud",
        "https://someone-tgi.hf.space",
    ],
)
def test_hf_hosted_endpoints_serve_nothing_offline(url, monkeypatch):
    """Offline, an endpoint on a Hugging Face host is not counted as serving (so the selector
    never places a model there); online it is. A self-hosted endpoint works either way."""
    config = RemoteConfig.parse(url if "{model}" in url else f"{BIG}={url}")
    self_hosted = RemoteConfig.parse(f"{BIG}=http://127.0.0.1:9, {GATED}=https://gpu-box:8080")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert config.offline_blocked(BIG) and not config.serves(BIG, CHAT)
    # Self-hosted: the user enabled it explicitly, and offline mode is about Hugging Face.
    assert self_hosted.serves(BIG, CHAT) and self_hosted.serves(GATED, CHAT)
    assert self_hosted.offline_endpoints == []
    assert config.offline_endpoints and all(
        "huggingface" in u or "hf.space" in u for u in config.offline_endpoints
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert not config.offline_blocked(BIG) and config.serves(BIG, CHAT)
    assert config.offline_endpoints == []


def test_placement_keeps_a_model_local_when_its_hf_endpoint_is_offline(monkeypatch, tmp_path):
    """The hybrid rule sees an offline Hugging Face endpoint as not serving: a model whose
    weights are here runs here, one whose weights are not runs nowhere."""
    from types import SimpleNamespace

    local = ModelCard(
        id=GATED, task="text-generation", parameters=34_000_000_000, local_path=str(tmp_path)
    )
    remote_only = ModelCard(id=BIG, task="text-generation", parameters=70_000_000_000)
    index = SimpleNamespace(catalog={c.id: c for c in (local, remote_only)})
    selection = {
        "task": "summarization",
        "reason": "best match",
        "candidates": [{"id": GATED, "why": "w"}, {"id": BIG, "why": "w"}],
    }
    config = RemoteConfig.parse("https://router.huggingface.co/hf-inference/models/{model}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    online = place(selection, index, config, 1000)["candidates"]
    assert [c["runs"] for c in online] == ["remote", "remote"]
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    offline = place(selection, index, config, 1000)["candidates"]
    assert offline[0]["runs"] == "local" and "endpoint" not in offline[0]
    assert "nowhere to run it" in offline[1]["why"] and "endpoint" not in offline[1]


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


def _run(hybrid_dir: Path, tmp_path: Path, saver: Any = None, **ctx: Any) -> dict[str, Any]:
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    graph = build_graph(saver) if saver is not None else build_graph().compile()
    final = graph.invoke(
        {"request": "summarize notes.txt in one sentence", "inputs": {"notes.txt": str(notes)}},
        {"configurable": {"thread_id": "remote-test"}},
        context=Context(models_dir=str(hybrid_dir), artifacts_dir=str(tmp_path / "art"), **ctx),
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


def test_graph_offline_skips_a_hf_hosted_endpoint_and_says_so(hybrid_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    endpoint = "https://router.huggingface.co/hf-inference/models/{model}"
    final = _run(hybrid_dir, tmp_path, inference_endpoint=endpoint)
    step = final["step"]
    assert step["status"] == "ok" and step["runs"] == "local"
    assert step["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert not [t for t in step["tries"] if t.get("runs") == "remote"]
    notes = [d for d in final["report"]["decisions"] if d.get("decision") == "endpoint not used"]
    assert len(notes) == 1 and "HF_HUB_OFFLINE=1" in notes[0]["detail"]


def test_nothing_changes_without_an_endpoint(hybrid_dir, tmp_path):
    """No endpoint: remote-only cards are ruled out as before, and nothing is marked."""
    final = _run(hybrid_dir, tmp_path)
    step = final["step"]
    assert step["candidates"] == ["HuggingFaceTB/SmolLM2-135M-Instruct"]
    assert "runs" not in step and "runs" not in step["candidates_considered"][0]
    assert step["ruled_out"][BIG] == ["weights not on this machine"]
