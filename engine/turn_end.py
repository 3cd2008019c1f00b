"""The end of a turn: rules.md §3.13 "after the turn ends", one small step per rule module.

:func:`end_turn` runs the steps of :data:`AFTER_TURN` in order on one :class:`TurnEnd` (the
turn's facts at its start, the players being changed, the events) and then passes the turn
(:func:`pass_turn`). Each step is one rule module's share of the resolution and cites its
section; a step that only applies while the game goes on returns at once once the mover's win
has decided it (``TurnEnd.decided``). The order is §3.13's, with one deliberate exception kept
from the first version: the overshoot counters (step 8) run before the dump-truck check (step 6),
so that an overshoot penalty that lands on exactly 555 is caught.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import texts
from .kinds import Kinds as K
from .kinds import TurnOutcome
from .records import Event, PlayerState, TurnState, event, replace
from .rules import Rules
from .standing import (
    barrel_need,
    clamp,
    partners_score,
    seated,
    team_of,
    teams,
    wins_recorded,
)

if TYPE_CHECKING:
    from .game import GameState

__all__ = ["AFTER_TURN", "TurnEnd", "end_turn", "fall", "pass_turn"]


class TurnEnd:
    """The working set of one turn's end (mutable, private to :func:`end_turn`).

    Facts at the start of the resolution: ``st`` (the state), ``r`` (its rules), ``t`` (the
    turn), ``m`` (the mover's index), ``name``, ``before`` (his recorded score), ``start`` (every
    player's score), ``was_open`` / ``was_pit`` / ``was_barrel`` (his status), ``outcome`` (how the
    turn ended), ``zero_turn`` (nothing recorded), ``first_throw`` (the bust was the turn's first
    throw). Changed by the steps: ``players`` (list of records), ``ev`` (the events),
    ``after_record`` (the mover's score after step 1), ``decided`` (the mover's win ended the game
    at step 2), ``over`` / ``winners`` / ``final_round``, ``knocked`` (players knocked off the
    barrel in step 3), ``extra_next`` (the mover plays again, §3.7), ``mark`` (index in ``ev`` of
    the event that carries the outcome)."""

    __slots__ = (
        "after_record",
        "before",
        "decided",
        "ev",
        "extra_next",
        "final_round",
        "first_throw",
        "knocked",
        "m",
        "mark",
        "name",
        "outcome",
        "over",
        "players",
        "r",
        "st",
        "start",
        "t",
        "was_barrel",
        "was_open",
        "was_pit",
        "winners",
        "zero_turn",
    )

    def __init__(self, st: GameState, outcome: TurnOutcome, ev: list[Event], first_throw: bool) -> None:
        r = self.r = st.rules
        t = self.t = st.turn
        m = self.m = t.player
        self.st = st
        players = self.players = list(st.players)
        self.start = [p.score for p in players]
        mover = players[m]
        self.before = mover.score
        self.name = mover.name
        self.was_open = mover.opened
        self.was_pit = r.pit_of(mover.score) is not None
        self.was_barrel = seated(r, mover)
        self.outcome = outcome
        self.zero_turn = outcome == "bust"
        self.first_throw = first_throw
        self.ev = ev
        self.after_record = mover.score
        self.decided = False
        self.over = False
        self.winners: tuple[int, ...] = ()
        self.final_round = st.final_round
        self.knocked: set[int] = set()
        self.extra_next = False
        self.mark = len(ev) - 1  # the triggering event (bust, dump truck, the winning keep …)


def record_score(c: TurnEnd) -> None:
    """§3.13 step 1: the mover's new score. A stop adds the turn points; a ``capped`` barrel
    records at most the entry from below (§3.6.4); a seat-type barrel seats a player at the entry
    (rules.md 1.1 §3.6.2) or makes him sit first (1.0); the first record opens the game (§3.1).
    A dump-truck turn (§3.5) scores 0; a bust or an overshoot leaves the score as it was."""
    r, t, m, name, before = c.r, c.t, c.m, c.name, c.before
    mover = c.players[m]
    ev = c.ev
    if c.outcome == "bank":
        new = before + t.points
        b = r.barrel
        seat = mover.seated
        if b.kind == "capped" and not c.was_barrel and new > b.entry:
            ev.append(event(K.CAPPED, name, texts.capped(name, new, b.entry)))
            new = b.entry
        elif b.kind in ("points", "final_range") and not c.was_barrel:
            direct = b.direct_win_from_below and r.wins(new)
            if r.seat_is_state and not direct and (r.above_entry(new) or r.wins(new)):
                # rules.md 1.1 §3.6.2: first sit (recorded exactly at the entry), then win
                need = barrel_need(r, b.entry)
                ev.append(event(K.CAPPED, name, texts.seated_at_entry(name, new, b.entry, need)))
                new, seat = b.entry, True
            elif not b.direct_win_from_below and r.wins(new):  # seat_score: actual (1.0)
                new = r.barrel_target - r.unit
                ev.append(event(K.CAPPED, name, texts.sit_first(name, new)))
        c.mark = len(ev)
        ev.append(event(K.BANK, name, texts.bank(name, t.points, before, new), t.points))
        mover = replace(mover, score=new, seated=seat)
        if not c.was_open:
            mover = replace(mover, opened=True, admission_score=new)
            if r.opening.threshold:
                ev.append(event(K.OPENED, name, texts.opened(name)))
    elif c.outcome == "dump":
        mover = replace(mover, score=0,
                        opened=c.was_open and not (r.dump_truck.reopen_required
                                                   or r.opening.reopen_after_reset))
    c.after_record = mover.score
    c.players[m] = mover


def check_win(c: TurnEnd) -> None:
    """§3.13 step 2: the mover's win on his recorded score (his team's with ``team_play``,
    §3.11): the game ends (``final_round: none``) or the final round starts for the players
    still owed a turn (§3.8: ``others_one_more_turn`` / ``equalize_turns``)."""
    r, m, name, players = c.r, c.m, c.name, c.players
    mover = players[m]
    partners = partners_score(c.st, m)
    if not (c.outcome == "bank" and wins_recorded(r, c.before, mover.score + partners, c.was_barrel)):
        return
    if r.final_round == "none" or c.final_round is not None:
        if r.final_round == "none":
            c.over = c.decided = True
            c.winners = team_of(r, len(players), m)
            if len(c.winners) > 1:
                names = ", ".join(players[i].name for i in c.winners)
                total = mover.score + partners
                c.ev.append(event(K.WIN, name, texts.team_wins(names, total), total))
            else:
                c.ev.append(event(K.WIN, name, texts.wins(name, mover.score), mover.score))
        return
    n = len(players)
    team = team_of(r, n, m)
    if r.final_round == "others_one_more_turn":
        owed = tuple((m + k) % n for k in range(1, n) if (m + k) % n not in team)
    else:  # equalize_turns: the rest of this round (seat 0 starts each round)
        owed = tuple(range(m + 1, n))
    c.final_round = owed
    c.ev.append(event(K.FINAL_ROUND, name,
                      texts.final_round(name, mover.score, [players[i].name for i in owed]),
                      mover.score))


def barrel_effects(c: TurnEnd) -> None:
    """§3.13 step 3 (§3.6): a mover who climbs onto a seat-type barrel knocks the sitters off
    (§3.6.6: a fall, back to the admission score, or a push-off fine); a sitter's failed turn
    uses an attempt, and the last attempt is a fall (§3.6.2)."""
    if c.decided:
        return
    r, m, name, players, ev = c.r, c.m, c.name, c.players, c.ev
    b = r.barrel
    mover = players[m]
    now_on = seated(r, mover)
    if now_on and not c.was_barrel:
        ev.append(event(K.BARREL, name, texts.climbs_barrel(name, mover.score), mover.score))
    if b.kind in ("points", "capped", "final_range") and b.knockoff and now_on and not c.was_barrel:
        for i, p in enumerate(players):
            if i == m or not seated(r, p):
                continue
            c.knocked.add(i)
            if b.knockoff_effect == "fall":
                players[i] = fall(r, p, ev, texts.knocked_off_by(name))
            elif b.knockoff_effect == "to_admission_score":
                back = p.admission_score if p.admission_score is not None else 0
                ev.append(event(K.KNOCKED_OFF, p.name, texts.knocked_to_admission(p.name, name, back),
                                back - p.score))
                players[i] = replace(p, score=back, barrel_attempts=0, seated=False)
            else:
                pen = b.push_off_penalty
                ev.append(event(K.KNOCKED_OFF, p.name, texts.pushed_off(p.name, name, pen), -pen))
                players[i] = replace(p, score=clamp(r, p.score - pen), barrel_attempts=0, seated=False)
    elif (c.was_barrel and c.outcome != "bank" and b.kind in ("points", "final_range")
          and b.attempts is not None and not b.attempts_are_bolts):
        att = mover.barrel_attempts + 1
        if att >= b.attempts:
            mover = fall(r, replace(mover, barrel_attempts=0), ev, texts.failed_attempts(att))
        else:
            ev.append(event(K.BARREL, name, texts.attempt_failed(name, att, b.attempts)))
            mover = replace(mover, barrel_attempts=att)
        players[m] = mover


def overtaking(c: TurnEnd) -> None:
    """§3.13 step 4 (§3.4): a stop that passes an opponent (below the mover's old score at the
    start of the turn, above his new one) fines that opponent, except one knocked off the barrel
    by this turn (one punishment per event)."""
    r = c.r
    if c.decided or not r.overtaking.enabled or c.outcome != "bank":
        return
    pen = r.overtaking.penalty
    players, m = c.players, c.m
    for i, p in enumerate(players):
        if i == m or i in c.knocked:
            continue
        if c.before < c.start[i] < players[m].score:
            c.ev.append(event(K.OVERTAKEN, p.name, texts.overtaken(c.name, p.name, pen), -pen))
            players[i] = replace(p, score=clamp(r, p.score - pen))


def bolts(c: TurnEnd) -> None:
    """§3.13 step 5 (§3.2, §3.1): a zero turn gives the mover a bolt unless his status at the
    start of the turn exempts him; the limit costs the penalty (and is the fall on an ID-D
    barrel, ``attempts_are_bolts``). RU-A's failed-opening fine counts the same way. With
    ``consecutive_only`` a recorded turn clears the bolts."""
    if c.decided:
        return
    r, m, name, ev = c.r, c.m, c.name, c.ev
    mover = c.players[m]
    bo = r.bolts
    fp = r.opening.failure_penalty
    if c.zero_turn and fp is not None and not c.was_open:
        cnt = mover.bolts + 1
        if cnt >= fp.every:
            ev.append(event(K.BOLT_PENALTY, name, texts.failed_openings_penalty(name, cnt, fp.amount),
                            -fp.amount))
            mover = replace(mover, bolts=0, score=clamp(r, mover.score - fp.amount))
        else:
            ev.append(event(K.BOLT, name, texts.failed_opening_bolt(name, cnt)))
            mover = replace(mover, bolts=cnt)
    elif bo.enabled and c.zero_turn:
        trig = bo.trigger
        hit = ("zero_turn" in trig or ("zero_first_throw" in trig and c.first_throw)
               or ("failed_opening" in trig and not c.was_open))
        exempt = (("not_open" in bo.exempt_when and not c.was_open and "failed_opening" not in trig)
                  or ("in_pit" in bo.exempt_when and c.was_pit)
                  or ("on_barrel" in bo.exempt_when and c.was_barrel))
        if hit and not exempt:
            cnt = mover.bolts + 1
            if cnt >= bo.limit:
                ev.append(event(K.BOLT_PENALTY, name, texts.bolt_penalty(name, cnt, bo.penalty),
                                -bo.penalty))
                falls = mover.falls
                if r.barrel.attempts_are_bolts and c.was_barrel:
                    falls += 1  # ID-D: the third bolt on the barrel is the fall
                    ev.append(event(K.FALL, name, texts.bolt_fall(name)))
                mover = replace(mover, bolts=0 if bo.reset_after_penalty else cnt,
                                score=clamp(r, mover.score - bo.penalty), falls=falls)
            else:
                ev.append(event(K.BOLT, name, texts.bolt(name, cnt, bo.limit)))
                mover = replace(mover, bolts=cnt)
    elif bo.enabled and bo.consecutive_only and c.outcome == "bank":
        mover = replace(mover, bolts=0)
    c.players[m] = mover


def three_farkles(c: TurnEnd) -> None:
    """§3.13 step 5, Farkle (§3.11): ``count`` zero turns in a row cost ``penalty``; a recorded
    turn resets the count."""
    tf = c.r.three_farkles
    if c.decided or not tf.enabled:
        return
    mover = c.players[c.m]
    if c.zero_turn:
        cnt = mover.farkles + 1
        if cnt >= tf.count:
            c.ev.append(event(K.THREE_FARKLES, c.name, texts.three_farkles(c.name, cnt, tf.penalty),
                              -tf.penalty))
            mover = replace(mover, farkles=0, score=clamp(c.r, mover.score - tf.penalty))
        else:
            mover = replace(mover, farkles=cnt)
    elif c.outcome == "bank":
        mover = replace(mover, farkles=0)
    c.players[c.m] = mover


def overshoot_counters(c: TurnEnd) -> None:
    """§3.13 step 8 (run before step 6 so that a penalty landing on 555 is caught): an overshoot
    (§3.8) voids the turn, marks a dot (§3.6.3) or gives the points to the lowest (F2), then
    climbs the penalty ladder; a gift that lands exactly on the target wins."""
    if c.decided or c.outcome != "overshoot":
        return
    c.mark = len(c.ev)
    c.players[c.m] = _overshoot(c.st, c.players, c.ev)
    r = c.r
    if r.final_round == "none":  # welfare: a gift that lands exactly on the target wins
        for i, p in enumerate(c.players):
            if i != c.m and p.score != c.start[i] and r.wins(p.score):
                c.over, c.winners = True, (i,)
                c.ev.append(event(K.WIN, p.name, texts.wins(p.name, p.score), p.score))
                break


def dump_truck(c: TurnEnd) -> None:
    """§3.13 step 6 (§3.5): every player whose score changed this turn and now stands exactly on
    the dump truck's value drops to 0 — the mover by his own record, anyone by a fine where
    ``via_penalties``."""
    dt = c.r.dump_truck
    if c.decided or not dt.enabled:
        return
    r, players = c.r, c.players
    for i, p in enumerate(players):
        if p.score != dt.value or p.score == c.start[i]:
            continue
        by_record = i == c.m and c.after_record == dt.value and c.outcome == "bank"
        if by_record or dt.via_penalties:
            c.ev.append(event(K.DUMP_TRUCK, p.name, texts.dump_truck_landed(p.name, dt.value), -p.score))
            players[i] = replace(p, score=0, opened=p.opened and not (
                dt.reopen_required or r.opening.reopen_after_reset))


def zone_bookkeeping(c: TurnEnd) -> None:
    """§3.13 step 7: a fine that takes a sitter below the barrel entry ends his seat (not a fall,
    §6.31); a player who lands in a pit is told what he must reach (§3.3)."""
    if c.decided:
        return
    r, players = c.r, c.players
    for i, p in enumerate(players):
        if (p.barrel_attempts or p.seated) and not seated(r, p):
            players[i] = replace(p, barrel_attempts=0, seated=False)
        pit = r.pit_of(players[i].score)
        if pit is not None and r.pit_of(c.start[i]) is not pit:
            c.ev.append(event(K.PIT, players[i].name,
                              texts.pit(players[i].name, pit.lo, pit.hi, pit.exit_value(r.unit))))


def count_turn(c: TurnEnd) -> None:
    """The mover has played a turn (``PlayerState.turns``, for ``equalize_turns``, §3.8)."""
    mover = c.players[c.m]
    c.players[c.m] = replace(mover, turns=mover.turns + 1)


def skip_barrels(c: TurnEnd) -> None:
    """§3.13 step 7, RU-C skip-turn barrels (rules.md 1.1 §3.7): recording a score inside a zone
    skips the next turn (``skip``) or gives an extra turn that must leave the zone
    (``extra_turn``; ``extra_turn_minus_100`` also fines a failed one). With ``trigger:
    turn_end`` (1.0) any turn that ends inside counts."""
    sb = c.r.skip_barrels
    if c.over or not sb.zones:
        return
    r, t, m, name, players = c.r, c.t, c.m, c.name, c.players
    mover = players[m]
    zone = sb.zone_of(mover.score)
    # rules.md 1.1 §3.7: a skip is triggered by *recording* a score inside a zone; a zero
    # turn records nothing (trigger turn_end: any turn ending inside, rules.md 1.0)
    landed = c.outcome == "bank" or sb.trigger == "turn_end"
    still = sb.mode != "skip" and t.extra and zone is not None and sb.zone_of(c.before) == zone
    if zone is None or not (landed or still):
        return
    lo, hi = sb.zones[zone]
    if sb.mode == "skip":
        c.ev.append(event(K.SKIP_TURN, name, texts.skips_next(name, lo, hi)))
        players[m] = replace(mover, skip_next=True)
    elif t.extra and sb.zone_of(c.before) == zone:
        fine = sb.penalty if sb.mode == "extra_turn_minus_100" else None
        pen = fine or 0
        c.ev.append(event(K.SKIP_TURN, name, texts.still_on_skip_barrel(name, lo, hi, fine), -pen))
        players[m] = replace(mover, skip_next=True, score=clamp(r, mover.score - pen))
    else:
        c.ev.append(event(K.EXTRA_TURN, name, texts.extra_turn(name, lo, hi)))
        c.extra_next = True


#: The after-turn resolution of rules.md §3.13, one step per rule module, in the order they run.
AFTER_TURN: tuple[Callable[[TurnEnd], None], ...] = (
    record_score,        # 1. the mover's new score
    check_win,           # 2. win check for the mover
    barrel_effects,      # 3. barrel effects
    overtaking,          # 4. overtaking fines
    bolts,               # 5. bolts for the mover
    three_farkles,       # 5. Farkle: three Farkles in a row (§3.11)
    overshoot_counters,  # 8. overshoot counters / penalties (before 6: a fine may land on 555)
    dump_truck,          # 6. dump truck for every player whose score changed
    zone_bookkeeping,    # 7. seat validity, pits
    count_turn,          #    the turn is played
    skip_barrels,        # 7. skip-turn barrels (RU-C), while the game goes on
)


def end_turn(st: GameState, outcome: TurnOutcome, ev: list[Event], *,
             first_throw: bool = False) -> GameState:
    """Finish the mover's turn (rules.md §3.13 after-turn steps, :data:`AFTER_TURN`) and pass it
    on. ``outcome``: ``bank`` (record the turn points), ``bust`` (zero turn), ``dump``
    (running-total dump truck), ``overshoot`` (exact ending passed); ``first_throw``: a bust on
    the turn's first throw (bolt trigger ``zero_first_throw``). Appends the events to ``ev`` and
    marks one of them with the outcome (:attr:`Event.outcome`)."""
    c = TurnEnd(st, outcome, ev, first_throw)
    for step in AFTER_TURN:
        step(c)
    if 0 <= c.mark < len(ev):
        e = ev[c.mark]
        ev[c.mark] = Event(e.kind, e.player, e.text_en, e.text_ru, e.points, e.faces, outcome)
    r, t = c.r, c.t
    if c.over:
        return replace(st, players=tuple(c.players), over=True, winners=c.winners,
                       final_round=c.final_round, turn=replace(t, points=0, pending=None, hot=False,
                                                               confirm=False, dice=r.dice_count))
    offer = (t.dice if r.high_stakes.enabled and outcome == "bank" and not t.hot
             and t.dice < r.dice_count else 0)
    return pass_turn(replace(st, players=tuple(c.players), final_round=c.final_round), c.m,
                     c.extra_next, ev, offer)


def fall(r: Rules, p: PlayerState, ev: list[Event], why: tuple[str, str],
         penalty: int | None = None) -> PlayerState:
    """A barrel fall (§3.6.2): −``fall_penalty`` (or ``penalty``), falls + 1; the
    ``max_falls``-th fall sets the score to 0. ``why``: the reason, ``(english, russian)``."""
    b = r.barrel
    falls = p.falls + 1
    if b.max_falls is not None and falls >= b.max_falls:
        ev.append(event(K.FALL, p.name, texts.fall_to_zero(p.name, why, falls, b.max_falls), -p.score))
        return replace(p, score=0, falls=0, barrel_attempts=0, seated=False,
                       opened=p.opened and not r.opening.reopen_after_reset)
    pen = b.fall_penalty if penalty is None else penalty
    ev.append(event(K.FALL, p.name, texts.fall(p.name, why, pen), -pen))
    return replace(p, score=clamp(r, p.score - pen), falls=falls, barrel_attempts=0, seated=False)


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
        ev.append(event(K.DOT, p.name, texts.dot(p.name, r.target, running, dots, b.dots_limit)))
        if dots >= b.dots_limit:
            falls = p.falls + 1
            if b.max_falls is not None and falls >= b.max_falls:
                ev.append(event(K.FALL, p.name, texts.dots_to_zero(p.name, dots), -p.score))
                return replace(p, dots=0, falls=0, score=0,
                               opened=p.opened and not r.opening.reopen_after_reset)
            ev.append(event(K.FALL, p.name, texts.dots_penalty(p.name, dots, b.dot_penalty), -b.dot_penalty))
            return replace(p, dots=0, falls=falls, score=clamp(r, p.score - b.dot_penalty))
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
                ev.append(event(K.OVERSHOOT, p.name, texts.gift_lost(p.name, r.target, t.points, q.name)))
            else:
                ev.append(event(K.TRANSFER, p.name, texts.transfer(p.name, r.target, t.points, q.name),
                                t.points))
                players[low] = replace(q, score=got)
        else:
            ev.append(event(K.OVERSHOOT, p.name, texts.overshoot_alone(p.name, r.target)))
    else:
        ev.append(event(K.OVERSHOOT, p.name, texts.overshoot(p.name, r.target, running)))
    ladder = r.ending.overshoot_penalties
    if ladder:
        for step in ladder:
            if p.overshoots == step.at:
                if step.to_zero:
                    ev.append(event(K.OVERSHOOT, p.name, texts.overshoots_to_zero(p.name, step.at), -p.score))
                    p = replace(p, score=0)
                else:
                    ev.append(event(K.OVERSHOOT, p.name,
                                    texts.overshoots_penalty(p.name, step.at, step.penalty), -step.penalty))
                    p = replace(p, score=clamp(r, p.score - step.penalty))
        if p.overshoots >= ladder[-1].at:
            p = replace(p, overshoots=0)
    return p


def pass_turn(st: GameState, m: int, extra: bool, ev: list[Event], offer: int = 0) -> GameState:
    """Pass the turn on from player ``m`` (rules.md §1.2): the same player again for an extra
    turn (§3.7); the next one owed a final-round turn, or the final round's winners when none is
    left (§3.8, a tie shares the win, §6.40); otherwise the next seat, skipping (and counting)
    the turns of players who must skip (§3.7). ``offer``: dice left over for the next player's
    high-stakes throw (§3.11)."""
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
            all_teams = teams(r, n)
            totals = [sum(players[i].score for i in team) for team in all_teams]
            best = max(totals)
            winners = tuple(sorted(i for team, tot in zip(all_teams, totals) if tot == best
                                   for i in team))
            names = ", ".join(players[i].name for i in winners)
            ev.append(event(K.WIN, names, texts.final_round_over(names, len(winners), best), best))
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
        ev.append(event(K.SKIP_TURN, p.name, texts.skips_turn(p.name)))
        players[nxt] = replace(p, skip_next=False, turns=p.turns + 1)
        nxt = (nxt + 1) % n
    ev.append(event(K.TURN, players[nxt].name, texts.next_turn(players[nxt].name, offer)))
    return replace(st, players=tuple(players),
                   turn=TurnState(player=nxt, dice=r.dice_count, offer=offer))
