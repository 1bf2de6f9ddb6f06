"""Named entities with a spaCy pipeline: the token-classification back end for cards whose
``library`` is "spacy".

transformers NER models are not to be had offline here, but a spaCy pipeline ships as a
plain folder (``config.cfg``, ``meta.json`` and one folder per component), so the pack
carries ``en_core_web_sm`` and this back end loads it from that folder. Its result has the
shape of the transformers tagger's (``text._tokens``): the report and later steps read
entities the same way whichever back end tagged them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall


def load_spacy(model_dir: str) -> Any:
    """The spaCy pipeline in ``model_dir``, loaded from disk only.

    ``spacy.load`` on a path reads the folder and nothing else (a package name would import
    an installed package instead), so what runs is exactly the pack's pinned files.
    """
    folder = Path(model_dir)
    if not (folder / "config.cfg").is_file() or not (folder / "meta.json").is_file():
        raise ModelUnavailableError(
            f"{model_dir} is not a spaCy pipeline folder (it needs config.cfg and meta.json). "
            "Reinstall it with `graph-agent models install`, or point the card elsewhere."
        )
    try:
        import spacy
    except ImportError:
        raise ModelUnavailableError(
            "spaCy is not installed, so the spaCy entity tagger cannot run. Install it with "
            "`pip install 'spacy>=3.8,<3.9'` (graph-agent's own dependencies include it)."
        ) from None
    nlp = spacy.load(folder)
    if "ner" not in nlp.pipe_names:
        raise ModelUnavailableError(
            f"The spaCy pipeline in {model_dir} has no 'ner' component, so it tags no "
            f"entities (components: {', '.join(nlp.pipe_names) or 'none'})."
        )
    return nlp


def _entities(nlp: Any, call: ToolCall) -> ToolResult:
    """Tag entities; spaCy's greedy NER gives no per-entity probability, so ``score`` is
    None and the critic has no confidence to threshold (rather than a made-up one)."""
    source = str(call.args["text"])
    if not source.strip():
        raise ToolError("Token classification needs some text to tag.")
    doc = nlp(source)
    data = [
        {
            "entity": ent.label_,
            "word": ent.text,
            "score": None,
            "start": ent.start_char,
            "end": ent.end_char,
        }
        for ent in doc.ents
    ]
    text = "; ".join(f"{d['word']} ({d['entity']})" for d in data) or "no entities found"
    return ToolResult(kind="entities", modality="text", text=text, data=data)


TOOLS: list[TaskTool] = [
    TaskTool(
        task="token-classification",
        inputs=(("text", "text"),),
        output="text",
        loader="spacy",
        call=_entities,
        description="Tag named entities (people, organisations, places, dates ...) with spaCy.",
        library="spacy",
        make_loader=load_spacy,
        imports=("spacy",),
    ),
]
