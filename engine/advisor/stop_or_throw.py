"""Turn advisor, the DP: "throw or stop" under the house rules as a turn-level optimal policy.

**Stop or throw** — :class:`TurnPolicy` (via :func:`policy_for`; worded by
:func:`kosti.engine.advisor.advise`): a turn-level optimal policy by dynamic programming over
(turn points × dice to throw × hot/confirmation mode × first throw/second attempt). The
*objective* is the expected **recorded points of the turn**: the mover's recorded score change
when the turn ends, minus the mean change of the opponents' scores (so an overtaking fine, a
knock-off from the barrel or a dump truck count as what they do to the table), penalties
included. Every consequence comes from the engine itself: each distinct situation after a keep
is played through :meth:`GameState.apply` once (a "probe") and its outcome — a forced end
(dump truck on the running total, overshoot, a win), whether a stop is allowed
(:meth:`GameState.stop_reason`: opening, pit, barrel, hot-dice obligation, confirmation throw)
and what a stop records — is read from the resulting state. The policy therefore follows the
engine's rules (rules.md v1.1 included) by construction.

Limits, stated honestly: this is a **turn-level** policy — it maximises the points this turn
records, not the probability of winning the game (no opponent model, no look-ahead past the
turn: a bolt or a barrel attempt costs only what it costs in this turn's recorded score).
Turn points above ``cap`` (default: the target) stop whenever a stop is allowed, and a throw
forced beyond ``cap`` + ``margin`` point units (default 100) is valued at 0; the probability of reaching them in
one turn is negligible in every preset. The high-stakes offer (F2) is
ignored (the turn is valued as a throw of all dice).

Assumptions the probes rely on (each checked by ``tests/engine/test_advisor.py`` against direct
play): what a keep triggers (a forced end, whether a stop is allowed, what a stop records) depends
only on the turn points reached, whether the dice are hot (not on how many dice are left
otherwise), whether the throw was the confirmation throw and whether it was the turn's first
scoring throw;
a zero throw's consequences do not depend on the turn points it loses (§1.5: they are never
recorded); an instant win depends only on the total it records (turn points + the throw's).

The throw tables it sums over come from :mod:`kosti.engine.advisor.throw_tables`.
"""

from __future__ import annotations

import math
import sys
from collections import OrderedDict
from typing import Any

import numpy as np

from ..game import Bank, Event, GameState, Keep, Roll, TurnState, replace
from ..rules import Rules
from ..turn import bank as _bank
from ..turn import keep as _keep
from ..turn import roll as _roll
from .throw_tables import _dp_table

__all__ = ["CONFIRM", "HOT", "NORMAL", "TurnPolicy", "policy_for", "policy_key"]

#: Turn modes of the DP: an ordinary throw, the compulsory throw of all dice after hot dice
#: (rules.md §1.4 ``must_roll`` / ``may_roll_or_bank``), the confirmation throw (RU-B,
#: ``confirm_and_bank``).
NORMAL, HOT, CONFIRM = 0, 1, 2

_Value = tuple[float, float]  # (expected recorded points of the turn, probability it records)


class TurnPolicy:
    """The optimal turn-level policy for one situation: the rules, every player's record and the
    mover (everything of a :class:`GameState` except the progress of the turn).

    Build with :func:`policy_for`. ``value(state)`` / ``decide(state)`` accept any state of this
    situation's turn. Values are memoised, so the first query solves the reachable part of the
    turn (milliseconds to a few hundred, see ``benchmarks/bench_advisor.py``) and later queries
    are lookups. ``cap``: turn points above which a stop is taken whenever allowed (points);
    ``margin``: point units above ``cap`` beyond which a throw the rules force is valued at 0
    (100: the values differ from a 400-unit margin by at most 0.002 points in every preset,
    measured from a fresh turn, and the solve is 35–45 % cheaper where hot dice or an
    overshoot force throws above the target)."""

    def __init__(self, state: GameState, cap: int | None = None, margin: int = 100) -> None:
        if state.over:
            raise ValueError("the game is over: there is no turn to advise")
        r = state.rules
        t = state.turn
        self.rules: Rules = r
        self.mover: int = t.player
        self.name: str = state.players[t.player].name
        self.n: int = r.dice_count
        self.cap: int = cap if cap is not None else r.target
        self.hard_cap: int = self.cap + margin * r.unit
        self.base: GameState = replace(state, turn=TurnState(player=t.player, dice=r.dice_count,
                                                             extra=t.extra), log=state.log)
        self._turns0 = state.players[t.player].turns
        self._v0 = self._table_value(self.base)
        self._choose = r.selection.set_aside == "at_least_one"
        self._roll: dict[tuple[int, int, int, bool, bool], _Value] = {}
        self._post: dict[tuple[int, bool, bool, bool], tuple[Any, ...]] = {}
        self._post_val: dict[tuple[int, int, bool, bool], _Value] = {}
        self._zero: dict[tuple[str, bool, bool, int], tuple[Any, ...]] = {}
        self._win: dict[tuple[int, int], _Value] = {}
        self.probes = 0
        self._choice: dict[int, bool] = {}
        self._tables = {k: _dp_table(r, k) for k in range(1, r.dice_count + 1)}

    # -- helpers on engine states ------------------------------------------------------------
    def _table_value(self, st: GameState) -> float:
        scores = [p.score for p in st.players]
        own = scores[self.mover]
        others = scores[:self.mover] + scores[self.mover + 1:]
        return own - (sum(others) / len(others) if others else 0.0)

    def _ended(self, st: GameState) -> bool:
        return (st.over or st.turn.player != self.mover
                or st.players[self.mover].turns != self._turns0)

    def _terminal(self, st: GameState, events: tuple[Event, ...]) -> _Value:
        recorded = any(e.kind in ("bank", "instant_win") and e.player == self.name
                       for e in events)
        return self._table_value(st) - self._v0, 1.0 if recorded else 0.0

    def _pre(self, tp: int, n: int, mode: int, first: bool, retried: bool) -> GameState:
        t = TurnState(player=self.mover, points=tp, dice=n, throws=1 if (retried or not first) else 0,
                      scored=not first, hot=mode != NORMAL, confirm=mode == CONFIRM,
                      retried=retried, extra=self.base.turn.extra)
        return replace(self.base, turn=t)

    def _play(self, st: GameState, faces: tuple[int, ...], keep: tuple[int, ...] | None
              ) -> tuple[GameState, tuple[Event, ...]]:
        """One probe: throw ``faces`` (and set ``keep`` aside when the throw awaits a keep) through the
        engine's turn steps (:func:`kosti.engine.turn.roll` / :func:`~kosti.engine.turn.keep`), the
        functions :meth:`GameState.apply` runs for a throw and a keep, without the game log lines that
        ``apply`` also writes and no probe reads (about a quarter of a probe's time)."""
        self.probes += 1
        ev: list[Event] = []
        st2 = _roll(st, faces, ev)
        if keep is not None and not self._ended(st2) and st2.turn.pending is not None:
            st2 = _keep(st2, keep, ev)
        return st2, tuple(ev)

    @staticmethod
    def _key(st: GameState) -> tuple[int, int, int, bool, bool]:
        t = st.turn
        mode = CONFIRM if t.confirm else HOT if t.hot else NORMAL
        return (t.points, t.dice, mode, not t.scored and t.points == 0, t.retried)

    # -- the DP -------------------------------------------------------------------------------
    def _continuing(self, st: GameState) -> tuple[Any, ...]:
        """Outcome record of a state where the turn goes on: ('go', key, stop value or None)."""
        stop = None
        if st.stop_reason() is None:
            self.probes += 1
            ev: list[Event] = []
            st2 = _bank(st, ev)
            stop = self._terminal(st2, tuple(ev))
        return ("go", self._key(st), stop)

    def _outcome_value(self, rec: tuple[Any, ...]) -> _Value:
        if rec[0] == "end":
            end: _Value = rec[1]
            return end
        _, key, stop = rec
        assert stop is None or isinstance(stop, tuple), rec
        if stop is not None and key[0] > self.cap:
            return stop
        if key[0] > self.hard_cap:
            return stop if stop is not None else (0.0, 0.0)
        go = self._roll_value(key)
        if stop is not None and stop[0] >= go[0]:
            return stop
        return go

    def _after(self, st: GameState, faces: tuple[int, ...], keep: tuple[int, ...] | None,
               expect: int | None = None) -> tuple[Any, ...]:
        """Play one throw (and keep) from ``st``; ``expect``: the turn points the keep must reach
        (checked against the engine: a probe that realised another keep is a bug)."""
        st2, ev = self._play(st, faces, keep)
        if expect is not None:
            for e in ev:
                if e.kind == "bank" and e.player == self.name and e.points != expect:
                    raise AssertionError(f"advisor probe recorded {e.points}, not {expect}")
        if self._ended(st2):
            return ("end", self._terminal(st2, ev))
        if st2.turn.pending is not None:
            raise AssertionError(f"advisor probe left a keep pending: {st2.turn}")
        return self._continuing(st2)

    def _post_value(self, pkey: tuple[int, int, bool, bool], pre: Any, faces: tuple[int, ...],
                    keep: tuple[int, ...]) -> _Value:
        """Value of the situation after a keep: ``pkey`` = (turn points, dice left (0 = hot
        dice), after the confirmation throw, first scoring throw of the turn). Memoised; the
        engine is probed once per (turn points, hot dice, confirmation, first) — the number of
        dice left changes only which throw comes next, never what the keep itself triggers or
        what a stop records (see the module docstring)."""
        v = self._post_val.get(pkey)
        if v is None:
            tp2, left, confirm, first = pkey
            probe_key = (tp2, left == 0, confirm, first)
            rec = self._post.get(probe_key)
            if rec is None:
                rec = self._post[probe_key] = self._after(pre(), faces,
                                                          keep if self._choose else None, tp2)
            if rec[0] == "go" and rec[1][0] != tp2:
                raise AssertionError(f"advisor probe reached {rec[1][0]} turn points, not {tp2}")
            if rec[0] == "go" and left:
                k = rec[1]
                rec = ("go", (k[0], left, k[2], k[3], k[4]), rec[2])
            v = self._post_val[pkey] = self._outcome_value(rec)
        return v

    def _chooses(self, mode: int, pre: Any) -> bool:
        """Whether the player picks his keep after a throw in this mode: asked of the engine
        once per mode (a scoring throw that leaves the state waiting for a :class:`Keep`). The
        confirmation throw, for one, sets aside its best keep by itself (RU-B)."""
        got = self._choice.get(mode)
        if got is None:
            got = False
            if self._choose:
                st = pre()
                faces = (1,) + (2, 3, 4, 6, 6)[:st.turn.dice - 1]
                st2, _ = st.apply(Roll(faces))
                got = not self._ended(st2) and st2.turn.pending is not None
            self._choice[mode] = got
        return got

    def _roll_value(self, key: tuple[int, int, int, bool, bool]) -> _Value:
        got = self._roll.get(key)
        if got is not None:
            return got
        tp, n, mode, first, retried = key
        table = self._tables[n]
        cache: list[GameState] = []

        def pre() -> GameState:
            if not cache:
                cache.append(self._pre(tp, n, mode, first, retried))
            return cache[0]

        confirm = mode == CONFIRM
        post_val = self._post_val
        ev_sum = rec_sum = 0.0
        if self._chooses(mode, pre):
            vals = []
            recs = []
            for pts, left, faces, keep in table.succ:
                pkey = (tp + pts, left, confirm, first)
                v = post_val.get(pkey)
                if v is None:
                    v = self._post_value(pkey, pre, faces, keep)
                vals.append(v[0])
                recs.append(v[1])
            if vals and table.py_rows is not None:  # small table: plain Python, first best wins
                for row, w in table.py_rows:
                    b = row[0]
                    bv = vals[b]
                    for i in row[1:]:
                        if vals[i] > bv:
                            b, bv = i, vals[i]
                    ev_sum += w * bv
                    rec_sum += w * recs[b]
            elif vals:
                va = np.array(vals + [-np.inf])
                ra = np.array(recs + [0.0])
                best = table.opt[table.rows, va[table.opt].argmax(axis=1)]
                ev_sum = float(table.weights @ va[best])
                rec_sum = float(table.weights @ ra[best])
        else:  # the engine sets aside the best keep: sum over the best keeps' successors
            for i, w in zip(table.best, table.best_weights):
                pts, left, faces, keep = table.succ[i]
                pkey = (tp + pts, left, confirm, first)
                v = post_val.get(pkey)
                if v is None:
                    v = self._post_value(pkey, pre, faces, keep)
                ev_sum += w * v[0]
                rec_sum += w * v[1]
        for kind, weight, faces in table.zero:
            zkey = (kind, first, retried, mode)
            rec = self._zero.get(zkey)
            if rec is None:
                rec = self._zero[zkey] = self._after(pre(), faces, None)
            v = self._outcome_value(rec)
            ev_sum += weight * v[0]
            rec_sum += weight * v[1]
        for weight, faces, keep, pts in table.wins:
            wkey = (tp + pts, mode)  # an instant win records the turn's points + the throw's
            v = self._win.get(wkey)
            if v is None:
                v = self._win[wkey] = self._outcome_value(self._after(pre(), faces, keep))
            ev_sum += weight * v[0]
            rec_sum += weight * v[1]
        total = 6 ** n
        out = (ev_sum / total, rec_sum / total)
        self._roll[key] = out
        return out

    def solve(self, key: tuple[int, int, int, bool, bool]) -> _Value:
        """Expected (recorded points, record probability) of throwing from a DP key, playing on
        optimally. Raises the recursion limit as needed (the DP recurses once per turn level)."""
        need = 6 * (self.hard_cap // self.rules.unit) + 1000
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)
        return self._roll_value(key)

    # -- public queries -----------------------------------------------------------------------
    def value(self, state: GameState) -> tuple[_Value | None, _Value, tuple[int, ...] | None]:
        """(stop value or None, throw value, best keep or None) of a state of this turn.

        In the keep phase (``at_least_one``) each legal keep is played through the engine and the
        best keep with its best continuation is chosen; "stop" then means "set aside that keep and
        stop". Values: (expected recorded points of the turn, probability the turn records)."""
        t = state.turn
        if t.pending is not None:
            best: tuple[_Value | None, _Value, tuple[int, ...]] | None = None
            for opt in state.moves().keeps:
                st2, ev = state.apply(Keep(opt.faces))
                if self._ended(st2):
                    v = self._terminal(st2, ev)
                    cand = (v, v, opt.faces)
                else:
                    rec = self._continuing(st2)
                    go = self.solve(rec[1])
                    cand = (rec[2], go, opt.faces)
                score = max(cand[1][0], cand[0][0] if cand[0] is not None else -math.inf)
                if best is None or score > max(best[1][0], best[0][0] if best[0] is not None
                                               else -math.inf):
                    best = cand
            assert best is not None
            return best
        stop = None
        if state.stop_reason() is None:
            st2, ev = state.apply(Bank())
            stop = self._terminal(st2, ev)
        return stop, self.solve(self._key(state)), None


_POLICIES: OrderedDict[tuple[Any, ...], TurnPolicy] = OrderedDict()
_MAX_POLICIES = 64


def policy_key(state: GameState) -> tuple[Any, ...]:
    """What one :class:`TurnPolicy` covers: the rules, every player's record, the mover, an extra
    turn and the final round — every part of ``state`` except the progress of the turn."""
    t = state.turn
    return (state.rules, state.players, t.player, t.extra, state.final_round)


def policy_for(state: GameState) -> TurnPolicy:
    """The (memoised) :class:`TurnPolicy` of the situation of ``state``; the 64 most recent
    situations are kept. Raises ``ValueError`` if the game is over."""
    if state.over:
        raise ValueError("the game is over: there is no turn to advise")
    key = policy_key(state)
    pol = _POLICIES.get(key)
    if pol is None:
        pol = _POLICIES[key] = TurnPolicy(state)
        if len(_POLICIES) > _MAX_POLICIES:
            _POLICIES.popitem(last=False)
    else:
        _POLICIES.move_to_end(key)
    return pol
