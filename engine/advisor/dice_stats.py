"""Dice statistics: face counts, the chi-square test of fairness, and luck against the rules.

Pure functions on plain data (no I/O); the dashboard (:mod:`kosti.dashboard.stats`) feeds them the
stored throws. Numbers and their sources:

* **Face counts** — every die of every scored throw; a fair die shows each face with probability 1/6.
* **Chi-square goodness of fit** (Pearson 1900) against the uniform distribution: statistic
  Σ (O − E)² / E over the six faces, 5 degrees of freedom, p-value = Q(5/2, χ²/2), the regularised
  upper incomplete gamma function, computed here by its series / continued fraction (Numerical
  Recipes, 3rd ed., §6.2; no SciPy at run time). The test is only meaningful with an expected count
  of at least 5 per face (Cochran 1954), i.e. 30 dice; below that the verdict says so.
* **Expected bands** — the count of one face after N dice is Binomial(N, 1/6): mean N/6, standard
  deviation √(N·(1/6)·(5/6)); the band is mean ± 1.96 sd (95 %, normal approximation).
* **Luck** — for every throw of n dice: the points of its best keep (rules.md §2.1; 0 for a zero
  throw) minus the exact expectation for n dice under the same rules
  (:func:`kosti.engine.advisor.expected_points`), summed per player and divided by his turns; z =
  that sum / √(Σ exact variances). Luck measures the dice, not the decisions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..plurals import ru_plural
from ..rules import Rules
from .advice import bust_probability, points_distribution, throw_kind

__all__ = ["gammaincc", "chi_square_uniform", "ChiSquare", "face_counts", "per_die_counts",
           "expected_band", "throw_luck", "Luck", "bust_rate", "summarise_counts", "ru_plural",
           "TABLE_SUBJECT", "DIE_SUBJECT", "MIN_EXPECTED"]

#: Smallest expected count per face for the chi-square verdict (Cochran's rule: 5 per cell).
MIN_EXPECTED = 5.0


def gammaincc(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x ≥ 0.

    Series for x < a + 1, Lentz continued fraction otherwise (Numerical Recipes §6.2); relative
    accuracy about 1e-14. Raises ``ValueError`` for a ≤ 0 or x < 0."""
    if a <= 0 or x < 0:
        raise ValueError(f"gammaincc needs a > 0 and x >= 0, got a={a}, x={x}")
    if x == 0:
        return 1.0
    lg = math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - lg))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return h * math.exp(-x + a * math.log(x) - lg)


@dataclass(frozen=True, slots=True)
class ChiSquare:
    """A chi-square goodness-of-fit test of six face counts against a fair die.

    ``n``: dice counted; ``statistic``: Pearson's χ²; ``dof``: 5; ``p_value``: probability of a χ²
    at least this large from fair dice (None when ``n`` is 0); ``enough``: expected count ≥ 5 per
    face; ``verdict`` / ``verdict_ru``: what it means in plain words."""

    n: int
    statistic: float
    dof: int
    p_value: float | None
    enough: bool
    verdict: str
    verdict_ru: str

    def to_json(self) -> dict[str, Any]:
        """JSON form (floats rounded to 6 decimals)."""
        return {"n": self.n, "statistic": round(self.statistic, 6), "dof": self.dof,
                "p_value": None if self.p_value is None else round(self.p_value, 6),
                "enough": self.enough, "verdict": self.verdict, "verdict_ru": self.verdict_ru}


def _ochkov(x: float) -> str:
    """«очко / очка / очков» for ``x`` as printed (rounded to a whole number, sign dropped)."""
    return ru_plural(abs(round(x)), "очко", "очка", "очков")


#: What a test is about: (English clause, Russian clause, English unit, Russian unit forms).
TABLE_SUBJECT = ("the dice are unfair", "кости нечестные", "dice thrown",
                 ("брошенной кости", "брошенных костей", "брошенных костей"))
DIE_SUBJECT = ("this die is unfair", "эта кость нечестная", "throws",
               ("броска", "бросков", "бросков"))


def chi_square_uniform(counts: Sequence[int], subject: tuple[Any, ...] = TABLE_SUBJECT) -> ChiSquare:
    """Pearson's chi-square test of ``counts`` (six ints: faces 1–6) against a fair die.

    ``subject``: :data:`TABLE_SUBJECT` (all dice of the table) or :data:`DIE_SUBJECT` (one die) —
    the words of the verdict. Verdicts: fewer than 30 dice → too few to tell; p ≥ 0.05 → no
    evidence of unfairness; 0.01 ≤ p < 0.05 → weak evidence; p < 0.01 → strong evidence. Raises
    ``ValueError`` unless six non-negative integer counts are given."""
    if len(counts) != 6 or any((not isinstance(c, int)) or c < 0 for c in counts):
        raise ValueError(f"need six non-negative face counts, got {list(counts)!r}")
    what_en, what_ru, unit, unit_ru = subject
    n = sum(counts)
    if n == 0:
        return ChiSquare(0, 0.0, 5, None, False, "nothing thrown yet", "бросков ещё не было")
    e = n / 6
    stat = sum((c - e) ** 2 / e for c in counts)
    p = gammaincc(2.5, stat / 2)
    enough = e >= MIN_EXPECTED
    ps = f"p = {p:.3f}" if p >= 0.001 else "p < 0.001"
    ps_ru = ps.replace(".", ",")
    after_ru = f"после {n} {ru_plural(n, *unit_ru)}"
    need = int(6 * MIN_EXPECTED)
    if not enough:
        en = f"too few {unit} to tell whether {what_en} ({n}; the test needs at least {need})"
        ru = f"слишком мало данных, чтобы судить, что {what_ru} ({n}; нужно не меньше {need})"
    elif p >= 0.05:
        en = f"no evidence that {what_en} after {n} {unit} ({ps})"
        ru = f"нет признаков того, что {what_ru}, {after_ru} ({ps_ru})"
    elif p >= 0.01:
        en = (f"weak evidence that {what_en} after {n} {unit} ({ps}); among many dice such a "
              f"result turns up by chance now and then — keep watching")
        ru = (f"слабые признаки того, что {what_ru}, {after_ru} ({ps_ru}); среди многих костей "
              f"такое иногда случается просто так — наблюдайте дальше")
    else:
        en = f"strong evidence that {what_en} after {n} {unit} ({ps})"
        ru = f"сильные признаки того, что {what_ru}, {after_ru} ({ps_ru})"
    return ChiSquare(n, stat, 5, p, enough, en, ru)


def face_counts(throws: Iterable[Sequence[int]]) -> list[int]:
    """Counts of faces 1–6 over every die of ``throws`` (each a list of faces). Raises
    ``ValueError`` for a face outside 1–6."""
    counts = [0] * 6
    for faces in throws:
        for f in faces:
            if not (isinstance(f, int) and 1 <= f <= 6):
                raise ValueError(f"face {f!r} is outside 1-6")
            counts[f - 1] += 1
    return counts


def per_die_counts(throws: Iterable[tuple[Sequence[int], Sequence[Any] | None]]
                   ) -> dict[str, list[int]]:
    """Face counts per physical die: ``throws`` yields ``(faces, die_ids)`` where ``die_ids[i]``
    names the die that showed ``faces[i]`` (a colour, a tracked position) or is None when the
    camera did not tell the dice apart; such throws are skipped. Returns id → six counts."""
    out: dict[str, list[int]] = {}
    for faces, ids in throws:
        if ids is None:
            continue
        if len(ids) != len(faces):
            raise ValueError(f"{len(ids)} die ids for {len(faces)} faces")
        for f, i in zip(faces, ids):
            if i is None:
                continue
            c = out.setdefault(str(i), [0] * 6)
            c[f - 1] += 1
    return out


def expected_band(n: int, z: float = 1.96) -> tuple[float, float, float]:
    """(mean, low, high) of one face's count after ``n`` fair dice: Binomial(n, 1/6), mean ± z sd."""
    mean = n / 6
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    return mean, max(0.0, mean - z * sd), mean + z * sd


@dataclass(frozen=True, slots=True)
class Luck:
    """Luck of one player: ``throws``, ``turns``, ``points`` (best-keep points his throws scored),
    ``expected`` (their exact expectation), ``per_turn`` ((points − expected) / turns), ``z``
    (standard score of points − expected), ``verdict`` / ``verdict_ru``."""

    player: str
    throws: int
    turns: int
    points: int
    expected: float
    per_turn: float
    z: float
    verdict: str
    verdict_ru: str

    def to_json(self) -> dict[str, Any]:
        """JSON form (floats rounded to 2 decimals)."""
        return {"player": self.player, "throws": self.throws, "turns": self.turns,
                "points": self.points, "expected": round(self.expected, 2),
                "per_turn": round(self.per_turn, 2), "z": round(self.z, 2),
                "verdict": self.verdict, "verdict_ru": self.verdict_ru}


def _moments(rules: Rules, n: int) -> tuple[float, float]:
    dist = points_distribution(rules, n)
    mean = sum((p * q for p, q in dist.items()), Fraction(0))
    var = sum(((p - mean) ** 2 * q for p, q in dist.items()), Fraction(0))
    return float(mean), float(var)


def throw_luck(player: str, throws: Iterable[tuple[Rules, Sequence[int]]], turns: int) -> Luck:
    """Luck of ``player`` over his ``throws`` — ``(rules, faces)`` pairs, so that games under
    different rules mix — in ``turns`` turns: see the module docstring. Raises ``ValueError`` for a
    throw of more dice than its game has or a face outside 1–6."""
    pts = 0
    exp = var = 0.0
    k = 0
    moments: dict[tuple[int, int], tuple[float, float]] = {}  # (id(rules), dice) -> moments
    for rules, faces in throws:
        n = len(faces)
        if not 1 <= n <= rules.dice_count:
            raise ValueError(f"a throw of {n} dice in a {rules.dice_count}-dice game")
        pts += throw_kind(rules, faces)[1]
        key = (id(rules), n)
        if key not in moments:
            moments[key] = _moments(rules, n)
        m, v = moments[key]
        exp += m
        var += v
        k += 1
    diff = pts - exp
    z = diff / math.sqrt(var) if var > 0 else 0.0
    per_turn = diff / turns if turns else 0.0
    sign = "+" if per_turn >= 0 else "−"
    if k == 0:
        en, ru = "no throws yet", "бросков ещё не было"
    elif turns == 0:
        en = f"no finished turn yet ({diff:+.0f} points against the odds so far)"
        ru = f"ни одного законченного хода ({diff:+.0f} {_ochkov(diff)} против ожидания пока)"
    elif abs(z) < 2:
        en = f"{sign}{abs(per_turn):.0f} points a turn against the odds: ordinary luck"
        ru = f"{sign}{abs(per_turn):.0f} {_ochkov(per_turn)} за ход против ожидания: обычное везение"
    elif z > 0:
        en = f"{sign}{abs(per_turn):.0f} points a turn against the odds: unusually lucky (z = {z:.1f})"
        ru = f"{sign}{abs(per_turn):.0f} {_ochkov(per_turn)} за ход против ожидания: необычно везёт (z = {z:.1f})"
    else:
        en = (f"{sign}{abs(per_turn):.0f} points a turn against the odds: unusually unlucky "
              f"(z = {z:.1f})")
        ru = (f"{sign}{abs(per_turn):.0f} {_ochkov(per_turn)} за ход против ожидания: необычно не везёт "
              f"(z = {z:.1f})")
    ru = ru.replace(".", ",")
    return Luck(player, k, turns, pts, exp, per_turn, z, en, ru)


def bust_rate(rules: Rules, throws: Iterable[Sequence[int]]) -> tuple[int, float]:
    """(zero throws, expected zero throws) of ``throws`` under ``rules`` (exact per dice count)."""
    zeros = 0
    expected = 0.0
    for faces in throws:
        zeros += throw_kind(rules, faces)[0] in ("zero", "toxic")
        expected += float(bust_probability(rules, len(faces)))
    return zeros, expected


def summarise_counts(counts: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    """Per-die documents: id → {counts, chi_square} (see :func:`chi_square_uniform`)."""
    return {k: {"counts": list(v), "chi_square": chi_square_uniform(list(v), DIE_SUBJECT).to_json()}
            for k, v in counts.items()}
