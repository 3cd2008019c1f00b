"""The turn / game state machine of 1000 (Тысяча), Farkle and 10000 (rules.md §1, §3, §3.13, §7).

The game state is a plain immutable value: :class:`GameState` (frozen dataclasses and tuples) that
serialises to JSON and restores exactly (:meth:`GameState.to_json` / :meth:`GameState.from_json`).
Play is a pure function::

    state = new_game("classic", ["Ann", "Boris"])
    state, events = state.apply(Roll((1, 5, 3, 3, 4)))   # throw the dice the state asks for
    state.moves()                                         # what may be done now, and why not
    state, events = state.apply(Bank())                   # "хватит": stop and record

Actions: :class:`Roll` (the faces of one throw of exactly ``state.dice_to_throw`` dice),
:class:`Keep` (which scoring dice to set aside — only where ``selection.set_aside`` is
``at_least_one``; otherwise the best keep is set aside automatically) and :class:`Bank`.
Busts, forced ends (dump truck, overshoot, dot), hot-dice obligations, the second attempt and
passing the turn follow from the rules with no action. Each step returns small :class:`Event`
values carrying English and Russian text (``text_en`` / ``text_ru``, worded in
:mod:`kosti.engine.texts`) for the score sheet, a ``kind`` (:class:`EventKind`) and, on the one event
of an action that ends a turn, its ``outcome`` (:class:`TurnOutcome`).

Where the work is done: the throw, the keep and the stop in :mod:`kosti.engine.turn`; the end of a
turn in :mod:`kosti.engine.turn_end` (``AFTER_TURN``, the steps of rules.md §3.13 in order); the
stop constraints and barrel queries in :mod:`kosti.engine.standing`; this module holds the state,
its queries and the one mutator :meth:`GameState.apply`.

Errors: a roll of the wrong number of dice or a face outside 1–6 raises
:class:`~kosti.engine.errors.BadInput`; an action the rules forbid raises
:class:`~kosti.engine.errors.RuleViolation` whose message says why in the players' words.

Order of resolution after each scoring throw and after the turn ends: rules.md §3.13. Every
RECOMMENDED decision of rules.md §6 is followed. Where the spec is silent this module decides:

* keep phase (``selection.set_aside = at_least_one``): after a scoring throw the state waits for a
  :class:`Keep`; a :class:`Bank` takes the best keep; a :class:`Roll` of k dice takes the best legal
  keep that leaves k dice (so a camera that only sees throws still scores correctly). Both go
  through one place (:func:`kosti.engine.turn.take_implied_keep`): the keep is made exactly as a :class:`Keep`
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from . import texts
from .actions import Action, Bank, Keep, Roll, action_from_json, action_to_json
from .errors import BadInput, RuleViolation
from .kinds import EventKind, Phase, TurnOutcome
from .names import check_player_names
from .protocol import Choose, Game, GameAction, Moves
from .records import (
    Event,
    KeepOption,
    Log,
    PlayerState,
    Reason,
    TurnState,
    replace,
)
from .rules import Rules, rules_1_0
from .standing import barrel_need, keep_options, seated, stop_block, teams
from .turn import bank, implied_keep, keep, roll, take_implied_keep
from .turn_end import pass_turn

__all__ = [
    "Action",
    "Bank",
    "Event",
    "EventKind",
    "GameState",
    "Keep",
    "KeepOption",
    "Log",
    "Moves",
    "Phase",
    "PlayerState",
    "Reason",
    "Roll",
    "TurnOutcome",
    "TurnState",
    "action_from_json",
    "action_to_json",
    "first_player",
    "new_game",
    "replace",
    "seat_order",
]

#: The saved-game format written by :meth:`GameState.to_json`. Version 2 came with rules.md 1.1
#: (new rule parameters, ``PlayerState.seated``); version 1 games load with their 1.0 rules.
GAME_FORMAT = "kosti-game/2"
_GAME_FORMAT_1_0 = "kosti-game/1"


@dataclass(frozen=True, slots=True)
class GameState(Game):
    """The whole game of the 1000 family as an immutable value (see module docstring); it implements the game
    protocol (:class:`~kosti.engine.protocol.Game`) itself, as every games.md game does.

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
    log: Log = Log()  # noqa: RUF009 - frozen, safe to share

    #: The game id of ``kosti rules --json`` for the whole 1000 family (every preset of rules.md §4).
    game: ClassVar[str] = "1000"
    #: The player may stop ("хватит", rules.md §1.6).
    HAS_STOP: ClassVar[bool] = True

    # -- queries -------------------------------------------------------------------------------
    @property
    def title(self) -> tuple[str, str]:
        """The family of the preset: "dice 1000" / «Тысяча на костях», "Farkle" / «Фаркл» or "10000"."""
        from .titles import family_title

        return family_title(self.rules.name)

    @property
    def rules_name(self) -> str:
        """The preset name of the rules (``"classic"``, ``"farkle"`` …)."""
        return self.rules.name

    @property
    def player_names(self) -> tuple[str, ...]:
        """Names in seat order."""
        return tuple(p.name for p in self.players)

    def scores_list(self) -> tuple[int, ...]:
        """Recorded score per seat (rules.md §0.2)."""
        return tuple(p.score for p in self.players)

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
            best = keep_options(t.pending, self.rules)[0]
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
                             for k in keep_options(t.pending, self.rules)}))

    @property
    def winner(self) -> str | list[str] | None:
        """The winner's name; a list of names for a shared victory; None while the game goes on."""
        if not self.winners:
            return None
        names = [self.players[i].name for i in self.winners]
        return names[0] if len(names) == 1 else names

    @property
    def phase(self) -> Phase:
        """:class:`Phase`: ``"over"``, ``"keep"`` (a throw awaits its keep) or ``"roll"``."""
        if self.over:
            return Phase.OVER
        return Phase.KEEP if self.turn.pending is not None else Phase.ROLL

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
        return teams(self.rules, len(self.players))

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
        return seated(self.rules, self.players[index])

    def barrel_need(self, index: int) -> int | None:
        """Turn points (in one turn) player ``index`` needs to win from the barrel he sits on
        (RU-A: 120 from 880; RU-B: 150 from 850), or None when he does not sit on one."""
        if not self.on_barrel(index):
            return None
        return barrel_need(self.rules, self.players[index].score)

    def barrel_status(self, index: int) -> Reason | None:
        """The scoreboard's barrel line for player ``index`` in English and Russian — e.g.
        "on the barrel, needs 120 in one turn (attempts used: 1 of 3)" / "на бочке, нужно 120 за
        один ход (использовано попыток: 1 из 3)" — or None when he does not sit on a barrel."""
        need = self.barrel_need(index)
        if need is None:
            return None
        b = self.rules.barrel
        p = self.players[index]
        if b.kind != "capped" and b.attempts is not None and not b.attempts_are_bolts:
            return Reason.of(texts.barrel_status(need, p.barrel_attempts, b.attempts))
        return Reason.of(texts.barrel_status(need))

    def stop_reason(self) -> Reason | None:
        """Why the mover may not stop now (None if he may), rules.md §1.6. While a throw awaits
        its keep, a stop sets aside the best keep first (:func:`kosti.engine.turn.take_implied_keep`): the answer is
        that of the state after the keep, and None when the keep itself ends the turn."""
        if self.over:
            return Reason.of(texts.game_over())
        t = self.turn
        if t.pending is not None:
            best = keep_options(t.pending, self.rules)[0]
            after, goes_on = take_implied_keep(self, best.faces, [])
            return after.stop_reason() if goes_on else None
        return stop_block(self, t.points, ignore_hot=False)

    def moves(self) -> Moves:
        """What the player to move may do now, and why not (see :class:`~kosti.engine.protocol.Moves`; the 1000
        family has no own ``choices``)."""
        r = self.rules
        t = self.turn
        if self.over:
            why = Reason.of(texts.game_over())
            return Moves(False, 0, False, False, (), why, why, why)
        n = r.dice_count
        if t.pending is not None:
            keeps = keep_options(t.pending, r)
            best = keeps[0]
            hint = Reason.of(texts.keep_hint(best.faces, best.points))
            # Roll / Bank are accepted too: a Bank takes the best keep first; a Roll of k dice
            # takes the best keep that leaves k dice (the best keep overall if k matches it).
            why_bank = self.stop_reason()
            left = t.dice - len(best.faces) or n
            sizes = tuple(sorted({t.dice - len(k.faces) or n for k in keeps}))
            return Moves(True, left, True, why_bank is None, keeps, None, why_bank, hint, sizes)
        why_bank = self.stop_reason()
        if not t.scored and t.points == 0 and t.throws == 0:
            hint = Reason.of(texts.first_throw_hint(self.players[t.player].name, t.dice))
            seat = self.barrel_status(t.player)
            if seat is not None:  # "A: throw five dice — on the barrel, needs 120 in one turn …"
                hint = Reason.of(texts.with_seat(hint.text, seat.text))
        elif t.hot and t.confirm:
            hint = Reason.of(texts.confirm_hint(n))
            short = stop_block(self, t.points, ignore_hot=True)
            if short is not None and r.confirm_below_minimum == "lose":
                hint = Reason.of(texts.confirm_short_hint(hint.text, short.text))
        elif t.hot and why_bank is not None and r.hot_dice == "must_roll":
            hint = Reason.of(texts.hot_must_roll(n))
        elif why_bank is None:
            hint = Reason.of(texts.throw_or_stop(t.dice, t.points))
        else:
            hint = Reason.of(texts.throw_because(t.dice, why_bank.text))
        return Moves(True, t.dice, False, why_bank is None, (), None, why_bank, hint,
                     self.roll_sizes())

    # -- the one mutator ----------------------------------------------------------------------
    def apply(self, action: GameAction) -> tuple[GameState, tuple[Event, ...]]:
        """Apply one action; returns ``(new_state, events)``. The receiver is unchanged.

        Raises :class:`BadInput` (wrong dice count, bad faces, keeping dice that were not thrown)
        or :class:`RuleViolation` (an action the rules forbid now, with the reason; a
        :class:`~kosti.engine.protocol.Choose`, since the 1000 family has no own choices)."""
        if isinstance(action, Choose):
            raise RuleViolation(*texts.no_choice(self.rules.name, action.key))
        if self.over:
            raise RuleViolation(*texts.game_over())
        ev: list[Event] = []
        if isinstance(action, Roll):
            st = self
            if st.turn.pending is not None:
                st, goes_on = take_implied_keep(st, implied_keep(st, len(action.faces)), ev)
                if not goes_on:  # the keep itself ended the turn: the throw does not count
                    return _with_log(st, ev), tuple(ev)
            st = roll(st, action.faces, ev)
        elif isinstance(action, Keep):
            st = self
            if st.turn.pending is None:
                if (st.turn.last_keep and sorted(action.faces) == sorted(st.turn.last_keep)
                        and st.turn.scored):
                    return st, ()  # confirming the automatic keep: nothing to do
                if st.rules.selection.set_aside == "all_scoring" and st.turn.last_keep:
                    raise RuleViolation(*texts.keeps_automatic(st.turn.last_keep))
                raise RuleViolation(*texts.no_throw_to_keep())
            st = keep(st, action.faces, ev)
        elif isinstance(action, Bank):
            st = self
            if st.turn.pending is not None:
                best = keep_options(st.turn.pending, st.rules)[0]
                st, goes_on = take_implied_keep(st, best.faces, ev)
                if not goes_on:  # the keep itself ended the turn (a win, an overshoot, …)
                    return _with_log(st, ev), tuple(ev)
            st = bank(st, ev)
        else:
            raise BadInput(f"unknown action {action!r}")
        return _with_log(st, ev), tuple(ev)

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
    check_player_names(names)  # the one player-name rule (kosti.engine.names)
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
        on_barrel = kw.pop("on_barrel", None)
        if r.seat_is_state:
            if on_barrel and sc < r.barrel.entry:
                raise BadInput(f"state.{name}.on_barrel: a score of {sc} is below the barrel "
                               f"entry {r.barrel.entry}")
            kw["seated"] = bool(on_barrel) or (on_barrel is None and r.on_barrel(sc))
        elif on_barrel is not None and on_barrel != r.on_barrel(sc):
            raise BadInput(f"state.{name}.on_barrel: in {r.name} the barrel follows from the "
                           f"score, and {sc} is {'not ' if on_barrel else ''}on it")
        ps.append(PlayerState(**kw))
    gs = GameState(rules=r, players=tuple(ps), turn=TurnState(player=0, dice=r.dice_count))
    if gs.players[0].skip_next:
        ev: list[Event] = []
        gs = pass_turn(replace(gs, turn=TurnState(player=len(ps) - 1, dice=r.dice_count)),
                        len(ps) - 1, False, ev)
        gs = _with_log(gs, ev)
    return gs
