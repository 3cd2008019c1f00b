"""Games out and back in (issue 43, item 1): ``GET /api/games/{id}/export``, ``kosti games export / import``.

Games are played through the dashboard's API (the real session and SQLite file), exported, and given to the real
``kosti replay``; the replayed final state must be the stored one, for every preset. The CSV is read back with the
``csv`` module; an import is replayed and stored, and a bad file changes nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import zipfile
from pathlib import Path

import pytest

from kosti.cli import main
from kosti.dashboard.store import Store
from kosti.dashboard.views import state_from_json
from kosti.engine import PRESET_NAMES
from kosti.engine.game import Bank, Keep, Roll
from kosti.engine.games import GAME_PRESETS, Choose, GameState
from kosti.engine.selfplay import random_action

ALL_PRESETS = sorted(set(PRESET_NAMES) | set(GAME_PRESETS))
#: Seeds of the random games (a drawn game is pinned in test_dashboard_games.py: its ``winner`` is a list).
SEEDS = {"chicago": 1, "high_dice": 2}


def _next_action(state, rng: random.Random):
    """A legal next action for the player to move (the engine's random play), or None when the game is over."""
    if state.over:
        return None
    if isinstance(state, GameState):
        return random_action(state, rng)
    m = state.moves()
    choice = state.random_choice(rng)
    if choice is not None and (not m.roll or rng.random() < 0.5):
        return choice
    if m.bank and rng.random() < 0.25:
        return Bank()
    return Roll(tuple(rng.randint(1, 6) for _ in range(m.dice)))


def _post(client, gid: int, action) -> None:
    """Send ``action`` through the dashboard's control routes, as a phone at the table does."""
    if isinstance(action, Roll):
        r = client.post(f"/api/games/{gid}/enter", json={"faces": list(action.faces)})
    elif isinstance(action, Keep):
        r = client.post(f"/api/games/{gid}/keep", json={"faces": list(action.faces)})
    elif isinstance(action, Choose):
        r = client.post(f"/api/games/{gid}/choose", json={"key": action.key, "value": action.value})
    else:
        r = client.post(f"/api/games/{gid}/bank")
    assert r.status_code == 200, (action, r.text)


def _play(client, start_game, preset: str, seed: int, actions: int = 30, undo_every: int = 7) -> int:
    """Start a game of ``preset`` and play up to ``actions`` random legal actions through the API, taking one back
    with Undo now and then (an undone action must not be exported). Returns the game id."""
    gid = start_game(client, ("Ann", "Борис"), preset)
    table = client.app.state.table
    rng = random.Random(seed)
    for i in range(actions):
        action = _next_action(table.session.state, rng)
        if action is None:
            break
        _post(client, gid, action)
        if i % undo_every == undo_every - 1 and not table.session.state.over:
            assert client.post(f"/api/games/{gid}/undo").status_code == 200
    return gid


def _replay_json(tmp_path: Path, record: dict, capsys) -> dict:
    """``kosti replay --json`` on ``record`` written to a file (the real command line); its one JSON document."""
    f = tmp_path / "game.json"
    f.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", "--json", str(f)]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_export_replays_to_the_stored_state_for_every_preset(preset, client, start_game, tmp_path, capsys):
    gid = _play(client, start_game, preset, seed=SEEDS.get(preset, len(preset)))
    r = client.get(f"/api/games/{gid}/export?format=json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert f'filename="kosti-game-{gid}.json"' in r.headers["content-disposition"]
    record = r.json()
    assert set(record) == {"rules", "players", "events"} and record["players"] == ["Ann", "Борис"]
    stored = state_from_json(client.app.state.store.get_game(gid).state_json)
    assert _replay_json(tmp_path, record, capsys) == json.loads(json.dumps(stored.summary(), ensure_ascii=False))
    assert len(record["events"]) == len(client.app.state.store.actions(gid))  # live actions only


def test_a_corrected_throw_and_undo_export_as_played(client, start_game, throw, tmp_path, capsys):
    """A camera throw held for a check and confirmed with other faces exports as the confirmed faces; an undone
    action is left out; the replay of the export ends where the table is."""
    gid = start_game(client, ("Ann", "Boris"))
    table = client.app.state.table
    table.submit_throw(throw([1, 1, 0, 3, 4], status="uncertain"))
    assert client.post(f"/api/games/{gid}/confirm", json={"faces": [1, 1, 5, 3, 4]}).status_code == 200
    assert client.post(f"/api/games/{gid}/enter", json={"faces": [2, 2]}).status_code == 200  # bust
    assert client.post(f"/api/games/{gid}/undo").status_code == 200
    assert client.post(f"/api/games/{gid}/enter", json={"faces": [5, 6]}).status_code == 200
    record = client.get(f"/api/games/{gid}/export").json()
    assert record["events"] == [{"roll": [1, 1, 5, 3, 4]}, {"roll": [5, 6]}]
    out = _replay_json(tmp_path, record, capsys)
    assert out["turn"]["turn_points"] == table.snapshot()["state"]["turn"]["turn_points"] == 30  # 1 1 5, then a 5
    # kosti advise reads the same file: advice for Ann, 30 points in hand and 1 die to throw
    capsys.readouterr()
    assert main(["advise", "--json", str(tmp_path / "game.json")]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert (advice["player"], advice["turn_points"], advice["dice_to_throw"]) == ("Ann", 30, 1)


def test_every_chicago_throw_is_its_own_turn_on_the_sheet_and_in_the_csv(client, throw, start_game):
    """Chicago passes the dice after every throw with no stop or bust: each throw is its own turn (its own CSV row
    and sheet cell), not one turn 1 of Ann holding the whole game."""
    gid = start_game(client, ("Ann", "Boris"), preset="chicago", overrides={"rounds": 2})
    table = client.app.state.table
    for faces in ([1, 1], [3, 4], [2, 1], [6, 6]):  # round 1 (needs 2): Ann hits; round 2 (needs 3): Ann hits
        assert table.submit_throw(throw(faces))["applied"]
    sheet = client.get(f"/api/games/{gid}/history").json()["sheet"]
    assert [r["round"] for r in sheet["rows"]] == [1, 2]
    assert [{n: c["score"] for n, c in r["cells"].items()} for r in sheet["rows"]] == [
        {"Ann": 2, "Boris": 0}, {"Ann": 5, "Boris": 0}]
    text = client.get(f"/api/games/{gid}/export?format=csv").content.decode("utf-8-sig")
    rows = [(r["turn"], r["round"], r["player"], r["throws"]) for r in csv.DictReader(io.StringIO(text))]
    assert rows == [("1", "1", "Ann", "1 1"), ("2", "1", "Boris", "3 4"), ("3", "2", "Ann", "2 1"),
                    ("4", "2", "Boris", "6 6")]


def test_csv_has_one_row_per_turn_and_a_column_per_player(client, start_game):
    gid = start_game(client, ("Ann", "Борис"))
    for faces in ([1, 5, 2, 3, 6], [2, 2, 3], [1, 1, 1, 2, 3]):  # Ann: 15, then a bust; Boris: 100
        client.post(f"/api/games/{gid}/enter", json={"faces": faces})
    assert client.post(f"/api/games/{gid}/bank").status_code in (200, 409)
    r = client.get(f"/api/games/{gid}/export?format=csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    text = r.content.decode("utf-8-sig")  # the byte-order mark a spreadsheet needs to read UTF-8
    assert r.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(text)))
    store = client.app.state.store
    played_turns = sorted({a.turn_no for a in store.actions(gid)})
    assert [int(row["turn"]) for row in rows] == played_turns
    header = next(csv.reader(io.StringIO(text)))
    assert header[:6] == ["turn", "round", "player", "throws", "turn_points", "outcome"]
    assert header[6:8] == ["Ann", "Борис"] and header[-2:] == ["events", "events_ru"]
    first = rows[0]
    assert first["player"] == "Ann" and first["throws"] == "1 5 2 3 6; 2 2 3"
    assert first["outcome"] == "bust" and first["turn_points"] == "0" and first["Ann"] == "0"
    assert first["events_ru"] and first["events"]
    # each player's column is the recorded score after the turn: the last row is the table's scoreboard now
    board = {p["name"]: p["score"] for p in client.app.state.table.snapshot()["state"]["players"]}
    assert {n: int(rows[-1][n]) for n in board} == board


def test_zip_has_the_record_the_sheet_and_the_photos(client, start_game, throw):
    gid = start_game(client, ("Ann", "Boris"))
    client.app.state.table.submit_throw(throw([1, 5, 2, 3, 4], image=True))
    r = client.get(f"/api/games/{gid}/export?format=zip")
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    z = zipfile.ZipFile(io.BytesIO(r.content))
    tid = client.app.state.store.throws(gid)[0].id
    assert set(z.namelist()) == {"game.json", "game.csv", f"photos/throw-{tid}.jpg"}
    assert z.read(f"photos/throw-{tid}.jpg") == client.app.state.store.throw_image(tid)
    assert json.loads(z.read("game.json"))["events"] == [{"roll": [1, 5, 2, 3, 4]}]


def test_export_of_an_unknown_game_or_format_is_refused(client, start_game):
    start_game(client)
    assert client.get("/api/games/999/export").status_code == 404
    assert client.get("/api/games/1/export?format=xlsx").status_code == 422


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cli_export_import_round_trip(make_client, start_game, tmp_path, capsys):
    """``kosti games export`` → ``kosti games import`` into another database: the same state, turns and sheet; a
    finished game stays finished, an unfinished one is put aside (resumable) and never takes over the table."""
    client = make_client()
    done = _play(client, start_game, "classic", seed=3, actions=100_000)
    assert client.app.state.table.session.state.over
    running = _play(client, start_game, "pig", seed=4, actions=25)
    db = tmp_path / "kosti.db"
    out = tmp_path / "exported"
    assert main(["games", "export", "--all", "--out", str(out), "--db", str(db)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"kosti-game-{done}.json", f"kosti-game-{running}.json"]
    other = tmp_path / "other.db"
    for gid in (done, running):
        capsys.readouterr()
        assert main(["games", "import", str(out / f"kosti-game-{gid}.json"), "--db", str(other)]) == 0
        assert "imported as game" in capsys.readouterr().out
    src, dst = client.app.state.store, Store(other)
    try:
        for new_id, gid in enumerate((done, running), start=1):
            a, b = src.get_game(gid), dst.get_game(new_id)
            assert state_from_json(b.state_json) == state_from_json(a.state_json)
            assert [(t["turn_no"], t["player"], t["score_after"], t["outcome"]) for t in dst.turns(new_id)] == \
                   [(t["turn_no"], t["player"], t["score_after"], t["outcome"]) for t in src.turns(gid)]
            assert [(x.kind, x.payload.get("faces"), x.events) for x in dst.actions(new_id)] == \
                   [(x.kind, x.payload.get("faces"), x.events) for x in src.actions(gid)]
        assert dst.get_game(1).status == "finished" and dst.get_game(1).winner == src.get_game(done).winner
        assert dst.get_game(2).status == "abandoned" and dst.latest_active_game() is None
    finally:
        dst.close()
    # stdout export: one JSON document, the same as the route's
    capsys.readouterr()
    assert main(["games", "export", str(done), "--db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out) == client.get(f"/api/games/{done}/export").json()


@pytest.mark.parametrize(("content", "message"), [
    ('{"rules": "classic", "players": ["Ann", "Boris"], "events": [{"bank": true}]}', "event 0: the rules forbid it"),
    ('{"rules": "classic", "players": ["Ann", "Boris"], "events": [{"roll": [1, 2, 3]}]}', "event 0: Ann must throw 5 dice, got 3"),
    ('{"rules": "classic", "players": ["Ann"], "events": [], "scores": {"Ann": 500}}', "starts mid-way"),
    ('{"rules": "no_such_rules", "players": ["Ann", "Boris"], "events": []}', "no_such_rules"),
    ('{"rules": "classic", "players": ["Ann", "Boris"], "events": [{"roll": [1, 5, 2, 3, 4]}', "malformed JSON"),
    ("PK\x03\x04 not really a zip", "damaged zip"),
])
def test_a_bad_file_is_refused_with_one_line_and_changes_nothing(content, message, make_client, start_game, tmp_path,
                                                                   capsys):
    client = make_client()
    start_game(client)
    client.post("/api/games/1/enter", json={"faces": [1, 5, 2, 3, 4]})
    db = tmp_path / "kosti.db"
    before = _sha(db), len(client.app.state.store.list_games())
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    capsys.readouterr()
    assert main(["games", "import", str(bad), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert (_sha(db), len(client.app.state.store.list_games())) == before


def test_exported_zip_imports_too(client, start_game, throw, tmp_path, capsys):
    gid = start_game(client, ("Ann", "Boris"))
    client.post(f"/api/games/{gid}/enter", json={"faces": [1, 5, 2, 3, 4]})
    z = tmp_path / "g.zip"
    z.write_bytes(client.get(f"/api/games/{gid}/export?format=zip").content)
    assert main(["games", "import", str(z), "--db", str(tmp_path / "new.db")]) == 0
    s = Store(tmp_path / "new.db")
    try:
        assert [a.payload["faces"] for a in s.actions(1)] == [[1, 5, 2, 3, 4]]
    finally:
        s.close()
