"""Selector node: rank candidate models for every subtask from the card index.

With a remote endpoint or provider configured (hybrid mode), cards an endpoint can run count
as runnable too, and every candidate is marked ``runs: "local"`` or ``"remote"`` by
`choose_backend` (the one documented rule), with where it runs and why.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph_agent.boundary import run_context
from graph_agent.context import Context
from graph_agent.progress import drop_avoided
from graph_agent.retrieval_index.cards import ModelCard, normalize_language
from graph_agent.retrieval_index.embedder import EmbedderMissingError
from graph_agent.retrieval_index.index import CardIndex
from graph_agent.retrieval_index.placement import choose_backend
from graph_agent.retrieval_index.search import Constraints, select, step_query
from graph_agent.retrieval_index.service import open_index
from graph_agent.state import State
from graph_agent.tools.remote import RemoteConfig, remote_call


def select_models(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Rank models for each subtask, querying with the words of the request it serves."""
    ctx = run_context(runtime)
    try:
        constraints = Constraints.from_dict(state.get("constraints"))
        remote = RemoteConfig.parse(
            ctx.inference_endpoint, ctx.inference_provider, ctx.inference_timeout_s
        )
        index = open_index(ctx.models_dir)
        steps = state["plan"]["subtasks"]
        queries = [step_query(s["task"], s.get("description"), state["request"]) for s in steps]
        vectors = index.embed_queries(queries) if queries else None  # one batch per plan
    except (ValueError, EmbedderMissingError) as exc:
        return {
            "error": str(exc),
            "decisions": [{"node": "selector", "decision": "error", "detail": str(exc)}],
        }
    selections, decisions = {}, []
    if remote is not None and remote.provider and not remote.provider_usable:
        decisions.append(
            {
                "node": "selector",
                "decision": "provider not used",
                "detail": f"inference_provider {remote.provider!r} is reached through the "
                "Hugging Face Hub and HF_HUB_OFFLINE=1 forbids that; unset HF_HUB_OFFLINE "
                "to use it.",
            }
        )
    for endpoint in remote.offline_endpoints if remote is not None else ():
        # Said once here: otherwise the user sees only that the models it serves were not
        # picked, without why.
        decisions.append(
            {
                "node": "selector",
                "decision": "endpoint not used",
                "detail": f"inference_endpoint {endpoint} is a Hugging Face host and "
                "HF_HUB_OFFLINE=1 forbids reaching it; unset HF_HUB_OFFLINE to use it.",
            }
        )
    for i, (step, query) in enumerate(zip(steps, queries, strict=True)):
        vector = vectors[i : i + 1] if vectors is not None else None
        try:  # a step's own constraints narrow the request-wide ones
            own = constraints.model_copy(update=step.get("constraints") or {})
            own = Constraints.from_dict(own.model_dump())
        except ValueError as exc:
            return {
                "error": f"{step['id']}: {exc}",
                "decisions": [{"node": "selector", "decision": "error", "detail": str(exc)}],
            }
        # After a re-plan, models that already failed this task in the run are dropped.
        avoided = (state.get("avoid") or {}).get(step["task"])
        task = step["task"]
        # The language the step writes in (a translation's target), as an ISO code.
        language = normalize_language((step.get("args") or {}).get("target_language"))
        if remote is None:  # no endpoint: selection exactly as without hybrid mode
            ranked = select(index, task, query, own, vector=vector, language=language).to_dict()
        else:

            def runs_remotely(card: ModelCard, task: str = task) -> bool:
                return remote.serves(card.id, remote_call(task, card.task))

            ranked = select(
                index,
                task,
                query,
                own,
                runs_remotely=runs_remotely,
                vector=vector,
                language=language,
            ).to_dict()
            ranked = place(ranked, index, remote, ctx.remote_min_params_m)
        chosen = drop_avoided(ranked, avoided)
        selections[step["id"]] = chosen
        decision = {
            "node": "selector",
            "subtask": step["id"],
            "decision": "selected",
            "model": chosen["candidates"][0]["id"] if chosen["candidates"] else None,
            "reason": chosen["reason"],
        }
        if chosen["candidates"] and "runs" in chosen["candidates"][0]:
            decision["runs"] = chosen["candidates"][0]["runs"]
        decisions.append(decision)
    return {"selections": selections, "decisions": decisions}


def place(
    selection: dict[str, Any], index: CardIndex, remote: RemoteConfig, min_remote_params_m: float
) -> dict[str, Any]:
    """Mark each candidate ``runs: "local"`` or ``"remote"`` (hybrid mode) and say why.

    A remote candidate also records where it runs (``endpoint``, shown without credentials)
    and how it is called (``remote_call``); the token never enters the selection. The
    reason for the first choice ends with where it runs.
    """
    task = selection["task"]
    candidates, placed = [], []
    for c in selection["candidates"]:
        card = index.catalog.get(c["id"])
        call = remote_call(task, card.task) if card is not None else None
        runs, why = choose_backend(
            parameters=card.parameters if card else None,
            size_bytes=card.size_bytes if card else None,
            local=bool(card and card.runnable),
            remote=remote.serves(c["id"], call),
            min_remote_params_m=min_remote_params_m,
        )
        c = {**c, "runs": runs or "local"}
        if runs == "remote":
            c.update(endpoint=remote.where(c["id"]), remote_call=call)
        where = f"remotely at {c['endpoint']}" if runs == "remote" else "locally"
        c["why"] = f"{c['why']}; runs {where} ({why})"
        candidates.append(c)
        placed.append(f"{where} ({why})")
    reason = selection["reason"]
    if candidates:
        reason += f". It runs {placed[0]}."
    return {**selection, "candidates": candidates, "reason": reason}
