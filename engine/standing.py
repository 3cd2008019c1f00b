"""Where each player stands and what the rules let the mover do (rules.md §1.6, §3.3, §3.6, §3.8, §3.11).

Pure queries on a :class:`~kosti.engine.game.GameState` (duck-typed: ``rules``, ``players``,
``turn``) and on :class:`~kosti.engine.rules.Rules`: the stop constraints, the barrel seat and its
requirement, teams, the mid-turn and recorded win checks, the legal keeps of a throw. Nothing here
changes a state; :mod:`kosti.engine.turn` and :mod:`kosti.engine.turn_end` build on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import texts
from .records import KeepOption, PlayerState, Reason
from .rules import Rules
from .scoring import ThrowScore, legal_keeps, score_keep, score_throw

if TYPE_CHECKING:
    from .game import GameState


def best_throw(faces: tuple[int, ...], rules: Rules) -> ThrowScore:
    """Best keep of one throw (:func:`kosti.engine.scoring.score_throw`, precomputed lookup)."""
    return score_throw(faces, rules.scoring)


def keep_points(kept: tuple[int, ...], throw: tuple[int, ...], rules: Rules) -> int:
    """Value of the kept dice of ``throw``; raises IllegalKeep (a RuleViolation) for dead dice."""
    return score_keep(kept, rules.scoring, throw=throw).points


def keep_options(faces: tuple[int, ...], rules: Rules) -> tuple[KeepOption, ...]:
    """Every legal keep of a throw, best first (more points, then more dice)."""
    return tuple(KeepOption(tuple(k.scoring_dice), k.points)
                 for k in legal_keeps(faces, rules.scoring))


def seated(r: Rules, p: PlayerState) -> bool:
    """True if player ``p`` sits on a seat-type barrel: his ``seated`` state where
    ``Rules.seat_is_state`` (rules.md 1.1 §3.6.2; a fine that takes him below the entry ends it),
    else his recorded score's range (:meth:`Rules.on_barrel`)."""
    if r.seat_is_state:
        return p.seated and r.barrel.entry <= p.score < r.barrel_target
    return r.on_barrel(p.score)


def stop_block(st: GameState, points: int, *, ignore_hot: bool) -> Reason | None:
    """Why the mover may not stop with ``points`` turn points (None = he may), rules.md §1.6;
    ``ignore_hot`` leaves out the hot-dice obligation (the confirmation throw's own check, the
    exact-ending win of §3.13 step 4)."""
    r = st.rules
    t = st.turn
    p = st.players[t.player]
    n = r.dice_count
    if not t.scored:
        return Reason.of(texts.nothing_to_record())
    if t.hot and not ignore_hot:
        if r.hot_dice == "must_roll":
            return Reason.of(texts.hot_must_roll(n))
        if r.hot_dice == "confirm_and_bank":
            return Reason.of(texts.confirmation_due(n))
    running = p.score + points
    thr = r.opening.threshold
    if not p.opened and points < thr:
        return Reason.of(texts.needs_opening(thr - points, thr))
    pit = r.pit_of(p.score)
    if pit is not None:
        ex = pit.exit_value(r.unit)
        if running < ex:
            return Reason.of(texts.needs_pit_exit(ex - running, pit.lo, pit.hi))
    if seated(r, p) and not barrel_win(r, p.score, running):
        total = barrel_need(r, p.score)
        need = total - points
        return Reason.of(texts.needs_barrel_win(need, total))
    if r.ending.mode == "strictly_above" and running == r.target:
        return Reason.of(texts.not_exactly_target(r.target))
    return None


def barrel_win(r: Rules, score: int, running: int) -> bool:
    """True if a running total wins from the barrel: reaches the barrel target (RU-A, ID-A,
    ID-D, RU-B), or passes it where ``ending.mode`` is ``strictly_above`` (RU-A "1005", §6.30)."""
    tgt = r.barrel_target
    if r.barrel.kind != "capped" and r.ending.mode == "strictly_above":
        return running > tgt
    return running >= tgt


def barrel_need(r: Rules, score: int) -> int:
    """Turn points needed to win from the barrel at ``score``."""
    tgt = r.barrel_target
    if r.barrel.kind != "capped" and r.ending.mode == "strictly_above":
        return tgt + r.unit - score
    return tgt - score


def teams(r: Rules, n: int) -> tuple[tuple[int, ...], ...]:
    """Player indices per team of ``n`` players (``team_play``, F2 §3.11: partners sit opposite,
    seats j, j + n/size, …); one team per player when team play is off."""
    if not r.team_play.enabled:
        return tuple((i,) for i in range(n))
    k = n // r.team_play.size
    return tuple(tuple(range(j, n, k)) for j in range(k))


def team_of(r: Rules, n: int, i: int) -> tuple[int, ...]:
    """The indices of player ``i``'s team (just ``(i,)`` without team play, §3.11)."""
    if not r.team_play.enabled:
        return (i,)
    k = n // r.team_play.size
    return tuple(range(i % k, n, k))


def partners_score(st: GameState, i: int) -> int:
    """Recorded points of player ``i``'s partners (0 without team play)."""
    if not st.rules.team_play.enabled:
        return 0
    return sum(st.players[j].score for j in team_of(st.rules, len(st.players), i) if j != i)


def may_win_now(st: GameState, running: int, points: int) -> bool:
    """Mid-turn win check (rules.md 1.1 §3.13 step 4): the running total meets the winning
    condition and every stop constraint holds — the hot-dice obligation too (RU-A "this throw
    must be made!"), except under an ``exact`` ending, where a further throw could only overshoot
    (or everywhere with ``hot_dice_win: any_ending``, rules.md 1.0)."""
    r = st.rules
    p = st.players[st.turn.player]
    b = r.barrel
    on = seated(r, p)
    if b.kind == "capped":
        if not on:
            return False
        if running < r.barrel_target:
            return False
    elif on:
        if not barrel_win(r, p.score, running):
            return False
    else:
        if not r.wins(running + partners_score(st, st.turn.player)):
            return False
        if b.kind in ("points", "final_range") and not b.direct_win_from_below:
            return False
    ignore_hot = r.ending.mode == "exact" or r.hot_dice_win == "any_ending"
    return stop_block(st, points, ignore_hot=ignore_hot) is None


def wins_recorded(r: Rules, before: int, new: int, was_barrel: bool) -> bool:
    """Win check on a recorded score (§3.13 after-turn step 2)."""
    if r.barrel.kind == "capped":
        return was_barrel and new >= r.barrel_target
    if was_barrel:
        return barrel_win(r, before, new)
    return r.wins(new)



def clamp(r: Rules, score: int) -> int:
    """A score after a fine: at least 0 where ``negative_scores`` is ``clamp_zero`` (§3.9)."""
    return max(0, score) if r.negative_scores == "clamp_zero" else score

