"""Saved games from before rules.md 1.1 still load, with the rules they were saved with.

``data/saved_games_1_0.json`` holds ``GameState.to_json()`` documents written by the engine of
rules.md 1.0 (format ``kosti-game/1``): a classic game with Ann sitting on the barrel at 890 (1.0
kept the real score) and a raznoobrazie game in which reaching exactly 400 cost Ann a turn (1.0's
closed zones). Loading them must resolve their rules as saved — the parameters 1.1 added take
their 1.0 values — so that play goes on as it would have; the game is then saved in the new
format with those values written out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kosti.engine import BadInput, GameState, Roll, new_game
from kosti.engine.game import GAME_FORMAT
from kosti.engine.rules import RULES_1_0_VALUES

SAVED = json.loads((Path(__file__).parent / "data" / "saved_games_1_0.json")
                   .read_text(encoding="utf-8"))

BUST5 = Roll((2, 2, 3, 4, 6))


def test_the_fixture_is_a_1_0_save():
    for key in ("classic", "raznoobrazie"):
        doc = SAVED[key]
        assert doc["format"] == "kosti-game/1"
        assert "confirm_below_minimum" not in doc["rules"] and "seat_score" not in doc["rules"]["barrel"]


def test_classic_1_0_game_keeps_its_rules():
    g = GameState.from_json(SAVED["classic"])
    r = g.rules
    assert r.barrel.seat_score == "actual" and r.barrel.direct_win_from_below is True
    assert r.hot_dice_win == "any_ending" and r.confirm_below_minimum == "continue"
    assert g.player("Ann").score == 890 and g.on_barrel(0) and g.barrel_need(0) == 110
    assert g.to_move == "Ann"
    # 1.0 play: 110 with hot dice wins at once from 890 (1.1 would seat at 880 and make her throw)
    g, ev = g.apply(Roll((1, 1, 1, 5, 5)))
    assert g.winner == "Ann" and g.player("Ann").score == 1000


def test_raznoobrazie_1_0_game_keeps_its_closed_zones():
    g = GameState.from_json(SAVED["raznoobrazie"])
    sb = g.rules.skip_barrels
    assert (sb.upper, sb.trigger) == ("inclusive", "turn_end")
    assert g.player("Ann").skip_next and g.to_move == "Boris"
    g, ev = g.apply(BUST5)
    assert "skip_turn" in [e.kind for e in ev] and g.to_move == "Boris"


@pytest.mark.parametrize("key", ["classic", "raznoobrazie"])
def test_resaved_1_0_game_writes_the_1_0_values_out(key):
    g = GameState.from_json(SAVED[key])
    doc = json.loads(json.dumps(g.to_json()))
    assert doc["format"] == GAME_FORMAT
    assert doc["rules"]["hot_dice_win"] == RULES_1_0_VALUES["hot_dice_win"]
    assert doc["rules"]["barrel"]["seat_score"] == "actual"
    assert GameState.from_json(doc) == g


def test_new_games_use_rules_1_1():
    g = new_game("classic", ["A", "B"])
    doc = g.to_json()
    assert doc["format"] == GAME_FORMAT
    assert doc["rules"]["barrel"]["seat_score"] == "entry"
    assert doc["rules"]["barrel"]["direct_win_from_below"] is False
    assert GameState.from_json(doc) == g


def test_unknown_format_is_bad_input():
    doc = dict(SAVED["classic"], format="kosti-game/99")
    with pytest.raises(BadInput, match="unknown format"):
        GameState.from_json(doc)
