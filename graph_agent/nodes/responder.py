"""Responder node: the answer, the per-subtask outputs, and the explainable report.

The report itself is built by pure functions in :mod:`graph_agent.report`; this node only
decides who writes the answer (a template, or the chat model when asked), and saves
report.json and report.md under the run's artifact directory.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph_agent.boundary import for_client, is_server_run, run_context
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
from graph_agent.uploads import uploads_root

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


def server_folders(ctx: Context, store: ArtifactStore) -> list[Path]:
    """The server's own folders a client must not see in a server run's answer and report:
    the thread's artifact folder, the artifacts root, the models folder and the uploads root
    (`for_client` writes paths in them relative to them)."""
    return [store.run_dir, store.root, Path(ctx.models_dir), uploads_root()]


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer, the per-subtask outputs and the report; explain errors instead.

    The report goes out as JSON (``report``) and Markdown (``report_markdown``), and both
    are saved as report.json and report.md in the run's artifact folder (the executor's
    ``ArtifactStore`` folder for this thread), never anywhere else.

    The operator (CLI, embedder) gets artifacts by their full paths. A server client gets
    them by file name in the answer, outputs and both reports (`for_client`), as the web page
    fetches them; the state's ``results`` keep the real paths, which follow-ups read.
    """
    ctx = run_context(runtime)
    store = ArtifactStore(ctx.artifacts_dir, run_id=_thread_id())
    server = is_server_run(runtime)
    folders = server_folders(ctx, store) if server else []
    report = build_report(state, planner=ctx.planner, memory_budget_mb=ctx.memory_budget_mb)
    report = for_client(report, folders)
    template = for_client(template_answer(state), folders)
    if state.get("error"):
        answer, meta = template, {"written_by": "template"}
    else:
        answer, meta = write_answer(ctx, report, template)
    answer = for_client(answer, folders)  # a chat model may have written a path it saw
    report["answer_source"] = meta
    markdown = for_client(render_markdown(report, answer, meta, base_dir=store.run_dir), folders)
    try:
        report["files"] = for_client(write_report_files(store.run_dir, report, markdown), folders)
    except OSError as exc:  # a read-only disk must not lose the answer
        log.error("Could not write the report files in %s: %s", store.run_dir, exc)
        report["files_error"] = (
            f"Could not write report.json/report.md ({exc.strerror or type(exc).__name__}). "
            "The server's operator should point GRAPH_AGENT_ARTIFACTS_DIR at a writable folder."
            if server
            else f"Could not write report.json/report.md in {store.run_dir}: {exc}. Point "
            "--artifacts-dir (or GRAPH_AGENT_ARTIFACTS_DIR) at a writable folder."
        )
    outputs = {} if state.get("error") else for_client(outputs_of(state), folders)
    return {"answer": answer, "outputs": outputs, "report": report, "report_markdown": markdown}
