"""engine.scoring: every table of rules.md §2 (T1–T11) against its printed values, every switch,
the ScoringRules parameter API and the error cases."""

from __future__ import annotations

import pytest

from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.scoring import (
    COMBINATION_LABELS,
    COMBINATION_NAMES,
    FIVE_DICE_TABLES,
    SIX_DICE_TABLES,
    TABLES,
    Combination,
    IllegalKeep,
    ScoringRules,
    combination_catalog,
    legal_keeps,
    score_keep,
    score_throw,
)


def R(table: str = "CLASSIC_X20", **kw) -> ScoringRules:
    return ScoringRules(table=table, **kw)


def kind_value(rules: ScoringRules, face: int, n: int) -> int:
    """Value of n equal dice kept together (the whole keep is one n-of-a-kind throw)."""
    return score_keep([face] * n, rules).points


# ----------------------------------------------------------------------------------------------
# Tables as printed in rules.md §2.2 / §2.3 (face → values for 3, 4, 5[, 6] of a kind)

T1 = {1: (100, 200, 1000), 2: (20, 40, 200), 3: (30, 60, 300), 4: (40, 80, 400),
      5: (50, 100, 500), 6: (60, 120, 600)}
T2_PLUS10 = {1: (100, 110, 1000), 2: (20, 30, 200), 3: (30, 40, 300), 4: (40, 50, 400),
             5: (50, 60, 500), 6: (60, 70, 600)}
T3 = {1: (100, 500, 1000), 2: (20, 100, 1000), 3: (30, 150, 1000), 4: (40, 200, 1000),
      5: (50, 250, 1000), 6: (60, 300, 1000)}
T4 = {1: (100, 200, 1000), 2: (20, 200, 1000), 3: (30, 300, 1000), 4: (40, 400, 1000),
      5: (50, 500, 1000), 6: (60, 600, 1000)}
T7 = {1: (1000, 2000, 4000, 8000), 2: (200, 400, 800, 1600), 3: (300, 600, 1200, 2400),
      4: (400, 800, 1600, 3200), 5: (500, 1000, 2000, 4000), 6: (600, 1200, 2400, 4800)}


@pytest.mark.parametrize("table, printed", [
    ("CLASSIC_X20", T1), ("RAZNOOBRAZIE_UNKNOWN", T1), ("ZARY_PLUS10", T2_PLUS10),
    ("PROGRAM_X50", T3), ("BOX_X100", T4),
])
def test_five_dice_tables_match_rules_md(table: str, printed: dict) -> None:
    rules = R(table)
    for face, values in printed.items():
        got = tuple(kind_value(rules, face, n) for n in (3, 4, 5))
        # with plus10, four 1s (110) ties three 1s + a single 1 (110): same value either way
        assert got == values, (table, face)
    assert rules.single_values == (10, 5)
    assert score_throw([1, 2, 3, 4, 5], rules).points == 125
    assert score_throw([2, 3, 4, 5, 6], rules).points == 250


def test_zary_quad_rule_x20_equals_t1() -> None:
    x20 = R("ZARY_PLUS10", quad_rule="x20")
    for face, values in T1.items():
        assert tuple(kind_value(x20, face, n) for n in (3, 4, 5)) == values


@pytest.mark.parametrize("table", ["TEN_THOUSAND_DOUBLING", "WIKIHOW_10000"])
def test_doubling_tables_match_t7(table: str) -> None:
    rules = R(table)
    for face, values in T7.items():
        assert tuple(kind_value(rules, face, n) for n in (3, 4, 5, 6)) == values, face
    assert score_throw([1, 2, 3, 4, 5, 6], rules).points == 1500
    assert score_throw([2, 2, 3, 3, 6, 6], rules).points == 1500


def test_dix_mille_values() -> None:
    rules = R("DIX_MILLE")
    for face in range(2, 7):  # 4 = 2×, 5 = 4×, 6 = 8× the triple (§2.3 T10, §6.19)
        t = 100 * face
        assert [kind_value(rules, face, n) for n in (3, 4, 5, 6)] == [t, 2 * t, 4 * t, 8 * t]
    assert kind_value(rules, 1, 3) == 1000
    assert score_throw([2, 2, 3, 3, 6, 6], rules).bust  # three pairs disabled (§6.19)
    assert score_throw([2, 3, 4, 5, 6, 3], rules).points == 50  # low straight = its 5


@pytest.mark.parametrize("table, pairs, straight", [
    ("FARKLE_BASE", 1500, 3000), ("FARKLE_OFFICIAL", 750, 1000), ("FARKLE_CLASS", 750, 1000),
])
def test_farkle_tables(table: str, pairs: int, straight: int) -> None:
    rules = R(table)
    assert rules.single_values == (100, 50)
    assert [kind_value(rules, f, 3) for f in range(1, 7)] == [1000, 200, 300, 400, 500, 600]
    assert score_throw([2, 2, 4, 4, 6, 6], rules).points == pairs
    assert score_throw([6, 5, 4, 3, 2, 1], rules).points == straight
    # no n-of-a-kind bonus: a fourth 3 is dead, a fourth 1 is a single
    assert score_throw([3, 3, 3, 3, 2, 4], rules).scoring_dice == (3, 3, 3)
    assert score_throw([1, 1, 1, 1, 2, 4], rules).points == 1100
    with pytest.raises(IllegalKeep):
        score_keep([3, 3, 3, 3], rules)


def test_every_combination_has_english_and_russian_labels() -> None:
    assert set(COMBINATION_LABELS) == set(COMBINATION_NAMES)
    for en, ru in COMBINATION_LABELS.values():
        assert en.isascii() and any("а" <= ch <= "я" for ch in ru)


def test_every_table_is_known_and_builds() -> None:
    assert len(TABLES) == 11 and len(set(TABLES)) == 11
    for table in TABLES:
        rules = R(table)
        assert rules.dice == (5 if table in FIVE_DICE_TABLES else 6)
        assert (table in SIX_DICE_TABLES) == (rules.single_values == (100, 50))
        for c in combination_catalog(rules):
            assert c.name in COMBINATION_NAMES and c.points > 0 and len(c.faces) <= rules.dice


# ----------------------------------------------------------------------------------------------
# Switches


def test_straights_switch() -> None:
    off = R(straights=False)
    assert off.small_straight == 0 and off.large_straight == 0
    assert score_throw([1, 2, 3, 4, 5], off).points == 15
    assert score_throw([2, 3, 4, 5, 6], off).points == 5
    assert score_throw([1, 2, 3, 4, 5], R("DIX_MILLE", straights=False)).points == 150
    with pytest.raises(BadInput, match="small_straight"):
        R(straights=False, small_straight=200)


def test_straight_values() -> None:
    rules = R(small_straight=150, large_straight=0)
    assert score_throw([1, 2, 3, 4, 5], rules).points == 150
    assert score_throw([2, 3, 4, 5, 6], rules).points == 5  # large straight disabled
    six = R("FARKLE_BASE", small_straight=500)  # a five-die straight beside a scoring sixth die
    assert score_throw([1, 2, 3, 4, 5, 1], six).points == 600


def test_ones_count_as_ten_program_x50() -> None:
    literal = R("PROGRAM_X50", ones_count_as_ten=False)
    assert kind_value(literal, 3, 4) == 150
    assert score_throw([1, 1, 1, 1, 5], literal).points == 115  # 1×50 loses to 100 + 10 + 5
    assert score_throw([1, 1, 1, 1, 5], R("PROGRAM_X50")).points == 505


def test_ones_count_as_ten_wikihow() -> None:
    literal = R("WIKIHOW_10000", ones_count_as_ten=False)
    # literal F1 formula 200/400/800 for ones is below 1000 + singles, which max grouping takes
    assert score_throw([1, 1, 1, 1, 2, 3], literal).points == 1100
    assert score_throw([1, 1, 1, 1, 1, 1], literal).points == 2000  # two triples of 1s
    assert kind_value(literal, 2, 4) == 400


def test_three_pairs_switches() -> None:
    assert score_throw([2, 2, 3, 3, 4, 4], R("FARKLE_BASE", three_pairs=500)).points == 500
    off = R("FARKLE_BASE", three_pairs=0)
    assert score_throw([2, 2, 3, 3, 4, 4], off).bust
    assert score_throw([4, 4, 4, 4, 6, 6], off).points == 400
    distinct = R("FARKLE_BASE", three_pairs_same_face=False)
    assert score_throw([2, 2, 3, 3, 4, 4], distinct).points == 1500
    assert score_throw([4, 4, 4, 4, 6, 6], distinct).points == 400  # 4+2 no longer three pairs
    assert score_throw([2, 2, 2, 2, 2, 2], distinct).points == 400


def test_straight6_switch() -> None:
    assert score_throw([1, 2, 3, 4, 5, 6], R("FARKLE_BASE", straight6=0)).points == 150
    assert score_throw([1, 2, 3, 4, 5, 6], R("FARKLE_BASE", straight6=2500)).points == 2500


def test_two_triplets_switch() -> None:
    on = R("FARKLE_CLASS", two_triplets=2500)
    got = score_throw([2, 2, 2, 6, 6, 6], on)
    assert got.points == 2500 and [c.name for c in got.combinations] == ["two_triplets"]
    # six of one face is not two *different* triples: three pairs (750) beats 2 × 200
    assert score_throw([2, 2, 2, 2, 2, 2], on).points == 750
    assert score_throw([2, 2, 2, 6, 6, 6], R("FARKLE_CLASS")).points == 800


@pytest.mark.parametrize("bonus, expected", [
    ("none", (300, None, None, 600)),  # six 3s = two separate triples (§6.16)
    ("doubling", (300, 600, 1200, 2400)),
    ("linear", (300, 600, 900, 1200)),
    ("flat", (300, 1000, 2000, 3000)),
    ("high", (300, 1200, 1800, 2400)),
])
def test_kind_bonus(bonus: str, expected: tuple) -> None:
    rules = R("FARKLE_OFFICIAL", kind_bonus=bonus, three_pairs=0)
    for n, want in zip((3, 4, 5, 6), expected):
        if want is None:  # no bonus: the extra 3s are dead
            assert score_throw([3] * n, rules).scoring_dice == (3, 3, 3)
            with pytest.raises(IllegalKeep):
                score_keep([3] * n, rules)
        else:
            assert kind_value(rules, 3, n) == want, (bonus, n)


def test_three_ones_value() -> None:
    rules = R("FARKLE_OFFICIAL", three_ones_value=300)
    assert kind_value(rules, 1, 3) == 300
    assert score_throw([1, 1, 1, 1, 2, 3], rules).points == 400
    assert kind_value(R("FARKLE_OFFICIAL", three_ones_value=300, kind_bonus="linear"), 1, 4) == 600


def test_six_ones_value_and_instant_wins() -> None:
    rules = R("FARKLE_BASE", six_ones_value=5000)
    assert score_throw([1] * 6, rules).points == 5000
    assert score_throw([1] * 6, R("FARKLE_BASE")).points == 2000
    six = R("FARKLE_BASE", instant_win="six_ones")
    assert score_throw([1] * 6, six).instant_win
    assert not score_throw([1, 1, 1, 1, 1, 2], six).instant_win
    ones = R("ZARY_PLUS10", instant_win="five_ones")
    assert score_throw([1] * 5, ones).instant_win and not score_throw([5] * 5, ones).instant_win
    kind = R(instant_win="five_of_a_kind")
    assert score_throw([3] * 5, kind).instant_win
    assert not score_throw([3, 3, 3, 3, 1], kind).instant_win
    assert not score_throw([1] * 5, R()).instant_win  # classic: five 1s are simply 1000
    # the instant win belongs to the throw: every keep of it carries it
    assert all(k.instant_win for k in legal_keeps([1] * 5, ones))


def test_two_dice_double_zero() -> None:
    on = R("BOX_X100", two_dice_double_zero=True)
    got = score_throw([4, 4], on)
    assert (got.bust, got.points, got.scoring_dice, got.hot_dice) == (False, 0, (4, 4), True)
    assert got.combinations == (Combination("double_zero", (4, 4), 0),)
    assert score_throw([4, 4, 2], on).bust  # needs exactly two thrown dice
    assert score_throw([4, 4], R("BOX_X100")).bust  # switch off
    assert score_throw([1, 1], on).points == 20
    assert score_keep([3, 3], on).points == 0
    assert score_keep([3, 3], on, throw=[3, 3]).hot_dice
    with pytest.raises(IllegalKeep):
        score_keep([3, 3], on, throw=[3, 3, 1])


def test_five_dice_farkle() -> None:
    rules = R("FARKLE_BASE", dice=5)
    assert rules.dice == 5
    assert score_throw([2, 2, 2, 5, 1], rules).points == 350
    with pytest.raises(BadInput):
        score_throw([1, 2, 3, 4, 5, 6], rules)
    assert not any(c.name in ("three_pairs", "straight6") for c in combination_catalog(rules))


# ----------------------------------------------------------------------------------------------
# Keeps


def test_score_keep_values_at_best_grouping() -> None:
    classic = R()
    assert score_keep([1, 1, 1], classic).points == 100  # never 3 × 10 (§1.3)
    k = score_keep([1, 5], classic, throw=[1, 5, 2, 3, 3])
    assert (k.points, k.remaining_dice, k.hot_dice, k.faces) == (15, 3, False, (1, 2, 3, 3, 5))


def test_score_keep_rejects_dead_dice() -> None:
    with pytest.raises(IllegalKeep) as info:
        score_keep([1, 2], R())
    assert info.value.dead == (2,)
    assert info.value.exit_code == 3
    assert isinstance(info.value, RuleViolation) and isinstance(info.value, ValueError)
    assert "2" in str(info.value) and info.value.reason_ru
    with pytest.raises(IllegalKeep) as info:
        score_keep([2, 2, 2, 2], R("FARKLE_BASE"))
    assert info.value.dead == (2,)
    with pytest.raises(IllegalKeep):
        score_keep([2, 3, 4, 5], R())  # a partial straight is dead


def test_score_keep_errors() -> None:
    with pytest.raises(IllegalKeep):
        score_keep([], R())
    with pytest.raises(BadInput, match="not part of the throw"):
        score_keep([1, 1], R(), throw=[1, 2, 3])
    with pytest.raises(BadInput):
        score_keep([1, 7], R())
    with pytest.raises(BadInput):
        score_keep([1], R(), throw=[1, 2, 3, 4, 5, 6])


def test_legal_keeps_order_and_bust() -> None:
    keeps = legal_keeps([5, 1, 1, 1, 4], R())
    assert [k.points for k in keeps] == sorted((k.points for k in keeps), reverse=True)
    assert keeps[0] == score_throw([1, 1, 1, 4, 5], R())
    assert len({k.scoring_dice for k in keeps}) == len(keeps)
    assert legal_keeps([2, 3, 4, 6, 6], R()) == []
    keeps.clear()  # the caller's list is a copy
    assert legal_keeps([5, 1, 1, 1, 4], R())


# ----------------------------------------------------------------------------------------------
# Errors on throws


@pytest.mark.parametrize("faces", [[7], [0, 1], [1, 2, 3, 4, 5, 7], [], [1, 2, 3, 4, 5, 6],
                                   [1, 1, 1, 1, 1, 1, 1], ["1"], [1.5], None, [None]])
def test_score_throw_rejects_bad_faces_classic(faces) -> None:
    with pytest.raises(BadInput) as info:
        score_throw(faces, R())
    assert info.value.exit_code == 2
    with pytest.raises(ValueError):
        legal_keeps(faces, R())


def test_six_dice_count_limits() -> None:
    assert not score_throw([1, 2, 3, 4, 5, 6], R("FARKLE_BASE")).bust
    with pytest.raises(BadInput, match="7 dice"):
        score_throw([1] * 7, R("FARKLE_BASE"))
    with pytest.raises(BadInput, match="0 dice"):
        score_throw([], R("FARKLE_BASE"))
    with pytest.raises(BadInput, match="face 7"):
        score_throw([7, 1], R("FARKLE_BASE"))


def test_numpy_faces_accepted() -> None:
    import numpy as np  # a base dependency: no skip
    assert score_throw(np.array([1, 1, 1, 5, 2]), R()).points == 105


# ----------------------------------------------------------------------------------------------
# ScoringRules parameters


def test_defaults_and_aliases() -> None:
    r = ScoringRules()
    assert (r.table, r.dice, r.dice_count, r.scoring_table) == ("CLASSIC_X20", 5, 5, "CLASSIC_X20")
    assert r.instant_win == "none" and r.quad_rule is None and r.three_pairs is None
    assert R("BOX_X100").instant_win == "five_of_a_kind"
    assert ScoringRules.from_dict({"scoring_table": "FARKLE_BASE", "dice_count": 5}) == \
        R("FARKLE_BASE", dice=5)


@pytest.mark.parametrize("table", TABLES)
def test_round_trip(table: str) -> None:
    r = R(table)
    d = r.to_dict()
    assert ScoringRules.from_dict(d) == r and hash(ScoringRules.from_dict(d)) == hash(r)
    assert d["table"] == table
    # the switches listed are exactly the table's own: none of them is None
    assert all(v is not None for v in d.values())


@pytest.mark.parametrize("data, name", [
    ({"table": "NOPE"}, "table"),
    ({"table": "CLASSIC_X20", "bogus": 1}, "bogus"),
    ({"table": "CLASSIC_X20", "quad_rule": "x20"}, "quad_rule"),
    ({"table": "CLASSIC_X20", "three_pairs": 500}, "three_pairs"),
    ({"table": "FARKLE_BASE", "ones_count_as_ten": False}, "ones_count_as_ten"),
    ({"table": "CLASSIC_X20", "dice": 6}, "dice"),
    ({"table": "FARKLE_BASE", "dice": 4}, "dice"),
    ({"table": "FARKLE_BASE", "dice": True}, "dice"),
    ({"table": "ZARY_PLUS10", "quad_rule": "x30"}, "quad_rule"),
    ({"table": "CLASSIC_X20", "instant_win": "always"}, "instant_win"),
    ({"table": "FARKLE_BASE", "kind_bonus": "triple"}, "kind_bonus"),
    ({"table": "FARKLE_BASE", "three_pairs": -50}, "three_pairs"),
    ({"table": "FARKLE_BASE", "three_pairs": True}, "three_pairs"),
    ({"table": "FARKLE_BASE", "straight6": "3000"}, "straight6"),
    ({"table": "CLASSIC_X20", "straights": "yes"}, "straights"),
    ({"table": "CLASSIC_X20", "two_dice_double_zero": 1}, "two_dice_double_zero"),
    ({"table": "CLASSIC_X20", "scoring_table": "FARKLE_BASE"}, "scoring_table"),
])
def test_from_dict_errors_name_the_parameter(data: dict, name: str) -> None:
    with pytest.raises(BadInput, match=name):
        ScoringRules.from_dict(data)


def test_from_dict_rejects_non_mapping() -> None:
    with pytest.raises(BadInput):
        ScoringRules.from_dict(["CLASSIC_X20"])  # type: ignore[arg-type]


def test_replace() -> None:
    r = R("FARKLE_BASE").replace(three_pairs=500)
    assert r.three_pairs == 500 and r.straight6 == 3000
    t = r.replace(table="CLASSIC_X20")
    assert t == R() and t.three_pairs is None


def test_equal_rules_share_the_lookup() -> None:
    a, b = R("FARKLE_OFFICIAL"), ScoringRules.from_dict({"table": "FARKLE_OFFICIAL"})
    assert score_throw([1], a) is score_throw([1], b)


def test_pickle_and_deepcopy_rebuild_without_the_lookup() -> None:
    import copy
    import pickle

    r = R("FARKLE_BASE", three_pairs=500)
    score_throw([1], r)  # warm the lookup
    for clone in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), copy.copy(r)):
        assert clone == r and clone._cache is None
        assert score_throw([2, 2, 3, 3, 4, 4], clone) is score_throw([2, 2, 3, 3, 4, 4], r)
    assert len(pickle.dumps(r)) < 2000
