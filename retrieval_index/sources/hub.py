"""Model cards from the Hugging Face Hub, through ``huggingface_hub``.

Off by default: graph-agent runs offline, and a catalog build that silently reached the
network would be a surprise (and would hang on machines without one). Callers opt in with
``allow_network=True``; ``HF_HUB_OFFLINE`` still wins and gives a clear error.

Two calls per model family: ``HfApi.list_models(expand=[...])`` pages through
``GET {endpoint}/api/models`` and returns the front matter (``cardData``), counts and the
safetensors parameter total in one go; then, if ``fetch_readme``, each model's README is
fetched through ``HfApi.hf_hub_download`` (``HEAD``/``GET {endpoint}/{id}/resolve/{rev}/README.md``)
and parsed with ``huggingface_hub.ModelCard`` for the description. ``endpoint`` (or the
``HF_ENDPOINT`` variable, read at call time) points it at a mirror or a test server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.sources.base import (
    CardSourceError,
    ImportReport,
    card_from_metadata,
    lookup_local,
    read_readme,
)

#: What ``list_models`` asks the Hub to include for each model: everything a card needs.
EXPAND = [
    "cardData",
    "downloads",
    "likes",
    "library_name",
    "pipeline_tag",
    "safetensors",
    "sha",
    "tags",
]


class NetworkDisabledError(CardSourceError):
    """The Hub source was called without ``allow_network=True``, or in offline mode."""


def _check_network(allow_network: bool) -> None:
    from huggingface_hub import constants

    if not allow_network:
        raise NetworkDisabledError(
            "Reading model cards from the Hugging Face Hub needs the network, which graph-agent "
            "does not use unless asked: pass allow_network=True. Offline, import a JSONL file "
            "(jsonl_cards) or scan the local cache (hf_cache_cards) instead."
        )
    if constants.is_offline_mode():
        raise NetworkDisabledError(
            "allow_network=True, but HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set, so "
            "huggingface_hub refuses every request. Unset it to read cards from the Hub."
        )


def _readme(
    api: Any, repo_id: str, revision: str | None, cache_dir: str | Path | None
) -> tuple[dict[str, Any], str]:
    """The model's README front matter and text, downloaded through the (cached) Hub API."""
    path = api.hf_hub_download(
        repo_id=repo_id, filename="README.md", revision=revision, cache_dir=cache_dir
    )
    return read_readme(path)


def hub_cards(
    *,
    allow_network: bool = False,
    endpoint: str | None = None,
    token: str | bool | None = None,
    search: str | None = None,
    pipeline_tag: str | None = None,
    author: str | None = None,
    filter: str | list[str] | None = None,
    sort: str = "downloads",
    limit: int | None = 100,
    fetch_readme: bool = True,
    cache_dir: str | Path | None = None,
    local_models: Mapping[str, str | Path] | None = None,
    report: ImportReport | None = None,
    api: Any = None,
) -> Iterator[ModelCard]:
    """Stream cards for the Hub's models matching the filters, most downloaded first.

    The filters are ``HfApi.list_models``'s. ``limit`` caps the count (None = all: millions).
    ``fetch_readme`` costs one request per model and adds the description; a model whose
    README cannot be read keeps its card without one (noted in ``report``). ``cache_dir`` is
    where READMEs are cached (the HF cache by default). A model listed in ``local_models``
    gets its ``local_path``. ``api`` replaces the ``HfApi`` (anything with the same two
    methods). Raises :class:`NetworkDisabledError` unless allowed, and
    :class:`CardSourceError` when the Hub cannot be listed.
    """
    _check_network(allow_network)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    where = getattr(api, "endpoint", None) or endpoint or "the Hub"
    report = report if report is not None else ImportReport(source=f"hub:{where}")
    local = lookup_local(local_models)
    try:
        models = iter(
            api.list_models(
                search=search,
                pipeline_tag=pipeline_tag,
                author=author,
                filter=filter,
                sort=sort,
                limit=limit,
                expand=EXPAND,
            )
        )
        while True:
            try:
                info = next(models)
            except StopIteration:
                break
            report.read += 1
            card = _card(info, api, fetch_readme, cache_dir, local, report)
            if card is not None:
                report.imported += 1
                yield card
    except CardSourceError:
        raise
    except Exception as exc:  # httpx, HfHubHTTPError, OSError: all mean "cannot list"
        raise CardSourceError(
            f"Could not list models from {where} after {report.read} models: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _card(
    info: Any,
    api: Any,
    fetch_readme: bool,
    cache_dir: str | Path | None,
    local: dict[str, str],
    report: ImportReport,
) -> ModelCard | None:
    """One ``ModelInfo`` as a card, or None (with the reason in ``report``)."""
    repo_id = getattr(info, "id", None)
    if not isinstance(repo_id, str) or not repo_id:
        report.problem("listing", "a model without an id")
        return None
    card_data = getattr(info, "card_data", None)
    meta: dict[str, Any] = {}
    if card_data is not None:
        meta = card_data.to_dict() if hasattr(card_data, "to_dict") else dict(card_data)
    text = None
    if fetch_readme:
        try:
            readme_meta, text = _readme(api, repo_id, getattr(info, "sha", None), cache_dir)
            # The README's own YAML is the more faithful front matter (see read_readme).
            meta = readme_meta or meta
        except Exception as exc:  # no README, gated, transient: the card stands without it
            report.note(repo_id, f"README not read ({type(exc).__name__}: {exc})")
    safetensors = getattr(info, "safetensors", None)
    parameters = getattr(safetensors, "total", None) if safetensors else None
    try:
        return card_from_metadata(
            repo_id,
            meta=meta,
            pipeline_tag=getattr(info, "pipeline_tag", None),
            readme=text,
            tags=list(getattr(info, "tags", None) or []),
            downloads=getattr(info, "downloads", None),
            likes=getattr(info, "likes", None),
            parameters=parameters,
            library=getattr(info, "library_name", None),
            source="hub",
            local_path=local.get(repo_id.lower()),
        )
    except (ValueError, TypeError) as exc:
        report.problem(repo_id, str(exc))
        return None
