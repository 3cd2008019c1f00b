"""The Raspberry Pi camera through Picamera2 (imported only when the source opens)."""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

import numpy as np

from kosti.vision.camera_sources import GrabbedSource
from kosti.vision.frame_source import SourceError

log = logging.getLogger("kosti.vision.sources")


def _cameras_listed(picamera2_class: Any) -> bool:
    """Whether libcamera lists any camera (``Picamera2.global_camera_info()``, the Picamera2 manual); ``True``
    when it cannot tell, so the start's own error is reported."""
    try:
        return bool(picamera2_class.global_camera_info())
    except Exception:  # noqa: BLE001 - libcamera cannot tell
        return True


class PicameraSource(GrabbedSource):
    """The Raspberry Pi camera through Picamera2 (libcamera), video configuration, BGR frames.

    Picamera2 is imported when the source opens, so this class can be named on any machine; opening it
    where Picamera2 is missing raises :class:`SourceError` with installation advice. Capture runs in a
    background thread that keeps the newest frame. Picamera2's ``"RGB888"`` format is stored B, G, R in
    memory (libcamera's naming), i.e. exactly OpenCV's BGR order.

    Settings (the Picamera2 manual, datasheets.raspberrypi.com/camera/picamera2-manual.pdf, "Configuration"
    and "Camera controls"; ``docs/setup.md`` §2.4):
    ``create_video_configuration(main={"size": size, "format": "RGB888"}, sensor={"output_size": mode},
    controls={"FrameDurationLimits": (d, d)}, buffer_count=n)`` with ``d = 1e6 / fps`` µs — the sensor
    then runs at exactly ``fps``. On a Camera Module 3 (IMX708) the sensor mode defaults to 2304×1296: the
    full sensor area 2×2-binned, up to 56 fps; libcamera may otherwise pick 1536×864 for a 1280×720 stream,
    a centre crop of 3072×1728 that sees only two thirds of the table's width (mode list of the kernel's
    ``imx708.c`` driver, as ``rpicam-hello --list-cameras`` prints it).

    Two rates are reported (:meth:`info`): ``sensor_fps`` — the rate the sensor delivers, from each
    request's ``FrameDuration`` metadata (µs); and ``fps`` — the rate :meth:`read` hands frames to the
    consumer, which is lower when the reader is slower than the camera (only the newest frame is kept).

    Args:
        size: ``(width, height)`` of the main stream in pixels (default 1280×720).
        fps: requested frame rate (sets ``FrameDurationLimits``).
        camera_num: which camera on a multi-camera Pi.
        read_timeout: seconds :meth:`read` waits for a new frame (a stalled camera then raises
            :class:`SourceError`; ``ReconnectingSource`` reopens it).
        sensor_mode: sensor ``output_size`` ``(width, height)``; ``None`` = 2304×1296 on an IMX708, else
            libcamera's choice.
        buffer_count: frame buffers libcamera cycles (4: one being filled, one being read, two spare; 4 ×
            1280×720×3 bytes = 11 MB instead of the video default's 6 buffers).
    """

    kind = "picamera"
    #: Camera Module 3 (IMX708, also the wide and NoIR variants) full-area binned mode, ≤ 56 fps.
    IMX708_MODE = (2304, 1296)

    def __init__(
        self, size: tuple[int, int] = (1280, 720), fps: float = 30.0, camera_num: int = 0, read_timeout: float = 5.0,
        sensor_mode: tuple[int, int] | None = None, buffer_count: int = 4,
    ) -> None:
        super().__init__()
        if not fps > 0:
            raise SourceError(f"picamera: fps must be > 0, got {fps}")
        self.size, self.requested_fps, self.camera_num, self.read_timeout = size, fps, camera_num, read_timeout
        self.sensor_mode, self.buffer_count = sensor_mode, int(buffer_count)
        self._cam: Any = None
        self._model = ""
        self._durations: deque[float] = deque(maxlen=30)  # FrameDuration metadata of recent frames, µs
        self._durations_lock = threading.Lock()

    def configuration_args(self, model: str = "") -> dict[str, Any]:
        """Keyword arguments for ``Picamera2.create_video_configuration`` (see the class docstring)."""
        mode = self.sensor_mode or (self.IMX708_MODE if model.lower().startswith("imx708") else None)
        frame_us = int(round(1e6 / float(self.requested_fps)))
        args: dict[str, Any] = {
            "main": {"size": tuple(self.size), "format": "RGB888"},
            "controls": {"FrameDurationLimits": (frame_us, frame_us)},
            "buffer_count": self.buffer_count,
        }
        if mode is not None:
            args["sensor"] = {"output_size": tuple(mode)}
        return args

    def _open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise SourceError(
                "picamera2 is not available: the 'picamera' source needs a Raspberry Pi with the camera stack "
                "(sudo apt install python3-picamera2; create the venv with --system-site-packages). "
                "On other machines use a device index such as 0, an rtsp:// or http:// URL, a video file, "
                "a folder of frames or 'virtual'."
            ) from exc
        cam = None
        try:
            cam = Picamera2(self.camera_num)
            self._model = str((getattr(cam, "camera_properties", None) or {}).get("Model", ""))
            cam.configure(cam.create_video_configuration(**self.configuration_args(self._model)))
            cam.start()
        except Exception as exc:  # noqa: BLE001 - libcamera raises many types
            if cam is not None:
                try:
                    cam.close()
                except Exception:  # noqa: BLE001 - the start failure is the error to report
                    log.debug("closing the half-started Pi camera failed", exc_info=True)
            if not _cameras_listed(Picamera2):  # unplugged: the page says "plug it in" (dashboard/source_words.py)
                raise SourceError(f"Pi camera {self.camera_num}: no Raspberry Pi camera is connected "
                                  "(libcamera lists none)") from exc
            raise SourceError(f"cannot start the Pi camera {self.camera_num}: {exc}") from exc
        self._cam = cam
        with self._durations_lock:
            self._durations.clear()

        def release() -> None:
            try:
                cam.stop()
            finally:
                cam.close()

        self._start_grabber(lambda: self._capture(cam), f"picamera {self.camera_num}", release=release)

    def _capture(self, cam: Any) -> np.ndarray:
        """One frame from the camera: the request's main-stream array, its ``FrameDuration`` noted."""
        request = cam.capture_request()
        try:
            image: np.ndarray = request.make_array("main")
            duration = (request.get_metadata() or {}).get("FrameDuration")
        finally:
            request.release()  # back to libcamera at once: the buffer is reused for a later frame
        if duration:
            with self._durations_lock:
                self._durations.append(float(duration))
        return image

    @property
    def sensor_fps(self) -> float:
        """Frame rate the sensor runs at, from recent frames' ``FrameDuration`` (0.0 before the first)."""
        with self._durations_lock:
            if not self._durations:
                return 0.0
            return 1e6 / float(np.median(self._durations))

    def _close(self) -> None:
        # The grabber thread stops and closes the camera after its last capture. A capture blocked by a
        # stalled camera is woken by ``stop()`` from this thread: picamera2 cancels the pending request
        # (unlike FFmpeg, where closing under a read crashes), then the thread releases the camera.
        grabber, cam = self._grabber, self._cam
        if grabber is not None:
            grabber.stop(join_timeout=0.5)
            if grabber.running and cam is not None:
                try:
                    cam.stop()
                except Exception:  # noqa: BLE001 - the thread's release reports a real failure
                    log.debug("waking the stalled Pi camera failed", exc_info=True)
                grabber.stop(join_timeout=2.0)
        self._grabber = None
        self._cam = None

    def info(self) -> dict[str, Any]:
        """:meth:`FrameSource.info` plus ``camera``, ``model``, ``size``, ``requested_fps``, ``sensor_fps``
        (the sensor's rate) and ``delivered_fps`` (the rate frames reach the consumer, same as ``fps``)."""
        d = super().info()
        d.update(camera=self.camera_num, model=self._model, size=list(self.size), requested_fps=self.requested_fps,
                 sensor_fps=round(self.sensor_fps, 2), delivered_fps=d["fps"])
        return d
