"""Turn advisor: the exact risk of the next throw and "throw or stop" under the house rules.

Two layers, both pure (no I/O) and built only on the engine's public API:

1. **Throw risk** — :func:`throw_classes`, :func:`bust_probability`, :func:`points_distribution`:
   every one of the 6^N ordered throws of N dice, enumerated through its sorted multiset (weight
   N!/∏c_f!, so the sums are exact), scored by :func:`kosti.engine.scoring.score_throw` /
   :func:`~kosti.engine.scoring.legal_keeps` under the preset's table. A throw is a *zero throw*
   when it has no legal keep (rules.md §1.5) — the two-dice double of §1.7.3 is a legal keep
   where the table allows it — or when ``toxic_twos`` wipes it (F2: four or more 2s). Exact
   :class:`fractions.Fraction` results.

2. **Stop or throw** — :func:`advise`: a turn-level optimal policy by dynamic programming over
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
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from collections.abc import Sequence
from typing import Any

import numpy as np

from .game import Bank, Event, GameState, Keep, Roll, TurnState, replace
from .rules import Rules
from .scoring import ScoringRules, legal_keeps, score_throw

__all__ = [
    "ThrowClass", "Advice", "throw_kind", "throw_classes", "bust_probability", "points_distribution",
    "expected_points", "advise", "TurnPolicy", "policy_for", "prepare_tables",
]

#: Turn modes of the DP: an ordinary throw, the compulsory throw of all dice after hot dice
#: (rules.md §1.4 ``must_roll`` / ``may_roll_or_bank``), the confirmation throw (RU-B,
#: ``confirm_and_bank``).
NORMAL, HOT, CONFIRM = 0, 1, 2


# ----------------------------------------------------------------------------------------------
# Layer 1: the exact risk of one throw


@dataclass(frozen=True, slots=True)
class ThrowClass:
    """All throws of ``n`` dice that the rules treat alike.

    ``weight``: how many of the 6^n ordered throws belong to the class (int). ``faces``: one
    representative throw (sorted faces). ``kind``: ``"zero"`` (no legal keep, rules.md §1.5),
    ``"toxic"`` (F2 toxic twos wipe the turn), ``"instant_win"`` (§3.10) or ``"score"``.
    ``options``: the keeps the player may choose, best first, as ``(points, dice kept, faces)``;
    one entry (the best keep, §2.1) where ``selection.set_aside`` is ``all_scoring``.
    """

    weight: int
    faces: tuple[int, ...]
    kind: str
    options: tuple[tuple[int, int, tuple[int, ...]], ...]


def _multinomial(faces: tuple[int, ...]) -> int:
    w = math.factorial(len(faces))
    for f in set(faces):
        w //= math.factorial(faces.count(f))
    return w


def throw_kind(rules: Rules, faces: Sequence[int]) -> tuple[str, int]:
    """What the rules make of one throw: ``(kind, points of the best keep)`` with ``kind`` one of
    ``"zero"`` (no legal keep, rules.md §1.5), ``"toxic"`` (F2 toxic twos: four or more 2s wipe
    the turn), ``"instant_win"`` (§3.10) or ``"score"``; points are 0 for ``zero`` and ``toxic``.
    Raises :class:`~kosti.engine.errors.BadInput` for bad faces."""
    ts = score_throw(faces, rules.scoring)
    if ts.instant_win:
        return "instant_win", ts.points
    if rules.toxic_twos and list(faces).count(2) >= 4:
        return "toxic", 0
    if ts.bust:
        return "zero", 0
    return "score", ts.points


@lru_cache(maxsize=256)
def _classes(rules: Rules, n: int) -> tuple[ThrowClass, ...]:
    scoring = rules.scoring
    choose = rules.selection.set_aside == "at_least_one"
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for faces in itertools.combinations_with_replacement(range(1, 7), n):
        w = _multinomial(faces)
        kind = throw_kind(rules, faces)[0]
        ts = score_throw(faces, scoring)
        if kind in ("score", "instant_win"):
            keeps = legal_keeps(faces, scoring) if choose else [ts]
            opts: dict[tuple[int, int], tuple[int, ...]] = {}
            for k in keeps:  # best first: the first keep of each (points, dice) pair stands for it
                opts.setdefault((k.points, len(k.scoring_dice)), tuple(k.scoring_dice))
            options = tuple((p, c, f) for (p, c), f in opts.items())
        else:
            options = ()
        key = (kind, tuple((p, c) for p, c, _ in options))
        if kind == "instant_win":
            key = (kind, faces)  # each instant-win throw is probed on its own (rare)
        g = groups.get(key)
        if g is None:
            groups[key] = [w, faces, kind, options]
        else:
            g[0] += w
    return tuple(ThrowClass(w, f, k, o) for w, f, k, o in groups.values())


def throw_classes(rules: Rules, n: int) -> tuple[ThrowClass, ...]:
    """The throws of ``n`` dice (1..``rules.dice_count``) grouped by what the rules make of them.

    Weights sum to 6**n. Raises ``ValueError`` for ``n`` outside 1..dice_count."""
    if not 1 <= n <= rules.dice_count:
        raise ValueError(f"dice to throw must be 1-{rules.dice_count}, got {n}")
    return _classes(rules, n)


def bust_probability(rules: Rules, n: int) -> Fraction:
    """Exact probability that one throw of ``n`` dice scores nothing under ``rules``.

    Counts the ordered throws (of 6**n) with no legal keep (rules.md §1.5; the two-dice double of
    §1.7.3 is a legal 0-point keep where ``two_dice_double_zero`` is on) or wiped by toxic twos
    (F2). A second attempt (§1.7.1) is not folded in: it is a second throw. Raises ``ValueError``
    for ``n`` outside 1..dice_count."""
    zero = sum(c.weight for c in throw_classes(rules, n) if c.kind in ("zero", "toxic"))
    return Fraction(zero, 6 ** n)


def points_distribution(rules: Rules, n: int) -> dict[int, Fraction]:
    """Exact distribution of the points one throw of ``n`` dice adds with its best keep
    (rules.md §2.1): points → probability; a zero throw counts as 0 points, an instant win as the
    points of its throw. Probabilities sum to 1."""
    out: dict[int, Fraction] = {}
    total = 6 ** n
    for c in throw_classes(rules, n):
        pts = c.options[0][0] if c.options else 0
        out[pts] = out.get(pts, Fraction(0)) + Fraction(c.weight, total)
    return dict(sorted(out.items()))


def expected_points(rules: Rules, n: int) -> Fraction:
    """Exact expected points the next throw of ``n`` dice adds with its best keep (0 for a zero
    throw), without the loss of the turn points a zero throw costs."""
    return sum((p * q for p, q in points_distribution(rules, n).items()), Fraction(0))


@dataclass(frozen=True)
class _DPTable:
    """The throws of n dice arranged for the DP: ``succ`` — distinct (points, dice left (0 = hot dice), throw,
    keep) successors of scoring throws; ``opt[c, j]`` — successor index of option j of scoring
    class c (padded with ``len(succ)``, a -inf slot; column 0 is the best keep); ``rows`` —
    ``arange(len(opt))``; ``best`` / ``best_weights`` — the successors of best keeps and the
    ordered throws whose best keep each is; ``weights[c]`` — ordered throws in class c;
    ``zero`` — (kind, weight, throw) of the zero / toxic classes; ``wins`` — (weight, throw, keep,
    points) of instant-win throws."""

    succ: tuple[tuple[int, int, tuple[int, ...], tuple[int, ...]], ...]
    opt: Any
    rows: Any
    weights: Any
    best: tuple[int, ...]
    best_weights: tuple[int, ...]
    zero: tuple[tuple[str, int, tuple[int, ...]], ...]
    wins: tuple[tuple[int, tuple[int, ...], tuple[int, ...], int], ...]
    #: ``(row, weight)`` per scoring class as plain Python where the table is small (numpy's call
    #: overhead outweighs its speed there: at most ``_PY_ROWS`` classes), else None
    py_rows: Any = None


#: Largest table (scoring classes) whose best keeps are chosen in plain Python (measured crossover).
_PY_ROWS = 40


@lru_cache(maxsize=256)
def _dp_table(rules: Rules, n: int) -> _DPTable:
    succ: dict[tuple[int, int], tuple[int, int, tuple[int, ...], tuple[int, ...]]] = {}
    index: dict[tuple[int, bool], int] = {}
    rows: list[list[int]] = []
    is_best: set[tuple[int, int]] = set()
    weights: list[int] = []
    zero: dict[str, list[Any]] = {}
    wins = []
    for c in throw_classes(rules, n):
        if c.kind in ("zero", "toxic"):
            z = zero.setdefault(c.kind, [c.kind, 0, c.faces])
            z[1] += c.weight
        elif c.kind == "instant_win":
            wins.append((c.weight, c.faces, c.options[0][2], c.options[0][0]))
        else:
            row = []
            for j, (pts, kept, kfaces) in enumerate(c.options):
                k = (pts, n - kept)
                if k not in index:
                    index[k] = len(succ)
                    succ[k] = (pts, n - kept, c.faces, kfaces)
                elif j == 0 and k not in is_best:
                    # represent a successor by a throw whose *best* keep it is, so that a probe
                    # where the engine sets aside the best keep by itself realises it exactly
                    succ[k] = (pts, n - kept, c.faces, kfaces)
                if j == 0:
                    is_best.add(k)
                row.append(index[k])
            rows.append(row)
            weights.append(c.weight)
    width = max((len(r) for r in rows), default=1)
    pad = len(succ)
    opt = np.array([r + [pad] * (width - len(r)) for r in rows], dtype=np.intp).reshape(-1, width)
    best_w: dict[int, int] = {}
    for r, w in zip(rows, weights):
        best_w[r[0]] = best_w.get(r[0], 0) + w
    best = tuple(sorted(best_w))
    return _DPTable(tuple(succ.values()), opt, np.arange(opt.shape[0]),
                    np.array(weights, dtype=float), best, tuple(best_w[i] for i in best),
                    tuple(tuple(z) for z in zero.values()), tuple(wins),
                    tuple(zip(map(tuple, rows), weights)) if len(rows) <= _PY_ROWS else None)


# ----------------------------------------------------------------------------------------------
# Layer 2: the turn-level policy


@dataclass(frozen=True, slots=True)
class Advice:
    """Advice for the player to move (cli.md ``kosti advise``).

    ``player``; ``dice_to_throw`` (dice of the next throw); ``turn_points`` (points, before the
    pending keep in the keep phase); ``bust_probability`` (exact, one throw of those dice, float in
    [0, 1]); ``expected_points`` (expected points that throw adds with its best keep);
    ``may_stop`` (the engine allows a stop now); ``advice`` ``"throw"`` | ``"stop"``;
    ``stop_value`` / ``throw_value`` (expected recorded points of the turn — the objective of the
    module docstring — if the player stops now (None when he may not) / throws and then plays on
    optimally); ``requirement`` (``"open"``, ``"pit"``, ``"barrel"`` or None) and
    ``record_probability`` (probability that this turn records its points — opens, leaves the pit,
    wins from the barrel — under the advised play); ``keep`` (in the keep phase: the dice to set
    aside, sorted); ``at_risk`` (turn points a zero throw would lose); ``why`` / ``why_ru``.
    """

    player: str
    dice_to_throw: int
    turn_points: int
    bust_probability: float
    expected_points: float
    may_stop: bool
    advice: str
    stop_value: float | None
    throw_value: float
    requirement: str | None
    record_probability: float
    keep: tuple[int, ...] | None
    at_risk: int
    why: str
    why_ru: str

    def to_cli_json(self) -> dict[str, Any]:
        """Exactly the cli.md ``kosti advise --json`` document: its eleven keys, in its order."""
        d = self.to_json()
        return {k: d[k] for k in CLI_KEYS}

    def to_json(self) -> dict[str, Any]:
        """Every field: the cli.md ``kosti advise`` keys plus ``requirement``,
        ``record_probability``, ``keep`` and ``at_risk`` (the dashboard's ``/api/advice``)."""
        r = lambda v: None if v is None else round(v, 2)  # noqa: E731
        return {
            "player": self.player, "dice_to_throw": self.dice_to_throw,
            "turn_points": self.turn_points, "bust_probability": round(self.bust_probability, 6),
            "expected_points": r(self.expected_points), "may_stop": self.may_stop,
            "advice": self.advice, "stop_value": r(self.stop_value),
            "throw_value": r(self.throw_value), "requirement": self.requirement,
            "record_probability": round(self.record_probability, 4),
            "keep": None if self.keep is None else list(self.keep), "at_risk": self.at_risk,
            "why": self.why, "why_ru": self.why_ru,
        }


#: The keys of ``kosti advise --json``, in the order of ../shared/docs/cli.md.
CLI_KEYS = ("player", "dice_to_throw", "turn_points", "bust_probability", "expected_points",
            "may_stop", "advice", "stop_value", "throw_value", "why", "why_ru")

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
        self.probes += 1
        st2, ev = st.apply(Roll(faces))
        if keep is not None and not self._ended(st2) and st2.turn.pending is not None:
            st3, ev2 = st2.apply(Keep(keep))
            return st3, ev + ev2
        return st2, ev

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
            st2, ev = st.apply(Bank())
            stop = self._terminal(st2, ev)
        return ("go", self._key(st), stop)

    def _outcome_value(self, rec: tuple[Any, ...]) -> _Value:
        if rec[0] == "end":
            return rec[1]
        _, key, stop = rec
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
            for opt in state.allowed().keeps:
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


def prepare_tables(rules: Rules) -> None:
    """Build and cache the per-rules throw tables of 1..``rules.dice_count`` dice (throw classes and DP
    tables), which the first :func:`advise` under ``rules`` would otherwise build itself (1.5–120 ms
    per preset, ``benchmarks/bench_advisor.py``). Idempotent: a lookup once built. The dashboard calls it in
    a background thread whenever a game is put on the table."""
    for n in range(1, rules.dice_count + 1):
        _dp_table(rules, n)


def policy_for(state: GameState) -> TurnPolicy:
    """The (memoised) :class:`TurnPolicy` of the situation of ``state``; the 64 most recent
    situations are kept. Raises ``ValueError`` if the game is over."""
    if state.over:
        raise ValueError("the game is over: there is no turn to advise")
    t = state.turn
    key = (state.rules, state.players, t.player, t.extra, state.final_round)
    pol = _POLICIES.get(key)
    if pol is None:
        pol = _POLICIES[key] = TurnPolicy(state)
        if len(_POLICIES) > _MAX_POLICIES:
            _POLICIES.popitem(last=False)
    else:
        _POLICIES.move_to_end(key)
    return pol


def _pct(p: float, ru: bool = False) -> str:
    """A probability as a percentage for people: one decimal below 10 %, else whole; Russian uses
    the decimal comma."""
    x = 100 * p
    if 0 < x < 0.1:
        text = "< 0.1 %"
    elif x > 99.9 and x < 100:
        text = "> 99.9 %"
    else:
        text = f"{x:.1f} %" if x < 10 else f"{x:.0f} %"
    return text.replace(".", ",") if ru else text


def _requirement(state: GameState) -> str | None:
    r = state.rules
    i = state.turn.player
    p = state.players[i]
    if not p.opened and r.opening.threshold > 0:
        return "open"
    if state.in_pit(i):
        return "pit"
    if state.on_barrel(i):
        return "barrel"
    return None


def _dice(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


_REQ_EN = {"open": "to open the game", "pit": "to leave the pit", "barrel": "to win from the barrel"}
_REQ_RU = {"open": "открыть игру", "pit": "выбраться из ямы", "barrel": "выиграть с бочки"}


def advise(state: GameState) -> Advice:
    """Advice for the player to move in ``state`` (see :class:`Advice`; objective and limits in the
    module docstring). Raises ``ValueError`` when the game is over."""
    pol = policy_for(state)
    r = state.rules
    t = state.turn
    stop, go, keep = pol.value(state)
    if t.pending is not None:
        assert keep is not None
        left = t.dice - len(keep)
        n = left or r.dice_count
        at_risk = t.points + sum(o.points for o in state.allowed().keeps if o.faces == keep)
    else:
        n = t.dice
        at_risk = t.points
    bust = float(bust_probability(r, n))
    gain = float(expected_points(r, n))
    may_stop = stop is not None
    throw = not may_stop or go[0] > stop[0]  # type: ignore[index]
    chosen = go if throw else stop
    assert chosen is not None
    req = _requirement(state)
    pb, pb_ru = _pct(bust), _pct(bust, ru=True)
    pr, pr_ru = _pct(chosen[1]), _pct(chosen[1], ru=True)
    need_en = f"; {pr} {_REQ_EN[req]} this turn" if req else ""
    need_ru = f"; {pr_ru} — шанс {_REQ_RU[req]} за этот ход" if req else ""
    dice_ru = f"{n} {'кость' if n == 1 else 'кости' if n < 5 else 'костей'}"
    if not may_stop and t.pending is None and not t.scored and t.points == 0:
        en = (f"throw {_dice(n)}: {pb} to score nothing, {gain:.0f} points expected from the "
              f"throw{need_en}")
        ru = (f"бросайте {dice_ru}: {pb_ru} — риск пустого броска, в среднем {gain:.0f} очков "
              f"за бросок{need_ru}")
    elif not may_stop:
        why_not = state.stop_reason() if t.pending is None else None
        reason_en = why_not.text_en if why_not else "a stop is not allowed now"
        reason_ru = why_not.text_ru if why_not else "остановиться сейчас нельзя"
        en = f"throw — you may not stop yet: {reason_en}; {pb} to lose the {at_risk}{need_en}"
        ru = (f"бросайте — остановиться пока нельзя: {reason_ru}; {pb_ru} — риск потерять "
              f"{at_risk}{need_ru}")
    elif throw and at_risk == 0:
        en = (f"nothing to lose yet — throw {_dice(n)} ({pb} to score nothing, {gain:.0f} points "
              f"expected from the throw)")
        ru = (f"терять пока нечего — бросайте {dice_ru} ({pb_ru} — риск пустого броска, в "
              f"среднем {gain:.0f} очков за бросок)")
    elif throw:
        en = (f"{pb} to lose the {at_risk} — throw (worth {go[0]:.0f} on average against "
              f"{stop[0]:.0f} for stopping)")  # type: ignore[index]
        ru = (f"{pb_ru} — риск потерять {at_risk}: бросайте (в среднем {go[0]:.0f} против "
              f"{stop[0]:.0f}, если остановиться)")  # type: ignore[index]
    elif round(go[0]) == round(stop[0]):  # type: ignore[index]
        en = (f"{pb} to lose the {at_risk} — stop and record: throwing gains nothing on average "
              f"({stop[0]:.0f} either way)")  # type: ignore[index]
        ru = (f"{pb_ru} — риск потерять {at_risk}: хватит, запишите — бросок в среднем ничего не "
              f"добавляет ({stop[0]:.0f} в обоих случаях)")  # type: ignore[index]
    else:
        en = (f"{pb} to lose the {at_risk} — stop and record (throwing is worth {go[0]:.0f} on "
              f"average against {stop[0]:.0f})")  # type: ignore[index]
        ru = (f"{pb_ru} — риск потерять {at_risk}: хватит, запишите (бросок даёт в среднем "
              f"{go[0]:.0f} против {stop[0]:.0f})")  # type: ignore[index]
    if keep is not None:
        en = f"set aside {' '.join(map(str, keep))}; " + en
        ru = f"отложите {' '.join(map(str, keep))}; " + ru
    return Advice(
        player=state.players[t.player].name, dice_to_throw=n, turn_points=t.points,
        bust_probability=bust, expected_points=gain, may_stop=may_stop,
        advice="throw" if throw else "stop", stop_value=None if stop is None else stop[0],
        throw_value=go[0], requirement=req, record_probability=chosen[1], keep=keep,
        at_risk=at_risk, why=en, why_ru=ru)
