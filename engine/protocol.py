"""The game protocol: the one surface every hosted game implements (1000 and the games of games.md alike).

Every game is an immutable value with the same surface, so that ``kosti replay``, ``kosti play``,
``kosti rules``, the dashboard and the live table host any game without special cases:

* ``game`` (class attribute): the game id of ``kosti rules --json`` (``"1000"``, ``"pig"``, …);
* ``to_move`` (name or None), ``over``, ``winner`` (name, list of names for a shared result, None),
  ``dice_to_throw`` (dice of the next :class:`~kosti.engine.actions.Roll`; 0 when none is due);
* :meth:`Game.moves` → :class:`Moves`: what may be done now, with the reasons in English and
  Russian (``why_not_roll``, ``why_not_bank``, ``hint``) and the game's own ``choices``;
* :meth:`Game.apply` (action) → ``(new_state, events)``; raises
  :class:`~kosti.engine.errors.BadInput` (malformed: wrong dice count, face outside 1–6) or
  :class:`~kosti.engine.errors.RuleViolation` (forbidden now, with the reason in both languages);
* :meth:`Game.summary` (the ``kosti replay`` output), :meth:`Game.to_json` /
  :func:`kosti.engine.games.game_from_json` (exact round trip), ``rules_name``.

Actions are the replay events of ``../shared/docs/cli.md``: :class:`~kosti.engine.actions.Roll`
(``{"roll": [faces]}``), :class:`~kosti.engine.actions.Keep` (``{"keep": [faces]}``),
:class:`~kosti.engine.actions.Bank` (``{"bank": true}``) and :class:`Choose` — a game's own choice
``{KEY: VALUE}`` where ``KEY`` is one of the game's ``CHOICES`` (documented in its description).

Implementations: :class:`kosti.engine.game.GameState` (the 1000 family) and
:class:`kosti.engine.games.base.TableGame` (the games of games.md); the registry from a name to its
game is :mod:`kosti.engine.games` (:func:`~kosti.engine.games.find_game`).
"""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from .actions import Bank, Keep, Roll
from .errors import BadInput
from .records import Event, KeepOption, Reason

__all__ = ["Choose", "ChoiceOption", "Moves", "OVER_MOVES", "Game", "GameAction", "action_from_json",
           "action_to_json", "freeze", "thaw"]

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
    """What the player to move may do now, in every game (the 1000 family fills no ``choices``).

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




class Game(ABC):
    """The interface every hosted game implements (see the module docstring)."""

    __slots__ = ()

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
        from .titles import GAME_TITLES

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

    def random_choice(self, rng: Any) -> Choose | None:
        """A legal choice for random play (tests, the demo, ``benchmarks/engine_digest.py``), or None when the
        game needs none now (never for the 1000 family: it has no own choices). Games whose choices take a free
        value (a bet, a claim) override it; ``rng`` is a ``random.Random``, used only when there is a choice."""
        opts = [c for c in self.moves().choices if c.value is not None]
        if not opts:
            return None
        o = opts[rng.randrange(len(opts))]
        return Choose(o.key, o.value)
