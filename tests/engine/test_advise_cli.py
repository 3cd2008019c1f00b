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
    from kosti.engine.pig_advisor import solve

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
