"""The checks the critic applies to one attempt. Pure functions, so they are easy to test."""

from __future__ import annotations

from typing import Any

from graph_agent.tools.spec import TaskTool

#: Below this top score a label is too unsure to pass on as an answer.
MIN_CONFIDENCE = 0.05
#: Tasks whose output must condense their text input to fit the request, and by how much:
#: a "summary" at more than 80% of the input's length is an echo, not a summary.
CONDENSING_TASKS = {"summarization"}
CONDENSE_RATIO = 0.8


def judge(tool: TaskTool, attempt: dict[str, Any]) -> list[str]:
    """Problems with an attempt's output; an empty list means it is accepted."""
    if attempt.get("status") != "ok":
        return [attempt.get("error") or "the tool failed"]
    result = attempt.get("result") or {}
    problems = []
    if result.get("modality") != tool.output:
        problems.append(f"expected {tool.output} output, got {result.get('modality')}")
    if tool.output == "text" and not str(result.get("text") or "").strip():
        problems.append("the output text is empty")
    if tool.output in ("image", "audio"):
        from pathlib import Path

        path = result.get("path")
        if not path or not Path(path).is_file() or Path(path).stat().st_size == 0:
            problems.append(f"no {tool.output} file was written")
    source_chars = attempt.get("input_chars") or 0
    out_chars = len(result.get("text") or "")
    if tool.task in CONDENSING_TASKS and source_chars and out_chars > CONDENSE_RATIO * source_chars:
        problems.append(
            f"the summary does not condense the text ({out_chars} of {source_chars} characters)"
        )
    confidence = result.get("confidence")
    if confidence is not None and confidence < MIN_CONFIDENCE:
        problems.append(f"confidence {confidence:.3f} is below {MIN_CONFIDENCE}")
    return problems
