"""A stand-in for the ``picamera2`` package that behaves like the real one where ``PicameraSource`` uses it.

Modelled on Picamera2 (the Picamera2 manual, datasheets.raspberrypi.com/camera/picamera2-manual.pdf):
``Picamera2(camera_num)`` with ``camera_properties``; ``create_video_configuration(main=…, sensor=…,
controls=…, buffer_count=…)`` returning a configuration dict; ``configure`` (refused while started);
``start``/``stop``/``close``; ``capture_request()`` blocking for the next completed frame and returning a
request with ``make_array("main")``, ``get_metadata()`` (``FrameDuration`` µs, ``SensorTimestamp`` ns) and
``release()``; ``capture_array("main")``. The sensor runs at the rate ``FrameDurationLimits`` sets, on
its own clock: a consumer slower than the sensor gets the newest frame and the ones between are lost, as
with libcamera's buffer queue. :meth:`Picamera2.stall` stops frames arriving (a loose ribbon cable);
``stop`` wakes a blocked ``capture_request`` with an error, as Picamera2 cancels its pending jobs.

Install with :func:`install` (``monkeypatch.setitem(sys.modules, "picamera2", module)``).
"""

from __future__ import annotations

import threading
import time
import types
from typing import Any

import numpy as np

#: IMX708 (Camera Module 3) sensor modes: output size → max fps (``rpicam-hello --list-cameras``).
IMX708_MODES = {(1536, 864): 120.13, (2304, 1296): 56.03, (4608, 2592): 14.35}


class CameraStopped(RuntimeError):
    """Raised in a ``capture_request`` that ``stop()`` interrupted."""


class _Request:
    def __init__(self, cam: Picamera2, index: int, timestamp_ns: int) -> None:
        self._cam, self.index, self._ts = cam, index, timestamp_ns
        self.released = False

    def make_array(self, name: str) -> np.ndarray:
        assert not self.released, "make_array after release"
        stream = self._cam.config[name]
        w, h = stream["size"]
        img = np.zeros((h, w, 3), np.uint8)
        img[..., 0] = self.index % 256  # blue channel carries the frame number (RGB888 = B, G, R in memory)
        return img

    def get_metadata(self) -> dict[str, Any]:
        return {"FrameDuration": self._cam.frame_us, "SensorTimestamp": self._ts, "ExposureTime": 10000}

    def release(self) -> None:
        self.released = True
        self._cam.released += 1


class Picamera2:
    """Fake camera; ``instances`` lists every one created (for assertions)."""

    instances: list[Picamera2] = []

    def __init__(self, camera_num: int = 0, model: str = "imx708") -> None:
        self.camera_num = camera_num
        self.camera_properties = {"Model": model, "PixelArraySize": (4608, 2592)}
        self.sensor_modes = [{"size": s, "fps": f} for s, f in IMX708_MODES.items()]
        self.config: dict[str, Any] | None = None
        self.config_args: dict[str, Any] | None = None
        self.started = self.closed = False
        self.frame_us = 33333
        self.requests = self.released = 0
        self.calls: list[str] = []
        self._cond = threading.Condition()
        self._stalled = False
        self._t0 = 0.0
        self._last_index = -1
        Picamera2.instances.append(self)

    def create_video_configuration(self, main=None, lores=None, raw=None, transform=None, colour_space=None,
                                   buffer_count=6, controls=None, display="main", encode="main", queue=True,
                                   sensor=None, use_case="video") -> dict[str, Any]:
        main = dict(main or {})
        main.setdefault("size", (1280, 720))
        main.setdefault("format", "XBGR8888")
        if sensor and "output_size" in sensor and tuple(sensor["output_size"]) not in IMX708_MODES:
            raise ValueError(f"no sensor mode {sensor['output_size']}")
        self.config_args = {"main": main, "sensor": sensor, "controls": dict(controls or {}),
                            "buffer_count": buffer_count}
        return {"use_case": use_case, "main": main, "sensor": dict(sensor or {}), "controls": dict(controls or {}),
                "buffer_count": buffer_count}

    def configure(self, config: dict[str, Any]) -> None:
        if self.started:
            raise RuntimeError("Camera must be stopped before configuring")
        self.calls.append("configure")
        self.config = config
        limits = config["controls"].get("FrameDurationLimits")
        if limits:
            mode = tuple(config["sensor"].get("output_size", (1536, 864)))
            self.frame_us = max(int(limits[0]), int(1e6 / IMX708_MODES[mode]))

    def start(self) -> None:
        if self.config is None:
            raise RuntimeError("Camera has not been configured")
        self.calls.append("start")
        self.started = True
        self._t0 = time.monotonic()

    def stall(self, stalled: bool = True) -> None:
        """Stop (or resume) frames arriving; a blocked ``capture_request`` keeps waiting."""
        with self._cond:
            self._stalled = stalled
            self._cond.notify_all()

    def capture_request(self) -> _Request:
        with self._cond:
            while True:
                if not self.started:
                    raise CameraStopped("Camera stopped")
                if not self._stalled:
                    period = self.frame_us / 1e6
                    index = int((time.monotonic() - self._t0) / period)
                    if index > self._last_index:
                        self._last_index = index
                        self.requests += 1
                        return _Request(self, index, int((self._t0 + index * period) * 1e9))
                    self._cond.wait((index + 1) * period - (time.monotonic() - self._t0) + 1e-4)
                else:
                    self._cond.wait(0.05)

    def capture_array(self, name: str = "main") -> np.ndarray:
        request = self.capture_request()
        try:
            return request.make_array(name)
        finally:
            request.release()

    def stop(self) -> None:
        self.calls.append("stop")
        with self._cond:
            self.started = False
            self._cond.notify_all()

    def close(self) -> None:
        self.calls.append("close")
        self.closed = True


def install(monkeypatch, model: str = "imx708", cameras: int = 1) -> types.ModuleType:
    """Put a fake ``picamera2`` module (``cameras`` cameras of sensor ``model``) into ``sys.modules``; returns it.
    ``Picamera2.global_camera_info()`` lists them as the real one does (one dict per camera, ``Model``, ``Num``)."""
    module = types.ModuleType("picamera2")

    class Camera(Picamera2):
        def __init__(self, camera_num: int = 0) -> None:
            super().__init__(camera_num, model=model)

        @staticmethod
        def global_camera_info() -> list[dict[str, Any]]:
            return [{"Model": model, "Num": i, "Location": 2, "Rotation": 180} for i in range(cameras)]

    Picamera2.instances = []
    module.Picamera2 = Camera
    monkeypatch.setitem(__import__("sys").modules, "picamera2", module)
    return module
