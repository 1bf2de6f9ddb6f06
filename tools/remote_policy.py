"""Remote inference policy: where remote models run, and which token goes where.

Where remote models run (``Context.inference_endpoint`` / ``inference_provider``, parsed by
:class:`RemoteConfig`):

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
credentials or query string. An endpoint on a Hugging Face host, like a provider, serves
nothing while ``HF_HUB_OFFLINE=1`` (:meth:`RemoteConfig.serves`), so the selector never
places a model there; a self-hosted endpoint on another host stays usable.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from huggingface_hub import constants, get_token

from graph_agent.common.redact import public_url, redact

log = logging.getLogger(__name__)

#: How a step runs on a chat model's server: the local text tools' prompts, sent to its
#: chat-completion route (`graph_agent.tools.remote` maps tasks to calls).
CHAT = "chat-completion"

#: The token the user set for remote inference: sent to every configured endpoint.
INFERENCE_TOKEN_VAR = "GRAPH_AGENT_INFERENCE_TOKEN"
#: Hugging Face's own hosts, with their subdomains: the Hub and its router (huggingface.co,
#: hf.co: ``router.huggingface.co`` is where InferenceClient sends provider calls),
#: Inference Endpoints (``*.endpoints.huggingface.cloud``) and Spaces (``*.hf.space``). Only
#: these receive the Hugging Face token, and all of them are refused with HF_HUB_OFFLINE=1.
HF_HOSTS = ("huggingface.co", "hf.co", "huggingface.cloud", "hf.space")
#: Where huggingface_hub reads the Hugging Face token from, before the saved login.
_HF_TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


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
