"""Issue 42, item 4: ``kosti run`` without a camera. A cause that cannot heal while kosti runs (the picamera2
module is not installed; libcamera lists no camera) exits 2 at start with one line, as ``--source 7`` does; a
camera that goes away later is retried with backoff, the log says so once per cause (not a 400-character warning
every 1.5 s), and the page says why in words, in English and Russian."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

import fake_picamera2
import pytest

from kosti.cli import main
from kosti.dashboard.source_words import source_why
from kosti.vision.frame_source import SourceError
from kosti.vision.reconnect import ReconnectingSource


def _one_line(argv: list[str], capsys, needle: str) -> None:
    code = main(argv)
    _, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert needle in lines[0], lines[0]


def test_run_without_picamera2_exits_2_at_start(tmp_path, capsys) -> None:
    """The default source on a laptop: was the page served and a warning logged every 1.5 s forever."""
    if "picamera2" in sys.modules or importlib.util.find_spec("picamera2") is not None:
        pytest.skip("picamera2 is installed here (a Raspberry Pi): the module is not missing")
    _one_line(["run", "--players", "Ann,Boris", "--db", str(tmp_path / "k.db"), "--reader", "truth"], capsys,
              "needs the picamera2 module, which is not installed")
    _one_line(["run", "--source", "pi", "--db", str(tmp_path / "k.db")], capsys, "--source 0")
    assert not (tmp_path / "k.db").exists()  # nothing was started


def test_run_with_no_pi_camera_connected_exits_2(tmp_path, capsys, monkeypatch) -> None:
    fake_picamera2.install(monkeypatch, cameras=0)
    _one_line(["run", "--source", "picamera", "--db", str(tmp_path / "k.db"), "--reader", "truth"], capsys,
              "no Raspberry Pi camera is connected")


class _Unplugged:
    """A camera factory whose device is gone: every open fails with the OpenCV source's own words."""

    def __init__(self) -> None:
        self.message = "camera 0 cannot be opened: no such device " + "x" * 300  # a long library message

    def __call__(self):
        raise SourceError(self.message)


def test_a_camera_that_stays_away_is_logged_once_per_cause(caplog) -> None:
    clock = [0.0]
    factory = _Unplugged()
    src = ReconnectingSource(factory, initial_delay=0.5, max_delay=10.0, sleep=lambda s: clock.__setitem__(0, clock[0] + s),
                             clock=lambda: clock[0])
    src.open()
    with caplog.at_level(logging.DEBUG, logger="kosti.vision.sources"):
        for _ in range(12):
            with pytest.raises(SourceError):
                src.read(timeout=1.5)  # the runner's read: gives up at the deadline, resumes the same schedule
            clock[0] += 1.5
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and len(warnings[0].getMessage()) < 400, [r.getMessage() for r in warnings]
        assert src.status.attempts >= 4 and max(src.delays) > 1.5  # still retrying, with backoff
        factory.message = "camera 0 cannot be opened: device is busy"  # another cause: said once more
        for _ in range(4):
            with pytest.raises(SourceError):
                src.read(timeout=1.5)
            clock[0] += 10.0
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 2


def test_the_page_says_why_in_words() -> None:
    en, ru = source_why({"state": "reconnecting", "message": "SourceError: camera 0 cannot be opened",
                         "attempts": 3, "retry_in_s": 7.6})
    assert en == ("the camera cannot be opened: it is unplugged, switched off or used by another program; "
                  "trying again in 8 s (attempt 4)")
    assert ru == ("камеру не открыть: она отключена, выключена или занята другой программой; "
                  "новая попытка через 8 с (попытка 4)")
    en, ru = source_why({"state": "reconnecting", "message": "stalled: no frame for 5.2 s", "attempts": 1,
                         "retry_in_s": 0.4})
    assert en.startswith("the camera stopped sending pictures; trying again in 1 s") and "перестала" in ru
    # a recording read to its end (the runner's last error of a video file) is no failed camera
    assert source_why("error", "end of stream") == (
        "the video or folder of frames has ended: there is nothing more to read",
        "видео или папка кадров закончились: больше нечего читать")
    en, _ = source_why({"state": "reconnecting", "message": "rtsp://cam.local/live: connection refused",
                        "attempts": 2, "retry_in_s": 2})
    assert "network" in en
    assert source_why({"state": "ok", "message": "", "attempts": 0, "retry_in_s": 0}) is None
    assert source_why("ok") is None and source_why("none") is None
    assert source_why("error", "something no cause names")[0] == "the camera failed"  # the default cause


def test_capture_refuses_a_camera_that_cannot_come(tmp_path, capsys) -> None:
    """``kosti capture`` reads a live camera the same way: it retried a missing picamera2 or device forever."""
    if not ("picamera2" in sys.modules or importlib.util.find_spec("picamera2") is not None):
        _one_line(["capture", "--source", "picamera", "--out", str(tmp_path / "caps")], capsys,
                  "needs the picamera2 module")
    missing = next(str(i) for i in range(7, 64) if not Path(f"/dev/video{i}").exists())
    _one_line(["capture", "--source", missing, "--out", str(tmp_path / "caps")], capsys,
              f"camera {missing} cannot be opened")
    _one_line(["run", "--source", missing, "--db", str(tmp_path / "k.db")], capsys, f"camera {missing} cannot be opened")
