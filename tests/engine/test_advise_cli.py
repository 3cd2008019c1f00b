"""``kosti advise`` (cli.md): the JSON document, the state it advises on, exit codes."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from kosti.cli import main
from kosti.engine import get_preset
from kosti.engine.advisor import bust_probability

KEYS = ["player", "dice_to_throw", "turn_points", "bust_probability", "expected_points",
        "may_stop", "advice", "stop_value", "throw_value", "why", "why_ru"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["advise", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fresh_turn_json(capsys):
    code, out, err = run(capsys, "--json")
    assert code == 0 and err == "" and out.count("\n") == 1
    doc = json.loads(out)
    assert list(doc) == KEYS  # exactly the cli.md keys, in its order
    assert doc["dice_to_throw"] == 5 and doc["turn_points"] == 0
    assert doc["bust_probability"] == float(Fraction(600, 7776)) == 0.07716049382716049  # exact, not rounded
    assert doc["advice"] == "throw" and doc["may_stop"] is False and doc["stop_value"] is None


@pytest.mark.parametrize("preset,dice", [("farkle", 1), ("farkle", 6), ("classic", 2),
                                         ("soviet_box_track", 2), ("dix_mille", 4)])
def test_dice_alone(capsys, preset, dice):
    code, out, _ = run(capsys, "--rules", preset, "--dice", str(dice), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["dice_to_throw"] == dice
    exact = bust_probability(get_preset(preset), dice)
    assert doc["bust_probability"] == float(exact)  # cli.md: exact, as a float
    if preset == "farkle" and dice == 6:
        assert Fraction(doc["bust_probability"]).limit_denominator(1000) == Fraction(5, 216)


def test_game_file_state(capsys, tmp_path):
    game = tmp_path / "g.json"
    game.write_text(json.dumps({"rules": "classic", "players": ["Ann", "Boris"],
                                "scores": {"Ann": 225},
                                "events": [{"roll": [6, 6, 6, 2, 3]}]}))
    code, out, _ = run(capsys, "--json", str(game))
    doc = json.loads(out)
    assert code == 0
    assert (doc["player"], doc["turn_points"], doc["dice_to_throw"]) == ("Ann", 60, 2)
    assert doc["may_stop"] is False and doc["advice"] == "throw"
    assert "to leave the pit this turn" in doc["why"] and "выбраться из ямы" in doc["why_ru"]
    code, out, _ = run(capsys, str(game))  # human output names the advice in both languages
    assert code == 0 and "THROW" in out and "выбраться из ямы" in out
    assert "chance to leave the pit this turn" in out and "objective: turn" in out


@pytest.mark.parametrize("argv,needle", [
    (["--dice", "7"], "1 to 5 dice"),
    (["--rules", "nope"], "unknown preset"),
    (["--dice", "0", "--rules", "farkle"], "1 to 6 dice"),
])
def test_bad_input(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1


def test_bad_files(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{bad")
    code, out, err = run(capsys, "--json", str(bad))
    assert (code, out) == (2, "") and "malformed JSON" in err
    code, _, err = run(capsys, str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err
    over = tmp_path / "over.json"
    over.write_text(json.dumps({"rules": "classic", "players": ["A"], "scores": {"A": 990},
                                "events": [{"roll": [1, 2, 3, 4, 6]}]}))
    code, _, err = run(capsys, str(over))
    assert code == 2 and "the game is over" in err
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"rules": "classic", "players": ["A", "B"],
                                 "events": [{"roll": [6, 6, 6, 2, 3]}]}))
    code, _, err = run(capsys, "--dice", "5", str(wrong))
    assert code == 2 and "throws 2 dice now" in err
    forbidden = tmp_path / "forbidden.json"
    forbidden.write_text(json.dumps({"rules": "classic", "players": ["A", "B"],
                                     "events": [{"roll": [5, 2, 3, 4, 6]}, {"bank": True}]}))
    code, _, err = run(capsys, str(forbidden))
    assert code == 2 and "forbidden" in err


# -- the win objective (two-player Pig) ---------------------------------------------------------


def test_pig_fresh_game_json(capsys):
    """--rules pig: a fresh two-player game (equal series: the starter wins 45.6 %); the cli.md keys
    in order, then the objective and the win probability; stop_value / throw_value are win
    probabilities."""
    from kosti.engine.advisor.pig import solve

    code, out, err = run(capsys, "--rules", "pig", "--json")
    doc = json.loads(out)
    assert (code, err) == (0, "")
    assert list(doc) == KEYS + ["objective", "win_probability"]
    assert doc["objective"] == "win" and doc["advice"] == "throw" and doc["stop_value"] is None
    assert doc["throw_value"] == pytest.approx(solve(100, True).wa[0, 0], abs=1e-4)
    assert doc["dice_to_throw"] == 1 and doc["bust_probability"] == 1 / 6  # exact (cli.md)


def test_pig_game_file_and_objective_flag(capsys, tmp_path):
    """A Pig replay document (the paper's rules: equal_series off): Boris starts and holds 11 — throw
    on, 57.0 % against 55.1 %; --objective turn is refused for Pig and --objective win for the 1000
    presets, each with its reason."""
    game = tmp_path / "pig.json"
    game.write_text(json.dumps({"rules": {"preset": "pig", "overrides": {"equal_series": False}},
                                "players": ["Ann", "Boris"],
                                "events": [{"roll": [4]}, {"roll": [2]}, {"roll": [6]}, {"roll": [5]}]}))
    code, out, _ = run(capsys, "--json", "--objective", "win", str(game))
    doc = json.loads(out)
    assert code == 0 and (doc["player"], doc["turn_points"], doc["may_stop"]) == ("Boris", 11, True)
    assert doc["advice"] == "throw" and doc["throw_value"] > doc["stop_value"]
    assert (round(doc["throw_value"], 3), round(doc["stop_value"], 3)) == (0.570, 0.551)
    assert "57.0 %" in doc["why"] and "57,0 %" in doc["why_ru"]
    code, out, err = run(capsys, "--objective", "turn", str(game))
    assert (code, out) == (2, "") and "win objective" in err
    code, out, err = run(capsys, "--objective", "win", "--rules", "classic")
    assert (code, out) == (2, "") and "10^8 states" in err
    code, out, _ = run(capsys, "--rules", "pig", str(game))  # human output
    assert code == 0 and "chance to win the game: throw 57.0 %, stop 55.1 %" in out


def test_pig_refusals(capsys, tmp_path):
    three = tmp_path / "three.json"
    three.write_text(json.dumps({"rules": {"preset": "pig", "overrides": {"order_throw": False}},
                                 "players": ["A", "B", "C"], "events": [{"roll": [3]}]}))
    code, out, err = run(capsys, "--json", str(three))
    assert (code, out) == (2, "") and "two players" in err and err.count("\n") == 1
    code, _, err = run(capsys, "--rules", "pig", "--dice", "2")
    assert code == 2 and "1 die" in err
    code, _, err = run(capsys, "--rules", "aces")
    assert code == 2 and "not for aces" in err


def test_one_die_reads_in_the_singular_in_both_languages(capsys):
    """One die is "1 die", and a Russian count takes its noun form: 2 очка, 5 очков, 1 очко (the average
    a single die adds in classic is 2.5 points, printed as 2)."""
    code, out, _ = run(capsys, "--dice", "1")
    assert code == 0
    assert "1 die to throw" in out and "1 dice" not in out
    assert "в среднем 2 очка за бросок" in out and "2 очков" not in out


@pytest.mark.parametrize(("n", "form"), [(1, "очко"), (2, "очка"), (4, "очка"), (5, "очков"), (11, "очков"),
                                         (12, "очков"), (21, "очко"), (22, "очка"), (105, "очков"), (0, "очков")])
def test_russian_noun_forms(n, form):
    from kosti.engine.texts import ru_plural

    assert ru_plural(n, "очко", "очка", "очков") == form


def test_unknown_preset_names_every_game_the_advisor_knows(capsys):
    code, _, err = run(capsys, "--rules", "nope")
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "'nope'" in line and "farkle" in line and "pig" in line


# -- a turn in words (issue 42 #13): --turn-points, --score, --opponent-score, --opened, --pit, --barrel ----------

def _same_advice(words: dict, game: dict) -> None:
    """The advice for a turn told in words equals the advice at the end of a recorded game in that state
    (the player's name aside)."""
    words.pop("player"), game.pop("player")
    assert words == game


def _advice_of_game(capsys, tmp_path, doc: dict) -> dict:
    f = tmp_path / "g.json"
    f.write_text(json.dumps(doc))
    code, out, err = run(capsys, "--json", str(f))
    assert code == 0, err
    return json.loads(out)


def test_sixty_points_two_dice_is_the_state_of_a_real_throw(capsys, tmp_path):
    """"60 points, 2 dice, should I throw?" — the same advice as after a real 6 6 6 2 3 of an open player."""
    code, out, err = run(capsys, "--turn-points", "60", "--dice", "2", "--json")
    assert code == 0 and err == ""
    words = json.loads(out)
    assert (words["turn_points"], words["dice_to_throw"], words["may_stop"]) == (60, 2, True)
    assert words["advice"] == "stop" and words["stop_value"] == 60.0 and words["throw_value"] < 60
    game = _advice_of_game(capsys, tmp_path, {
        "rules": "classic", "players": ["Ann", "Boris"],
        "state": {"Ann": {"opened": True}, "Boris": {"opened": True}}, "events": [{"roll": [6, 6, 6, 2, 3]}]})
    _same_advice(words, game)


def test_a_score_in_the_pit_needs_the_pit_left_in_one_turn(capsys, tmp_path):
    code, out, _ = run(capsys, "--score", "225", "--turn-points", "60", "--dice", "2", "--json")
    words = json.loads(out)
    assert code == 0 and words["may_stop"] is False and "to leave the pit" in words["why"]
    game = _advice_of_game(capsys, tmp_path, {"rules": "classic", "players": ["Ann", "Boris"],
                                              "scores": {"Ann": 225}, "state": {"Boris": {"opened": True}},
                                              "events": [{"roll": [6, 6, 6, 2, 3]}]})
    _same_advice(words, game)
    # --pit alone: the first pit's lowest score, said in the human output
    code, out, _ = run(capsys, "--pit", "--turn-points", "60", "--dice", "2")
    assert code == 0 and "score 200; in the pit 200–300" in out and "chance to leave the pit this turn" in out
    # the same turn 40 points higher leaves the pit with a stop
    code, out, _ = run(capsys, "--pit", "--turn-points", "100", "--dice", "2", "--json")
    assert json.loads(out)["may_stop"] is True


def test_on_the_barrel_only_a_win_may_stop(capsys, tmp_path):
    code, out, _ = run(capsys, "--barrel", "--turn-points", "60", "--dice", "2", "--json")
    words = json.loads(out)
    assert code == 0 and words["may_stop"] is False and "on the barrel you need 120" in words["why"]
    game = _advice_of_game(capsys, tmp_path, {
        "rules": "classic", "players": ["Ann", "Boris"], "scores": {"Ann": 880},
        "state": {"Ann": {"on_barrel": True}, "Boris": {"opened": True}}, "events": [{"roll": [6, 6, 6, 2, 3]}]})
    _same_advice(words, game)
    code, out, _ = run(capsys, "--barrel", "--turn-points", "120", "--dice", "1", "--json")
    assert json.loads(out)["may_stop"] is True  # 120 in one turn: a stop wins
    code, out, _ = run(capsys, "--barrel")
    assert code == 0 and "score 880; on the barrel, needs 120 in one turn" in out


def test_not_opened_must_reach_the_opening_threshold(capsys):
    code, out, _ = run(capsys, "--no-opened", "--turn-points", "40", "--dice", "3", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["may_stop"] is False and "to open the game" in doc["why"]
    code, out, _ = run(capsys, "--turn-points", "40", "--dice", "3", "--json")  # an open player may stop at 40
    assert json.loads(out)["may_stop"] is True


def test_hot_dice_is_all_dice_after_points(capsys):
    code, out, _ = run(capsys, "--turn-points", "100", "--dice", "5", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["dice_to_throw"] == 5 and doc["turn_points"] == 100
    assert doc["may_stop"] is False and "hot dice" in doc["why"]  # classic: hot dice must be thrown again


def test_the_opponent_score_sets_up_overtaking(capsys):
    """Stopping at 60 from 300 passes an opponent at 340: he is fined 50, so the stop is worth more."""
    base = json.loads(run(capsys, "--score", "300", "--turn-points", "60", "--dice", "2", "--json")[1])
    over = json.loads(run(capsys, "--score", "300", "--opponent-score", "340", "--turn-points", "60",
                          "--dice", "2", "--json")[1])
    assert over["stop_value"] > base["stop_value"] == 60.0


@pytest.mark.parametrize("argv,needle", [
    (["--turn-points", "60"], "say how many dice are left to throw (--dice N; 5 for hot dice)"),
    (["--turn-points", "63", "--dice", "2"], "--turn-points 63: classic scores in steps of 5"),
    (["--turn-points", "-5", "--dice", "2"], "turn points are 0 or more"),
    (["--score", "1000"], "has already won classic"),
    (["--no-opened", "--score", "100"], "has a score of 0, got --score 100"),
    (["--no-opened", "--rules", "farkle"], "farkle has no opening threshold"),
    (["--pit", "--rules", "farkle"], "--pit: farkle has no pits"),
    (["--pit", "--score", "450"], "in no pit of classic (pits: 200–300, 600–700)"),
    (["--barrel", "--rules", "classic_open_barrel"], "has no barrel to sit on"),
    (["--barrel", "--score", "500"], "not on the barrel of classic"),
    (["--rules", "farkle", "--score", "-50"], "keeps scores at 0 or above"),
    (["--rules", "pig", "--pit"], "Pig has no opening, pits or barrel"),
    (["--rules", "pig", "--score", "100"], "reached Pig's target 100"),
])
def test_a_turn_in_words_refuses_what_the_preset_has_not(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1, err


def test_words_are_not_mixed_with_a_game_file(capsys, tmp_path):
    f = tmp_path / "g.json"
    f.write_text(json.dumps({"rules": "classic", "players": ["Ann", "Boris"], "events": []}))
    for argv in (["--score", "100"], ["--turn-points", "5", "--dice", "4"], ["--no-opened"], ["--pit"]):
        code, out, err = run(capsys, *argv, str(f))
        assert code == 2 and out == "" and "a turn in words is instead of" in err, argv


def test_pig_in_words_is_the_race_told(capsys):
    code, out, _ = run(capsys, "--rules", "pig", "--json")
    fresh = json.loads(out)
    code, out, _ = run(capsys, "--rules", "pig", "--score", "88", "--turn-points", "12", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["turn_points"] == 12 and doc["may_stop"] is True
    assert doc["advice"] == "stop" and doc["stop_value"] > doc["throw_value"]  # 100 reached: keep it
    assert fresh["may_stop"] is False  # before a throw of the series there is nothing to stop with
    code, out, _ = run(capsys, "--rules", "pig", "--opponent-score", "90", "--json")
    assert json.loads(out)["throw_value"] < fresh["throw_value"]  # behind 0 : 90, the race is worse
