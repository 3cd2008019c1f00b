"""A real Mosquitto broker for the MQTT tests, and a subscriber that records what arrives.

``Mosquitto`` starts Debian's ``mosquitto`` (``bash scripts/setup --test`` installs it) on a free loopback port
with a temporary configuration (anonymous, loopback only, persistence in the test's folder), and can be stopped
and started again on the same port: a broker restart mid-game. Without ``mosquitto`` the tests are skipped with a
reason, and fail when ``CI=true`` (as the browser tests do with chromium).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import ci_guard
import pytest

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    """A TCP port nobody listens on now (loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mosquitto:
    """A mosquitto process on ``127.0.0.1:port``; ``persistence``: keeps retained messages and sessions across
    :meth:`restart` (a saved database, written on a clean stop)."""

    def __init__(self, folder: Path, persistence: bool = False) -> None:
        self.folder = folder
        self.port = free_port()
        self.conf = folder / "mosquitto.conf"
        lines = [f"listener {self.port} 127.0.0.1", "allow_anonymous true", f"persistence {str(persistence).lower()}",
                 f"persistence_location {folder}/", "log_dest stderr", "log_type error", "log_type warning"]
        self.conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the broker and wait until it accepts connections (10 s at most)."""
        log = open(self.folder / "mosquitto.log", "ab")  # noqa: SIM115 - the process writes it while it runs
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log_text = (self.folder / "mosquitto.log").read_text()
                    raise AssertionError("mosquitto did not start:\n" + log_text) from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop it cleanly (SIGTERM: it saves its persistence file) and wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def restart(self, down_s: float = 0.0) -> None:
        """Stop, stay down ``down_s`` seconds, start again on the same port."""
        self.stop()
        time.sleep(down_s)
        self.start()


def need_mosquitto() -> None:
    """Skip the test without mosquitto (fail it when ``CI=true``)."""
    if not Path(MOSQUITTO).exists():
        msg = "the MQTT tests need Debian's mosquitto (apt-get install mosquitto; bash scripts/setup --test does it)"
        ci_guard.missing(msg)


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A fresh broker without persistence (a restart forgets every retained message), stopped after the test."""
    need_mosquitto()
    folder = tmp_path / "broker"
    folder.mkdir()
    b = Mosquitto(folder)
    b.start()
    yield b
    b.stop()


@pytest.fixture
def persistent_mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A fresh broker that keeps retained messages and sessions across a restart."""
    need_mosquitto()
    folder = tmp_path / "pbroker"
    folder.mkdir()
    b = Mosquitto(folder, persistence=True)
    b.start()
    yield b
    b.stop()


class Recorder:
    """A paho subscriber on ``127.0.0.1:port`` that keeps every message of ``topics`` (``(topic, payload bytes,
    retain)`` in arrival order). ``session``: a persistent session (clean_session False) under that client id, so a
    persistent broker keeps what arrives for it while it is away."""

    def __init__(self, port: int, topics: list[str], session: str | None = None) -> None:
        import paho.mqtt.client as mqtt

        self.messages: list[tuple[str, bytes, bool]] = []
        self._cond = threading.Condition()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=session or "",
                                  clean_session=session is None)
        self.client.reconnect_delay_set(0.1, 0.5)
        self.topics = topics
        self.subscribed = threading.Event()

        def on_connect(c, u, f, rc, p):  # noqa: ANN001 - paho's callback
            c.subscribe([(t, 1) for t in topics])

        def on_subscribe(c, u, mid, rcs, p):  # noqa: ANN001
            self.subscribed.set()

        def on_message(c, u, m):  # noqa: ANN001
            with self._cond:
                self.messages.append((m.topic, bytes(m.payload), bool(m.retain)))
                self._cond.notify_all()

        self.client.on_connect = on_connect
        self.client.on_subscribe = on_subscribe
        self.client.on_message = on_message
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        assert self.subscribed.wait(10), "the recorder did not subscribe"

    def wait_for(self, cond: Callable[[list[tuple[str, bytes, bool]]], bool], what: str, timeout_s: float = 15) -> None:
        """Wait until ``cond(messages)`` holds; an AssertionError naming ``what`` and the topics seen after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not cond(self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [t for t, _, _ in self.messages][-30:]
                    raise AssertionError(f"timed out waiting for {what}; last topics: {seen}")
                self._cond.wait(min(left, 0.2))

    def json(self, topic_end: str) -> list[dict]:
        """The JSON payloads of the topics ending with ``topic_end``, in arrival order (empty payloads skipped)."""
        with self._cond:
            return [json.loads(p) for t, p, _ in self.messages if t.endswith(topic_end) and p]

    def last(self, topic: str) -> bytes | None:
        """The latest payload on exactly ``topic``."""
        with self._cond:
            found = [p for t, p, _ in self.messages if t == topic]
        return found[-1] if found else None

    def close(self) -> None:
        """Disconnect and stop the network thread."""
        self.client.disconnect()
        self.client.loop_stop()
