"""The turn / game state machine of 1000 (Тысяча), Farkle and 10000 (rules.md §1, §3, §3.13, §7).

The game state is a plain immutable value: :class:`GameState` (frozen dataclasses and tuples) that
serialises to JSON and restores exactly (:meth:`GameState.to_json` / :meth:`GameState.from_json`).
Play is a pure function::

    state = new_game("classic", ["Ann", "Boris"])
    state, events = state.apply(Roll((1, 5, 3, 3, 4)))   # throw the dice the state asks for
    state.allowed()                                       # what may be done now, and why not
    state, events = state.apply(Bank())                   # "хватит": stop and record

Actions: :class:`Roll` (the faces of one throw of exactly ``state.dice_to_throw`` dice),
:class:`Keep` (which scoring dice to set aside — only where ``selection.set_aside`` is
``at_least_one``; otherwise the best keep is set aside automatically) and :class:`Bank`.
Busts, forced ends (dump truck, overshoot, dot), hot-dice obligations, the second attempt and
passing the turn follow from the rules with no action. Each step returns small :class:`Event`
values carrying English and Russian text (``text_en`` / ``text_ru``) for the score sheet.

Errors: a roll of the wrong number of dice or a face outside 1–6 raises
:class:`~kosti.engine.errors.BadInput`; an action the rules forbid raises
:class:`~kosti.engine.errors.RuleViolation` whose message says why in the players' words.

Order of resolution after each scoring throw and after the turn ends: rules.md §3.13. Every
RECOMMENDED decision of rules.md §6 is followed. Where the spec is silent this module decides:

* keep phase (``selection.set_aside = at_least_one``): after a scoring throw the state waits for a
  :class:`Keep`; a :class:`Bank` takes the best keep; a :class:`Roll` of k dice takes the best legal
  keep that leaves k dice (so a camera that only sees throws still scores correctly). Both go
  through one place (:func:`_take_implied_keep`): the keep is made exactly as a :class:`Keep`
  would make it, with every mid-turn check; if that keep ends the turn (a win, an overshoot, a
  dump truck) the stop or the throw has nothing left to act on, otherwise the stop or the throw
  follows as on its own — so a stop that sets aside the last die and wins is a win, not a
  "throw all five again";
* a confirmation throw (``confirm_and_bank``) records the turn when stopping is allowed; when it is
  not (opening not reached, standing on the 850 barrel short of 150, a pit exit) the turn passes
  with nothing recorded (``confirm_below_minimum: lose``, rules.md 1.1 §6.5d) or continues with
  the dice left (``continue``, rules.md 1.0);
* an instant win records the turn points and ends the game;
* the fall that drops a player to 0 (``barrel.max_falls``) starts a fresh count of falls;
* a skipped turn (§3.7) counts as a turn for ``equalize_turns`` but is not a zero turn;
* at most one bolt per turn, whatever the triggers.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

from .errors import BadInput, RuleViolation
from .rules import Rules, rules_1_0
from .scoring import legal_keeps, score_keep, score_throw

__all__ = [
    "Roll", "Keep", "Bank", "Action", "action_from_json", "action_to_json",
    "Reason", "Event", "KeepOption", "Allowed", "PlayerState", "TurnState", "GameState", "Log",
    "new_game", "first_player", "seat_order",
]

#: The saved-game format written by :meth:`GameState.to_json`. Version 2 came with rules.md 1.1
#: (new rule parameters, ``PlayerState.seated``); version 1 games load with their 1.0 rules.
GAME_FORMAT = "kosti-game/2"
_GAME_FORMAT_1_0 = "kosti-game/1"

# ----------------------------------------------------------------------------------------------
# Actions


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


def replace(obj: Any, **changes: Any) -> Any:
    """Fast ``dataclasses.replace`` for the engine's frozen slot dataclasses (no __post_init__):
    a per-class generated copier, several times faster than the generic one."""
    rep = _REPLACERS.get(obj.__class__)
    if rep is None:
        rep = _REPLACERS[obj.__class__] = _make_replacer(obj.__class__)
    return rep(obj, changes)


class Log(Sequence[str]):
    """The game log: an immutable, persistent sequence of English lines. Appending shares the
    existing lines (O(1)), so every :class:`GameState` can carry its whole history cheaply.
    Compares equal to any sequence with the same lines."""

    __slots__ = ("_parent", "_lines", "_len", "_flat")

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
            out: list[str] = list(node._flat) if node is not None else []
            for c in reversed(chunks):
                out.extend(c)
            self._flat = tuple(out)
        return self._flat

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i):  # type: ignore[override]
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



def _faces_tuple(faces: Any) -> tuple[int, ...]:
    if isinstance(faces, (str, bytes)) or not isinstance(faces, Iterable):
        raise BadInput(f"faces must be a list of integers 1-6, got {faces!r}")
    out = []
    for f in faces:
        if isinstance(f, bool) or not isinstance(f, int):
            raise BadInput(f"a face must be an integer 1-6, got {f!r}")
        if f < 1 or f > 6:
            raise BadInput(f"a face must be 1-6, got {f}")
        out.append(f)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Roll:
    """One throw: the faces (1–6) of exactly ``GameState.dice_to_throw`` dice, in any order."""

    faces: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", _faces_tuple(self.faces))


@dataclass(frozen=True, slots=True)
class Keep:
    """Set aside these scoring dice (faces) from the last throw (``at_least_one`` presets)."""

    faces: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", _faces_tuple(self.faces))


@dataclass(frozen=True, slots=True)
class Bank:
    """Stop ("хватит") and record the turn points."""


Action = Union[Roll, Keep, Bank]


def action_from_json(d: Any) -> Action:
    """Parse a replay event: ``{"roll": [faces]}``, ``{"keep": [faces]}`` or ``{"bank": true}``
    (cli.md). Raises :class:`BadInput` for anything else."""
    if not isinstance(d, dict) or len(d) != 1:
        raise BadInput(f"an event must be one of {{'roll': [...]}}, {{'keep': [...]}}, "
                       f"{{'bank': true}}; got {d!r}")
    (key, value), = d.items()
    if key == "roll":
        return Roll(value)
    if key == "keep":
        return Keep(value)
    if key == "bank":
        if value is not True:
            raise BadInput(f"'bank' must be true, got {value!r}")
        return Bank()
    raise BadInput(f"unknown event {key!r} (expected roll, keep or bank)")


def action_to_json(a: Action) -> dict[str, Any]:
    """The replay-event form of an action (inverse of :func:`action_from_json`)."""
    if isinstance(a, Roll):
        return {"roll": list(a.faces)}
    if isinstance(a, Keep):
        return {"keep": list(a.faces)}
    return {"bank": True}


# ----------------------------------------------------------------------------------------------
# Events, reasons, allowed actions


@dataclass(frozen=True, slots=True)
class Reason:
    """A sentence for the players in English and Russian."""

    text_en: str
    text_ru: str

    def __str__(self) -> str:
        return self.text_en


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for the score sheet, the dashboard and the replay log.

    ``kind`` is one of: ``throw``, ``keep``, ``bust``, ``retry``, ``hot_dice``, ``confirmation``,
    ``bank``, ``opened``, ``capped``, ``dump_truck``, ``overshoot``, ``dot``, ``transfer``,
    ``fall``, ``knocked_off``, ``overtaken``, ``bolt``, ``bolt_penalty``, ``three_farkles``,
    ``toxic_twos``, ``skip_turn``, ``extra_turn``, ``barrel``, ``pit``, ``instant_win``,
    ``final_round``, ``win``, ``turn``, ``high_stakes``. ``player`` is the player concerned, ``points`` the amount
    (points; negative for a penalty), ``faces`` the dice concerned.
    """

    kind: str
    player: str
    text_en: str
    text_ru: str
    points: int = 0
    faces: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form: ``{"kind", "player", "points", "faces", "text_en", "text_ru"}``."""
        return {"kind": self.kind, "player": self.player, "points": self.points,
                "faces": list(self.faces), "text_en": self.text_en, "text_ru": self.text_ru}


@dataclass(frozen=True, slots=True)
class KeepOption:
    """A legal keep of the last throw: the dice (sorted faces) and their value (points)."""

    faces: tuple[int, ...]
    points: int


@dataclass(frozen=True, slots=True)
class Allowed:
    """What the player to move may do now (:meth:`GameState.allowed`).

    ``roll``: may throw, ``dice`` dice. ``keep``: must/may choose which scoring dice to set aside
    from ``keeps`` (the throw is pending). ``bank``: may stop and record. ``why_not_roll`` /
    ``why_not_bank`` say why an action is forbidden; ``hint`` says what to do now.
    ``dice_options``: every dice count a roll may have now (see :meth:`GameState.roll_sizes`).
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


_NUM_EN = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
_NUM_RU = {1: "одну", 2: "две", 3: "три", 4: "четыре", 5: "пять", 6: "шесть"}


def _dice_en(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


def _fmt(faces: Sequence[int]) -> str:
    return " ".join(str(f) for f in faces)


def _ev(kind: str, player: str, en: str, ru: str, points: int = 0,
        faces: tuple[int, ...] = ()) -> Event:
    return Event(kind, player, en, ru, points, faces)


def _score(faces: tuple[int, ...], rules: Rules) -> Any:
    """Best keep of one throw (:func:`kosti.engine.scoring.score_throw`, precomputed lookup)."""
    return score_throw(faces, rules.scoring)


def _keep_points(kept: tuple[int, ...], throw: tuple[int, ...], rules: Rules) -> int:
    """Value of the kept dice of ``throw``; raises IllegalKeep (a RuleViolation) for dead dice."""
    return score_keep(kept, rules.scoring, throw=throw).points


def _keep_options(faces: tuple[int, ...], rules: Rules) -> tuple[KeepOption, ...]:
    """Every legal keep of a throw, best first (more points, then more dice)."""
    return tuple(KeepOption(tuple(k.scoring_dice), k.points)
                 for k in legal_keeps(faces, rules.scoring))


@dataclass(frozen=True, slots=True)
class GameState:
    """The whole game as an immutable value (see module docstring).

    ``rules``: the rule set; ``players``: per-player records in seat order; ``turn``: the turn in
    progress (its ``player`` is the mover); ``over``: the game has ended; ``winners``: indices of
    the winner(s) (a tie after a final round is a shared victory, rules.md §6.40);
    ``final_round``: indices of players still owed a final-round turn (Farkle), or None;
    ``log``: English lines of everything that happened (the replay log).
    """

    rules: Rules
    players: tuple[PlayerState, ...]
    turn: TurnState
    over: bool = False
    winners: tuple[int, ...] = ()
    final_round: tuple[int, ...] | None = None
    log: Log = Log()

    # -- queries -------------------------------------------------------------------------------
    @property
    def to_move(self) -> str | None:
        """Name of the player to move, or None when the game is over."""
        return None if self.over else self.players[self.turn.player].name

    @property
    def dice_to_throw(self) -> int:
        """How many dice the next :class:`Roll` must contain (0 when the game is over). While a
        throw awaits its keep (``phase == "keep"``) this is the count left by the best keep; a
        roll of any count in :meth:`roll_sizes` is accepted then."""
        if self.over:
            return 0
        t = self.turn
        if t.pending is not None:
            best = _keep_options(t.pending, self.rules)[0]
            return t.dice - len(best.faces) or self.rules.dice_count
        return t.dice

    def roll_sizes(self) -> tuple[int, ...]:
        """Every dice count a :class:`Roll` may have now, ascending (one value outside the keep
        phase; in the keep phase one per distinct legal keep size — throwing k dice means the
        best legal keep that leaves k dice was set aside)."""
        if self.over:
            return ()
        t = self.turn
        if t.pending is None:
            if t.offer and t.throws == 0:
                return tuple(sorted({t.dice, t.offer}))
            return (t.dice,)
        n = self.rules.dice_count
        return tuple(sorted({t.dice - len(k.faces) or n
                             for k in _keep_options(t.pending, self.rules)}))

    @property
    def winner(self) -> str | list[str] | None:
        """The winner's name; a list of names for a shared victory; None while the game goes on."""
        if not self.winners:
            return None
        names = [self.players[i].name for i in self.winners]
        return names[0] if len(names) == 1 else names

    @property
    def phase(self) -> str:
        """``"over"``, ``"keep"`` (a throw awaits its keep) or ``"roll"``."""
        if self.over:
            return "over"
        return "keep" if self.turn.pending is not None else "roll"

    @property
    def turn_points(self) -> int:
        """Points of the turn in progress (not yet recorded)."""
        return self.turn.points

    def player(self, name: str) -> PlayerState:
        """The record of the player called ``name``; KeyError if there is none."""
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    def teams(self) -> tuple[tuple[int, ...], ...]:
        """Player indices per team (``team_play``, F2: partners sit opposite); one team per
        player when team play is off."""
        return _teams(self.rules, len(self.players))

    def team_score(self, index: int) -> int:
        """Summed recorded score of player ``index``'s team (his own score without team play)."""
        for team in self.teams():
            if index in team:
                return sum(self.players[i].score for i in team)
        raise IndexError(index)

    def in_pit(self, index: int) -> bool:
        """True if player ``index``'s recorded score lies inside a pit (§3.3)."""
        return self.rules.pit_of(self.players[index].score) is not None

    def on_barrel(self, index: int) -> bool:
        """True if player ``index`` sits on a seat-type barrel (§3.6; the seat is his state where
        ``Rules.seat_is_state``, else his score's range)."""
        return _seated(self.rules, self.players[index])

    def barrel_need(self, index: int) -> int | None:
        """Turn points (in one turn) player ``index`` needs to win from the barrel he sits on
        (RU-A: 120 from 880; RU-B: 150 from 850), or None when he does not sit on one."""
        if not self.on_barrel(index):
            return None
        return _barrel_need(self.rules, self.players[index].score)

    def barrel_status(self, index: int) -> Reason | None:
        """The scoreboard's barrel line for player ``index`` in English and Russian — e.g.
        "on the barrel, needs 120 in one turn (attempts used: 1 of 3)" / "на бочке, нужно 120 за
        один ход (использовано попыток: 1 из 3)" — or None when he does not sit on a barrel."""
        need = self.barrel_need(index)
        if need is None:
            return None
        b = self.rules.barrel
        p = self.players[index]
        en, ru = f"on the barrel, needs {need} in one turn", f"на бочке, нужно {need} за один ход"
        if b.kind != "capped" and b.attempts is not None and not b.attempts_are_bolts:
            en += f" (attempts used: {p.barrel_attempts} of {b.attempts})"
            ru += f" (использовано попыток: {p.barrel_attempts} из {b.attempts})"
        return Reason(en, ru)

    def stop_reason(self) -> Reason | None:
        """Why the mover may not stop now (None if he may), rules.md §1.6. While a throw awaits
        its keep, a stop sets aside the best keep first (:func:`_take_implied_keep`): the answer is
        that of the state after the keep, and None when the keep itself ends the turn."""
        if self.over:
            return Reason("the game is over", "игра окончена")
        t = self.turn
        if t.pending is not None:
            best = _keep_options(t.pending, self.rules)[0]
            after, goes_on = _take_implied_keep(self, best.faces, [])
            return after.stop_reason() if goes_on else None
        return _stop_block(self, t.points, ignore_hot=False)

    def allowed(self) -> Allowed:
        """What the player to move may do now, and why not (see :class:`Allowed`)."""
        r = self.rules
        t = self.turn
        if self.over:
            why = Reason("the game is over", "игра окончена")
            return Allowed(False, 0, False, False, (), why, why, why)
        n = r.dice_count
        if t.pending is not None:
            keeps = _keep_options(t.pending, r)
            best = keeps[0]
            hint = Reason(
                f"set aside at least one scoring die (best: {_fmt(best.faces)} = {best.points}), "
                f"then throw again or stop",
                f"отложите хотя бы одну зачётную кость (лучше всего: {_fmt(best.faces)} = "
                f"{best.points}), затем бросайте дальше или скажите «хватит»")
            # Roll / Bank are accepted too: a Bank takes the best keep first; a Roll of k dice
            # takes the best keep that leaves k dice (the best keep overall if k matches it).
            why_bank = self.stop_reason()
            left = t.dice - len(best.faces) or n
            sizes = tuple(sorted({t.dice - len(k.faces) or n for k in keeps}))
            return Allowed(True, left, True, why_bank is None, keeps, None, why_bank, hint, sizes)
        why_bank = self.stop_reason()
        if not t.scored and t.points == 0 and t.throws == 0:
            hint = Reason(f"{self.to_move}: throw {_NUM_EN[t.dice]} dice",
                          f"{self.to_move}: бросайте {_NUM_RU[t.dice]} "
                          f"{'кости' if t.dice < 5 else 'костей'}")
            seat = self.barrel_status(t.player)
            if seat is not None:  # "A: throw five dice — on the barrel, needs 120 in one turn …"
                hint = Reason(f"{hint.text_en} — {seat.text_en}", f"{hint.text_ru} — {seat.text_ru}")
        elif t.hot and t.confirm:
            hint = Reason(f"all dice have scored: you must make the confirmation throw of all {_NUM_EN[n]}",
                          f"все кости зачётные: обязателен бросок подтверждения всеми {n} костями")
            short = _stop_block(self, t.points, ignore_hot=True)
            if short is not None and r.confirm_below_minimum == "lose":
                hint = Reason(f"{hint.text_en}; the turn is short ({short.text_en}), so even a "
                              f"confirmed turn records nothing",
                              f"{hint.text_ru}; очков хода мало ({short.text_ru}), поэтому даже "
                              f"подтверждённый ход ничего не запишет")
        elif t.hot and why_bank is not None and r.hot_dice == "must_roll":
            hint = Reason(f"hot dice: you must throw all {_NUM_EN[n]} again",
                          f"все кости сыграли: нужно снова бросить все {_NUM_RU[n]}")
        elif why_bank is None:
            hint = Reason(f"throw {_dice_en(t.dice)} or stop and record {t.points}",
                          f"бросайте {t.dice} или скажите «хватит» и запишите {t.points}")
        else:
            hint = Reason(f"throw {_dice_en(t.dice)} ({why_bank.text_en})",
                          f"бросайте {t.dice} ({why_bank.text_ru})")
        return Allowed(True, t.dice, False, why_bank is None, (), None, why_bank, hint,
                       self.roll_sizes())

    # -- the one mutator ----------------------------------------------------------------------
    def apply(self, action: Action) -> tuple[GameState, tuple[Event, ...]]:
        """Apply one action; returns ``(new_state, events)``. The receiver is unchanged.

        Raises :class:`BadInput` (wrong dice count, bad faces, keeping dice that were not thrown)
        or :class:`RuleViolation` (an action the rules forbid now, with the reason)."""
        if self.over:
            raise RuleViolation("the game is over", "игра окончена")
        ev: list[Event] = []
        if isinstance(action, Roll):
            st = self
            if st.turn.pending is not None:
                st, goes_on = _take_implied_keep(st, _implied_keep(st, len(action.faces)), ev)
                if not goes_on:  # the keep itself ended the turn: the throw does not count
                    return _with_log(st, ev), tuple(ev)
            st = _roll(st, action.faces, ev)
        elif isinstance(action, Keep):
            st = self
            if st.turn.pending is None:
                if (st.turn.last_keep and sorted(action.faces) == sorted(st.turn.last_keep)
                        and st.turn.scored):
                    return st, ()  # confirming the automatic keep: nothing to do
                if st.rules.selection.set_aside == "all_scoring" and st.turn.last_keep:
                    raise RuleViolation(
                        f"all scoring dice ({_fmt(st.turn.last_keep)}) are set aside "
                        f"automatically in these rules",
                        f"в этих правилах все зачётные кости ({_fmt(st.turn.last_keep)}) "
                        f"откладываются автоматически")
                raise RuleViolation("there is no throw to set dice aside from",
                                    "нет броска, из которого можно отложить кости")
            st = _keep(st, action.faces, ev)
        elif isinstance(action, Bank):
            st = self
            if st.turn.pending is not None:
                best = _keep_options(st.turn.pending, st.rules)[0]
                st, goes_on = _take_implied_keep(st, best.faces, ev)
                if not goes_on:  # the keep itself ended the turn (a win, an overshoot, …)
                    return _with_log(st, ev), tuple(ev)
            st = _bank(st, ev)
        else:
            raise BadInput(f"unknown action {action!r}")
        return _with_log(st, ev), tuple(ev)

    def apply_all(self, actions: Iterable[Action]) -> tuple[GameState, tuple[Event, ...]]:
        """Apply actions in order; returns the final state and all events."""
        st = self
        out: list[Event] = []
        for a in actions:
            st, ev = st.apply(a)
            out.extend(ev)
        return st, tuple(out)

    # -- output --------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The ``kosti replay`` output dict of cli.md: rules, winner, to_move, players, turn, log."""
        players = []
        for i, p in enumerate(self.players):
            players.append({
                "name": p.name, "score": p.score, "opened": p.opened, "bolts": p.bolts,
                "in_pit": self.in_pit(i), "on_barrel": self.on_barrel(i),
                "barrel_attempts": p.barrel_attempts, "falls": p.falls, "dots": p.dots,
                "overshoots": p.overshoots, "skip_next": p.skip_next,
            })
        return {
            "rules": self.rules.name,
            "winner": self.winner,
            "to_move": self.to_move,
            "players": players,
            "turn": {"player": self.to_move, "turn_points": 0 if self.over else self.turn.points,
                     "dice_to_throw": self.dice_to_throw},
            "log": list(self.log),
        }

    def to_json(self) -> dict[str, Any]:
        """Exact JSON form of the state (restored by :meth:`from_json`)."""
        return {
            "format": GAME_FORMAT,
            "rules": self.rules.to_dict(),
            "players": [_dc_json(p) for p in self.players],
            "turn": _dc_json(self.turn),
            "over": self.over,
            "winners": list(self.winners),
            "final_round": None if self.final_round is None else list(self.final_round),
            "log": list(self.log),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GameState:
        """Restore a state written by :meth:`to_json`. Raises :class:`BadInput` if malformed.

        A game saved before rules.md 1.1 (format ``kosti-game/1``) keeps the rules it was saved
        with: the parameters 1.1 added take their 1.0 values (:func:`kosti.engine.rules.rules_1_0`),
        so a sitter at 890 stays on the barrel and play goes on exactly as it would have."""
        try:
            fmt = d.get("format", _GAME_FORMAT_1_0)
            if fmt not in (GAME_FORMAT, _GAME_FORMAT_1_0):
                raise BadInput(f"not a saved kosti game: unknown format {fmt!r} (this version "
                               f"reads {_GAME_FORMAT_1_0} and {GAME_FORMAT})")
            raw_rules = d["rules"]
            if fmt == _GAME_FORMAT_1_0 and isinstance(raw_rules, dict):
                raw_rules = rules_1_0(raw_rules)
            rules = Rules.from_dict(raw_rules)
            players = tuple(PlayerState(**p) for p in d["players"])
            tj = dict(d["turn"])
            for k in ("pending",):
                if tj.get(k) is not None:
                    tj[k] = tuple(tj[k])
            for k in ("last_roll", "last_keep"):
                tj[k] = tuple(tj.get(k, ()))
            turn = TurnState(**tj)
            fr = d.get("final_round")
            state = cls(rules=rules, players=players, turn=turn, over=bool(d.get("over", False)),
                        winners=tuple(d.get("winners", ())),
                        final_round=None if fr is None else tuple(fr),
                        log=Log(d.get("log", ())))
        except BadInput:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"not a saved kosti game: {exc}") from None
        _check_state(state)
        return state


def _check_state(st: GameState) -> None:
    """Type and range checks of a restored state; raises :class:`BadInput`."""
    def bad(msg: str) -> BadInput:
        return BadInput(f"not a valid saved game: {msg}")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    n = len(st.players)
    if n == 0 or len({p.name for p in st.players}) != n:
        raise bad("players must be a non-empty list with unique names")
    for p in st.players:
        if not isinstance(p.name, str):
            raise bad(f"player name {p.name!r}")
        for f in ("score", "bolts", "falls", "barrel_attempts", "dots", "overshoots",
                  "farkles", "turns"):
            if not is_int(getattr(p, f)):
                raise bad(f"{p.name}.{f} = {getattr(p, f)!r} is not an integer")
        for f in ("opened", "skip_next", "seated"):
            if not isinstance(getattr(p, f), bool):
                raise bad(f"{p.name}.{f} is not true/false")
    t = st.turn
    if not (is_int(t.player) and 0 <= t.player < n):
        raise bad(f"turn.player {t.player!r} out of range")
    if not (is_int(t.dice) and 1 <= t.dice <= st.rules.dice_count):
        raise bad(f"turn.dice {t.dice!r} out of range")
    if not is_int(t.points) or t.points < 0:
        raise bad(f"turn.points {t.points!r}")
    for faces in (t.pending or (), t.last_roll, t.last_keep):
        if any(not is_int(f) or not 1 <= f <= 6 for f in faces):
            raise bad(f"faces {faces!r}")
    if any(not is_int(i) or not 0 <= i < n for i in st.winners + (st.final_round or ())):
        raise bad("winners / final_round hold an unknown player index")


def _dc_json(obj: Any) -> dict[str, Any]:
    out = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def _with_log(st: GameState, ev: list[Event]) -> GameState:
    if not ev:
        return st
    log = st.log if isinstance(st.log, Log) else Log(st.log)
    return replace(st, log=log.extend(e.text_en for e in ev))


# ----------------------------------------------------------------------------------------------
# Stop constraints (rules.md §1.6)


def _seated(r: Rules, p: PlayerState) -> bool:
    """True if player ``p`` sits on a seat-type barrel: his ``seated`` state where
    ``Rules.seat_is_state`` (rules.md 1.1 §3.6.2; a fine that takes him below the entry ends it),
    else his recorded score's range (:meth:`Rules.on_barrel`)."""
    if r.seat_is_state:
        return p.seated and r.barrel.entry <= p.score < r.barrel_target
    return r.on_barrel(p.score)


def _stop_block(st: GameState, points: int, *, ignore_hot: bool) -> Reason | None:
    """Why the mover may not stop with ``points`` turn points (None = he may), rules.md §1.6;
    ``ignore_hot`` leaves out the hot-dice obligation (the confirmation throw's own check, the
    exact-ending win of §3.13 step 4)."""
    r = st.rules
    t = st.turn
    p = st.players[t.player]
    n = r.dice_count
    if not t.scored:
        return Reason("nothing to record yet: throw the dice first",
                      "записывать нечего: сначала бросьте кости")
    if t.hot and not ignore_hot:
        if r.hot_dice == "must_roll":
            return Reason(f"hot dice: you must throw all {_NUM_EN[n]} again",
                          f"все кости сыграли: нужно снова бросить все {_NUM_RU[n]}")
        if r.hot_dice == "confirm_and_bank":
            return Reason(f"all dice have scored: the confirmation throw of all {_NUM_EN[n]} "
                          f"must be made", f"все кости сыграли: нужен бросок подтверждения "
                          f"всеми {n} костями")
    running = p.score + points
    thr = r.opening.threshold
    if not p.opened and points < thr:
        return Reason(f"needs {thr - points} more to open the game (opening {thr})",
                      f"нужно ещё {thr - points}, чтобы открыть игру (вход {thr})")
    pit = r.pit_of(p.score)
    if pit is not None:
        ex = pit.exit_value(r.unit)
        if running < ex:
            return Reason(f"needs {ex - running} more to leave the pit ({pit.lo}–{pit.hi})",
                          f"нужно ещё {ex - running}, чтобы выбраться из ямы ({pit.lo}–{pit.hi})")
    if _seated(r, p) and not _barrel_win(r, p.score, running):
        total = _barrel_need(r, p.score)
        need = total - points
        return Reason(f"needs {need} more: on the barrel you need {total} in one turn and may "
                      f"stop only with a win",
                      f"нужно ещё {need}: на бочке нужно {total} за один ход, остановиться "
                      f"можно только победой")
    if r.ending.mode == "strictly_above" and running == r.target:
        return Reason(f"you may not stop on exactly {r.target}: go above it",
                      f"нельзя остановиться ровно на {r.target}: нужно больше")
    return None


def _barrel_win(r: Rules, score: int, running: int) -> bool:
    """True if a running total wins from the barrel: reaches the barrel target (RU-A, ID-A,
    ID-D, RU-B), or passes it where ``ending.mode`` is ``strictly_above`` (RU-A "1005", §6.30)."""
    tgt = r.barrel_target
    if r.barrel.kind != "capped" and r.ending.mode == "strictly_above":
        return running > tgt
    return running >= tgt


def _barrel_need(r: Rules, score: int) -> int:
    """Turn points needed to win from the barrel at ``score``."""
    tgt = r.barrel_target
    if r.barrel.kind != "capped" and r.ending.mode == "strictly_above":
        return tgt + r.unit - score
    return tgt - score


def _teams(r: Rules, n: int) -> tuple[tuple[int, ...], ...]:
    if not r.team_play.enabled:
        return tuple((i,) for i in range(n))
    k = n // r.team_play.size
    return tuple(tuple(range(j, n, k)) for j in range(k))


def _team_of(r: Rules, n: int, i: int) -> tuple[int, ...]:
    if not r.team_play.enabled:
        return (i,)
    k = n // r.team_play.size
    return tuple(range(i % k, n, k))


def _partners_score(st: GameState, i: int) -> int:
    """Recorded points of player ``i``'s partners (0 without team play)."""
    if not st.rules.team_play.enabled:
        return 0
    return sum(st.players[j].score for j in _team_of(st.rules, len(st.players), i) if j != i)


def _may_win_now(st: GameState, running: int, points: int) -> bool:
    """Mid-turn win check (rules.md 1.1 §3.13 step 4): the running total meets the winning
    condition and every stop constraint holds — the hot-dice obligation too (RU-A "this throw
    must be made!"), except under an ``exact`` ending, where a further throw could only overshoot
    (or everywhere with ``hot_dice_win: any_ending``, rules.md 1.0)."""
    r = st.rules
    p = st.players[st.turn.player]
    b = r.barrel
    on = _seated(r, p)
    if b.kind == "capped":
        if not on:
            return False
        if running < r.barrel_target:
            return False
    elif on:
        if not _barrel_win(r, p.score, running):
            return False
    else:
        if not r.wins(running + _partners_score(st, st.turn.player)):
            return False
        if b.kind in ("points", "final_range") and not b.direct_win_from_below:
            return False
    ignore_hot = r.ending.mode == "exact" or r.hot_dice_win == "any_ending"
    return _stop_block(st, points, ignore_hot=ignore_hot) is None


# ----------------------------------------------------------------------------------------------
# Throw, keep, bank


def _roll(st: GameState, faces: tuple[int, ...], ev: list[Event]) -> GameState:
    r = st.rules
    t = st.turn
    if len(faces) != t.dice:
        if t.offer and t.throws == 0 and len(faces) == t.offer:
            t = replace(t, dice=t.offer, stakes=True)  # plays for the high-stakes bonus
        else:
            more = f" (or the {t.offer} left by the previous player)" if t.offer and t.throws == 0 else ""
            raise BadInput(f"{st.to_move} must throw {t.dice} dice{more}, got {len(faces)} "
                           f"({_fmt(faces) or 'none'})")
    name = st.players[t.player].name
    ts = _score(faces, r)
    first = not t.scored and t.points == 0
    stakes_throw = t.stakes and t.throws == 0
    confirm = t.confirm
    t = replace(t, throws=t.throws + 1, last_roll=faces, last_keep=(), hot=False, confirm=False)
    st = replace(st, turn=t)
    if ts.instant_win:
        ev.append(_ev("throw", name, f"{name} throws {_fmt(faces)}: {ts.points}",
                      f"{name} бросает {_fmt(faces)}: {ts.points}", ts.points, faces))
        return _instant_win(st, ts.points, ev)
    if r.toxic_twos and faces.count(2) >= 4:
        ev.append(_ev("toxic_twos", name, f"{name} throws {_fmt(faces)}: toxic twos, the turn is wiped",
                      f"{name} бросает {_fmt(faces)}: ядовитые двойки, ход сгорает", 0, faces))
        return _end_turn(st, "bust", ev)
    if ts.bust:
        if confirm:
            ev.append(_ev("bust", name, f"{name} throws {_fmt(faces)}: confirmation failed, "
                          f"the turn's {t.points} are lost",
                          f"{name} бросает {_fmt(faces)}: подтверждение не удалось, "
                          f"{t.points} очков хода сгорают", -t.points, faces))
            return _end_turn(st, "bust", ev)
        if first and r.first_throw_retry and not t.retried and not t.hot and not t.stakes:
            ev.append(_ev("retry", name, f"{name} throws {_fmt(faces)}: nothing, second attempt",
                          f"{name} бросает {_fmt(faces)}: пусто, вторая попытка", 0, faces))
            return replace(st, turn=replace(t, retried=True))
        lost = f", the turn's {t.points} are lost" if t.points else ""
        lost_ru = f", {t.points} очков хода сгорают" if t.points else ""
        word, word_ru = ("Farkle", "фаркл") if r.dice_count == 6 else ("bust", "пусто")
        ev.append(_ev("bust", name, f"{name} throws {_fmt(faces)}: {word}{lost}",
                      f"{name} бросает {_fmt(faces)}: {word_ru}{lost_ru}", -t.points, faces))
        return _end_turn(st, "bust", ev, first_throw=first)
    if stakes_throw:
        bonus = r.high_stakes.bonus
        ev.append(_ev("high_stakes", name, f"{name} scores with the dice left over: +{bonus} bonus",
                      f"{name} набирает очки оставленными костями: бонус +{bonus}", bonus, faces))
        t = replace(t, points=t.points + bonus)
        st = replace(st, turn=t)
    if confirm:
        # Confirmation throw (RU-B): its own scoring dice count (rules.md §6.5a); then the turn is
        # recorded if the stop constraints allow it; otherwise it records nothing and passes
        # (confirm_below_minimum: lose, rules.md 1.1 §6.5d) or simply continues (continue).
        ev.append(_ev("throw", name, f"{name} throws {_fmt(faces)}: {ts.points} (confirmation)",
                      f"{name} бросает {_fmt(faces)}: {ts.points} (подтверждение)", ts.points, faces))
        st = _apply_keep(st, tuple(ts.scoring_dice), ts.points, ev, announce=False)
        if st.over or st.turn.player != t.player or st.turn.extra != t.extra or not st.turn.scored:
            return st
        short = _stop_block(st, st.turn.points, ignore_hot=True)
        if short is None:
            ev.append(_ev("confirmation", name, f"{name}: turn confirmed",
                          f"{name}: ход подтверждён", st.turn.points))
            return _end_turn(replace(st, turn=replace(st.turn, hot=False)), "bank", ev)
        if r.confirm_below_minimum == "lose":
            pts = st.turn.points
            ev.append(_ev("confirmation", name,
                          f"{name}: turn confirmed at {pts}, but it may not be recorded "
                          f"({short.text_en}): nothing is recorded, the turn passes",
                          f"{name}: ход подтверждён с {pts}, но записать его нельзя "
                          f"({short.text_ru}): ничего не записано, ход переходит", 0))
            return _end_turn(replace(st, turn=replace(st.turn, hot=False)), "bust", ev)
        return st
    if r.selection.set_aside == "at_least_one":
        ev.append(_ev("throw", name, f"{name} throws {_fmt(faces)}: up to {ts.points}",
                      f"{name} бросает {_fmt(faces)}: до {ts.points}", ts.points, faces))
        return replace(st, turn=replace(st.turn, pending=faces))
    ev.append(_ev("throw", name, f"{name} throws {_fmt(faces)}: {ts.points}",
                  f"{name} бросает {_fmt(faces)}: {ts.points}", ts.points, faces))
    return _apply_keep(st, tuple(ts.scoring_dice), ts.points, ev, announce=False)


def _implied_keep(st: GameState, thrown: int) -> tuple[int, ...]:
    """The keep implied by throwing ``thrown`` dice after a pending throw: the best legal keep
    that leaves exactly that many dice (all dice again after hot dice); the best keep overall if
    none does (the roll is then refused for its dice count)."""
    t = st.turn
    assert t.pending is not None
    n = st.rules.dice_count
    opts = _keep_options(t.pending, st.rules)
    for o in opts:  # best first
        if (t.dice - len(o.faces) or n) == thrown:
            return o.faces
    return opts[0].faces


def _take_implied_keep(st: GameState, kept: tuple[int, ...],
                       ev: list[Event]) -> tuple[GameState, bool]:
    """The keep that a :class:`Bank` or a :class:`Roll` implies while a throw awaits its keep —
    the one place for every action that implies a keep. ``kept`` (faces) is set aside exactly as
    an explicit :class:`Keep` would set it aside, with all mid-turn checks of §3.13 (a win, a dump
    truck, an overshoot may end the turn there). Returns ``(state, goes_on)``: ``goes_on`` is
    False when that keep ended the turn, so the implying action has nothing left to do; otherwise
    the stop (its constraints checked on ``state``, hot dice included) or the throw follows.
    Raises :class:`RuleViolation` for an illegal keep."""
    before = st.turn
    after = _keep(st, kept, ev)
    t = after.turn
    goes_on = not after.over and t.scored and t.player == before.player and t.throws == before.throws
    return after, goes_on


def _keep(st: GameState, kept: tuple[int, ...], ev: list[Event]) -> GameState:
    t = st.turn
    assert t.pending is not None
    name = st.players[t.player].name
    if not kept:
        raise RuleViolation("set aside at least one scoring die",
                            "нужно отложить хотя бы одну зачётную кость")
    pts = _keep_points(tuple(sorted(kept)), t.pending, st.rules)
    st = replace(st, turn=replace(t, pending=None))
    return _apply_keep(st, tuple(sorted(kept)), pts, ev, announce=True)


def _apply_keep(st: GameState, kept: tuple[int, ...], pts: int, ev: list[Event],
                *, announce: bool) -> GameState:
    """Set aside ``kept`` worth ``pts`` and run the mid-turn checks of §3.13."""
    r = st.rules
    t = st.turn
    p = st.players[t.player]
    name = p.name
    n = r.dice_count
    points = t.points + pts
    dice = t.dice - len(kept)
    hot = dice == 0
    if hot:
        dice = n
    first_scoring = not t.scored
    t = replace(t, points=points, dice=dice, scored=True, last_keep=kept, hot=hot,
                confirm=hot and r.hot_dice == "confirm_and_bank")
    st = replace(st, turn=t)
    running = p.score + points
    if announce:
        ev.append(_ev("keep", name, f"{name} sets aside {_fmt(kept)}: +{pts}, turn {points}",
                      f"{name} откладывает {_fmt(kept)}: +{pts}, за ход {points}", pts, kept))
    elif pts or kept:
        ev[-1] = replace(ev[-1], text_en=ev[-1].text_en + f" (turn {points})",
                         text_ru=ev[-1].text_ru + f" (за ход {points})")
    # F3 literal reading: the opening must come from the first throw of the turn.
    if (first_scoring and not p.opened and r.opening.first_throw_only
            and pts < r.opening.threshold):
        ev.append(_ev("bust", name, f"{name}: the first throw must bring {r.opening.threshold} "
                      f"to open; the turn ends",
                      f"{name}: для входа первый бросок должен дать {r.opening.threshold}; ход "
                      f"окончен"))
        return _end_turn(st, "bust", ev)
    dt = r.dump_truck
    if dt.enabled and dt.trigger == "running" and running == dt.value:
        ev.append(_ev("dump_truck", name, f"{name} reaches {dt.value}: dump truck! Score 0",
                      f"{name} набирает {dt.value}: самосвал! Счёт 0", -p.score))
        return _end_turn(st, "dump", ev)
    if r.overshoots(running) and r.ending.overshoot_immediate:
        return _end_turn(st, "overshoot", ev)
    if r.final_round == "none" and st.final_round is None and _may_win_now(st, running, points):
        return _end_turn(st, "bank", ev)
    if hot:
        if r.hot_dice == "confirm_and_bank":
            ev.append(_ev("hot_dice", name, f"{name}: all dice scored, confirmation throw of {n}",
                          f"{name}: все кости сыграли, бросок подтверждения {n} костями"))
        elif r.hot_dice == "must_roll":
            ev.append(_ev("hot_dice", name, f"{name}: hot dice, must throw all {_NUM_EN[n]} again",
                          f"{name}: все кости сыграли, нужно снова бросить все {_NUM_RU[n]}"))
        else:
            ev.append(_ev("hot_dice", name, f"{name}: hot dice, may throw all {_NUM_EN[n]} again or stop",
                          f"{name}: все кости сыграли, можно бросить все {_NUM_RU[n]} или остановиться"))
    return st


def _bank(st: GameState, ev: list[Event]) -> GameState:
    why = st.stop_reason()
    if why is not None:
        raise RuleViolation(f"you may not stop: {why.text_en}", f"остановиться нельзя: {why.text_ru}")
    r = st.rules
    p = st.players[st.turn.player]
    running = p.score + st.turn.points
    if r.overshoots(running):
        return _end_turn(st, "overshoot", ev)
    return _end_turn(st, "bank", ev)


def _instant_win(st: GameState, pts: int, ev: list[Event]) -> GameState:
    t = st.turn
    p = st.players[t.player]
    total = t.points + pts
    ev.append(_ev("instant_win", p.name, f"{p.name} wins instantly with {_fmt(t.last_roll)}!",
                  f"{p.name} мгновенно побеждает: {_fmt(t.last_roll)}!", total, t.last_roll))
    players = list(st.players)
    players[t.player] = replace(p, score=p.score + total, opened=True, turns=p.turns + 1)
    return replace(st, players=tuple(players), over=True, winners=(t.player,),
                   turn=replace(t, points=0, pending=None, hot=False, confirm=False))


# ----------------------------------------------------------------------------------------------
# End of turn: rules.md §3.13 resolution order


def _clamp(r: Rules, score: int) -> int:
    return max(0, score) if r.negative_scores == "clamp_zero" else score


def _fall(r: Rules, p: PlayerState, ev: list[Event], why_en: str, why_ru: str,
          penalty: int | None = None) -> PlayerState:
    """A barrel fall: −fall_penalty, falls+1; the max_falls-th fall sets the score to 0."""
    b = r.barrel
    falls = p.falls + 1
    if b.max_falls is not None and falls >= b.max_falls:
        ev.append(_ev("fall", p.name, f"{p.name} falls off the barrel ({why_en}), fall {falls} of "
                      f"{b.max_falls}: score 0",
                      f"{p.name} падает с бочки ({why_ru}), падение {falls} из {b.max_falls}: "
                      f"счёт 0", -p.score))
        return replace(p, score=0, falls=0, barrel_attempts=0, seated=False,
                       opened=p.opened and not r.opening.reopen_after_reset)
    pen = b.fall_penalty if penalty is None else penalty
    ev.append(_ev("fall", p.name, f"{p.name} falls off the barrel ({why_en}): −{pen}",
                  f"{p.name} падает с бочки ({why_ru}): −{pen}", -pen))
    return replace(p, score=_clamp(r, p.score - pen), falls=falls, barrel_attempts=0,
                   seated=False)


def _end_turn(st: GameState, outcome: str, ev: list[Event], *, first_throw: bool = False) -> GameState:
    """Finish the mover's turn. ``outcome``: ``bank`` (record the turn points), ``bust`` (zero
    turn), ``dump`` (running-total dump truck), ``overshoot`` (exact ending passed)."""
    r = st.rules
    t = st.turn
    m = t.player
    players = list(st.players)
    start = [p.score for p in players]
    mover0 = players[m]
    before = mover0.score
    name = mover0.name
    was_open = mover0.opened
    was_pit = r.pit_of(before) is not None
    was_barrel = _seated(r, mover0)
    zero_turn = outcome == "bust"
    over = False
    winners: tuple[int, ...] = ()
    final_round = st.final_round
    mover = mover0
    # 1. the mover's new score
    if outcome == "bank":
        new = before + t.points
        b = r.barrel
        seat = mover.seated
        if b.kind == "capped" and not was_barrel and new > b.entry:
            ev.append(_ev("capped", name, f"{name}: {new} is recorded as {b.entry} (barrel)",
                          f"{name}: {new} записывается как {b.entry} (бочка)"))
            new = b.entry
        elif b.kind in ("points", "final_range") and not was_barrel:
            direct = b.direct_win_from_below and r.wins(new)
            if r.seat_is_state and not direct and (r.above_entry(new) or r.wins(new)):
                # rules.md 1.1 §3.6.2: first sit (recorded exactly at the entry), then win
                need = _barrel_need(r, b.entry)
                ev.append(_ev("capped", name, f"{name}: {new} is recorded as {b.entry}, on the "
                              f"barrel; to win, {need} in one turn",
                              f"{name}: {new} записывается как {b.entry}, на бочке; для победы "
                              f"нужно {need} за один ход"))
                new, seat = b.entry, True
            elif not b.direct_win_from_below and r.wins(new):  # seat_score: actual (1.0)
                new = r.barrel_target - r.unit
                ev.append(_ev("capped", name, f"{name}: must sit on the barrel first; "
                              f"recorded {new}",
                              f"{name}: сначала нужно сесть на бочку; записано {new}"))
        ev.append(_ev("bank", name, f"{name} records {t.points}: {before} → {new}",
                      f"{name} записывает {t.points}: {before} → {new}", t.points))
        mover = replace(mover, score=new, seated=seat)
        if not was_open:
            mover = replace(mover, opened=True, admission_score=new)
            if r.opening.threshold:
                ev.append(_ev("opened", name, f"{name} has opened the game",
                              f"{name}: игра открыта"))
    elif outcome == "dump":
        mover = replace(mover, score=0,
                        opened=was_open and not (r.dump_truck.reopen_required
                                                 or r.opening.reopen_after_reset))
    # "bust" and "overshoot": score unchanged
    after_record = mover.score
    players[m] = mover
    # 2. win check for the mover
    partners = _partners_score(st, m)
    won = outcome == "bank" and _wins_recorded(r, before, mover.score + partners, was_barrel)
    if won:
        if r.final_round == "none" or final_round is not None:
            if r.final_round == "none":
                over = True
                winners = _team_of(r, len(players), m)
                if len(winners) > 1:
                    names = ", ".join(players[i].name for i in winners)
                    total = mover.score + partners
                    ev.append(_ev("win", name, f"team {names} wins with {total}!",
                                  f"побеждает команда {names} с {total}!", total))
                else:
                    ev.append(_ev("win", name, f"{name} wins with {mover.score}!",
                                  f"{name} побеждает с {mover.score}!", mover.score))
        else:
            n = len(players)
            team = _team_of(r, n, m)
            if r.final_round == "others_one_more_turn":
                owed = tuple((m + k) % n for k in range(1, n) if (m + k) % n not in team)
            else:  # equalize_turns: the rest of this round (seat 0 starts each round)
                owed = tuple(range(m + 1, n))
            final_round = owed
            ev.append(_ev("final_round", name,
                          f"{name} reaches {mover.score}: final round"
                          + (f" for {', '.join(players[i].name for i in owed)}" if owed else ""),
                          f"{name} набирает {mover.score}: финальный круг"
                          + (f" для {', '.join(players[i].name for i in owed)}" if owed else ""),
                          mover.score))
    knocked: set[int] = set()
    if not over:
        # 3. barrel effects
        b = r.barrel
        now_on = _seated(r, mover)
        if now_on and not was_barrel:
            ev.append(_ev("barrel", name, f"{name} climbs onto the barrel at {mover.score}",
                          f"{name} залезает на бочку: {mover.score}", mover.score))
        if b.kind in ("points", "capped", "final_range") and b.knockoff and now_on and not was_barrel:
            for i, p in enumerate(players):
                if i == m or not _seated(r, p):
                    continue
                knocked.add(i)
                if b.knockoff_effect == "fall":
                    players[i] = _fall(r, p, ev, f"knocked off by {name}", f"сбит игроком {name}")
                elif b.knockoff_effect == "to_admission_score":
                    back = p.admission_score if p.admission_score is not None else 0
                    ev.append(_ev("knocked_off", p.name, f"{p.name} is knocked off the barrel by "
                                  f"{name}: back to {back}",
                                  f"{name} сталкивает {p.name} с бочки: назад на {back}",
                                  back - p.score))
                    players[i] = replace(p, score=back, barrel_attempts=0, seated=False)
                else:
                    pen = b.push_off_penalty
                    ev.append(_ev("knocked_off", p.name, f"{p.name} is pushed off the barrel by "
                                  f"{name}: −{pen}",
                                  f"{name} сталкивает {p.name} с бочки: −{pen}", -pen))
                    players[i] = replace(p, score=_clamp(r, p.score - pen), barrel_attempts=0,
                                         seated=False)
        elif (was_barrel and outcome != "bank" and b.kind in ("points", "final_range")
              and b.attempts is not None and not b.attempts_are_bolts):
            att = mover.barrel_attempts + 1
            if att >= b.attempts:
                mover = _fall(r, replace(mover, barrel_attempts=0), ev,
                              f"{att} failed attempts", f"{att} неудачных попыток")
            else:
                ev.append(_ev("barrel", name, f"{name}: barrel attempt {att} of {b.attempts} failed",
                              f"{name}: попытка на бочке {att} из {b.attempts} не удалась"))
                mover = replace(mover, barrel_attempts=att)
            players[m] = mover
        # 4. overtaking
        if r.overtaking.enabled and outcome == "bank":
            pen = r.overtaking.penalty
            for i, p in enumerate(players):
                if i == m or i in knocked:
                    continue
                if before < start[i] < players[m].score:
                    ev.append(_ev("overtaken", p.name, f"{name} overtakes {p.name}: {p.name} −{pen}",
                                  f"{p.name} −{pen}: обгон, впереди теперь {name}", -pen))
                    players[i] = replace(p, score=_clamp(r, p.score - pen))
        # 5. bolts (and the three-farkles rule)
        mover = players[m]
        bo = r.bolts
        fp = r.opening.failure_penalty
        if zero_turn and fp is not None and not was_open:
            cnt = mover.bolts + 1
            if cnt >= fp.every:
                ev.append(_ev("bolt_penalty", name, f"{name}: {cnt} failed openings: −{fp.amount}",
                              f"{name}: {cnt} неудачных входа: −{fp.amount}", -fp.amount))
                mover = replace(mover, bolts=0, score=_clamp(r, mover.score - fp.amount))
            else:
                ev.append(_ev("bolt", name, f"{name} gets a bolt ({cnt}) for a failed opening",
                              f"{name} получает болт ({cnt}) за неудачный вход"))
                mover = replace(mover, bolts=cnt)
        elif bo.enabled and zero_turn:
            trig = bo.trigger
            hit = ("zero_turn" in trig or ("zero_first_throw" in trig and first_throw)
                   or ("failed_opening" in trig and not was_open))
            exempt = (("not_open" in bo.exempt_when and not was_open
                       and not ("failed_opening" in trig))
                      or ("in_pit" in bo.exempt_when and was_pit)
                      or ("on_barrel" in bo.exempt_when and was_barrel))
            if hit and not exempt:
                cnt = mover.bolts + 1
                if cnt >= bo.limit:
                    ev.append(_ev("bolt_penalty", name, f"{name} gets bolt {cnt}: −{bo.penalty}",
                                  f"{name} получает {cnt}-й болт: −{bo.penalty}", -bo.penalty))
                    falls = mover.falls
                    if r.barrel.attempts_are_bolts and was_barrel:
                        falls += 1  # ID-D: the third bolt on the barrel is the fall
                        ev.append(_ev("fall", name, f"{name} falls off the barrel",
                                      f"{name} падает с бочки"))
                    mover = replace(mover, bolts=0 if bo.reset_after_penalty else cnt,
                                    score=_clamp(r, mover.score - bo.penalty), falls=falls)
                else:
                    ev.append(_ev("bolt", name, f"{name} gets a bolt ({cnt} of {bo.limit})",
                                  f"{name} получает болт ({cnt} из {bo.limit})"))
                    mover = replace(mover, bolts=cnt)
        elif bo.enabled and bo.consecutive_only and outcome == "bank":
            mover = replace(mover, bolts=0)
        tf = r.three_farkles
        if tf.enabled:
            if zero_turn:
                cnt = mover.farkles + 1
                if cnt >= tf.count:
                    ev.append(_ev("three_farkles", name, f"{name}: {cnt} Farkles in a row: −{tf.penalty}",
                                  f"{name}: {cnt} фаркла подряд: −{tf.penalty}", -tf.penalty))
                    mover = replace(mover, farkles=0, score=_clamp(r, mover.score - tf.penalty))
                else:
                    mover = replace(mover, farkles=cnt)
            elif outcome == "bank":
                mover = replace(mover, farkles=0)
        players[m] = mover
        # 8 (done before 6 so that a penalty landing on 555 is caught). overshoot counters
        if outcome == "overshoot":
            players[m] = _overshoot(st, players, ev)
            if r.final_round == "none":  # welfare: a gift that lands exactly on the target wins
                for i, p in enumerate(players):
                    if i != m and p.score != start[i] and r.wins(p.score):
                        over, winners = True, (i,)
                        ev.append(_ev("win", p.name, f"{p.name} wins with {p.score}!",
                                      f"{p.name} побеждает с {p.score}!", p.score))
                        break
        # 6. dump truck for every player whose score changed
        dt = r.dump_truck
        if dt.enabled:
            for i, p in enumerate(players):
                if p.score != dt.value or p.score == start[i]:
                    continue
                by_record = i == m and after_record == dt.value and outcome == "bank"
                if by_record or dt.via_penalties:
                    ev.append(_ev("dump_truck", p.name, f"{p.name} lands on {dt.value}: dump truck! "
                                  f"Score 0", f"{p.name} на {dt.value}: самосвал! Счёт 0", -p.score))
                    players[i] = replace(p, score=0, opened=p.opened and not (
                        dt.reopen_required or r.opening.reopen_after_reset))
        # 7. zone bookkeeping (a fine below the entry ends a seat: not a fall, §6.31)
        for i, p in enumerate(players):
            if (p.barrel_attempts or p.seated) and not _seated(r, p):
                players[i] = replace(p, barrel_attempts=0, seated=False)
            pit = r.pit_of(players[i].score)
            if pit is not None and r.pit_of(start[i]) is not pit:
                ex = pit.exit_value(r.unit)
                ev.append(_ev("pit", players[i].name,
                              f"{players[i].name} is in the pit {pit.lo}–{pit.hi}: must reach {ex} "
                              f"in one turn",
                              f"{players[i].name} в яме {pit.lo}–{pit.hi}: нужно за один ход "
                              f"набрать {ex}"))
    # turn bookkeeping and passing the turn
    mover = players[m]
    players[m] = replace(mover, turns=mover.turns + 1)
    if over:
        return replace(st, players=tuple(players), over=True, winners=winners,
                       final_round=final_round, turn=replace(t, points=0, pending=None, hot=False,
                                                             confirm=False, dice=r.dice_count))
    extra_next = False
    sb = r.skip_barrels
    if sb.zones:
        mover = players[m]
        zone = sb.zone_of(mover.score)
        # rules.md 1.1 §3.7: a skip is triggered by *recording* a score inside a zone; a zero
        # turn records nothing (trigger turn_end: any turn ending inside, rules.md 1.0)
        landed = outcome == "bank" or sb.trigger == "turn_end"
        still = sb.mode != "skip" and t.extra and zone is not None and sb.zone_of(before) == zone
        if zone is not None and (landed or still):
            lo, hi = sb.zones[zone]
            if sb.mode == "skip":
                ev.append(_ev("skip_turn", name, f"{name} is on the barrel {lo}–{hi}: skips the next turn",
                              f"{name} на бочке {lo}–{hi}: пропускает следующий ход"))
                players[m] = replace(mover, skip_next=True)
            elif t.extra and sb.zone_of(before) == zone:
                msg_en = f"{name} is still on the barrel {lo}–{hi}: skips the next turn"
                msg_ru = f"{name} всё ещё на бочке {lo}–{hi}: пропускает следующий ход"
                pen = 0
                if sb.mode == "extra_turn_minus_100":
                    pen = sb.penalty
                    msg_en += f" and loses {pen}"
                    msg_ru += f" и теряет {pen}"
                ev.append(_ev("skip_turn", name, msg_en, msg_ru, -pen))
                players[m] = replace(mover, skip_next=True, score=_clamp(r, mover.score - pen))
            else:
                ev.append(_ev("extra_turn", name, f"{name} is on the barrel {lo}–{hi}: extra turn",
                              f"{name} на бочке {lo}–{hi}: дополнительный ход"))
                extra_next = True
    offer = (t.dice if r.high_stakes.enabled and outcome == "bank" and not t.hot
             and t.dice < r.dice_count else 0)
    return _pass_turn(replace(st, players=tuple(players), final_round=final_round), m,
                      extra_next, ev, offer)


def _wins_recorded(r: Rules, before: int, new: int, was_barrel: bool) -> bool:
    """Win check on a recorded score (§3.13 after-turn step 2)."""
    if r.barrel.kind == "capped":
        return was_barrel and new >= r.barrel_target
    if was_barrel:
        return _barrel_win(r, before, new)
    return r.wins(new)


def _overshoot(st: GameState, players: list[PlayerState], ev: list[Event]) -> PlayerState:
    """Overshoot handling (§3.6.3, §3.8): void turn / dot / transfer, then the penalty ladders."""
    r = st.rules
    t = st.turn
    m = t.player
    p = players[m]
    running = p.score + t.points
    eff = r.ending.overshoot_effect
    p = replace(p, overshoots=p.overshoots + 1)
    if eff == "dot":
        dots = p.dots + 1
        b = r.barrel
        ev.append(_ev("dot", p.name, f"{p.name} overshoots {r.target} ({running}): dot {dots} of "
                      f"{b.dots_limit}, the turn is lost",
                      f"{p.name}: перебор ({running}), точка {dots} из {b.dots_limit}, ход сгорает"))
        if dots >= b.dots_limit:
            falls = p.falls + 1
            if b.max_falls is not None and falls >= b.max_falls:
                ev.append(_ev("fall", p.name, f"{p.name}: {dots} dots: score 0",
                              f"{p.name}: {dots} точек: счёт 0", -p.score))
                return replace(p, dots=0, falls=0, score=0,
                               opened=p.opened and not r.opening.reopen_after_reset)
            ev.append(_ev("fall", p.name, f"{p.name}: {dots} dots: −{b.dot_penalty}",
                          f"{p.name}: {dots} точек: −{b.dot_penalty}", -b.dot_penalty))
            return replace(p, dots=0, falls=falls, score=_clamp(r, p.score - b.dot_penalty))
        return replace(p, dots=dots)
    if eff == "transfer_to_lowest":
        others = [i for i in range(len(players)) if i != m]
        if others:
            low = min(others, key=lambda i: (players[i].score, i))
            q = players[low]
            got = q.score + t.points
            if r.overshoots(got):
                # the gift itself would pass the exact target: nobody gets it (kosti's decision;
                # F2 does not say), so that no score can ever be stuck above the target
                ev.append(_ev("overshoot", p.name, f"{p.name} overshoots {r.target}: the turn's "
                              f"{t.points} would take {q.name} past it too, so they are lost",
                              f"{p.name}: перебор; {t.points} очков хода вывели бы {q.name} за "
                              f"{r.target}, они сгорают"))
            else:
                ev.append(_ev("transfer", p.name, f"{p.name} overshoots {r.target}: the turn's "
                              f"{t.points} go to {q.name}", f"{p.name}: перебор, {t.points} очков "
                              f"хода уходят игроку {q.name}", t.points))
                players[low] = replace(q, score=got)
        else:
            ev.append(_ev("overshoot", p.name, f"{p.name} overshoots {r.target}: the turn is void",
                          f"{p.name}: перебор, ход не засчитан"))
    else:
        ev.append(_ev("overshoot", p.name, f"{p.name} overshoots {r.target} ({running}): the turn "
                      f"is void", f"{p.name}: перебор ({running}), ход не засчитан"))
    ladder = r.ending.overshoot_penalties
    if ladder:
        for step in ladder:
            if p.overshoots == step.at:
                if step.to_zero:
                    ev.append(_ev("overshoot", p.name, f"{p.name}: {step.at} overshoots: score 0",
                                  f"{p.name}: {step.at} переборов: счёт 0", -p.score))
                    p = replace(p, score=0)
                else:
                    ev.append(_ev("overshoot", p.name, f"{p.name}: {step.at} overshoots: "
                                  f"−{step.penalty}", f"{p.name}: {step.at} переборов: "
                                  f"−{step.penalty}", -step.penalty))
                    p = replace(p, score=_clamp(r, p.score - step.penalty))
        if p.overshoots >= ladder[-1].at:
            p = replace(p, overshoots=0)
    return p


def _pass_turn(st: GameState, m: int, extra: bool, ev: list[Event], offer: int = 0) -> GameState:
    r = st.rules
    n = len(st.players)
    players = list(st.players)
    fr = st.final_round
    if extra:
        return replace(st, players=tuple(players),
                       turn=TurnState(player=m, dice=r.dice_count, extra=True))
    if fr is not None:
        fr = tuple(i for i in fr if i != m)
        if not fr:
            teams = _teams(r, n)
            totals = [sum(players[i].score for i in team) for team in teams]
            best = max(totals)
            winners = tuple(sorted(i for team, tot in zip(teams, totals) if tot == best
                                   for i in team))
            names = ", ".join(players[i].name for i in winners)
            ev.append(_ev("win", names, f"final round over: {names} win{'s' if len(winners) == 1 else ''} "
                          f"with {best}", f"финальный круг окончен: побеждает {names} с {best}", best))
            return replace(st, players=tuple(players), over=True, winners=winners, final_round=fr,
                           turn=TurnState(player=m, dice=r.dice_count))
        nxt = fr[0]
        return replace(st, players=tuple(players), final_round=fr,
                       turn=TurnState(player=nxt, dice=r.dice_count, offer=offer))
    nxt = (m + 1) % n
    for _ in range(2 * n + 1):
        p = players[nxt]
        if not p.skip_next:
            break
        ev.append(_ev("skip_turn", p.name, f"{p.name} skips this turn", f"{p.name} пропускает ход"))
        players[nxt] = replace(p, skip_next=False, turns=p.turns + 1)
        nxt = (nxt + 1) % n
    if offer:
        ev.append(_ev("turn", players[nxt].name, f"{players[nxt].name} to throw (or play the "
                      f"{offer} dice left over for the high-stakes bonus)",
                      f"бросает {players[nxt].name} (или {offer} оставленные кости ради бонуса)"))
    else:
        ev.append(_ev("turn", players[nxt].name, f"{players[nxt].name} to throw",
                      f"бросает {players[nxt].name}"))
    return replace(st, players=tuple(players),
                   turn=TurnState(player=nxt, dice=r.dice_count, offer=offer))


# ----------------------------------------------------------------------------------------------
# Construction


def first_player(throws: Mapping[str, int]) -> tuple[str, ...]:
    """Who starts (rules.md §1.1, §6.43): each player throws one die; returns the names tied for
    the highest face. One name: he throws first. Several: only those re-throw. Raises
    :class:`BadInput` for an empty mapping or a face outside 1–6."""
    if not throws:
        raise BadInput("first_player: no throws given")
    for name, face in throws.items():
        if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 6:
            raise BadInput(f"first_player: {name} threw {face!r}; a face must be 1-6")
    best = max(throws.values())
    return tuple(name for name, face in throws.items() if face == best)


def seat_order(players: Sequence[str], first: str) -> list[str]:
    """The seat order rotated so that ``first`` throws first (play then goes round the table)."""
    names = list(players)
    if first not in names:
        raise BadInput(f"{first!r} is not one of the players")
    i = names.index(first)
    return names[i:] + names[:i]


def new_game(rules: Rules | str | Mapping[str, Any], players: Sequence[str],
             scores: Mapping[str, int] | None = None,
             state: Mapping[str, Mapping[str, Any]] | None = None) -> GameState:
    """Start a game (mirrors the ``kosti replay`` input of cli.md).

    ``rules``: a :class:`Rules`, a preset name, or ``{"preset": name, "overrides": {...}}``.
    ``players``: names in seat order; the first one throws first. ``scores``: optional starting
    recorded scores (points) — a player given a non-zero score counts as opened. ``state``: optional
    per-player ``{"bolts", "opened", "falls", "barrel_attempts", "dots", "overshoots",
    "skip_next", "admission_score", "farkles", "on_barrel"}``. ``on_barrel`` seats a player where
    the seat is a state (``Rules.seat_is_state``; his score must be at least the entry, e.g. 880
    in ``classic``); a starting score inside the barrel's range (above 880) seats him anyway, as
    it did before rules.md 1.1. Raises :class:`BadInput` for unknown players or parameters,
    duplicate names, an ``on_barrel`` that the score or the rules contradict, or a player count
    outside ``rules.players``.
    """
    from .presets import resolve_rules

    r = resolve_rules(rules)
    names = list(players)
    if not names or any(not isinstance(n, str) or not n.strip() for n in names):
        raise BadInput("players: need a non-empty list of names")
    if len(set(names)) != len(names):
        raise BadInput("players: names must be unique")
    if not r.players.min <= len(names) <= r.players.max:
        raise BadInput(f"players: {r.name} allows {r.players.min}–{r.players.max} players, "
                       f"got {len(names)}")
    size = r.team_play.size
    if r.team_play.enabled and (len(names) % size or len(names) < 2 * size):
        raise BadInput(f"players: team play needs at least two teams of {size}, got "
                       f"{len(names)} players")
    scores = dict(scores or {})
    state = dict(state or {})
    for key in list(scores) + list(state):
        if key not in names:
            raise BadInput(f"unknown player {key!r} (players: {', '.join(names)})")
    allowed_keys = {"bolts", "opened", "falls", "barrel_attempts", "dots", "overshoots",
                    "skip_next", "admission_score", "farkles", "on_barrel"}
    ps = []
    for name in names:
        sc = scores.get(name, 0)
        if isinstance(sc, bool) or not isinstance(sc, int):
            raise BadInput(f"scores.{name}: expected an integer, got {sc!r}")
        if sc < 0 and r.negative_scores == "clamp_zero":
            raise BadInput(f"scores.{name}: {sc} is negative, but {r.name} keeps scores at 0 or "
                           f"above (negative_scores: clamp_zero)")
        kw: dict[str, Any] = {"name": name, "score": sc, "opened": sc != 0}
        if sc != 0:
            kw["admission_score"] = min(sc, r.barrel.entry) if r.barrel.kind == "capped" else sc
        for k, v in dict(state.get(name, {})).items():
            if k not in allowed_keys:
                raise BadInput(f"state.{name}.{k}: unknown player state (known: "
                               f"{', '.join(sorted(allowed_keys))})")
            if k in ("opened", "skip_next", "on_barrel"):
                if not isinstance(v, bool):
                    raise BadInput(f"state.{name}.{k}: expected true/false, got {v!r}")
            elif k == "admission_score" and v is None:
                pass
            elif isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise BadInput(f"state.{name}.{k}: expected a non-negative integer, got {v!r}")
            kw[k] = v
        if kw.get("opened") and kw.get("admission_score") is None:
            kw["admission_score"] = sc
        seated = kw.pop("on_barrel", None)
        if r.seat_is_state:
            if seated and sc < r.barrel.entry:
                raise BadInput(f"state.{name}.on_barrel: a score of {sc} is below the barrel "
                               f"entry {r.barrel.entry}")
            kw["seated"] = bool(seated) or (seated is None and r.on_barrel(sc))
        elif seated is not None and seated != r.on_barrel(sc):
            raise BadInput(f"state.{name}.on_barrel: in {r.name} the barrel follows from the "
                           f"score, and {sc} is {'not ' if seated else ''}on it")
        ps.append(PlayerState(**kw))
    gs = GameState(rules=r, players=tuple(ps), turn=TurnState(player=0, dice=r.dice_count))
    if gs.players[0].skip_next:
        ev: list[Event] = []
        gs = _pass_turn(replace(gs, turn=TurnState(player=len(ps) - 1, dice=r.dice_count)),
                        len(ps) - 1, False, ev)
        gs = _with_log(gs, ev)
    return gs
