"""Throw tables of the turn advisor: the exact risk of one throw, and the throws arranged for the DP.

Every one of the 6^N ordered throws of N dice is enumerated through its sorted multiset (weight
N!/∏c_f!, so the sums are exact) and scored by :func:`kosti.engine.scoring.score_throw` /
:func:`~kosti.engine.scoring.legal_keeps` under the preset's table. A throw is a *zero throw*
when it has no legal keep (rules.md §1.5) — the two-dice double of §1.7.3 is a legal keep
where the table allows it — or when ``toxic_twos`` wipes it (F2: four or more 2s). Exact
:class:`fractions.Fraction` results. Pure (no I/O); the tables are memoised per rules
(:func:`prepare_tables` builds them ahead). Used by :mod:`kosti.engine.advisor.stop_or_throw` and
re-exported by :mod:`kosti.engine.advisor`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..rules import Rules
from ..scoring import legal_keeps, score_throw

__all__ = [
    "ThrowClass",
    "bust_probability",
    "expected_points",
    "points_distribution",
    "prepare_tables",
    "throw_classes",
    "throw_kind",
]


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
        key: tuple[str, tuple[object, ...]] = (kind, tuple((p, c) for p, c, _ in options))
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
    index: dict[tuple[int, int], int] = {}
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


def prepare_tables(rules: Rules) -> None:
    """Build and cache the per-rules throw tables of 1..``rules.dice_count`` dice (throw classes and DP
    tables), which the first :func:`kosti.engine.advisor.advise` under ``rules`` would otherwise build itself (1.5–120 ms
    per preset, ``benchmarks/bench_advisor.py``). Idempotent: a lookup once built. The dashboard calls it in
    a background thread whenever a game is put on the table."""
    for n in range(1, rules.dice_count + 1):
        _dp_table(rules, n)

