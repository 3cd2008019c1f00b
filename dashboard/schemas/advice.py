"""Response models of the advice and dice-statistics API (:mod:`kosti.dashboard.routes.advice`); the statistics
document itself is :class:`kosti.dashboard.stats.StatsDocument`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

#: A stored game id as SQLite can hold it (a larger ``?game=`` is a 422, not an overflow inside the query).
GameIds = list[Annotated[int, Field(ge=1, le=2**63 - 1)]] | None


class AdviceFigures(BaseModel):
    """The advice itself: :meth:`kosti.engine.advisor.Advice.to_json` (the cli.md ``kosti advise`` keys plus
    ``requirement``, ``record_probability``, ``keep``, ``at_risk``), or for two-player Pig
    :meth:`kosti.engine.advisor.pig.PigAdvice.to_json` (values are win probabilities; the Pig-only fields
    below are absent for the 1000 family)."""

    player: str
    dice_to_throw: int
    turn_points: int = Field(description="points of the turn so far (Pig: of the series)")
    bust_probability: float = Field(description="probability that the next throw scores nothing, 0–1")
    expected_points: float = Field(description="points the next throw adds with its best keep")
    may_stop: bool
    advice: Literal["throw", "stop"]
    stop_value: float | None = Field(description="value of stopping now (None when the rules forbid it)")
    throw_value: float = Field(description="value of throwing now and playing on optimally")
    requirement: str | None = Field(description="what the turn must reach to record: open, pit, barrel, or None")
    record_probability: float | None = Field(description="probability the turn records its points (Pig: None)")
    keep: list[int] | None = Field(description="dice to set aside in the keep phase, sorted (else None)")
    at_risk: int = Field(description="turn points a zero throw would lose")
    why: str
    why_ru: str
    objective: Literal["win"] | None = Field(default=None, description="Pig only: the objective of the values")
    win_probability: float | None = Field(default=None, description="Pig only: of the advised action")
    score: int | None = Field(default=None, description="Pig only: the mover's score")
    opponent_score: int | None = Field(default=None, description="Pig only")
    target: int | None = Field(default=None, description="Pig only: the game's target")
    win_if_throw: float | None = Field(default=None, description="Pig only: win probability if he throws now")
    win_if_stop: float | None = Field(default=None, description="Pig only: win probability if he stops now")
    starter: bool | None = Field(default=None, description="Pig only: he started the round")
    solve_time_s: float | None = Field(default=None, description="Pig only: seconds the win table took to solve")


class AdviceAnswer(BaseModel):
    """``GET /api/advice``: the advice for the state of snapshot ``version`` when ``available``, else the
    reason in both languages (``advice``, ``objective`` and ``objective_kind`` then absent)."""

    available: bool
    version: int = Field(description="the table snapshot's version the advice belongs to")
    game_id: int | None
    advice: AdviceFigures | None = None
    objective: str | None = Field(default=None, description="what the values measure, in words")
    objective_kind: Literal["turn", "win"] | None = None
    reason: str | None = Field(default=None, description="why there is no advice (English)")
    reason_ru: str | None = Field(default=None, description="why there is no advice (Russian)")

__all__ = ["AdviceAnswer", "AdviceFigures", "GameIds"]
