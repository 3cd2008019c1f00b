"""One throw, one keep, one stop: the mid-turn rules of 1000 / Farkle (rules.md §1.2–§1.7, §3.10, §3.13).

:func:`roll`, :func:`keep` and :func:`bank` take a :class:`~kosti.engine.game.GameState` and a
list of events to append to, and return the new state; each runs the mid-turn checks of §3.13
(instant win, running dump truck, immediate overshoot, the win that needs no stop) and hands a
finished turn to :func:`kosti.engine.turn_end.end_turn`. :func:`take_implied_keep` is the one
place where a stop or a throw made while a throw awaits its keep sets that keep aside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import texts
from .errors import BadInput, RuleViolation
from .kinds import Kinds as K
from .kinds import Outcomes
from .records import Event, event, replace
from .standing import best_throw, keep_options, keep_points, may_win_now, stop_block
from .turn_end import end_turn

if TYPE_CHECKING:
    from .game import GameState

__all__ = ["apply_keep", "bank", "implied_keep", "keep", "roll", "take_implied_keep"]


def roll(st: GameState, faces: tuple[int, ...], ev: list[Event]) -> GameState:
    """A throw of ``faces`` (rules.md §1.2): the instant win (§3.10), toxic twos (F2), a bust or
    the second attempt (§1.5, §1.7.1), the high-stakes bonus (§3.11), the confirmation throw
    (§1.4, §6.5) or the scoring throw, whose dice are set aside at once (``all_scoring``) or wait
    for a keep (``at_least_one``, §1.3). Raises :class:`BadInput` for the wrong number of dice."""
    r = st.rules
    t = st.turn
    if len(faces) != t.dice:
        if t.offer and t.throws == 0 and len(faces) == t.offer:
            t = replace(t, dice=t.offer, stakes=True)  # plays for the high-stakes bonus
        else:
            en, ru = texts.wrong_dice_count(st.to_move or "", t.dice, t.offer if t.throws == 0 else 0, faces)
            raise BadInput(en, ru)
    name = st.players[t.player].name
    ts = best_throw(faces, r)
    first = not t.scored and t.points == 0
    stakes_throw = t.stakes and t.throws == 0
    confirm = t.confirm
    t = replace(t, throws=t.throws + 1, last_roll=faces, last_keep=(), hot=False, confirm=False)
    st = replace(st, turn=t)
    if ts.instant_win:
        ev.append(event(K.THROW, name, texts.throw(name, faces, ts.points), ts.points, faces))
        return instant_win(st, ts.points, ev)
    if r.toxic_twos and faces.count(2) >= 4:
        ev.append(event(K.TOXIC_TWOS, name, texts.toxic_twos(name, faces), 0, faces))
        return end_turn(st, Outcomes.BUST, ev)
    if ts.bust:
        if confirm:
            ev.append(event(K.BUST, name, texts.confirmation_failed(name, faces, t.points), -t.points,
                            faces))
            return end_turn(st, Outcomes.BUST, ev)
        if first and r.first_throw_retry and not t.retried and not t.hot and not t.stakes:
            ev.append(event(K.RETRY, name, texts.retry(name, faces), 0, faces))
            return replace(st, turn=replace(t, retried=True))
        ev.append(event(K.BUST, name, texts.bust(name, faces, t.points, r.dice_count == 6), -t.points,
                        faces))
        return end_turn(st, Outcomes.BUST, ev, first_throw=first)
    if stakes_throw:
        bonus = r.high_stakes.bonus
        ev.append(event(K.HIGH_STAKES, name, texts.high_stakes(name, bonus), bonus, faces))
        t = replace(t, points=t.points + bonus)
        st = replace(st, turn=t)
    if confirm:
        # Confirmation throw (RU-B): its own scoring dice count (rules.md §6.5a); then the turn is
        # recorded if the stop constraints allow it; otherwise it records nothing and passes
        # (confirm_below_minimum: lose, rules.md 1.1 §6.5d) or simply continues (continue).
        ev.append(event(K.THROW, name, texts.throw_confirmation(name, faces, ts.points), ts.points,
                        faces))
        st = apply_keep(st, tuple(ts.scoring_dice), ts.points, ev, announce=False)
        if st.over or st.turn.player != t.player or st.turn.extra != t.extra or not st.turn.scored:
            return st
        short = stop_block(st, st.turn.points, ignore_hot=True)
        if short is None:
            ev.append(event(K.CONFIRMATION, name, texts.confirmed(name), st.turn.points))
            return end_turn(replace(st, turn=replace(st.turn, hot=False)), Outcomes.BANK, ev)
        if r.confirm_below_minimum == "lose":
            pts = st.turn.points
            ev.append(event(K.CONFIRMATION, name, texts.confirmed_short(name, pts, short.text), 0))
            return end_turn(replace(st, turn=replace(st.turn, hot=False)), Outcomes.BUST, ev)
        return st
    if r.selection.set_aside == "at_least_one":
        ev.append(event(K.THROW, name, texts.throw_up_to(name, faces, ts.points), ts.points, faces))
        return replace(st, turn=replace(st.turn, pending=faces))
    ev.append(event(K.THROW, name, texts.throw(name, faces, ts.points), ts.points, faces))
    return apply_keep(st, tuple(ts.scoring_dice), ts.points, ev, announce=False)


def implied_keep(st: GameState, thrown: int) -> tuple[int, ...]:
    """The keep implied by throwing ``thrown`` dice after a pending throw: the best legal keep
    that leaves exactly that many dice (all dice again after hot dice); the best keep overall if
    none does (the roll is then refused for its dice count)."""
    t = st.turn
    assert t.pending is not None
    n = st.rules.dice_count
    opts = keep_options(t.pending, st.rules)
    for o in opts:  # best first
        if (t.dice - len(o.faces) or n) == thrown:
            return o.faces
    return opts[0].faces


def take_implied_keep(st: GameState, kept: tuple[int, ...],
                       ev: list[Event]) -> tuple[GameState, bool]:
    """The keep that a :class:`Bank` or a :class:`Roll` implies while a throw awaits its keep —
    the one place for every action that implies a keep. ``kept`` (faces) is set aside exactly as
    an explicit :class:`Keep` would set it aside, with all mid-turn checks of §3.13 (a win, a dump
    truck, an overshoot may end the turn there). Returns ``(state, goes_on)``: ``goes_on`` is
    False when that keep ended the turn, so the implying action has nothing left to do; otherwise
    the stop (its constraints checked on ``state``, hot dice included) or the throw follows.
    Raises :class:`RuleViolation` for an illegal keep."""
    before = st.turn
    after = keep(st, kept, ev)
    t = after.turn
    goes_on = not after.over and t.scored and t.player == before.player and t.throws == before.throws
    return after, goes_on


def keep(st: GameState, kept: tuple[int, ...], ev: list[Event]) -> GameState:
    """Set aside ``kept`` (faces) from the pending throw (rules.md §1.3); raises
    :class:`RuleViolation` for an empty keep or dead dice."""
    t = st.turn
    assert t.pending is not None
    if not kept:
        raise RuleViolation(*texts.keep_one())
    pts = keep_points(tuple(sorted(kept)), t.pending, st.rules)
    st = replace(st, turn=replace(t, pending=None))
    return apply_keep(st, tuple(sorted(kept)), pts, ev, announce=True)


def apply_keep(st: GameState, kept: tuple[int, ...], pts: int, ev: list[Event],
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
        ev.append(event(K.KEEP, name, texts.keep(name, kept, pts, points), pts, kept))
    elif pts or kept:
        en, ru = texts.turn_so_far((ev[-1].text_en, ev[-1].text_ru), points)
        ev[-1] = replace(ev[-1], text_en=en, text_ru=ru)
    # F3 literal reading: the opening must come from the first throw of the turn.
    if (first_scoring and not p.opened and r.opening.first_throw_only
            and pts < r.opening.threshold):
        ev.append(event(K.BUST, name, texts.first_throw_opening(name, r.opening.threshold)))
        return end_turn(st, Outcomes.BUST, ev)
    dt = r.dump_truck
    if dt.enabled and dt.trigger == "running" and running == dt.value:
        ev.append(event(K.DUMP_TRUCK, name, texts.dump_truck_running(name, dt.value), -p.score))
        return end_turn(st, Outcomes.DUMP, ev)
    if r.overshoots(running) and r.ending.overshoot_immediate:
        return end_turn(st, Outcomes.OVERSHOOT, ev)
    if r.final_round == "none" and st.final_round is None and may_win_now(st, running, points):
        return end_turn(st, Outcomes.BANK, ev)
    if hot:
        if r.hot_dice == "confirm_and_bank":
            ev.append(event(K.HOT_DICE, name, texts.hot_dice_confirm(name, n)))
        elif r.hot_dice == "must_roll":
            ev.append(event(K.HOT_DICE, name, texts.hot_dice_must(name, n)))
        else:
            ev.append(event(K.HOT_DICE, name, texts.hot_dice_may(name, n)))
    return st


def bank(st: GameState, ev: list[Event]) -> GameState:
    """A stop ("хватит", rules.md §1.6): records the turn, or voids it past an exact target
    (§3.8); raises :class:`RuleViolation` with the reason when stopping is not allowed now."""
    why = st.stop_reason()
    if why is not None:
        raise RuleViolation(*texts.may_not_stop(why.text))
    r = st.rules
    p = st.players[st.turn.player]
    running = p.score + st.turn.points
    if r.overshoots(running):
        return end_turn(st, Outcomes.OVERSHOOT, ev)
    return end_turn(st, Outcomes.BANK, ev)


def instant_win(st: GameState, pts: int, ev: list[Event]) -> GameState:
    """A throw that wins at once (rules.md §3.10, §3.13 mid-turn step 1): the turn points and
    the throw's ``pts`` are recorded and the game ends."""
    t = st.turn
    p = st.players[t.player]
    total = t.points + pts
    ev.append(replace(event(K.INSTANT_WIN, p.name, texts.instant_win(p.name, t.last_roll), total,
                            t.last_roll), outcome=Outcomes.INSTANT_WIN))
    players = list(st.players)
    players[t.player] = replace(p, score=p.score + total, opened=True, turns=p.turns + 1)
    return replace(st, players=tuple(players), over=True, winners=(t.player,),
                   turn=replace(t, points=0, pending=None, hot=False, confirm=False))

