"""Fault injection for live sources (issue 15): real FFmpeg streams from misbehaving local servers
(:mod:`fault_servers`) that stall, drop, send garbage, or accept and never answer, and the capture-thread
ownership rule (no release while a read is in flight)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fault_servers import MjpegServer, SilentServer

from kosti.vision.sources import OpenCVSource, ReconnectingSource, SourceError, open_capture

HERE = Path(__file__).resolve().parent


def _reconnecting(url: str, stall_s: float = 5.0, open_s: float = 8.0, read_s: float = 5.0) -> ReconnectingSource:
    return ReconnectingSource(lambda: OpenCVSource(url, capture_factory=lambda t: open_capture(t, open_s, read_s)),
                              stall_s=stall_s, initial_delay=0.2)


class Drive:
    """What reading a source like the dashboard's capture thread saw: frames read, frames read after the first
    error (the fault), error messages and the states shown."""

    def __init__(self) -> None:
        self.frames = self.after = 0
        self.errors: list[str] = []
        self.states: set[str] = set()


def _drive(src: ReconnectingSource, until, reads: int = 300) -> Drive:
    """Read like the dashboard's capture thread (1 s timeouts) until ``until(drive)`` holds or ``reads`` reads were
    made — a count, not a clock, so a slow machine takes longer instead of failing. Returns the :class:`Drive`."""
    d = Drive()
    for _ in range(reads):
        try:
            src.read(timeout=1.0)
            d.frames += 1
            d.after += bool(d.errors)
        except SourceError as exc:
            d.errors.append(str(exc))
        d.states.add(src.status.state)
        if until(d):
            break
    return d


STALL_SCRIPT = """
import sys, time
sys.path.insert(0, {here!r})
from fault_servers import MjpegServer
from kosti.vision.sources import open_source, SourceError
with MjpegServer([("frames", 1.5), ("stall", {stall})]) as srv:
    src = open_source(srv.url)
    src.open()
    before = after = 0; stalled = False
    for _ in range(400):  # reads, not seconds: until 20 frames came after the stall
        try:
            src.read(timeout=1.0)
            if stalled: after += 1
            else: before += 1
        except SourceError:
            stalled = stalled or src.status.state == "stalled"
        if after >= 20: break
    src.close()
    print(before, after, stalled, srv.connections)
"""


@pytest.mark.parametrize("stall", [4.0])
def test_stalled_stream_does_not_crash_and_recovers(stall: float) -> None:
    """The crash from the issue: a stream connected but silent for ≥ 3.2 s killed the process (SIGSEGV in FFmpeg,
    8 of 8 tries: the reconnect released the capture while the grabber thread was still reading it). Run in a
    child process so a crash is a failed test, not a dead test run; the default settings of ``kosti run``."""
    out = subprocess.run([sys.executable, "-c", STALL_SCRIPT.format(here=str(HERE), stall=stall)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-800:]}"
    before, after, stalled, connections = out.stdout.split()
    assert int(before) > 5 and int(after) >= 20  # frames again after the stall
    assert stalled == "True" and connections == "1"  # shown as stalled; the same connection recovered


def test_long_stall_reconnects_after_stall_s() -> None:
    with MjpegServer([("frames", 1.0), ("stall", 30.0)]) as srv:
        src = _reconnecting(srv.url, stall_s=2.0, read_s=1.5)
        with src:
            d = _drive(src, lambda d: srv.connections >= 2 and d.after >= 20)
        assert srv.connections >= 2, d.errors  # a new connection (the stalled one timed out in FFmpeg or at stall_s)
        assert "stalled" in d.states and src.status.state == "ok" and d.after >= 20  # frames again
        assert any("stalled: no frame" in e for e in d.errors)


def test_dropped_stream_reconnects() -> None:
    with MjpegServer([("frames", 1.0), ("drop", 1.0)]) as srv:
        with _reconnecting(srv.url) as src:
            d = _drive(src, lambda d: srv.connections >= 2 and d.frames > 40)  # the first connection gives ~20
        assert srv.connections >= 2 and d.frames > 40, d.errors


def test_garbage_frames_do_not_crash() -> None:
    with MjpegServer([("frames", 0.5), ("garbage", 1.5)]) as srv:
        with _reconnecting(srv.url, stall_s=2.0, read_s=1.5) as src:
            d = _drive(src, lambda d: d.frames > 40, reads=200)  # 0.5 s of frames (10), then garbage, then frames
        assert d.frames > 40 and src.status.state == "ok", (d.errors, d.states)


def test_camera_that_accepts_and_never_answers_says_so() -> None:
    """Was: "reconnecting, 0 attempts" for 31 s with no reason. Now "connecting to <address>" at once, and after
    the open timeout a counted attempt with the reason."""
    with SilentServer() as srv:
        src = _reconnecting(srv.url, open_s=1.5)
        with src:
            with pytest.raises(SourceError) as first:
                src.read(timeout=0.5)
            st = src.status
            assert st.state == "connecting" and f"127.0.0.1:{srv.port}" in st.message
            # the caller is not held for the whole open: the read gave up while the open still ran, not at its end
            assert "cannot open" not in str(first.value) and st.attempts == 0
            d = _drive(src, lambda d: "reconnecting" in d.states and any("cannot open" in e for e in d.errors),
                       reads=30)
        assert d.frames == 0 and "reconnecting" in d.states
        assert src.status.attempts >= 1 or any("cannot open" in e for e in d.errors)
        assert any("cannot open" in e for e in d.errors) or "cannot open" in src.status.message


class BlockingCapture:
    """A capture whose ``read`` blocks until released by the test (a stalled network read)."""

    def __init__(self) -> None:
        self.in_read = threading.Event()
        self.unblock = threading.Event()
        self.released_while_reading = False
        self.released_by: str | None = None
        self.reads = 0

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        return True

    def read(self):
        self.reads += 1
        if self.reads > 2:
            self.in_read.set()
            self.unblock.wait(60)  # longer than the test waits for close()
            self.in_read.clear()
        return True, np.zeros((4, 4, 3), np.uint8)

    def release(self) -> None:
        self.released_while_reading = self.in_read.is_set()
        self.released_by = threading.current_thread().name


def test_close_never_releases_a_capture_while_a_read_is_in_flight() -> None:
    cap = BlockingCapture()
    src = OpenCVSource("rtsp://cam/x", capture_factory=lambda t: cap)
    src.open()
    src.read(timeout=1.0)
    assert cap.in_read.wait(2.0)
    closer = threading.Thread(target=src.close)  # the grabber is stuck in read(): close must not release under it
    closer.start()
    closer.join(30.0)  # a close that waited for the read would wait until the test unblocks it (below)
    assert not closer.is_alive() and cap.released_by is None
    cap.unblock.set()
    for _ in range(100):
        if cap.released_by:
            break
        time.sleep(0.02)
    assert cap.released_by and cap.released_by.startswith("grab-") and not cap.released_while_reading
