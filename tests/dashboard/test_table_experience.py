"""The table experience (issue 18): game management, entry that never blocks the game, what a throw and a
stop did to the score, the paper score sheet, plain bilingual errors, a server that cannot start."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kosti.cli import main
from kosti.dashboard.app import DashboardConfig, create_app
from kosti.dashboard.table import state_from_json

CYRILLIC = re.compile("[а-яА-ЯёЁ]")


def _with_scores(table, **scores):
    """Put these recorded scores (and 'opened') on the table's engine state (a position reached in play)."""
    j = table.session.state.to_json()
    for p in j["players"]:
        if p["name"] in scores:
            p["score"], p["opened"] = scores[p["name"]], True
    table.session.set_state(state_from_json(__import__("json").dumps(j)))


# -- 1. Start never deletes the running game ----------------------------------------------------------
def test_start_asks_before_replacing_a_running_game_and_the_old_one_can_be_resumed(client, throw, start_game, scores):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))
    client.post(f"/api/games/{gid}/bank")
    r = client.post("/api/games", json={"players": ["Vera", "Gleb"]})
    body = r.json()
    assert r.status_code == 409 and body["code"] == "replace_needed"
    assert "Ann, Boris" in body["error"] and CYRILLIC.search(body["error_ru"])
    s = client.get("/api/state").json()
    assert s["game"]["id"] == gid and scores(s) == {"Ann": 105, "Boris": 0}  # nothing changed
    assert client.app.state.store.get_game(gid).status == "active"
    # Confirmed: the new game starts, the old one is put aside ...
    r = client.post("/api/games", json={"players": ["Vera", "Gleb"], "replace": True})
    assert r.status_code == 201
    new = r.json()["game"]["id"]
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert games[gid]["status"] == "abandoned" and games[gid]["scores"] == {"Ann": 105, "Boris": 0}
    assert games[new]["current"] is True and games[gid]["current"] is False
    # ... and resumes intact, asking again before it puts the new one aside.
    r = client.post(f"/api/games/{gid}/resume")
    assert r.status_code == 409 and r.json()["code"] == "replace_needed"
    r = client.post(f"/api/games/{gid}/resume", json={"replace": True})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["game"]["id"] == gid and scores(s) == {"Ann": 105, "Boris": 0} and s["state"]["to_move"] == "Boris"
    assert s["turn_no"] == 2
    assert client.app.state.store.get_game(new).status == "abandoned"
    assert client.post("/api/games/999/resume").status_code == 404


def test_rematch_and_final_standings(client, throw, start_game, scores):
    gid = start_game(client, players=["Ann", "Boris"], preset="classic_no_barrel")
    table = client.app.state.table
    _with_scores(table, Ann=990)
    table.submit_throw(throw([1, 2, 3, 3, 6]))  # 10 more: 1000 wins at once (no barrel in this preset)
    s = client.get("/api/state").json()
    assert s["state"]["over"] and s["state"]["winner"] == "Ann"
    assert s["banner"]["kind"] == "win"
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert games[gid]["status"] == "finished" and games[gid]["winner"] == "Ann"
    assert games[gid]["scores"]["Ann"] >= 1000
    # A finished game cannot be resumed; a rematch needs no confirmation and keeps players and rules.
    assert client.post(f"/api/games/{gid}/resume").json()["code"] == "finished"
    r = client.post(f"/api/games/{gid}/rematch")
    assert r.status_code == 201, r.text
    s = r.json()
    assert s["game"]["id"] != gid and s["game"]["players"] == ["Ann", "Boris"] and scores(s) == {"Ann": 0, "Boris": 0}
    assert s["game"]["rules"] == {"preset": "classic_no_barrel", "overrides": {}}


# -- 2. A process that fails to start changes nothing ------------------------------------------------
def test_a_second_server_on_a_taken_port_changes_nothing(tmp_path, capsys):
    db = tmp_path / "k.db"
    app = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], start_capture=False))
    gid = app.state.table.session.game_id
    app.state.store.close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code = main(["run", "--source", "virtual", "--reader", "truth", "--players", "Vera,Gleb", "--port", str(port),
                     "--db", str(db)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "port" in err and "in use" in err and len(err.splitlines()) == 1
    app = create_app(DashboardConfig(db_path=db, start_capture=False))
    assert app.state.table.session.game_id == gid and app.state.store.get_game(gid).status == "active"
    assert [g.id for g in app.state.store.list_games()] == [gid]  # no new game was written
    app.state.store.close()


def test_a_second_server_on_the_same_database_refuses_to_start(tmp_path):
    """Another process holds the database: a second ``kosti demo`` exits 2 and writes no game."""
    db = tmp_path / "k.db"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from kosti.dashboard.cli import _lock_database; from pathlib import Path;"
        f"l = _lock_database(Path({str(db)!r})); print('locked', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        out = subprocess.run([sys.executable, "-m", "kosti", "demo", "--reader", "truth", "--players", "A,B",
                              "--port", str(port), "--db", str(db)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "in use by another kosti" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert not db.exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_missing_camera_is_one_line_and_pin_is_honoured_on_loopback(tmp_path, capsys, monkeypatch):
    import kosti.dashboard.cli as dcli

    class NoCamera:
        def __init__(self, target):
            self.target = target

        def isOpened(self):
            return False

        def release(self):
            pass

    with pytest.raises(dcli.CliError, match="camera 7 cannot be opened"):
        dcli._probe_camera("7", NoCamera)
    dcli._probe_camera("rtsp://cam/stream", NoCamera)  # a network stream may come up later: not probed
    seen = {}
    monkeypatch.setattr(dcli, "_serve", lambda config, args: seen.setdefault("c", config) and 0)
    assert main(["demo", "--reader", "truth", "--pin", "2468", "--db", str(tmp_path / "k.db")]) == 0
    c = seen.pop("c")
    assert c.host == "127.0.0.1" and c.pin_required  # --pin on 127.0.0.1 is not silently ignored
    app = create_app(DashboardConfig(**{**c.__dict__, "start_capture": False}))
    from fastapi.testclient import TestClient

    tc = TestClient(app, base_url="http://127.0.0.1:8000")  # a browser on the table's own machine
    assert tc.post("/api/games", json={"players": ["A", "B"]}).status_code == 403
    assert tc.post("/api/games", json={"players": ["A", "B"]}, headers={"X-Kosti-Pin": "2468"}).status_code == 201
    app.state.store.close()


# -- 4. A bust, a dump truck and what Stop would do are shown -----------------------------------------
def test_a_bust_is_marked_as_a_bust_not_as_scored(client, throw, start_game):
    gid = start_game(client)
    table = client.app.state.table
    table.submit_throw(throw([1, 5, 2, 3, 3]))  # 15, three dice left
    table.submit_throw(throw([2, 3, 4]))  # nothing scores: bust
    s = client.get("/api/state").json()
    assert s["last_throw"]["outcome"] == "bust" and s["last_throw"]["points"] == 0
    assert s["banner"]["kind"] == "bust" and s["banner"]["player"] == "Ann"
    assert s["state"]["to_move"] == "Boris"
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["outcome"] for t in h["throws"]] == ["scored", "bust"]
    assert h["throws"][0]["points"] == 15


def test_stop_preview_warns_of_the_dump_truck_and_the_banner_says_what_it_did(client, throw, start_game, scores):
    gid = start_game(client)
    table = client.app.state.table
    _with_scores(table, Ann=535)
    table.submit_throw(throw([5, 5, 2, 3, 3]))  # 10, three dice left
    table.submit_throw(throw([1, 2, 3]))  # 10 more: stopping now records 555
    pts = client.get("/api/state").json()["state"]["turn"]["turn_points"]
    assert pts == 20
    s = client.get("/api/state").json()
    pv = s["bank_preview"]
    assert pv["warn"] is True and any(e["kind"] == "dump_truck" for e in pv["events"])
    assert pv["changes"] == [{"player": "Ann", "before": 555 - pts, "after": 0}]
    s = client.post(f"/api/games/{gid}/bank").json()
    assert scores(s)["Ann"] == 0
    assert s["banner"]["kind"] == "dump_truck"
    assert s["banner"]["changes"] == [{"player": "Ann", "before": 555 - pts, "after": 0}]
    # An ordinary stop is previewed without a warning.
    _with_scores(table, Boris=100)
    table.submit_throw(throw([1, 5, 2, 3, 3]))
    pv = client.get("/api/state").json()["bank_preview"]
    assert pv["warn"] is False and pv["changes"] == [{"player": "Boris", "before": 100, "after": 115}]


# -- 5. Undo after Fix restores the throw --------------------------------------------------------------
def test_undo_after_fix_restores_the_throw(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))
    s = client.post(f"/api/games/{gid}/fix", json={"die_index": 4, "value": 5}).json()
    assert s["state"]["turn"]["turn_points"] == 110 and s["last_throw"]["faces"] == [1, 1, 1, 5, 5]
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["state"]["turn"]["turn_points"] == 105 and s["last_throw"]["faces"] == [1, 1, 1, 5, 3]
    assert s["last_throw"]["resolution"] == "applied"
    assert "1 1 1 5 3" in s["events"][-1]["text_en"] and "1 1 1 5 3" in s["events"][-1]["text_ru"]
    # The next undo takes the throw itself back (in Russian words, not the action's code name).
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["state"]["turn"]["turn_points"] == 0
    assert s["events"][-1]["text_ru"] == "Отменено: бросок 1 1 1 5 3"


def test_undo_takes_back_one_edit_of_a_pending_throw(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 0, 5, 2, 3], status="uncertain"))
    client.post(f"/api/games/{gid}/fix", json={"die_index": 1, "value": 4})
    client.post(f"/api/games/{gid}/remove", json={"die_index": 0})
    assert client.get("/api/state").json()["pending"]["faces"] == [4, 5, 2, 3]
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["pending"]["faces"] == [1, 4, 5, 2, 3]
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["pending"]["faces"] == [1, 0, 5, 2, 3]
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["pending"] is None  # no edits left: the throw itself is dropped


# -- 6. Manual entry with any source ------------------------------------------------------------------
def test_manual_entry_scores_without_a_camera_and_replaces_a_pending_throw(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 0], status="uncertain"))  # the camera missed dice
    r = client.post(f"/api/games/{gid}/enter", json={"faces": [1, 1, 1, 5, 3]})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["pending"] is None and s["state"]["turn"]["turn_points"] == 105
    assert s["last_throw"]["source"] == "manual" and s["last_throw"]["outcome"] == "scored"
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["resolution"] for t in h["throws"]] == ["superseded", "applied"]
    r = client.post(f"/api/games/{gid}/enter", json={"faces": [7]})
    assert r.status_code == 422 and r.json()["error"] == "faces of the dice (die 1): must be at most 6"
    assert r.json()["error_ru"] == "грани костей (кость 1): должно быть не больше 6"


# -- 7. A throw with extra dice is resolved by removing them -------------------------------------------
def test_extra_dice_are_removed_from_a_pending_throw(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3, 2, 6]))  # 7 seen, 5 thrown
    s = client.get("/api/state").json()
    assert s["pending"] and s["state"]["turn"]["turn_points"] == 0
    boxes = s["pending"]["boxes"]
    client.post(f"/api/games/{gid}/remove", json={"die_index": 6})
    s = client.post(f"/api/games/{gid}/remove", json={"die_index": 5}).json()
    assert s["pending"]["faces"] == [1, 1, 1, 5, 3] and s["pending"]["boxes"] == boxes[:5]
    s = client.post(f"/api/games/{gid}/confirm", json={}).json()
    assert s["pending"] is None and s["state"]["turn"]["turn_points"] == 105
    # Confirming with the faces given (the extra one left out) also works in one step.
    client.post(f"/api/games/{gid}/bank")
    client.app.state.table.submit_throw(throw([5, 2, 3, 3, 6, 6]))
    r = client.post(f"/api/games/{gid}/confirm", json={"faces": [5, 2, 3, 3, 6]})
    assert r.status_code == 200 and r.json()["state"]["turn"]["turn_points"] == 5
    assert client.post(f"/api/games/{gid}/remove", json={"die_index": 0}).status_code == 409  # nothing pending


# -- 8. /docs renders OpenAPI 3.1 ----------------------------------------------------------------------
def test_docs_use_a_swagger_ui_that_reads_openapi_3_1(client):
    assert client.get("/openapi.json").json()["openapi"].startswith("3.1")
    js = client.get("/docs-static/swagger-ui-bundle.js").text
    versions = re.findall(r'version:"(\d+)\.\d+\.\d+"', js) + re.findall(r'"(5)\.\d+\.\d+"', js)
    assert "5" in versions  # Swagger UI 5 reads OpenAPI 3.1; 4.x says "Unable to render this definition"


# -- 12. The score sheet explains fines in the victim's column ------------------------------------------
def test_score_sheet_has_a_row_per_round_and_explains_overtaking(client, throw, start_game):
    gid = start_game(client)
    table = client.app.state.table
    _with_scores(table, Ann=100, Boris=120)
    table.submit_throw(throw([1, 1, 2, 3, 3]))  # 20, three dice left
    table.submit_throw(throw([1, 2, 3]))  # 10 more: Ann stops at 130, past Boris (120): overtaking
    client.post(f"/api/games/{gid}/bank")
    sheet = client.get(f"/api/games/{gid}/history").json()["sheet"]
    assert sheet["players"] == ["Ann", "Boris"] and sheet["rows"][0]["round"] == 1
    ann = sheet["rows"][0]["cells"]["Ann"]
    assert ann["outcome"] == "bank" and ann["score"] == 130 and ann["delta"] == 30
    boris = sheet["rows"][0]["cells"]["Boris"]
    assert boris["notes"] and boris["notes"][0]["kind"] == "overtaken" and boris["notes"][0]["delta"] == -50
    assert boris["notes"][0]["by"] == "Ann" and CYRILLIC.search(boris["notes"][0]["text_ru"])


def test_start_up_says_what_it_did_with_the_stored_game(tmp_path, caplog):
    """'resumed game 1' must not be logged when a new game then replaces it (issue 18 #13)."""
    import logging

    db = tmp_path / "k.db"
    a = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], start_capture=False))
    a.state.store.close()
    with caplog.at_level(logging.INFO, logger="kosti.dashboard.app"):
        b = create_app(DashboardConfig(db_path=db, players=["Vera", "Gleb"], start_capture=False))
    text = caplog.text
    assert "resumed game 1" not in text
    assert "started game 2; game 1 was put aside (resume it from the list of games)" in text
    b.state.store.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kosti.dashboard.app"):
        c = create_app(DashboardConfig(db_path=db, players=["Vera", "Gleb"], start_capture=False))
    assert "resumed game 2 (Vera, Gleb)" in caplog.text
    c.state.store.close()


def test_a_camera_that_is_not_there_is_one_line_on_stderr(tmp_path):
    """``kosti run --source 63``: exit 2, one line, no OpenCV warnings, no database (issue 18 #13)."""
    if Path("/dev/video63").exists():
        pytest.skip("this machine has a /dev/video63")
    out = subprocess.run([sys.executable, "-m", "kosti", "run", "--source", "63", "--reader", "truth",
                          "--db", str(tmp_path / "k.db")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "kosti run: camera 63 cannot be opened: no such camera, or it is busy (list them: ls /dev/video*)"]
    assert not (tmp_path / "k.db").exists()
