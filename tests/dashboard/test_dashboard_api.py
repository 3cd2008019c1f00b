"""HTTP API of the dashboard: games, throws, controls, errors, PIN, settings, images (FastAPI TestClient)."""

from __future__ import annotations

import re

import pytest

CYRILLIC = re.compile("[а-яА-ЯёЁ]")


def test_new_game_throw_bank_changes_scoreboard(client, throw, start_game, scores):
    gid = start_game(client)
    s = client.get("/api/state").json()
    assert s["game"]["id"] == gid and s["game"]["players"] == ["Ann", "Boris"]
    assert s["state"]["to_move"] == "Ann" and s["state"]["turn"]["dice_to_throw"] == 5
    assert scores(s) == {"Ann": 0, "Boris": 0}
    summary = [line["en"] for line in s["state"]["rules_summary"]]
    assert "overtaking / обгон −50" in summary and "dump truck / самосвал 555" in summary  # classic, rules.md §4.1

    out = client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))  # 100 + 5 = 105 (rules.md T1)
    assert out["applied"] is True
    s = client.get("/api/state").json()
    assert s["state"]["turn"]["turn_points"] == 105
    assert s["state"]["turn"]["dice_to_throw"] == 1
    assert s["last_throw"]["faces"] == [1, 1, 1, 5, 3] and s["last_throw"]["resolution"] == "applied"
    assert s["state"]["allowed"]["bank"] is True

    r = client.post(f"/api/games/{gid}/bank")
    assert r.status_code == 200, r.text
    s = r.json()
    assert scores(s) == {"Ann": 105, "Boris": 0}
    assert s["state"]["to_move"] == "Boris" and s["turn_no"] == 2

    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["player"] for t in h["turns"]] == ["Ann", "Boris"]
    assert h["turns"][0]["outcome"] == "bank" and h["turns"][0]["score_after"] == 105
    assert [a["kind"] for a in h["actions"]] == ["roll", "bank"]
    assert h["throws"][0]["faces"] == [1, 1, 1, 5, 3]


def test_bust_passes_the_turn(client, throw, start_game, scores):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([2, 3, 4, 6, 6]))  # nothing scores: bust
    s = client.get("/api/state").json()
    assert s["state"]["to_move"] == "Boris" and scores(s) == {"Ann": 0, "Boris": 0}
    h = client.get(f"/api/games/{gid}/history").json()
    assert h["turns"][0]["outcome"] == "bust"


def test_uncertain_throw_is_held_until_fixed_and_confirmed(client, throw, start_game):
    gid = start_game(client)
    table = client.app.state.table
    out = table.submit_throw(throw([1, 0, 5, 2, 3], status="uncertain"))
    assert out["applied"] is False
    s = client.get("/api/state").json()
    assert s["pending"] is not None and s["pending"]["faces"] == [1, 0, 5, 2, 3]
    assert s["state"]["turn"]["turn_points"] == 0 and s["state"]["turn"]["throws"] == 0  # nothing scored

    r = client.post(f"/api/games/{gid}/confirm")
    assert r.status_code == 409 and "unread" in r.json()["error"] and CYRILLIC.search(r.json()["error_ru"])
    r = client.post(f"/api/games/{gid}/bank")  # no other control while a throw waits
    assert r.status_code == 409 and "confirm" in r.json()["error"]

    r = client.post(f"/api/games/{gid}/fix", json={"die_index": 1, "value": 1})
    assert r.status_code == 200 and r.json()["pending"]["faces"] == [1, 1, 5, 2, 3]
    assert r.json()["state"]["turn"]["turn_points"] == 0  # still not scored before confirmation
    r = client.post(f"/api/games/{gid}/confirm")
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["pending"] is None and s["state"]["turn"]["turn_points"] == 25  # 1 + 1 + 5
    h = client.get(f"/api/games/{gid}/history").json()
    assert h["corrections"][0]["die_index"] == 1 and h["corrections"][0]["old_value"] == 0
    assert h["corrections"][0]["new_value"] == 1 and h["corrections"][0]["actor"].startswith("local")
    assert h["throws"][0]["resolution"] == "corrected"


@pytest.mark.parametrize("reason", ["hand in view / рука в кадре", "dice overlap / кости перекрываются",
                                    "frames disagree / кадры расходятся"])
def test_a_throw_the_camera_flagged_uncertain_is_held_even_with_every_die_read(client, throw, start_game, reason):
    """Every die has a face 1-6 and the count matches, but the camera said "uncertain" (a hand, an overlap,
    frames that disagree): the throw waits for the table; scoring it as "ok" would score a guess."""
    gid = start_game(client)
    out = client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3], status="uncertain", reasons=[reason]))
    assert out["applied"] is False and out["reasons"] == [reason]
    s = client.get("/api/state").json()
    assert s["pending"]["faces"] == [1, 1, 1, 5, 3] and s["pending"]["status"] == "uncertain"
    assert s["state"]["turn"]["turn_points"] == 0 and s["state"]["turn"]["throws"] == 0
    r = client.post(f"/api/games/{gid}/confirm")  # the table looked: the faces were right
    assert r.status_code == 200, r.text
    assert r.json()["state"]["turn"]["turn_points"] == 105


def test_the_reasons_shown_for_a_held_throw_are_the_cameras_own_else_the_tables(client, start_game):
    """An uncertain throw says the camera's reasons (not the count check's as well); an ok throw held for the
    count, or an uncertain one the camera gave no reason for, says the table's reason. The latest throw on the
    page carries the same reasons and the moment its frame settled."""
    import numpy as np

    from kosti.dashboard.table import TableDie, TableThrow

    def thr(faces, status, reasons):
        dice = [TableDie(f, 0.9, [40.0 * i, 10.0, 40.0 * i + 30, 40.0]) for i, f in enumerate(faces)]
        return TableThrow(dice, status, reasons, 7, 0.25, np.zeros((120, 240, 3), np.uint8), settled_at=1234.5)

    start_game(client)
    table = client.app.state.table
    camera = "hand in view / рука в кадре"
    out = table.submit_throw(thr([1, 5, 5, 2], "uncertain", [camera]))  # 4 dice seen, 5 thrown
    assert out["reasons"] == [camera]
    s = client.get("/api/state").json()
    assert s["last_throw"]["reasons"] == [camera] and s["last_throw"]["settled_at"] == 1234.5
    out = table.submit_throw(thr([1, 5, 5, 2], "ok", []))
    assert len(out["reasons"]) == 1 and "expected 5" in out["reasons"][0]
    assert client.get("/api/state").json()["last_throw"]["reasons"] == out["reasons"]
    out = table.submit_throw(thr([1, 5, 5, 2], "uncertain", []))
    assert len(out["reasons"]) == 1 and "expected 5" in out["reasons"][0]


def test_a_throws_thumbnail_is_240_px_wide_and_the_photo_whole(client, throw, start_game):
    import cv2
    import numpy as np

    start_game(client)
    thr = throw([1, 1, 1, 5, 3])
    thr.image = np.full((360, 640, 3), 90, np.uint8)  # a camera frame
    out = client.app.state.table.submit_throw(thr)
    thumb = client.get(f"/api/throws/{out['throw_id']}/image.jpg", params={"thumb": True})
    full = client.get(f"/api/throws/{out['throw_id']}/image.jpg")
    small = cv2.imdecode(np.frombuffer(thumb.content, np.uint8), cv2.IMREAD_COLOR)
    big = cv2.imdecode(np.frombuffer(full.content, np.uint8), cv2.IMREAD_COLOR)
    assert big.shape[:2] == (360, 640) and max(small.shape[:2]) == 240


def test_a_throw_without_a_game_or_after_it_ended_is_only_shown(client, throw, start_game):
    table = client.app.state.table
    no_game = {"applied": False, "throw_id": None, "reasons": ["no game in progress"]}
    assert table.submit_throw(throw([1, 1, 1, 5, 3])) == no_game  # no game yet
    start_game(client, ("Ann",), preset="chicago", overrides={"rounds": 2})
    table.submit_throw(throw([1, 1]))
    table.submit_throw(throw([2, 1]))
    s = client.get("/api/state").json()
    assert s["state"]["over"] and s["game"]["status"] == "finished"
    assert table.submit_throw(throw([3, 3])) == no_game  # the game is over: nothing is stored or scored
    assert client.get("/api/state").json()["state"] == s["state"]


def test_a_camera_correction_with_nothing_to_replace_is_a_plain_throw(client, throw, start_game):
    """The camera says a throw corrects frame 7 (a die tipped over), but nothing was scored yet: it is the turn's
    first throw, scored as read."""
    start_game(client)
    thr = throw([1, 1, 1, 5, 3])
    thr.corrects = 7
    out = client.app.state.table.submit_throw(thr)
    assert out["applied"] is True and client.get("/api/state").json()["state"]["turn"]["turn_points"] == 105


@pytest.mark.parametrize("faces", [[1, 0, 5, 2, 3], [1, 7, 5, 2, 3]])
def test_an_ok_throw_with_a_die_not_read_1_to_6_is_held(client, throw, start_game, faces):
    """The camera said ok but a die has no face 1-6 (0 = unread, 7 = nothing a die shows): held, not scored."""
    from kosti.dashboard.table import TableDie

    start_game(client)
    thr = throw([1, 1, 5, 2, 3])
    thr.dice = [TableDie(f, 0.9, [40.0 * i, 10.0, 40.0 * i + 30, 40.0]) for i, f in enumerate(faces)]
    out = client.app.state.table.submit_throw(thr)
    assert out["applied"] is False and out["reasons"] == ["a die could not be read / кость не распознана"]
    assert client.get("/api/state").json()["state"]["turn"]["turn_points"] == 0


def test_ok_throw_with_wrong_dice_count_is_not_scored(client, throw, start_game):
    gid = start_game(client)
    out = client.app.state.table.submit_throw(throw([1, 5, 5, 2]))  # 4 dice seen, 5 thrown
    assert out["applied"] is False and any("expected 5" in r for r in out["reasons"])
    r = client.post(f"/api/games/{gid}/confirm", json={"faces": [1, 5, 5, 2, 3]})  # the table gives all faces
    assert r.status_code == 200 and r.json()["state"]["turn"]["turn_points"] == 20


def test_new_throw_replaces_a_pending_one(client, throw, start_game):
    gid = start_game(client)
    table = client.app.state.table
    table.submit_throw(throw([1, 0, 5, 2, 3], status="uncertain"))
    table.submit_throw(throw([5, 2, 2, 3, 4]))
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["resolution"] for t in h["throws"]] == ["superseded", "applied"]
    assert client.get("/api/state").json()["state"]["turn"]["turn_points"] == 5


def test_fix_latest_applied_throw_rescores_it(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 2, 3, 4, 6]))  # read as a single 1: 10
    assert client.get("/api/state").json()["state"]["turn"]["turn_points"] == 10
    r = client.post(f"/api/games/{gid}/fix", json={"die_index": 4, "value": 5})  # really 1-2-3-4-5: 125
    assert r.status_code == 200, r.text
    assert r.json()["state"]["turn"]["turn_points"] == 125
    h = client.get(f"/api/games/{gid}/history").json()
    live = [a for a in h["actions"] if not a["undone"]]
    assert len(live) == 1 and live[0]["payload"]["faces"] == [1, 2, 3, 4, 5]


def test_undo_restores_previous_states(client, throw, start_game, scores):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))
    client.post(f"/api/games/{gid}/bank")
    r = client.post(f"/api/games/{gid}/undo")
    assert r.status_code == 200
    s = r.json()
    assert scores(s) == {"Ann": 0, "Boris": 0} and s["state"]["to_move"] == "Ann"
    assert s["state"]["turn"]["turn_points"] == 105 and s["turn_no"] == 1
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["state"]["turn"]["turn_points"] == 0 and s["state"]["turn"]["dice_to_throw"] == 5
    r = client.post(f"/api/games/{gid}/undo")
    assert r.status_code == 409 and r.json()["error"] == "nothing to undo"
    # The log keeps the undone actions, marked.
    h = client.get(f"/api/games/{gid}/history").json()
    assert [a["undone"] for a in h["actions"]] == [True, True]
    assert h["throws"][0]["resolution"] == "undone"


def test_bad_requests_have_clear_messages(client, throw, start_game):
    gid = start_game(client)
    r = client.post("/api/games/999/bank")
    assert r.status_code == 404 and r.json()["error"] == "no game 999"
    r = client.get("/api/games/999/history")
    assert r.status_code == 404
    # Banking before any throw: the engine's reason in English and Russian.
    r = client.post(f"/api/games/{gid}/bank")
    assert r.status_code == 409
    body = r.json()
    assert body["error"] and CYRILLIC.search(body["error_ru"]) and body["error"] != body["error_ru"]
    # Classic sets every scoring die aside automatically: choosing is forbidden.
    client.app.state.table.submit_throw(throw([1, 5, 2, 3, 3]))
    r = client.post(f"/api/games/{gid}/keep", json={"faces": [1]})
    assert r.status_code == 409 and "automatically" in r.json()["error"]
    # Malformed JSON, wrong types, out-of-range values, unknown presets.
    # Every reason is a sentence for the players in both languages, never the validator's text (issue 18 #10).
    def plain(r, status, *words):
        body = r.json()
        assert r.status_code == status, r.text
        assert all(w in body["error"] for w in words), body
        assert CYRILLIC.search(body["error_ru"]), body
        for dev in ("List should", "Value error", "validation", "Input should", "Field required", "faces"):
            assert dev not in body["error"] or dev == "faces" and "faces of the dice" in body["error"], body
        return body

    plain(client.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"}), 422, "JSON")
    plain(client.post("/api/games", json={"players": []}), 422, "player name")
    plain(client.post("/api/games", json={"players": ["A", " A"]}), 422, "same name", "A")
    plain(client.post("/api/games", json={"players": ["A", ""]}), 422, "player name")
    assert "no_such_rules" in plain(client.post("/api/games", json={"players": ["A", "B"], "preset": "no_such_rules"}),
                                    422)["error"]
    plain(client.post("/api/games", json={"players": ["A", "B"], "overrides": {"opening": {"nope": 1}}}), 422, "rules")
    plain(client.post(f"/api/games/{gid}/fix", json={"die_index": 0, "value": 7}), 422, "die value", "6")
    plain(client.post(f"/api/games/{gid}/fix", json={"die_index": "x", "value": 2}), 422, "die number")
    plain(client.post(f"/api/games/{gid}/enter", json={"faces": [5]}), 422, "dice are to be thrown now")
    assert client.post(f"/api/games/{gid}/enter", json={"faces": [5]}).json()["error_ru"] == "сейчас бросают 3 кости, а не 1"
    r = client.post(f"/api/games/{gid}/throw")
    assert r.status_code == 409 and "real camera" in r.json()["error"]  # no virtual table here
    # The game went on untouched by the bad requests.
    assert client.get("/api/state").json()["game"]["id"] == gid


def test_keep_choice_where_the_preset_allows_it(client, throw, start_game):
    gid = start_game(client, preset="farkle")
    client.app.state.table.submit_throw(throw([1, 5, 2, 2, 3, 4]))
    s = client.get("/api/state").json()
    assert s["state"]["allowed"]["keep"] is True and s["state"]["choose_keep"] is True
    assert {tuple(k["faces"]) for k in s["state"]["allowed"]["keeps"]} >= {(1,), (1, 5), (5,)}
    r = client.post(f"/api/games/{gid}/keep", json={"faces": [1]})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["state"]["turn"]["turn_points"] == 100 and s["state"]["turn"]["dice_to_throw"] == 5
    r = client.post(f"/api/games/{gid}/keep", json={"faces": [2]})
    assert r.status_code == 409


def test_overrides_are_applied_and_stored(client, start_game):
    gid = start_game(client, overrides={"opening": {"threshold": 75}})
    s = client.get("/api/state").json()
    assert s["game"]["rules"] == {"preset": "classic", "overrides": {"opening": {"threshold": 75}}}
    table = client.app.state.table
    assert table.session.state.rules.opening.threshold == 75
    assert client.get(f"/api/games/{gid}/history").json()["game"]["rules"]["overrides"]["opening"]["threshold"] == 75


def test_presets_and_docs(client):
    presets = client.get("/api/presets").json()["presets"]
    names = [p["name"] for p in presets]
    assert "classic" in names and "farkle" in names
    classic = presets[names.index("classic")]
    assert classic["dice"] == 5 and classic["target"] == 1000
    assert client.get("/openapi.json").json()["paths"]["/api/games/{game_id}/bank"]
    assert client.get("/docs").status_code == 200
    ref = client.get("/api")  # the offline API page
    assert ref.status_code == 200 and "/api/games/{game_id}/bank" in ref.text and "NewGame" in ref.text
    page = client.get("/")
    assert page.status_code == 200 and 'id="btn-bank"' in page.text
    assert client.get("/static/app.js").status_code == 200


def test_pin_needed_for_control_when_bound_to_the_network(make_client, throw):
    c = make_client(host="0.0.0.0", pin="2468")
    assert c.get("/api/state").status_code == 200  # anyone may watch
    assert c.get("/api/state").json()["pin_required"] is True
    r = c.post("/api/games", json={"players": ["Ann", "Boris"]})
    assert r.status_code == 403 and "PIN" in r.json()["error"]
    r = c.post("/api/games", json={"players": ["Ann", "Boris"]}, headers={"X-Kosti-Pin": "1111"})
    assert r.status_code == 403
    r = c.post("/api/games", json={"players": ["Ann", "Boris"]}, headers={"X-Kosti-Pin": "2468"})
    assert r.status_code == 201
    gid = r.json()["game"]["id"]
    c.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))
    assert c.post(f"/api/games/{gid}/bank").status_code == 403
    assert c.put("/api/settings", json={"live_width": 640}).status_code == 403
    assert c.post(f"/api/games/{gid}/bank?pin=2468").status_code == 200
    with c.websocket_connect("/ws") as ws:
        ws.receive_json()
        ws.send_json({"cmd": "undo"})
        assert ws.receive_json()["status"] == 403
        ws.send_json({"cmd": "undo", "pin": "2468"})
        msgs = [ws.receive_json(), ws.receive_json()]
        assert {"ack", "state"} == {m["type"] for m in msgs}
    history = c.get(f"/api/games/{gid}/history").json()
    assert history["actions"][-1]["actor"].startswith("pin:")


def test_random_pin_when_none_given(make_client):
    c = make_client(host="0.0.0.0")
    pin = c.app.state.config.pin
    assert pin and pin.isdigit() and 4 <= len(pin) <= 6
    assert c.post("/api/games", json={"players": ["A"]}, headers={"X-Kosti-Pin": pin}).status_code == 201


def test_loopback_needs_no_pin(make_client):
    c = make_client(host="127.0.0.1", pin="2468")
    assert c.post("/api/games", json={"players": ["A", "B"]}).status_code == 201


def test_settings_zones_and_thresholds(make_client, tmp_path):
    c = make_client()
    from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF

    # Out of the box the live table reads at the shipped reader's measured operating point.
    th = c.get("/api/settings").json()["thresholds"]
    assert (th["conf"], th["value_conf"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF)
    zones = {"roll_area": [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9]], "set_aside": None}
    r = c.put("/api/settings", json={"zones": zones, "thresholds": {"still_s": 0.6}})
    assert r.status_code == 200, r.text
    assert r.json()["zones"]["roll_area"] == zones["roll_area"] and r.json()["thresholds"]["still_s"] == 0.6
    r = c.put("/api/settings", json={"zones": {"roll_area": [[0, 0], [1, 1]]}})
    assert r.status_code == 422 and "3 points" in r.json()["error"]
    r = c.put("/api/settings", json={"thresholds": {"conf": 2}})
    assert r.status_code == 422
    r = c.put("/api/settings", json={"thresholds": {"motion_fraction": 0.002, "still_fraction": 0.003}})
    assert r.status_code == 422 and "hysteresis" in r.text
    r = c.put("/api/settings", json={"thresholds": {"still_fraction": 0.01}})  # alone, above the default motion
    assert r.status_code == 422 and "hysteresis" in r.text
    assert c.app.state.store.get_settings()["thresholds"] == {"still_s": 0.6}  # what was chosen, no defaults
    c.app.state.store.close()
    c2 = make_client()  # same database: the settings persist
    s = c2.get("/api/settings").json()
    assert s["zones"]["roll_area"] == zones["roll_area"] and s["thresholds"]["still_s"] == 0.6


def test_settle_time_takes_the_declared_range(make_client):
    """The page's settle time goes up to the declared 10 s of ``[settle] still_s`` (it stopped at 5 s before
    issue 39); beyond it, a plain 422 that names the setting and its bound, in English and Russian."""
    from kosti.vision.params import SettleParams, meta

    c = make_client()
    top = meta(SettleParams, "still_s")["le"]
    r = c.put("/api/settings", json={"thresholds": {"still_s": top}})
    assert r.status_code == 200 and r.json()["thresholds"]["still_s"] == top, r.text
    r = c.put("/api/settings", json={"thresholds": {"still_s": top + 0.5}})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == f"settle time: must be at most {top}" and CYRILLIC.search(r.json()["error_ru"])
    assert c.get("/api/settings").json()["thresholds"]["still_s"] == top  # the refused value changed nothing


def _first_schema_database(db, thresholds: dict) -> None:
    """A database as the versions before numbered migrations left it: schema 1 and a ``thresholds`` row."""
    import json
    import sqlite3

    from kosti.dashboard import migrations

    with sqlite3.connect(db) as c:
        c.executescript(migrations.SCHEMA_V1)
        c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
        c.execute("INSERT INTO settings(key, value_json) VALUES ('thresholds', ?)", (json.dumps(thresholds),))
    c.close()


def test_old_default_thresholds_in_a_database_give_way_to_the_operating_point(make_client, tmp_path):
    """Before the dashboard took the shipped operating point it stored its own defaults (conf 0.25,
    value_conf 0.6) with every settings change; a table started on such a database (its upgrade: migration 2)
    reads at the operating point again and keeps what the user did choose."""
    from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF

    _first_schema_database(tmp_path / "kosti.db", {"conf": 0.25, "value_conf": 0.6, "still_s": 0.7})
    c = make_client()
    th = c.get("/api/settings").json()["thresholds"]
    assert (th["conf"], th["value_conf"], th["still_s"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF, 0.7)
    assert c.app.state.store.get_settings()["thresholds"] == {"still_s": 0.7}
    c.put("/api/settings", json={"thresholds": {"conf": 0.25, "value_conf": 0.7}})  # a real choice stays
    c.app.state.store.close()
    th = make_client().get("/api/settings").json()["thresholds"]
    assert (th["conf"], th["value_conf"], th["still_s"]) == (0.25, 0.7, 0.7)


@pytest.mark.parametrize("old", [{"conf": 0.25, "value_conf": 0.6}, {"conf": 0.5, "value_conf": 0.4}])
def test_each_earlier_default_pair_gives_way_to_the_shipped_operating_point(make_client, tmp_path, old):
    """Reader v0.3's operating point (0.5, 0.4), sent back by the settings form with every Save, is an old
    default like the dashboard's own (0.25, 0.6): dropped by the upgrade of a database that holds it
    (migration 2), the other stored settings kept."""
    from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF

    assert (old["conf"], old["value_conf"]) != (DEFAULT_CONF, DEFAULT_VALUE_CONF)
    _first_schema_database(tmp_path / "kosti.db", {**old, "still_s": 0.6})
    c = make_client()
    th = c.get("/api/settings").json()["thresholds"]
    assert (th["conf"], th["value_conf"], th["still_s"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF, 0.6)
    assert c.app.state.store.get_settings()["thresholds"] == {"still_s": 0.6}


def test_throw_image_and_thumbnail(client, throw, start_game):
    start_game(client)
    out = client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3], image=True))
    tid = out["throw_id"]
    s = client.get("/api/state").json()
    assert s["last_throw"]["image_url"] == f"/api/throws/{tid}/image.jpg"
    full = client.get(f"/api/throws/{tid}/image.jpg")
    thumb = client.get(f"/api/throws/{tid}/image.jpg?thumb=1")
    assert full.status_code == 200 and full.headers["content-type"] == "image/jpeg" and full.content[:2] == b"\xff\xd8"
    assert thumb.status_code == 200 and thumb.content[:2] == b"\xff\xd8"
    assert client.get("/api/throws/999/image.jpg").status_code == 404
    snap = client.get("/snapshot.jpg")
    assert snap.status_code == 200 and snap.content[:2] == b"\xff\xd8"


def test_review_page_is_served_when_asked_and_guarded_by_the_pin(make_client, tmp_path):
    assert make_client().get("/review").status_code == 404  # not asked for
    c = make_client(host="0.0.0.0", pin="2468", review_dir=tmp_path / "capture")
    assert c.get("/review").status_code == 200
    assert c.get("/api/state").json()["review_url"] == "/review"
    body = {"dice": [{"value": 3, "box": [1, 1, 20, 20]}], "reviewed": True}
    r = c.put("/api/review/images/x/labels", json=body)
    assert r.status_code == 403 and "PIN" in r.json()["error"]


def test_throwing_fewer_dice_in_a_keep_phase_tells_the_keep(client, throw, start_game):
    """Farkle: after 1 5 2 2 3 4 the player may set aside only the 1 and throw five dice (rules.md §1.3)."""
    gid = start_game(client, preset="farkle")
    table = client.app.state.table
    table.submit_throw(throw([1, 5, 2, 2, 3, 4]))
    s = client.get("/api/state").json()
    assert 5 in s["state"]["allowed"]["dice_options"] and 4 in s["state"]["allowed"]["dice_options"]
    assert table.session.expected_dice() == 0  # the camera accepts any legal count
    out = table.submit_throw(throw([2, 3, 4, 6, 6]))  # five dice thrown: the 1 alone was kept; then a bust
    assert out["applied"] is True, out
    h = client.get(f"/api/games/{gid}/history").json()
    assert [a["kind"] for a in h["actions"]] == ["roll", "roll"]
    assert h["turns"][0]["outcome"] == "bust"
    s = client.get("/api/state").json()
    assert s["state"]["to_move"] == "Boris" and s["state"]["allowed"]["dice_options"] == [6]
    out = table.submit_throw(throw([2, 3]))  # Boris must throw all six: held for the table
    assert out["applied"] is False


def test_pin_guessing_is_throttled(make_client):
    c = make_client(host="0.0.0.0", pin="2468")
    for wrong in ("0000", "1111", "2222", "3333", "4444"):
        assert c.post("/api/games", json={"players": ["A"]}, headers={"X-Kosti-Pin": wrong}).status_code == 403
    r = c.post("/api/games", json={"players": ["A"]}, headers={"X-Kosti-Pin": "2468"})
    assert r.status_code == 429 and "too many" in r.json()["error"]  # even the right PIN waits now


def test_camera_credentials_are_not_shown(make_client):
    c = make_client(source="rtsp://user:secret@10.0.0.5/stream", start_capture=False)
    assert c.get("/api/settings").json()["source"] == "rtsp://***@10.0.0.5/stream"
    assert "secret" not in c.get("/api/state").text


def test_fixing_a_misread_bust_gives_the_turn_back(client, throw, start_game):
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([2, 3, 4, 6, 6]))  # read as a bust: the dice pass to Boris
    s = client.get("/api/state").json()
    assert s["state"]["to_move"] == "Boris" and s["turn_no"] == 2
    r = client.post(f"/api/games/{gid}/fix", json={"die_index": 0, "value": 1})  # it was a 1
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["state"]["to_move"] == "Ann" and s["turn_no"] == 1
    assert s["state"]["turn"]["turn_points"] == 10 and s["state"]["turn"]["dice_to_throw"] == 4
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["turn_no"] for t in h["turns"]] == [1] and h["turns"][0]["outcome"] is None
    assert h["corrections"] == [dict(h["corrections"][0], die_index=0, old_value=2, new_value=1)]


def test_corrected_throws_become_training_data(make_client, throw, start_game, tmp_path):
    from kosti.datasets import capture

    root = tmp_path / "frames"
    c = make_client(corrections_dir=root)
    gid = start_game(c)
    c.app.state.table.submit_throw(throw([1, 0, 5, 2, 3], status="uncertain", image=True))
    c.post(f"/api/games/{gid}/fix", json={"die_index": 1, "value": 6})
    assert c.post(f"/api/games/{gid}/confirm").status_code == 200
    ids = capture.list_ids(root)
    assert len(ids) == 1
    rec = capture.load(root, ids[0], with_image=False)
    assert sorted(rec.dice.value.tolist()) == [1, 2, 3, 5, 6]
    assert c.get(f"/api/games/{gid}/history").json()["throws"][0]["resolution"] == "corrected"


def test_the_virtual_tables_rendered_throws_never_become_training_data(make_client, throw, start_game, tmp_path):
    """A fix typed on the demo's virtual table is no label of a real photo: nothing is saved for retraining (the
    new-user trial of issue 42 found such throws on /review, already marked reviewed)."""
    from kosti.datasets import capture

    root = tmp_path / "frames"
    c = make_client(corrections_dir=root, source="virtual", start_capture=False)
    assert c.app.state.table.live.virtual
    gid = start_game(c)
    c.app.state.table.submit_throw(throw([1, 0, 5, 2, 3], status="uncertain", image=True))
    c.post(f"/api/games/{gid}/fix", json={"die_index": 1, "value": 6})
    assert c.post(f"/api/games/{gid}/confirm").status_code == 200
    assert c.get(f"/api/games/{gid}/history").json()["throws"][0]["resolution"] == "corrected"
    assert not root.exists() or capture.list_ids(root) == []


def test_openapi_docs_are_served_offline(tmp_path):
    """/docs must work without internet: its Swagger UI script and style come from this server."""
    import re

    from fastapi.testclient import TestClient

    from kosti.dashboard.app import DashboardConfig, create_app

    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", start_capture=False))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # the Host guard refuses "testserver"
        page = client.get("/docs")
        assert page.status_code == 200
        urls = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assets = [u for u in urls if u.endswith((".js", ".css"))]
        assert assets and all(u.startswith("/") for u in assets), assets  # nothing from a CDN
        for u in assets:
            assert client.get(u).status_code == 200, u
        assert client.get("/openapi.json").json()["info"]["title"] == "kosti dashboard"


def test_a_scored_throw_keeps_its_warnings_for_the_page(client, throw, start_game):
    """A throw scored as read that carries a warning (a die found only on a second look) is applied, and
    the warning reaches the page with it (shown under the last throw: #throw-notes)."""
    start_game(client)
    note = "die 5 found only on a second look at the expected count: check it / кость 5 найдена только при повторном поиске"
    out = client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3], reasons=[note]))
    assert out["applied"] and out["reasons"] == [note]
    last = client.get("/api/state").json()["last_throw"]
    assert last["status"] == "ok" and last["resolution"] != "pending" and last["reasons"] == [note]
    assert 'id="throw-notes"' in client.get("/").text


def test_scoreboard_barrel_line_and_allowed_texts_in_both_languages():
    """rules.md 1.1 (issue 17): a sitter's scoreboard line says what he needs, in English and
    Russian, and so does 'what is allowed now'; a stop that implies the winning keep wins."""
    from kosti.dashboard.table import view_state
    from kosti.engine import Bank, Keep, Roll, new_game

    g = new_game("classic", ["Ann", "Boris"], {"Ann": 870, "Boris": 500})
    g, _ = g.apply(Roll((1, 1, 2, 3, 4)))  # 870 + 20 = 890 → recorded 880, seated
    g, _ = g.apply(Bank())
    g, _ = g.apply(Roll((2, 2, 3, 4, 6)))  # Boris busts
    v = view_state(g)
    ann = v["players"][0]
    assert ann["score"] == 880 and ann["on_barrel"] is True
    assert ann["barrel"]["en"].startswith("on the barrel, needs 120")
    assert ann["barrel"]["ru"].startswith("на бочке, нужно 120") and CYRILLIC.search(ann["barrel"]["ru"])
    assert v["players"][1]["barrel"] is None
    assert "needs 120" in v["allowed"]["hint"]["en"] and "нужно 120" in v["allowed"]["hint"]["ru"]
    g, _ = g.apply(Roll((1, 1, 1, 2, 3)))
    v = view_state(g)
    assert v["allowed"]["bank"] is False
    assert "needs 20 more" in v["allowed"]["why_not_bank"]["en"]
    assert "нужно ещё 20" in v["allowed"]["why_not_bank"]["ru"]

    # "Stop" after a last die that wins exactly 1000 (exact ending): allowed, and it wins
    g = new_game("raznoobrazie_skip_barrels", ["Ann", "Boris"], {"Ann": 960})
    g, _ = g.apply(Roll((1, 5, 2, 3, 4)))
    g, _ = g.apply(Keep((1, 5)))
    g, _ = g.apply(Roll((1, 1, 5)))
    assert view_state(g)["allowed"]["bank"] is True
    g, _ = g.apply(Bank())
    assert g.winner == "Ann" and g.player("Ann").score == 1000


def test_refused_rule_changes_and_empty_lists_read_in_russian(client):
    """The engine's reasons for refusing rule changes reach a Russian table in Russian (the parameter path as
    typed), and the form's type and empty-list reasons are grammatical sentences (issue 18 #10)."""
    from kosti.dashboard.table import rules_reason_ru

    def new(**body):
        r = client.post("/api/games", json={"players": ["Ann", "Boris"], "preset": "classic", **body})
        assert r.status_code == 422, r.text
        return r.json()["error_ru"]

    ru = new(overrides={"opening": {"threshold": "x"}})
    assert ru == "такие правила нельзя применить: opening.threshold: нужно целое число, а не 'x'"
    ru = new(overrides={"foo": 1})
    assert ru.startswith("такие правила нельзя применить: foo: неизвестный параметр правил (здесь есть: ")
    assert "unknown" not in ru and "known here" not in ru
    assert new(overrides=[1]) == "изменения правил (JSON): должно быть объектом JSON {…}"
    assert new(players=[]) == "имена игроков: нужен хотя бы один игрок"
    ru = new(preset="nope")  # the 1000 family and the other games both named, in Russian
    assert ru.startswith("такие правила нельзя применить: нет набора правил 'nope'; есть: classic"), ru
    assert "(семейство «Тысячи») или " in ru and ru.endswith(" (другие игры)"), ru
    assert "family" not in ru and "other games" not in ru, ru
    assert rules_reason_ru("target: must be positive, got -5") == "target: должно быть больше нуля, а дано -5"
    assert rules_reason_ru("a reason without a Russian form") == "a reason without a Russian form"


def test_rules_line_names_the_barrel_kind_in_the_players_language():
    """The rules line's barrel kind is a word in each language (a Russian table read "бочка / barrel (points)")."""
    from kosti.dashboard.table import _BARREL_KIND_WORDS, rules_summary
    from kosti.engine.presets import get_preset
    from kosti.engine.rules import BARREL_KINDS

    assert set(_BARREL_KIND_WORDS) == set(BARREL_KINDS) - {"none"}
    line = [x for x in rules_summary(get_preset("classic")) if "barrel" in x["en"]]
    assert line == [{"en": "barrel / бочка (points) 880", "ru": "бочка / barrel (по очкам) 880"}]
