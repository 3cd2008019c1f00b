"""The 1000 family (1000, Farkle, 10000: every preset of rules.md §4) behind the game interface.

A thin adapter: :class:`ThousandGame` wraps the unchanged :class:`~kosti.engine.game.GameState`
and forwards every call, so the 1000 engine keeps all its behaviour, JSON form
(``"format": "kosti-game/1"``) and replay output (cli.md, without a ``"game"`` key, exactly as
before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from ..errors import RuleViolation
from ..game import Event, GameState
from .base import Choose, Game, GameAction, Moves

__all__ = ["ThousandGame"]


@dataclass(frozen=True)
class ThousandGame(Game):
    """A 1000-family game: ``state`` is the engine's :class:`~kosti.engine.game.GameState`."""

    state: GameState

    game: ClassVar[str] = "1000"
    HAS_STOP: ClassVar[bool] = True

    @property
    def title(self) -> tuple[str, str]:
        """The family of the preset: "dice 1000" / «Тысяча на костях», "Farkle" / «Фаркл» or "10000"."""
        from ..titles import family_title

        return family_title(self.state.rules.name)

    @property
    def to_move(self) -> str | None:
        return self.state.to_move

    @property
    def over(self) -> bool:
        return self.state.over

    @property
    def winner(self) -> str | list[str] | None:
        return self.state.winner

    @property
    def dice_to_throw(self) -> int:
        return self.state.dice_to_throw

    @property
    def rules_name(self) -> str:
        return self.state.rules.name

    @property
    def player_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.state.players)

    @property
    def turn_points(self) -> int:
        """Points of the turn in progress (not yet recorded)."""
        return self.state.turn.points

    @property
    def log(self) -> Sequence[str]:
        return self.state.log

    def __getattr__(self, name: str) -> Any:
        """Everything else of the 1000 engine's state (``rules``, ``players``, ``turn``, ``allowed()``,
        ``player(name)`` …) is read through, so code written for :class:`GameState` keeps working."""
        if name.startswith("__") or name == "state":
            raise AttributeError(name)
        return getattr(self.state, name)

    def scores_list(self) -> tuple[int, ...]:
        return tuple(p.score for p in self.state.players)

    def moves(self) -> Moves:
        a = self.state.allowed()
        return Moves(a.roll, a.dice, a.keep, a.bank, a.keeps, a.why_not_roll, a.why_not_bank,
                     a.hint, a.dice_options)

    def roll_sizes(self) -> tuple[int, ...]:
        return self.state.roll_sizes()

    def apply(self, action: GameAction) -> tuple[ThousandGame, tuple[Event, ...]]:
        """:meth:`GameState.apply`; a :class:`Choose` is forbidden (1000 has no own choices)."""
        if isinstance(action, Choose):
            raise RuleViolation(f"{self.rules_name} has no choice {action.key!r}",
                                f"в правилах {self.rules_name} нет выбора {action.key!r}")
        st, evs = self.state.apply(action)
        return ThousandGame(st), evs

    def summary(self) -> dict[str, Any]:
        return self.state.summary()

    def to_json(self) -> dict[str, Any]:
        return self.state.to_json()
