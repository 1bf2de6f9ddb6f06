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

Which token goes where (:func:`endpoint_token`), read from the environment at call time:

- ``GRAPH_AGENT_INFERENCE_TOKEN``, the token the user set for inference, goes to the
  configured endpoint or provider, whatever its host;
- the Hugging Face token (``HF_TOKEN``, else the one saved by ``hf auth login``) goes only to
  Hugging Face hosts (:data:`HF_HOSTS`: the Hub and its router, Inference Endpoints, Spaces).
  A self-hosted server is someone else's machine: it must not receive the user's Hub
  credentials just because InferenceClient falls back to them;
- no bearer token is sent over plain ``http://`` to a host other than this machine (anyone on
  the network path could read it); a 401 then says so. ``127.0.0.1``/``localhost`` (an SSH
  tunnel, say) is fine;
- an endpoint URL with ``user:password@`` authenticates with those (HTTP Basic), no token.

Tokens never enter the graph state, the selection or the report; endpoints are shown without
credentials or query string, and every error message is passed through
:func:`graph_agent.common.redact.redact` and raised without the HTTP library's exception as its
cause (whose text and traceback would carry the full URL, credentials included).

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
request, even to a server on 127.0.0.1 the user named. Offline mode is about Hugging Face, so
requests to an explicit URL go through a session of this module that refuses Hugging Face hosts
(:data:`HF_HOSTS`) in offline mode and nothing else; InferenceClient still builds every request
and parses every response, and ``hf_raise_for_status`` still turns errors into
``HfHubHTTPError``. The same rule decides what counts as serving: an endpoint on a Hugging Face
host, like a provider, serves nothing while offline (:meth:`RemoteConfig.serves`), so the
selector never places a model there; a self-hosted endpoint on another host stays usable.
"""

from __future__ import annotations

import ipaddress
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
from typing import Any, Literal, NamedTuple, TypeVar
from urllib.parse import urlsplit

import httpx
import numpy as np
from huggingface_hub import InferenceClient, constants, get_token
from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError, OfflineModeIsEnabled
from huggingface_hub.utils import hf_raise_for_status

from graph_agent.common.redact import public_url, redact
from graph_agent.tools.embedding import candidate_labels, embedding_result, similarity_result
from graph_agent.tools.errors import InputFileError, ToolError
from graph_agent.tools.registry import get_tool
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import ToolCall
from graph_agent.tools.vision import labels_result

log = logging.getLogger(__name__)


class _RedactingFilter(logging.Filter):
    """Masks secrets in httpx's request log lines.

    httpx logs every request's full URL at INFO, and the LangGraph server logs INFO: an
    endpoint's ``?api_key=`` would otherwise land in the server log on every call.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


logging.getLogger("httpx").addFilter(_RedactingFilter())
T = TypeVar("T")
Backend = Literal["local", "remote"]

#: The token the user set for remote inference: sent to every configured endpoint.
INFERENCE_TOKEN_VAR = "GRAPH_AGENT_INFERENCE_TOKEN"
#: Hugging Face's own hosts, with their subdomains: the Hub and its router (huggingface.co,
#: hf.co: ``router.huggingface.co`` is where InferenceClient sends provider calls),
#: Inference Endpoints (``*.endpoints.huggingface.cloud``) and Spaces (``*.hf.space``). Only
#: these receive the Hugging Face token, and all of them are refused with HF_HUB_OFFLINE=1.
HF_HOSTS = ("huggingface.co", "hf.co", "huggingface.cloud", "hf.space")
#: Where huggingface_hub reads the Hugging Face token from, before the saved login.
_HF_TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")

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


def _hf_host_names() -> frozenset[str]:
    """:data:`HF_HOSTS` plus the Hub host huggingface_hub itself sends its token to
    (``HF_ENDPOINT``, a mirror or a private Hub), read now because tests and users set it."""
    own = {urlsplit(constants.ENDPOINT).hostname or ""}
    own |= set(getattr(constants, "HF_URL_HOSTS", ()))
    return frozenset(h.lower() for h in (*HF_HOSTS, *own) if h)


def is_hf_host(url: str) -> bool:
    """Whether ``url`` (or a bare host name) is on a Hugging Face host, subdomains included."""
    host = (urlsplit(url).hostname if "://" in url else url) or ""
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in _hf_host_names())


def _is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address: traffic that never leaves this machine."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _cleartext(scheme: str, host: str) -> bool:
    """Plain http:// to another machine: credentials sent there can be read on the way."""
    return scheme == "http" and not _is_loopback(host)


def _check_url(url: str, where: str) -> str:
    url = url.strip()
    parts = urlsplit(url.replace("{model}", "m"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{where}: {redact(url)!r} is not an http(s) URL. Give e.g. http://127.0.0.1:8080 "
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
                    raise ValueError(
                        f"{where}: {redact(item.strip())!r} is not '<model id>=<URL>'."
                    )
                pairs.append((model.strip(), _check_url(url, where)))
            models = tuple(pairs)
        elif endpoint:
            if "{model}" not in endpoint:
                raise ValueError(
                    f"{where}={public_url(endpoint)!r} names one server but not the model it "
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
        """The URL configured for ``model_id``: its own deployment, else the template; None if
        neither. Configured, not necessarily reachable: see :meth:`offline_blocked`.
        """
        wanted = model_id.lower()
        for model, url in self.models:
            if model.lower() == wanted:
                return url
        return self.template.replace("{model}", model_id) if self.template else None

    @property
    def provider_usable(self) -> bool:
        """A provider is set and may be reached: providers need the Hub, offline mode forbids it."""
        return bool(self.provider) and not constants.is_offline_mode()

    def offline_blocked(self, model_id: str) -> bool:
        """``model_id``'s URL is on a Hugging Face host and HF_HUB_OFFLINE=1 forbids reaching it.

        Such a model is not served at all (no fallback to the template or a provider): the
        user named that endpoint for it, and a run offline should say so, not quietly send the
        model's inputs somewhere else.
        """
        url = self.url_for(model_id)
        return url is not None and is_hf_host(url) and constants.is_offline_mode()

    @property
    def offline_endpoints(self) -> list[str]:
        """The configured endpoints (shown without credentials) that offline mode turns off."""
        if not constants.is_offline_mode():
            return []
        urls = [url for _, url in self.models] + ([self.template] if self.template else [])
        return [public_url(url) for url in urls if is_hf_host(url.replace("{model}", "m"))]

    def serves(self, model_id: str, call: str | None) -> bool:
        """True when ``call`` (see :func:`remote_call`) for ``model_id`` can go somewhere now."""
        if call is None:
            return False
        if self.url_for(model_id) is not None:
            return not self.offline_blocked(model_id)
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
            return public_url(url)
        return f"Inference Provider '{self.provider}'" if self.provider else "nowhere"


def inference_token() -> str | None:
    """``GRAPH_AGENT_INFERENCE_TOKEN``, read at call time (never stored); None when unset."""
    return os.environ.get(INFERENCE_TOKEN_VAR, "").strip() or None


class TokenChoice(NamedTuple):
    """The bearer token for one endpoint (None: send none), and how a 401/403 explains it."""

    token: str | None
    #: What was sent, or why nothing was, as the start of an auth error's explanation.
    said: str
    #: What to do about a 401/403.
    fix: str
    #: Whether the user and password in the URL go as HTTP Basic auth (never in clear text).
    basic_auth: bool = False


def endpoint_token(url: str) -> TokenChoice:
    """The bearer token to send to ``url``; the rules are in the module docstring."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    hf = is_hf_host(url)
    set_token = (
        f"Set HF_TOKEN (or {INFERENCE_TOKEN_VAR}) to a token this endpoint accepts"
        if hf
        else f"Set {INFERENCE_TOKEN_VAR} to a token this endpoint accepts (HF_TOKEN and the "
        "`hf auth login` token are only sent to Hugging Face hosts)"
    )
    if parts.username or parts.password:
        if _cleartext(parts.scheme, host):
            log.warning(
                "Not sending the user and password in %s: it is plain http:// to another "
                "machine, where anyone on the network path could read them. Use https://, or "
                "reach the server through a tunnel on 127.0.0.1.",
                public_url(url),
            )
            return TokenChoice(
                None,
                f"the user and password in the endpoint URL were not sent, because {host} is "
                "reached over plain http:// and anyone on the network path could read them",
                "Serve the endpoint over https://, or reach it through a tunnel on 127.0.0.1",
                basic_auth=False,
            )
        return TokenChoice(
            None,
            "the user and password in the endpoint URL (sent as HTTP Basic auth, instead of a "
            "token) were not accepted",
            "Correct them in GRAPH_AGENT_INFERENCE_ENDPOINT",
            basic_auth=True,
        )
    token = inference_token()
    if token is not None:
        source = f"the token from {INFERENCE_TOKEN_VAR}"
    elif hf:
        token = get_token()  # HF_TOKEN, else the token saved by `hf auth login`
        if token is None:
            return TokenChoice(
                None,
                f"no token was set ({INFERENCE_TOKEN_VAR}, HF_TOKEN or `hf auth login`)",
                set_token,
            )
        var = next((v for v in _HF_TOKEN_VARS if os.environ.get(v, "").strip()), None)
        source = f"the token from {var}" if var else "the token saved by `hf auth login`"
    else:
        return TokenChoice(
            None, f"no token was sent, as {INFERENCE_TOKEN_VAR} is not set", set_token
        )
    if _cleartext(parts.scheme, host):
        log.warning(
            "Not sending %s to %s: it is plain http:// to another machine, where anyone on the "
            "network path could read the token. Use https://, or reach the server through a "
            "tunnel on 127.0.0.1.",
            source,
            public_url(url),
        )
        return TokenChoice(
            None,
            f"{source} was not sent, because {host} is reached over plain http:// and anyone on "
            "the network path could read it",
            "Serve the endpoint over https://, or reach it through a tunnel on 127.0.0.1",
        )
    return TokenChoice(token, f"{source} was not accepted", set_token)


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
    if constants.is_offline_mode() and is_hf_host(request.url.host or ""):
        raise OfflineModeIsEnabled(
            f"Cannot reach {public_url(str(request.url))}: it is a Hugging Face host and "
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
    instead of huggingface_hub's shared one (see the module docstring), the Authorization
    header is the one :func:`endpoint_token` chose, and an httpx read or write timeout becomes
    ``InferenceTimeoutError`` as the parent intends (its ``except TimeoutError`` does not catch
    httpx's timeouts). Streaming is not used here.

    The header is set here, on the request about to leave, because huggingface_hub fills it
    in by itself: with no token (``token=None``; ``token=False`` is refused by
    InferenceClient 1.x) it sends ``HF_TOKEN`` or the saved login token, to any host.
    """

    def __init__(self, *, model: str, timeout: float | None) -> None:
        self.token_choice = endpoint_token(model)
        self.bearer = self.token_choice.token
        super().__init__(model=model, token=self.bearer, timeout=timeout)

    def _inner_post(self, request_parameters: Any, *, stream: bool = False) -> Any:
        if stream:
            raise ValueError("graph-agent's remote back end does not stream responses.")
        headers = {
            k: v for k, v in request_parameters.headers.items() if k.lower() != "authorization"
        }
        if self.bearer is not None:
            headers["authorization"] = f"Bearer {self.bearer}"
        # The URL's user and password leave the URL (httpx logs URLs) and go as Basic auth,
        # only where `endpoint_token` allows it.
        url = httpx.URL(request_parameters.url)
        auth = None
        if url.userinfo:
            if self.token_choice.basic_auth:
                auth = httpx.BasicAuth(url.username, url.password)
            url = url.copy_with(username=None, password=None)
        try:
            response = _endpoint_session().post(
                url,
                auth=auth,
                json=request_parameters.json,
                content=request_parameters.data,
                headers=headers,
                cookies=self.cookies,
                timeout=self.timeout,
            )
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout | httpx.PoolTimeout):
                raise  # could not connect: a connection problem, retried
            raise InferenceTimeoutError(
                f"Inference call timed out: {public_url(request_parameters.url)}"
            ) from None
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
    """A server's labels answer as the local tools' labels result (one builder for both).

    Servers differ only in the shape around ``{label, score}``: one dict instead of a list,
    one list per input, or huggingface_hub's dataclasses; that is unwrapped here.
    """
    if isinstance(elements, dict):  # a server that answered one label, not a list
        elements = [elements]
    if elements and isinstance(elements[0], list):  # one list per input: we sent one input
        elements = elements[0]
    preds = [{"label": _field(e, "label"), "score": _field(e, "score")} for e in elements or []]
    return labels_result("labels", preds)


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
            return _EndpointClient(model=url, timeout=timeout), None
        if not self.config.provider:
            raise RemoteInferenceError(
                f"No inference endpoint serves {model_id}: add '{model_id}=<URL>' to "
                "GRAPH_AGENT_INFERENCE_ENDPOINT, or set GRAPH_AGENT_INFERENCE_PROVIDER."
            )
        # Providers are reached through router.huggingface.co (a Hugging Face host), unless
        # GRAPH_AGENT_INFERENCE_TOKEN is a provider's own key, which InferenceClient sends to
        # that provider: both are where these tokens belong.
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
        if self.config.offline_blocked(model_id):
            raise RemoteInferenceError(
                f"{model_id} would run at {self.config.where(model_id)}, a Hugging Face host, "
                "and HF_HUB_OFFLINE=1 forbids reaching it. Unset HF_HUB_OFFLINE, or serve the "
                f"model yourself and set GRAPH_AGENT_INFERENCE_ENDPOINT='{model_id}=<URL>'."
            )
        if not self.config.serves(model_id, call_kind):
            raise RemoteInferenceError(
                f"{model_id} is not served remotely for {task} by the configured endpoint "
                f"({self.config.where(model_id)}); check GRAPH_AGENT_INFERENCE_ENDPOINT."
            )
        client, model = self.client(model_id)
        where = self.config.where(model_id)
        # A provider's client is huggingface_hub's own: it sends what a Hugging Face host
        # gets (GRAPH_AGENT_INFERENCE_TOKEN, else the Hugging Face token).
        token = getattr(client, "token_choice", None) or endpoint_token(
            constants.INFERENCE_PROXY_TEMPLATE
        )

        def post(fn: Callable[[], T]) -> T:
            return self.with_retries(fn, where=where, model_id=model_id, token=token)

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
            labels, text = candidate_labels(call), str(args["text"])
            return _labels(post(lambda: client.zero_shot_classification(text, labels, model=model)))
        if task == "feature-extraction":
            vec = _vector(post(lambda: client.feature_extraction(str(args["text"]), model=model)))
            return embedding_result(vec)
        if task == "sentence-similarity":
            a, b = (
                _vector(post(lambda t=t: client.feature_extraction(str(t), model=model)))
                for t in (args["text"], args["other"])
            )
            return similarity_result(a, b)
        if task == "automatic-speech-recognition":
            audio = _media(call, "audio")
            out = post(lambda: client.automatic_speech_recognition(audio, model=model))
            return ToolResult(kind="transcript", modality="text", text=str(out.text).strip())
        if task == "image-classification":
            image = _media(call, "image")
            return _labels(post(lambda: client.image_classification(image, model=model)))
        raise RemoteInferenceError(f"The remote back end cannot run {task}.")

    def with_retries(
        self,
        fn: Callable[[], T],
        *,
        where: str,
        model_id: str,
        token: TokenChoice | None = None,
    ) -> T:
        """``fn()`` with retries on 429/5xx/connection errors; every failure made clear.

        Errors are raised ``from None``, with what the HTTP library said passed through
        :func:`~graph_agent.common.redact.redact`: its exceptions name the full request URL,
        credentials and ``?api_key=`` included, and a chained cause would carry them into
        tracebacks, logs and the attempt the executor checkpoints.
        """
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return fn()
            except (ToolError, InputFileError):
                raise  # ours: already clear, and not the server's fault
            except Exception as exc:
                response = _response(exc)
                status = response.status_code if response is not None else None
                said = redact(_server_says(exc, response))
                if status in (401, 403):
                    raise self._auth_error(where, model_id, status, said, token) from None
                if isinstance(exc, InferenceTimeoutError | httpx.ReadTimeout | httpx.WriteTimeout):
                    raise RemoteTimeoutError(
                        f"{where} did not answer within {self.config.timeout_s:g} s for "
                        f"{model_id} (inference_timeout_s); the model may still be loading or "
                        "the server is overloaded. Raise GRAPH_AGENT_INFERENCE_TIMEOUT_S or try "
                        "again later."
                    ) from None
                if isinstance(exc, OfflineModeIsEnabled):
                    raise RemoteInferenceError(
                        f"{where} for {model_id} needs a Hugging Face host, which "
                        "HF_HUB_OFFLINE=1 forbids: unset HF_HUB_OFFLINE, or serve the model "
                        f"yourself and set GRAPH_AGENT_INFERENCE_ENDPOINT='{model_id}=<URL>'."
                    ) from None
                if status is not None:
                    transient = status == 429 or status >= 500
                else:
                    transient = isinstance(exc, httpx.TransportError)
                what = (
                    f"HTTP {status}"
                    if status is not None
                    else redact(f"{type(exc).__name__}: {exc}")
                )
                if said:
                    what += f" ({said})"
                if not transient:
                    raise RemoteInferenceError(
                        f"{where} refused the request for {model_id}: {what}. Check that it "
                        "serves this model and task."
                        if status is not None
                        else f"Calling {where} for {model_id} failed: {what}"
                    ) from None
                if attempt == self.policy.attempts:
                    hint = (
                        "is the server running, and is the URL in GRAPH_AGENT_INFERENCE_ENDPOINT "
                        "right?"
                        if status is None
                        else "the server is failing or overloaded; try again later."
                    )
                    raise RemoteInferenceError(
                        f"{where} failed for {model_id} after {attempt} attempts: {what}; {hint}"
                    ) from None
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
    def _auth_error(
        where: str, model_id: str, status: int, said: str, token: TokenChoice | None
    ) -> RemoteAuthError:
        token = token or endpoint_token(where)
        kind = "401 Unauthorized" if status == 401 else "403 Forbidden"
        fix = token.fix
        if status == 403 and fix.startswith("Set "):
            fix += ", with access to this model"
        return RemoteAuthError(
            f"{where} refused {model_id} with HTTP {kind}: {token.said}"
            + (f" (server: {said})" if said else "")
            + f". {fix}."
        )


__all__ = [
    "CHAT",
    "HF_HOSTS",
    "REMOTE_TASKS",
    "RemoteAuthError",
    "RemoteBackend",
    "RemoteConfig",
    "RemoteInferenceError",
    "RemoteTimeoutError",
    "RetryPolicy",
    "TokenChoice",
    "choose_backend",
    "endpoint_token",
    "inference_token",
    "is_hf_host",
    "remote_call",
]
