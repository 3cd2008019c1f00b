"""The alternative values of the house-rule modules (rules.md §3) that no preset uses by default:
each test switches one parameter through overrides and checks the rule's effect."""

from __future__ import annotations

import pytest

from kosti.engine import Bank, Keep, Roll, RuleViolation, new_game, with_overrides

BUST5 = Roll([2, 2, 3, 4, 6])
BUST6 = Roll([2, 3, 3, 4, 6, 6])


def play(rules, players, actions, scores=None, state=None):
    g = new_game(rules, players, scores, state)
    kinds = []
    for a in actions:
        g, ev = g.apply(a)
        kinds += [e.kind for e in ev]
    return g, kinds


def test_ending_strictly_above():
    rules = with_overrides("classic_no_barrel", {"ending": {"mode": "strictly_above"}})
    g, _ = play(rules, ["A", "B"], [Roll([1, 2, 3, 3, 4])], {"A": 990})
    assert not g.over and g.turn_points == 10
    with pytest.raises(RuleViolation, match="may not stop on exactly 1000"):
        g.apply(Bank())
    g, _ = g.apply(Roll([5, 2, 3, 4]))
    assert g.winner == "A" and g.player("A").score == 1005


def test_overshoot_decided_at_the_stop():
    rules = with_overrides("raznoobrazie_skip_barrels", {"ending.overshoot_immediate": False})
    g, _ = play(rules, ["A", "B"], [Roll([1, 1, 2, 3, 4]), Keep([1, 1])], {"A": 985})
    assert g.to_move == "A" and g.turn_points == 20  # running 1005 does not end the turn yet
    g, ev = g.apply(Bank())
    assert [e.kind for e in ev][0] == "overshoot"
    assert g.player("A").score == 985 and g.player("A").overshoots == 1


def test_points_barrel_must_be_sat_on_first():
    # rules.md 1.1 default (classic): the climbing turn records exactly 880 and seats A
    g, _ = play("classic", ["A", "B"], [Roll([1, 1, 1, 5, 5]), Roll([1, 1, 1, 2, 3])], {"A": 850})
    assert not g.over and g.turn_points == 210  # 1060 is not a win from below the barrel
    g, _ = g.apply(Bank())
    assert not g.over and g.player("A").score == 880 and g.on_barrel(0)
    assert g.barrel_need(0) == 120 and g.barrel_status(0).text_en.startswith(
        "on the barrel, needs 120")
    # house rule seat_score: actual (the real score stays, capped below the target)
    rules = with_overrides("classic", {"barrel.seat_score": "actual"})
    g, _ = play(rules, ["A", "B"], [Roll([1, 1, 1, 5, 5]), Roll([1, 1, 1, 2, 3]), Bank()],
                {"A": 850})
    assert not g.over and g.player("A").score == 995 and g.on_barrel(0)
    assert g.barrel_need(0) == 5


def test_welfare_overshoot_goes_to_the_lowest():
    rules = with_overrides("ten_thousand", {"ending": {"mode": "exact",
                                                       "overshoot_effect": "transfer_to_lowest"}})
    g, kinds = play(rules, ["A", "B", "C"], [Roll([3, 3, 3, 2, 4, 6]), Keep([3, 3, 3])],
                    {"A": 9800, "B": 100, "C": 500})
    assert "transfer" in kinds
    assert [p.score for p in g.players] == [9800, 400, 500]


def test_reopen_after_reset():
    rules = with_overrides("classic", {"opening.reopen_after_reset": True})
    g, kinds = play(rules, ["A", "B"], [Roll([1, 5, 2, 3, 3]), Bank()], {"A": 540})
    assert "dump_truck" in kinds
    assert g.player("A").score == 0 and not g.player("A").opened


def test_bolt_for_an_empty_first_throw_only():
    rules = with_overrides("classic", {"bolts.trigger": ["zero_first_throw"]})
    g, _ = play(rules, ["A"], [BUST5], {"A": 400})
    assert g.player("A").bolts == 1
    g, _ = g.apply(Roll([1, 2, 3, 3, 4]))
    g, _ = g.apply(Roll([2, 3, 4, 6]))  # a bust later in the turn: no bolt with this trigger
    assert g.player("A").bolts == 1


def test_consecutive_bolts_reset_by_a_scoring_turn():
    rules = with_overrides("classic", {"bolts.consecutive_only": True})
    g, _ = play(rules, ["A"], [Roll([1, 1, 1, 2, 3]), Bank()], {"A": 400}, {"A": {"bolts": 2}})
    assert g.player("A").bolts == 0


def test_opening_from_the_first_throw_only():
    rules = with_overrides("ten_thousand", {"opening": {"threshold": 500,
                                                        "first_throw_only": True}})
    g, _ = play(rules, ["A", "B"], [Roll([1, 2, 3, 3, 4, 6]), Keep([1])])
    assert g.to_move == "B" and g.player("A").score == 0
    g, _ = play(rules, ["A", "B"], [Roll([5, 5, 5, 2, 3, 4]), Keep([5, 5, 5]), Bank()])
    assert g.player("A").score == 500 and g.player("A").opened


def test_equalize_turns_final_round():
    g, kinds = play("farkle_class_5000", ["A", "B", "C"],
                    [BUST6, Roll([1, 2, 3, 3, 4, 6]), Keep([1]), Bank(), BUST6],
                    {"A": 4000, "B": 4900, "C": 1000})
    assert "final_round" in kinds
    assert g.over and g.winner == "B"  # C had the last turn of the round; A is not owed one


def test_dump_truck_not_via_penalties():
    rules = with_overrides("classic", {"dump_truck.via_penalties": False})
    g, _ = play(rules, ["A", "B"], [Roll([1, 1, 2, 3, 4]), Bank()], {"A": 590, "B": 605})
    assert g.player("B").score == 555


def test_six_ones_instant_win():
    rules = with_overrides("farkle", {"instant_win": "six_ones"})
    g, kinds = play(rules, ["A", "B"], [Roll([1, 1, 1, 1, 1, 1])])
    assert g.winner == "A" and "instant_win" in kinds


def test_no_knockoff_then_overtaking_applies():
    rules = with_overrides("classic", {"barrel.knockoff": False, "barrel.seat_score": "actual"})
    g, kinds = play(rules, ["B", "A"], [Roll([4, 4, 4, 2, 3]), Bank()], {"A": 890, "B": 860})
    assert "knocked_off" not in kinds and "fall" not in kinds
    assert g.player("A").score == 840 and not g.on_barrel(1)  # fined for being overtaken


def test_skip_barrel_extra_turn_without_penalty():
    rules = with_overrides("raznoobrazie_skip_barrels", {"skip_barrels.mode": "extra_turn"})
    g, kinds = play(rules, ["A", "B"], [Roll([6, 6, 6, 2, 3]), Keep([6, 6, 6]), Roll([1, 2]),
                                        Bank(), BUST5], {"A": 290})
    assert "extra_turn" in kinds
    assert g.player("A").score == 360 and g.player("A").skip_next and g.to_move == "B"


def test_opening_penalty_half_bolt():
    rules = with_overrides("classic", {"opening.failure_penalty": {"every": 3, "amount": 50}})
    g, _ = play(rules, ["A"], [BUST5, BUST5, BUST5])
    assert g.player("A").score == -50 and g.player("A").bolts == 0


def test_five_dice_farkle():
    rules = with_overrides("farkle", {"dice_count": 5})
    g, _ = play(rules, ["A", "B"], [Roll([1, 1, 1, 5, 5]), Keep([1, 1, 1, 5, 5])])
    assert g.turn_points == 1100 and g.dice_to_throw == 5 and g.turn.hot
    g, _ = g.apply(Bank())  # may_roll_or_bank
    assert g.player("A").score == 1100


def test_high_stakes_bonus():
    rules = with_overrides("farkle", {"high_stakes": {"enabled": True, "bonus": 1000}})
    g, _ = play(rules, ["A", "B"], [Roll([1, 2, 3, 3, 4, 6]), Keep([1]), Bank()])
    assert g.turn.offer == 5 and g.roll_sizes() == (5, 6)
    assert g.moves().dice_options == (5, 6)
    # B plays the five dice A left: a scoring throw earns the bonus on top of his own points
    g2, ev = g.apply(Roll([5, 2, 3, 4, 6]))
    assert ev[0].kind == "high_stakes" and g2.turn.stakes
    g2, _ = g2.apply(Keep([5]))
    assert g2.turn_points == 1050 and g2.dice_to_throw == 4
    g2, _ = g2.apply(Bank())
    assert g2.player("B").score == 1050 and g2.turn.offer == 4
    # ... a Farkle on those dice is a Farkle; throwing all six is an ordinary turn
    g3, _ = g.apply(Roll([2, 2, 3, 4, 6]))
    assert g3.to_move == "A" and g3.player("B").score == 0
    g4, ev = g.apply(Roll([1, 2, 3, 3, 4, 6]))
    assert "high_stakes" not in [e.kind for e in ev] and not g4.turn.stakes
    # no offer after a bust or when the option is off
    assert play("farkle", ["A", "B"], [Roll([1, 2, 3, 3, 4, 6]), Keep([1]), Bank()])[0].turn.offer == 0


def test_points_barrel_with_1005_ending():
    rules = with_overrides("classic", {"ending.mode": "strictly_above"})
    g, _ = play(rules, ["A", "B"], [Roll([1, 1, 1, 2, 3])], {"A": 900})
    assert not g.over  # 1000 is not enough from the barrel when the target must be passed
    with pytest.raises(RuleViolation, match="needs 5 more"):
        g.apply(Bank())
    g, _ = g.apply(Roll([5, 2]))
    assert g.winner == "A" and g.player("A").score == 1005


def test_zary_alternative_final_range_barrel():
    rules = with_overrides("zary_custom", {
        "ending": {"mode": "at_least", "overshoot_penalties": []},
        "barrel": {"kind": "final_range", "entry": 900, "entry_strict": False, "attempts": 3,
                   "fall_penalty": 100, "max_falls": 3}})
    # zary_custom grants a second attempt, so every turn below is two empty throws
    g, _ = play(rules, ["A", "B"], [BUST5] * 10, {"A": 920}, {"A": {"falls": 2}})
    assert g.player("A").score == 0 and g.player("A").falls == 0  # third fall → 0 (RU-D)


def test_team_farkle():
    rules = with_overrides("farkle", {"team_play": {"enabled": True}, "target": 20000})
    players = ["Ann", "Boris", "Cyril", "Dina"]  # teams: Ann+Cyril, Boris+Dina (opposite seats)
    g = new_game(rules, players, {"Ann": 9000, "Boris": 9500, "Cyril": 10500, "Dina": 4000})
    assert g.teams() == ((0, 2), (1, 3)) and g.team_score(2) == 19500
    g, ev = g.apply(Roll([5, 5, 5, 2, 3, 4]))
    g, ev = g.apply(Bank())
    kinds = [e.kind for e in ev]
    assert "final_round" in kinds and g.final_round == (1, 3)  # only the other team plays on
    g, _ = g.apply(Roll([2, 3, 3, 4, 6, 6]))
    g, _ = g.apply(Roll([2, 3, 3, 4, 6, 6]))
    assert g.over and g.winner == ["Ann", "Cyril"]
    with pytest.raises(Exception, match="two teams"):
        new_game(rules, ["A", "B", "C"])
    with pytest.raises(Exception, match="team_play"):
        with_overrides("classic", {"team_play": {"enabled": True}})


def test_welfare_gift_can_win_but_never_overshoot():
    rules = with_overrides("ten_thousand", {"ending": {"mode": "exact",
                                                       "overshoot_effect": "transfer_to_lowest"}})
    throw = [Roll([3, 3, 3, 2, 4, 6]), Keep([3, 3, 3])]  # 300 from 9800 passes 10000
    g, _ = play(rules, ["A", "B", "C"], throw, {"A": 9800, "B": 9700, "C": 9900})
    assert g.over and g.winner == "B" and g.player("B").score == 10000
    g, kinds = play(rules, ["A", "B", "C"], throw, {"A": 9800, "B": 9750, "C": 9900})
    assert not g.over and "transfer" not in kinds
    assert [p.score for p in g.players] == [9800, 9750, 9900]
