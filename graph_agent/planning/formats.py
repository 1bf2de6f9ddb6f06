"""Plans in TaskBench's and HuggingGPT's formats, both ways.

Evaluation tools score plans in TaskBench's format, and HuggingGPT-style tooling exchanges
HuggingGPT's task lists, so a ``Plan`` converts to and from each.

Shared conventions:

- **Node ids are positions**: step ``node-j`` is entry ``j`` of the list. Export renumbers a
  plan whose ids are not ``node-0, node-1, ...`` (and rewrites its references to match).
- **Edges come from argument references**, as both systems derive them (TaskBench's
  evaluator reads ``<node-j>`` arguments; HuggingGPT's ``fix_dep`` rebuilds ``dep`` from
  ``<GENERATED>-k`` arguments). Export writes a plan's ``deps`` (which the validator makes a
  superset of its references) as ``task_links`` / ``dep``; import derives ``deps`` from the
  references alone and ignores ``task_links`` / ``dep``, which are redundant at best and, in
  TaskBench's gold, sometimes disagree with the arguments.
- Neither format has per-step ``constraints`` or ``inferred`` notes, or the plan's
  ``repairs``; export drops them.

TaskBench (``task_nodes`` / ``task_links`` / ``task_steps``):

- Arguments are positional, in the order of the task's roles (``vocabulary.TASKS[t].roles``
  follows TaskBench's order). Arguments that are not roles (options such as
  ``target_language``) follow the roles, in the plan's order; on import a positional argument
  beyond the roles is kept as ``arg_<position>``, since the format has no names for it.
- ``task_steps`` carries the descriptions: ``"Step k: <description>"``; a step without a
  description gets a generated sentence.
- Import tolerates TaskBench's noisy gold: task names outside the vocabulary are kept as
  written (the validator rejects them later); ``<node0>``, ``<node-id-0>``, ``<node-0_>``,
  ``<node-3.output.text>`` read as ``<node-j>``; ``<output_of_X>`` / ``<output of X>`` and
  ``{"from": "X"}`` read as the output of the latest earlier step whose task is X; references
  inside longer text stay in the text (and count as dependencies); missing or ``null``
  arguments leave roles empty; ``task_nodes`` given as a dict is read in its order. Some gold
  records number their nodes from 1 (``<node-1>`` is the first node): when numbering from 1
  makes more references point backwards than numbering from 0 does, the record is read that
  way (``one_based`` forces either reading).

HuggingGPT (``[{"id", "task", "dep", "args"}]``):

- ``id`` is the position, ``dep`` the ids of the steps it needs or ``[-1]``, ``task`` the
  canonical task name, and a reference is ``<GENERATED>-k``.
- ``args`` keys are modalities (``text``, ``image``, ``audio``): a role is written under its
  modality. Two tasks have two *text* roles, which one key cannot hold; they use the keys
  HuggingGPT's own executor reads for them (``awesome_chat.py``):
  ``question-answering`` -> ``{"text": question, "context": text}`` and
  ``sentence-similarity`` -> ``{"text1": text, "text2": other}``. So every vocabulary task
  round-trips. Non-role arguments (options) keep their names, which HuggingGPT ignores.
- HuggingGPT has no descriptions: they are dropped on export and empty on import.
"""

from __future__ import annotations

import re
from typing import Any

from graph_agent.planning.plan import EMBEDDED_REF, Plan, Subtask, step_refs
from graph_agent.planning.vocabulary import TASKS, canonical, taskbench_name

#: HuggingGPT arg keys for tasks whose roles share a modality (see the module docstring).
HUGGINGGPT_KEYS: dict[str, dict[str, str]] = {
    "question-answering": {"question": "text", "text": "context"},
    "sentence-similarity": {"text": "text1", "other": "text2"},
    "table-question-answering": {"question": "text", "table": "context"},
}
_STEP_PREFIX = re.compile(r"^Step \d+: ?")
#: Node references as TaskBench's gold writes them, well formed or not.
_NODE_LIKE = re.compile(r"<\s*node[-_ ]?(?:id[-_ ]?)?(\d+)[^<>]*>", re.IGNORECASE)
_WHOLE_NODE_LIKE = re.compile(r"^\s*<\s*node[-_ ]?(?:id[-_ ]?)?(\d+)[^<>]*>\s*$", re.IGNORECASE)
_OUTPUT_OF = re.compile(r"^\s*<\s*output[\s_-]+of[\s_-]+(.+?)\s*>\s*$", re.IGNORECASE)
_GENERATED = re.compile(r"<GENERATED>-(\d+)")


# --------------------------------------------------------------------------- TaskBench


def to_taskbench(plan: Plan) -> dict[str, list[Any]]:
    """``{"task_nodes", "task_links", "task_steps"}`` for ``plan`` (TaskBench's format)."""
    steps = _numbered(plan)
    names = [taskbench_name(s.task) for s in steps]
    position = {s.id: j for j, s in enumerate(steps)}
    nodes = []
    for step in steps:
        spec = TASKS.get(step.task)
        roles = [role for role, _ in spec.roles] if spec else []
        ordered = [step.args[r] for r in roles if r in step.args]
        ordered += [v for k, v in step.args.items() if k not in roles]
        # TaskBench's arguments are literals: material goes back in as its text.
        ordered = [plan.material.get(v, v) if isinstance(v, str) else v for v in ordered]
        nodes.append({"task": taskbench_name(step.task), "arguments": ordered})
    links: list[dict[str, str]] = []
    for step in steps:
        for dep in _edges(step):
            if dep not in position:
                continue  # a dangling reference: the validator reports it, no link to write
            link = {"source": names[position[dep]], "target": names[position[step.id]]}
            if link not in links:
                links.append(link)
    return {
        "task_nodes": nodes,
        "task_links": links,
        "task_steps": [
            f"Step {j + 1}: {s.description or _sentence(s)}" for j, s in enumerate(steps)
        ],
    }


def from_taskbench(record: dict[str, Any], *, one_based: bool | None = None) -> Plan:
    """The plan a TaskBench record describes (see the module docstring for what is tolerated).

    ``record`` needs ``task_nodes``; ``task_steps`` (descriptions) is optional.
    ``one_based`` forces reading ``<node-j>`` as the j-th node counting from 1 (True) or 0
    (False); by default it is decided per record.
    """
    raw = record.get("task_nodes") or []
    if isinstance(raw, dict):
        raw = list(raw.values())
    nodes = [n if isinstance(n, dict) else {"task": str(n)} for n in raw]
    tasks = [str(n.get("task", "")).strip() for n in nodes]
    arguments = [_arguments(n) for n in nodes]
    base = _base(arguments, one_based)
    steps_text = record.get("task_steps") or []
    described = isinstance(steps_text, list) and len(steps_text) == len(nodes)
    subtasks = []
    for j, (task, args) in enumerate(zip(tasks, arguments, strict=True)):
        name = canonical(task) or task
        spec = TASKS.get(name)
        roles = [role for role, _ in spec.roles] if spec else []
        values: dict[str, Any] = {}
        for k, value in enumerate(args):
            key = roles[k] if k < len(roles) else f"arg_{k}"
            values[key] = _read_value(value, j, base, tasks)
        step = Subtask(
            id=f"node-{j}",
            task=name,
            args=values,
            description=_STEP_PREFIX.sub("", str(steps_text[j])) if described else "",
        )
        step.deps = _deps(step, j)
        subtasks.append(step)
    return Plan(subtasks=subtasks)


def _arguments(node: dict[str, Any]) -> list[Any]:
    args = node.get("arguments", node.get("parameters"))
    if args is None:
        return []
    if isinstance(args, dict):
        return list(args.values())
    return list(args) if isinstance(args, list) else [args]


def _base(arguments: list[list[Any]], one_based: bool | None) -> int:
    """0 or 1: how a record numbers its nodes (see the module docstring)."""
    if one_based is not None:
        return int(one_based)
    refs = [
        (j, int(m))
        for j, args in enumerate(arguments)
        for value in args
        if isinstance(value, str)
        for m in _NODE_LIKE.findall(value)
    ]

    def backwards(base: int) -> int:
        return sum(0 <= r - base < j for j, r in refs)

    return 1 if backwards(1) > backwards(0) else 0


def _read_value(value: Any, j: int, base: int, tasks: list[str]) -> Any:
    """One gold argument as a plan value: references normalised to ``<node-i>``."""
    if isinstance(value, dict) and set(value) == {"from"}:
        found = _latest(str(value["from"]), j, tasks)
        return f"<node-{found}>" if found is not None else value
    if not isinstance(value, str):
        return value
    if m := _WHOLE_NODE_LIKE.match(value):
        return _node(m, base)
    if m := _OUTPUT_OF.match(value):
        found = _latest(m.group(1), j, tasks)
        return f"<node-{found}>" if found is not None else value
    return _NODE_LIKE.sub(lambda m: _node(m, base), value)


def _node(match: re.Match[str], base: int) -> str:
    """``<node-i>`` for a node-like reference; one that numbering cannot place stays as is."""
    index = int(match.group(1)) - base
    return f"<node-{index}>" if index >= 0 else match.group(0)


def _latest(task: str, j: int, tasks: list[str]) -> int | None:
    """The latest step before ``j`` (else the first after it) whose task is ``task``."""

    def key(name: str) -> str:
        return canonical(name.replace("_", " ")) or re.sub(r"[\W_]+", "", name.lower())

    wanted = key(task)
    matches = [i for i, t in enumerate(tasks) if key(t) == wanted and i != j]
    earlier = [i for i in matches if i < j]
    return earlier[-1] if earlier else (matches[0] if matches else None)


def _sentence(step: Subtask) -> str:
    """A step text for a step without a description, in TaskBench's manner."""
    shown = [v for v in step.args.values() if isinstance(v, str)]
    on = f" on {', '.join(shown)}" if shown else ""
    return f"Use {taskbench_name(step.task)}{on}"


# --------------------------------------------------------------------------- HuggingGPT


def to_hugginggpt(plan: Plan) -> list[dict[str, Any]]:
    """HuggingGPT's task list for ``plan`` (see the module docstring for the arg keys)."""
    steps = _numbered(plan)
    position = {s.id: j for j, s in enumerate(steps)}
    tasks = []
    for j, step in enumerate(steps):
        keys = _hugginggpt_keys(step.task)
        args = {
            keys.get(role, role): _generated(value, position) for role, value in step.args.items()
        }
        dep = sorted(position[d] for d in _edges(step) if d in position)
        tasks.append({"id": j, "task": step.task, "dep": dep or [-1], "args": args})
    return tasks


def from_hugginggpt(tasks: list[dict[str, Any]]) -> Plan:
    """The plan a HuggingGPT task list describes; ``dep`` is rebuilt from the arguments."""
    ids: dict[int, int] = {}
    for j, task in enumerate(tasks):
        try:
            ids.setdefault(int(task.get("id", j)), j)
        except (TypeError, ValueError):
            ids.setdefault(j, j)
    subtasks = []
    for j, task in enumerate(tasks):
        name = str(task.get("task", "")).strip()
        name = canonical(name) or name
        back = {key: role for role, key in _hugginggpt_keys(name).items()}
        raw = task.get("args") or {}
        args = {
            back.get(key, key): _from_generated(value, ids)
            for key, value in (raw.items() if isinstance(raw, dict) else [])
        }
        step = Subtask(id=f"node-{j}", task=name, args=args)
        step.deps = _deps(step, j)
        subtasks.append(step)
    return Plan(subtasks=subtasks)


def _hugginggpt_keys(task: str) -> dict[str, str]:
    """Role -> HuggingGPT arg key for ``task`` (roles of unknown tasks keep their names)."""
    if task in HUGGINGGPT_KEYS:
        return HUGGINGGPT_KEYS[task]
    spec = TASKS.get(task)
    return {role: kind for role, kind in spec.roles} if spec else {}


def _generated(value: Any, position: dict[str, int]) -> Any:
    if isinstance(value, list):
        return [_generated(v, position) for v in value]
    if not isinstance(value, str):
        return value
    return EMBEDDED_REF.sub(
        lambda m: (
            f"<GENERATED>-{position.get(m.group(1), m.group(1))}"
            if m.group(1) in position
            else m.group(0)
        ),
        value,
    )


def _from_generated(value: Any, ids: dict[int, int]) -> Any:
    if isinstance(value, list):
        return [_from_generated(v, ids) for v in value]
    if not isinstance(value, str):
        return value
    return _GENERATED.sub(lambda m: f"<node-{ids.get(int(m.group(1)), int(m.group(1)))}>", value)


# --------------------------------------------------------------------------- shared


def _numbered(plan: Plan) -> list[Subtask]:
    """The steps with ids ``node-0, node-1, ...`` by position, references rewritten to match."""
    steps = [s.model_copy(deep=True) for s in plan.subtasks]
    renamed = {s.id: f"node-{j}" for j, s in enumerate(steps)}
    if all(old == new for old, new in renamed.items()):
        return steps

    def rename(value: Any) -> Any:
        if isinstance(value, list):
            return [rename(v) for v in value]
        if not isinstance(value, str):
            return value
        return EMBEDDED_REF.sub(lambda m: f"<{renamed.get(m.group(1), m.group(1))}>", value)

    for step in steps:
        step.args = {k: rename(v) for k, v in step.args.items()}
        step.deps = [renamed.get(d, d) for d in step.deps]
        step.id = renamed[step.id]
    return steps


def _edges(step: Subtask) -> list[str]:
    """The steps ``step`` needs: its ``deps`` and its references, without repeats."""
    return [d for d in dict.fromkeys([*step.deps, *step_refs(step)]) if d != step.id]


def _deps(step: Subtask, j: int) -> list[str]:
    """Deps from references, in step order (self-references are the validator's business)."""
    refs = {int(r.split("-")[1]) for r in step_refs(step)}
    return [f"node-{i}" for i in sorted(refs) if i != j]


__all__ = [
    "HUGGINGGPT_KEYS",
    "from_hugginggpt",
    "from_taskbench",
    "to_hugginggpt",
    "to_taskbench",
]
