"""Health, metrics and joining from a phone (issue 43, items 3 and 4): ``/healthz`` follows a real camera stream that
stalls and recovers (an MJPEG server on loopback), ``/metrics`` parses with ``prometheus_client``'s own parser, both
stay off the LAN unless configured, and the join QR codes hold the right address (decoded back with OpenCV)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kosti.dashboard.app import DashboardConfig, create_app
from kosti.dashboard.join import join_urls, qr_svg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
from conftest import LocalClient  # noqa: E402
from fault_servers import MjpegServer  # noqa: E402


def _local(app, **kw) -> LocalClient:
    """A client on this machine: loopback Host and a loopback peer address (TestClient's own is "testclient")."""
    return LocalClient(app, client=("127.0.0.1", 50000), **kw)


class _ReadNothing:
    """A dice reader that sees no dice (the frames are a test card): the runner still reads every frame."""

    def read(self, image):
        from kosti.vision.detections import Detections

        return Detections.empty()


def _wait(pred, timeout: float = 20.0, step: float = 0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    return pred()


def test_healthz_goes_503_when_the_camera_stalls_and_200_when_it_recovers(tmp_path):
    with MjpegServer([("frames", 2.0), ("stall", 4.0)], fps=15) as cam:
        app = create_app(DashboardConfig(db_path=tmp_path / "kosti.db", source=cam.url, reader=_ReadNothing(),
                                         reader_kind="models", stall_s=1.0))
        with _local(app) as client:
            seen: list[tuple[int, str]] = []

            def status(want: int):
                r = client.get("/healthz")
                body = r.json()
                seen.append((r.status_code, body["camera"]["state"]))
                return r.status_code == want and body

            ok = _wait(lambda: (b := status(200)) and b["camera"]["fps"] > 0 and b)
            assert ok and ok["camera"]["ok"] and ok["camera"]["fps"] > 0 and ok["database"]["ok"] and ok["disk"]["ok"]
            stalled = _wait(lambda: status(503))
            assert stalled, seen
            assert stalled["failing"] == ["camera"] and stalled["camera"]["last_frame_age_s"] > 1.0
            assert stalled["camera"]["state"] in ("stalled", "reconnecting", "connecting")
            back = _wait(lambda: status(200), timeout=30.0)
            assert back and back["camera"]["last_frame_age_s"] <= 1.0, seen[-5:]


def test_healthz_fails_when_the_database_file_is_gone(tmp_path):
    """No camera (keypad play) is healthy; the database file deleted under the running table is not."""
    client = _local(create_app(DashboardConfig(db_path=tmp_path / "kosti.db")))
    assert client.get("/healthz").status_code == 200
    (tmp_path / "kosti.db").unlink()
    r = client.get("/healthz")
    assert r.status_code == 503 and r.json()["failing"] == ["database"]
    assert "not writable" in r.json()["database"]["error"]


def test_metrics_parse_with_prometheus_clients_parser(tmp_path, start_game):
    client = _local(create_app(DashboardConfig(db_path=tmp_path / "kosti.db")))
    start_game(client)
    table = client.app.state.table
    from kosti.vision.throws import Die, Throw

    def settled(status: str, ms: float) -> Throw:
        dice = [Die(value=v, confidence=0.9, box=(0.0, 0.0, 10.0, 10.0)) for v in (1, 5, 2, 3, 6)]
        return Throw(dice=dice, frame_index=1, time_s=0.0, status=status, read_ms=ms)

    for status, ms in (("ok", 30.0), ("uncertain", 70.0), ("ok", 700.0)):
        table.live._throw(settled(status, ms))  # the runner's report of a settled throw
    with client.websocket_connect("/ws"):
        text = client.get("/metrics").text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    value = {s.name: s.value for f in families.values() for s in f.samples if not s.labels}
    assert value["kosti_throws_total"] == 3 and value["kosti_uncertain_throws_total"] == 1
    assert value["kosti_read_latency_seconds_count"] == 3
    assert value["kosti_read_latency_seconds_sum"] == pytest.approx(0.8)
    buckets = {s.labels["le"]: s.value for s in families["kosti_read_latency_seconds"].samples
               if s.name.endswith("_bucket")}
    assert buckets["0.05"] == 1 and buckets["0.1"] == 2 and buckets["1.0"] == 3
    assert value["kosti_websocket_clients"] == 1
    assert value["kosti_camera_up"] == 1 and value["kosti_database_writable"] == 1
    assert value["kosti_disk_free_bytes"] > 0 and "kosti_frames_read" in families
    assert families["kosti_reader_info"].samples[0].labels["reader"]


def test_health_and_metrics_stay_off_the_lan_unless_configured(tmp_path):
    for monitor_from, lan_status in (([], 403), (["192.168.7.0/24"], 200)):
        app = create_app(DashboardConfig(db_path=tmp_path / f"{len(monitor_from)}.db", monitor_from=monitor_from))
        with LocalClient(app, client=("192.168.7.40", 50000)) as lan, _local(app) as local:
            assert local.get("/metrics").status_code == 200 and local.get("/healthz").status_code == 200
            assert lan.get("/metrics").status_code == lan_status
            assert lan.get("/healthz").status_code == lan_status
        app.state.store.close()
    with pytest.raises(ValueError, match="not an IP address or network"):
        create_app(DashboardConfig(db_path=tmp_path / "x.db", monitor_from=["the lan"]))


def test_health_answers_this_machine_on_the_lan_address_it_listens_on(tmp_path):
    """Bound to a LAN address, the dashboard is asked by install.sh's health check from that same address:
    that is this machine (it gets the report, not 403); another LAN address still gets 403."""
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="192.168.7.5"))
    with LocalClient(app, base_url="http://192.168.7.5:8000", client=("192.168.7.5", 50000)) as me, \
            LocalClient(app, base_url="http://192.168.7.5:8000", client=("192.168.7.40", 50000)) as other:
        r = me.get("/healthz")
        assert r.status_code in (200, 503) and "database" in r.json(), r.text
        assert other.get("/healthz").status_code == 403
    app.state.store.close()


def _qr_text(svg: bytes) -> str:
    """Draw the dark modules of a segno SVG (one ``qrline`` path of ``M``/``m`` moves and ``h`` runs on unit rows)
    into a picture and decode it with OpenCV's QR detector: what a phone's camera would read."""
    import re

    size = int(re.search(rb'width="(\d+)"', svg).group(1))
    scale = int(re.search(rb"scale\((\d+)\)", svg).group(1))
    d = re.search(rb'class="qrline"[^>]* d="([^"]+)"', svg).group(1).decode()
    n = size // scale
    grid = np.full((n, n), 255, np.uint8)
    x = y = 0.0
    for cmd, args in re.findall(r"([MmHh])([-\d. ]+)", d):
        v = [float(t) for t in args.split()]
        if cmd == "M":
            x, y = v
        elif cmd == "m":
            x, y = x + v[0], y + v[1]
        else:
            dx = v[0] if cmd == "h" else v[0] - x
            grid[int(y), int(min(x, x + dx)):int(max(x, x + dx))] = 0
            x += dx
    img = cv2.resize(grid, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(img)
    return text


def test_join_urls_and_qr_codes(make_client):
    urls = join_urls("0.0.0.0", 8000, "482913")
    assert urls.watch.startswith("http://") and urls.watch.endswith(":8000/")
    assert urls.control == urls.watch + "#pin=482913"
    local = join_urls("127.0.0.1", 8000, "1234")
    assert not local.lan and local.control == local.watch == "http://127.0.0.1:8000/" and local.name_url is None
    assert _qr_text(qr_svg(urls.control)) == urls.control

    client = make_client(host="0.0.0.0", pin="4826")
    r = client.get("/api/join")
    assert r.status_code == 200 and r.json()["pin_required"] is True and r.json()["watch"].endswith(":8000/")
    watch = client.get("/api/join/qr.svg")
    assert watch.status_code == 200 and watch.headers["content-type"] == "image/svg+xml"
    assert _qr_text(watch.content) == r.json()["watch"]  # the spectators' code: no PIN in it
    assert b"4826" not in watch.content
    assert client.get("/api/join/qr.svg?for=control").status_code == 403  # the PIN only to who has it
    control = client.get("/api/join/qr.svg?for=control", headers={"X-Kosti-Pin": "4826"})
    assert control.status_code == 200 and _qr_text(control.content) == r.json()["watch"] + "#pin=4826"


def test_wrong_pins_in_get_queries_do_not_lock_out_control(make_client):
    """Any web page can make a browser GET ``/api/join/qr.svg?for=control&pin=0`` (an ``<img>``): such a
    GET takes no PIN from the query, so it counts no failure and never locks the table's control out."""
    client = make_client(host="0.0.0.0", pin="4826")
    for _ in range(20):
        assert client.get("/api/join/qr.svg?for=control&pin=0000").status_code == 403
    assert client.app.state.pin_guard.failures == 0 and client.app.state.pin_guard.locked_for() == 0.0
    assert client.get("/api/join/qr.svg?for=control&pin=4826").status_code == 403  # not even the right one
    ok = client.get("/api/join/qr.svg?for=control", headers={"X-Kosti-Pin": "4826"})  # what the page sends
    assert ok.status_code == 200 and _qr_text(ok.content).endswith("#pin=4826")
    assert client.post("/api/games", json={"players": ["A", "B"]}, headers={"X-Kosti-Pin": "4826"}).status_code == 201


def test_monitor_from_comes_from_the_config(tmp_path):
    from kosti.config import ConfigError, load_config

    p = tmp_path / "kosti.toml"
    p.write_text('[server]\nmonitor_from = ["192.168.1.0/24", "10.0.0.5"]\n')
    assert load_config(p).server.monitor_from == ["192.168.1.0/24", "10.0.0.5"]
    p.write_text('[server]\nmonitor_from = ["the lan"]\n')
    with pytest.raises(ConfigError, match="server.monitor_from"):
        load_config(p)
