"""The run report: JSON for programs, Markdown (with a Mermaid plan diagram) for people.

Everything here except :func:`write_report_files` is a pure function of the final state, so
the report can be unit-tested on a hand-made state and can never disagree with what ran:
it reads ``plan``, ``selections``, ``results`` and the recorded ``decisions`` and nothing else.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from graph_agent.progress import blocked_steps
from graph_agent.state import State
from graph_agent.tools.pipeline_cache import PIPELINES
from graph_agent.tools.results import KIND_TITLES, ToolResult
from graph_agent.tools.tasks import TASKS

#: File names under the run's artifact directory.
REPORT_JSON, REPORT_MD, REPORT_PNG = "report.json", "report.md", "report.png"
#: Text outputs longer than this are cut in the Markdown (report.json keeps them whole).
MAX_MD_TEXT = 2000
#: Models ruled out by constraints listed per step in the Markdown (report.json has all).
MAX_RULED_OUT = 10

# --------------------------------------------------------------------------- JSON report


def _title(task: str, output: dict[str, Any] | None = None) -> str:
    """How the answer and the report introduce ``task``'s output: the title of the output's
    kind where it has one (text an OCR back end read is "Text in the image", though its
    task, image-to-text, is labelled "Caption"), else the task spec's label."""
    kind = (output or {}).get("kind")
    if kind in KIND_TITLES:
        return KIND_TITLES[kind]
    spec = TASKS.get(task)
    return spec.title if spec else task.replace("-", " ").capitalize()


def _line(step: dict[str, Any], result: dict[str, Any] | None, blocked: bool) -> str:
    ok = result is not None and result.get("status") == "ok"
    title = _title(step["task"], result["result"] if ok else None)
    if blocked:
        return f"- {title} ({step['id']}): skipped, because a step it needs failed."
    if result is None:
        return f"- {title} ({step['id']}): not run."
    if result.get("status") != "ok":
        problems = "; ".join(result.get("problems") or [result.get("error", "failed")])
        return f"- {title} ({step['id']}): failed: {problems}"
    out = result["result"]
    shown = ToolResult.from_dict(out).value
    if out.get("confidence") is not None and out["kind"] == "labels":
        shown = f"{shown} (score {out['confidence']:.2f})"
    return f"- {title} ({step['id']}, {result['model']}): {shown}"


def template_answer(state: State) -> str:
    """The answer without an LLM: one line per step with its output or why it has none."""
    if state.get("error"):
        return f"I could not run this request: {state['error']}"
    results = state.get("results") or {}
    blocked = set(blocked_steps(state))
    steps = (state.get("plan") or {}).get("subtasks", [])
    ok = sum(1 for s in steps if (results.get(s["id"]) or {}).get("status") == "ok")
    lines = [f"Done: {ok} of {len(steps)} step(s) succeeded."]
    lines += [_line(s, results.get(s["id"]), s["id"] in blocked) for s in steps]
    return "\n".join(lines)


def outputs_of(state: State) -> dict[str, str]:
    """Subtask id -> what it produced: text, or the artifact path of an image or audio."""
    results = state.get("results") or {}
    return {
        s["id"]: ToolResult.from_dict(results[s["id"]]["result"]).value
        for s in (state.get("plan") or {}).get("subtasks", [])
        if (results.get(s["id"]) or {}).get("status") == "ok" and results[s["id"]].get("result")
    }


def _planner_info(decisions: list[dict[str, Any]], planner: str) -> dict[str, Any]:
    """Who made the plan: the configured planner, or the offline fallback and why."""
    planned = next((d for d in decisions if d.get("node") == "planner"), {})
    info: dict[str, Any] = {
        "planner": planned.get("planner", planner),
        "planned_by": planned.get("planned_by") or planned.get("planner") or planner,
    }
    if planned.get("fallback"):
        info["plan_fallback"] = {"to": planned["fallback"], "why": planned.get("why")}
    if planned.get("seconds") is not None:
        info["planner_seconds"] = planned["seconds"]
    return info


def _tries(
    verdicts: list[dict[str, Any]],
    result: dict[str, Any] | None,
    candidates: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every attempt at a step, in order, with the model, the time and the critic's verdict.

    The critic records one verdict per attempt (``replan`` says which plan of the run it
    belonged to; attempts count from 1 again after a re-plan). The final attempt's time also
    lives in the result, which covers verdicts recorded before the critic stored times.
    In hybrid mode each try also says where it ran (``runs``, and the ``endpoint`` of a
    remote one), from the selection's candidate of that model.
    """
    tries = []
    ordered = sorted(verdicts, key=lambda d: (d.get("replan") or 0, d.get("attempt") or 0))
    for v in ordered:
        tries.append(
            {
                "plan": v.get("replan") or 0,
                "attempt": v.get("attempt"),
                "task": v.get("task"),
                "model": v.get("model"),
                "seconds": v.get("seconds"),
                "verdict": v.get("decision"),
                "problems": v.get("problems") or [],
                "checks": v.get("checks") or [],
            }
        )
    if result:
        last = next(
            (
                t
                for t in reversed(tries)
                if t["attempt"] == result.get("attempt") and t["model"] == result.get("model")
            ),
            None,
        )
        if last is None:  # a result no verdict describes (an old checkpoint): still show it
            last = {
                "plan": tries[-1]["plan"] if tries else 0,
                "attempt": result.get("attempt"),
                "task": None,
                "model": result.get("model"),
                "seconds": None,
                "verdict": "accepted" if result.get("status") == "ok" else "failed",
                "problems": result.get("problems") or [],
                "checks": [],
            }
            tries.append(last)
        if last["seconds"] is None:
            last["seconds"] = result.get("seconds")
    placed = {c["id"]: c for c in candidates or [] if "runs" in c}
    for t in tries:
        c = placed.get(t["model"])
        if c is not None:
            t["runs"] = c["runs"]
            if c.get("endpoint"):
                t["endpoint"] = c["endpoint"]
    return tries


def _replanning(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The re-plans of the run (planner) and the critic's reasons for not re-planning."""
    wanted = {"replanned", "replan failed", "not re-planned"}
    keys = ("node", "decision", "replan", "reason", "changes", "unchanged_failures", "kept")
    return [
        {k: d[k] for k in (*keys, "detail") if k in d}
        for d in decisions
        if d.get("decision") in wanted
    ]


def _verdicts(state: State, step_id: str) -> list[dict[str, Any]]:
    """The critic's verdicts on ``step_id``'s attempts, from the state's typed per-step
    records; a checkpoint written before they were kept has them only in its decisions log."""
    if "verdicts" in state:
        return list((state.get("verdicts") or {}).get(step_id) or [])
    return [
        d
        for d in state.get("decisions") or []
        if d.get("node") == "critic" and d.get("subtask") == step_id
    ]


def _step_entry(
    step: dict[str, Any],
    state: State,
    blocked: set[str],
    statuses: dict[str, str],
    replanning: list[dict[str, Any]],
) -> dict[str, Any]:
    results = state.get("results") or {}
    result = results.get(step["id"])
    selection = (state.get("selections") or {}).get(step["id"]) or {}
    verdicts = _verdicts(state, step["id"])
    candidates = selection.get("candidates") or []
    entry: dict[str, Any] = {
        "id": step["id"],
        "task": step["task"],
        "description": step.get("description", ""),
        "inferred": step.get("inferred", ""),
        "args": step["args"],
        "deps": step["deps"],
        "status": statuses[step["id"]],
        "candidates": [c["id"] for c in candidates],
        "candidates_considered": [
            {
                **{k: c.get(k) for k in ("id", "score", "relevance", "why")},
                **{k: c[k] for k in ("runs", "endpoint") if c.get(k)},  # hybrid mode only
            }
            for c in candidates
        ],
        "ruled_out": selection.get("rejected") or {},
        "reason": selection.get("reason"),
        "verdicts": verdicts,
        "tries": _tries(verdicts, result, candidates),
    }
    changes = [
        f"re-plan {r.get('replan')}: {r['changes'][step['id']]}"
        for r in replanning
        if r.get("decision") == "replanned" and step["id"] in (r.get("changes") or {})
    ]
    if changes:
        entry["replanned"] = changes
    if step["id"] in blocked:
        entry["blocked_by"] = [d for d in step["deps"] if statuses.get(d) != "ok"]
    if result:
        entry.update(
            model=result.get("model"),
            seconds=result.get("seconds"),
            attempts=result.get("attempt"),
        )
        if result.get("runs"):  # hybrid mode: where the final attempt ran
            entry["runs"] = result["runs"]
            if result.get("endpoint"):
                entry["endpoint"] = result["endpoint"]
        if result.get("status") == "ok":
            out = result["result"]
            entry["output"] = out
            entry["output_title"] = _title(step["task"], out)
            if out.get("modality") in ("image", "audio") and out.get("path"):
                entry["artifact"] = out["path"]
        else:
            entry["problems"] = result.get("problems")
    return entry


def build_report(
    state: State, planner: str = "offline", memory_budget_mb: float | None = None
) -> dict[str, Any]:
    """The JSON report (JSON-serialisable) for a finished run.

    ``planner`` is the configured planner, used when no planner decision names it;
    ``memory_budget_mb`` the run's model-memory budget, shown with the cache's counters. The keys
    of the public contract (plan, per-step model, reason, verdicts, timings, outputs) stay;
    later additions only add keys.
    """
    decisions = list(state.get("decisions") or [])
    if state.get("error"):
        return {
            "request": state.get("request", ""),
            "error": state["error"],
            "plan": state.get("plan"),
            "decisions": decisions,
            **_planner_info(decisions, planner),
        }
    plan = state.get("plan") or {"subtasks": []}
    results = state.get("results") or {}
    blocked = set(blocked_steps(state))
    statuses = {
        s["id"]: "skipped"
        if s["id"] in blocked
        else ((results.get(s["id"]) or {}).get("status") or "not run")
        for s in plan["subtasks"]
    }
    replanning = _replanning(decisions)
    steps = [_step_entry(s, state, blocked, statuses, replanning) for s in plan["subtasks"]]
    timings = {s["id"]: s.get("seconds") for s in steps}
    every_try = [t.get("seconds") or 0 for s in steps for t in s["tries"]]
    info = _planner_info(decisions, planner)
    return {
        "request": state.get("request", ""),
        **info,
        "plan": plan,
        "repairs": list(plan.get("repairs") or []),
        "replanning": replanning,
        "steps": steps,
        "timings": {
            "per_step_seconds": timings,
            "model_seconds_total": round(sum(t or 0 for t in timings.values()), 3),
            "all_attempts_seconds_total": round(sum(every_try), 3),
            **({"planner_seconds": info["planner_seconds"]} if "planner_seconds" in info else {}),
        },
        "failures": [s["id"] for s in steps if s["status"] != "ok"],
        "decisions": decisions,
        # The warm model cache of the process that ran this (counters since it started), with
        # the memory budget this run's loads kept to.
        "cache": _cache_stats(memory_budget_mb),
    }


def _cache_stats(memory_budget_mb: float | None) -> dict[str, Any]:
    stats = PIPELINES.stats()
    if memory_budget_mb is not None:
        stats["budget_mb"] = round(memory_budget_mb, 1) or None  # 0: no budget
    return stats


# --------------------------------------------------------------------------- Mermaid


def _mermaid_id(step_id: str) -> str:
    """A Mermaid node id: letters, digits and '_' only, never a keyword such as 'end'."""
    return "s_" + re.sub(r"[^A-Za-z0-9_]", "_", step_id)


def _mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label (quotes and brackets become entity codes)."""
    return (
        str(text)
        .replace("&", "#amp;")
        .replace('"', "#quot;")
        .replace("<", "#lt;")
        .replace(">", "#gt;")
        .replace("\n", " ")
    )


def mermaid(report: dict[str, Any]) -> str:
    """The plan as a Mermaid ``flowchart``: a node per step (id, task, chosen model), an
    edge per dependency, and failed and skipped steps styled apart from those that worked."""
    lines = ["flowchart TD"]
    steps = report.get("steps") or []
    if not steps:  # an error report: draw the plan's steps, if any, without outcomes
        steps = [
            {**s, "status": "not run"} for s in (report.get("plan") or {}).get("subtasks") or []
        ]
    for s in steps:
        model = s.get("model") or (s.get("candidates") or ["no model"])[0]
        if s.get("status") == "skipped":
            model = "skipped"
        label = "<br/>".join(
            [
                _mermaid_text(f"{s['id']}: {s['task']}"),
                _mermaid_text(model),
                _mermaid_text(
                    s.get("status", "") + (" · re-planned" if s.get("replanned") else "")
                ),
            ]
        )
        lines.append(f'    {_mermaid_id(s["id"])}["{label}"]')
    for s in steps:
        for dep in s.get("deps") or []:
            lines.append(f"    {_mermaid_id(dep)} --> {_mermaid_id(s['id'])}")
    lines += [
        "    classDef ok fill:#e6f4ea,stroke:#1e8e3e,color:#0d3b1a;",
        "    classDef failed fill:#fce8e6,stroke:#d93025,stroke-width:3px,color:#5c0b05;",
        "    classDef skipped fill:#f1f3f4,stroke:#9aa0a6,stroke-dasharray:5 5,color:#5f6368;",
        "    classDef notrun fill:#ffffff,stroke:#9aa0a6,color:#3c4043;",
    ]
    by_class: dict[str, list[str]] = {}
    for s in steps:
        by_class.setdefault(_status_class(s.get("status", "")), []).append(_mermaid_id(s["id"]))
    for name, ids in by_class.items():
        lines.append(f"    class {','.join(ids)} {name};")
    return "\n".join(lines)


def _status_class(status: str) -> str:
    if status == "ok":
        return "ok"
    if status == "skipped":
        return "skipped"
    if status == "not run":
        return "notrun"
    return "failed"


# --------------------------------------------------------------------------- Markdown


def _cell(value: Any, limit: int = 300) -> str:
    """One Markdown table cell: no newlines or pipes, cut to ``limit`` characters."""
    text = " ".join(str("-" if value is None or value == "" else value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f} s"


def _fenced(text: str, lang: str = "text") -> str:
    """A fenced block that the text itself cannot close (the fence outgrows its backticks)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _link(path: str, base_dir: str | Path | None) -> str:
    """A Markdown link to an artifact, relative to the report's folder when it is inside it."""
    target = path
    if base_dir is not None:
        try:
            target = os.path.relpath(path, base_dir)
        except ValueError:  # another drive on Windows
            target = path
        if target.startswith(".."):
            target = path
    return f"[`{path}`](<{target}>)"


def _planner_lines(report: dict[str, Any]) -> list[str]:
    planned_by, planner = report.get("planned_by"), report.get("planner")
    fallback = report.get("plan_fallback")
    if fallback:
        line = (
            f"Planned by: `{planned_by}`. The configured planner `{planner}` did not give a "
            f"valid plan ({fallback.get('why') or 'no reason recorded'}), so "
            f"`{fallback.get('to')}` made it."
        )
    else:
        line = f"Planned by: `{planned_by or planner or 'offline'}`."
    lines = [line, ""]
    repairs = report.get("repairs") or (report.get("plan") or {}).get("repairs") or []
    if repairs:
        lines.append("Plan repairs made by the validator:")
        lines += [f"- {r}" for r in repairs]
    else:
        lines.append("Plan repairs: none; the plan was valid as made.")
    replanning = report.get("replanning") or []
    if replanning:
        lines += ["", "Re-planning during the run (the diagram shows the final plan):"]
    for r in replanning:
        if r.get("decision") == "replanned":
            changed = "; ".join(f"{k}: {v}" for k, v in (r.get("changes") or {}).items())
            lines.append(
                f"- Re-plan {r.get('replan')}: {_cell(r.get('reason'), 1000)} "
                f"Changed: {changed or 'nothing'}."
            )
        elif r.get("decision") == "replan failed":
            lines.append(f"- Re-plan {r.get('replan')} failed: {_cell(r.get('detail'), 1000)}")
        else:
            lines.append(f"- Not re-planned: {_cell(r.get('reason'), 1000)}")
    return lines


def _answer_lines(answer: str, meta: dict[str, Any] | None) -> list[str]:
    lines = ["## Answer", "", answer or "(no answer)", ""]
    meta = meta or {}
    if meta.get("fallback_reason"):
        lines.append(
            f"_The template wrote this answer: the chat model `{meta.get('llm') or '-'}` was "
            f"asked but failed ({meta['fallback_reason']})._"
        )
    elif meta.get("written_by") and meta["written_by"] != "template":
        lines.append(f"_Written by the chat model `{meta['written_by']}` from the results below._")
    else:
        lines.append("_Written from a template (no chat model was asked)._")
    return [*lines, ""]


def _step_section(s: dict[str, Any], base_dir: str | Path | None) -> list[str]:
    lines = [f"### {s['id']} · {s['task']} · {s['status']}", ""]
    if s.get("description"):
        lines.append(f"Serves: “{_cell(s['description'])}”  ")
    if s.get("inferred"):
        lines.append(f"Not asked for in words; inferred: {_cell(s['inferred'])}  ")
    lines.append(f"Arguments: `{json.dumps(s.get('args') or {}, ensure_ascii=False)}`  ")
    lines.append(f"Needs: {', '.join(s.get('deps') or []) or 'nothing (runs first)'}")
    lines.append("")
    if s["status"] == "skipped":
        lines += [
            f"Skipped, because {', '.join(s.get('blocked_by') or s.get('deps') or [])} "
            "failed or was skipped; nothing was tried.",
            "",
        ]
    chosen = (s.get("candidates") or [None])[0]
    first = (s.get("candidates_considered") or [{}])[0]
    lines.append(
        f"- **Chosen model:** `{chosen}`{_where(first)}" if chosen else "- **Chosen model:** none"
    )
    lines.append(f"- **Why:** {_cell(s.get('reason'), 1000)}")
    if s.get("model") and s["model"] != chosen:
        verb = "Produced the output" if s["status"] == "ok" else "Last tried"
        lines.append(f"- **{verb}:** `{s['model']}`{_where(s)} (attempt {s.get('attempts')})")
    lines.append("")
    considered = s.get("candidates_considered") or []
    if considered:
        lines += [
            "**Candidates considered** (ranked)",
            "",
            "| # | model | score | relevance | why |",
            "|---|---|---|---|---|",
        ]
        for rank, c in enumerate(considered, start=1):
            score = "-" if c.get("score") is None else f"{c['score']:.3f}"
            rel = "-" if c.get("relevance") is None else f"{c['relevance']:.3f}"
            why = _cell(c.get("why"))
            runs = f" ({c['runs']})" if c.get("runs") else ""
            lines.append(f"| {rank} | `{_cell(c['id'])}`{runs} | {score} | {rel} | {why} |")
        lines.append("")
    else:
        lines += ["**Candidates considered:** none were allowed.", ""]
    ruled_out = s.get("ruled_out") or {}
    if ruled_out:
        lines.append(f"**Ruled out** by the constraints or their own cards ({len(ruled_out)}):")
        for model, why in list(ruled_out.items())[:MAX_RULED_OUT]:
            lines.append(f"- `{model}`: {_cell('; '.join(why) if isinstance(why, list) else why)}")
        if len(ruled_out) > MAX_RULED_OUT:
            lines.append(f"- … and {len(ruled_out) - MAX_RULED_OUT} more (see report.json)")
        lines.append("")
    for change in s.get("replanned") or []:
        lines.append(f"- **Re-planned:** {_cell(change, 1000)}")
    tries = s.get("tries") or []
    if tries:
        replanned = any(t.get("plan") for t in tries)
        lines += [
            "**Attempts**",
            "",
            ("| plan " if replanned else "")
            + "| attempt | model | time | critic's verdict | problems | checks |",
            ("|---" if replanned else "") + "|---|---|---|---|---|---|",
        ]
        for t in tries:
            plan = ""
            if replanned:
                plan = f"| {'re-plan ' + str(t['plan']) if t.get('plan') else 'first'} "
            model = str(t.get("model") or "no model")
            if t.get("task") and t["task"] != s["task"]:  # tried as another task before a re-plan
                model += f" ({t['task']})"
            if t.get("runs") == "remote":
                model += f" (remote: {t.get('endpoint') or '?'})"
            lines.append(
                f"{plan}| {t.get('attempt')} | `{_cell(model)}` | {_seconds(t.get('seconds'))} "
                f"| {_cell(t.get('verdict'))} | {_cell('; '.join(t.get('problems') or []))} "
                f"| {_cell(_checks(t.get('checks') or []))} |"
            )
        lines.append("")
    output = s.get("output")
    if output:
        lines += _output_lines(output, base_dir, s.get("output_title"))
    elif s.get("problems"):
        lines += ["**Failed:** " + _cell("; ".join(s["problems"]), 1000), ""]
    return lines


def _where(item: dict[str, Any]) -> str:
    """Where a candidate or attempt ran, in hybrid mode: ' (remote at URL)', ' (local)', ''."""
    if item.get("runs") == "remote":
        return f" (remote at `{item.get('endpoint') or '?'}`)"
    return " (local)" if item.get("runs") == "local" else ""


#: How a check's verdict shows in the attempts table.
_MARKS = {"passed": "✓", "rejected": "✗", "not checked": "–", "not judged": "?"}


def _checks(checks: list[dict[str, Any]]) -> str:
    """The critic's checks of one attempt, compact: 'output type ✓, not empty ✗'."""
    return ", ".join(
        f"{c.get('check')} {_MARKS.get(str(c.get('verdict')), c.get('verdict'))}" for c in checks
    )


def _output_lines(
    output: dict[str, Any], base_dir: str | Path | None, title: str | None = None
) -> list[str]:
    lines = [f"**Output: {title}**" if title else "**Output**", ""]
    if output.get("modality") in ("image", "audio") and output.get("path"):
        lines.append(f"Artifact ({output['modality']}): {_link(output['path'], base_dir)}")
        if output.get("text"):
            lines.append(f"Text: {_cell(output['text'], 500)}")
    else:
        text = str(output.get("text") or "")
        if len(text) > MAX_MD_TEXT:
            text = text[:MAX_MD_TEXT] + f"\n… ({len(text) - MAX_MD_TEXT} more characters)"
        lines.append(_fenced(text))
    if output.get("confidence") is not None:
        lines += ["", f"Confidence: {output['confidence']:.3f}"]
    data = output.get("data")
    if data not in (None, "", [], {}):
        shown = json.dumps(data, ensure_ascii=False, default=str)
        if len(shown) <= MAX_MD_TEXT:
            lines += ["", "Structured output:", "", _fenced(shown, "json")]
    return [*lines, ""]


def _failure_lines(report: dict[str, Any]) -> list[str]:
    lines = ["## Failures", ""]
    steps = {s["id"]: s for s in report.get("steps") or []}
    failed = [steps[i] for i in report.get("failures") or [] if i in steps]
    if not failed:
        return [*lines, "No step failed.", ""]
    for s in failed:
        if s["status"] == "skipped":
            lines.append(
                f"- **{s['id']}** ({s['task']}): skipped, because "
                f"{', '.join(s.get('blocked_by') or [])} did not succeed."
            )
            continue
        if s["status"] == "not run":
            lines.append(f"- **{s['id']}** ({s['task']}): not run.")
            continue
        tries = s.get("tries") or []
        tried = "; ".join(
            f"attempt {t.get('attempt')} with `{t.get('model')}`{_where(t)}: {t.get('verdict')} "
            f"({'; '.join(t.get('problems') or []) or 'no problem recorded'})"
            for t in tries
        )
        line = (
            f"- **{s['id']}** ({s['task']}): failed after {len(tries)} attempt(s). "
            f"Tried: {tried or 'no model could be tried'}."
        )
        seen = {p for t in tries for p in t.get("problems") or []}
        extra = [p for p in s.get("problems") or [] if p not in seen]
        if extra:
            line += f" Then: {'; '.join(map(str, extra))}."
        lines.append(line)
    return [*lines, ""]


def _timing_lines(report: dict[str, Any]) -> list[str]:
    timings = report.get("timings") or {}
    lines = [
        "## Timings",
        "",
        "| step | task | model | final attempt | all attempts |",
        "|---|---|---|---|---|",
    ]
    for s in report.get("steps") or []:
        total = sum(t.get("seconds") or 0 for t in s.get("tries") or [])
        lines.append(
            f"| {s['id']} | {s['task']} | `{_cell(s.get('model'))}` | "
            f"{_seconds(s.get('seconds'))} | {_seconds(total if s.get('tries') else None)} |"
        )
    lines.append("")
    if "planner_seconds" in timings:
        lines.append(f"Planning: {_seconds(timings['planner_seconds'])}.  ")
    lines.append(
        f"Model time, accepted or final attempts: {_seconds(timings.get('model_seconds_total'))}; "
        f"every attempt: {_seconds(timings.get('all_attempts_seconds_total'))}."
    )
    if cache := report.get("cache"):
        budget = f" of a {cache['budget_mb']} MB budget" if cache.get("budget_mb") else ""
        lines.append(
            f"Warm model cache of this process: {cache['models_held']} model(s) held "
            f"({cache['held_mb']} MB{budget}); {cache['model_loads']} load(s) and "
            f"{cache['evictions']} eviction(s) since it started."
        )
    return [*lines, ""]


def render_markdown(
    report: dict[str, Any],
    answer: str = "",
    answer_meta: dict[str, Any] | None = None,
    base_dir: str | Path | None = None,
) -> str:
    """The Markdown report for people, from the JSON report (so the two always agree).

    ``base_dir`` is the folder report.md will live in: artifact links inside it are relative,
    so the report still opens after the folder is moved.
    """
    lines = ["# graph-agent report", "", f"**Request:** {report.get('request') or '(empty)'}", ""]
    if report.get("error"):
        lines += ["## The run stopped", "", _fenced(str(report["error"])), ""]
        lines += _answer_lines(answer, answer_meta)
        if (report.get("plan") or {}).get("subtasks"):
            lines += ["## Plan", "", *_planner_lines(report), "", "```mermaid", mermaid(report)]
            lines += ["```", ""]
        lines += ["## Decisions", ""]
        lines += [f"- {_cell(json.dumps(d, ensure_ascii=False), 500)}" for d in report["decisions"]]
        return "\n".join(lines).rstrip() + "\n"
    lines += _answer_lines(answer, answer_meta)
    lines += ["## Plan", "", *_planner_lines(report), "", "```mermaid", mermaid(report), "```", ""]
    lines += ["## Steps", ""]
    for s in report.get("steps") or []:
        lines += _step_section(s, base_dir)
    lines += _failure_lines(report)
    lines += _timing_lines(report)
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- LLM answer prompt


# --------------------------------------------------------------------------- files


def write_report_files(
    run_dir: str | Path, report: dict[str, Any], markdown: str
) -> dict[str, str]:
    """Write report.json and report.md into ``run_dir`` (the run's artifact folder) only.

    Returns the written paths by kind. The caller passes ``ArtifactStore.run_dir``, whose
    name is sanitised, so a thread id cannot steer the files elsewhere.
    """
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": str(folder / REPORT_JSON), "markdown": str(folder / REPORT_MD)}
    document = {**report, "files": {**(report.get("files") or {}), **paths}}
    Path(paths["json"]).write_text(
        json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    Path(paths["markdown"]).write_text(markdown, encoding="utf-8")
    return paths
