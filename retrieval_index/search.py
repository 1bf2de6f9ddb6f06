"""Constrained model selection: relevance search, hard filters, then an explainable ranking."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from graph_agent.retrieval_index.cards import ModelCard
from graph_agent.retrieval_index.index import CardIndex


class Constraints(BaseModel):
    """What the user allows. Every field is optional; an empty value means "no limit"."""

    model_config = ConfigDict(extra="forbid")

    licenses: list[str] = Field(default_factory=list, description="Allowed licence ids.")
    max_parameters: int | None = Field(default=None, gt=0)
    max_size_mb: float | None = Field(default=None, gt=0)
    languages: list[str] = Field(default_factory=list)
    prefer_smallest: bool = False
    runnable_only: bool = True

    @field_validator("licenses", "languages", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> Constraints:
        """Validate user constraints; errors name the field and what was wrong."""
        try:
            return cls.model_validate(raw or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'constraints'}: {e['msg']}" for e in exc.errors()
            )
            allowed = ", ".join(cls.model_fields)
            raise ValueError(f"Invalid constraints ({problems}). Allowed: {allowed}.") from None

    def violations(self, card: ModelCard) -> list[str]:
        """Why ``card`` is ruled out (empty when it is allowed)."""
        out = []
        if self.runnable_only and not card.runnable:
            out.append("weights not on this machine")
        if self.licenses and (card.license or "unknown") not in self.licenses:
            out.append(f"licence {card.license or 'unknown'} not in {self.licenses}")
        if self.max_parameters and (card.parameters or math.inf) > self.max_parameters:
            out.append(f"{_params(card)} parameters > {self.max_parameters:,}")
        if self.max_size_mb and (card.size_bytes or math.inf) / 1e6 > self.max_size_mb:
            out.append(f"size > {self.max_size_mb} MB")
        if self.languages and card.languages and not set(self.languages) & set(card.languages):
            out.append(f"languages {card.languages} lack {self.languages}")
        return out


@dataclass
class Candidate:
    id: str
    path: str | None
    score: float
    relevance: float
    why: str


@dataclass
class Selection:
    """A ranked list of runnable candidates and the reason the first one was chosen."""

    task: str
    candidates: list[Candidate]
    reason: str
    rejected: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _params(card: ModelCard) -> str:
    return f"{card.parameters / 1e6:.0f}M" if card.parameters else "unknown"


#: Weight of the size prior, per tenfold increase in parameters. Used only when a card has
#: no likes: among models tagged for the same task, a larger one is usually the more capable.
SIZE_PRIOR_PER_DECADE = 0.2


def _priors(card: ModelCard) -> tuple[float, str]:
    """Popularity when the card has it (HuggingGPT's signal), else a size prior; and why."""
    if card.likes:
        bonus = math.log10(1 + card.likes) / 10
        return bonus, f"popularity +{bonus:.2f} ({card.likes} likes)"
    if card.parameters:
        bonus = SIZE_PRIOR_PER_DECADE * math.log10(max(card.parameters, 1e6) / 1e6)
        return bonus, f"size prior +{bonus:.2f} ({_params(card)} parameters)"
    return 0.0, "no popularity or size known"


def _score(card: ModelCard, relevance: float, constraints: Constraints) -> tuple[float, str]:
    """Relevance plus a prior; "smallest" ranks by size and uses relevance to break ties."""
    if constraints.prefer_smallest:
        return -math.log10(card.parameters or 1e12) + relevance / 100, (
            f"{_params(card)} parameters, relevance {relevance:.2f}"
        )
    bonus, why = _priors(card)
    return relevance + bonus, f"relevance {relevance:.2f}, {why}"


def select(
    index: CardIndex, task: str, query: str, constraints: Constraints | None = None
) -> Selection:
    """Rank the models that can run ``task`` for ``query`` under ``constraints``.

    Every card of the task is scored before filtering, so a runnable model is never lost
    behind a wall of better-matching cards whose weights are not here.
    """
    constraints = constraints or Constraints()
    hits = index.search(task, query)
    rejected: dict[str, list[str]] = {}
    ranked: list[Candidate] = []
    for card_id, relevance in hits:
        card = index.catalog.get(card_id)
        if card is None:
            continue
        why_not = constraints.violations(card)
        if why_not:
            rejected[card_id] = why_not
            continue
        score, why = _score(card, relevance, constraints)
        why += f", licence {card.license or 'unknown'}"
        ranked.append(Candidate(card.id, card.local_path, score, relevance, why))
    ranked.sort(key=lambda c: -c.score)
    if not ranked:
        detail = "; ".join(f"{i}: {', '.join(r)}" for i, r in rejected.items()) or "no cards"
        reason = f"No runnable model for {task} fits the constraints ({detail})."
    else:
        top = ranked[0]
        basis = "smallest model allowed" if constraints.prefer_smallest else "best match"
        reason = f"{top.id}: {basis} of {len(ranked)} allowed candidate(s) for {task} ({top.why})"
        if rejected:
            reason += f"; ruled out {len(rejected)}: " + "; ".join(
                f"{i} ({', '.join(r)})" for i, r in list(rejected.items())[:3]
            )
    return Selection(task=task, candidates=ranked, reason=reason, rejected=rejected)
