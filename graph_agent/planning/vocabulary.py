"""The task vocabulary as the planner reads it: names, typed inputs, output and synonyms.

The tasks themselves are specs in one registry (``graph_agent.tools.tasks``); this module
gives the planner its views of them.

Canonical names are Hugging Face pipeline tags ("image-to-text"); TaskBench's tool names
("Image-to-Text") and common synonyms map onto them. Input roles are listed in TaskBench's
argument order, so a plan converts to and from TaskBench's positional arguments.
Whether a task can *run here* is a separate question for the tool registry and the
model catalog; a plan may name a task that this machine has no model for, and the selector
then says so.
"""

from __future__ import annotations

import re

from graph_agent.tools.results import Modality
from graph_agent.tools.tasks import ALIASES, TASKS, TaskSpec

Kind = Modality  # "text" | "image" | "audio"; video outputs are carried as "video" below


#: The registry's tables (``graph_agent.tools.tasks``), read where they are used so a task a
#: user registers is known everywhere. ``TaskType`` is the old name of a spec.
TaskType = TaskSpec


def canonical(name: str) -> str | None:
    """The canonical task for a pipeline tag, a TaskBench name or an alias; None if unknown."""
    key = name.strip().lower()
    if key in TASKS:
        return key
    if key in ALIASES:
        return ALIASES[key]
    slug = re.sub(r"[\s_]+", "-", key)
    return slug if slug in TASKS else ALIASES.get(slug.replace("-", " "))


def taskbench_name(task: str) -> str:
    """TaskBench's name for a canonical task (the canonical name when TaskBench has none)."""
    t = TASKS.get(task)
    return t.taskbench if t and t.taskbench else task


def can_feed(source: str, target: str) -> bool:
    """Whether ``source``'s output can be an input of ``target`` (the typed tool graph)."""
    s, t = TASKS.get(source), TASKS.get(target)
    return bool(s and t and s.links_onward and s.output in t.input_types)
