"""The win-probability objective for two-player Pig (engine/advisor/pig.py): the paper's figure, the
known shape of the optimal policy, properties of the solution, and an independent brute force that
plays every transition through the engine's own Pig (so the model follows kosti's rules, including
``equal_series``)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from kosti.engine import Bank, Roll
from kosti.engine.advisor.pig import (
    MAX_TARGET,
    PigModelRefused,
    advise_pig,
    last_series_table,
    playoff_value,
    solve,
)
from kosti.engine.games import new_any_game


def _pig(players=("Ann", "Boris"), **overrides):
    return new_any_game({"preset": "pig", "overrides": {"order_throw": False, **overrides}},
                        list(players))


def test_first_player_wins_53_06_percent_in_the_papers_game():
    """Neller & Presser (2004): with optimal play the first player wins 53.06 % of the games to 100."""
    sol = solve(100, False)
    assert sol.wa[0, 0] == pytest.approx(0.5306, abs=5e-5)
    assert sol.solve_time_s < 30


def test_known_shape_of_the_optimal_policy():
    """At 0–0 the optimal player holds from a series of 21 (the 21 + round((j − i)/8) rule of thumb
    of Neller & Presser's "Practical Play of the Dice Game Pig", 2010, at i = j); at 41 against 49
    he holds at 22–26 but throws once more at 27, then holds (the example often quoted from the
    paper's policy)."""
    sol = solve(100, False)
    roll, hold = sol.series_values(True, 0, 0)
    assert [k for k in range(1, 30) if hold[k] >= roll[k]] == list(range(21, 30))
    roll, hold = sol.series_values(True, 41, 49)
    decide = {k: "hold" if hold[k] >= roll[k] else "roll" for k in range(18, 32)}
    assert [k for k, d in decide.items() if d == "hold"] == [22, 23, 24, 25, 26, 28, 29, 30, 31]


def test_solution_properties():
    """Probabilities in [0, 1]; more points of my own never hurt and more of the opponent's never help;
    the player to move at equal scores is ahead (he throws first); the starter's table of the equal-series
    game is below the paper's (the other player gets his last series)."""
    sol = solve(100, False)
    w = sol.wa
    assert (w >= 0).all() and (w <= 1).all()
    assert (np.diff(w, axis=0) >= -1e-12).all()   # increasing in my score
    assert (np.diff(w, axis=1) <= 1e-12).all()    # decreasing in the opponent's
    assert all(w[i, i] > 0.5 for i in range(100))
    eq = solve(100, True)
    assert eq.wa[0, 0] < w[0, 0] and eq.wb[0, 0] > 1 - w[0, 0]
    assert (eq.wa >= 0).all() and (eq.wa <= 1).all() and (eq.wb >= 0).all() and (eq.wb <= 1).all()
    assert eq.last[eq.deficit_cap] <= eq.wb.min() / 6  # the cap where holding is provably optimal


def test_last_series_and_play_off():
    """L[d] (more than d in one series) decreases; one series beats 6 exactly when its first throw
    is a 6 and the second is not a 1 or it goes on... checked against a direct enumeration for small d.
    The play-off values sum to 1, the second thrower is ahead, and a tie is worth less than one more
    throw (5/6) either way — so stopping level is never optimal and ``tie`` does not change the solution."""
    L = last_series_table(40)
    assert (np.diff(L[1:]) <= 0).all()

    def beat(d: int) -> float:  # throw until above d, a 1 loses (independent recursion)
        if d < 0:
            return 1.0
        return sum(beat(d - r) for r in range(2, 7)) / 6

    for d in range(1, 15):
        assert L[d] == pytest.approx(beat(d), abs=1e-12)
    first, second = playoff_value()
    assert first + second == pytest.approx(1.0)
    assert first < second < 5 / 6


@functools.lru_cache(maxsize=4)
def _engine_solution(target: int, equal_series: bool, deficit_cap: int):
    """Independent brute force: every state reachable from 0–0 is expanded through the engine's Pig
    (Roll of each face, Bank), and the win probability of seat 0 (a shared win counts half) is found by
    value iteration: the mover maximises his own chance, the other player's is its complement. Holding is
    forced where it wins outright, and for the starter past the target beyond ``deficit_cap`` points of
    lead (the model's cut; here a wider one)."""
    g0 = _pig(target=target, equal_series=equal_series, tie="shared")

    def key(g):
        return (g.mover, g.scores, g.series, g.throws > 0, g.over, g.winners)

    nodes: dict = {}
    todo = [g0]
    while todo:
        g = todo.pop()
        k = key(g)
        if k in nodes:
            continue
        if g.over:
            w = g.winners
            nodes[k] = ("end", 1.0 if w == (0,) else 0.5 if 0 in w else 0.0)
            continue
        me, opp = g.mover, 1 - g.mover
        i, j, s = g.scores[me], g.scores[opp], g.series
        rolls = [g.apply(Roll((f,)))[0] for f in range(1, 7)]
        bank = g.apply(Bank())[0] if g.throws > 0 else None
        starter = me == g.starter
        forced = bank is not None and (
            (not equal_series and i + s >= target)
            or (equal_series and starter and i + s - j >= deficit_cap)
            or (equal_series and not starter and j < target <= i + s)  # wins the round
            or (equal_series and not starter and j >= target and i + s > j))  # the last series won
        nodes[k] = ("move", me, [key(r) for r in rolls] if not forced else [],
                    key(bank) if bank is not None else None)
        todo.extend(rolls if not forced else [])
        if bank is not None:
            todo.append(bank)
    v = {k: (n[1] if n[0] == "end" else 0.5) for k, n in nodes.items()}
    for _ in range(5000):
        delta = 0.0
        for k, n in nodes.items():
            if n[0] == "end":
                continue
            _, me, rolls, bank = n
            opts = []
            if rolls:
                opts.append(sum(v[r] for r in rolls) / 6)
            if bank is not None:
                opts.append(v[bank])
            new = max(opts) if me == 0 else min(opts)
            delta = max(delta, abs(new - v[k]))
            v[k] = new
        if delta < 1e-13:
            break
    return v, key


#: Target of the brute force (small: every state is expanded through the engine).
BRUTE_TARGET = 7


@pytest.mark.parametrize("equal_series", [False, True])
def test_model_matches_a_brute_force_through_the_engine(equal_series):
    target = BRUTE_TARGET
    sol = solve(target, equal_series)
    v, _ = _engine_solution(target, equal_series, sol.deficit_cap + 6)
    checked = 0
    for (mover, scores, series, thrown, over, _), val in v.items():
        if over or series or thrown or mover != 0:
            continue
        i, j = scores
        if equal_series and j >= target:
            continue
        # seat 0 starts (no order throw): wa is the starter's table
        assert sol.wa[i, j] == pytest.approx(val, abs=1e-9), (i, j)
        checked += 1
    for (mover, scores, series, thrown, over, _), val in v.items():
        if over or series or thrown or mover != 1 or (equal_series and scores[0] >= target):
            continue
        j, i = scores  # seat 1 to move: his score i, seat 0's j
        assert sol.wb[i, j] == pytest.approx(1 - val, abs=1e-9), (i, j)
        checked += 1
    assert checked > 2 * 20


def _brute_values(v, key, g) -> tuple[float | None, float]:
    """(throw, stop): the brute force's win probabilities for the player to move in ``g`` if he throws /
    stops now. ``throw`` is None where the brute force forces the stop (it wins outright, or the starter is
    past the deficit cut): its throws are not expanded there, so there is no throw value to compare."""
    sign, base = (1, 0) if g.mover == 0 else (-1, 1)
    stop = base + sign * v[key(g.apply(Bank())[0])]
    rolls = [key(g.apply(Roll((f,)))[0]) for f in range(1, 7)]
    if not all(r in v for r in rolls):
        return None, stop
    return base + sign * sum(v[r] for r in rolls) / 6, stop


def _check_advice(a, go: float | None, stop: float) -> None:
    assert a.win_if_stop == pytest.approx(stop, abs=1e-9)
    if go is None:  # a forced stop: the model must advise it, its throw value no better
        assert a.advice == "stop" and a.win_if_throw <= a.win_if_stop + 1e-12
        return
    assert a.win_if_throw == pytest.approx(go, abs=1e-9)
    assert a.advice == ("throw" if a.win_if_throw > a.win_if_stop else "stop")


@pytest.mark.parametrize("equal_series", [False, True])
def test_advice_matches_the_brute_force_mid_series(equal_series):
    """Throw and stop values of advise_pig at states inside a series equal the brute force's (the walk
    reaches the target in the last series: a forced stop, whose throws the brute force does not expand)."""
    target = BRUTE_TARGET
    sol = solve(target, equal_series)
    v, key = _engine_solution(target, equal_series, sol.deficit_cap + 6)
    g = _pig(target=target, equal_series=equal_series, tie="shared")
    asked = forced = 0
    for faces in ((3,), (2,), (1,), (4,), (1,), (2,), (2,), (1,), (5,), (3,), (4,)):
        if g.over:
            break
        if g.throws > 0:
            go, stop = _brute_values(v, key, g)
            _check_advice(advise_pig(g), go, stop)
            asked += 1
            forced += go is None
        g, _ = g.apply(Roll(faces))
    assert asked >= 4 and forced >= 1


@pytest.mark.parametrize("equal_series", [False, True])
def test_advice_matches_the_brute_force_in_every_series_state(equal_series):
    """advise_pig against the brute force at every state inside a series that the brute force reaches
    from 0–0 (132 states with a throw value to compare and 408 forced stops at target 7 without
    ``equal_series``; 14,609 and 2,663 with it)."""
    target = BRUTE_TARGET
    sol = solve(target, equal_series)
    v, key = _engine_solution(target, equal_series, sol.deficit_cap + 6)
    g0 = _pig(target=target, equal_series=equal_series, tie="shared")
    compared = forced = 0
    for (mover, scores, series, thrown, over, _winners) in list(v):
        if over or not thrown:
            continue
        g = dataclasses.replace(g0, mover=mover, scores=scores, series=series, throws=1)
        go, stop = _brute_values(v, key, g)
        _check_advice(advise_pig(g), go, stop)
        compared += go is not None
        forced += go is None
    assert compared > 100 and forced > 100


def test_last_series_advice():
    """Equal series: the starter has 12 against 9 of a target 10; the other player, 4 into his last
    series, needs more than 3 to win — 5/6 with one throw; level would tie."""
    g = _pig(target=10)
    g = dataclasses.replace(g, scores=(12, 9), mover=1, series=0, throws=0)
    g, _ = g.apply(Roll((2,)))  # series 2: 11 < 12, a stop loses
    a = advise_pig(g)
    assert a.advice == "throw" and a.win_if_stop == 0.0
    assert a.win_if_throw == pytest.approx(5 / 6)  # any face but 1 passes 12
    g, _ = g.apply(Roll((3,)))  # series 5: 14 > 12
    a = advise_pig(g)
    assert a.advice == "stop" and a.win_if_stop == 1.0


def test_refusals_say_why():
    with pytest.raises(PigModelRefused, match="two players") as e:
        advise_pig(_pig(players=("A", "B", "C")))
    assert "двух игроков" in e.value.text_ru
    g = new_any_game("pig", ["A", "B"])  # the order throw first
    with pytest.raises(PigModelRefused, match="order throw"):
        advise_pig(g)
    with pytest.raises(PigModelRefused, match=str(MAX_TARGET)):
        advise_pig(_pig(target=MAX_TARGET + 1))
    with pytest.raises(PigModelRefused):
        solve(1)


def test_advice_texts_in_both_languages():
    g = _pig()
    a = advise_pig(g)
    assert a.advice == "throw" and a.win_if_stop is None and not a.may_stop
    assert "53.1 %" not in a.why  # the default game is equal series: the starter has less than 53 %
    assert a.win_probability == pytest.approx(solve(100, True).wa[0, 0])
    assert "%" in a.why and "шанс выиграть партию" in a.why_ru and "," in a.why_ru
    for f in (6, 6, 6, 6):
        g, _ = g.apply(Roll((f,)))
    a = advise_pig(g)  # 24 at 0–0: hold
    assert a.advice == "stop" and a.why.startswith("stop and record 24")
    assert a.why_ru.startswith("хватит, запишите 24")
    d = a.to_cli_json()
    assert list(d)[:11] == ["player", "dice_to_throw", "turn_points", "bust_probability",
                            "expected_points", "may_stop", "advice", "stop_value", "throw_value",
                            "why", "why_ru"]
    assert d["objective"] == "win" and d["win_probability"] == round(a.win_if_stop, 4)
