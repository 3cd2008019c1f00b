"""Scoring results and their precomputation (rules.md §2.1): every combination a table enables and
the best grouping, best keep and legal keeps of all 923 multisets of 1–6 faces, once per table.

:class:`Combination`, :class:`ThrowScore` (immutable results, shared between callers) and
:class:`IllegalKeep`; :func:`combination_catalog` lists a table's combinations; :func:`lookup`
returns the per-:class:`~kosti.engine.scoring_tables.ScoringRules` lookup tables that
:mod:`kosti.engine.scoring` reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import RuleViolation
from .scoring_tables import _KIND_NAMES, _NAME_ORDER, FIVE_DICE_TABLES, ScoringRules

# ----------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class Combination:
    """One scoring combination inside a keep.

    ``name``: one of :data:`COMBINATION_NAMES` (cli.md). ``faces``: its dice, sorted ascending.
    ``points``: its value under the table (rules.md §2)."""

    name: str
    faces: tuple[int, ...]
    points: int

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "faces": [...], "points": ...}`` as in cli.md ``kosti score``."""
        return {"name": self.name, "faces": list(self.faces), "points": self.points}


@dataclass(frozen=True, slots=True)
class ThrowScore:
    """The value of one keep (set-aside) from one throw.

    * ``faces`` — the thrown faces, sorted ascending (results are permutation invariant).
    * ``bust`` — true iff the throw has no legal keep (rules.md §1.5); then ``points`` 0,
      ``scoring_dice`` empty, ``remaining_dice`` = number thrown, ``combinations`` empty.
    * ``points`` — value of the keep at its best grouping (§1.3, §2.1).
    * ``scoring_dice`` — the kept dice, sorted ascending.
    * ``remaining_dice`` — thrown dice not kept (may be re-thrown).
    * ``hot_dice`` — every thrown die was kept (not a bust and ``remaining_dice == 0``, §1.4).
    * ``instant_win`` — the *throw* meets ``ScoringRules.instant_win`` (§3.10); the same for every
      keep of one throw.
    * ``combinations`` — the best grouping of the kept dice, highest points first.
    """

    faces: tuple[int, ...]
    bust: bool
    points: int
    scoring_dice: tuple[int, ...]
    remaining_dice: int
    hot_dice: bool
    instant_win: bool
    combinations: tuple[Combination, ...]

    def to_dict(self) -> dict[str, Any]:
        """The cli.md ``kosti score`` JSON fields (without ``rules``; ``faces`` sorted)."""
        return {
            "faces": list(self.faces), "bust": self.bust, "points": self.points,
            "scoring_dice": list(self.scoring_dice), "remaining_dice": self.remaining_dice,
            "hot_dice": self.hot_dice, "instant_win": self.instant_win,
            "combinations": [c.to_dict() for c in self.combinations],
        }


class IllegalKeep(RuleViolation, ValueError):
    """A keep that the rules forbid: a kept die belongs to no scoring combination of the kept set
    (rules.md §1.3 "no dead dice may be kept"), or an empty keep. CLI exit code 3; also a
    ``ValueError``. ``dead`` holds the kept faces that cannot be scored (sorted)."""

    def __init__(self, reason_en: str, reason_ru: str, dead: tuple[int, ...] = ()) -> None:
        super().__init__(reason_en, reason_ru)
        self.dead = dead


# ----------------------------------------------------------------------------------------------
# Combination catalogue of a table

# A multiset of faces is represented by its counts: a 6-tuple, counts[f - 1] = dice showing f.
_Counts = tuple[int, ...]  # six counts, of faces 1..6


def _counts(faces: Iterable[int]) -> _Counts:
    c = [0] * 6
    for f in faces:
        c[f - 1] += 1
    return tuple(c)


def _faces(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(f for f in range(1, 7) for _ in range(counts[f - 1]))


def _kind_points(r: ScoringRules, face: int, n: int) -> int | None:
    """Points of n (3..6) dice showing ``face`` in one throw, or None if not a combination."""
    table = r.table
    if table in FIVE_DICE_TABLES:
        v = 10 if face == 1 else face  # "1 counts as 10 throughout the game" (RU-A, RU-E)
        if n == 3:
            return 10 * v
        if n == 4:
            if table == "ZARY_PLUS10":
                return 10 * v + 10 if r.quad_rule == "plus10" else 20 * v
            if table == "PROGRAM_X50":
                return 50 * (v if r.ones_count_as_ten else face)
            if table == "BOX_X100":
                return 100 * (2 if face == 1 else face)  # ones count like twos (§6.14)
            return 20 * v  # T1, T5
        if n == 5:
            if table in ("PROGRAM_X50", "BOX_X100"):
                return 1000
            return 100 * v  # T1, T2, T5
        return None
    # six-dice tables (§2.3)
    triple = (r.three_ones_value or 0) if face == 1 else 100 * face
    if n == 3:
        return triple
    bonus = r.kind_bonus
    if bonus == "none":
        return None
    if bonus == "doubling":
        if table == "WIKIHOW_10000" and face == 1 and not r.ones_count_as_ten:
            return 200 << (n - 4)  # F1 literal "200/400/800 × face" for ones (§6.17)
        return triple << (n - 3)
    if bonus == "linear":
        return triple * (n - 2)
    if bonus == "flat":
        return 1000 * (n - 3)
    return triple * 2 * (n - 2)  # "high": 4×, 6×, 8×


def combination_catalog(r: ScoringRules) -> list[Combination]:
    """Every combination the rules enable (excluding ``double_zero``, which depends on the number of
    dice thrown), with its points, in :data:`COMBINATION_NAMES` order. Shapes: at most ``r.dice_count``
    dice each. Used for the evaluation and for describing a table to players."""
    s1, s5 = r.single_values
    out = [Combination("single", (1,), s1), Combination("single", (5,), s5)]
    for n in range(3, r.dice_count + 1):
        for face in range(1, 7):
            pts = _kind_points(r, face, n)
            if face == 1 and n == 6 and r.six_ones_value:
                pts = max(pts or 0, r.six_ones_value)  # F2 variant: six 1s = 5000
            if pts is not None:
                out.append(Combination(_KIND_NAMES[n], (face,) * n, pts))
    if r.straights and r.small_straight:
        out.append(Combination("small_straight", (1, 2, 3, 4, 5), r.small_straight))
    if r.straights and r.large_straight:
        out.append(Combination("large_straight", (2, 3, 4, 5, 6), r.large_straight))
    if r.dice_count >= 6 and r.straight6:
        out.append(Combination("straight6", (1, 2, 3, 4, 5, 6), r.straight6))
    if r.dice_count >= 6 and r.three_pairs:
        for a, b, c in itertools.combinations(range(1, 7), 3):
            out.append(Combination("three_pairs", (a, a, b, b, c, c), r.three_pairs))
        if r.three_pairs_same_face:
            for a, b in itertools.permutations(range(1, 7), 2):  # four of a kind + a pair (F2)
                out.append(Combination("three_pairs", tuple(sorted((a,) * 4 + (b,) * 2)),
                                       r.three_pairs))
            for a in range(1, 7):  # six of a kind as three pairs (§6.15)
                out.append(Combination("three_pairs", (a,) * 6, r.three_pairs))
    if r.dice_count >= 6 and r.two_triplets:
        for a, b in itertools.combinations(range(1, 7), 2):
            out.append(Combination("two_triplets", (a, a, a, b, b, b), r.two_triplets))
    out.sort(key=lambda c: (_NAME_ORDER[c.name], c.faces))
    return out


def _combo_sort_key(c: Combination) -> tuple[int, int, tuple[int, ...]]:
    return (-c.points, _NAME_ORDER[c.name], c.faces)


# ----------------------------------------------------------------------------------------------
# Precomputed lookup tables


class _Lookup:
    """Per-rules precomputation over all multisets of 1..dice faces (rules.md §2.1 steps 1–4).

    ``keeps[counts]`` — best complete grouping of a kept multiset: (points, combinations) or None
    when some die cannot be covered. ``throws[sorted faces]`` — the best :class:`ThrowScore`.
    ``legal[sorted faces]`` — every legal keep of the throw as a tuple, best first."""

    __slots__ = ("keeps", "legal", "legal_by_keep", "throws")

    def __init__(self, r: ScoringRules) -> None:
        catalog = [(_counts(c.faces), c) for c in combination_catalog(r)]
        memo: dict[_Counts, tuple[int, tuple[Combination, ...]] | None] = {(0,) * 6: (0, ())}

        def best(counts: _Counts) -> tuple[int, tuple[Combination, ...]] | None:
            if counts in memo:
                return memo[counts]
            result: tuple[int, tuple[Combination, ...]] | None = None
            rank: tuple[Any, ...] | None = None
            for cc, combo in catalog:
                if any(x < y for x, y in zip(counts, cc)):
                    continue
                sub = best(tuple(x - y for x, y in zip(counts, cc)))
                if sub is None:
                    continue
                combos = tuple(sorted((combo, *sub[1]), key=_combo_sort_key))
                points = combo.points + sub[0]
                # max points; then fewest combinations (the larger grouping); then a fixed order
                key = (points, -len(combos), tuple(_combo_sort_key(c) for c in combos))
                if rank is None or _better(key, rank):
                    result, rank = (points, combos), key
            memo[counts] = result
            return result

        all_counts = [c for n in range(1, r.dice_count + 1) for c in _multisets(n)]
        for counts in all_counts:
            best(counts)
        self.keeps = memo
        self.throws: dict[tuple[int, ...], ThrowScore] = {}
        self.legal: dict[tuple[int, ...], tuple[ThrowScore, ...]] = {}
        self.legal_by_keep: dict[tuple[tuple[int, ...], tuple[int, ...]], ThrowScore] = {}
        for counts in all_counts:
            faces = _faces(counts)
            n = len(faces)
            win = _instant_win(r.instant_win or "none", counts)
            options: list[ThrowScore] = []
            for sub in itertools.product(*(range(c + 1) for c in counts)):
                k = sum(sub)
                if k == 0:
                    continue
                val = memo.get(sub)
                if val is None:
                    continue
                options.append(ThrowScore(faces, False, val[0], _faces(sub), n - k, n == k, win,
                                          val[1]))
            if (r.two_dice_double_zero and n == 2 and faces[0] == faces[1]
                    and not any(o.scoring_dice == faces for o in options)):
                # §1.7.3 / §6.7: an accepted double on exactly two thrown dice, worth 0
                options.append(ThrowScore(faces, False, 0, faces, 0, True, win,
                                          (Combination("double_zero", faces, 0),)))
            options.sort(key=lambda o: (-o.points, -len(o.scoring_dice), o.scoring_dice))
            self.legal[faces] = tuple(options)
            for o in options:
                self.legal_by_keep[(faces, o.scoring_dice)] = o
            if options:
                self.throws[faces] = options[0]
            else:
                self.throws[faces] = ThrowScore(faces, True, 0, (), n, False, win, ())


def _better(key: tuple[Any, ...], rank: tuple[Any, ...]) -> bool:
    """Grouping order: more points, then fewer combinations, then the smaller canonical tuple."""
    if key[:2] != rank[:2]:
        return bool(key[:2] > rank[:2])
    return bool(key[2] < rank[2])


def _multisets(n: int) -> list[_Counts]:
    return [_counts(c) for c in itertools.combinations_with_replacement(range(1, 7), n)]


def _instant_win(kind: str, counts: Sequence[int]) -> bool:
    """rules.md §3.10 on the counts of one throw."""
    if kind == "five_ones":
        return counts[0] >= 5
    if kind == "five_of_a_kind":
        return max(counts) >= 5
    if kind == "six_ones":
        return counts[0] >= 6
    return False


_LOOKUPS: dict[ScoringRules, _Lookup] = {}


def _lookup(r: ScoringRules) -> _Lookup:
    lk: _Lookup | None = r._cache
    if lk is None:
        if not isinstance(r, ScoringRules):
            raise TypeError(f"rules must be a ScoringRules, got {type(r).__name__}")
        lk = _LOOKUPS.get(r)
        if lk is None:
            lk = _LOOKUPS[r] = _Lookup(r)
        object.__setattr__(r, "_cache", lk)
    return lk

