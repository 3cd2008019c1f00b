"""Unit tests of the GameState API: allowed() and its reasons, implied keeps, events in both
languages, JSON save/restore, first player, errors."""

from __future__ import annotations

import json

import pytest

from kosti.engine import BadInput, Bank, GameState, Keep, Roll, RuleViolation, first_player, new_game, seat_order


def test_allowed_explains_in_both_languages():
    g = new_game("classic", ["Ann", "Boris"], {"Ann": 225})
    a = g.moves()
    assert (a.roll, a.dice, a.bank, a.keep) == (True, 5, False, False)
    assert "throw the dice first" in a.why_not_bank.text_en
    g, _ = g.apply(Roll([6, 6, 6, 2, 3]))
    a = g.moves()
    assert not a.bank
    assert a.why_not_bank.text_en == "needs 15 more to leave the pit (200–300)"
    assert a.why_not_bank.text_ru == "нужно ещё 15, чтобы выбраться из ямы (200–300)"
    assert a.dice == 2


def test_hot_dice_hint():
    g = new_game("classic", ["Ann"], {"Ann": 100})
    g, ev = g.apply(Roll([2, 3, 4, 5, 6]))
    assert [e.kind for e in ev] == ["throw", "hot_dice"]
    a = g.moves()
    assert not a.bank and a.dice == 5
    assert a.hint.text_en == "hot dice: you must throw all five again"
    assert "все пять" in a.hint.text_ru
    with pytest.raises(RuleViolation) as info:
        g.apply(Bank())
    assert "throw all five again" in str(info.value)


def test_keep_phase_and_implied_keep():
    g = new_game("farkle", ["A", "B"])
    g, _ = g.apply(Roll([1, 5, 5, 5, 2, 2]))  # S-22 / V-111
    assert g.phase == "keep"
    a = g.moves()
    assert a.keep and [k.points for k in a.keeps][:2] == [600, 500]
    assert a.dice == 2  # a roll now takes the best keep (1 5 5 5) and throws 2 dice
    # a roll of 5 dice means only one die was kept: the best single die is the 1 (100)
    g2, _ = g.apply(Roll([1, 3, 4, 6, 6]))
    assert g2.turn_points == 100 and g2.turn.last_roll == (1, 3, 4, 6, 6)
    assert g2.phase == "keep"
    # a roll of 2 dice: the best keep of four dice
    g3, _ = g.apply(Roll([3, 4]))
    assert g3.to_move == "B"  # 3 4 is a Farkle
    g4, ev = g.apply(Keep([5, 5, 5]))
    assert g4.turn_points == 500 and g4.dice_to_throw == 3
    assert ev[0].text_ru.startswith("A откладывает 5 5 5")


def test_keep_in_all_scoring_preset():
    g = new_game("classic", ["A"])
    g, _ = g.apply(Roll([1, 1, 1, 4, 6]))
    same, ev = g.apply(Keep([1, 1, 1]))  # confirming the automatic keep is harmless
    assert same is g and ev == ()
    with pytest.raises(RuleViolation, match="set aside automatically"):
        g.apply(Keep([1]))


def test_bad_rolls():
    g = new_game("classic", ["A"])
    with pytest.raises(BadInput, match="must throw 5 dice"):
        g.apply(Roll([1, 2, 3]))
    with pytest.raises(BadInput):
        Roll([0, 1, 2, 3, 4])
    with pytest.raises(BadInput):
        Roll(["1", 2, 3, 4, 5])


def test_json_round_trip_mid_turn_and_log():
    g = new_game("variant2_850_barrel", ["Ann", "Boris"], {"Ann": 820},
                 {"Ann": {"admission_score": 90}})
    g, _ = g.apply(Roll([1, 5, 3, 3, 4]))
    d = json.loads(json.dumps(g.to_json(), ensure_ascii=False))
    h = GameState.from_json(d)
    assert h == g and h.turn.pending == (1, 3, 3, 4, 5) or h.turn.pending == (1, 5, 3, 3, 4)
    h, _ = h.apply(Bank())
    assert h.player("Ann").score == 835
    assert list(h.log)[-3:] == ["Ann sets aside 1 5: +15, turn 15", "Ann records 15: 820 → 835",
                                "Boris to throw"]
    with pytest.raises(BadInput):
        GameState.from_json({"rules": {}, "players": [{"nam": "x"}], "turn": {}})


def test_game_over_and_winner():
    g = new_game("classic", ["A", "B"], {"A": 990})
    g, ev = g.apply(Roll([1, 2, 3, 3, 4]))
    assert g.over and g.winner == "A" and g.to_move is None and g.dice_to_throw == 0
    assert ev[-1].kind == "win" and "побеждает" in ev[-1].text_ru
    with pytest.raises(RuleViolation, match="game is over"):
        g.apply(Roll([1, 2, 3, 4, 5]))


def test_first_player_and_seat_order():
    assert first_player({"Ann": 3, "Boris": 6, "Cyril": 6}) == ("Boris", "Cyril")
    assert first_player({"Ann": 3, "Boris": 2}) == ("Ann",)
    assert seat_order(["Ann", "Boris", "Cyril"], "Cyril") == ["Cyril", "Ann", "Boris"]
    with pytest.raises(BadInput):
        first_player({"Ann": 7})


def test_new_game_validation():
    with pytest.raises(BadInput, match="unknown player"):
        new_game("classic", ["A"], {"B": 5})
    with pytest.raises(BadInput, match="state.A.wings"):
        new_game("classic", ["A"], state={"A": {"wings": 2}})
    with pytest.raises(BadInput, match="negative"):
        new_game("yard_dice_50", ["A"], {"A": -50})
    g = new_game("raznoobrazie_skip_barrels", ["A", "B"], state={"A": {"skip_next": True}})
    assert g.to_move == "B" and not g.player("A").skip_next


def test_roll_sizes_in_the_keep_phase():
    g = new_game("farkle", ["A", "B"])
    assert g.roll_sizes() == (6,)
    g, _ = g.apply(Roll([1, 5, 5, 5, 2, 2]))
    # legal keeps leave 5 ({1} or {5}), 4 ({1,5}, {5,5}), 3 ({1,5,5}, {5,5,5}) or 2 ({1,5,5,5})
    assert g.roll_sizes() == (2, 3, 4, 5)
    assert g.dice_to_throw == 2 == g.moves().dice
    assert g.summary()["turn"]["dice_to_throw"] == 2
    with pytest.raises(BadInput):
        g.apply(Roll([1]))  # no legal keep leaves one die


def test_win_by_the_keep_a_roll_implies():
    # RU-C exact ending: at 990 the pending throw 5 5 2 3 4 holds the winning 10 (keep 5 5)
    g = new_game("raznoobrazie_skip_barrels", ["A", "B"], {"A": 990})
    g, _ = g.apply(Roll([5, 5, 2, 3, 4]))
    assert g.stop_reason() is None  # stopping now would take the best keep: 1000
    g, ev = g.apply(Roll([2, 2, 6]))  # the camera only saw the next throw of three dice
    assert g.over and g.winner == "A" and g.player("A").score == 1000
    assert "throw" not in [e.kind for e in ev]  # the throw after the win does not count


@pytest.mark.parametrize("path, value", [
    (("players", 0, "score"), "12"),
    (("players", 0, "opened"), 1),
    (("turn", "player"), 5),
    (("turn", "dice"), 9),
    (("turn", "last_roll"), [1, 7]),
    (("winners",), [3]),
])
def test_corrupted_save_is_bad_input(path, value):
    d = json.loads(json.dumps(new_game("classic", ["A", "B"]).to_json()))
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(BadInput, match="saved game"):
        GameState.from_json(d)
