"""Responder node: the answer, the per-subtask outputs, and the explainable report.

The report itself is built by pure functions in :mod:`graph_agent.report`; this node only
decides who writes the answer (a template, or the chat model when asked), and saves
report.json and report.md under the run's artifact directory.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph_agent.boundary import is_server_run, run_context
from graph_agent.chat import answer_messages, reply_text
from graph_agent.context import Context
from graph_agent.report import (
    build_report,
    outputs_of,
    render_markdown,
    template_answer,
    write_report_files,
)
from graph_agent.state import State
from graph_agent.tools.artifacts import ArtifactStore

log = logging.getLogger(__name__)


def answer_model(spec: str) -> BaseChatModel:
    """The chat model that writes the answer for a planner spec.

    A seam on purpose: tests replace this function with one returning a fake chat model.
    """
    from graph_agent.chat import make_chat_model

    return make_chat_model(spec)


def write_answer(ctx: Context, report: dict[str, Any], template: str) -> tuple[str, dict[str, Any]]:
    """The answer and who wrote it. The chat model writes it only when ``answer_with_llm``
    is on and a chat model is configured; any error falls back to the template answer and
    the reason goes into the report, so a broken model never costs the user the results."""
    if not getattr(ctx, "answer_with_llm", False):
        return template, {"written_by": "template"}
    if ctx.planner == "offline":
        return template, {
            "written_by": "template",
            "llm": None,
            "fallback_reason": "answer_with_llm is on but no chat model is configured; set "
            "--planner (or GRAPH_AGENT_PLANNER) to a chat model spec such as "
            "'openai:gpt-4o-mini' or 'hf:<local dir>'",
        }
    try:
        reply = answer_model(ctx.planner).invoke(answer_messages(report))
        text = reply_text(reply).strip()
        if not text:
            raise ValueError("the chat model returned an empty answer")
    except Exception as exc:  # any model or network failure: the template still answers
        return template, {
            "written_by": "template",
            "llm": ctx.planner,
            "fallback_reason": f"{type(exc).__name__}: {exc}",
        }
    return text, {"written_by": ctx.planner}


def _thread_id() -> str:
    """The run's thread id, the executor's artifact folder name ('run' outside a graph run)."""
    try:
        return str(get_config().get("configurable", {}).get("thread_id", "run"))
    except RuntimeError:  # called outside a runnable context (a direct call in a test)
        return "run"


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer, the per-subtask outputs and the report; explain errors instead.

    The report goes out as JSON (``report``) and Markdown (``report_markdown``), and both
    are saved as report.json and report.md in the run's artifact folder (the executor's
    ``ArtifactStore`` folder for this thread), never anywhere else.
    """
    ctx = run_context(runtime)
    report = build_report(state, planner=ctx.planner, memory_budget_mb=ctx.memory_budget_mb)
    template = template_answer(state)
    if state.get("error"):
        answer, meta = template, {"written_by": "template"}
    else:
        answer, meta = write_answer(ctx, report, template)
    report["answer_source"] = meta
    store = ArtifactStore(ctx.artifacts_dir, run_id=_thread_id())
    markdown = render_markdown(report, answer, meta, base_dir=store.run_dir)
    try:
        report["files"] = write_report_files(store.run_dir, report, markdown)
    except OSError as exc:  # a read-only disk must not lose the answer
        log.error("Could not write the report files in %s: %s", store.run_dir, exc)
        report["files_error"] = (
            f"Could not write report.json/report.md ({exc.strerror or type(exc).__name__}). "
            "The server's operator should point GRAPH_AGENT_ARTIFACTS_DIR at a writable folder."
            if is_server_run(runtime)
            else f"Could not write report.json/report.md in {store.run_dir}: {exc}. Point "
            "--artifacts-dir (or GRAPH_AGENT_ARTIFACTS_DIR) at a writable folder."
        )
    outputs = {} if state.get("error") else outputs_of(state)
    return {"answer": answer, "outputs": outputs, "report": report, "report_markdown": markdown}
