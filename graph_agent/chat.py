"""The chat models graph-agent talks to, and everything it says to them.

One module for the chat-model factory and every prompt (the LLM planner's, the LLM critic's,
the answer writer's), so what the agent asks a model is read and changed in one place. The
task tools' own prompts to the local chat model stay with the tools (`graph_agent.tools.text`):
they are part of how a task runs, not of how the agent plans or judges.

Chat model specs (``Context.planner``; see :func:`make_chat_model`):

- ``hf:<local dir>``: a transformers model directory with a chat template, run on CPU.
- ``openai-compatible:<model>@<base_url>``: any OpenAI-compatible server (vLLM, Ollama,
  llama.cpp server, LM Studio), e.g. ``openai-compatible:qwen2.5@http://127.0.0.1:8000/v1``.
  The key comes from ``GRAPH_AGENT_LLM_API_KEY``, then ``OPENAI_API_KEY``, else
  ``"not-needed"`` (local servers ignore it).
- ``openai:<model>``: OpenAI itself (``OPENAI_API_KEY``).
- any other ``provider:model``: whatever ``init_chat_model`` serves, once that provider's
  package is installed (``pip install langchain-anthropic`` for ``anthropic:...``).

Every spec but ``hf:`` is built by LangChain's ``init_chat_model``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage


class LLMPlannerError(ValueError):
    """A chat-model spec is malformed or names a back end that is not installed."""


# --------------------------------------------------------------------------- chat models

#: Seconds an OpenAI-compatible request may take before the planner gives up on it.
DEFAULT_TIMEOUT = float(os.environ.get("GRAPH_AGENT_LLM_TIMEOUT", "120"))
#: Enough for a plan of about eight steps in the compact JSON the examples show.
DEFAULT_MAX_NEW_TOKENS = 384


_MODELS: dict[str, BaseChatModel] = {}
_MODELS_LOCK = threading.Lock()


def make_chat_model(spec: str) -> BaseChatModel:
    """The chat model a spec names, built once per spec and reused (loading is the slow part).

    See the module docstring for the spec syntax. Raises :class:`LLMPlannerError` with what to
    fix or install when the spec cannot be served.
    """
    spec = spec.strip()
    provider, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise LLMPlannerError(
            f"Planner spec {spec!r} is not 'offline' or '<provider>:<model>'. Examples: "
            "'hf:/path/to/model-dir', 'openai:gpt-4o-mini', "
            "'openai-compatible:<model>@http://127.0.0.1:8000/v1'."
        )
    key = f"hf:{Path(rest).expanduser().resolve()}" if provider == "hf" else spec
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _build_chat_model(provider.strip().lower(), rest.strip())
        return _MODELS[key]


def _build_chat_model(provider: str, rest: str) -> BaseChatModel:
    if provider == "hf":
        return _huggingface(rest)
    if provider in ("openai-compatible", "openai_compatible"):
        model, at, base_url = rest.rpartition("@")
        if not at or not model or not base_url.startswith(("http://", "https://")):
            raise LLMPlannerError(
                f"'openai-compatible:{rest}' must be 'openai-compatible:<model>@<base_url>', "
                "e.g. 'openai-compatible:qwen2.5@http://127.0.0.1:8000/v1'."
            )
        return _init_chat_model("openai", model, base_url=base_url)
    if provider == "openai":
        return _init_chat_model("openai", rest, base_url=None)
    return _init_chat_model(provider, rest)


def _init_chat_model(provider: str, model: str, **kwargs: Any) -> BaseChatModel:
    """``init_chat_model`` with the planner's settings, and errors that say what to do."""
    from langchain.chat_models import init_chat_model

    if provider == "openai":
        api_key = os.environ.get("GRAPH_AGENT_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if kwargs.get("base_url") is None and not api_key:
            raise LLMPlannerError(
                f"Planner 'openai:{model}' needs OPENAI_API_KEY in the environment. For a "
                "local server use 'openai-compatible:<model>@<base_url>'."
            )
        # Local servers ignore the key, but the client refuses to start without one.
        kwargs.update(api_key=api_key or "not-needed", timeout=DEFAULT_TIMEOUT, max_retries=1)
    try:
        return init_chat_model(model, model_provider=provider, temperature=0, **kwargs)
    except ImportError as exc:
        raise LLMPlannerError(
            f"Planner '{provider}:{model}' needs that provider's LangChain package: {exc}. "
            "The planner also supports 'hf:<dir>' and "
            "'openai-compatible:<model>@<base_url>' with what is installed."
        ) from None
    except Exception as exc:  # each provider raises its own types for bad settings
        raise LLMPlannerError(f"Cannot make chat model '{provider}:{model}': {exc}") from exc


def _huggingface(directory: str) -> BaseChatModel:
    """A local transformers chat model on CPU: greedy, no remote code, reply text only."""
    path = Path(directory).expanduser()
    if not (path / "config.json").is_file():
        raise LLMPlannerError(
            f"Planner 'hf:{directory}': {path} is not a transformers model directory "
            "(no config.json). Give the directory of an installed chat model, e.g. "
            "~/.cache/graph-agent/models/qwen2.5-coder-1.5b-instruct."
        )
    import torch
    import transformers
    from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline

    try:
        pipe = _load_pipeline(transformers, torch, path)
    except (OSError, ValueError) as exc:
        raise LLMPlannerError(f"Planner 'hf:{directory}': cannot load the model: {exc}") from exc
    # A greedy run must not warn about (or use) the sampling settings in generation_config.
    generation = pipe.model.generation_config
    generation.temperature = generation.top_p = generation.top_k = None
    llm = HuggingFacePipeline(pipeline=pipe, model_id=str(path))
    # Passing the tokenizer stops ChatHuggingFace from resolving it by name on the Hub.
    return ChatHuggingFace(llm=llm, tokenizer=pipe.tokenizer, model_id=str(path))


def _load_pipeline(transformers: Any, torch: Any, path: Path) -> Any:
    return transformers.pipeline(
        "text-generation",
        model=str(path),
        device="cpu",
        # float32, not the checkpoint's bf16: on CPU, bf16 attention over a long prompt's
        # KV cache decodes about 8x slower per token (measured on Qwen2.5 1.5B here).
        dtype=torch.float32,
        trust_remote_code=False,
        # Pipeline-level defaults: HuggingFacePipeline forwards no generation settings itself.
        max_new_tokens=DEFAULT_MAX_NEW_TOKENS,
        do_sample=False,
        return_full_text=False,
    )


def reply_text(message: Any) -> str:
    """The text of a chat model's reply (LangChain joins content blocks), or of a plain value.

    The planner, the LLM critic and the LLM-written answer all read replies through this.
    """
    if isinstance(message, BaseMessage):
        return message.text
    return "" if message is None else str(message)


# --------------------------------------------------------------------------- the planner

PLANNER_SYSTEM = """You plan requests for an AI agent that runs Hugging Face models.
Split the request into steps. Each step runs ONE task from this list (name(role: kind, ...) -> \
output kind):
{vocabulary}

Rules:
- Use only task names from the list, and exactly the roles listed for the task.
- A role's value is literal text from the request, an input file name, or "<node-j>" for the \
output of step node-j. The kinds must match: an image role needs an image file or a step \
that outputs an image.
- Add a step only for something the request asks for. Do not add steps to present, read \
aloud, describe, classify or translate results unless the request says so.
- Use as few steps as the request needs. Steps that do not use each other's output have \
empty deps.
- Steps are "node-0", "node-1", ... in order; "deps" lists the steps whose outputs a step uses.
- If no task fits the request, answer {{"subtasks": []}}.
Answer with JSON only, no explanation: {{"subtasks": [{{"id": ..., "task": ..., "args": \
{{...}}, "deps": [...]}}]}}"""


def planner_request(request: str, input_types: Mapping[str, str | None]) -> str:
    """The planner's user turn: the request and the inputs it may use, with their kinds."""
    files = ", ".join(f"{name} ({kind or 'unknown'})" for name, kind in input_types.items())
    return f"Request: {request.strip()}\nInputs: {files or 'none'}"


def repair_message(problems: list[str]) -> HumanMessage:
    """What the model is told when its plan failed: every problem, then the same format."""
    listed = "\n".join(f"- {p}" for p in problems)
    return HumanMessage(
        f"That plan is not valid:\n{listed}\n"
        'Fix these problems and answer with the corrected JSON only: {"subtasks": [...]}.'
    )


# --------------------------------------------------------------------------- the critic

CRITIC_SYSTEM = (
    "You check the work of one step of a multi-step assistant. Answer 'yes' or 'no' on the "
    "first line, then give a one-sentence reason."
)


def critic_question(
    request: str, step: dict[str, Any], inputs: dict[str, str], output: str, shown_chars: int
) -> str:
    """The question the LLM critic answers about one step's text output."""
    shown = "\n".join(f"- {role}: {value[:shown_chars]}" for role, value in inputs.items())
    part = step.get("description") or request
    return (
        f"The user's request: {request}\n\n"
        f"This step's task: {step['task']}, for this part of the request: {part}\n"
        f"The step's inputs:\n{shown or '- (none)'}\n\n"
        f"The step's output:\n{output[:shown_chars]}\n\n"
        "Does the output do this step's part of the request? Answer yes or no, then why."
    )


# --------------------------------------------------------------------------- the answer

#: Characters of each output the answer prompt quotes.
MAX_PROMPT_TEXT = 4000


def answer_messages(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The chat prompt that asks a model to write the final answer from the results alone.

    Results are quoted in full (up to a limit) so the model can quote them exactly; failed
    steps come with their problems so the answer says what went wrong instead of guessing.
    """
    # Here, not at the top: the planner imports this module and needs no tool code.
    from graph_agent.tools.results import KIND_TITLES

    parts = []
    for s in report.get("steps") or []:
        head = f"- Step {s['id']} ({s['task']}"
        output = s.get("output")
        if output and output.get("kind") in KIND_TITLES:  # OCR text is no caption
            head += f", {KIND_TITLES[output['kind']].lower()}"
        head += f", model {s['model']})" if s.get("model") else ")"
        if output:
            if output.get("modality") in ("image", "audio") and output.get("path"):
                body = f"made the {output['modality']} file {output['path']}"
            else:
                body = json.dumps(
                    str(output.get("text") or "")[:MAX_PROMPT_TEXT], ensure_ascii=False
                )
        elif s["status"] == "skipped":
            body = "was skipped, because a step it needs failed"
        else:
            body = "failed: " + "; ".join(s.get("problems") or ["no output"])
        parts.append(f"{head}: {body}")
    system = (
        "You answer a user's request with the results of the models that ran it. Write a "
        "short answer for the user in plain sentences, not a list of steps. Quote each result "
        "you use exactly, in double quotes, and give file paths as they are. If a step failed "
        "or was skipped, say so plainly. Never invent a result."
    )
    human = (
        f"Request: {report.get('request', '')}\n\nResults:\n"
        + "\n".join(parts)
        + "\n\nWrite the answer for the user now."
    )
    return [("system", system), ("human", human)]
