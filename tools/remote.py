"""Remote inference: run a step on a model served over HTTP, through `huggingface_hub`'s
:class:`~huggingface_hub.InferenceClient`.

Local tools run what fits on this machine; this back end runs what does not (a 70B chat
model, a model whose weights are not here) on a server that has it: a self-hosted TGI or TEI,
a dedicated Inference Endpoint, a router that serves any model by id, or an Inference
Provider. The executor calls it for candidates the selector marked ``runs: "remote"``; see
:func:`choose_backend` for the rule that decides (HuggingGPT's "hybrid" mode).

Where remote models run (``Context.inference_endpoint`` / ``inference_provider``):

- ``https://host/models/{model}``: a router that serves any model by its Hub id (the HF
  Inference API, or your own gateway); ``{model}`` is replaced by the card's id.
- ``org/model=https://host:8080, other/model=https://...`` (or the same as a JSON object):
  one deployment per model, as TGI, TEI and Inference Endpoints are. A bare URL without
  ``{model}`` is refused: it would not say which model answers there.
- a provider name (``together``, ``hf-inference``, ``auto``...) for the models no endpoint
  names. Providers are reached through the Hugging Face router, so they need the Hub and are
  never used with ``HF_HUB_OFFLINE=1``.

The token comes from ``GRAPH_AGENT_INFERENCE_TOKEN`` or ``HF_TOKEN`` at call time (with
neither, InferenceClient sends the token saved by ``hf auth login``, if any). It is never put
in the graph state, the selection or the report; endpoints are shown without credentials.

How each task is called (the card's Hub pipeline tag picks the protocol, because a
deployment speaks the protocol of the model it serves):

- text-generation, conversational, summarization, translation, question-answering on a
  ``text-generation``/``conversational`` model: chat completion
  (``POST <url>/v1/chat/completions``, TGI's Messages API) with the local tool's own prompt;
- summarization, translation, text-classification, zero-shot-classification on a model with
  that pipeline tag: ``POST <url>`` ``{"inputs": text, "parameters": ...}`` (HF Inference);
- feature-extraction, sentence-similarity on an embedding model (TEI, HF Inference):
  ``POST <url>`` -> a vector (two vectors and their cosine for similarity);
- automatic-speech-recognition, image-classification on such a model: ``POST <url>`` with
  the audio or image bytes -> text or labels.

Failures: HTTP 429, 5xx and connection errors are retried with exponential backoff and jitter
(:class:`RetryPolicy`, a bounded number of attempts; ``Retry-After`` is honoured up to the
cap). Other 4xx are not retried: the same request would fail the same way. A 401/403 becomes
:class:`RemoteAuthError`, naming the endpoint and the token variables; a call slower than the
timeout becomes :class:`RemoteTimeoutError` and is not retried either, since it has already
used its whole time budget (the executor moves on to the next candidate instead).

Offline mode: ``HF_HUB_OFFLINE=1`` makes huggingface_hub's shared HTTP session refuse every
request, even to a server on 127.0.0.1 the user named. Offline mode is about the Hub, so
requests to an explicit URL go through a session of this module that refuses Hub hosts in
offline mode and nothing else; InferenceClient still builds every request and parses every
response, and ``hf_raise_for_status`` still turns errors into ``HfHubHTTPError``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import numpy as np
from huggingface_hub import InferenceClient, constants
from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError, OfflineModeIsEnabled
from huggingface_hub.utils import hf_raise_for_status

from graph_agent.tools.errors import InputFileError, ToolError
from graph_agent.tools.registry import get_tool
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import ToolCall

log = logging.getLogger(__name__)
T = TypeVar("T")
Backend = Literal["local", "remote"]

#: Environment variables the token is read from, first one set wins.
TOKEN_VARS = ("GRAPH_AGENT_INFERENCE_TOKEN", "HF_TOKEN")
#: Hosts of the Hugging Face Hub and its router: refused in offline mode, even as an endpoint.
HUB_HOSTS = ("huggingface.co", "hf.co")

# --------------------------------------------------------------------------- what runs remotely

#: The remote call for text tasks a chat model serves: the local text tools' prompts, sent
#: to the server's chat-completion route.
CHAT = "chat-completion"
_CHAT_TASKS = frozenset(
    {"text-generation", "conversational", "summarization", "translation", "question-answering"}
)
_CHAT_TAGS = frozenset({"text-generation", "conversational"})
_EMBEDDING_TAGS = frozenset({"feature-extraction", "sentence-similarity"})
#: Step task -> the pipeline tags of models that serve it with the task's own HF protocol.
_NATIVE: dict[str, frozenset[str]] = {
    "summarization": frozenset({"summarization"}),
    "translation": frozenset({"translation"}),
    "text-classification": frozenset({"text-classification"}),
    "zero-shot-classification": frozenset({"zero-shot-classification"}),
    "feature-extraction": _EMBEDDING_TAGS,
    "sentence-similarity": _EMBEDDING_TAGS,
    "automatic-speech-recognition": frozenset({"automatic-speech-recognition"}),
    "image-classification": frozenset({"image-classification"}),
}
#: Every step task the remote back end can run (on a model with a fitting pipeline tag).
REMOTE_TASKS: frozenset[str] = _CHAT_TASKS | frozenset(_NATIVE)


def remote_call(task: str, pipeline_tag: str) -> str | None:
    """How the remote back end runs ``task`` on a model tagged ``pipeline_tag``, or None.

    The answer is :data:`CHAT` or the task's own name (its HF Inference protocol). A chat
    model cannot classify text remotely (the local tool scores labels from the model's
    logits, which a server does not expose), so that pairing is None, as is any task this
    back end does not map (speech synthesis, image outputs, detection boxes).
    """
    tag = pipeline_tag.strip().lower()
    if tag.startswith("translation"):  # translation_en_to_de and friends
        tag = "translation"
    if task in _CHAT_TASKS and tag in _CHAT_TAGS:
        return CHAT
    if tag in _NATIVE.get(task, ()):
        return task
    return None


def choose_backend(
    *,
    parameters: int | None,
    size_bytes: int | None,
    local: bool,
    remote: bool,
    min_remote_params_m: float,
) -> tuple[Backend | None, str]:
    """Where a model runs in hybrid mode, and why: the one rule for local versus remote.

    1. Only one place can run it (weights on disk, or an endpoint that serves it): there.
       Neither: None.
    2. Both can: remote when the model has at least ``min_remote_params_m`` million
       parameters, local below that. A large model is slow on this CPU and fast on a GPU
       server; a small one answers locally sooner than a network round trip would, costs
       nothing and keeps the data on this machine. The size is the card's parameter count,
       or its size on disk / 4 bytes when only that is known. An unknown size means local:
       the weights are here and nothing says they are too big. ``min_remote_params_m <= 0``
       sends everything an endpoint serves to the endpoint.
    """
    if not (local and remote):
        if remote:
            return "remote", "weights not on this machine; the endpoint serves it"
        return ("local", "weights on this machine") if local else (None, "nowhere to run it")
    size = parameters or ((size_bytes or 0) / 4) or None
    threshold = min_remote_params_m * 1e6
    if threshold <= 0:
        return "remote", "remote_min_params_m <= 0: every model an endpoint serves runs there"
    if size is None:
        return "local", "weights on this machine; size unknown, so not sent remote"
    shown = f"{size / 1e6:,.0f}M parameters"
    if size >= threshold:
        return "remote", f"{shown}, at least remote_min_params_m={min_remote_params_m:g}M"
    return "local", f"{shown}, below remote_min_params_m={min_remote_params_m:g}M"


# --------------------------------------------------------------------------- configuration


def redact_url(url: str) -> str:
    """``url`` without credentials or query string (where tokens hide), for reports and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _check_url(url: str, where: str) -> str:
    url = url.strip()
    parts = urlsplit(url.replace("{model}", "m"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{where}: {url!r} is not an http(s) URL. Give e.g. http://127.0.0.1:8080 "
            "(a TGI/TEI server) or https://<name>.endpoints.huggingface.cloud."
        )
    return url


def _providers() -> dict[str, Any]:
    """huggingface_hub's provider table (provider -> task -> helper); empty if it moved."""
    try:
        from huggingface_hub.inference._providers import PROVIDERS
    except ImportError:  # pragma: no cover - a future huggingface_hub without the table
        return {}
    return dict(PROVIDERS)


@dataclass(frozen=True)
class RemoteConfig:
    """Where remote models run: a ``{model}`` URL template, per-model URLs, and/or a provider.

    It holds no token (see :func:`inference_token`), so it is safe to log or show.
    """

    template: str | None = None
    models: tuple[tuple[str, str], ...] = ()
    provider: str | None = None
    timeout_s: float = 60.0

    @classmethod
    def parse(
        cls, endpoint: str | None, provider: str | None = None, timeout_s: float = 60.0
    ) -> RemoteConfig | None:
        """The configuration from the Context's strings, or None when nothing is configured.

        Raises ValueError saying what is wrong and what to write instead.
        """
        endpoint, provider = (endpoint or "").strip(), (provider or "").strip() or None
        if not endpoint and not provider:
            return None
        if timeout_s < 0:
            raise ValueError(f"inference_timeout_s={timeout_s} must be 0 (no limit) or positive.")
        template, models = None, ()
        where = "inference_endpoint (GRAPH_AGENT_INFERENCE_ENDPOINT)"
        if endpoint.startswith("{"):
            try:
                raw = json.loads(endpoint)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where} is not valid JSON: {exc}") from None
            if not isinstance(raw, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
            ):
                raise ValueError(f'{where} must be a JSON object {{"<model id>": "<URL>"}}.')
            models = tuple((k.strip(), _check_url(v, where)) for k, v in raw.items())
        elif "=" in endpoint.split("://", 1)[0]:  # '<model id>=<URL>': '=' before any scheme
            pairs = []
            for item in endpoint.replace("\n", ",").split(","):
                if not item.strip():
                    continue
                model, sep, url = item.partition("=")
                if not sep or not model.strip():
                    raise ValueError(f"{where}: {item.strip()!r} is not '<model id>=<URL>'.")
                pairs.append((model.strip(), _check_url(url, where)))
            models = tuple(pairs)
        elif endpoint:
            if "{model}" not in endpoint:
                raise ValueError(
                    f"{where}={redact_url(endpoint)!r} names one server but not the model it "
                    "serves. Write '<model id>=<URL>' (e.g. "
                    "'meta-llama/Llama-3.1-70B-Instruct=http://gpu-box:8080' for a TGI, TEI or "
                    "Inference Endpoint serving that model; several pairs separated by commas), "
                    "or a URL with {model} for a router that serves any model by id (e.g. "
                    "'https://router.huggingface.co/hf-inference/models/{model}')."
                )
            template = _check_url(endpoint, where)
        if provider and provider != "auto" and provider not in _providers():
            known = ", ".join(sorted(_providers()))
            raise ValueError(
                f"inference_provider (GRAPH_AGENT_INFERENCE_PROVIDER)={provider!r} is not an "
                f"Inference Provider huggingface_hub knows. Use 'auto' or one of: {known}."
            )
        return cls(template=template, models=models, provider=provider, timeout_s=timeout_s)

    def url_for(self, model_id: str) -> str | None:
        """The URL serving ``model_id``: its own deployment, else the template; None if neither."""
        wanted = model_id.lower()
        for model, url in self.models:
            if model.lower() == wanted:
                return url
        return self.template.replace("{model}", model_id) if self.template else None

    @property
    def provider_usable(self) -> bool:
        """A provider is set and may be reached: providers need the Hub, offline mode forbids it."""
        return bool(self.provider) and not constants.is_offline_mode()

    def serves(self, model_id: str, call: str | None) -> bool:
        """True when ``call`` (see :func:`remote_call`) for ``model_id`` can go somewhere."""
        if call is None:
            return False
        if self.url_for(model_id) is not None:
            return True
        if not self.provider_usable:
            return False
        if self.provider == "auto":
            return True  # routed per model by the Hub at call time
        tasks = _providers().get(self.provider) or {}
        return ("conversational" if call == CHAT else call) in tasks

    def where(self, model_id: str) -> str:
        """Where ``model_id`` runs, for people: the URL without credentials, or the provider."""
        url = self.url_for(model_id)
        if url is not None:
            return redact_url(url)
        return f"Inference Provider '{self.provider}'" if self.provider else "nowhere"


def inference_token() -> str | None:
    """The token for remote calls, read from the environment at call time (never stored)."""
    for name in TOKEN_VARS:
        if value := os.environ.get(name, "").strip():
            return value
    return None


# --------------------------------------------------------------------------- errors


class RemoteInferenceError(ToolError):
    """A remote model call failed; another candidate (local or remote) may still succeed."""


class RemoteAuthError(RemoteInferenceError):
    """The endpoint refused the token (HTTP 401/403): retrying cannot help, a token can."""


class RemoteTimeoutError(RemoteInferenceError):
    """The endpoint did not answer within ``inference_timeout_s``."""


# --------------------------------------------------------------------------- HTTP


_session: httpx.Client | None = None
_session_lock = threading.Lock()


def _refuse_hub_when_offline(request: httpx.Request) -> None:
    host = request.url.host or ""
    if constants.is_offline_mode() and any(host == h or host.endswith("." + h) for h in HUB_HOSTS):
        raise OfflineModeIsEnabled(
            f"Cannot reach {redact_url(str(request.url))}: it is the Hugging Face Hub and "
            "HF_HUB_OFFLINE is set. Unset HF_HUB_OFFLINE, or use a self-hosted endpoint."
        )


def _endpoint_session() -> httpx.Client:
    """One shared session for explicit endpoint URLs (thread-safe, like huggingface_hub's)."""
    global _session
    with _session_lock:
        if _session is None:
            _session = httpx.Client(
                follow_redirects=True,
                timeout=None,
                event_hooks={"request": [_refuse_hub_when_offline]},
            )
        return _session


class _EndpointClient(InferenceClient):
    """InferenceClient for one explicit URL, whose requests do not depend on HF_HUB_OFFLINE.

    Only the transport differs from the parent's ``_inner_post``: this module's session
    instead of huggingface_hub's shared one (see the module docstring), and an httpx read
    or write timeout becomes ``InferenceTimeoutError`` as the parent intends (its ``except
    TimeoutError`` does not catch httpx's timeouts). Streaming is not used here.
    """

    def _inner_post(self, request_parameters: Any, *, stream: bool = False) -> Any:
        if stream:
            raise ValueError("graph-agent's remote back end does not stream responses.")
        try:
            response = _endpoint_session().post(
                request_parameters.url,
                json=request_parameters.json,
                content=request_parameters.data,
                headers=request_parameters.headers,
                cookies=self.cookies,
                timeout=self.timeout,
            )
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout | httpx.PoolTimeout):
                raise  # could not connect: a connection problem, retried
            raise InferenceTimeoutError(
                f"Inference call timed out: {redact_url(request_parameters.url)}"
            ) from error
        hf_raise_for_status(response)
        return response.content


# --------------------------------------------------------------------------- retries


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded in attempts and in each wait.

    The wait before retry ``n`` (1-based) is ``min(max_s, base_s * 2**(n-1))``, of which a
    random half is jitter (so clients failing together do not retry together). A server's
    ``Retry-After`` replaces it, capped at ``max_s``.
    """

    attempts: int = 3
    base_s: float = 0.5
    max_s: float = 8.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return max(0.0, min(self.max_s, retry_after))
        cap = min(self.max_s, self.base_s * 2 ** (retry - 1))
        return cap / 2 + random.uniform(0, cap / 2)


def _causes(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _response(exc: BaseException) -> httpx.Response | None:
    """The HTTP response behind ``exc`` (TGI's error types keep it on their cause)."""
    for e in _causes(exc):
        if isinstance(e, HfHubHTTPError) and isinstance(e.response, httpx.Response):
            return e.response
    return None


def _retry_after(response: httpx.Response | None) -> float | None:
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:  # an HTTP date: use our own backoff
        return None


def _server_says(exc: BaseException, response: httpx.Response | None) -> str:
    """What the server said, short: its error message, else the response text."""
    said = getattr(exc, "server_message", None)
    if not said and response is not None:
        try:
            said = response.text
        except httpx.ResponseNotRead:
            said = ""
    said = " ".join(str(said or "").split())
    return said[:300] + ("…" if len(said) > 300 else "")


# --------------------------------------------------------------------------- the back end


def _field(item: Any, name: str) -> Any:
    """A field of a parsed answer: huggingface_hub's types are dataclasses (and, for now, dicts)."""
    return item[name] if isinstance(item, dict) and name in item else getattr(item, name)


def _labels(elements: Any) -> ToolResult:
    """``[{label, score}]`` from a server as a labels result, best first."""
    if isinstance(elements, dict):  # a server that answered one label, not a list
        elements = [elements]
    if elements and isinstance(elements[0], list):  # one list per input: we sent one input
        elements = elements[0]
    data = sorted(
        (
            {"label": str(_field(e, "label")), "score": round(float(_field(e, "score")), 4)}
            for e in elements or []
        ),
        key=lambda d: -d["score"],
    )
    if not data:
        raise ToolError("The remote model returned no labels.")
    top = data[0]
    return ToolResult(
        kind="labels", modality="text", text=top["label"], confidence=top["score"], data=data
    )


def _vector(raw: Any) -> np.ndarray:
    """One unit-length sentence vector from a feature-extraction answer.

    Servers answer ``[d]`` (a sentence encoder), ``[[d]]`` (TEI: one row per input) or
    ``[[[d]] * tokens]`` (a plain encoder: one vector per token, mean-pooled here). Unit
    length matches the local tool, which normalises its embeddings.
    """
    vec = np.asarray(raw, dtype=np.float32)
    while vec.ndim > 1:
        vec = vec[0] if vec.shape[0] == 1 else vec.mean(axis=0)
    norm = float(np.linalg.norm(vec))
    if vec.size == 0 or not math.isfinite(norm) or norm == 0.0:
        raise ToolError("The remote model returned an empty or zero embedding.")
    return vec / norm


def _media(call: ToolCall, role: str) -> Path:
    path = Path(str(call.args[role])).expanduser()
    if not path.is_file():
        raise InputFileError(f"The {role} file {path} does not exist, so it cannot be sent.")
    return path


class _ChatModel:
    """A local ``text-generation`` pipeline's call shape over a chat-completion endpoint.

    The text tools call ``pipe(messages, max_new_tokens=..., ...)`` and read
    ``out[0]["generated_text"]``; answering the same way lets them send their own prompts
    remotely, so a step is asked the same question wherever it runs.
    """

    def __init__(self, send: Callable[[list[dict[str, str]], int], str]) -> None:
        self.send = send

    def __call__(
        self, messages: list[dict[str, str]], max_new_tokens: int = 128, **_: Any
    ) -> list[dict[str, str]]:
        return [{"generated_text": self.send(messages, max_new_tokens)}]


@dataclass
class RemoteBackend:
    """Runs steps on remote models: one InferenceClient per call, retries and clear errors."""

    config: RemoteConfig
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep

    def client(self, model_id: str) -> tuple[InferenceClient, str | None]:
        """A client for ``model_id`` and the ``model`` argument its calls take.

        An explicit URL gets an :class:`_EndpointClient` bound to it (calls pass no model);
        otherwise the provider's client, whose calls name the model by its Hub id.
        """
        timeout = self.config.timeout_s or None
        url = self.config.url_for(model_id)
        if url is not None:
            return _EndpointClient(model=url, token=inference_token(), timeout=timeout), None
        if not self.config.provider:
            raise RemoteInferenceError(
                f"No inference endpoint serves {model_id}: add '{model_id}=<URL>' to "
                "GRAPH_AGENT_INFERENCE_ENDPOINT, or set GRAPH_AGENT_INFERENCE_PROVIDER."
            )
        client = InferenceClient(
            provider=self.config.provider, token=inference_token(), timeout=timeout
        )
        return client, model_id

    def run(self, task: str, model_id: str, call_kind: str, call: ToolCall) -> ToolResult:
        """Run ``task`` on ``model_id`` remotely; errors are :class:`RemoteInferenceError`."""
        no_url = self.config.url_for(model_id) is None
        if no_url and self.config.provider and not self.config.provider_usable:
            raise RemoteInferenceError(
                f"{model_id} would run on Inference Provider '{self.config.provider}', which is "
                "reached through the Hugging Face Hub, and HF_HUB_OFFLINE=1 forbids that. Unset "
                f"HF_HUB_OFFLINE, or set GRAPH_AGENT_INFERENCE_ENDPOINT='{model_id}=<URL>'."
            )
        if not self.config.serves(model_id, call_kind):
            raise RemoteInferenceError(
                f"{model_id} is not served remotely for {task} by the configured endpoint "
                f"({self.config.where(model_id)}); check GRAPH_AGENT_INFERENCE_ENDPOINT."
            )
        client, model = self.client(model_id)
        where = self.config.where(model_id)

        def post(fn: Callable[[], T]) -> T:
            return self.with_retries(fn, where=where, model_id=model_id)

        try:
            if call_kind == CHAT:
                return self._chat(client, model or model_id, task, call, post)
            return self._native(client, model, task, call, post)
        finally:
            client.close()

    def _chat(
        self,
        client: InferenceClient,
        model: str,
        task: str,
        call: ToolCall,
        post: Callable[[Callable[[], Any]], Any],
    ) -> ToolResult:
        def send(messages: list[dict[str, str]], max_new_tokens: int) -> str:
            # ``model`` goes in the payload: OpenAI-style servers (vLLM) route on it, TGI
            # ignores it, and a provider needs it.
            out = post(
                lambda: client.chat_completion(messages, model=model, max_tokens=max_new_tokens)
            )
            content = out.choices[0].message.content if out.choices else None
            if not content:
                raise ToolError(f"The remote model {model} returned an empty reply.")
            return content

        return get_tool(task).call(_ChatModel(send), call)

    def _native(
        self,
        client: InferenceClient,
        model: str | None,
        task: str,
        call: ToolCall,
        post: Callable[[Callable[[], Any]], Any],
    ) -> ToolResult:
        args = call.args
        if task == "summarization":
            out = post(lambda: client.summarization(str(args["text"]), model=model))
            return ToolResult(kind="summary", modality="text", text=out.summary_text.strip())
        if task == "translation":
            out = post(lambda: client.translation(str(args["text"]), model=model))
            return ToolResult(kind="translation", modality="text", text=out.translation_text)
        if task == "text-classification":
            return _labels(post(lambda: client.text_classification(str(args["text"]), model=model)))
        if task == "zero-shot-classification":
            labels = args.get("labels") or []
            labels = [s.strip() for s in labels.split(",")] if isinstance(labels, str) else labels
            if not labels:
                raise ToolError(
                    "Zero-shot classification needs candidate labels, e.g. labels=sports,politics."
                )
            text = str(args["text"])
            return _labels(
                post(lambda: client.zero_shot_classification(text, list(labels), model=model))
            )
        if task == "feature-extraction":
            vec = _vector(post(lambda: client.feature_extraction(str(args["text"]), model=model)))
            return ToolResult(
                kind="embedding",
                modality="text",
                text=f"{vec.shape[0]}-dimensional embedding",
                data=[round(float(x), 6) for x in vec],
            )
        if task == "sentence-similarity":
            a, b = (
                _vector(post(lambda t=t: client.feature_extraction(str(t), model=model)))
                for t in (args["text"], args["other"])
            )
            score = float(np.dot(a, b))
            return ToolResult(
                kind="similarity",
                modality="text",
                text=f"{score:.3f}",
                data={"cosine": round(score, 4)},
            )
        if task == "automatic-speech-recognition":
            audio = _media(call, "audio")
            out = post(lambda: client.automatic_speech_recognition(audio, model=model))
            return ToolResult(kind="transcript", modality="text", text=str(out.text).strip())
        if task == "image-classification":
            image = _media(call, "image")
            return _labels(post(lambda: client.image_classification(image, model=model)))
        raise RemoteInferenceError(f"The remote back end cannot run {task}.")

    def with_retries(self, fn: Callable[[], T], *, where: str, model_id: str) -> T:
        """``fn()`` with retries on 429/5xx/connection errors; every failure made clear."""
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return fn()
            except (ToolError, InputFileError):
                raise  # ours: already clear, and not the server's fault
            except Exception as exc:
                response = _response(exc)
                status = response.status_code if response is not None else None
                said = _server_says(exc, response)
                if status in (401, 403):
                    raise self._auth_error(where, model_id, status, said) from exc
                if isinstance(exc, InferenceTimeoutError | httpx.ReadTimeout | httpx.WriteTimeout):
                    raise RemoteTimeoutError(
                        f"{where} did not answer within {self.config.timeout_s:g} s for "
                        f"{model_id} (inference_timeout_s); the model may still be loading or "
                        "the server is overloaded. Raise GRAPH_AGENT_INFERENCE_TIMEOUT_S or try "
                        "again later."
                    ) from exc
                if isinstance(exc, OfflineModeIsEnabled):
                    raise RemoteInferenceError(
                        f"{where} for {model_id} needs the Hugging Face Hub, which "
                        "HF_HUB_OFFLINE=1 forbids: unset HF_HUB_OFFLINE, or serve the model "
                        f"yourself and set GRAPH_AGENT_INFERENCE_ENDPOINT='{model_id}=<URL>'."
                    ) from exc
                if status is not None:
                    transient = status == 429 or status >= 500
                else:
                    transient = isinstance(exc, httpx.TransportError)
                what = f"HTTP {status}" if status is not None else f"{type(exc).__name__}: {exc}"
                if said:
                    what += f" ({said})"
                if not transient:
                    raise RemoteInferenceError(
                        f"{where} refused the request for {model_id}: {what}. Check that it "
                        "serves this model and task."
                        if status is not None
                        else f"Calling {where} for {model_id} failed: {what}"
                    ) from exc
                if attempt == self.policy.attempts:
                    hint = (
                        "is the server running, and is the URL in GRAPH_AGENT_INFERENCE_ENDPOINT "
                        "right?"
                        if status is None
                        else "the server is failing or overloaded; try again later."
                    )
                    raise RemoteInferenceError(
                        f"{where} failed for {model_id} after {attempt} attempts: {what}; {hint}"
                    ) from exc
                wait = self.policy.delay(attempt, _retry_after(response))
                log.warning(
                    "%s failed for %s (%s); retry %d of %d in %.2f s",
                    where,
                    model_id,
                    what,
                    attempt,
                    self.policy.attempts - 1,
                    wait,
                )
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _auth_error(where: str, model_id: str, status: int, said: str) -> RemoteAuthError:
        sent = next((name for name in TOKEN_VARS if os.environ.get(name, "").strip()), None)
        token = (
            f"the token from {sent} was not accepted"
            if sent
            else "no token was set in GRAPH_AGENT_INFERENCE_TOKEN or HF_TOKEN"
        )
        kind = "401 Unauthorized" if status == 401 else "403 Forbidden"
        return RemoteAuthError(
            f"{where} refused {model_id} with HTTP {kind}: {token}"
            + (f" (server: {said})" if said else "")
            + ". Set HF_TOKEN (or GRAPH_AGENT_INFERENCE_TOKEN) to a token this endpoint accepts"
            + (", with access to this model." if status == 403 else ".")
        )


__all__ = [
    "CHAT",
    "REMOTE_TASKS",
    "RemoteAuthError",
    "RemoteBackend",
    "RemoteConfig",
    "RemoteInferenceError",
    "RemoteTimeoutError",
    "RetryPolicy",
    "choose_backend",
    "inference_token",
    "redact_url",
    "remote_call",
]
