"""engine.scoring properties (hypothesis) and a brute-force oracle of rules.md §2.1.

The oracle follows §2.1 literally and independently of the precomputed lookup: it enumerates every
subset of the thrown dice (by position) and every set partition of that subset, and accepts a
partition only if each block is exactly one enabled combination.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kosti.engine.errors import BadInput
from kosti.engine.scoring import (
    TABLES,
    ScoringRules,
    combination_catalog,
    legal_keeps,
    score_keep,
    score_throw,
)

#: Every table at its defaults plus switch combinations that change the evaluation.
RULES = [ScoringRules(table=t) for t in TABLES] + [
    ScoringRules(table="ZARY_PLUS10", quad_rule="x20", instant_win="five_ones"),
    ScoringRules(table="PROGRAM_X50", ones_count_as_ten=False),
    ScoringRules(table="BOX_X100", two_dice_double_zero=True),
    ScoringRules(table="CLASSIC_X20", straights=False),
    ScoringRules(table="FARKLE_BASE", three_pairs_same_face=False, two_triplets=2500),
    ScoringRules(table="FARKLE_BASE", kind_bonus="linear", six_ones_value=5000,
                 instant_win="six_ones"),
    ScoringRules(table="FARKLE_OFFICIAL", kind_bonus="flat", three_ones_value=300),
    ScoringRules(table="FARKLE_CLASS", kind_bonus="high", small_straight=500, large_straight=750),
    ScoringRules(table="WIKIHOW_10000", ones_count_as_ten=False),
    ScoringRules(table="FARKLE_BASE", dice=5),
]
IDS = [f"{r.table}-{i}" for i, r in enumerate(RULES)]


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


def oracle_keeps(faces: list[int], rules: ScoringRules) -> dict[tuple[int, ...], int]:
    """Every legal keep (sorted faces) → its best complete-partition value (§2.1 steps 1–2)."""
    values: dict[tuple[int, ...], int] = {}
    for c in combination_catalog(rules):
        values[c.faces] = max(values.get(c.faces, 0), c.points)
    out: dict[tuple[int, ...], int] = {}
    idx = list(range(len(faces)))
    for size in range(1, len(faces) + 1):
        for subset in itertools.combinations(idx, size):
            best = None
            for part in _set_partitions(list(subset)):
                blocks = [tuple(sorted(faces[i] for i in block)) for block in part]
                if all(b in values for b in blocks):
                    v = sum(values[b] for b in blocks)
                    best = v if best is None else max(best, v)
            key = tuple(sorted(faces[i] for i in subset))
            if best is not None:
                out[key] = max(out.get(key, best), best)
    if (rules.two_dice_double_zero and len(faces) == 2 and faces[0] == faces[1]
            and tuple(faces) not in out):
        out[tuple(faces)] = 0  # §1.7.3: accepted double, worth 0
    return out


def check_against_oracle(faces: list[int], rules: ScoringRules) -> None:
    want = oracle_keeps(faces, rules)
    got = {k.scoring_dice: k.points for k in legal_keeps(faces, rules)}
    assert got == want
    best = score_throw(faces, rules)
    if not want:
        assert best.bust
        return
    top = max((v, len(k)) for k, v in want.items())
    assert (best.points, len(best.scoring_dice)) == top  # §2.1 step 4: ties → more dice


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_oracle_exhaustive_up_to_four_dice(rules: ScoringRules) -> None:
    for n in range(1, 5):
        for faces in itertools.combinations_with_replacement(range(1, 7), n):
            check_against_oracle(list(faces), rules)


@settings(max_examples=300, deadline=None)
@given(rules_and_throw())
def test_oracle_random_throws(case) -> None:
    rules, faces = case
    check_against_oracle(faces, rules)


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
