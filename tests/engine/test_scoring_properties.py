"""engine.scoring properties (hypothesis) and a brute-force oracle of rules.md §2.1.

The oracle follows §2.1 literally and independently of the product: the points of every combination come
from rules.md §2.2–2.3's tables as they are printed there, written out in this file (:data:`FIVE_DICE_KINDS`,
:data:`SIX_DICE_TRIPLES`, :data:`SIX_DICE_TABLE`), never from :func:`kosti.engine.scoring.combination_catalog`.
It enumerates every subset of the thrown dice (by position) and every set partition of that subset, and accepts a
partition only if each block is exactly one enabled combination.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kosti.engine.errors import BadInput
from kosti.engine.scoring import (
    TABLES,
    ScoringRules,
    legal_keeps,
    score_keep,
    score_throw,
)

#: Every table at its defaults plus switch combinations that change the evaluation: (table, switches set).
CASES: list[tuple[str, dict[str, Any]]] = [(t, {}) for t in TABLES] + [
    ("ZARY_PLUS10", {"quad_rule": "x20", "instant_win": "five_ones"}),
    ("PROGRAM_X50", {"ones_count_as_ten": False}),
    ("BOX_X100", {"two_dice_double_zero": True}),
    ("CLASSIC_X20", {"straights": False}),
    ("FARKLE_BASE", {"three_pairs_same_face": False, "two_triplets": 2500}),
    ("FARKLE_BASE", {"kind_bonus": "linear", "six_ones_value": 5000, "instant_win": "six_ones"}),
    ("FARKLE_OFFICIAL", {"kind_bonus": "flat", "three_ones_value": 300}),
    ("FARKLE_CLASS", {"kind_bonus": "high", "small_straight": 500, "large_straight": 750}),
    ("WIKIHOW_10000", {"ones_count_as_ten": False}),
    ("FARKLE_BASE", {"dice": 5}),
]
RULES = [ScoringRules(table=t, **switches) for t, switches in CASES]
IDS = [f"{t}-{i}" for i, (t, _) in enumerate(CASES)]


@st.composite
def rules_and_throw(draw) -> tuple[ScoringRules, list[int]]:
    rules = draw(st.sampled_from(RULES))
    faces = draw(st.lists(st.integers(1, 6), min_size=1, max_size=rules.dice))
    return rules, faces


# ----------------------------------------------------------------------------------------------
# Oracle


def _set_partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first, *part[i]]] + part[i + 1:]
        yield [[first], *part]


# rules.md §2.2, the five-dice tables as printed: face -> points of (3, 4, 5) of a kind.
FIVE_DICE_KINDS: dict[str, dict[int, tuple[int, int, int]]] = {
    "CLASSIC_X20": {1: (100, 200, 1000), 2: (20, 40, 200), 3: (30, 60, 300), 4: (40, 80, 400), 5: (50, 100, 500),
                    6: (60, 120, 600)},  # T1
    "ZARY_PLUS10": {1: (100, 110, 1000), 2: (20, 30, 200), 3: (30, 40, 300), 4: (40, 50, 400), 5: (50, 60, 500),
                    6: (60, 70, 600)},  # T2, four of a kind "usual, +10"
    "PROGRAM_X50": {1: (100, 500, 1000), 2: (20, 100, 1000), 3: (30, 150, 1000), 4: (40, 200, 1000),
                    5: (50, 250, 1000), 6: (60, 300, 1000)},  # T3
    "BOX_X100": {1: (100, 200, 1000), 2: (20, 200, 1000), 3: (30, 300, 1000), 4: (40, 400, 1000),
                 5: (50, 500, 1000), 6: (60, 600, 1000)},  # T4 (four 1s "like twos")
}
FIVE_DICE_KINDS["RAZNOOBRAZIE_UNKNOWN"] = FIVE_DICE_KINDS["CLASSIC_X20"]  # T5: "use T1 values"
#: T2 "4 of a kind (alt. ×20, param)" column: with quad_rule x20 the table equals T1.
ZARY_X20_FOURS = {f: FIVE_DICE_KINDS["CLASSIC_X20"][f][1] for f in range(1, 7)}
#: §2.3 "In every six-dice source": three of a kind = 100 × face, three 1s = 1000.
SIX_DICE_TRIPLES = {1: 1000, 2: 200, 3: 300, 4: 400, 5: 500, 6: 600}
#: T7's printed table (each die beyond three doubles): face -> (4, 5, 6) of a kind.
T7_MORE = {1: (2000, 4000, 8000), 2: (400, 800, 1600), 3: (600, 1200, 2400), 4: (800, 1600, 3200),
           5: (1000, 2000, 4000), 6: (1200, 2400, 4800)}
#: Per six-dice table: (kind bonus for 4/5/6 of a kind, straight 1-6, three pairs, 1-2-3-4-5, 2-3-4-5-6).
SIX_DICE_TABLE: dict[str, tuple[str, int, int, int, int]] = {
    "FARKLE_BASE": ("none", 3000, 1500, 0, 0),            # T6: straight 3000, three pairs 1500, no bonus
    "TEN_THOUSAND_DOUBLING": ("doubling", 1500, 1500, 0, 0),  # T7
    "FARKLE_OFFICIAL": ("none", 1000, 750, 0, 0),         # T8: three pairs 750, straight 1000
    "WIKIHOW_10000": ("doubling", 1500, 1500, 0, 0),      # T9: 200/400/800 × face (= T7 for 2..6, §6.17 ones)
    "DIX_MILLE": ("doubling", 0, 0, 1250, 0),             # T10: high straight 1-2-3-4-5 = 1250, no pairs/straight6
    "FARKLE_CLASS": ("none", 1000, 750, 0, 0),            # T11: the values of T8
}


def _six_dice_kind(face: int, n: int, bonus: str, triple: int, table: str, ones_as_ten: bool) -> int | None:
    """n (4..6) of a kind in a six-dice table under ``kind_bonus`` (§2.3 T6, F2/F4/F5 variant lists)."""
    if bonus == "none":
        return None
    if bonus == "doubling":
        if table == "WIKIHOW_10000" and face == 1 and not ones_as_ten:
            return {4: 200, 5: 400, 6: 800}[n]  # T9's literal "200/400/800 × face" for ones
        return T7_MORE[face][n - 4] if triple == SIX_DICE_TRIPLES[face] else triple * 2 ** (n - 3)
    if bonus == "linear":  # F2 "four = 2 × the triple, five = 3 ×, six = 4 ×"
        return triple * (n - 2)
    if bonus == "flat":  # F2 "a flat 1000 / 2000 / 3000"
        return {4: 1000, 5: 2000, 6: 3000}[n]
    assert bonus == "high"  # F2 "4 × / 6 × / 8 × the triple"
    return triple * {4: 4, 5: 6, 6: 8}[n]


def rules_md_combinations(table: str, switches: dict[str, Any]) -> dict[tuple[int, ...], int]:
    """Every combination of rules.md §2.1 that ``table`` with ``switches`` enables (sorted faces -> points), from
    the tables written in this file; the best value where two combinations have the same dice."""
    out: dict[tuple[int, ...], int] = {}

    def add(faces: tuple[int, ...], points: int | None) -> None:
        if points:
            out[tuple(sorted(faces))] = max(out.get(tuple(sorted(faces)), 0), points)

    if table in FIVE_DICE_KINDS:
        add((1,), 10)
        add((5,), 5)  # §2.2: "a single 1 = 10, a single 5 = 5 in every 5-dice table"
        for face, (three, four, five) in FIVE_DICE_KINDS[table].items():
            if table == "ZARY_PLUS10" and switches.get("quad_rule") == "x20":
                four = ZARY_X20_FOURS[face]
            if table == "PROGRAM_X50" and face == 1 and switches.get("ones_count_as_ten") is False:
                four = 50  # T3's literal "1 × 50"
            add((face,) * 3, three)
            add((face,) * 4, four)
            add((face,) * 5, five)
        if switches.get("straights", True):
            add((1, 2, 3, 4, 5), switches.get("small_straight", 125))
            add((2, 3, 4, 5, 6), switches.get("large_straight", 250))
        return out
    dice = switches.get("dice", 6)
    bonus, straight6, pairs, small, large = SIX_DICE_TABLE[table]
    bonus = switches.get("kind_bonus", bonus)
    add((1,), 100)
    add((5,), 50)
    for face in range(1, 7):
        triple = switches.get("three_ones_value", 1000) if face == 1 else SIX_DICE_TRIPLES[face]
        add((face,) * 3, triple)
        for n in range(4, dice + 1):
            add((face,) * n, _six_dice_kind(face, n, bonus, triple, table, switches.get("ones_count_as_ten", True)))
    if dice == 6:
        add((1,) * 6, switches.get("six_ones_value", 0))
    if switches.get("straights", True):
        add((1, 2, 3, 4, 5), switches.get("small_straight", small))
        add((2, 3, 4, 5, 6), switches.get("large_straight", large))
    if dice < 6:
        return out
    add((1, 2, 3, 4, 5, 6), switches.get("straight6", straight6))
    pairs = switches.get("three_pairs", pairs)
    for a, b, c in itertools.combinations(range(1, 7), 3):
        add((a, a, b, b, c, c), pairs)
    if switches.get("three_pairs_same_face", True):  # F2 "four of a kind + a pair", §6.15 six of a kind
        for a, b in itertools.permutations(range(1, 7), 2):
            add((a,) * 4 + (b,) * 2, pairs)
        for a in range(1, 7):
            add((a,) * 6, pairs)
    for a, b in itertools.combinations(range(1, 7), 2):
        add((a,) * 3 + (b,) * 3, switches.get("two_triplets", 0))
    return out


@functools.cache
def _best_partition(kept: tuple[int, ...], table: str, switches: tuple[tuple[str, Any], ...]) -> int | None:
    """The best value of a complete partition of the dice ``kept`` into combinations (§2.1 steps 1–2), or None
    when no partition covers them all; every set partition is tried (cached per multiset of faces)."""
    values = rules_md_combinations(table, dict(switches))
    best = None
    for part in _set_partitions(list(kept)):
        blocks = [tuple(sorted(block)) for block in part]
        if all(b in values for b in blocks):
            v = sum(values[b] for b in blocks)
            best = v if best is None else max(best, v)
    return best


def oracle_keeps(faces: list[int], case: tuple[str, dict[str, Any]]) -> dict[tuple[int, ...], int]:
    """Every legal keep (sorted faces) → its best complete-partition value (§2.1 steps 1–2)."""
    table, switches = case
    out: dict[tuple[int, ...], int] = {}
    for size in range(1, len(faces) + 1):
        for subset in itertools.combinations(faces, size):
            key = tuple(sorted(subset))
            best = _best_partition(key, table, tuple(sorted(switches.items())))
            if best is not None:
                out[key] = best
    if (switches.get("two_dice_double_zero") and len(faces) == 2 and faces[0] == faces[1]
            and tuple(faces) not in out):
        out[tuple(faces)] = 0  # §1.7.3: accepted double, worth 0
    return out


def check_against_oracle(faces: list[int], case: tuple[str, dict[str, Any]]) -> None:
    rules = ScoringRules(table=case[0], **case[1])
    want = oracle_keeps(faces, case)
    got = {k.scoring_dice: k.points for k in legal_keeps(faces, rules)}
    assert got == want
    best = score_throw(faces, rules)
    if not want:
        assert best.bust
        return
    top = max((v, len(k)) for k, v in want.items())
    assert (best.points, len(best.scoring_dice)) == top  # §2.1 step 4: ties → more dice


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_oracle_exhaustive(case: tuple[str, dict[str, Any]]) -> None:
    """Every multiset of 1..dice faces (up to 923 throws): small enough to enumerate, and the only way to reach
    the six-dice combinations (three pairs, two triplets, straight 1-6) every time."""
    for n in range(1, case[1].get("dice", 6 if case[0] in SIX_DICE_TABLE else 5) + 1):
        for faces in itertools.combinations_with_replacement(range(1, 7), n):
            check_against_oracle(list(faces), case)


def test_oracle_tables_are_the_printed_ones() -> None:
    """Spot values quoted in rules.md's prose, checked against the oracle's own tables (a typo in this file's
    tables would otherwise pass unnoticed when the product has the same typo)."""
    assert rules_md_combinations("CLASSIC_X20", {})[(1, 1, 1)] == 100  # "three 1s = 100"
    assert rules_md_combinations("ZARY_PLUS10", {})[(3, 3, 3, 3)] == 40  # "four 3s = 40"
    assert rules_md_combinations("ZARY_PLUS10", {"quad_rule": "x20"})[(6, 6, 6, 6)] == 120  # "four 6s = 120"
    assert rules_md_combinations("PROGRAM_X50", {})[(3, 3, 3, 3)] == 150  # "four 3s = 3×50 = 150"
    assert rules_md_combinations("DIX_MILLE", {})[(2, 2, 2, 2, 2)] == 800  # "five 2s = 200 × 4 = 800"
    assert rules_md_combinations("FARKLE_CLASS", {"kind_bonus": "doubling"})[(3,) * 5] == 1200  # "five 3s = 1200"
    farkle = rules_md_combinations("FARKLE_BASE", {})
    assert farkle[(3, 3, 3)] + farkle[(4, 4, 4)] == 700  # "3-3-3-4-4-4 = 700"
    assert (2, 2, 2, 2) not in farkle and (2, 2, 3, 3, 4, 4) in farkle
    assert (2, 3, 4, 5, 6) not in rules_md_combinations("DIX_MILLE", {})  # "low straight earns nothing extra"


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CASES), st.data())
def test_oracle_random_throws(case, data) -> None:
    faces = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=case[1].get("dice", 6 if case[0] in
                                                                                    SIX_DICE_TABLE else 5)))
    check_against_oracle(faces, case)


# ----------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=300, deadline=None)
@given(rules_and_throw())
def test_best_keep_properties(case) -> None:
    rules, faces = case
    s = score_throw(faces, rules)
    assert s.points >= 0
    assert s.faces == tuple(sorted(faces))
    assert s.hot_dice == (s.remaining_dice == 0)
    assert s.remaining_dice == len(faces) - len(s.scoring_dice)
    assert list(s.scoring_dice) == sorted(s.scoring_dice)
    assert sum(c.points for c in s.combinations) == s.points
    # points are multiples of 5 (1000) or 50 (Farkle/10000) — rules.md §0.2
    assert s.points % (50 if rules.single_values[0] == 100 else 5) == 0
    if s.bust:
        assert s.points == 0 and s.scoring_dice == () and s.combinations == ()
        assert not s.hot_dice and s.remaining_dice == len(faces)
    else:
        # the best keep is legal and valued the same when kept on its own
        assert score_keep(s.scoring_dice, rules, throw=faces) == s
        assert score_keep(s.scoring_dice, rules).points == s.points
        assert sorted(f for c in s.combinations for f in c.faces) == list(s.scoring_dice)


@settings(max_examples=200, deadline=None)
@given(rules_and_throw(), st.randoms(use_true_random=False))
def test_permutation_invariance(case, rnd) -> None:
    rules, faces = case
    shuffled = list(faces)
    rnd.shuffle(shuffled)
    assert score_throw(shuffled, rules) == score_throw(faces, rules)
    assert legal_keeps(shuffled, rules) == legal_keeps(faces, rules)


@settings(max_examples=200, deadline=None)
@given(rules_and_throw())
def test_ties_go_to_more_dice_and_best_is_first(case) -> None:
    rules, faces = case
    best = score_throw(faces, rules)
    keeps = legal_keeps(faces, rules)
    assert (keeps[0] == best) if keeps else best.bust
    for k in keeps:
        assert (k.points, len(k.scoring_dice)) <= (best.points, len(best.scoring_dice))
        assert score_keep(k.scoring_dice, rules, throw=faces) == k
        assert k.instant_win == best.instant_win
        assert k.hot_dice == (k.remaining_dice == 0)


@settings(max_examples=200, deadline=None)
@given(rules_and_throw(), st.integers(1, 6))
def test_an_extra_die_never_lowers_the_best_value(case, extra) -> None:
    rules, faces = case
    if len(faces) < rules.dice:
        assert score_throw([*faces, extra], rules).points >= score_throw(faces, rules).points


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(RULES),
       st.lists(st.one_of(st.integers(-3, 0), st.integers(7, 20)), min_size=1, max_size=3),
       st.lists(st.integers(1, 6), max_size=3))
def test_faces_outside_1_to_6_are_rejected(rules, bad, good) -> None:
    with pytest.raises(BadInput, match="outside 1-6"):
        score_throw(good + bad, rules)


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_dice_count_errors(rules: ScoringRules) -> None:
    with pytest.raises(BadInput):
        score_throw([], rules)
    with pytest.raises(BadInput):
        score_throw([1] * (rules.dice + 1), rules)
    with pytest.raises(BadInput):
        score_throw([1] * 7, rules)
