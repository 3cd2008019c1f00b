"""engine/advisor/dice_stats.py: the incomplete gamma against independent references, the chi-square
verdicts, per-die counts, and luck computed by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from kosti.engine import get_preset
from kosti.engine.advisor import expected_points
from kosti.engine.advisor.dice_stats import (
    DIE_SUBJECT,
    chi_square_uniform,
    expected_band,
    face_counts,
    gammaincc,
    per_die_counts,
    ru_plural,
    throw_luck,
)


def _sf5(x: float) -> float:
    """Chi-square survival function, 5 degrees of freedom, in closed form (odd dof)."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 / math.pi) * math.exp(-x / 2) * (
        math.sqrt(x) + x ** 1.5 / 3)


def _q_by_integration(a: float, x: float, steps: int = 200_000) -> float:
    """Q(a, x) = 1 - (1/Γ(a)) ∫_0^x t^(a-1) e^-t dt, by Simpson's rule on t = u² (smooth for
    a ≥ 0.5)."""
    u_max = math.sqrt(x)
    h = u_max / steps
    f = lambda u: 2 * u ** (2 * a - 1) * math.exp(-u * u)  # noqa: E731
    s = f(0.0) + f(u_max) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, steps))
    return 1 - s * h / 3 / math.gamma(a)


@pytest.mark.parametrize("x", [0.01, 0.5, 2.0, 4.35, 7.0, 11.0705, 15.086, 30.0, 80.0])
def test_p_value_matches_the_closed_form(x):
    assert gammaincc(2.5, x / 2) == pytest.approx(_sf5(x), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("a,x", [(0.5, 0.3), (1.0, 2.0), (3.0, 1.5), (7.5, 9.0), (2.5, 5.5)])
def test_incomplete_gamma_matches_integration(a, x):
    assert gammaincc(a, x) == pytest.approx(_q_by_integration(a, x), abs=1e-8)
    if a == 1.0:
        assert gammaincc(a, x) == pytest.approx(math.exp(-x), rel=1e-12)


def test_critical_values():
    # the textbook 5-dof critical values: 11.070 at 5 %, 15.086 at 1 %
    assert gammaincc(2.5, 11.0705 / 2) == pytest.approx(0.05, abs=1e-5)
    assert gammaincc(2.5, 15.0863 / 2) == pytest.approx(0.01, abs=1e-5)
    with pytest.raises(ValueError):
        gammaincc(0, 1)


def test_verdicts():
    fair = chi_square_uniform([52, 50, 53, 49, 55, 53])
    assert fair.enough and fair.p_value > 0.05
    assert fair.verdict.startswith("no evidence that the dice are unfair after 312 dice thrown")
    assert fair.verdict_ru.startswith("нет признаков того, что кости нечестные, после 312 брошенных костей")
    loaded = chi_square_uniform([90, 30, 30, 30, 30, 30])
    assert loaded.p_value < 0.01 and loaded.verdict.startswith("strong evidence")
    weak = chi_square_uniform([70, 50, 45, 45, 45, 45])  # chi2 = 10.0
    assert weak.p_value == pytest.approx(_sf5(weak.statistic), rel=1e-10)
    few = chi_square_uniform([1, 2, 3, 4, 5, 6])
    assert not few.enough and "too few" in few.verdict
    die = chi_square_uniform([10, 10, 10, 10, 10, 10], DIE_SUBJECT)
    assert die.verdict.startswith("no evidence that this die is unfair after 60 throws")
    assert "после 60 бросков" in die.verdict_ru
    assert chi_square_uniform([0] * 6).p_value is None
    with pytest.raises(ValueError):
        chi_square_uniform([1, 2, 3])


def test_weak_evidence_band():
    # counts with 0.01 <= p < 0.05: the wording says "weak" and asks to keep watching
    r = chi_square_uniform([72, 50, 45, 45, 45, 43])  # chi2 = 12.16
    assert 0.01 <= r.p_value < 0.05
    assert r.verdict.startswith("weak evidence") and "слабые признаки" in r.verdict_ru


def test_counts_band_and_plural():
    assert face_counts([[1, 1, 6], [5], [2, 3, 4, 6]]) == [2, 1, 1, 1, 1, 2]
    with pytest.raises(ValueError):
        face_counts([[7]])
    mean, lo, hi = expected_band(600)
    assert mean == 100 and hi - mean == pytest.approx(1.96 * math.sqrt(600 * 5 / 36))
    per = per_die_counts([([1, 2], ["red", "blue"]), ([3, 3], None), ([6, 1], ["blue", "red"])])
    assert per == {"red": [2, 0, 0, 0, 0, 0], "blue": [0, 1, 0, 0, 0, 1]}
    assert [ru_plural(n, "бросок", "броска", "бросков") for n in (1, 2, 5, 11, 21, 22, 112)] == \
        ["бросок", "броска", "бросков", "бросков", "бросок", "броска", "бросков"]


def test_luck_by_hand():
    rules = get_preset("classic")
    throws = [(rules, (1, 1, 1, 5, 3)), (rules, (2, 3, 4, 6, 6)), (rules, (5, 2))]
    luck = throw_luck("Ann", throws, turns=2)
    exp = float(2 * expected_points(rules, 5) + expected_points(rules, 2))
    assert luck.points == 105 + 0 + 5
    assert luck.expected == pytest.approx(exp)
    assert luck.per_turn == pytest.approx((110 - exp) / 2)
    assert expected_points(rules, 1) == Fraction(5, 2)  # (10 + 5) / 6
