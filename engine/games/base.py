"""The common base of the games of ``games.md``: :class:`TableGame`, its parameters and presets.

The game protocol itself (:class:`Game`, :class:`Moves`, :class:`Choose` …) is :mod:`kosti.engine.protocol`;
this module re-exports it for the game modules.

:class:`TableGame` is generic in its parameters (``class Pig(TableGame[PigParams])``): frozen dataclasses
holding ``params`` (the preset's parameters, typed), ``names``, ``scores`` (one int per seat), ``mover``,
``over``, ``winners``, ``log`` and the game's own fields (ints, strings, bools and tuples only), so that the
generic JSON form restores them exactly.
"""

from __future__ import annotations

import dataclasses
import typing
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Mapping, Self, Sequence, TypeVar

from ..actions import Bank, Keep, Roll
from ..errors import BadInput, RuleViolation
from ..kinds import TurnOutcome
from ..names import check_player_names
from ..plurals import count_en, count_ru
from ..protocol import (
    OVER_MOVES,
    ChoiceOption,
    Choose,
    Game,
    GameAction,
    Moves,
    action_from_json,
    action_to_json,
    freeze,
    thaw,
)
from ..records import Event, Reason

__all__ = ["Choose", "ChoiceOption", "Moves", "OVER_MOVES", "Game", "TableGame", "GameParams", "GameAction",
           "SCORE_KINDS", "action_from_json", "action_to_json", "check_roll", "freeze", "thaw",
           "ev", "faces_text", "dice_en", "dice_ru", "sort_winners", "GamePreset", "P"]

#: Event kinds whose ``points`` change the recorded score of ``player`` by exactly that amount
#: (the games of games.md; the property tests check that scores change only through these).
SCORE_KINDS = frozenset({"score", "bank", "win_round", "dice_moved", "game_point_score",
                         "settle"})


def check_roll(faces: Sequence[int], n: int) -> tuple[int, ...]:
    """The faces of a throw that must have exactly ``n`` dice; raises :class:`BadInput` for any
    other count (faces are checked 1–6 by :class:`~kosti.engine.game.Roll`)."""
    if len(faces) != n:
        raise BadInput(f"throw exactly {dice_en(n)}, got {len(faces)}",
                       f"нужно бросить ровно {dice_ru(n)}, а введено {len(faces)}")
    return tuple(faces)


def ev(kind: str, player: str, en: str, ru: str, points: int = 0,
       faces: Sequence[int] = (), outcome: TurnOutcome | None = None) -> Event:
    """A :class:`~kosti.engine.game.Event` (kinds in :data:`SCORE_KINDS` change ``player``'s
    score by ``points``); ``outcome`` on the one event that ends a player's series or turn
    (:class:`~kosti.engine.kinds.TurnOutcome`), as the 1000 engine marks it."""
    return Event(kind, player, en, ru, points, tuple(faces), outcome)


def faces_text(faces: Sequence[int]) -> str:
    """``"1 5 3"``."""
    return " ".join(str(f) for f in faces)


def dice_en(n: int) -> str:
    """``"1 die"`` / ``"3 dice"`` (:func:`kosti.engine.plurals.count_en`)."""
    return count_en(n, "die")


def dice_ru(n: int) -> str:
    """Russian count of dice with the right noun form: 1 кость, 2–4 кости, 5+ костей
    (:func:`kosti.engine.plurals.count_ru`)."""
    return count_ru(n, "die")


def sort_winners(scores: Sequence[int], high: bool = True) -> tuple[int, ...]:
    """Indices of the best score (highest, or lowest with ``high=False``); several on a tie."""
    best = max(scores) if high else min(scores)
    return tuple(i for i, s in enumerate(scores) if s == best)


# ----------------------------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True)
class GameParams:
    """Base of every game's parameters: ``name`` (preset name). Subclasses add fields with
    defaults; :meth:`with_overrides` validates changes by the field's type."""

    name: str = ""

    #: field name → (allowed values) for string / tuple choices; checked on construction.
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {}
    #: field name → (min, max) for integers (None = unbounded).
    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {}

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            t = hints[f.name]
            where = f"{self.name or type(self).__name__}.{f.name}"
            if t is bool:
                if not isinstance(v, bool):
                    raise BadInput(f"{where}: expected true/false, got {v!r}")
            elif t is int:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise BadInput(f"{where}: expected an integer, got {v!r}")
                lo, hi = self.RANGES.get(f.name, (None, None))
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    raise BadInput(f"{where}: {v} is outside {lo}–{hi}")
            elif t is str:
                if not isinstance(v, str):
                    raise BadInput(f"{where}: expected a string, got {v!r}")
            elif typing.get_origin(t) is tuple:
                if not isinstance(v, list | tuple) or not all(
                        isinstance(x, int) and not isinstance(x, bool) for x in v):
                    raise BadInput(f"{where}: expected a list of integers, got {v!r}")
                object.__setattr__(self, f.name, tuple(v))
            if f.name in self.CHOICES_OF and v not in self.CHOICES_OF[f.name]:
                raise BadInput(f"{where}: {v!r} is not one of "
                               f"{', '.join(map(repr, self.CHOICES_OF[f.name]))}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON dict of every parameter (tuples as lists)."""
        return {f.name: thaw(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self:
        """Parameters from a dict written by :meth:`to_dict`; raises :class:`BadInput` naming an
        unknown parameter."""
        known = {f.name for f in dataclasses.fields(cls)}
        for k in d:
            if k not in known:
                raise BadInput(f"unknown parameter {k!r} (known: {', '.join(sorted(known))})")
        return cls(**dict(d))

    def with_overrides(self, overrides: Mapping[str, Any]) -> Self:
        """A copy with ``overrides`` applied (validated; unknown names raise BadInput)."""
        if not isinstance(overrides, Mapping):
            raise BadInput("overrides: expected an object of parameter changes")
        d = self.to_dict()
        for k, v in overrides.items():
            if k not in d or k == "name":
                raise BadInput(f"unknown parameter {k!r} for {self.name} (known: "
                               f"{', '.join(sorted(x for x in d if x != 'name'))})")
            d[k] = v
        return type(self).from_dict(d)


# ----------------------------------------------------------------------------------------------
# The common base of the games of games.md


#: The parameters type of a :class:`TableGame` (``TableGame[PigParams]``).
P = TypeVar("P", bound=GameParams)


@dataclass(frozen=True)
class TableGame(Game, Generic[P]):
    """Common state of the games of games.md (see the module docstring).

    ``params``: the preset's parameters; ``names``: players in seat order (the turn passes to the
    left = the next seat); ``scores``: recorded score per seat (the game's unit); ``mover``: seat
    of the player to act; ``over``; ``winners``: seats of the winner(s); ``log``: English lines.
    Subclasses add their own fields, all with defaults, of JSON-friendly immutable types.
    """

    params: P
    names: tuple[str, ...]
    scores: tuple[int, ...]
    mover: int = 0
    over: bool = False
    winners: tuple[int, ...] = ()
    log: tuple[str, ...] = ()

    #: The params class of the game (set by each subclass).
    PARAMS: ClassVar[type[GameParams]] = GameParams
    #: Player count allowed (min, max).
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)
    #: What the score column counts, in both languages.
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("points", "очки")

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def start(cls, params: P, players: Sequence[str],
              scores: Mapping[str, int] | None = None) -> Self:
        """A new game of ``players`` (names in seat order) under ``params``; ``scores``: optional
        starting scores by name. Raises :class:`BadInput` for bad names, counts or scores."""
        names = list(players)
        check_player_names(names)  # the one player-name rule (kosti.engine.names)
        lo, hi = cls.PLAYERS
        if not lo <= len(names) <= hi:
            raise BadInput(f"players: {params.name} allows {lo}–{hi} players, got {len(names)}")
        sc = [0] * len(names)
        for k, v in dict(scores or {}).items():
            if k not in names:
                raise BadInput(f"unknown player {k!r} (players: {', '.join(names)})")
            if isinstance(v, bool) or not isinstance(v, int):
                raise BadInput(f"scores.{k}: expected an integer, got {v!r}")
            sc[names.index(k)] = v
        st = cls(params=params, names=tuple(names), scores=tuple(sc))
        return st._opened()

    def _opened(self) -> Self:
        """Hook: the state right after :meth:`start` (e.g. the first phase)."""
        return self

    # -- interface -----------------------------------------------------------------------------
    @property
    def to_move(self) -> str | None:
        return None if self.over else self.names[self.mover]

    @property
    def winner(self) -> str | list[str] | None:
        if not self.winners:
            return None
        names = [self.names[i] for i in self.winners]
        return names[0] if len(names) == 1 else names

    @property
    def rules_name(self) -> str:
        return self.params.name

    @property
    def player_names(self) -> tuple[str, ...]:
        return self.names

    def scores_list(self) -> tuple[int, ...]:
        return self.scores

    @property
    def turn_points(self) -> int:
        """Points of the turn in progress, not yet recorded (0 in games without banking)."""
        return 0

    def player_extra(self, i: int) -> dict[str, Any]:
        """Game-specific keys of player ``i`` in :meth:`summary` (override)."""
        return {}

    def extra_summary(self) -> dict[str, Any]:
        """Game-specific top-level keys of :meth:`summary` (override)."""
        return {}

    def marks(self, i: int) -> list[tuple[str, str]]:
        """Marks of player ``i`` for the score sheet, ``(english, russian)`` each (override)."""
        return []

    def status(self) -> Reason | None:
        """One line on the state of play (round, point, target …) for the sheet (override)."""
        return None

    def summary(self) -> dict[str, Any]:
        """``{"game", "rules", "winner", "to_move", "players": [{"name", "score", …}], "turn":
        {"player", "turn_points", "dice_to_throw"}, "log", …}`` — the cli.md replay shape."""
        players = [{"name": n, "score": s, **self.player_extra(i)}
                   for i, (n, s) in enumerate(zip(self.names, self.scores))]
        return {"game": self.game, "rules": self.params.name, "winner": self.winner,
                "to_move": self.to_move, "players": players,
                "turn": {"player": self.to_move,
                         "turn_points": 0 if self.over else self.turn_points,
                         "dice_to_throw": self.dice_to_throw},
                "log": list(self.log), **self.extra_summary()}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": f"kosti-{self.game}/1", "params": self.params.to_dict()}
        for f in dataclasses.fields(self):
            if f.name != "params":
                out[f.name] = thaw(getattr(self, f.name))
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Self:
        """Restore a state written by :meth:`to_json`; raises :class:`BadInput` if malformed."""
        try:
            if d.get("format") != f"kosti-{cls.game}/1":
                raise BadInput(f"not a saved {cls.game} game (format {d.get('format')!r})")
            params = cls.PARAMS.from_dict(d["params"])
            kw: dict[str, Any] = {"params": params}
            names = {f.name for f in dataclasses.fields(cls)}
            for k, v in d.items():
                if k in ("format", "params"):
                    continue
                if k not in names:
                    raise BadInput(f"not a saved {cls.game} game: unknown key {k!r}")
                kw[k] = freeze(v)
            st = cls(**kw)
        except BadInput:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BadInput(f"not a saved {cls.game} game: {exc}") from None
        if len(st.scores) != len(st.names) or not 0 <= st.mover < len(st.names):
            raise BadInput(f"not a saved {cls.game} game: players, scores and mover disagree")
        return st

    def apply(self, action: GameAction) -> tuple[TableGame[P], tuple[Event, ...]]:
        """Apply one action (see the module docstring); raises BadInput / RuleViolation."""
        if self.over:
            raise RuleViolation("the game is over", "игра окончена")
        evs: list[Event] = []
        if isinstance(action, Roll):
            m = self.moves()
            if not m.roll:
                why = m.why_not_roll or Reason("no throw is due now", "сейчас бросать не нужно")
                raise RuleViolation(why.text_en, why.text_ru)
            st = self._roll(check_roll(action.faces, m.dice), evs)
        elif isinstance(action, Bank):
            m = self.moves()
            if not m.bank:
                why = m.why_not_bank or Reason("you may not stop now",
                                               "сейчас остановиться нельзя")
                if not self.HAS_STOP:  # a game without a stop: its reason says so ("every throw counts")
                    raise RuleViolation(why.text_en, why.text_ru)
                raise RuleViolation(f"you may not stop: {why.text_en}",
                                    f"остановиться нельзя: {why.text_ru}")
            st = self._bank(evs)
        elif isinstance(action, Choose):
            if action.key not in self.CHOICES:
                raise BadInput(f"{self.params.name} has no choice {action.key!r}"
                               + (f" (choices: {', '.join(self.CHOICES)})" if self.CHOICES
                                  else ""))
            st = self._choose(action.key, action.value, evs)
        elif isinstance(action, Keep):
            st = self._keep(action.faces, evs)
        else:
            raise BadInput(f"unknown action {action!r}")
        return dataclasses.replace(st, log=self.log + tuple(e.text_en for e in evs)), tuple(evs)

    # -- hooks ---------------------------------------------------------------------------------
    @abstractmethod
    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> TableGame[P]:
        """Apply a throw of the right size (already checked)."""

    def _bank(self, evs: list[Event]) -> TableGame[P]:
        raise RuleViolation("this game has no stopping", "в этой игре не останавливаются")

    def _keep(self, faces: tuple[int, ...], evs: list[Event]) -> TableGame[P]:
        raise RuleViolation(f"{self.params.name} has no setting aside of chosen dice: the "
                            f"rules decide what happens to every die",
                            f"в игре {self.params.name} кости не откладывают по выбору: "
                            f"судьбу каждой кости решают правила")

    def _choose(self, key: str, value: Any, evs: list[Event]) -> TableGame[P]:
        raise BadInput(f"unknown choice {key!r}")

    # -- helpers -------------------------------------------------------------------------------
    def _add(self, seat: int, points: int, evs: list[Event], en: str, ru: str,
             kind: str = "score", faces: Sequence[int] = (),
             outcome: TurnOutcome | None = None) -> tuple[int, ...]:
        """Scores with ``points`` added to ``seat``, recording a :data:`SCORE_KINDS` event
        (``outcome``: see :func:`ev`)."""
        evs.append(ev(kind, self.names[seat], en, ru, points, faces, outcome))
        sc = list(self.scores)
        sc[seat] += points
        return tuple(sc)

    def _next_seat(self, seat: int, step: int = 1) -> int:
        return (seat + step) % len(self.names)

    def _finish(self, winners: Sequence[int], evs: list[Event], *, loser: int | None = None,
                **changes: Any) -> Self:
        """The state with the game over, ``winners`` recorded and a ``win`` event."""
        w = tuple(winners)
        names = ", ".join(self.names[i] for i in w)
        if loser is not None:
            evs.append(ev("lose", self.names[loser], f"Game over: {self.names[loser]} loses",
                          f"Игра окончена: проигрывает {self.names[loser]}"))
        if len(w) == 1:
            evs.append(ev("win", names, f"{names} wins the game", f"{names} выигрывает игру"))
        elif w:
            evs.append(ev("win", names, f"Game over: shared victory of {names}",
                          f"Игра окончена: победу делят {names}"))
        return dataclasses.replace(self, over=True, winners=w, **changes)


# ----------------------------------------------------------------------------------------------
# Presets


@dataclass(frozen=True)
class GamePreset:
    """A named rule set of a games.md game, listed by ``kosti rules``.

    ``name``: preset name; ``cls``: the game class; ``params``: its parameters; ``dice``: dice per
    throw; ``target``: points (or round wins) to reach, None when the game ends otherwise;
    ``description`` / ``description_ru``: one line each, with every decision labelled;
    ``source``: ``games.md §N``; ``rules_en`` / ``rules_ru``: the rules page (paragraphs split by
    blank lines) shown on the dashboard."""

    name: str
    cls: type[TableGame[Any]]
    params: GameParams
    dice: int
    target: int | None
    description: str
    description_ru: str
    source: str
    rules_en: str
    rules_ru: str

    @property
    def game(self) -> str:
        """The game id (``"pig"``, …)."""
        return self.cls.game
