"""Frame sources: one interface over the Pi camera, USB/IP cameras, video files, photo folders and a virtual table.

Every source is a context manager whose :meth:`FrameSource.read` returns the next :class:`Frame`
(``image`` ``(H, W, 3)`` uint8 BGR, ``t`` seconds, ``index``). Live cameras capture in a background
thread and always hand out the *newest* frame (a slow consumer skips frames instead of lagging behind a
buffer). Offline sources (video files, photo folders, the virtual table) can run in real time or as fast
as possible with simulated time, so the same pipeline runs live and in tests.

Errors: :class:`SourceError` (a recoverable failure: camera gone, stream dropped, unreadable file) and
:class:`EndOfStream` (a finite source has no more frames; not an error). :class:`ReconnectingSource`
wraps a live source and retries with exponential backoff, exposing a :class:`SourceStatus` for the
dashboard.

``open_source(spec)`` turns a command-line string into a source: ``picamera``, a device index such as
``0``, an ``rtsp://``/``http(s)://`` URL, a video file, a folder of photos, or ``virtual``.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

log = logging.getLogger(__name__)

#: File name endings read as photos by :class:`FolderSource` (those ``cv2.imread`` decodes).
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
#: File name endings read as videos by :func:`open_source`.
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mjpg", ".mjpeg", ".h264", ".ts")


# The one secret-redaction rule for source URLs lives in kosti.redact (light: the CLI installs it for every
# command without importing OpenCV); it is re-exported here, where source specs are parsed.
from kosti.redact import RedactingFilter, install_log_redaction, redact_text, redact_url  # noqa: E402,F401


class SourceError(RuntimeError):
    """A recoverable failure of a frame source (camera missing or gone, stream dropped, bad file).

    ``exit_code`` 2 makes the CLI report it as bad input (one line on stderr).
    """

    exit_code = 2


class SourceTimeout(SourceError):
    """No new frame arrived within the read's timeout, but the source has not failed (a stall so far)."""


class EndOfStream(Exception):
    """A finite source (video file, photo folder) has delivered its last frame. Not an error."""


@dataclass(frozen=True)
class Frame:
    """One camera frame.

    Attributes:
        image: ``(H, W, 3)`` uint8 BGR pixels.
        t: capture time in seconds. Live sources use ``time.monotonic()``; offline sources (video files,
            folders, a simulated virtual table) use media time from the start of the stream, so results do
            not depend on how fast the machine is. Non-decreasing within one source.
        index: 0-based number of the frame delivered by this source.
    """

    image: np.ndarray
    t: float
    index: int

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])


class _RateMeter:
    """Measured frame rate over a sliding window of wall-clock delivery times."""

    def __init__(self, window: int = 30) -> None:
        self._times: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()

    def tick(self, now: float | None = None) -> None:
        with self._lock:
            self._times.append(time.monotonic() if now is None else now)

    def reset(self) -> None:
        with self._lock:
            self._times.clear()

    @property
    def fps(self) -> float:
        with self._lock:
            if len(self._times) < 2:
                return 0.0
            span = self._times[-1] - self._times[0]
            return (len(self._times) - 1) / span if span > 0 else 0.0


def _as_bgr(image: np.ndarray) -> np.ndarray:
    """Return ``image`` as ``(H, W, 3)`` uint8 BGR (gray and BGRA are converted)."""
    if image is None or not isinstance(image, np.ndarray) or image.size == 0:
        raise SourceError("the source returned an empty frame")
    if image.dtype != np.uint8:
        raise SourceError(f"the source returned {image.dtype} pixels, expected uint8")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    raise SourceError(f"the source returned a frame of shape {image.shape}, expected (H, W, 3)")


class FrameSource(ABC):
    """Common interface of every frame source.

    Use as a context manager (``with open_source("0") as src: frame = src.read()``) or call
    :meth:`open`/:meth:`close`. Iterating yields frames until :class:`EndOfStream`.
    Subclasses implement ``_open``, ``_close`` and ``_read``. Not meant to be read from two threads at once.
    """

    #: Short kind name shown in :meth:`info` (``"opencv"``, ``"folder"`` ...).
    kind = "source"

    def __init__(self) -> None:
        self._rate = _RateMeter()
        self._index = 0
        self._is_open = False
        self._closed = False  # closed by close() (read() then raises instead of reopening)
        self._open_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------------
    def open(self) -> FrameSource:
        """Open the device/file (idempotent). Raises :class:`SourceError` when it cannot be opened."""
        with self._open_lock:
            if not self._is_open:
                self._open()
                self._is_open = True
                self._closed = False
                self._rate.reset()
        return self

    def close(self) -> None:
        """Release the device/file (idempotent, never raises)."""
        with self._open_lock:
            self._closed = True
            if self._is_open:
                self._is_open = False
                try:
                    self._close()
                except Exception:  # noqa: BLE001 - closing must not crash the caller
                    log.exception("error while closing %s", self.kind)

    def cancel(self) -> None:
        """Wake a :meth:`read` blocked in another thread (it raises :class:`SourceError`); thread-safe.

        Used by :class:`~kosti.vision.pipeline.LivePipeline` to stop promptly; call :meth:`close` after the
        reading thread has finished. Sources whose reads never block for long do nothing.
        """

    @property
    def is_open(self) -> bool:
        """True between a successful :meth:`open` and :meth:`close`."""
        return self._is_open

    def __enter__(self) -> FrameSource:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        self.open()
        while True:
            try:
                yield self.read()
            except EndOfStream:
                return

    # -- frames ------------------------------------------------------------------------------------
    def read(self, timeout: float | None = None) -> Frame:
        """Return the next frame.

        Args:
            timeout: seconds to wait for a live frame (``None`` = the source's default).

        Raises:
            SourceError: the frame could not be captured (the source may recover; see ReconnectingSource).
            EndOfStream: a finite source has no more frames.
        """
        if not self._is_open:
            if self._closed:
                raise SourceError(f"{self.kind} source is closed")
            self.open()
        image, t = self._read(timeout)
        image = _as_bgr(image)
        frame = Frame(image=image, t=float(t), index=self._index)
        self._index += 1
        self._rate.tick()
        return frame

    @property
    def fps(self) -> float:
        """Measured rate of delivered frames, frames per wall-clock second (0.0 before two frames)."""
        return self._rate.fps

    @property
    def frames_read(self) -> int:
        """Number of frames delivered so far."""
        return self._index

    def info(self) -> dict[str, Any]:
        """Description for logs and the dashboard: ``kind``, ``open``, ``fps`` (measured) and source details."""
        return {"kind": self.kind, "open": self._is_open, "fps": round(self.fps, 2), "frames": self._index}

    @abstractmethod
    def _open(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    @abstractmethod
    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]: ...


# ---------------------------------------------------------------------------------------------------
# Live cameras: a background thread keeps only the newest frame
# ---------------------------------------------------------------------------------------------------
class _LatestFrameGrabber:
    """Background thread calling ``grab() -> image | None`` in a loop and keeping only the newest frame.

    ``max_failures`` consecutive ``None`` results (or one exception) mark the grabber failed; the error
    is raised to the reader as :class:`SourceError`.

    **Ownership rule** (every live source): the grabber thread owns the device once started. ``release()`` (the
    capture's close) runs in that thread, after its last ``grab()`` has returned — never while a read is in
    flight in another thread. :meth:`stop` only asks the thread to end; a read blocked in a stalled network
    stream finishes (the backend's read timeout bounds it) and then the thread releases the device itself.
    Closing a capture while FFmpeg was still reading it crashed the process (SIGSEGV) after a ≥ 3.2 s stall.
    """

    def __init__(self, grab: Callable[[], np.ndarray | None], name: str, max_failures: int = 25,
                 release: Callable[[], None] | None = None) -> None:
        self._grab = grab
        self._release = release
        self._name = name
        self._max_failures = max_failures
        self._cond = threading.Condition()
        self._latest: tuple[np.ndarray, float] | None = None
        self._seq = 0
        self._error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"grab-{name}", daemon=True)
        #: ``time.monotonic()`` of the newest frame (of the start before the first one).
        self.last_frame_at = time.monotonic()

    def start(self) -> None:
        self.last_frame_at = time.monotonic()
        self._thread.start()

    def stop(self, join_timeout: float = 2.0) -> None:
        """Ask the thread to end and wait up to ``join_timeout`` s; the device is released by the thread."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(join_timeout)
            if self._thread.is_alive():
                log.warning("%s: a capture read is still in flight; the device is released when it returns",
                            self._name)

    @property
    def running(self) -> bool:
        """True while the grabber thread lives (it may be finishing a read after :meth:`stop`)."""
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            if self._release is not None:
                try:
                    self._release()
                except Exception:  # noqa: BLE001 - releasing must not kill anything
                    log.exception("%s: error while releasing the device", self._name)

    def _loop(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                image = self._grab()
            except Exception as exc:  # noqa: BLE001 - reported to the reader
                self._fail(f"{type(exc).__name__}: {exc}")
                return
            if self._stop.is_set():
                return
            if image is None:
                failures += 1
                if failures >= self._max_failures:
                    self._fail(f"{failures} failed captures in a row")
                    return
                time.sleep(0.01)
                continue
            failures = 0
            with self._cond:
                self._latest = (image, time.monotonic())
                self.last_frame_at = self._latest[1]
                self._seq += 1
                self._cond.notify_all()

    def _fail(self, message: str) -> None:
        with self._cond:
            self._error = message
            self._cond.notify_all()

    def get(self, after_seq: int, timeout: float) -> tuple[np.ndarray, float, int]:
        """Wait up to ``timeout`` s for a frame newer than ``after_seq``; returns ``(image, t, seq)``.

        Raises :class:`SourceTimeout` when none came in time (the stream may only be stalled),
        :class:`SourceError` when the grabber failed or was stopped."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._seq <= after_seq and self._error is None and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    quiet = time.monotonic() - self.last_frame_at
                    raise SourceTimeout(f"{self._name}: no frame for {quiet:.1f} s")
                self._cond.wait(left)
            if self._seq > after_seq and self._latest is not None:
                image, t = self._latest
                return image, t, self._seq
            if self._error is not None:
                raise SourceError(f"{self._name}: {self._error}")
            raise SourceError(f"{self._name}: closed")


class _GrabbedSource(FrameSource):
    """A live source whose frames come from a :class:`_LatestFrameGrabber` thread (camera, stream).

    Subclasses open their device in ``_open`` and call :meth:`_start_grabber` with a function that
    blocks for the next frame; :meth:`read` then always returns the newest frame, never a stale one.
    """

    read_timeout: float = 5.0

    def __init__(self) -> None:
        super().__init__()
        self._grabber: _LatestFrameGrabber | None = None
        self._last_seq = 0

    def _start_grabber(self, grab: Callable[[], np.ndarray | None], name: str,
                       release: Callable[[], None] | None = None) -> None:
        """Start the grabber thread; from now on it owns the device and calls ``release`` when it ends."""
        self._last_seq = 0
        self._grabber = _LatestFrameGrabber(grab, name, release=release)
        self._grabber.start()

    def _stop_grabber(self) -> None:
        if self._grabber is not None:
            self._grabber.stop()
        self._grabber = None

    def cancel(self) -> None:
        grabber = self._grabber
        if grabber is not None:
            grabber.stop()

    @property
    def seconds_since_frame(self) -> float:
        """Seconds since the newest frame arrived (since the start before the first); 0.0 when not running."""
        g = self._grabber
        return 0.0 if g is None else time.monotonic() - g.last_frame_at

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        if self._grabber is None:
            raise SourceError(f"{self.kind} source is closed")
        image, t, seq = self._grabber.get(self._last_seq, self.read_timeout if timeout is None else timeout)
        self._last_seq = seq
        return image, t


#: Seconds FFmpeg waits to connect to a network stream, and for data once connected, before giving up. Its own
#: defaults (30 s, or none) left a camera that accepts but never answers "reconnecting" for 31 s with no reason.
STREAM_OPEN_TIMEOUT_S = 8.0
STREAM_READ_TIMEOUT_S = 5.0


def _is_device(target: int | str) -> bool:
    return isinstance(target, int) or str(target).startswith("/dev/")


def open_capture(target: int | str, open_timeout_s: float = STREAM_OPEN_TIMEOUT_S,
                 read_timeout_s: float = STREAM_READ_TIMEOUT_S) -> Any:
    """``cv2.VideoCapture`` for a device or a stream URL; streams go through FFmpeg with open and read timeouts
    (``CAP_PROP_OPEN_TIMEOUT_MSEC`` / ``CAP_PROP_READ_TIMEOUT_MSEC``, OpenCV ≥ 4.6), so a stalled or silent
    stream makes ``read()`` return ``False`` instead of blocking for ever."""
    if _is_device(target):
        return cv2.VideoCapture(target)
    params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(open_timeout_s * 1000),
              cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(read_timeout_s * 1000)]
    return cv2.VideoCapture(str(target), cv2.CAP_FFMPEG, params)


class OpenCVSource(_GrabbedSource):
    """A USB camera (device index) or a network stream (``rtsp://``, ``http://``) read with OpenCV.

    A grabber thread reads continuously and keeps only the newest frame, so :meth:`read` never returns
    a stale buffered frame. ``t`` is ``time.monotonic()`` when the frame arrived.

    Args:
        target: device index (``0``), device path (``/dev/video0``) or stream URL.
        width, height: requested capture size in pixels for devices (the driver may pick another; the
            frames report the real size). Ignored for streams.
        fps: requested device frame rate (``None`` = driver default).
        read_timeout: seconds :meth:`read` waits for a new frame before raising :class:`SourceError`.
        capture_factory: ``callable(target) -> cv2.VideoCapture``-like object (tests inject fakes); default
            :func:`open_capture` (FFmpeg open and read timeouts for network streams).
    """

    kind = "opencv"

    def __init__(
        self,
        target: int | str,
        width: int | None = 1280,
        height: int | None = 720,
        fps: float | None = None,
        read_timeout: float = 5.0,
        capture_factory: Callable[[int | str], Any] | None = None,
    ) -> None:
        super().__init__()
        self.target = target
        self.width, self.height, self.requested_fps = width, height, fps
        self.read_timeout = read_timeout
        self._factory = capture_factory or open_capture
        self._cap: Any = None

    def _describe(self) -> str:
        if isinstance(self.target, int) or str(self.target).startswith("/dev/"):
            return f"camera {self.target}"
        return str(redact_url(str(self.target)))

    def _open(self) -> None:
        cap = self._factory(self.target)
        if cap is None or not cap.isOpened():
            if cap is not None:
                cap.release()
            raise SourceError(f"cannot open {self._describe()}")
        if isinstance(self.target, int) or str(self.target).startswith("/dev/"):
            # USB webcams deliver 720p at 30 fps only as MJPG (raw YUYV is limited by USB 2 bandwidth).
            cap.set(cv2.CAP_PROP_FOURCC, float(cv2.VideoWriter_fourcc(*"MJPG")))
            if self.width and self.height:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, float(self.width))
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, float(self.height))
            if self.requested_fps:
                cap.set(cv2.CAP_PROP_FPS, float(self.requested_fps))
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1.0)  # where the backend honours it, fewer stale frames

        def grab() -> np.ndarray | None:
            ok, image = cap.read()
            return image if ok and image is not None else None

        self._cap = cap
        self._start_grabber(grab, self._describe(), release=cap.release)  # the grabber thread owns cap now

    def _close(self) -> None:
        self._stop_grabber()  # the grabber thread releases the capture after its last read
        self._cap = None

    def info(self) -> dict[str, Any]:
        d = super().info()
        d["target"] = self._describe()
        return d


class PicameraSource(_GrabbedSource):
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
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ImportError as exc:
            raise SourceError(
                "picamera2 is not available: the 'picamera' source needs a Raspberry Pi with the camera stack "
                "(sudo apt install python3-picamera2; create the venv with --system-site-packages). "
                "On other machines use a device index such as 0, an rtsp:// or http:// URL, a video file, "
                "a folder of photos or 'virtual'."
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
            image = request.make_array("main")
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


# ---------------------------------------------------------------------------------------------------
# Offline sources
# ---------------------------------------------------------------------------------------------------
class _Pacer:
    """Sleeps so that media time ``t`` is delivered at wall time ``start + t`` (real-time replay)."""

    def __init__(self) -> None:
        self._start: float | None = None

    def reset(self) -> None:
        self._start = None

    def wait(self, t: float) -> None:
        now = time.monotonic()
        if self._start is None:
            self._start = now - t
        delay = self._start + t - now
        if delay > 0:
            time.sleep(delay)


class VideoFileSource(FrameSource):
    """A video file, in real time (paced to its frame rate) or as fast as possible.

    ``t`` is media time in seconds (frame number / the file's frame rate), so settle timing is the same
    at any processing speed.

    Args:
        path: video file readable by OpenCV (FFmpeg backend).
        realtime: sleep so frames arrive at the file's own rate (a camera replay); False = as fast as possible.
        loop: start again at the end instead of raising :class:`EndOfStream`.
        default_fps: frame rate assumed when the file does not state one.
    """

    kind = "video"

    def __init__(self, path: str | os.PathLike[str], realtime: bool = True, loop: bool = False, default_fps: float = 30.0) -> None:
        super().__init__()
        self.path = Path(path)
        self.realtime, self.loop = realtime, loop
        self.default_fps = default_fps
        self.nominal_fps = default_fps
        self.frame_count = 0
        self._cap: Any = None
        self._first: np.ndarray | None = None
        self._n = 0
        self._pacer = _Pacer()

    def _open(self) -> None:
        if not self.path.is_file():
            raise SourceError(f"video file not found: {self.path}")
        cap = cv2.VideoCapture(str(self.path))
        if not cap.isOpened():
            raise SourceError(f"cannot open video file {self.path}")
        fps = cap.get(cv2.CAP_PROP_FPS)
        self.nominal_fps = float(fps) if fps and math.isfinite(fps) and 1.0 <= fps <= 1000.0 else self.default_fps
        self.frame_count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        ok, first = cap.read()  # a truncated or empty file is refused here, at start, with its name
        if not ok or first is None:
            cap.release()
            raise SourceError(f"video file {self.path} has no readable frame (truncated, empty or not a video)")
        self._first = first  # delivered by the first read
        self._cap, self._n = cap, 0
        self._pacer.reset()

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
        self._cap = None

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        if self._first is not None:
            ok, image, self._first = True, self._first, None
        else:
            ok, image = self._cap.read()
        if not ok or image is None:
            if not self.loop or self._n == 0:
                raise EndOfStream(str(self.path))
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self._cap.read()
            if not ok or image is None:
                raise SourceError(f"cannot rewind video file {self.path}")
        t = self._n / self.nominal_fps
        self._n += 1
        if self.realtime:
            self._pacer.wait(t)
        return image, t

    def info(self) -> dict[str, Any]:
        d = super().info()
        d.update(path=str(self.path), nominal_fps=self.nominal_fps, frame_count=self.frame_count, realtime=self.realtime)
        return d


# ---------------------------------------------------------------------------------------------------
# Reconnection
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceStatus:
    """Health of a (reconnecting) source for the dashboard.

    Attributes:
        state: ``"ok"`` (frames arrive), ``"connecting"`` (opening the camera or stream), ``"stalled"``
            (connected, but no frame for a while), ``"reconnecting"`` (waiting to retry), ``"failed"`` (gave up).
        message: human-readable detail (the last error), English.
        attempts: failed attempts since the last good frame.
        retry_in_s: seconds until the next attempt (0 when not waiting).
    """

    state: str
    message: str = ""
    attempts: int = 0
    retry_in_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "message": self.message, "attempts": self.attempts, "retry_in_s": round(self.retry_in_s, 2)}


class _Connect:
    """One attempt to create and open an inner source, in its own thread (opening a network stream can block
    for the backend's whole open timeout; the reader keeps answering meanwhile). The thread owns the source it
    opens until :meth:`ReconnectingSource._read` takes it; an attempt abandoned by ``close()`` closes its own."""

    def __init__(self, factory: Callable[[], FrameSource], on_start: Callable[[str], None]) -> None:
        self.done = threading.Event()
        self.abandoned = threading.Event()
        self.source: FrameSource | None = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self._factory, self._on_start = factory, on_start
        threading.Thread(target=self._run, name="source-connect", daemon=True).start()

    def _run(self) -> None:
        src = None
        try:
            src = self._factory()
            describe = getattr(src, "_describe", None)
            self._on_start(f"connecting to {describe() if callable(describe) else src.kind}")
            src.open()
            self.source = src
        except BaseException as exc:  # noqa: BLE001 - handed to the reader
            self.error = exc
        finally:
            self.done.set()
        if self.abandoned.is_set() and src is not None:
            src.close()


class ReconnectingSource(FrameSource):
    """Wraps a live source and reopens it with exponential backoff when it fails or stalls.

    ``read()`` keeps trying until a frame arrives, :meth:`close`/:meth:`cancel` is called, or
    ``max_attempts`` failures in a row have happened (then the status is ``failed`` and
    :class:`SourceError` is raised). ``read(timeout)`` instead raises :class:`SourceError`
    ("reconnecting …", "connecting …", "no frame for …") when the timeout runs out, so a caller can show the
    status; the next read continues where this one stopped. Delays are
    ``initial_delay * factor**k`` capped at ``max_delay`` seconds. :class:`EndOfStream` is passed through
    (a finished file is not a dropped camera).

    A connected source that sends nothing is **stalled**: shorter than ``stall_s`` seconds the status says
    ``stalled`` and the same connection is kept (a 2 s hiccup recovers by itself); after ``stall_s`` seconds
    it is closed — by the inner source's own capture thread, after any read in flight returns (see
    :class:`_LatestFrameGrabber`) — and a new connection is made. Opening runs in a helper thread (:class:`_Connect`),
    so a camera that accepts a connection and never answers shows ``connecting`` with its address, not a
    silent wait.

    Args:
        factory: ``callable() -> FrameSource`` creating a fresh inner source for each attempt.
        initial_delay, factor, max_delay: backoff schedule in seconds.
        max_attempts: give up after this many consecutive failures (``None`` = never).
        stall_s: seconds without a frame after which a connected source is reconnected.
        sleep, clock: injectable ``time.sleep`` / ``time.monotonic`` (tests).
    """

    kind = "reconnecting"

    def __init__(
        self,
        factory: Callable[[], FrameSource],
        initial_delay: float = 0.5,
        factor: float = 2.0,
        max_delay: float = 10.0,
        max_attempts: int | None = None,
        stall_s: float = 5.0,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        self._factory = factory
        self.initial_delay, self.factor, self.max_delay, self.max_attempts = initial_delay, factor, max_delay, max_attempts
        self.stall_s = stall_s
        self._sleep = sleep
        self._clock = clock or time.monotonic
        self._inner: FrameSource | None = None
        self._connecting: _Connect | None = None
        self._stopping = threading.Event()
        self._status_lock = threading.Lock()
        self._status = SourceStatus("connecting", "not started")
        self._attempts = 0
        self._next_try = 0.0
        self.delays: list[float] = []  # every backoff delay waited, in order (diagnostics and tests)

    @property
    def status(self) -> SourceStatus:
        """Current :class:`SourceStatus` (``retry_in_s`` counts down while waiting)."""
        with self._status_lock:
            s = self._status
        if s.state == "reconnecting" and self._next_try:
            return SourceStatus(s.state, s.message, s.attempts, max(0.0, self._next_try - self._clock()))
        return s

    def _set_status(self, state: str, message: str = "") -> None:
        with self._status_lock:
            self._status = SourceStatus(state, redact_text(message), self._attempts)

    def backoff(self, attempt: int) -> float:
        """Delay in seconds before retry number ``attempt`` (1-based)."""
        return min(self.max_delay, self.initial_delay * self.factor ** (attempt - 1))

    def _open(self) -> None:
        self._stopping.clear()
        self._attempts = 0
        # The inner source is opened lazily by read(), so a missing camera does not fail open().

    def cancel(self) -> None:
        self._stopping.set()
        inner = self._inner
        if inner is not None:
            inner.cancel()

    def _close(self) -> None:
        self._stopping.set()
        if self._connecting is not None:
            self._connecting.abandoned.set()
            if self._connecting.done.is_set() and self._connecting.source is not None:
                self._connecting.source.close()
            self._connecting = None
        if self._inner is not None:
            self._inner.close()
        self._inner = None

    def _wait(self, delay: float) -> None:
        if self._sleep is not None:
            self._sleep(delay)
        else:
            self._stopping.wait(delay)

    def _connect(self, deadline: float | None) -> FrameSource:
        """The opened inner source; raises the open's error, or :class:`SourceTimeout` at ``deadline`` while
        the connection is still being made (the attempt goes on in its thread)."""
        c = self._connecting
        if c is None:
            prev = self._status.message if self._status.state in ("reconnecting", "stalled") else ""
            c = self._connecting = _Connect(self._factory, lambda msg: self._set_status(
                "connecting", f"{msg} (attempt {self._attempts + 1}{'; last error: ' + prev if prev else ''})"))
        left = None if deadline is None else max(0.0, deadline - self._clock())
        if not c.done.wait(left):
            raise SourceTimeout(f"{self._status.message or 'connecting'} ({time.monotonic() - c.started:.0f} s)")
        self._connecting = None
        if c.error is not None:
            raise c.error
        assert c.source is not None
        return c.source

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        # With a timeout, a read that falls into a backoff wait, a connection being made or a short stall gives
        # up at the deadline with a SourceError so the caller can show the status; the next read resumes the
        # same schedule. Without one, read() waits until a frame arrives (or close/cancel).
        deadline = None if timeout is None else self._clock() + timeout
        while not self._stopping.is_set():
            wait = self._next_try - self._clock() if self._next_try else 0.0
            if wait > 0:
                if deadline is not None and self._clock() + wait > deadline:
                    self._wait(max(0.0, deadline - self._clock()))
                    left = max(0.0, self._next_try - self._clock())
                    raise SourceError(f"reconnecting ({self._status.message}); next attempt in {left:.1f} s")
                self._wait(wait)
                if self._stopping.is_set():
                    break
            self._next_try = 0.0
            try:
                if self._inner is None:
                    self._inner = self._connect(deadline)
                left = None if deadline is None else max(0.05, deadline - self._clock())
                frame = self._inner.read(left if timeout is not None else None)
            except EndOfStream:
                raise
            except SourceTimeout as exc:
                if self._inner is None:  # still connecting: not a failure yet
                    raise SourceError(str(exc)) from None
                quiet = float(getattr(self._inner, "seconds_since_frame", 0.0) or 0.0)
                if quiet < self.stall_s:
                    self._set_status("stalled", f"no frame for {quiet:.1f} s")
                    raise SourceError(f"stalled: no frame for {quiet:.1f} s") from None
                if not self._failed(SourceError(f"stalled: no frame for {quiet:.1f} s")):
                    continue
                raise AssertionError("unreachable")  # pragma: no cover
            except Exception as exc:  # noqa: BLE001 - any failure of the inner source is retried
                self._failed(exc)
                continue
            if self._attempts or self._status.state != "ok":
                self._attempts = 0
                self._set_status("ok", "")
            return frame.image, frame.t
        raise SourceError("source closed")

    def _failed(self, exc: BaseException) -> bool:
        """Close the inner source (its capture thread releases the device after any read in flight), count
        the attempt, schedule the retry; raises :class:`SourceError` when ``max_attempts`` is reached."""
        if self._inner is not None:
            self._inner.close()
            self._inner = None
        self._attempts += 1
        msg = redact_text(str(exc) if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}")
        if self.max_attempts is not None and self._attempts >= self.max_attempts:
            self._set_status("failed", msg)
            raise SourceError(f"gave up after {self._attempts} attempts: {msg}") from exc
        delay = self.backoff(self._attempts)
        self._next_try = self._clock() + delay
        self._set_status("reconnecting", msg)
        log.warning("source failed (%s); retry %d in %.1f s", msg, self._attempts, delay)
        self.delays.append(delay)
        return False

    @property
    def inner(self) -> FrameSource | None:
        """The currently open inner source (None while reconnecting)."""
        return self._inner

    def info(self) -> dict[str, Any]:
        d = self._inner.info() if self._inner is not None else {"kind": "none"}
        d = dict(d)
        d["fps"] = round(self.fps, 2)
        d["status"] = self.status.to_dict()
        return d


# ---------------------------------------------------------------------------------------------------
# Parsing a source specification
# ---------------------------------------------------------------------------------------------------
def open_source(
    spec: str,
    *,
    realtime: bool = True,
    reconnect: bool = True,
    width: int | None = None,
    height: int | None = None,
    fps: float | None = None,
    **kwargs: Any,
) -> FrameSource:
    """Create (not yet open) the source named by a command-line string.

    ``spec`` forms: ``picamera`` · a device index (``0``) or a ``/dev/video*`` path · ``rtsp://…``,
    ``http(s)://…`` · a video file · a folder of photos (or one photo) · ``virtual`` (``virtual:N`` = N dice).

    Args:
        spec: the string above.
        realtime: offline sources (files, folders, virtual) replay in real time; False = as fast as possible.
        reconnect: wrap live cameras/streams in :class:`ReconnectingSource`.
        width, height: capture size in pixels for cameras and the virtual table (``None`` = 1280×720);
            ignored by files and folders.
        fps: requested camera frame rate; the virtual table's and a folder replay's frame rate; ignored by
            video files (they have their own).
        **kwargs: further keyword arguments of the chosen source's constructor.

    Raises:
        SourceError: the string names nothing usable (missing path, unknown form, bad ``virtual:N``).
    """
    s = spec.strip()
    low = s.lower()
    size = (int(width or 1280), int(height or 720))

    def live(factory: Callable[[], FrameSource]) -> FrameSource:
        return ReconnectingSource(factory) if reconnect else factory()

    def camera(target: int | str) -> FrameSource:
        kw = dict(width=size[0], height=size[1], fps=fps)
        kw.update(kwargs)
        return live(lambda: OpenCVSource(target, **kw))

    if low in {"picamera", "picamera2", "pi"}:
        kw: dict[str, Any] = dict(size=size, fps=fps or 30.0)
        kw.update(kwargs)
        return live(lambda: PicameraSource(**kw))
    if re.fullmatch(r"\d+", s):
        return camera(int(s))
    if re.fullmatch(r"/dev/video\d+", s):
        return camera(s)
    if re.match(r"^(rtsp|rtsps|rtmp|http|https|udp|tcp)://", low):
        return camera(s)
    if low == "virtual" or low.startswith("virtual:"):
        from kosti.sim.virtual import VirtualTableSource

        if ":" in low:
            try:
                kwargs.setdefault("n_dice", int(low.split(":", 1)[1]))
            except ValueError as exc:
                raise SourceError(f"bad virtual source {spec!r}: use virtual or virtual:N") from exc
        if fps:
            kwargs.setdefault("fps", fps)
        return VirtualTableSource(realtime=realtime, size=size, **kwargs)
    path = Path(s).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix.lower() in IMAGE_EXTENSIONS):
        from kosti.sim.replay import FolderSource

        if fps:
            kwargs.setdefault("fps", fps)
        return FolderSource(path if path.is_dir() else [path], realtime=realtime, **kwargs)
    if path.is_file():
        return VideoFileSource(path, realtime=realtime, **kwargs)
    raise SourceError(
        f"unknown source {spec!r}: expected picamera, a device index such as 0, an rtsp:// or http:// URL, "
        "a video file, a folder of photos, or virtual"
    )
