"""Where model cards come from: one module per source, each yielding ``ModelCard``s.

- :mod:`.pack`: the offline model pack's own cards (always runnable);
- :mod:`.jsonl`: HuggingGPT-format JSONL (``p0_models.jsonl``) or exported card dicts;
- :mod:`.hub`: the Hugging Face Hub through ``huggingface_hub`` (opt-in network);
- :mod:`.hf_cache`: models already in the local Hugging Face cache (runnable).

``graph_agent.retrieval_index.ingest`` wraps them and writes them into a ``Catalog``.
"""

from graph_agent.retrieval_index.sources.base import CardSourceError, ImportReport
from graph_agent.retrieval_index.sources.hf_cache import hf_cache_cards
from graph_agent.retrieval_index.sources.hub import NetworkDisabledError, hub_cards
from graph_agent.retrieval_index.sources.jsonl import card_from_hugginggpt, jsonl_cards
from graph_agent.retrieval_index.sources.pack import PACK_CARD_FILE, pack_cards

__all__ = [
    "PACK_CARD_FILE",
    "CardSourceError",
    "ImportReport",
    "NetworkDisabledError",
    "card_from_hugginggpt",
    "hf_cache_cards",
    "hub_cards",
    "jsonl_cards",
    "pack_cards",
]
