"""A table's list of combinations is rules.md's (issue 45: mutation testing of ``engine/scoring_catalog.py``).

:func:`kosti.engine.scoring.combination_catalog` is what describes a table to its players, and it holds combinations
that never win a throw's best grouping (in WIKIHOW_10000 with ones at face value, four 1s are worth 200 but score
1,100 as three 1s and a single): the score oracle cannot see those, so the list itself is checked here against the
oracle's tables, printed from rules.md §2.2–2.3 in ``test_scoring_properties.py`` (never from the product)."""

from __future__ import annotations

from typing import Any

import pytest
from test_scoring_properties import CASES, IDS, rules_md_combinations

from kosti.engine.scoring import ScoringRules, combination_catalog, score_throw


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_table_lists_the_combinations_of_rules_md_at_their_points(case: tuple[str, dict[str, Any]]) -> None:
    table, switches = case
    listed: dict[tuple[int, ...], int] = {}
    for c in combination_catalog(ScoringRules(table=table, **switches)):
        assert all(1 <= f <= 6 for f in c.faces) and list(c.faces) == sorted(c.faces), c
        listed[c.faces] = max(listed.get(c.faces, 0), c.points)
    assert listed == rules_md_combinations(table, switches)


def test_wikihow_ones_at_face_value_are_200_400_800_though_three_ones_and_singles_score_more() -> None:
    """rules.md §6.17 (F1): 4, 5, 6 of a kind = 200, 400, 800 × face, the face of a one being 1 with
    ``ones_count_as_ten`` off."""
    rules = ScoringRules(table="WIKIHOW_10000", ones_count_as_ten=False)
    kinds = {c.faces: c.points for c in combination_catalog(rules)
             if c.name.endswith("_of_a_kind") and c.faces[0] == 1 and len(c.faces) >= 4}
    assert kinds == {(1,) * 4: 200, (1,) * 5: 400, (1,) * 6: 800}
    assert score_throw([1] * 4, rules).points == 1100  # 1000 + 100: the four of a kind never wins


def test_six_of_a_kind_scores_as_three_pairs_of_its_own_face() -> None:
    """§6.15: six 6s in FARKLE_BASE are three pairs (1,500), and the sheet shows the six 6s."""
    got = score_throw([6] * 6, ScoringRules(table="FARKLE_BASE")).to_dict()
    assert (got["points"], got["combinations"]) == (1500, [{"name": "three_pairs", "faces": [6] * 6, "points": 1500}])


def test_a_six_dice_table_played_with_five_lists_no_six_dice_combination() -> None:
    """rules.md §2.3: three pairs, two triplets and the 1-6 straight need six dice; with five they are not listed,
    whatever points the table gives them."""
    rules = ScoringRules(table="FARKLE_BASE", dice=5, two_triplets=2500, three_pairs=1500, straight6=3000)
    catalog = combination_catalog(rules)
    assert max(len(c.faces) for c in catalog) <= 5
    assert not {c.name for c in catalog} & {"three_pairs", "two_triplets", "straight6"}
