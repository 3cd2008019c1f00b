"""The values the game is made of: players, the turn, events, reasons, the log (rules.md §0.2, §3).

Frozen slot dataclasses and tuples, so that a :class:`~kosti.engine.game.GameState` is an
immutable value that serialises to JSON and restores exactly. :func:`replace` is the fast copier
every rule step uses; :class:`Log` the persistent replay log.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from .kinds import EventKind, TurnOutcome

_T = TypeVar("_T")

__all__ = ["Event", "KeepOption", "Log", "PlayerState", "Reason", "TurnState", "event", "replace"]


_REPLACERS: dict[type, Any] = {}


def _make_replacer(cls: type) -> Any:
    names = tuple(f.name for f in fields(cls))
    src = ["def rep(obj, kw):", "    new = _new(cls)"]
    for n in names:
        src.append(f"    _set(new, {n!r}, kw[{n!r}] if {n!r} in kw else obj.{n})")
    src.append("    return new")
    ns: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "cls": cls}
    exec("\n".join(src), ns)  # noqa: S102 - generated from the dataclass's own field names
    return ns["rep"]


def replace(obj: _T, **changes: Any) -> _T:
    """Fast ``dataclasses.replace`` for the engine's frozen slot dataclasses (no __post_init__):
    a per-class generated copier, several times faster than the generic one."""
    rep = _REPLACERS.get(obj.__class__)
    if rep is None:
        rep = _REPLACERS[obj.__class__] = _make_replacer(obj.__class__)
    out: _T = rep(obj, changes)
    return out


class Log(Sequence[str]):
    """The game log: an immutable, persistent sequence of English lines. Appending shares the
    existing lines (O(1)), so every :class:`GameState` can carry its whole history cheaply.
    Compares equal to any sequence with the same lines."""

    __slots__ = ("_flat", "_len", "_lines", "_parent")

    def __init__(self, lines: Iterable[str] = (), parent: Log | None = None) -> None:
        self._lines = tuple(lines)
        self._parent = parent if parent is not None and len(parent) else None
        self._len = len(self._lines) + (len(parent) if parent is not None else 0)
        self._flat: tuple[str, ...] | None = None if self._parent is not None else self._lines

    def extend(self, lines: Iterable[str]) -> Log:
        """A new log with ``lines`` appended."""
        return Log(lines, self)

    def lines(self) -> tuple[str, ...]:
        """All lines as a tuple."""
        if self._flat is None:
            chunks = []
            node: Log | None = self
            while node is not None and node._flat is None:
                chunks.append(node._lines)
                node = node._parent
            out: list[str] = list(node._flat or ()) if node is not None else []
            for c in reversed(chunks):
                out.extend(c)
            self._flat = tuple(out)
        return self._flat

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: Any) -> Any:
        return self.lines()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Log):
            return self._len == other._len and self.lines() == other.lines()
        if isinstance(other, (tuple, list)):
            return self.lines() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.lines())

    def __repr__(self) -> str:
        return f"Log({list(self.lines())!r})"


# ----------------------------------------------------------------------------------------------
# Events, reasons, allowed actions


@dataclass(frozen=True, slots=True)
class Reason:
    """A sentence for the players in English and Russian."""

    text_en: str
    text_ru: str

    def __str__(self) -> str:
        return self.text_en

    @classmethod
    def of(cls, text: tuple[str, str]) -> Reason:
        """A reason from a sentence of :mod:`kosti.engine.texts` (``(english, russian)``)."""
        return cls(text[0], text[1])

    @property
    def text(self) -> tuple[str, str]:
        """``(text_en, text_ru)``."""
        return self.text_en, self.text_ru


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for the score sheet, the dashboard and the replay log.

    ``kind``: an :class:`~kosti.engine.kinds.EventKind` (a ``str``; the table games of
    :mod:`kosti.engine.games` use kinds of their own). ``player`` is the player concerned,
    ``points`` the amount (points; negative for a penalty), ``faces`` the dice concerned,
    ``text_en`` / ``text_ru`` the sentence (:mod:`kosti.engine.texts`). ``outcome``: on the one
    event of an action that ends a turn, how it ended (:class:`~kosti.engine.kinds.TurnOutcome`:
    the event that triggered the end — the bust, the stop's record, the winning keep — else the
    first event of the turn's end); None on every other event.
    """

    kind: str
    player: str
    text_en: str
    text_ru: str
    points: int = 0
    faces: tuple[int, ...] = ()
    outcome: TurnOutcome | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form: ``{"kind", "player", "points", "faces", "text_en", "text_ru"}`` (plain
        strings), plus ``"outcome"`` on the event that ends a turn."""
        out = {"kind": str(self.kind), "player": self.player, "points": self.points,
               "faces": list(self.faces), "text_en": self.text_en, "text_ru": self.text_ru}
        if self.outcome is not None:
            out["outcome"] = str(self.outcome)
        return out


def event(kind: EventKind, player: str, text: tuple[str, str], points: int = 0,
          faces: tuple[int, ...] = ()) -> Event:
    """An :class:`Event` from a sentence of :mod:`kosti.engine.texts` (``(english, russian)``)."""
    return Event(kind, player, text[0], text[1], points, faces)


@dataclass(frozen=True, slots=True)
class KeepOption:
    """A legal keep of the last throw: the dice (sorted faces) and their value (points)."""

    faces: tuple[int, ...]
    points: int


# ----------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True, slots=True)
class PlayerState:
    """One player's record (points are recorded score, rules.md §0.2).

    ``opened``: passed the opening threshold (§3.1); ``admission_score``: score recorded on the
    opening turn (RU-B, used by the 850 barrel); ``bolts`` (§3.2); ``falls`` and
    ``barrel_attempts`` (§3.6); ``dots`` (open barrel); ``overshoots`` (§3.8 counter);
    ``skip_next``: will skip his next turn (§3.7); ``farkles``: busts in a row (§3.11);
    ``turns``: turns played or skipped (for ``equalize_turns``); ``seated``: sits on the barrel
    where the seat is a state (``Rules.seat_is_state``: points / final_range barrel with
    ``seat_score: entry``, rules.md 1.1 §3.6.2); unused by other barrels, whose seat follows
    from the score.
    """

    name: str
    score: int = 0
    opened: bool = False
    bolts: int = 0
    falls: int = 0
    barrel_attempts: int = 0
    dots: int = 0
    overshoots: int = 0
    skip_next: bool = False
    admission_score: int | None = None
    farkles: int = 0
    turns: int = 0
    seated: bool = False


@dataclass(frozen=True, slots=True)
class TurnState:
    """The turn in progress.

    ``player``: index of the mover; ``points``: turn points so far; ``dice``: dice to throw next;
    ``throws``: throws made this turn; ``scored``: a scoring keep was made this turn;
    ``pending``: faces of the last throw awaiting a :class:`Keep` (``at_least_one``), else None;
    ``last_roll`` / ``last_keep``: the latest throw and the dice set aside from it;
    ``hot``: all dice have scored and the next throw is of all dice (hot dice, §1.4);
    ``confirm``: that next throw is the confirmation throw (``confirm_and_bank``);
    ``retried``: the second attempt of §1.7.1 was used; ``extra``: an extra turn of §3.7;
    ``offer``: dice the previous player left unused, which may be thrown instead of all dice to
    play for the high-stakes bonus (F2 variant, 0 = no offer); ``stakes``: this turn plays for it.
    """

    player: int = 0
    points: int = 0
    dice: int = 5
    throws: int = 0
    scored: bool = False
    pending: tuple[int, ...] | None = None
    last_roll: tuple[int, ...] = ()
    last_keep: tuple[int, ...] = ()
    hot: bool = False
    confirm: bool = False
    retried: bool = False
    extra: bool = False
    offer: int = 0
    stakes: bool = False

