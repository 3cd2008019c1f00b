"""``kosti replay``, ``kosti rules`` and ``kosti play`` against the contracts of cli.md:
JSON keys, exit codes 0 / 2 / 3, the error document, piped-stdin play with save and resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kosti.cli import main
from kosti.engine import PRESET_NAMES

TOP_KEYS = {"rules", "winner", "to_move", "players", "turn", "log"}
PLAYER_KEYS = {"name", "score", "opened", "bolts", "in_pit", "on_barrel", "barrel_attempts",
               "falls", "dots", "overshoots", "skip_next"}
TURN_KEYS = {"player", "turn_points", "dice_to_throw"}


def _write(tmp_path: Path, doc, name: str = "game.json") -> str:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(p)


def _replay(tmp_path, capsys, doc):
    path = _write(tmp_path, doc)
    code = main(["replay", "--json", path])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_replay_ok_keys_and_values(tmp_path, capsys):
    doc = {"rules": "classic", "players": ["Ann", "Boris"], "scores": {"Ann": 100, "Boris": 0},
           "events": [{"roll": [1, 5, 3, 3, 4]}, {"roll": [5, 5, 2]}, {"bank": True},
                      {"roll": [2, 3, 4, 6, 6]}]}
    code, out, err = _replay(tmp_path, capsys, doc)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == TOP_KEYS
    assert data["rules"] == "classic"
    assert data["winner"] is None
    assert data["to_move"] == "Ann"  # Boris busted, the dice came back to Ann
    assert [set(p) for p in data["players"]] == [PLAYER_KEYS, PLAYER_KEYS]
    ann, boris = data["players"]
    assert (ann["name"], ann["score"], ann["opened"]) == ("Ann", 125, True)
    assert (boris["score"], boris["opened"], boris["bolts"]) == (0, False, 0)
    assert set(data["turn"]) == TURN_KEYS
    assert data["turn"] == {"player": "Ann", "turn_points": 0, "dice_to_throw": 5}
    assert all(isinstance(line, str) for line in data["log"]) and len(data["log"]) >= 4


def test_replay_human_output(tmp_path, capsys):
    path = _write(tmp_path, {"rules": "classic", "players": ["Ann"],
                             "events": [{"roll": [1, 1, 1, 2, 3]}, {"bank": True}]})
    assert main(["replay", path]) == 0
    out = capsys.readouterr().out
    assert "Ann records 100" in out


def test_replay_overrides_and_player_state(tmp_path, capsys):
    doc = {"rules": {"preset": "classic", "overrides": {"opening": {"threshold": 75}}},
           "players": ["Ann", "Boris"], "state": {"Ann": {"bolts": 2}},
           "events": [{"roll": [6, 6, 6, 2, 3]}, {"bank": True}]}
    code, out, _ = _replay(tmp_path, capsys, doc)
    assert code == 3  # 60 < 75: the override is in force
    data = json.loads(out)
    assert data["event_index"] == 1 and "15 more" in data["error"]
    assert data["state"]["players"][0]["bolts"] == 2


def test_replay_started_scores_count_as_opened(tmp_path, capsys):
    doc = {"rules": "classic", "players": ["Ann"], "scores": {"Ann": 400},
           "state": {"Ann": {"bolts": 2}}, "events": [{"roll": [2, 2, 3, 4, 6]}]}
    code, out, _ = _replay(tmp_path, capsys, doc)
    assert code == 0
    ann = json.loads(out)["players"][0]
    assert (ann["score"], ann["bolts"], ann["opened"]) == (300, 0, True)


@pytest.mark.parametrize("events, index, words", [
    ([{"roll": [1, 2, 3, 3, 4]}, {"bank": True}], 1, "open"),  # below the opening threshold
    ([{"roll": [1, 5, 2, 3, 3]}, {"roll": [5, 5, 2]}, {"roll": [1]}, {"bank": True}], 3,
     "five again"),  # hot dice pending
    ([{"bank": True}], 0, "throw"),  # nothing thrown yet
])
def test_replay_forbidden_event_exit_3(tmp_path, capsys, events, index, words):
    code, out, err = _replay(tmp_path, capsys, {"rules": "classic", "players": ["Ann", "Bo"],
                                                "events": events})
    assert code == 3
    data = json.loads(out)
    assert set(data) == {"error", "event_index", "state"}
    assert data["event_index"] == index
    assert words in data["error"]
    assert set(data["state"]) == TOP_KEYS
    assert err.strip() and len(err.strip().splitlines()) == 1


def test_replay_forbidden_in_pit_and_on_barrel(tmp_path, capsys):
    pit = {"rules": "classic", "players": ["A"], "scores": {"A": 225},
           "events": [{"roll": [6, 6, 6, 2, 3]}, {"bank": True}]}
    code, out, _ = _replay(tmp_path, capsys, pit)
    assert code == 3 and "pit" in json.loads(out)["error"]
    barrel = {"rules": "classic", "players": ["A"], "scores": {"A": 890},
              "events": [{"roll": [6, 6, 6, 2, 3]}, {"bank": True}]}
    code, out, _ = _replay(tmp_path, capsys, barrel)
    assert code == 3 and "barrel" in json.loads(out)["error"]


def test_replay_keep_dead_die_exit_3(tmp_path, capsys):
    doc = {"rules": "variant2_850_barrel", "players": ["A"],
           "events": [{"roll": [1, 5, 3, 3, 4]}, {"keep": [1, 3]}]}
    code, out, _ = _replay(tmp_path, capsys, doc)
    assert code == 3
    assert json.loads(out)["event_index"] == 1


@pytest.mark.parametrize("doc", [
    "{not json",
    {"rules": "classic", "players": ["A"], "events": [{"roll": [1, 2, 3, 4, 7]}]},
    {"rules": "classic", "players": ["A"], "events": [{"roll": [1, 2, 3, 4]}]},
    {"rules": "classic", "players": ["A"], "events": [{"roll": [1, 5, 2, 3, 3]},
                                                      {"roll": [1, 2, 3, 4, 6]}]},
    {"rules": "no_such_preset", "players": ["A"], "events": []},
    {"rules": {"preset": "classic", "overrides": {"bolts": {"penaltyy": 5}}}, "players": ["A"],
     "events": []},
    {"rules": "classic", "players": ["A"], "events": [{"jump": True}]},
    {"rules": "classic", "players": ["A"], "scores": {"Z": 5}, "events": []},
    {"rules": "farkle", "players": ["A", "B"],  # keeping dice that were not thrown
     "events": [{"roll": [1, 2, 3, 3, 4, 6]}, {"keep": [5]}]},
    {"rules": "classic", "players": "Ann", "events": []},
])
def test_replay_bad_input_exit_2(tmp_path, capsys, doc):
    code, out, err = _replay(tmp_path, capsys, doc)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_replay_missing_file_exit_2(tmp_path, capsys):
    assert main(["replay", "--json", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_replay_subprocess_exit_codes(tmp_path):
    """The installed console entry point gives the same exit codes."""
    ok = _write(tmp_path, {"rules": "classic", "players": ["A"], "events": []}, "ok.json")
    bad = _write(tmp_path, {"rules": "classic", "players": ["A"],
                            "events": [{"roll": [9]}]}, "bad.json")
    rule = _write(tmp_path, {"rules": "classic", "players": ["A"],
                             "events": [{"bank": True}]}, "rule.json")
    codes = [subprocess.run([sys.executable, "-m", "kosti", "replay", "--json", p],
                            capture_output=True, text=True).returncode for p in (ok, bad, rule)]
    assert codes == [0, 2, 3]


def test_rules_json_lists_every_preset(capsys):
    assert main(["rules", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    thousand = [p for p in data["presets"] if p["game"] == "1000"]
    assert [p["name"] for p in thousand] == list(PRESET_NAMES)
    assert data["presets"][:len(thousand)] == thousand  # the 1000 family first (cli.md)
    for p in thousand:
        assert {"name", "game", "dice", "target", "description", "parameters"} <= set(p)
        assert p["dice"] in (5, 6) and p["target"] in (1000, 5000, 10000)
        assert p["description"] and p["parameters"]["dice_count"] == p["dice"]
    classic = data["presets"][0]
    assert (classic["name"], classic["dice"], classic["target"]) == ("classic", 5, 1000)


def test_score_is_registered(capsys):
    assert main(["score", "--json", "1", "1", "1", "5", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == 105


# ---------------------------------------------------------------------------------- kosti play

def _play(args, stdin: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "kosti", "play", *args], input=stdin,
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)


def test_play_piped_save_and_resume(tmp_path):
    save = tmp_path / "game.json"
    r = _play(["--players", "Ann,Boris", "--rules", "classic", "--save", str(save), "--lang", "en"],
              "1 5 2 3 3\nbank\n552\n1\n11123\nbank\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "You may not stop: needs 35 more to open" in r.stdout and "Not allowed: you may not" not in r.stdout
    assert "Ann records 135" in r.stdout
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["actions"][-1] == {"bank": True}
    assert saved["state"]["players"][0]["score"] == 135
    # resume: Boris is to throw; a wrong dice count is refused and nothing is lost
    r = _play(["--resume", str(save), "--lang", "en"], "1 2 3\n2 2 3 4 6\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "must throw 5 dice" in r.stdout and "Boris throws 2 2 3 4 6: bust" in r.stdout
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["state"]["turn"]["player"] == 0
    assert saved["state"]["players"][0]["score"] == 135


def test_play_undo_after_resume(tmp_path):
    save = tmp_path / "g.json"
    r = _play(["--players", "Ann,Boris", "--save", str(save), "--lang", "en"],
              "1 1 1 2 3\nbank\n", tmp_path)
    assert r.returncode == 0, r.stderr
    r = _play(["--resume", str(save), "--lang", "en"], "undo\nundo\n6 6 6 2 3\nbank\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Last action taken back") == 2
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["actions"] == [{"roll": [6, 6, 6, 2, 3]}, {"bank": True}]
    assert saved["state"]["players"][0]["score"] == 60


def test_play_russian_and_undo(tmp_path):
    r = _play(["--players", "Аня,Боря", "--lang", "ru"], "11123\nundo\n66623\nхватит\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "отменено" in r.stdout
    assert "Аня записывает 60" in r.stdout


def test_play_sample_game(tmp_path):
    r = _play(["--sample", "--lang", "en"], "", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Ann wins with 1000" in r.stdout
    assert "knocked off" in r.stdout


def test_play_farkle_sample_with_keeps(tmp_path):
    r = _play(["--sample", "farkle", "--lang", "en"], "", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "> keep 5 5 5" in r.stdout and "Ann sets aside 5 5 5: +500, turn 600" in r.stdout
    assert "final round over: Boris wins with 10650" in r.stdout


def test_play_requires_players(tmp_path):
    r = _play([], "", tmp_path)
    assert r.returncode == 2


def test_replay_reads_a_play_save(tmp_path, capsys):
    """A game kept with `kosti play --save` replays to the very state play saved."""
    save = tmp_path / "game.json"
    r = _play(["--players", "Ann,Boris", "--rules", "classic", "--save", str(save), "--lang", "en"],
              "1 5 2 3 3\n552\n1\n11123\nbank\n2 2 3 4 6\n", tmp_path)
    assert r.returncode == 0, r.stderr
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert main(["replay", "--json", str(save)]) == 0
    out = json.loads(capsys.readouterr().out)
    from kosti.engine import GameState

    assert out == GameState.from_json(saved["state"]).summary()
    assert out["players"][0]["score"] == 135 and out["to_move"] == "Ann"


def test_play_a_games_md_game_with_choices_bank_dice(tmp_path):
    """games.md §14 Bank dice through ``kosti play``: ``bet`` is a choice of the game, its text
    keeps the player's case (saved as typed), and the banker's throw settles the bet."""
    save = tmp_path / "bank.json"
    r = _play(["--rules", "bank_dice", "--players", "Ann,Boris", "--lang", "en",
               "--save", str(save)], "bet Boris 3 2\n3 3 1\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Boris bets 2 on 3" in r.stdout
    assert "Boris: 2 × 3, wins 4" in r.stdout and "Ann pays 4" in r.stdout
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["actions"] == [{"bet": "Boris 3 2"}, {"roll": [3, 3, 1]}]
    assert saved["state"]["scores"] == [-4, 4]


def test_play_a_games_md_game_with_choices_thirteen(tmp_path):
    """games.md §2 Thirteen through ``kosti play``: the seed's example 9, a third of 12 → 13,
    plus 3 → 16, twice 5 → 26, entered with ``special``, ``op``, a plain die and ``throw``
    (any case of the command word)."""
    r = _play(["--rules", "thirteen", "--players", "Ann,Boris", "--lang", "en"],
              "4\nspecial 5\nop third\n5\nspecial 7\nop plus\nTHROW [1, 2]\nop times2\n"
              "throw [3, 2]\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Ann: the ordinary die shows 4" in r.stdout and "Ann: 9" in r.stdout
    assert "Ann: take a third" in r.stdout and "→ 13" in r.stdout
    assert "13 plus 3 → 16" in r.stdout
    assert "16 multiply by 2 5 → 26" in r.stdout and "26 = 2 × 13" in r.stdout
    assert "running number 26" in r.stdout
    # no line was refused
    assert not any(ln.startswith(("? ", "Not allowed")) for ln in r.stdout.splitlines())
