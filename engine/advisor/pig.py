"""Second objective of the advisor: the **win probability** of two-player Pig under optimal play.

Pig (games.md §6, :mod:`kosti.engine.games.pig`): one die; a series adds each face until the player
stops ("хватит", records the series) or throws a 1 (the series is lost). The whole game is small
enough to solve exactly: the state of a decision is (my score, the opponent's score, the series so
far) — about ``target``³ states — and the optimal policy maximises the probability of winning the
*game*, not the points of the series (Neller & Presser, "Optimal Play of the Dice Game Pig", The
UMAP Journal 25(1), 2004, 25–47: value iteration over P(i, j, k)).

The model follows the table's :class:`~kosti.engine.games.pig.PigParams` exactly:

* ``equal_series`` false — the paper's game: the first to *record* ``target`` wins at once.
  ``P(i, j, k) = max(roll, hold)`` with ``roll = (1 − W(j, i))/6 + Σ_{r=2..6} P(i, j, k + r)/6``,
  ``hold = 1 − W(j, i + k)`` (1 when ``i + k ≥ target``), ``W(i, j) = P(i, j, 0)``; holding needs a
  throw in the series (kosti's rule; at ``k = 0`` only a throw is possible — the paper allows a hold
  at 0, which is never optimal, so its numbers stand).
* ``equal_series`` true (kosti's default) — every player gets the same number of series: when the
  *starter* records ``target`` or more, the other player has one last series and must end above
  him (level is a tie); when the second player reaches ``target`` first, the round is complete
  and he wins. So the roles differ: :math:`W_A` (the starter to move) and :math:`W_B` (the second
  player to move), and the starter past the target may go on throwing to make the last series
  harder. The last series is solved exactly: ``L(d)`` = the chance to score more than ``d`` in one
  series, throwing on while behind or level (a tie is never better than one more throw: 5/6 > any
  tie value below it). The starter's throws past the target are cut at a deficit ``D`` where holding
  is provably optimal for every score pair (``L(D) ≤ min W_B / 6``: holding then beats any throw's
  upper bound ``(1 − W_B)/6 + 5/6``); the solver checks the condition and widens ``D`` if needed, so
  the values are exact (to the iteration tolerance, 1e-12).
* ``tie`` — a tie can only arise in the last series, by stopping level; a shared victory counts as
  half a win (``shared``); under ``play_off`` a tie is valued as the play-off (one series each, in
  seat order, until one is ahead), solved in :func:`playoff_value`.
* ``order_throw`` — who starts is decided before the first series; the model advises from the first
  series on (the order throw has no decision).

Refused, with the reason (:class:`PigModelRefused`): more than two players (the state would need
every score and the seat order), a play-off in progress, the order throw, a game that is over, and
targets above :data:`MAX_TARGET` (the solve grows with target³).

Cost: the solve is vectorised over the score pairs (numpy) and cached per parameters:
``solve_time_s`` on the solution; ``benchmarks/bench_advisor.py --pig`` measures it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "MAX_TARGET",
    "OBJECTIVE_WIN",
    "PigAdvice",
    "PigModelRefused",
    "PigSolution",
    "advise_pig",
    "last_series_table",
    "pig_refusal",
    "playoff_value",
    "solve",
    "tie_value",
]

#: Largest target the win model solves (the solve grows with target³: ~1 s at 100 here).
MAX_TARGET = 200
#: The objective, named in the CLI JSON and on the dashboard.
OBJECTIVE_WIN = ("win: probability of winning the game under optimal play by both players "
                 "(Pig, two players; a shared victory counts half)")
_TOL = 1e-12


class PigModelRefused(ValueError):
    """The win model does not cover this state; ``text_en`` / ``text_ru`` say why."""

    def __init__(self, text_en: str, text_ru: str) -> None:
        super().__init__(text_en)
        self.text_en = text_en
        self.text_ru = text_ru


# ----------------------------------------------------------------------------------------------
# The last series (equal_series) and the play-off


def last_series_table(dmax: int, level_value: float = 0.5) -> np.ndarray:
    """``L[d]`` for d = 0..dmax: the probability that one series (played optimally) ends with more
    than ``d`` points when the player may stop level for ``level_value`` (0.5: a shared victory
    counted half). ``L[0]`` is the chance to end above 0 — throwing once more than the deficit
    needs. float64 array of length dmax + 1, decreasing."""
    # g[e]: win chance with a deficit e still to beat (before the next throw); e < 0 means ahead
    g = np.zeros(dmax + 7)
    # index shift: g_at(e) for e >= -6 lives at g[e + 6]
    g[:6] = 1.0  # ahead: stop and win
    level = max(level_value, 5.0 / 6.0)  # level (e == 0): stop for the tie, or throw once more
    for e in range(dmax + 1):
        roll = sum(g[e - r + 6] for r in range(2, 7)) / 6.0
        g[e + 6] = max(level, roll) if e == 0 else roll
    # L[d] is the value at the start of the series with deficit d: at k = 0 a stop is not
    # allowed, so L[0] is a throw: 5/6
    out = g[6:].copy()
    out[0] = sum(g[-r + 6] for r in range(2, 7)) / 6.0
    return out


@lru_cache(maxsize=8)
def playoff_value(cap: int = 400) -> tuple[float, float]:
    """(first, second): the win probabilities of the player who throws first and second in a
    two-player play-off (one series each until one is ahead; ``tie`` = ``play_off``). Solved as a
    fixed point: the second player knows the first's series ``x`` and throws until he is above
    it (a new tie repeats the play-off, worth ``1 − u`` to him, ``u`` = the first's value); the
    first stops where 1 − (the second's chance against ``x``) beats throwing on. ``cap``: series
    points above which the first stops (the second's chance against them is < 1e-12)."""
    u = 0.5
    for _ in range(200):
        tie2 = 1.0 - u
        # second's chance to beat x (x >= 1), may stop level for tie2 (never better than 5/6)
        L = last_series_table(cap + 6, tie2)
        # second's chance when the first busted (x = 0): any scoring series wins, a 1 -> replay
        beat0 = 5.0 / 6.0 + tie2 / 6.0
        f = np.zeros(cap + 7)
        for x in range(cap + 6, 0, -1):
            hold = 1.0 - L[x]
            if x >= cap:
                f[x] = hold
                continue
            roll = (1.0 - beat0) / 6.0 + sum(f[x + r] for r in range(2, 7)) / 6.0
            f[x] = max(hold, roll)
        new = (1.0 - beat0) / 6.0 + sum(f[r] for r in range(2, 7)) / 6.0
        if abs(new - u) < _TOL:
            u = new
            break
        u = new
    return u, 1.0 - u


# ----------------------------------------------------------------------------------------------
# The whole game


@dataclass(frozen=True)
class PigSolution:
    """The solved two-player Pig of one parameter set.

    ``target``; ``equal_series``; ``wa[i, j]``: win probability of the player to move at
    the start of his series with score ``i`` against ``j`` — the starter when ``equal_series``,
    else either player; ``wb[i, j]``: the same for the second player (``equal_series``; equal to
    ``wa`` otherwise); ``last[d]``: :func:`last_series_table`; ``deficit_cap``: the starter's
    throws past the target are solved up to a lead of this many points (holding is optimal beyond
    it, checked); ``iterations``; ``solve_time_s`` (CPU seconds)."""

    target: int
    equal_series: bool
    wa: Any
    wb: Any
    last: Any
    deficit_cap: int
    iterations: int
    solve_time_s: float

    def series_values(self, starter_to_move: bool, i: int, j: int, k_at_least: int = 0
                      ) -> tuple[Any, Any]:
        """(roll, hold): win probabilities of throwing / stopping at every series total
        k = 0..K (K ≥ ``k_at_least``) for the player to move with score ``i`` against ``j``
        (``starter_to_move``: he started the round; ignored without ``equal_series``), both
        players optimal afterwards. ``hold[0]`` is NaN (a stop needs a throw in the series).
        float64 arrays indexed by k."""
        t = self.target
        a_role = self.equal_series and starter_to_move
        w_opp = self.wb if a_role else self.wa
        end = (self.deficit_cap + j - i) if a_role else (t - i)  # from here on: hold, always
        kk = max(end, k_at_least) + 6
        hold = np.empty(kk + 1)
        for k in range(kk + 1):
            tot = i + k
            if tot < t:
                hold[k] = 1.0 - w_opp[j, tot]
            elif a_role:
                hold[k] = 1.0 - self.last[min(tot - j, len(self.last) - 1)]
            else:
                hold[k] = 1.0
        hold[0] = np.nan
        bust = (1.0 - w_opp[j, i]) / 6.0
        p = np.empty(kk + 1)
        roll = np.full(kk + 1, np.nan)
        for k in range(kk, -1, -1):
            if k + 6 > kk:
                p[k] = hold[k]  # past ``end``: holding is optimal (wins, or beyond the cap)
                continue
            roll[k] = bust + (p[k + 2] + p[k + 3] + p[k + 4] + p[k + 5] + p[k + 6]) / 6.0
            if k >= end and k > 0:
                p[k] = hold[k]
            else:
                p[k] = roll[k] if k == 0 else max(roll[k], hold[k])
        n = kk - 5
        return roll[:n], hold[:n]


def _sweep(w_opp: np.ndarray, hpad: np.ndarray, kmax: int, forced: np.ndarray | None,
           t: int) -> np.ndarray:
    """One value-iteration sweep: P(i, j, k) for k = kmax..0 given the opponent's table; returns
    P(·, ·, 0). ``hpad[i + k, j]``: the hold value at series total k (rows ≥ t: past the target);
    ``forced[i + k - j + t]`` true where a hold is forced (the starter past the deficit cap)."""
    bust = (1.0 - w_opp.T) / 6.0  # bust[i, j] = (1 - W_opp[j, i]) / 6
    i_idx = np.arange(t)[:, None]
    j_idx = np.arange(t)[None, :]
    ring = [hpad[k:k + t] for k in range(kmax + 6, kmax, -1)]  # P at k+6 .. k+1 (forced holds)
    # ring holds P_{k+6} .. P_{k+1} (ring[-1] = P_{k+1}); s5 = P_{k+2} + ... + P_{k+6}
    s5 = ring[0] + ring[1] + ring[2] + ring[3] + ring[4]
    p = ring[-1]
    for k in range(kmax, -1, -1):
        hold = hpad[k:k + t]
        roll = bust + s5 / 6.0
        if k == 0:
            p_k = roll
        else:
            p_k = np.maximum(roll, hold)
        if forced is not None:
            f = forced[(i_idx + k) - j_idx + t]
            p_k = np.where(f, hold, p_k)
        # shift the window: s5 for k-1 is P_{k+1} .. P_{k+5}
        s5 = s5 - ring[0] + ring[-1]
        ring.pop(0)
        ring.append(p_k)
        p = p_k
    return p


@lru_cache(maxsize=8)
def solve(target: int = 100, equal_series: bool = False) -> PigSolution:
    """Solve two-player Pig with these parameters (see the module docstring) by value iteration,
    vectorised over the score pairs; cached. The ``tie`` parameter does not change the solution:
    stopping level in the last series is never better than one more throw (5/6 against a tie
    worth at most :func:`playoff_value`'s larger value, checked here). Raises
    :class:`PigModelRefused` for a target outside 2..:data:`MAX_TARGET`."""
    if not 2 <= target <= MAX_TARGET:
        raise PigModelRefused(
            f"the win model is solved for targets 2–{MAX_TARGET} (target {target}: about "
            f"{target}³ states, too slow to solve at the table)",
            f"модель выигрыша считается для цели 2–{MAX_TARGET} (цель {target}: около "
            f"{target}³ состояний — слишком долго считать за столом)")
    c0 = time.process_time()
    t = target
    iterations = 0
    if not equal_series:
        hpad_tail = np.ones((t + 12, t))
        w = np.zeros((t, t))
        while True:
            iterations += 1
            hpad = np.vstack([1.0 - w.T, hpad_tail])
            new = _sweep(w, hpad, t - 1, None, t)
            delta = float(np.abs(new - w).max())
            w = new
            if delta < _TOL or iterations > 20000:
                break
        return PigSolution(t, False, w, w, last_series_table(1), 0, iterations,
                           time.process_time() - c0)
    if max(playoff_value()) >= 5.0 / 6.0:  # pragma: no cover - 0.70 here
        raise AssertionError("a play-off worth more than one more throw: the model needs a tie value")
    dcap = 2 * t + 40  # enough at every target tried (2..200); widened below if the check fails
    while True:
        last = last_series_table(dcap + 2 * t + 12)
        rows = np.arange(t, 2 * t + dcap + 12)[:, None]
        cols = np.arange(t)[None, :]
        # hold values of the starter past the target: 1 - L((i + k) - j), rows i + k = t, t + 1, ...
        a_tail = 1.0 - last[rows - cols]
        b_tail = np.ones((t + 12, t))
        # forced[d + t], d = (i + k) - j: the starter's hold is forced when d >= dcap
        forced = np.arange(-t, 3 * t + dcap + 12) >= dcap
        kmax_a = t - 1 + dcap
        wa = np.zeros((t, t))
        wb = np.zeros((t, t))
        while True:
            iterations += 1
            new_a = _sweep(wb, np.vstack([1.0 - wb.T, a_tail]), kmax_a, forced, t)
            new_b = _sweep(new_a, np.vstack([1.0 - new_a.T, b_tail]), t - 1, None, t)
            delta = max(float(np.abs(new_a - wa).max()), float(np.abs(new_b - wb).max()))
            wa, wb = new_a, new_b
            if delta < _TOL or iterations > 20000:
                break
        # holding past the cap is optimal for every pair iff L(dcap) <= min W_B / 6
        if last[dcap] <= float(wb.min()) / 6.0:
            break
        dcap *= 2
    return PigSolution(t, True, wa, wb, last, dcap, iterations, time.process_time() - c0)


# ----------------------------------------------------------------------------------------------
# Advice for a Pig state


@dataclass(frozen=True)
class PigAdvice:
    """Win-probability advice for the player to move in a two-player Pig game.

    ``player``; ``score`` / ``opponent_score``; ``series`` (points of the series so far);
    ``may_stop`` (a throw in the series already); ``advice`` ``"throw"`` | ``"stop"``;
    ``win_if_throw`` / ``win_if_stop`` (probability of winning the game if he throws now / stops
    now — None when he may not — and both play optimally afterwards); ``win_probability`` (of
    the advised action); ``starter`` (he started the round; matters with ``equal_series``);
    ``solve_time_s``; ``why`` / ``why_ru``."""

    player: str
    score: int
    opponent_score: int
    series: int
    target: int
    may_stop: bool
    advice: str
    win_if_throw: float
    win_if_stop: float | None
    win_probability: float
    starter: bool
    solve_time_s: float
    why: str
    why_ru: str

    def to_cli_json(self) -> dict[str, Any]:
        """The cli.md ``kosti advise --json`` keys (values for Pig: ``stop_value`` /
        ``throw_value`` are win probabilities), then ``objective`` and ``win_probability``."""
        return {
            "player": self.player, "dice_to_throw": 1, "turn_points": self.series,
            "bust_probability": 1 / 6, "expected_points": round(20 / 6, 2),  # the bust exact, as a float (cli.md)
            "may_stop": self.may_stop, "advice": self.advice,
            "stop_value": None if self.win_if_stop is None else round(self.win_if_stop, 4),
            "throw_value": round(self.win_if_throw, 4), "why": self.why, "why_ru": self.why_ru,
            "objective": "win", "win_probability": round(self.win_probability, 4),
        }

    def to_json(self) -> dict[str, Any]:
        """Every field, for the dashboard's ``/api/advice`` (``objective``: ``"win"``)."""
        d = self.to_cli_json()
        d.update({"score": self.score, "opponent_score": self.opponent_score,
                  "target": self.target, "win_if_throw": round(self.win_if_throw, 4),
                  "win_if_stop": None if self.win_if_stop is None else round(self.win_if_stop, 4),
                  "starter": self.starter, "solve_time_s": round(self.solve_time_s, 3),
                  "requirement": None, "record_probability": None, "keep": None,
                  "at_risk": self.series})
        return d


def pig_refusal(game: Any) -> PigModelRefused | None:
    """Why the win model does not cover ``game`` (a :class:`~kosti.engine.games.pig.Pig`), or
    None when it does."""
    if getattr(game, "game", None) != "pig":
        return PigModelRefused("the win model is for Pig", "модель выигрыша — для «Свиньи»")
    if game.over:
        return PigModelRefused("the game is over", "игра окончена")
    if len(game.names) != 2:
        return PigModelRefused(
            f"the win model is for two players ({len(game.names)} at this table: the state would "
            f"need every score and the seat order)",
            f"модель выигрыша — для двух игроков (за столом {len(game.names)}: пришлось бы "
            f"учитывать все счета и порядок ходов)")
    if game.phase == "order":
        return PigModelRefused("the order throw has no decision to advise",
                               "в броске за очерёдность нечего решать")
    if game.playoff:
        return PigModelRefused("a play-off series is not covered by the win model",
                               "серия переигровки в модель выигрыша не входит")
    t = game.params.target
    if t > MAX_TARGET:
        return PigModelRefused(
            f"the win model is solved for targets up to {MAX_TARGET} (this table plays to {t})",
            f"модель выигрыша считается для цели до {MAX_TARGET} (здесь игра до {t})")
    return None


def tie_value(tie: str, seat: int) -> float:
    """What a tie at the end is worth to the player in ``seat`` (0 or 1): half a win when the
    victory is shared; his play-off win probability under ``play_off`` (the play-off goes in seat
    order: seat 0 throws first, :func:`playoff_value`)."""
    if tie == "shared":
        return 0.5
    return playoff_value()[0 if seat == 0 else 1]


def _pct(p: float, ru: bool = False) -> str:
    x = 100 * p
    text = "> 99.9 %" if 99.9 < x < 100 else "< 0.1 %" if 0 < x < 0.1 else f"{x:.1f} %"
    return text.replace(".", ",") if ru else text


def advise_pig(game: Any) -> PigAdvice:
    """Win-probability advice for the player to move in ``game`` (a two-player
    :class:`~kosti.engine.games.pig.Pig` in its play phase). Raises :class:`PigModelRefused`
    (see :func:`pig_refusal`)."""
    why_not = pig_refusal(game)
    if why_not is not None:
        raise why_not
    p = game.params
    sol = solve(p.target, p.equal_series)
    me = game.mover
    opp = 1 - me
    i, j, k = game.scores[me], game.scores[opp], game.series
    starter = me == game.starter
    t = p.target
    stop_v: float | None
    if p.equal_series and not starter and j >= t:
        # the last series: more than the starter's total wins, level ties
        tie_v = tie_value(p.tie, me)
        need = (j - i) - k  # points still to beat
        last = last_series_table(max(need, 0) + 7)

        def val(e: int) -> float:
            return 1.0 if e < 0 else max(tie_v, 5 / 6) if e == 0 else float(last[e])

        go = sum(val(need - r) for r in range(2, 7)) / 6.0  # a 1 loses: the starter wins
        stop = 1.0 if need < 0 else tie_v if need == 0 else 0.0
        stop_v = stop if game.throws > 0 else None
    else:
        roll, hold = sol.series_values(starter, i, j, k)
        go = float(roll[k])
        stop_v = float(hold[k]) if game.throws > 0 else None
    throw = stop_v is None or go > stop_v
    win = go if throw else stop_v
    assert win is not None
    name = game.names[me]
    pg, pg_ru = _pct(go), _pct(go, ru=True)
    if stop_v is None:
        en = f"throw: {pg} to win the game (you may stop after a throw in the series)"
        ru = f"бросайте: шанс выиграть партию {pg_ru} («хватит» — только после броска в серии)"
    else:
        ps, ps_ru = _pct(stop_v), _pct(stop_v, ru=True)
        if throw:
            en = f"throw: {pg} to win the game, against {ps} if you stop and record {k}"
            ru = f"бросайте: шанс выиграть партию {pg_ru} против {ps_ru}, если записать {k}"
        else:
            en = f"stop and record {k}: {ps} to win the game, against {pg} if you throw on"
            ru = (f"хватит, запишите {k}: шанс выиграть партию {ps_ru} против {pg_ru}, если "
                  f"бросать дальше")
    return PigAdvice(name, i, j, k, t, stop_v is not None, "throw" if throw else "stop", go,
                     stop_v, win, starter, sol.solve_time_s, en, ru)
