"""The plan: a DAG of subtasks whose arguments are literals, inputs, or ``<node-j>`` outputs.

The validator runs before anything executes, so a plan that asks an image classifier to read
audio fails in milliseconds with a message naming the step, not minutes later in a pipeline.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from graph_agent.tools.registry import REGISTRY
from graph_agent.tools.results import Modality

REF = re.compile(r"^<(node-\d+)>$")


class Subtask(BaseModel):
    """One step: run ``task`` on ``args``; ``deps`` are the steps whose outputs it uses."""

    id: str = Field(description="Step id, 'node-0', 'node-1', ... in order.")
    task: str = Field(description="The task name, e.g. 'automatic-speech-recognition'.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Role -> value: a literal, an input name, or '<node-j>' for a step's output.",
    )
    deps: list[str] = Field(default_factory=list, description="Ids of steps this one needs.")
    description: str = Field(
        default="", description="The words of the request this step serves (guides selection)."
    )


class Plan(BaseModel):
    subtasks: list[Subtask] = Field(default_factory=list)

    def by_id(self) -> dict[str, Subtask]:
        return {s.id: s for s in self.subtasks}


class PlanError(ValueError):
    """A plan failed validation; ``problems`` lists every reason, each naming its step."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("The plan is not valid:\n- " + "\n- ".join(problems))


def ref_of(value: Any) -> str | None:
    """The step id a ``<node-j>`` reference points to, or None for any other value."""
    return m.group(1) if isinstance(value, str) and (m := REF.match(value.strip())) else None


def arg_modality(
    value: Any, input_types: dict[str, Modality | None], steps: dict[str, Subtask]
) -> Modality | None:
    """What kind of value an argument delivers: a step's output type, an input's, or text."""
    ref = ref_of(value)
    if ref is not None:
        step = steps.get(ref)
        tool = REGISTRY.get(step.task) if step else None
        return tool.output if tool else None
    if isinstance(value, str) and value in input_types:
        return input_types[value]
    return "text"


def validate(plan: Plan, input_types: dict[str, Modality | None]) -> Plan:
    """Check a plan and return it with ``deps`` completed from its references.

    Checks: at least one step, unique ids, known tasks, every required argument present,
    references to existing steps, no cycles, and matching input and output types.
    """
    problems: list[str] = []
    if not plan.subtasks:
        raise PlanError(["the plan has no steps: nothing in the request maps to a known task"])
    steps = plan.by_id()
    if len(steps) != len(plan.subtasks):
        problems.append("step ids are not unique")
    for step in plan.subtasks:
        tool = REGISTRY.get(step.task)
        if tool is None:
            problems.append(f"{step.id}: unknown task {step.task!r}")
            continue
        refs = {r for v in step.args.values() if (r := ref_of(v))}
        for ref in sorted(refs):
            if ref not in steps:
                problems.append(f"{step.id}: refers to <{ref}>, which is not a step")
        step.deps = sorted(set(step.deps) | (refs & set(steps)))
        for role, needed in tool.inputs:
            if role not in step.args or step.args[role] in ("", None):
                problems.append(f"{step.id} ({step.task}): missing the {needed} argument {role!r}")
                continue
            value = step.args[role]
            got = arg_modality(value, input_types, steps)
            if got is None and isinstance(value, str) and value in input_types:
                problems.append(
                    f"{step.id} ({step.task}): cannot tell what kind of file {value!r} is; "
                    f"it needs {needed}"
                )
            elif got is not None and got != needed:
                what = (
                    f"'{value}' is {_a(got)}"
                    if ref_of(value) is None
                    else (f"{value} produces {got}")
                )
                problems.append(f"{step.id} ({step.task}) needs {needed}, but {what}")
    problems += _cycles(plan)
    if problems:
        raise PlanError(problems)
    return plan


def _a(modality: str) -> str:
    return {"image": "an image", "audio": "audio", "text": "text"}.get(modality, modality)


def _cycles(plan: Plan) -> list[str]:
    deps = {s.id: [d for d in s.deps if d in plan.by_id()] for s in plan.subtasks}
    state: dict[str, int] = {}

    def visit(node: str) -> bool:
        if state.get(node) == 1:
            return True
        if state.get(node) == 2:
            return False
        state[node] = 1
        cyclic = any(visit(d) for d in deps[node])
        state[node] = 2
        return cyclic

    return [f"{n}: its dependencies form a cycle" for n in deps if visit(n)][:1]
