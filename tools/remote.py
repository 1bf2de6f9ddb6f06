"""Remote inference: run a step on a model served over HTTP, through `huggingface_hub`'s
:class:`~huggingface_hub.InferenceClient`.

Local tools run what fits on this machine; this back end runs what does not (a 70B chat
model, a model whose weights are not here) on a server that has it: a self-hosted TGI or TEI,
a dedicated Inference Endpoint, a router that serves any model by id, or an Inference
Provider. The executor calls it for candidates the selector marked ``runs: "remote"``
(`graph_agent.retrieval_index.placement` holds the rule, HuggingGPT's "hybrid" mode). Where
models run and which token goes where is `graph_agent.tools.remote_policy`; HTTP, retries
and errors are `graph_agent.tools.remote_http`.

How each task is called is part of its spec (``TaskSpec.remote``, a ``RemoteRoute`` in
``graph_agent.tools.tasks``); the card's Hub pipeline tag picks the protocol, because a
deployment speaks the protocol of the model it serves:

- a task whose route says ``chat`` (text generation, summarising, translating, answering)
  on a ``text-generation``/``conversational`` model: chat completion
  (``POST <url>/v1/chat/completions``, TGI's Messages API) with the local tool's own prompt;
- a task on a model with one of its route's ``tags``: the task's own HF Inference protocol
  (``POST <url>`` ``{"inputs": ..., "parameters": ...}``), through the route's adapter: one
  of :data:`ADAPTERS` by name, or a user's function. A task registered from user code
  brings its route in its spec; ``register_remote`` gives an existing task one.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from huggingface_hub import InferenceClient, constants

from graph_agent.tools.embedding import candidate_labels, embedding_result, similarity_result
from graph_agent.tools.errors import InputFileError, ToolError
from graph_agent.tools.registry import get_tool
from graph_agent.tools.remote_http import (
    RemoteAuthError,
    RemoteInferenceError,
    RemoteTimeoutError,
    RetryPolicy,
    _EndpointClient,
    with_retries,
)
from graph_agent.tools.remote_policy import (
    CHAT,
    HF_HOSTS,
    RemoteConfig,
    TokenChoice,
    endpoint_token,
    inference_token,
    is_hf_host,
)
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import ToolCall
from graph_agent.tools.tasks import TASKS, RemoteRoute, register_task
from graph_agent.tools.vision import labels_result

#: Pipeline tags of chat models: their servers run the tasks whose route says ``chat``.
_CHAT_TAGS = frozenset({"text-generation", "conversational"})

#: Posts one request with the back end's retries: ``post(lambda: client.summarization(...))``.
Post = Callable[[Callable[[], Any]], Any]
#: Runs one task's call on a server with the task's own protocol: (client, model or None for
#: an explicit URL, the step's call, post) -> the same result the local tool gives.
Adapter = Callable[[InferenceClient, "str | None", ToolCall, Post], ToolResult]


@dataclass(frozen=True)
class NativeTask:
    """A task the remote back end runs with its own HF Inference protocol."""

    #: The pipeline tags of models that serve it that way.
    tags: frozenset[str]
    adapter: Adapter


#: The built-in adapters, by the name a spec's ``RemoteRoute.adapter`` gives (filled below).
ADAPTERS: dict[str, Adapter] = {}


def native(task: str) -> NativeTask | None:
    """How a server runs ``task`` with its own protocol, read from the task's spec; None
    when the spec has no route with tags, or names an adapter there is none of."""
    spec = TASKS.get(task)
    route = spec.remote if spec is not None else None
    if route is None or not route.tags or route.adapter is None:
        return None
    adapter = ADAPTERS.get(route.adapter) if isinstance(route.adapter, str) else route.adapter
    if adapter is None:
        return None
    return NativeTask(frozenset(t.lower() for t in route.tags), adapter)


def register_remote(task: str, tags: frozenset[str] | set[str], adapter: Adapter) -> None:
    """Let the remote back end run the registered ``task`` on models tagged ``tags`` through
    ``adapter``. It changes the task's spec, the one place the route is read from; a new
    task rather declares its route in the spec it registers (``TaskSpec.remote``)."""
    spec = TASKS[task]
    chat = spec.remote.chat if spec.remote is not None else False
    route = RemoteRoute(tuple(sorted(t.lower() for t in tags)), adapter, chat=chat)
    register_task(dataclasses.replace(spec, remote=route), replace=True)


def remote_tasks() -> frozenset[str]:
    """Every step task the remote back end can run (on a model with a fitting pipeline tag)."""
    return frozenset(
        name
        for name, spec in TASKS.items()
        if spec.remote is not None and (spec.remote.chat or native(name) is not None)
    )


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
    spec = TASKS.get(task)
    if spec is not None and spec.remote is not None and spec.remote.chat and tag in _CHAT_TAGS:
        return CHAT
    found = native(task)
    if found is not None and tag in found.tags:
        return task
    return None


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

        def post(fn: Callable[[], Any]) -> Any:
            return with_retries(
                fn,
                policy=self.policy,
                sleep=self.sleep,
                timeout_s=self.config.timeout_s,
                where=where,
                model_id=model_id,
                token=token,
            )

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

    @staticmethod
    def _native(
        client: InferenceClient, model: str | None, task: str, call: ToolCall, post: Post
    ) -> ToolResult:
        found = native(task)
        if found is None:
            raise RemoteInferenceError(f"The remote back end cannot run {task}.")
        return found.adapter(client, model, call, post)


# --------------------------------------------------------------------------- one adapter per task


def _summary(client: InferenceClient, model: str | None, call: ToolCall, post: Post) -> ToolResult:
    out = post(lambda: client.summarization(str(call.args["text"]), model=model))
    return ToolResult(kind="summary", modality="text", text=out.summary_text.strip())


def _translation(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    out = post(lambda: client.translation(str(call.args["text"]), model=model))
    return ToolResult(kind="translation", modality="text", text=out.translation_text)


def _text_labels(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    return _labels(post(lambda: client.text_classification(str(call.args["text"]), model=model)))


def _zero_shot(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    labels, text = candidate_labels(call), str(call.args["text"])
    return _labels(post(lambda: client.zero_shot_classification(text, labels, model=model)))


def _embedding(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    text = str(call.args["text"])
    return embedding_result(_vector(post(lambda: client.feature_extraction(text, model=model))))


def _similarity(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    a, b = (
        _vector(post(lambda t=t: client.feature_extraction(str(t), model=model)))
        for t in (call.args["text"], call.args["other"])
    )
    return similarity_result(a, b)


def _transcript(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    audio = _media(call, "audio")
    out = post(lambda: client.automatic_speech_recognition(audio, model=model))
    return ToolResult(kind="transcript", modality="text", text=str(out.text).strip())


def _image_labels(
    client: InferenceClient, model: str | None, call: ToolCall, post: Post
) -> ToolResult:
    image = _media(call, "image")
    return _labels(post(lambda: client.image_classification(image, model=model)))


#: Named so a spec in ``tools.tasks`` can say which one speaks its task's protocol: the
#: specs cannot import these functions, since this module imports them, and the planner
#: reads specs without loading huggingface_hub.
ADAPTERS.update(
    {
        "summarize": _summary,
        "translate": _translation,
        "text labels": _text_labels,
        "zero-shot labels": _zero_shot,
        "embed": _embedding,
        "compare embeddings": _similarity,
        "transcribe": _transcript,
        "image labels": _image_labels,
    }
)


__all__ = [
    "ADAPTERS",
    "CHAT",
    "HF_HOSTS",
    "RemoteAuthError",
    "RemoteBackend",
    "RemoteConfig",
    "RemoteInferenceError",
    "RemoteTimeoutError",
    "RetryPolicy",
    "TokenChoice",
    "endpoint_token",
    "inference_token",
    "is_hf_host",
    "native",
    "register_remote",
    "remote_call",
    "remote_tasks",
]
