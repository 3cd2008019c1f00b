"""``kosti club``: every table on one broker, live (:mod:`kosti.dashboard.club`).

Tables are real dashboards publishing on a real Mosquitto (:mod:`tests.dashboard.mqtt_broker`): in-process apps, and
for the table whose Pi goes off a ``kosti demo`` process killed with SIGKILL (the broker then says its last will).
The club page is checked in headless Chromium (Debian's chromium + chromium-driver, as the other browser tests).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import mqtt_broker
import pytest
from mqtt_broker import Mosquitto, free_port
from waiting import wait_for

from kosti.config.sections import MqttSettings
from kosti.dashboard.club import ClubBoard, ClubListener, ResultIn, standings
from kosti.dashboard.mqtt import results_message

mosquitto = mqtt_broker.mosquitto  # the fixture: a broker on a free loopback port



def _settings(port: int, table: str, name: str | None = None) -> MqttSettings:
    return MqttSettings(broker=f"127.0.0.1:{port}", table=table, name=name)


def _play(client, gid: int, *steps) -> None:
    """``steps``: a list of faces (entered by hand) or ``"bank"``."""
    for s in steps:
        r = client.post(f"/api/games/{gid}/bank") if s == "bank" else client.post(f"/api/games/{gid}/enter",
                                                                                  json={"faces": s})
        assert r.status_code == 200, r.text


def _wait(cond, what: str, timeout_s: float = 20.0):
    return wait_for(what, cond, timeout_s, every_s=0.05)


def _table(board: ClubBoard, tid: str) -> dict | None:
    return next((t for t in board.snapshot()["tables"] if t["id"] == tid), None)


def _scores(table: dict | None) -> dict[str, int]:
    return {p["name"]: p["score"] for p in ((table or {}).get("state") or {}).get("players", [])}


def test_two_tables_on_one_board_with_the_evenings_standings(mosquitto: Mosquitto, make_client, start_game, tmp_path: Path) -> None:
    board = ClubBoard("kosti", address=f"127.0.0.1:{mosquitto.port}")
    listener = ClubListener(board, "127.0.0.1", mosquitto.port)
    listener.start()
    try:
        with make_client(db_path=tmp_path / "t1.db", mqtt=_settings(mosquitto.port, "t1", "Стол 1")) as one, \
                make_client(db_path=tmp_path / "t2.db", mqtt=_settings(mosquitto.port, "t2")) as two:
            g1 = start_game(one, ["Ann", "Boris"], "farkle", {"target": 300})
            g2 = start_game(two, ["Vera", "Ann"], "classic")
            _play(two, g2, [1, 1, 1, 5, 2], "bank")  # Vera 105
            _wait(lambda: _scores(_table(board, "t2")) == {"Vera": 105, "Ann": 0}, "table 2's score")
            t2 = _table(board, "t2")
            assert t2["status"] == "live" and t2["state"]["current_player"] == "Ann" and t2["name"] == "t2"
            _play(one, g1, [1, 1, 1, 2, 3, 4], "bank", [2, 3, 4, 6, 6, 2])  # Ann 1000, Boris farkles: Ann wins
            # the results and the state are two topics: either may arrive first (the session stores the game's end and
            # its results before the screens hear the new state), so wait for both
            _wait(lambda: board.snapshot()["standings"] and ((_table(board, "t1") or {}).get("state") or {}).get("over"),
                  "the standings and table 1's game over")
            t1 = _table(board, "t1")
            assert t1["name"] == "Стол 1" and t1["state"]["over"] and t1["state"]["winner"] == "Ann"
            assert t1["last_event"]["kind"] == "game_end"
            rows = {r["name"]: r for r in board.snapshot()["standings"]}
            assert rows["Ann"] == {"name": "Ann", "wins": 1, "games": 1, "points": 1000, "tables": ["t1"]}
            assert rows["Boris"]["wins"] == 0 and rows["Boris"]["games"] == 1
            assert [r["name"] for r in board.snapshot()["standings"]] == ["Ann", "Boris"]
            assert board.snapshot()["games"] == 1
        # both apps stopped cleanly: each said "offline" — shown as off, their last scores kept but not live
        _wait(lambda: all(t["status"] == "off" for t in board.snapshot()["tables"]), "both tables off")
        assert _scores(_table(board, "t2")) == {"Vera": 105, "Ann": 0}
    finally:
        listener.stop()


def test_the_board_trusts_no_table_it_has_not_heard_since_it_reconnected(mosquitto: Mosquitto, make_client, start_game, tmp_path: Path) -> None:
    board = ClubBoard("kosti")
    listener = ClubListener(board, "127.0.0.1", mosquitto.port)
    listener.start()
    try:
        with make_client(db_path=tmp_path / "t1.db", mqtt=_settings(mosquitto.port, "t1")) as one:
            start_game(one, ["Ann", "Boris"], "classic")
            _wait(lambda: (_table(board, "t1") or {}).get("status") == "live", "table 1 live")
            mosquitto.stop()
            _wait(lambda: not board.connected, "the club to notice the broker leave")
            assert _table(board, "t1")["status"] == "unknown"  # no broker: nothing is live
            mosquitto.start()  # without persistence: the table must say again that it is online
            _wait(lambda: board.connected, "the club to reconnect", 40)
            _wait(lambda: _table(board, "t1")["status"] == "live", "table 1 live again", 40)
    finally:
        listener.stop()


def test_messages_that_are_not_a_tables_are_ignored(mosquitto: Mosquitto) -> None:
    import paho.mqtt.client as mqtt

    board = ClubBoard("kosti")
    listener = ClubListener(board, "127.0.0.1", mosquitto.port)
    listener.start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    pub.connect("127.0.0.1", mosquitto.port)
    pub.loop_start()
    try:
        _wait(lambda: board.connected, "the club to connect")
        good = {"name": "Good", "players": [{"name": "Ann", "score": 5, "to_move": True}], "game": {"id": 1},
                "current_player": "Ann", "turn_no": 1, "turn_points": 0, "camera": "ok"}
        for topic, payload in [
            ("kosti/bad/state", b"not json"),
            ("kosti/bad/state", json.dumps({**good, "players": [{"name": "x" * 500, "score": 1}]}).encode()),
            ("kosti/bad/availability", b"maybe"),
            ("kosti/bad/results", json.dumps({"games": [{"id": "one"}]}).encode()),
            ("kosti/big/state", b" " * (300 * 1024)),
            ("other/t9/state", json.dumps(good).encode()),
            ("kosti/good/state", json.dumps(good).encode()),
            ("kosti/good/availability", b"online"),
        ]:
            pub.publish(topic, payload, qos=1).wait_for_publish(5)
        _wait(lambda: (_table(board, "good") or {}).get("status") == "live", "the good table")
        assert board.ignored >= 5
        assert [t["id"] for t in board.snapshot()["tables"]] == ["good"]  # nothing of "bad", "big" or other/
    finally:
        pub.disconnect()
        pub.loop_stop()
        listener.stop()


def test_standings_count_every_table_since_the_evening_began() -> None:
    since = 1_000_000.0
    t1 = [ResultIn(id=1, finished_at=since + 10, players=[{"name": "Ann", "score": 1000}, {"name": "Boris", "score": 300}],
                   winner="Ann"),
          ResultIn(id=2, finished_at=since - 10, players=[{"name": "Ann", "score": 0}, {"name": "Boris", "score": 1000}],
                   winner="Boris")]  # yesterday's
    t2 = [ResultIn(id=7, finished_at=since + 20, players=[{"name": "boris", "score": 1010}, {"name": "Vera", "score": 40}],
                   winner="boris"),
          ResultIn(id=8, finished_at=since + 30, players=[{"name": "Vera", "score": 500}, {"name": "Gleb", "score": 500}],
                   winner="Vera, Gleb")]  # a shared win
    rows = standings({"t2": t2, "t1": t1}, since)
    assert [(r["name"], r["wins"], r["games"], r["points"], r["tables"]) for r in rows] == [
        ("Boris", 1, 2, 1310, ["t1", "t2"]),  # one player whatever the case of the name
        ("Ann", 1, 1, 1000, ["t1"]),
        ("Vera", 1, 2, 540, ["t2"]),
        ("Gleb", 1, 1, 500, ["t2"]),
    ]
    msg = results_message([{"id": 3, "status": "finished", "updated_at": since + 5, "rules": {"preset": "pig"},
                            "players": ["Ann"], "scores": {"Ann": 100}, "winner": "Ann"},
                           {"id": 4, "status": "active", "updated_at": since + 6, "players": ["Ann"], "scores": {}}],
                          "t3", "t3", now=since + 60)
    assert [g["id"] for g in msg["games"]] == [3]  # a game still being played is not a result


def test_without_paho_the_club_says_what_to_install(monkeypatch) -> None:
    from kosti.dashboard.mqtt import MqttUnavailable

    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)  # as if paho-mqtt were not installed
    with pytest.raises(MqttUnavailable, match=r"pip install 'kosti\[mqtt\]'"):
        ClubListener(ClubBoard(), "127.0.0.1", 1883)


def test_kosti_club_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    busy = free_port()
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", busy))
        s.listen(1)
        for args, says in [([], "--broker"), (["--broker", "host:99999"], "port"), (["--broker", "a b"], "--broker"),
                           (["--broker", "127.0.0.1", "--hours", "0"], "--hours"),
                           (["--broker", "127.0.0.1", "--hours", "25"], "at most 24"),
                           (["--broker", "127.0.0.1", "--prefix", "a/#"], "--prefix"),
                           (["--broker", "127.0.0.1", "--port", str(busy)], "in use")]:
            r = subprocess.run([sys.executable, "-m", "kosti", "club", *args], capture_output=True, text=True, timeout=60)
            assert r.returncode == 2, (args, r.stderr)
            assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


# ---------------------------------------------------------------------------------------------- the club page
def _serve(cmd: list[str], url: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``python -m kosti cmd`` and wait until ``url`` answers 200 (90 s)."""
    out = open(log, "w")  # noqa: SIM115 - the process writes it
    proc = subprocess.Popen([sys.executable, "-m", "kosti", *cmd], stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    out.close()
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"kosti {cmd[0]} did not start:\n" + log.read_text())
        time.sleep(0.3)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
def test_the_club_page_shows_two_tables_live_and_a_table_that_goes_off(mosquitto: Mosquitto, make_client, start_game, tmp_path: Path, browser) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    broker = f"127.0.0.1:{mosquitto.port}"
    club_port, demo_port = free_port(), free_port()
    club = _serve(["club", "--broker", broker, "--port", str(club_port)], f"http://127.0.0.1:{club_port}/api/club",
                  tmp_path / "club.log")
    # Table 2 is another process, as another Pi would be: kosti demo on the virtual table, [mqtt] from the environment
    demo = _serve(["demo", "--port", str(demo_port), "--db", str(tmp_path / "t2.db"), "--reader", "truth",
                   "--players", "Vera,Gleb"], f"http://127.0.0.1:{demo_port}/api/state", tmp_path / "demo.log",
                  env={"KOSTI_MQTT__BROKER": broker, "KOSTI_MQTT__TABLE": "t2", "KOSTI_MQTT__NAME": "Стол 2",
                       "XDG_DATA_HOME": str(tmp_path / "xdg")})
    try:
        with make_client(db_path=tmp_path / "t1.db", mqtt=_settings(mosquitto.port, "t1", "Table 1")) as one:
            d = browser(1280, 1000)
            # the club page draws its cards again on every message: an element found a moment ago may be gone, so
            # every read of the page is a wait that tries again (stale elements are retried, not failures)
            wait = WebDriverWait(d, 30, ignored_exceptions=(StaleElementReferenceException,))
            d.get(f"http://127.0.0.1:{club_port}/")
            d.execute_script("localStorage.setItem('kosti.lang', 'en')")
            d.refresh()

            def card(tid: str):
                found = d.find_elements(By.CSS_SELECTOR, f'article.table-card[data-table="{tid}"]')
                return found[0] if found else None

            def score(tid: str, name: str) -> str | None:
                c = card(tid)
                li = c.find_elements(By.CSS_SELECTOR, f'li.player[data-name="{name}"] .player-score') if c else []
                return li[0].text if li else None

            # Table 2 is live with its game; table 1 has no game yet
            wait.until(lambda d: card("t2") is not None and card("t2").get_attribute("data-status") == "live"
                       and score("t2", "Vera") == "0")
            wait.until(lambda d: card("t1") is not None and "No game" in card("t1").text)
            wait.until(lambda d: card("t2").find_element(By.CLASS_NAME, "table-name").text == "Стол 2")
            wait.until(lambda d: "Vera throws" in card("t2").find_element(By.CLASS_NAME, "table-turn").text)
            # Play on both: the page follows without a reload
            g1 = start_game(one, ["Ann", "Boris"], "farkle", {"target": 300})
            wait.until(lambda d: score("t1", "Ann") == "0")
            g2 = httpx.get(f"http://127.0.0.1:{demo_port}/api/state").json()["game"]["id"]
            for step in ([1, 1, 1, 5, 2], "bank"):
                r = httpx.post(f"http://127.0.0.1:{demo_port}/api/games/{g2}/" + ("bank" if step == "bank" else "enter"),
                               json=None if step == "bank" else {"faces": step}, timeout=10)
                assert r.status_code == 200, r.text
            wait.until(lambda d: score("t2", "Vera") == "105")
            wait.until(lambda d: "Gleb throws" in card("t2").find_element(By.CLASS_NAME, "table-turn").text)
            _play(one, g1, [1, 1, 1, 2, 3, 4])
            wait.until(lambda d: "Last throw: 1 1 1 2 3 4 (Ann, 1000 points)" in card("t1").text)
            _play(one, g1, "bank", [2, 3, 4, 6, 6, 2])  # Ann 1000, Boris farkles in the final round: Ann wins
            wait.until(lambda d: "Winner: Ann" in card("t1").text)
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#standings tbody tr[data-name="Ann"] .st-wins'))
            wait.until(lambda d: [d.find_element(By.CSS_SELECTOR, f'#standings tbody tr[data-name="Ann"] .{c}').text
                                  for c in ("st-wins", "st-games", "st-points", "st-tables")]
                       == ["1", "1", "1000", "Table 1"])
            wait.until(lambda d: "1 game" in d.find_element(By.ID, "standings-since").text)
            # The second table's Pi goes off without a word: the broker says its last will, the page shows it off
            demo.send_signal(signal.SIGKILL)
            demo.wait(10)
            wait.until(lambda d: card("t2").get_attribute("data-status") == "off")
            wait.until(lambda d: "off since" in card("t2").find_element(By.CLASS_NAME, "table-status").text)
            wait.until(lambda d: "not playing now" in card("t2").text and score("t2", "Vera") == "105")  # last known, marked so
            wait.until(lambda d: card("t1").get_attribute("data-status") == "live")
            wait.until(lambda d: "Tables live: 1 · off: 1" in d.find_element(By.ID, "club-summary").text)
            # In Russian, with the table's words
            d.find_element(By.ID, "lang-toggle").click()
            wait.until(lambda d: "выключен с" in card("t2").find_element(By.CLASS_NAME, "table-status").text)
            wait.until(lambda d: "Победитель: Ann" in card("t1").text)
            wait.until(lambda d: d.find_element(By.ID, "standings-title").get_attribute("textContent") == "Итоги вечера")
            wait.until(lambda d: "1 игра" in d.find_element(By.ID, "standings-since").text)
            wait.until(lambda d: "Столов в игре: 1 · выключено: 1" in d.find_element(By.ID, "club-summary").text)
            wait.until(lambda d: "Последний бросок: 2 3 4 6 6 2 (Boris, 0 очков)"
                       in card("t1").find_element(By.CLASS_NAME, "last-throw").text)
            # The club loses the broker: a red line says so and no table is shown live any more
            mosquitto.stop()
            wait.until(lambda d: d.find_element(By.ID, "broker-banner").is_displayed()
                       and "Нет связи с брокером" in d.find_element(By.ID, "broker-banner").text)
            wait.until(lambda d: all(c.get_attribute("data-status") != "live"
                                     for c in d.find_elements(By.CSS_SELECTOR, "article.table-card")))
            wait.until(lambda d: "Столов в игре: 0" in d.find_element(By.ID, "club-summary").text)
    finally:
        errors = browser.close()  # the page's console is read before its servers stop
        _stop(demo)
        _stop(club)
    assert not errors, errors


def test_the_club_page_refuses_a_foreign_host_name_and_a_foreign_sites_websocket() -> None:
    """The club page shows every table's players and scores: a foreign page that rebinds its own name to the club's
    address (DNS rebinding) or opens its WebSocket from another site must not read them (the table dashboard's guard,
    ``CrossSiteGuard``, stands in front of it as well)."""
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from kosti.dashboard.access import allowed_host_names
    from kosti.dashboard.club import create_club_app

    app = create_club_app(ClubBoard("kosti"), None, allowed_host_names(["club-tv"]))
    with TestClient(app, base_url="http://127.0.0.1:8080") as c:
        assert c.get("/api/club").status_code == 200
        assert c.get("/", headers={"Host": "club-tv:8080"}).status_code == 200  # a configured name
        for path in ("/", "/api/club"):
            r = c.get(path, headers={"Host": "evil.example:8080"})
            assert r.status_code == 403, (path, r.status_code)
        with pytest.raises(WebSocketDisconnect):
            with c.websocket_connect("/ws", headers={"Host": "127.0.0.1:8080", "Origin": "http://evil.example"}) as ws:
                ws.receive_json()
        with c.websocket_connect("/ws", headers={"Host": "127.0.0.1:8080", "Origin": "http://127.0.0.1:8080"}) as ws:
            assert "tables" in ws.receive_json()
