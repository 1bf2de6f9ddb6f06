"""The LLM planner: any LangChain chat model turns a request into a validated ``Plan``.

Why it is built this way:

- **Any chat model.** A plan is asked for as JSON, so the planner needs nothing beyond
  ``BaseChatModel.invoke``. Models that implement ``with_structured_output`` (``ChatOpenAI``
  and OpenAI-compatible servers) get it, because a schema-constrained reply fails less often;
  the others (a local ``ChatHuggingFace``, fakes) are parsed tolerantly from their text.
- **Few-shot, not just a schema.** Small local models copy worked examples far better than
  they follow a schema described in words (see ``few_shot.py``).
- **The validator decides.** Every plan goes through ``plan.validate``; its problems go back
  to the model, which gets ``max_repairs`` more tries. The validator, not the model, is the
  authority on types and references.
- **Never worse than offline.** If the model errors, times out, or cannot produce a valid
  plan, the offline planner takes over and the returned notes say so, so the report can tell
  a user which planner actually made their plan.

The chat model comes from `graph_agent.chat.make_chat_model` (its spec syntax is there), and
so do the planner's prompts.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from graph_agent.chat import PLANNER_SYSTEM, planner_request, repair_message, reply_text
from graph_agent.errors import RequestError
from graph_agent.planning.few_shot import EXAMPLES
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.plan import Plan, PlanError, Subtask, validate
from graph_agent.planning.vocabulary import TASKS, canonical
from graph_agent.tools.registry import REGISTRY
from graph_agent.tools.results import Modality

# --------------------------------------------------------------------------- prompt


class StepSchema(BaseModel):
    """One plan step as the model writes it (structured output schema)."""

    id: str = Field(description="'node-0', 'node-1', ... in order.")
    task: str = Field(description="A task name from the list, e.g. 'summarization'.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Role -> value: literal text, an input file name, or '<node-j>'.",
    )
    deps: list[str] = Field(default_factory=list, description="Ids of the steps it uses.")


class PlanSchema(BaseModel):
    """A plan: the steps that do what the request asks, in order (empty if none fits)."""

    subtasks: list[StepSchema] = Field(default_factory=list)


def _vocabulary_lines() -> str:
    lines = []
    for task in TASKS.values():
        roles = ", ".join(f"{role}: {kind}" for role, kind in task.roles)
        # Optional settings the task's back end takes besides its typed roles.
        tool = REGISTRY.get(task.name)
        extra = "".join(f", {opt}?" for opt in (tool.options if tool else ()))
        hint = "; ".join(task.synonyms[:2])
        lines.append(f"- {task.name}({roles}{extra}) -> {task.output}  # {hint}")
    return "\n".join(lines)


def build_messages(request: str, input_types: dict[str, Modality | None]) -> list[BaseMessage]:
    """System prompt with the vocabulary, the few-shot pairs, then the request."""
    messages: list[BaseMessage] = [
        SystemMessage(PLANNER_SYSTEM.format(vocabulary=_vocabulary_lines()))
    ]
    for example, inputs, plan in EXAMPLES:
        messages.append(HumanMessage(planner_request(example, dict(inputs))))  # type: ignore[arg-type]
        messages.append(AIMessage(json.dumps(plan, separators=(",", ":"))))
    messages.append(HumanMessage(planner_request(request, input_types)))
    return messages


# --------------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_GENERATED = re.compile(r"^<GENERATED>-(\d+)$")
_NODE_ID = re.compile(r"^node-\d+$")


class ReplyError(ValueError):
    """The model's reply holds no plan that can be read (not JSON, or the wrong shape)."""


def parse_plan_text(text: str) -> Plan:
    """Read a plan from a model's reply, however it is wrapped.

    Accepts ```json fences, prose around the JSON, ``{"subtasks": [...]}``, a bare list of
    steps, TaskBench's ``{"task_nodes": [...]}`` (positional ``arguments``) and HuggingGPT's
    ``dep``/``<GENERATED>-k``. Task names are mapped onto canonical ones; a name that maps to
    nothing is kept so the validator can say which step is wrong.
    """
    data = _first_json(text)
    return plan_from_data(data)


def _first_json(text: str) -> Any:
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for chunk in candidates:
        for i, ch in enumerate(chunk):
            if ch not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(chunk[i:])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                return value
    snippet = text.strip().replace("\n", " ")[:160]
    raise ReplyError(f"the reply is not JSON: {snippet!r}")


def plan_from_data(data: Any) -> Plan:
    """A ``Plan`` from parsed JSON in any of the shapes :func:`parse_plan_text` accepts."""
    if isinstance(data, dict):
        for key in ("subtasks", "task_nodes", "steps", "tasks", "plan", "nodes"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            if "task" in data:
                data = [data]
            else:
                raise ReplyError(
                    f"the JSON has no 'subtasks' list (keys: {', '.join(map(str, data)) or 'none'})"
                )
    if not isinstance(data, list):
        raise ReplyError("the JSON is not a list of steps")
    raw_ids: list[str] = []
    steps: list[dict[str, Any]] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("task"):
            raise ReplyError(f"step {i} is not an object with a 'task': {item!r:.80}")
        raw_ids.append(str(item.get("id", f"node-{i}")))
        steps.append(item)
    # Ids the model invented ("1", "step-2", 0) are renumbered; references follow them.
    renumber = {rid: f"node-{i}" for i, rid in enumerate(raw_ids) if not _NODE_ID.match(rid)}
    if len(set(raw_ids)) != len(raw_ids):
        renumber = {}
    subtasks = []
    for i, item in enumerate(steps):
        name = str(item["task"])
        task = canonical(name) or name
        args = _args(item, task, renumber)
        deps = item.get("deps", item.get("dep", []))
        deps = [
            d
            for d in (_dep(x, renumber) for x in (deps if isinstance(deps, list) else [deps]))
            if d
        ]
        subtasks.append(
            Subtask(
                id=renumber.get(raw_ids[i], raw_ids[i]),
                task=task,
                args=args,
                deps=deps,
                description=str(item.get("description", "")),
            )
        )
    return Plan(subtasks=subtasks)


def _args(item: dict[str, Any], task: str, renumber: dict[str, str]) -> dict[str, Any]:
    raw = item.get("args", item.get("arguments", {}))
    if isinstance(raw, list):  # TaskBench: positional, in the task's role order
        roles = [role for role, _ in TASKS[task].roles] if task in TASKS else []
        raw = {(roles[i] if i < len(roles) else f"arg{i}"): value for i, value in enumerate(raw)}
    elif not isinstance(raw, dict):
        raw = {"text": raw}
    return {str(role): _value(value, renumber) for role, value in raw.items()}


def _value(value: Any, renumber: dict[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    if m := _GENERATED.match(text):
        return f"<node-{m.group(1)}>"
    if text.startswith("<") and text.endswith(">") and text[1:-1] in renumber:
        return f"<{renumber[text[1:-1]]}>"
    return value


def _dep(value: Any, renumber: dict[str, str]) -> str | None:
    if isinstance(value, int):
        return None if value < 0 else f"node-{value}"
    text = str(value).strip().strip("<>")
    if text in ("", "-1"):
        return None
    return renumber.get(text, text)


# --------------------------------------------------------------------------- planning


@dataclass
class LLMPlanResult:
    """What the LLM planner did: the plan, who made it, and why, for the run's report."""

    plan: Plan
    planner: str
    notes: list[str] = field(default_factory=list)
    #: "offline" when the offline planner made the plan instead; None when the LLM did.
    fallback: str | None = None
    why: str = ""
    attempts: int = 0
    seconds: float = 0.0


def _structured(model: BaseChatModel) -> Any | None:
    """The model wrapped for schema-constrained output, or None when it has no such mode.

    ``include_raw`` keeps the raw reply, so a reply the schema parser rejects can still be
    read tolerantly. Function calling is used for ChatOpenAI: OpenAI-compatible servers
    support tools more widely than strict JSON-schema output, and it allows free-form args.
    """
    from langchain_openai import ChatOpenAI

    if type(model).__name__ == "ChatHuggingFace":
        return None  # its structured modes need an inference server, not a local pipeline
    try:
        if isinstance(model, ChatOpenAI):
            return model.with_structured_output(
                PlanSchema, method="function_calling", include_raw=True
            )
        return model.with_structured_output(PlanSchema, include_raw=True)
    except NotImplementedError:
        return None


def _reply_plan(reply: Any) -> tuple[Plan, str]:
    """Plan and the reply's text (for the repair conversation) from either invocation mode."""
    if isinstance(reply, dict) and "raw" in reply:  # structured, include_raw=True
        parsed = reply.get("parsed")
        raw = reply.get("raw")
        if isinstance(parsed, BaseModel):
            data = parsed.model_dump()
            return plan_from_data(data), json.dumps(data)
        if isinstance(parsed, dict):
            return plan_from_data(parsed), json.dumps(parsed)
        calls = getattr(raw, "tool_calls", None) or []
        if calls:
            data = calls[0].get("args", {})
            return plan_from_data(data), json.dumps(data)
        text = reply_text(raw)
        return parse_plan_text(text), text
    text = reply_text(reply)
    return parse_plan_text(text), text


_PREFIX_CACHE: dict[int, tuple[str, Any]] = {}
_PREFIX_LOCK = threading.Lock()


def _invoke(model: Any, messages: list[BaseMessage], prefix_len: int) -> Any:
    """``model.invoke(messages)``, reusing the KV cache of the fixed prompt prefix locally.

    The system prompt and few-shot pairs (``prefix_len`` messages, ~1,200 tokens) are the
    same for every request; on a CPU their prefill costs more than decoding the plan, so a
    local ``ChatHuggingFace`` computes it once per model and each call starts from a copy.
    Any other model is simply invoked. The cache is only used when the prefix tokenizes to
    exactly the first tokens of the full prompt, so the reply is the same as without it.
    """
    pipe = getattr(getattr(model, "llm", None), "pipeline", None)
    if type(model).__name__ != "ChatHuggingFace" or pipe is None:
        return model.invoke(messages)
    import copy

    import torch

    prefix = model.tokenizer.apply_chat_template(
        [model._to_chatml_format(m) for m in messages[:prefix_len]], tokenize=False
    )
    with _PREFIX_LOCK:
        cached = _PREFIX_CACHE.get(id(model))
        if cached is None or cached[0] != prefix:
            ids = pipe.tokenizer(prefix, add_special_tokens=False, return_tensors="pt").input_ids
            full = pipe.tokenizer(model._to_chat_prompt(messages), add_special_tokens=False)
            if full.input_ids[: ids.shape[1]] != ids[0].tolist():
                return model.invoke(messages)
            with torch.inference_mode():
                kv = pipe.model(ids, use_cache=True).past_key_values
            cached = _PREFIX_CACHE[id(model)] = (prefix, kv)
        kv = copy.deepcopy(cached[1])
    return model.invoke(messages, pipeline_kwargs={"past_key_values": kv})


def plan_with_llm_result(
    request: str,
    input_types: dict[str, Modality | None],
    model: BaseChatModel,
    max_repairs: int = 2,
    *,
    planner: str = "llm",
    validator: Callable[[Plan, dict[str, Modality | None]], Plan] = validate,
    models_dir: str | Path | None = None,
) -> LLMPlanResult:
    """Plan with ``model``, repairing invalid plans; fall back to the offline planner.

    ``validator`` is ``plan.validate`` unless a caller checks plans against something else
    (the TaskBench eval checks against the whole task vocabulary, not only runnable tasks).
    ``models_dir`` is where the offline fallback finds its embedding model (default: the
    pack's). Raises ``RequestError`` for an empty request, and the offline planner's
    ``RequestError`` or ``PlanError`` (with the LLM's failure added) when neither planner can
    plan it.
    """
    if not request or not request.strip():
        raise RequestError(
            "The request is empty. Say what you want done, e.g. "
            "'transcribe meeting.wav and summarize it'."
        )
    started = time.perf_counter()
    messages = build_messages(request, input_types)
    prefix_len = len(messages) - 1  # the system prompt and the few-shot pairs
    structured = _structured(model)
    notes = [f"asked {planner} for a plan" + (" (structured output)" if structured else "")]
    why = ""
    attempts = 0
    for attempt in range(max_repairs + 1):
        attempts = attempt + 1
        try:
            reply = (
                structured.invoke(messages)
                if structured is not None
                else _invoke(model, messages, prefix_len)
            )
        except Exception as exc:
            if structured is not None:
                # The server may not support tools: retry this attempt as plain text.
                notes.append(f"structured output failed ({_short(exc)}); asking for plain JSON")
                structured = None
                try:
                    reply = model.invoke(messages)
                except Exception as exc2:
                    why = f"the model failed: {_short(exc2)}"
                    break
            else:
                why = f"the model failed: {_short(exc)}"
                break
        try:
            plan, said = _reply_plan(reply)
        except (ReplyError, ValueError) as exc:
            problems = [f"could not read the reply: {exc}"]
            said = reply_text(reply.get("raw") if isinstance(reply, dict) else reply)
        else:
            if not plan.subtasks:
                why = "the model found no task for the request"
                notes.append(f"attempt {attempts}: {why}")
                break
            try:
                plan = validator(plan, input_types)
            except PlanError as exc:
                problems = exc.problems
            else:
                notes.append(f"attempt {attempts}: valid plan with {len(plan.subtasks)} steps")
                return LLMPlanResult(
                    plan,
                    planner,
                    notes,
                    attempts=attempts,
                    seconds=round(time.perf_counter() - started, 3),
                )
        why = (
            "no valid plan after "
            + (f"{attempts} attempts" if attempts > 1 else "1 attempt")
            + ": "
            + "; ".join(problems)
        )
        notes.append(f"attempt {attempts}: invalid: " + "; ".join(problems))
        if attempt < max_repairs:
            messages = [*messages, AIMessage(said or "(no reply)"), repair_message(problems)]
    notes.append(f"fell back to the offline planner because {why}")
    try:
        plan = validator(plan_offline(request, input_types, models_dir), input_types)
    except RequestError as exc:
        raise RequestError(f"{exc} (The LLM planner also failed: {why}.)") from exc
    except PlanError as exc:
        raise PlanError([*exc.problems, f"the LLM planner also failed: {why}"]) from exc
    return LLMPlanResult(
        plan,
        planner,
        notes,
        fallback="offline",
        why=why,
        attempts=attempts,
        seconds=round(time.perf_counter() - started, 3),
    )


def plan_with_llm(
    request: str,
    input_types: dict[str, Modality | None],
    model: BaseChatModel,
    max_repairs: int = 2,
) -> tuple[Plan, list[str]]:
    """Plan with ``model`` (see :func:`plan_with_llm_result`); returns the plan and notes.

    The notes say what happened, attempt by attempt, ending with the fallback if there was
    one, so a caller can put them in a report without knowing the planner's internals.
    """
    result = plan_with_llm_result(request, input_types, model, max_repairs)
    return result.plan, result.notes


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__
