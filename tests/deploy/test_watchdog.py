"""systemd's watchdog protocol (issue 43, item 4): a real dashboard served by uvicorn on loopback, a real
``AF_UNIX`` datagram socket as ``$NOTIFY_SOCKET``. ``READY=1`` comes once ``/healthz`` answers, ``WATCHDOG=1`` while it
keeps answering (with its health in ``STATUS=``), and nothing once the server stops answering."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from kosti.common.watchdog import Watchdog, notify, start_watchdog, watchdog_period_s
from kosti.dashboard.app import DashboardConfig, create_app


@pytest.fixture
def notify_socket(monkeypatch):
    d = Path(tempfile.mkdtemp(prefix="kosti-notify-"))  # short: an AF_UNIX path has at most 107 bytes
    path = d / "notify"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.settimeout(10.0)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield s
    s.close()
    path.unlink(missing_ok=True)
    d.rmdir()


def _serve(tmp_path: Path) -> tuple[uvicorn.Server, threading.Thread, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(16)
    app = create_app(DashboardConfig(db_path=tmp_path / "kosti.db", port=port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    return server, t, port


def test_ready_then_pings_while_healthz_answers_and_none_after(notify_socket, tmp_path, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "600000")  # pings every 0.2 s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    server, thread, port = _serve(tmp_path)
    dog = start_watchdog("0.0.0.0", port)
    assert isinstance(dog, Watchdog) and dog.url == f"http://127.0.0.1:{port}/healthz"
    try:
        first = notify_socket.recv(4096).decode()
        assert first.startswith("READY=1\nSTATUS=healthy"), first
        pings = [notify_socket.recv(4096).decode() for _ in range(3)]
        assert all(p == "WATCHDOG=1\nSTATUS=healthy" for p in pings), pings
        server.should_exit = True
        thread.join(10)
        failures = dog.failures
        end = time.monotonic() + 20
        while dog.failures < failures + 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert dog.failures >= failures + 2, "the watchdog noticed the server is gone"
        notify_socket.setblocking(False)
        late = []
        try:
            while True:
                late.append(notify_socket.recv(4096).decode())
        except BlockingIOError:
            pass
        pinged_after = dog.pings
        time.sleep(3 * dog.interval_s)
        assert dog.pings == pinged_after, "no ping once the server stopped answering"
    finally:
        dog.stop()
        server.should_exit = True


def test_a_failing_health_still_pings_with_its_status(notify_socket, tmp_path, monkeypatch):
    """A 503 (here: the database file gone) is no reason to restart: the ping goes on and STATUS says why."""
    monkeypatch.setenv("WATCHDOG_USEC", "600000")
    server, thread, port = _serve(tmp_path)
    try:
        dog = Watchdog(f"http://127.0.0.1:{port}/healthz", 0.6)
        assert dog.check() == "healthy"
        (tmp_path / "kosti.db").unlink()
        assert dog.check().startswith("database: ")
        dog.start()
        assert notify_socket.recv(4096).decode().startswith("READY=1\nSTATUS=database: ")
        assert notify_socket.recv(4096).decode().startswith("WATCHDOG=1\nSTATUS=database: ")
        dog.stop()
    finally:
        server.should_exit = True
        thread.join(10)


def test_not_under_systemd_nothing_is_started(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert start_watchdog("0.0.0.0", 8000) is None and notify("READY=1") is False
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_period_s() == 30.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert watchdog_period_s() is None, "another process's watchdog"
