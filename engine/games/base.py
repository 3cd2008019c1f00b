"""The game interface shared by 1000/Farkle and the other dice games of ``games.md``.

Every game is an immutable value with the same surface, so that ``kosti replay``, ``kosti play``,
``kosti rules``, the dashboard and the live table host any game without special cases:

* ``game`` (class attribute): the game id of ``kosti rules --json`` (``"1000"``, ``"pig"``, …);
* ``to_move`` (name or None), ``over``, ``winner`` (name, list of names for a shared result, None),
  ``dice_to_throw`` (dice of the next :class:`~kosti.engine.game.Roll`; 0 when none is due);
* :meth:`Game.moves` → :class:`Moves`: what may be done now, with the reasons in English and
  Russian (``why_not_roll``, ``why_not_bank``, ``hint``) and the game's own ``choices``;
* :meth:`Game.apply` (action) → ``(new_state, events)``; raises
  :class:`~kosti.engine.errors.BadInput` (malformed: wrong dice count, face outside 1–6) or
  :class:`~kosti.engine.errors.RuleViolation` (forbidden now, with the reason in both languages);
* :meth:`Game.summary` (the ``kosti replay`` output), :meth:`Game.to_json` /
  :func:`kosti.engine.games.game_from_json` (exact round trip), ``rules_name``, ``params_dict``.

Actions are the replay events of ``../shared/docs/cli.md``: :class:`~kosti.engine.game.Roll`
(``{"roll": [faces]}``), :class:`~kosti.engine.game.Keep` (``{"keep": [faces]}``),
:class:`~kosti.engine.game.Bank` (``{"bank": true}``) and :class:`Choose` — a game's own choice
``{KEY: VALUE}`` where ``KEY`` is one of the game's ``CHOICES`` (documented in its description).

:class:`TableGame` is the common base of the games of ``games.md``: frozen dataclasses holding
``params`` (the preset's parameters), ``names``, ``scores`` (one int per seat), ``mover``, ``over``,
``winners``, ``log`` and the game's own fields (ints, strings, bools and tuples only), so that the
generic JSON form restores them exactly.
"""

from __future__ import annotations

import dataclasses
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Self, Sequence

from ..errors import BadInput, RuleViolation
from ..game import Bank, Event, Keep, KeepOption, Reason, Roll
from ..kinds import TurnOutcome
from ..names import check_player_names
from ..plurals import count_en, count_ru

__all__ = ["Choose", "ChoiceOption", "Moves", "OVER_MOVES", "Game", "TableGame", "GameParams", "GameAction",
           "SCORE_KINDS", "action_from_json", "action_to_json", "check_roll", "freeze", "thaw",
           "ev", "faces_text", "dice_en", "dice_ru", "sort_winners"]

#: Event kinds whose ``points`` change the recorded score of ``player`` by exactly that amount
#: (the games of games.md; the property tests check that scores change only through these).
SCORE_KINDS = frozenset({"score", "bank", "win_round", "dice_moved", "game_point_score",
                         "settle"})


@dataclass(frozen=True, slots=True)
class Choose:
    """A game's own choice: ``{key: value}`` in the replay format, ``key`` one of the game's
    ``CHOICES`` (e.g. Thirteen's ``{"op": "third"}``). ``value`` is a JSON value (lists become
    tuples, objects become sorted tuples of pairs, so actions compare and hash)."""

    key: str
    value: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", freeze(self.value))


GameAction = typing.Union[Roll, Keep, Bank, Choose]


@dataclass(frozen=True, slots=True)
class ChoiceOption:
    """One choice the mover may make now: ``{key: value}`` with its label in both languages."""

    key: str
    value: Any
    label_en: str
    label_ru: str

    def to_json(self) -> dict[str, Any]:
        """``{"key", "value", "label_en", "label_ru"}``."""
        return {"key": self.key, "value": thaw(self.value), "label_en": self.label_en,
                "label_ru": self.label_ru}


@dataclass(frozen=True, slots=True)
class Moves:
    """What the player to move may do now (the same attribute names as the 1000 engine's
    :class:`~kosti.engine.game.Allowed`, plus ``choices``).

    ``roll``: may throw ``dice`` dice (``dice_options``: every accepted count); ``keep`` /
    ``keeps``: a keep is pending (1000 family only); ``bank``: may stop ("хватит");
    ``why_not_roll`` / ``why_not_bank``: why not, in both languages; ``hint``: what to do now;
    ``choices``: the game's own choices open now; ``bank_label``: what "stop" means in this game.
    """

    roll: bool
    dice: int
    keep: bool
    bank: bool
    keeps: tuple[KeepOption, ...]
    why_not_roll: Reason | None
    why_not_bank: Reason | None
    hint: Reason
    dice_options: tuple[int, ...] = ()
    choices: tuple[ChoiceOption, ...] = ()
    bank_label: Reason = Reason("stop and record", "хватит, записать")


#: The moves of a finished game: nothing is allowed, and the reason says so.
OVER_MOVES = Moves(False, 0, False, False, (), Reason("the game is over", "игра окончена"),
                   Reason("the game is over", "игра окончена"), Reason("the game is over", "игра окончена"))


def freeze(value: Any) -> Any:
    """JSON value → hashable value: lists → tuples, objects → tuples of (key, value) pairs sorted
    by key (marked by a leading ``"__obj__"``)."""
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return ("__obj__",) + tuple((k, freeze(v)) for k, v in sorted(value.items()))
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`freeze`: tuples → lists, marked pair tuples → objects."""
    if isinstance(value, tuple):
        if value and value[0] == "__obj__":
            return {k: thaw(v) for k, v in value[1:]}
        return [thaw(v) for v in value]
    return value


def action_from_json(d: Any, choices: Sequence[str] = ()) -> GameAction:
    """Parse one replay event: ``{"roll": [faces]}``, ``{"keep": [faces]}``, ``{"bank": true}``
    or ``{KEY: VALUE}`` with ``KEY`` in ``choices``. Raises :class:`BadInput` for anything else."""
    if not isinstance(d, dict) or len(d) != 1:
        raise BadInput(f"an event must be one object with one key (roll, keep, bank"
                       f"{''.join(', ' + c for c in choices)}); got {d!r}")
    (key, value), = d.items()
    if key == "roll":
        if not isinstance(value, list):
            raise BadInput(f"'roll' must be a list of faces, got {value!r}")
        return Roll(tuple(value))
    if key == "keep":
        if not isinstance(value, list):
            raise BadInput(f"'keep' must be a list of faces, got {value!r}")
        return Keep(tuple(value))
    if key == "bank":
        if value is not True:
            raise BadInput(f"'bank' must be true, got {value!r}")
        return Bank()
    if key in choices:
        return Choose(key, value)
    raise BadInput(f"unknown event {key!r} (expected roll, keep, bank"
                   f"{''.join(', ' + c for c in choices)})")


def action_to_json(a: GameAction) -> dict[str, Any]:
    """The replay-event form of an action (inverse of :func:`action_from_json`)."""
    if isinstance(a, Roll):
        return {"roll": list(a.faces)}
    if isinstance(a, Keep):
        return {"keep": list(a.faces)}
    if isinstance(a, Choose):
        return {a.key: thaw(a.value)}
    return {"bank": True}


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


class Game(ABC):
    """The interface every hosted game implements (see the module docstring)."""

    #: Game id as in ``kosti rules --json`` (``"1000"``, ``"pig"``, …).
    game: ClassVar[str] = ""
    #: Keys of the game's own :class:`Choose` actions (replay events ``{KEY: VALUE}``).
    CHOICES: ClassVar[tuple[str, ...]] = ()
    #: Each of those events as ``(JSON example, what it is, the same in Russian)``.
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    #: The player may stop ("хватит", :class:`~kosti.engine.game.Bank`) at some point of this game; a game
    #: without a stop (Craps, Chicago, Aces …) shows no Stop button and takes no ``bank`` command.
    HAS_STOP: ClassVar[bool] = False

    @property
    def in_setup(self) -> bool:
        """The next throw is an order or set-up throw (Pig's and Aces' order throw, Buck dice's set-up and
        game-point throws), not a throw of a player's turn: the score sheet and the statistics do not count
        it as a turn. False by default."""
        return False

    @property
    def title(self) -> tuple[str, str]:
        """The game's human name, ``(English, Russian)``: "Pig" / «Свинья», "dice 1000" / «Тысяча на костях»
        (:mod:`kosti.engine.titles`)."""
        from ..titles import GAME_TITLES

        return GAME_TITLES.get(self.game, (self.game, self.game))

    @property
    @abstractmethod
    def to_move(self) -> str | None:
        """Name of the player to act, or None when the game is over."""

    @property
    @abstractmethod
    def over(self) -> bool:  # pragma: no cover - dataclass fields override
        """The game has ended."""

    @property
    @abstractmethod
    def winner(self) -> str | list[str] | None:
        """Winner's name; a list of names for a shared result; None while the game goes on."""

    @property
    @abstractmethod
    def dice_to_throw(self) -> int:
        """Dice of the next throw (0 when the game is over or no throw is due)."""

    @property
    @abstractmethod
    def rules_name(self) -> str:
        """The preset name (``"classic"``, ``"pig"``, …)."""

    @property
    @abstractmethod
    def player_names(self) -> tuple[str, ...]:
        """Names in seat order."""

    @abstractmethod
    def scores_list(self) -> tuple[int, ...]:
        """Recorded score per seat (the game's own unit: points, round wins, dice held …)."""

    @abstractmethod
    def moves(self) -> Moves:
        """What the player to move may do now, and why not."""

    @abstractmethod
    def apply(self, action: GameAction) -> tuple[Game, tuple[Event, ...]]:
        """Apply one action; returns ``(new_state, events)``; the receiver is unchanged."""

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The ``kosti replay`` output (cli.md)."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """Exact JSON form (restored by :func:`kosti.engine.games.game_from_json`)."""

    @property
    @abstractmethod
    def log(self) -> Sequence[str]:
        """English lines of everything that happened."""

    def roll_sizes(self) -> tuple[int, ...]:
        """Every dice count a :class:`Roll` may have now."""
        m = self.moves()
        return m.dice_options or ((m.dice,) if m.roll else ())

    def parse_action(self, d: Any) -> GameAction:
        """A replay event of this game (:func:`action_from_json` with its ``CHOICES``)."""
        return action_from_json(d, self.CHOICES)


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
    def from_dict(cls, d: Mapping[str, Any]) -> GameParams:
        """Parameters from a dict written by :meth:`to_dict`; raises :class:`BadInput` naming an
        unknown parameter."""
        known = {f.name for f in dataclasses.fields(cls)}
        for k in d:
            if k not in known:
                raise BadInput(f"unknown parameter {k!r} (known: {', '.join(sorted(known))})")
        return cls(**dict(d))

    def with_overrides(self, overrides: Mapping[str, Any]) -> GameParams:
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


@dataclass(frozen=True)
class TableGame(Game):
    """Common state of the games of games.md (see the module docstring).

    ``params``: the preset's parameters; ``names``: players in seat order (the turn passes to the
    left = the next seat); ``scores``: recorded score per seat (the game's unit); ``mover``: seat
    of the player to act; ``over``; ``winners``: seats of the winner(s); ``log``: English lines.
    Subclasses add their own fields, all with defaults, of JSON-friendly immutable types.
    """

    params: GameParams
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
    def start(cls, params: GameParams, players: Sequence[str],
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
    def from_json(cls, d: Mapping[str, Any]) -> TableGame:
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

    def apply(self, action: GameAction) -> tuple[TableGame, tuple[Event, ...]]:
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

    def random_choice(self, rng: Any) -> Choose | None:
        """A legal choice for random play (tests, the demo), or None when the game needs none now. Games whose
        choices take a free value (a bet, a claim) override it; ``rng`` is a ``random.Random``."""
        opts = [c for c in self.moves().choices if c.value is not None]
        if not opts:
            return None
        o = opts[rng.randrange(len(opts))]
        return Choose(o.key, o.value)

    # -- hooks ---------------------------------------------------------------------------------
    @abstractmethod
    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> TableGame:
        """Apply a throw of the right size (already checked)."""

    def _bank(self, evs: list[Event]) -> TableGame:
        raise RuleViolation("this game has no stopping", "в этой игре не останавливаются")

    def _keep(self, faces: tuple[int, ...], evs: list[Event]) -> TableGame:
        raise RuleViolation(f"{self.params.name} has no setting aside of chosen dice: the "
                            f"rules decide what happens to every die",
                            f"в игре {self.params.name} кости не откладывают по выбору: "
                            f"судьбу каждой кости решают правила")

    def _choose(self, key: str, value: Any, evs: list[Event]) -> TableGame:
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
    cls: type[TableGame]
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
