"""Sea dice / Yacht (games.md §11, issue 42 item 6): the classic Yacht table by default, every value but the
Yacht's a house-rule override, keeps and boxes, a whole game, replay and ``kosti play`` (the dashboard:
``tests/dashboard/test_game_pages.py``)."""

from __future__ import annotations

import io
import json

import pytest

from kosti.cli import main
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.game import Bank, Keep, Roll
from kosti.engine.games import Choose, game_from_json, new_any_game
from kosti.engine.games.yacht import BOX_NAMES, YachtParams, box_points

CLASSIC = YachtParams(name="yacht")


@pytest.mark.parametrize("box, dice, points", [
    ("ones", (1, 1, 2, 3, 1), 3), ("sixes", (6, 6, 6, 2, 6), 24), ("fives", (1, 2, 3, 4, 6), 0),
    ("full_house", (3, 3, 3, 5, 5), 19), ("full_house", (3, 3, 3, 3, 5), 0), ("full_house", (4, 4, 4, 4, 4), 0),
    ("four_of_a_kind", (2, 2, 2, 2, 6), 8), ("four_of_a_kind", (5, 5, 5, 5, 5), 20), ("four_of_a_kind", (5, 5, 5, 2, 2), 0),
    ("little_straight", (5, 3, 1, 2, 4), 30), ("little_straight", (2, 3, 4, 5, 6), 0),
    ("big_straight", (6, 5, 4, 3, 2), 30), ("big_straight", (1, 2, 3, 4, 5), 0),
    ("choice", (6, 6, 5, 1, 2), 20), ("yacht", (4, 4, 4, 4, 4), 50), ("yacht", (4, 4, 4, 4, 3), 0),
])
def test_the_classic_yacht_table(box, dice, points):
    assert box_points(box, dice, CLASSIC) == points


def test_every_value_but_the_yachts_is_a_house_rule():
    p = CLASSIC.with_overrides({"full_house": 25, "four_of_a_kind": 40, "little_straight": 15, "big_straight": 20,
                                "choice": 0, "throws": 2})
    assert isinstance(p, YachtParams)
    assert box_points("full_house", (3, 3, 3, 5, 5), p) == 25 and box_points("four_of_a_kind", (2, 2, 2, 2, 6), p) == 40
    assert box_points("little_straight", (1, 2, 3, 4, 5), p) == 15 and box_points("big_straight", (2, 3, 4, 5, 6), p) == 20
    assert box_points("full_house", (3, 3, 3, 3, 5), p) == 0  # the combination still has to be there
    with pytest.raises(BadInput, match="the Yacht value never changes"):
        new_any_game({"preset": "yacht", "overrides": {"yacht": 100}}, ["Ann"])
    with pytest.raises(BadInput, match="unknown parameter 'pair'"):
        new_any_game({"preset": "yacht", "overrides": {"pair": 10}}, ["Ann"])


def test_a_turn_keeps_dice_and_scores_a_box():
    g = new_any_game("yacht", ["Ann", "Boris"])
    assert g.dice_to_throw == 5 and not g.moves().choices  # nothing to score before the first throw
    with pytest.raises(RuleViolation):
        g.apply(Choose("score", "choice"))
    g, _ = g.apply(Roll((5, 5, 5, 2, 3)))
    labels = {c.value: c.label_en for c in g.moves().choices if c.key == "score"}
    assert labels["fives"] == "Fives: 15" and labels["choice"] == "Choice: 20" and len(labels) == 12
    with pytest.raises(BadInput):
        g.apply(Keep((6,)))  # not a die of the throw
    with pytest.raises(BadInput):
        g.apply(Keep((5, 5, 5, 2, 3)))  # all five: score them instead
    g, ev = g.apply(Keep((5, 5, 5)))
    assert g.dice_to_throw == 2 and ev[0].kind == "keep"
    with pytest.raises(BadInput):
        g.apply(Roll((1, 2, 3)))  # two dice are thrown now
    g, _ = g.apply(Roll((5, 2)))
    g, _ = g.apply(Choose("keep", "5 5 5 5"))  # the page's typed keep
    g, _ = g.apply(Roll((5,)))
    assert not g.moves().roll and g.dice_to_throw == 0  # three throws made: score
    with pytest.raises(RuleViolation):
        g.apply(Roll((5,)))
    with pytest.raises(RuleViolation):
        g.apply(Bank())  # no stop: a box is the end of the turn
    g, ev = g.apply(Choose("score", "yacht"))
    assert g.scores_list() == (50, 0) and g.to_move == "Boris"
    assert [e.kind for e in ev] == ["score", "turn"] and ev[0].points == 50
    g, _ = g.apply(Roll((1, 2, 3, 4, 6)))
    g, _ = g.apply(Choose("score", "ones"))
    g, _ = g.apply(Roll((4, 4, 4, 4, 4)))
    with pytest.raises(RuleViolation, match="already scored"):
        g.apply(Choose("score", "yacht"))
    assert game_from_json(json.loads(json.dumps(g.to_json()))) == g


def test_a_whole_game_is_twelve_rounds_and_the_highest_total_wins():
    g = new_any_game("yacht", ["Ann", "Boris"])
    for box in BOX_NAMES:
        g, _ = g.apply(Roll((6, 6, 6, 6, 6)))
        g, _ = g.apply(Choose("score", box))  # Ann: sixes 30, four of a kind 24, choice 30, yacht 50, rest 0
        g, _ = g.apply(Roll((1, 1, 1, 2, 2)))
        g, _ = g.apply(Choose("score", box))  # Boris: ones 3, twos 4, full house 7, choice 7
    assert g.over and g.winner == "Ann"
    assert g.scores_list() == (30 + 24 + 30 + 50, 3 + 4 + 7 + 7)
    s = g.summary()
    assert s["players"][0]["sheet"]["yacht"] == 50 and s["players"][1]["sheet"]["full_house"] == 7


def test_replay_and_play_a_yacht_game(tmp_path, capsys, monkeypatch):
    doc = {"rules": {"preset": "yacht", "overrides": {"full_house": 25}}, "players": ["Ann", "Boris"],
           "events": [{"roll": [3, 3, 2, 5, 6]}, {"keep": [3, 3]}, {"roll": [3, 5, 5]}, {"score": "full_house"}]}
    (tmp_path / "y.json").write_text(json.dumps(doc))
    assert main(["replay", "--json", str(tmp_path / "y.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "yacht" and out["players"][0]["score"] == 25 and out["to_move"] == "Boris"
    monkeypatch.setattr("sys.stdin", io.StringIO("6 6 6 2 3\nkeep 6 6 6\n6 1\nscore four_of_a_kind\nquit\n"))
    assert main(["play", "--rules", "yacht", "--players", "Аня,Боря", "--lang", "ru"]) == 0
    out = capsys.readouterr().out
    assert "Правила: Морские кости / Яхта (yacht)" in out
    assert "Аня записывает 6 6 6 6 1 в клетку «Каре»: 24" in out



def test_kosti_play_takes_a_yacht_rules_file(tmp_path, capsys, monkeypatch):
    """A house's Yacht table in a rules file, as for 1000: {"preset": "yacht", "overrides": {...}}."""
    path = tmp_path / "house.json"
    path.write_text(json.dumps({"preset": "yacht", "overrides": {"full_house": 25}}))
    monkeypatch.setattr("sys.stdin", io.StringIO("3 3 3 5 5\nscore full_house\nquit\n"))
    assert main(["play", "--rules", str(path), "--players", "Ann,Boris", "--lang", "en"]) == 0
    assert "Ann scores 3 3 3 5 5 as Full house: 25" in capsys.readouterr().out
    path.write_text(json.dumps({"preset": "yacht", "overrides": {"yacht": 75}}))
    assert main(["play", "--rules", str(path), "--players", "Ann,Boris"]) == 2
    err = capsys.readouterr().err
    assert "the Yacht value never changes" in err and err.count("\n") == 1
