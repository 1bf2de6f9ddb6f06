"""Remote inference over HTTP: one session for explicit endpoints, retries, clear errors.

Failures: HTTP 429, 5xx and connection errors are retried with exponential backoff and jitter
(:class:`RetryPolicy`, a bounded number of attempts; ``Retry-After`` is honoured up to the
cap). Other 4xx are not retried: the same request would fail the same way. A 401/403 becomes
:class:`RemoteAuthError`, naming the endpoint and the token variables; a call slower than the
timeout becomes :class:`RemoteTimeoutError` and is not retried either, since it has already
used its whole time budget (the executor moves on to the next candidate instead). Every error
message is passed through :func:`graph_agent.common.redact.redact` and raised without the HTTP
library's exception as its cause (whose text and traceback would carry the full URL,
credentials included).

Offline mode: ``HF_HUB_OFFLINE=1`` makes huggingface_hub's shared HTTP session refuse every
request, even to a server on 127.0.0.1 the user named. Offline mode is about Hugging Face, so
requests to an explicit URL go through a session of this module that refuses Hugging Face hosts
(:data:`~graph_agent.tools.remote_policy.HF_HOSTS`) in offline mode and nothing else;
InferenceClient still builds every request and parses every response, and
``hf_raise_for_status`` still turns errors into ``HfHubHTTPError``.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from huggingface_hub import InferenceClient, constants
from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError, OfflineModeIsEnabled
from huggingface_hub.utils import hf_raise_for_status

from graph_agent.common.redact import public_url, redact
from graph_agent.tools.errors import InputFileError, ToolError
from graph_agent.tools.remote_policy import TokenChoice, endpoint_token, is_hf_host

log = logging.getLogger(__name__)
T = TypeVar("T")


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

logging.getLogger("httpx").addFilter(_RedactingFilter())

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


def with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
    timeout_s: float,
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
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except (ToolError, InputFileError):
            raise  # ours: already clear, and not the server's fault
        except Exception as exc:
            response = _response(exc)
            status = response.status_code if response is not None else None
            said = redact(_server_says(exc, response))
            if status in (401, 403):
                raise _auth_error(where, model_id, status, said, token) from None
            if isinstance(exc, InferenceTimeoutError | httpx.ReadTimeout | httpx.WriteTimeout):
                raise RemoteTimeoutError(
                    f"{where} did not answer within {timeout_s:g} s for "
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
                f"HTTP {status}" if status is not None else redact(f"{type(exc).__name__}: {exc}")
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
            if attempt == policy.attempts:
                hint = (
                    "is the server running, and is the URL in GRAPH_AGENT_INFERENCE_ENDPOINT right?"
                    if status is None
                    else "the server is failing or overloaded; try again later."
                )
                raise RemoteInferenceError(
                    f"{where} failed for {model_id} after {attempt} attempts: {what}; {hint}"
                ) from None
            wait = policy.delay(attempt, _retry_after(response))
            log.warning(
                "%s failed for %s (%s); retry %d of %d in %.2f s",
                where,
                model_id,
                what,
                attempt,
                policy.attempts - 1,
                wait,
            )
            sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


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
