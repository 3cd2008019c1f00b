"""``PicameraSource`` against a fake ``picamera2`` that behaves like the real one (configure, start,
capture_request, stop, a stall): its settings, BGR frames, the sensor's and the delivered frame rates."""

from __future__ import annotations

import threading
import time

import fake_picamera2
import pytest

from kosti.vision.sources import PicameraSource, ReconnectingSource, SourceError


@pytest.fixture()
def fake(monkeypatch):
    return fake_picamera2.install(monkeypatch)


def test_configures_the_camera_module_3_for_the_table(fake):
    """Main stream RGB888 at the asked size, the full-area 2304×1296 sensor mode, the frame duration pinned
    to the asked rate, 4 buffers; configure before start; frames are (H, W, 3) uint8 in BGR order."""
    with PicameraSource(size=(1280, 720), fps=30) as src:
        frame = src.read(timeout=2)
        cam = fake_picamera2.Picamera2.instances[-1]
        assert cam.calls[:2] == ["configure", "start"]
        assert cam.config_args == {"main": {"size": (1280, 720), "format": "RGB888"},
                                   "sensor": {"output_size": (2304, 1296)},
                                   "controls": {"FrameDurationLimits": (33333, 33333)}, "buffer_count": 4}
        assert frame.image.shape == (720, 1280, 3) and frame.image.dtype.name == "uint8"
        assert frame.image[..., 1:].max() == 0  # the fake writes into B: RGB888 arrives as OpenCV BGR
    assert cam.calls[-2:] == ["stop", "close"] and cam.closed
    assert cam.released == cam.requests  # every request went back to libcamera


def test_other_sensors_keep_libcamera_s_mode_choice(monkeypatch):
    fake_picamera2.install(monkeypatch, model="imx219")
    src = PicameraSource(size=(640, 480), fps=15)
    assert "sensor" not in src.configuration_args("imx219")
    assert src.configuration_args("imx219")["controls"] == {"FrameDurationLimits": (66667, 66667)}
    assert PicameraSource(sensor_mode=(4608, 2592)).configuration_args("imx219")["sensor"] == {
        "output_size": (4608, 2592)}


def test_reports_the_sensor_rate_and_the_delivered_rate_separately(fake):
    """The sensor runs at 30 fps; a consumer reading every 0.1 s gets the newest frame each time, so the
    delivered rate is about 10 fps while the sensor rate stays 30 (from FrameDuration metadata)."""
    with PicameraSource(fps=30) as src:
        indices = []
        for _ in range(8):
            indices.append(int(src.read(timeout=2).image[0, 0, 0]))
            time.sleep(0.1)
        info = src.info()
    assert info["sensor_fps"] == pytest.approx(30.0, rel=0.01)  # from FrameDuration metadata, not a clock
    assert 0 < info["delivered_fps"] == info["fps"] < info["sensor_fps"]  # the slow consumer got fewer frames
    assert info["requested_fps"] == 30 and info["model"] == "imx708"
    assert max(b - a for a, b in zip(indices, indices[1:], strict=False)) >= 2  # frames in between were dropped


def test_a_stalled_camera_raises_and_closes_promptly(fake):
    src = PicameraSource(fps=30, read_timeout=0.3).open()
    src.read()
    cam = fake_picamera2.Picamera2.instances[-1]
    cam.stall()
    time.sleep(0.1)
    with pytest.raises(SourceError, match=r"no frame for 0\.[3-9] s"):
        src.read()
    closer = threading.Thread(target=src.close)  # the grabber thread is blocked in capture_request: stop() must wake it
    closer.start()
    closer.join(30.0)  # a close that waited for the stalled camera would never end
    assert not closer.is_alive() and cam.calls[-2:] == ["stop", "close"]


def test_a_stall_is_survived_by_reopening_the_camera(fake):
    """Through :class:`ReconnectingSource` (as ``open_source("picamera")`` builds it) a stalled camera is
    closed and opened again, and frames flow from the new one."""
    src = ReconnectingSource(lambda: PicameraSource(fps=30, read_timeout=0.3), initial_delay=0.05, max_delay=0.1)
    src.open()
    src.read()
    first = fake_picamera2.Picamera2.instances[-1]
    first.stall()
    for _ in range(100):  # reads, not seconds: the stall (0.3 s) and the backoff (0.05-0.1 s) take a few of them
        if fake_picamera2.Picamera2.instances[-1] is not first and fake_picamera2.Picamera2.instances[-1].requests:
            break
        try:
            src.read(timeout=0.5)
        except SourceError:
            time.sleep(0.05)
    else:
        pytest.fail("the stalled camera was not reopened in 100 reads")
    frame = src.read(timeout=2)  # from the new camera
    src.close()
    assert frame.image.shape == (720, 1280, 3)
    assert first.closed and len(fake_picamera2.Picamera2.instances) >= 2


def test_a_camera_that_fails_to_start_is_a_source_error_and_is_closed(fake, monkeypatch):
    def broken_start(self):
        raise RuntimeError("Failed to start camera: Device or resource busy")

    monkeypatch.setattr(fake_picamera2.Picamera2, "start", broken_start)
    with pytest.raises(SourceError, match="cannot start the Pi camera 0: Failed to start camera"):
        PicameraSource().open()
    assert fake_picamera2.Picamera2.instances[-1].closed


def test_a_bad_frame_rate_is_refused():
    with pytest.raises(SourceError, match="fps must be > 0"):
        PicameraSource(fps=0)
