"""``kosti score`` (cli.md): JSON keys and order, exit codes, human output."""

from __future__ import annotations

import json

import pytest

from kosti.cli import main

KEYS = ["rules", "faces", "bust", "points", "scoring_dice", "remaining_dice", "hot_dice",
        "instant_win", "combinations"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_md_example(capsys) -> None:
    code, out, err = run(capsys, "--json", "1", "1", "1", "5", "2")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == KEYS
    assert doc == {"rules": "classic", "faces": [1, 1, 1, 5, 2], "bust": False, "points": 105,
                   "scoring_dice": [1, 1, 1, 5], "remaining_dice": 1, "hot_dice": False,
                   "instant_win": False,
                   "combinations": [{"name": "three_of_a_kind", "faces": [1, 1, 1], "points": 100},
                                    {"name": "single", "faces": [5], "points": 5}]}
    assert out.count("\n") == 1  # exactly one JSON document


def test_bust_and_preset(capsys) -> None:
    code, out, _ = run(capsys, "--rules", "farkle", "--json", "6", "2", "3", "3", "4", "6")
    doc = json.loads(out)
    assert code == 0
    assert (doc["rules"], doc["bust"], doc["points"], doc["scoring_dice"], doc["combinations"]) == \
        ("farkle", True, 0, [], [])
    assert doc["faces"] == [6, 2, 3, 3, 4, 6]  # input order echoed


def test_instant_win_and_hot_dice(capsys) -> None:
    _, out, _ = run(capsys, "--rules", "soviet_box_track", "--json", "4", "4", "4", "4", "4")
    doc = json.loads(out)
    assert doc["instant_win"] and doc["hot_dice"] and doc["points"] == 1000
    assert doc["combinations"] == [{"name": "five_of_a_kind", "faces": [4] * 5, "points": 1000}]


def test_double_zero_name(capsys) -> None:
    _, out, _ = run(capsys, "--rules", "soviet_box_track", "--json", "3", "3")
    doc = json.loads(out)
    assert (doc["bust"], doc["points"], doc["combinations"][0]["name"]) == (False, 0, "double_zero")


@pytest.mark.parametrize("argv, needle", [
    (["7"], "outside 1-6"),
    (["0", "1"], "outside 1-6"),
    (["x"], "not an integer"),
    (["1", "2", "3", "4", "5", "6"], "6 dice"),
    (["--rules", "farkle", "1", "1", "1", "1", "1", "1", "1"], "7 dice"),
    (["--rules", "no_such_preset", "1"], "no_such_preset"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, "--json", *argv)
    assert code == 2 and out == ""
    assert needle in err and err.count("\n") == 1


def test_human_output(capsys) -> None:
    code, out, _ = run(capsys, "2", "3", "4", "5", "6")
    assert code == 0
    assert "250" in out and "large straight" in out and "большой стрит" in out and "hot dice" in out
    _, out, _ = run(capsys, "2", "2", "3", "4", "6")
    assert "BUST" in out
