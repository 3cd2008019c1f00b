"""The dashboard's edges under faults, bad input and foreign access (issue 15): each test pins one kind of fault."""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
from pathlib import Path

import pytest

from kosti.dashboard.access import AccessError, PinGuard, make_pin
from kosti.dashboard.store import Store, StoreError, StoreWriteError
from kosti.vision.sources import RedactingFilter, redact_text, redact_url

ERROR_KEYS = {"error", "error_ru", "status"}


def _free_port() -> int:
    """A loopback port no one listens on now: a fixed one (8765) failed these tests whenever another test run or a
    developer's ``kosti demo`` held it (exit 2 for the port, not for what the test checks)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _is_error(r, status: int) -> bool:
    body = r.json()
    return r.status_code == status and ERROR_KEYS <= set(body) and body["status"] == status and body["error_ru"]


# ------------------------------------------------------------------------------------------------ PIN lockout
def test_pin_lockout_is_global_and_exponential() -> None:
    """Wrong PINs from many addresses share one count; each wrong PIN past 5 doubles the lock; even the right PIN
    waits out the lock; the right PIN afterwards resets the count."""
    now = [0.0]
    g = PinGuard("123456", free_failures=5, base_s=2.0, max_lock_s=300.0, clock=lambda: now[0])
    for i in range(5):
        with pytest.raises(AccessError) as e:
            g.check(f"10.0.0.{i}", "000000")
        assert e.value.status == 403
    assert g.locked_for() == pytest.approx(2.0)  # the 5th wrong PIN starts the lockout
    with pytest.raises(AccessError) as e:
        g.check("10.0.0.99", "123456")  # the right PIN from a new address: still locked
    assert e.value.status == 429
    locks = []
    for i in range(6):
        now[0] += g.locked_for() + 0.01
        with pytest.raises(AccessError):
            g.check(f"10.1.0.{i}", "999999")
        locks.append(round(g.locked_for()))
    assert locks == [4, 8, 16, 32, 64, 128]
    now[0] += 1000
    g.check("10.0.0.1", "123456")  # right PIN after the lock: accepted, count reset
    assert g.failures == 0


def test_200_addresses_cannot_find_the_pin(make_client) -> None:
    """The attack from the issue: 200 addresses × 5 guesses found a 4-digit PIN in 2 s. Now at most 5 + a few
    wrong PINs are even checked before every address is locked out, and the default PIN has 6 digits."""
    c = make_client(host="0.0.0.0", start_capture=False)
    pin = c.app.state.config.pin
    assert len(pin) == 6 and pin.isdigit()
    # The attack's 1000 requests take well under the 2 s lockout on a laptop but not always on a loaded CI
    # machine; a frozen clock makes the count independent of the machine's speed (the lockout's growth with
    # time is pinned by the PinGuard unit tests).
    c.app.state.pin_guard._clock = lambda: 1000.0
    checked = 0
    for i in range(1000):
        r = c.post("/api/games/1/undo", headers={"X-Kosti-Pin": f"{i:06d}", "X-Forwarded-For": f"10.9.{i // 250}.{i % 250}"})
        assert r.status_code in (403, 429)
        checked += r.status_code == 403
    assert checked == 5  # the free failures; every later guess, from any address, waits
    r = c.post("/api/games", json={"players": ["A", "B"]}, headers={"X-Kosti-Pin": pin})
    assert _is_error(r, 429)  # the right PIN waits too: guessing during the lock tells nothing


def test_pin_lockout_covers_the_websocket(make_client) -> None:
    c = make_client(host="0.0.0.0", start_capture=False)
    guard = c.app.state.pin_guard
    with c.websocket_connect("/ws") as ws:
        ws.receive_json()
        for i in range(5):
            ws.send_text(json.dumps({"cmd": "undo", "pin": f"{i:06d}"}))
            msg = ws.receive_json()
            while msg.get("type") != "error":
                msg = ws.receive_json()
            assert msg["status"] == 403
        ws.send_text(json.dumps({"cmd": "undo", "pin": "000099"}))
        msg = ws.receive_json()
        while msg.get("type") != "error":
            msg = ws.receive_json()
        assert msg["status"] == 429
    assert guard.locked_for() > 0
    assert c.post("/api/games/1/undo", headers={"X-Kosti-Pin": "111111"}).status_code == 429


@pytest.mark.parametrize("wrong", ["123450", "123465", "023456", "12345", "1234567", "1234560", "123456 ", 123457])
def test_a_pin_sharing_all_but_one_digit_with_the_right_one_is_wrong(wrong: object) -> None:
    """Every digit counts, and only the whole PIN: a guess that shares a prefix (or all but one digit, or is the
    PIN cut short or with a digit added) is refused and counted as a wrong PIN."""
    g = PinGuard("123456", clock=lambda: 0.0)
    with pytest.raises(AccessError) as e:
        g.check("10.0.0.1", wrong)
    assert e.value.status == 403 and g.failures == 1
    g.check("10.0.0.1", "123456")
    g.check("10.0.0.1", 123456)  # a number in a JSON body is the same PIN
    assert g.failures == 0


def test_make_pin_has_six_digits() -> None:
    pins = {make_pin() for _ in range(200)}
    assert all(len(p) == 6 and p.isdigit() for p in pins) and len(pins) > 190


# ------------------------------------------------------------------------------------------------ secrets
SECRET_URLS = [
    ("rtsp://admin:s3cr/et@10.0.0.5:554/stream", "s3cr"),
    ("rtsp://admin:p@ss@10.0.0.5/stream", "p@ss"),
    ("http://10.0.0.5/video.cgi?user=admin&pwd=hunter2", "hunter2"),
    ("http://10.0.0.5/video.cgi?user=admin&pwd=a/b@c", "a/b@c"),
    ("http://u:pa?ss@10.0.0.5/x?token=zz9", "pa?ss"),
    ("rtsp://10.0.0.5/live;password=topsecret", "topsecret"),
]


@pytest.mark.parametrize("url, secret", SECRET_URLS)
def test_redact_url_hides_every_secret(url: str, secret: str) -> None:
    out = redact_url(url)
    assert secret not in out and "admin" not in out and "10.0.0.5" in out
    assert secret not in redact_text(f"cannot open {url}: timeout")


def test_redact_url_leaves_plain_specs_alone() -> None:
    for spec in ("0", "/dev/video0", "virtual", "picamera", "/data/table.mp4", "rtsp://10.0.0.5/stream"):
        assert redact_url(spec) == spec
    assert redact_url(None) is None


@pytest.mark.parametrize("url, secret", SECRET_URLS)
def test_camera_secrets_reach_no_viewer_and_no_log(make_client, url: str, secret: str, caplog) -> None:
    """/api/settings, /api/state and the WebSocket show the source redacted; log records are redacted too."""
    c = make_client(start_capture=False)
    c.app.state.table.live.source_spec = url
    assert secret not in json.dumps(c.get("/api/settings").json())
    assert secret not in json.dumps(c.get("/api/state").json())
    with c.websocket_connect("/ws") as ws:
        assert secret not in json.dumps(ws.receive_json())
    rec = logging.LogRecord("kosti", logging.WARNING, __file__, 1, "source failed (%s)", (f"cannot open {url}",), None)
    RedactingFilter().filter(rec)
    assert secret not in rec.getMessage()


# ------------------------------------------------------------------------------------------------ database
def _corrupt(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))


def test_corrupt_database_refused_with_path_and_advice(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    _corrupt(db)
    with pytest.raises(StoreError) as e:
        Store(db)
    msg = str(e.value)
    assert e.value.exit_code == 2 and str(db) in msg and "mv " in msg and "\n" not in msg


def test_not_a_database_refused(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    db.write_text("hello, this is not SQLite" * 100)
    with pytest.raises(StoreError, match="damaged"):
        Store(db)


def test_damaged_page_found_by_the_integrity_check(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    s = Store(db)
    for i in range(300):
        s.put_settings({f"k{i}": "x" * 500})
    s.close()
    data = bytearray(db.read_bytes())
    for off in range(4096 * 2, len(data), 4096):  # scribble over the b-tree pages, keep the header
        data[off:off + 64] = os.urandom(64)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        Store(db)


def test_read_only_database_refused_with_what_to_do(tmp_path: Path, monkeypatch) -> None:
    """SQLite's own read-only answer (the file opened ``mode=ro``, as for a file the service user cannot write;
    root ignores file modes, so the mode is forced through SQLite's URI)."""
    db = tmp_path / "kosti.db"
    Store(db).close()
    (tmp_path / "kosti.db-wal").unlink(missing_ok=True)
    (tmp_path / "kosti.db-shm").unlink(missing_ok=True)
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda p, **kw: real(f"file:{p}?mode=ro", uri=True, **kw))
    with pytest.raises(StoreError) as e:
        Store(db)
    assert "chown" in str(e.value) and e.value.exit_code == 2 and str(db) in str(e.value)


def test_newer_schema_refused(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    Store(db).close()
    with sqlite3.connect(db) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer kosti"):
        Store(db)


def test_broken_json_column_names_row_and_column(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    s = Store(db)
    gid = s.create_game({"preset": "classic"}, ["A", "B"], "{}")
    s.close()
    with sqlite3.connect(db) as c:
        c.execute("UPDATE games SET players_json = '' WHERE id = ?", (gid,))
    with pytest.raises(StoreError) as e:
        Store(db)
    assert f"games row {gid} column players_json" in str(e.value)


def test_bad_settings_row_falls_back_to_defaults(make_client, tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    Store(db).close()
    with sqlite3.connect(db) as c:
        c.executemany("INSERT INTO settings(key, value_json) VALUES (?, ?)",
                      [("thresholds", '"high"'), ("live_width", "[1, 2]"), ("zones", "{not json"),
                       ("jpeg_quality", "80"), ("rotate", '"sideways"'), ("from_file", '{"thresholds": 7}')])
    c = make_client(db_path=db, start_capture=False)
    s = c.get("/api/settings").json()
    assert s["live_width"] == 960 and s["jpeg_quality"] == 80 and isinstance(s["thresholds"], dict)
    assert s["rotate"] is None and "from_file" not in s  # no camera to turn; the file's memory is never shown


def test_one_threshold_out_of_range_keeps_the_tables_other_choices(make_client, tmp_path: Path) -> None:
    """An older version stored ``conf`` 0 (its page allowed it; issue 39 declares > 0): that one value falls back to
    the default, the table's settle time and face threshold stay, and a later change does not store the bad value
    again (review of issue 39: the whole row was dropped, on every start)."""
    from kosti.vision.params import ReaderParams

    db = tmp_path / "kosti.db"
    Store(db).close()
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO settings(key, value_json) VALUES (?, ?)",
                  ("thresholds", json.dumps({"conf": 0.0, "still_s": 1.2, "value_conf": 0.8})))
    c = make_client(db_path=db, start_capture=False)
    th = c.get("/api/settings").json()["thresholds"]
    assert (th["still_s"], th["value_conf"], th["conf"]) == (1.2, 0.8, ReaderParams().conf)
    assert c.put("/api/settings", json={"thresholds": {"still_s": 2.0}}).status_code == 200
    stored = json.loads(sqlite3.connect(db).execute(
        "SELECT value_json FROM settings WHERE key = 'thresholds'").fetchone()[0])
    assert stored == {"still_s": 2.0, "value_conf": 0.8}


def test_cli_exits_2_on_a_corrupt_database(tmp_path: Path, capsys) -> None:
    from kosti.cli import main

    db = tmp_path / "kosti.db"
    _corrupt(db)
    code = main(["demo", "--db", str(db), "--reader", "truth", "--port", str(_free_port())])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(db) in err[0] and "Traceback" not in err[0]


def test_disk_full_is_shown_and_bank_answers_507(make_client, start_game, throw, monkeypatch) -> None:
    """A write that fails (SQLITE_FULL) is refused with 507 in the error shape, shown in /api/state and the
    WebSocket, and the game goes on when the disk has room again."""
    c = make_client(start_capture=False)
    gid = start_game(c)
    table = c.app.state.table
    table.submit_throw(throw([5, 5, 5, 2, 3]))  # 500: the turn may bank
    store = c.app.state.store
    real = store._conn
    full = {"on": True}

    class Full:
        def __getattr__(self, name):
            return getattr(real, name)

        def execute(self, sql, *a):
            if full["on"] and sql.strip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
                raise sqlite3.OperationalError("database or disk is full")
            return real.execute(sql, *a)

    monkeypatch.setattr(store, "_conn", Full())
    before = c.get("/api/state").json()
    r = c.post(f"/api/games/{gid}/bank")
    assert _is_error(r, 507) and "disk is full" in r.json()["error"]
    st = c.get("/api/state").json()
    assert st["storage"]["ok"] is False and st["storage"]["status"] == 507 and st["storage"]["error_ru"]
    assert st["state"]["players"] == before["state"]["players"]  # nothing half-applied
    with pytest.raises(StoreWriteError):  # the capture thread's path: test_disk_full_while_the_camera_settles_a_throw
        table.submit_throw(throw([2, 2, 3, 4, 6]))
    assert c.get("/api/state").json()["storage"]["ok"] is False
    full["on"] = False
    r = c.post(f"/api/games/{gid}/bank")
    assert r.status_code == 200 and r.json()["storage"] == {"ok": True}


def test_sqlite_itself_full_answers_507_and_keeps_the_game(make_client, start_game, throw) -> None:
    """SQLite genuinely out of pages (``PRAGMA max_page_count`` = the file's current size, no free pages): the
    real SQLITE_FULL path through the store's transaction and rollback. Stop answers 507 in the error shape, the
    snapshot says so, nothing is half-written (game row, actions, turns as before), a settled photo throw is
    refused as well, and once there is room the same Stop records what its preview promised."""
    c = make_client(start_capture=False)
    gid = start_game(c)
    table = c.app.state.table
    table.submit_throw(throw([5, 5, 5, 2, 3], image=True))  # a settled throw with its photo: the turn may bank
    store = c.app.state.store
    conn = store._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0  # every write past this needs a new page
    assert conn.execute(f"PRAGMA max_page_count = {pages}").fetchone()[0] == pages

    def rows():
        return (tuple(conn.execute("SELECT state_json, status FROM games WHERE id = ?", (gid,)).fetchone()),
                conn.execute("SELECT COUNT(*) FROM actions").fetchone()[0],
                [tuple(t) for t in conn.execute("SELECT * FROM turns ORDER BY turn_no")],
                conn.execute("SELECT COUNT(*) FROM throws").fetchone()[0])

    before, stored = c.get("/api/state").json(), rows()
    promised = before["bank_preview"]["changes"]
    r = c.post(f"/api/games/{gid}/bank")
    assert _is_error(r, 507) and "disk is full" in r.json()["error"] and "диск заполнен" in r.json()["error_ru"]
    st = c.get("/api/state").json()
    assert st["storage"]["ok"] is False and st["storage"]["status"] == 507
    assert st["state"]["players"] == before["state"]["players"] and st["state"]["turn"] == before["state"]["turn"]
    assert rows() == stored  # rolled back: nothing half-written
    with pytest.raises(StoreWriteError) as e:  # the camera's path: a settled throw with its photo
        table.submit_throw(throw([1, 2, 3, 4, 6], image=True))
    assert e.value.status == 507 and rows() == stored
    assert conn.execute("PRAGMA page_count").fetchone()[0] == pages
    conn.execute(f"PRAGMA max_page_count = {pages * 100}")  # room again
    r = c.post(f"/api/games/{gid}/bank")
    assert r.status_code == 200 and r.json()["storage"] == {"ok": True}
    assert [{"player": p["name"], "before": 0, "after": p["score"]} for p in r.json()["state"]["players"]
            if p["score"]] == promised
    assert conn.execute("SELECT COUNT(*) FROM actions").fetchone()[0] == stored[1] + 1


def test_store_write_error_kinds(tmp_path: Path) -> None:
    from kosti.dashboard.store import _write_error

    assert _write_error("x.db", sqlite3.OperationalError("database or disk is full")).status == 507
    ro = _write_error("x.db", sqlite3.OperationalError("attempt to write a readonly database"))
    assert isinstance(ro, StoreWriteError) and ro.status == 503 and "chown" in ro.en


# ------------------------------------------------------------------------------------------------ sizes, ids
def test_huge_player_name_and_body_refused(make_client) -> None:
    c = make_client(start_capture=False)
    r = c.post("/api/games", json={"players": ["x" * 41, "B"]})
    assert _is_error(r, 422) and r.json()["error"] == "player names (player 1): at most 40 characters"
    assert r.json()["error_ru"] == "имена игроков (игрок 1): не больше 40 символов"
    r = c.post("/api/games", content=b'{"players": ["' + b"x" * 200_000 + b'"]}',
               headers={"Content-Type": "application/json"})
    assert _is_error(r, 413)

    def chunks():
        yield b'{"players": ["'
        for _ in range(100):
            yield b"x" * 10_000
        yield b'"]}'

    r = c.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert _is_error(r, 413)
    assert len(c.get("/api/state").content) < 20_000


@pytest.mark.parametrize("overrides, needle", [
    ({"target": 1e308}, "out of range"),
    ({"target": float("inf")}, None),
    ({"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}, "nested"),
    ({"x": "y" * 5000}, "longer"),
])
def test_rule_overrides_bounded(make_client, overrides, needle) -> None:
    c = make_client(start_capture=False)
    body = json.dumps({"players": ["A", "B"], "overrides": overrides}, allow_nan=True)
    r = c.post("/api/games", content=body, headers={"Content-Type": "application/json"})
    assert _is_error(r, 422)
    if needle:
        assert needle in r.json()["error"]


@pytest.mark.parametrize("key", ["²", "٣", "7"])
def test_a_body_field_named_by_a_digit_like_character_is_422_not_500(make_client, key) -> None:
    """The API fuzz found it: an unknown body field "²" (a digit to ``str.isdigit``, not to ``int``) made the
    validation-error sentence raise, a 500. Any key is a field name or a list index, and the answer is a 422."""
    c = make_client(start_capture=False)
    r = c.post("/api/games", json={"players": ["Ann", "Boris"], key: None})
    assert _is_error(r, 422), r.text


@pytest.mark.parametrize("path", [
    "/api/games/{id}/history", "/api/throws/{id}/image.jpg",
])
@pytest.mark.parametrize("big", [2**63, 2**64 + 5, 10**40, -1, 0])
def test_ids_out_of_range_are_422_not_500(make_client, path, big, caplog) -> None:
    c = make_client(start_capture=False)
    r = c.get(path.format(id=big))
    assert _is_error(r, 422)
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("action", ["bank", "keep", "fix", "confirm", "discard", "undo", "throw"])
def test_control_ids_out_of_range(make_client, action) -> None:
    c = make_client(start_capture=False)
    assert _is_error(c.post(f"/api/games/{2**63}/{action}", json={}), 422)


def test_every_error_has_the_documented_shape(make_client) -> None:
    c = make_client(start_capture=False)
    cases = [
        (c.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"}), 422),
        (c.get("/api/nope"), 404),
        (c.delete("/api/state"), 405),
        (c.get("/api/games/5/history"), 404),
        (c.get("/api/games?limit=100000"), 422),
    ]
    for r, status in cases:
        assert _is_error(r, status), (r.status_code, r.text)


def test_review_api_shows_no_server_path(make_client, tmp_path: Path) -> None:
    folder = tmp_path / "secret" / "captures"
    c = make_client(start_capture=False, review_dir=folder)
    for url in ("/api/review/stats", "/api/review/images"):
        text = c.get(url).text
        assert str(tmp_path) not in text and "secret" not in text


# ------------------------------------------------------------------------------------------------ WebSocket
@pytest.mark.parametrize("msg", [
    {"cmd": "bank", "game_id": [1]}, {"cmd": "bank", "game_id": {"a": 1}}, {"cmd": "bank", "game_id": 2**70},
    {"cmd": "bank", "game_id": "1; DROP TABLE games"}, {"cmd": "keep", "faces": [7]}, {"cmd": "keep", "faces": "15"},
    {"cmd": "fix", "die_index": 0}, {"cmd": "fix", "die_index": 0, "value": 10**30}, {"cmd": "undo", "extra": 1},
    {"cmd": "nope"}, [1, 2], "bank", None,
])
def test_bad_websocket_commands_answer_422_and_keep_the_socket(make_client, msg, caplog) -> None:
    c = make_client(start_capture=False)
    with c.websocket_connect("/ws") as ws:
        ws.receive_json()
        ws.send_text(json.dumps(msg))
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["status"] == 422 and reply["error_ru"], reply
        ws.send_text("{broken")
        assert ws.receive_json()["status"] == 422
        ws.send_bytes(b"\xff\xfe")
        assert ws.receive_json()["status"] == 422
        ws.send_text("[" * 100_000 + "]" * 100_000)
        assert ws.receive_json()["status"] == 413
        ws.send_text(json.dumps({"cmd": "undo"}))  # still open and working
        assert ws.receive_json()["type"] in ("error", "ack", "state")
    assert "DatabaseError" not in caplog.text and "OverflowError" not in caplog.text


# ------------------------------------------------------------------------------------------------ cross-site
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_foreign_origin_cannot_post(make_client, start_game, host) -> None:
    c = make_client(start_capture=False, host=host, pin="123456")
    pin = {"X-Kosti-Pin": "123456"}
    gid = start_game(c, headers=pin)
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": "http://127.0.0.1:9999"}):
        r = c.post(f"/api/games/{gid}/undo", headers={**pin, **headers})
        assert _is_error(r, 403), headers
    r = c.post(f"/api/games/{gid}/discard", data={"x": "1"}, headers={"Origin": "http://evil.example"})
    assert _is_error(r, 403)  # a cross-site HTML form
    r = c.post(f"/api/games/{gid}/undo", headers={**pin, "Origin": "http://127.0.0.1:8000"})
    assert r.status_code in (200, 409)  # the dashboard's own page


def test_dns_rebinding_host_refused(make_client) -> None:
    c = make_client(start_capture=False)
    r = c.post("/api/games", json={"players": ["A"]}, headers={"Host": "evil.example:8000"})
    assert _is_error(r, 403)
    for ok_host in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "192.168.1.20:8000"):
        r = c.post("/api/games", json={"players": ["A", "B"], "replace": True}, headers={"Host": ok_host})
        assert r.status_code == 201, ok_host


def test_configured_host_name_allowed(make_client) -> None:
    c = make_client(start_capture=False, allowed_hosts=["kosti.lan"])
    assert c.post("/api/games", json={"players": ["A", "B"]}, headers={"Host": "kosti.lan:8000"}).status_code == 201


def test_foreign_websocket_refused(make_client) -> None:
    from starlette.websockets import WebSocketDisconnect

    c = make_client(start_capture=False)
    with pytest.raises(WebSocketDisconnect):
        with c.websocket_connect("/ws", headers={"Origin": "http://evil.example"}) as ws:
            ws.receive_json()
    with pytest.raises(WebSocketDisconnect):
        with c.websocket_connect("ws://evil.example:8000/ws") as ws:
            ws.receive_json()
    with c.websocket_connect("/ws", headers={"Origin": "http://127.0.0.1:8000"}) as ws:
        assert ws.receive_json()["type"] == "state"


def test_uvicorn_does_not_believe_x_forwarded_for(tmp_path: Path, monkeypatch) -> None:
    """``kosti demo``/``run`` start uvicorn with proxy_headers=False (a forged X-Forwarded-For from loopback once
    reset the per-address count) and a small WebSocket message limit."""
    import uvicorn

    from kosti.cli import main

    seen = {}

    def run(server, sockets=None) -> None:  # the dashboard serves on a socket it bound itself
        seen.update(proxy_headers=server.config.proxy_headers, ws_max_size=server.config.ws_max_size)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    assert main(["demo", "--db", str(tmp_path / "k.db"), "--reader", "truth", "--port", str(_free_port())]) == 0
    assert seen["proxy_headers"] is False and seen["ws_max_size"] <= 64 * 1024


def test_every_log_record_is_redacted_once_installed(caplog) -> None:
    """``kosti`` installs the redaction for every record of the process (uvicorn's and the libraries' loggers
    included), message and traceback."""
    from kosti.common.redact import install_log_redaction

    install_log_redaction()
    log = logging.getLogger("uvicorn.error")
    # caplog's handler sits on the root logger; once any test has let uvicorn configure its logging ("uvicorn"
    # stops propagating), uvicorn.error's records never reach it and this test failed after those (issue 45). The
    # handler on the logger itself sees its records whatever the order of the tests.
    log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
            log.warning("cannot open %s", "rtsp://admin:hunter2@cam/x")
            try:
                raise RuntimeError("failed http://cam/v?user=a&pwd=secret9")
            except RuntimeError:
                log.exception("boom")
    finally:
        log.removeHandler(caplog.handler)
    assert caplog.records, "no record reached the capture: the test would pass without checking anything"
    text = caplog.text + "".join(r.exc_text or "" for r in caplog.records)
    assert "hunter2" not in text and "secret9" not in text and "***" in text


def test_truth_reader_before_the_dice_come_to_rest() -> None:
    """``kosti demo --reader truth`` sometimes logged a reshape traceback at start: the first throw had no boxes
    until its dice came to rest."""
    from kosti.dashboard.table import VirtualTruthReader
    from kosti.sim.virtual import VirtualTableSource

    src = VirtualTableSource(realtime=False, initial_throw=False)
    src.throw(n_dice=5)
    with src:
        frame = src.read()
        assert src.last_throw is not None and src.last_throw.boxes is None  # still tumbling
        assert len(VirtualTruthReader(src).read(frame.image)) == 0
        for _ in range(200):
            frame = src.read()
            if src.last_throw.boxes is not None:
                break
        assert len(VirtualTruthReader(src).read(frame.image)) == 5


def test_migrations_run_in_order_and_a_failed_one_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    from kosti.dashboard import migrations

    db = tmp_path / "kosti.db"
    s0 = Store(db)
    s0.create_game({"preset": "classic"}, ["A", "B"], "{}")
    s0.close()
    shipped = migrations.MIGRATIONS
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(len(shipped) + 1)
    n = len(shipped) + 1
    note = migrations.Migration(n + 1, "a note column", "ALTER TABLE games ADD COLUMN note TEXT;")
    broken = migrations.Migration(n + 2, "broken", "ALTER TABLE games ADD COLUMN nonsense;\nSELECT * FROM nowhere;")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*shipped, note, broken))
    with pytest.raises(StoreError, match=f"from schema {n + 1} \\(broken\\) failed") as e:
        Store(db)
    assert e.value.exit_code == 2
    with sqlite3.connect(db) as c:  # the note step was committed on its own; the broken one left nothing behind
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(n + 1)
        cols = [r[1] for r in c.execute("PRAGMA table_info(games)")]
        assert "note" in cols and "nonsense" not in cols
    fixed = migrations.Migration(n + 2, "an extra column", "ALTER TABLE games ADD COLUMN extra TEXT;")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*shipped, note, fixed))
    s = Store(db)
    assert s.get_game(1).players == ["A", "B"]
    s.close()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(n + 2)
        assert "extra" in [r[1] for r in c.execute("PRAGMA table_info(games)")]


def test_disk_full_while_the_camera_settles_a_throw(make_client, start_game, monkeypatch) -> None:
    """The whole chain with the capture thread: a settled throw that cannot be stored is not dropped silently —
    it is shown as "not stored" with the storage banner, and nothing is scored."""
    import time

    from kosti.sim.virtual import VirtualTableSource

    src = VirtualTableSource(size=(640, 360), fps=20, realtime=True, initial_throw=False, tumble_s=0.5, seed=3)
    with make_client(source_obj=src, reader_kind="truth") as c:
        gid = start_game(c)
        store = c.app.state.store
        real = store._conn

        class Full:
            def __getattr__(self, name):
                return getattr(real, name)

            def execute(self, sql, *a):
                if sql.strip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
                    raise sqlite3.OperationalError("database or disk is full")
                return real.execute(sql, *a)

        monkeypatch.setattr(store, "_conn", Full())
        assert c.post(f"/api/games/{gid}/throw", json={"faces": [1, 1, 1, 5, 3]}).status_code == 200
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            s = c.get("/api/state").json()
            if s["last_throw"] and s["last_throw"]["resolution"] == "not stored":
                break
            time.sleep(0.1)
        assert s["last_throw"]["resolution"] == "not stored" and sorted(s["last_throw"]["faces"]) == [1, 1, 1, 3, 5]
        assert s["storage"]["ok"] is False and s["storage"]["status"] == 507
        assert s["state"]["turn"]["turn_points"] == 0


def test_database_failing_under_the_running_table_answers_503(make_client, monkeypatch) -> None:
    c = make_client(start_capture=False)
    store = c.app.state.store
    real = store._conn

    class Broken:
        def __getattr__(self, name):
            return getattr(real, name)

        def execute(self, sql, *a):
            raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(store, "_conn", Broken())
    r = c.get("/api/games")
    assert _is_error(r, 503) and "malformed" in r.json()["error"]


def test_history_is_one_view_while_a_throw_is_applied(tmp_path: Path) -> None:
    """A throw stored pending and then applied by its roll (two transactions, as the session writes them) is never
    shown half-way: the history reads throws and actions as one view (found by CI: a roll beside its throw still
    'pending'). The writer is started between the history's reads; it waits until the view is read."""
    import threading

    from kosti.dashboard.history import history

    s = Store(tmp_path / "kosti.db")
    gid = s.create_game({"preset": "classic"}, ["A", "B"], "{}", first_turn=("A", 0))

    def apply_a_throw() -> None:
        tid = s.add_throw(game_id=gid, turn_no=1, player="A", faces=[1, 5], confidences=[0.9, 0.9], boxes=[[0, 0, 9, 9]] * 2,
                          status="ok", reasons=[])
        s.record_action(gid, "roll", {"faces": [1, 5]}, player="A", turn_no=1, state_before_json="{}",
                        state_after_json="{}", events=[], throw_id=tid, throw_resolution="applied")

    writer = threading.Thread(target=apply_a_throw)
    read_throws = s.throws

    def throws_then_a_write(game_id: int):  # the history has read the throws; a throw is applied now
        rows = read_throws(game_id)
        writer.start()
        writer.join(timeout=1.0)  # returns at once without the one view; with it the writer waits for the view
        return rows

    s.throws = throws_then_a_write  # type: ignore[method-assign]
    h = history(s, gid)
    writer.join()
    shown = {t["id"]: t["resolution"] for t in h["throws"]}
    rolls = [a["throw_id"] for a in h["actions"] if a["kind"] == "roll"]
    assert all(shown.get(tid) == "applied" for tid in rolls), (shown, rolls)
    s.throws = read_throws  # type: ignore[method-assign]
    after = history(s, gid)
    assert [t["resolution"] for t in after["throws"]] == ["applied"]
    s.close()
