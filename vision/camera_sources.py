"""Live cameras through OpenCV (USB webcams, ``/dev/video*``, RTSP/HTTP streams).

A background thread (:class:`LatestFrameGrabber`) captures in a loop and keeps only the *newest* frame,
so a slow consumer skips frames instead of lagging behind a buffer; :class:`GrabbedSource` is the base of
every live source built on it (also :class:`kosti.vision.picamera_source.PicameraSource`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.common.redact import redact_url
from kosti.vision.frame_source import FrameSource, SourceError, SourceTimeout

log = logging.getLogger("kosti.vision.sources")


class LatestFrameGrabber:
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


class GrabbedSource(FrameSource):
    """A live source whose frames come from a :class:`LatestFrameGrabber` thread (camera, stream).

    Subclasses open their device in ``_open`` and call :meth:`_start_grabber` with a function that
    blocks for the next frame; :meth:`read` then always returns the newest frame, never a stale one.
    """

    read_timeout: float = 5.0

    def __init__(self) -> None:
        super().__init__()
        self._grabber: LatestFrameGrabber | None = None
        self._last_seq = 0

    def _start_grabber(self, grab: Callable[[], np.ndarray | None], name: str,
                       release: Callable[[], None] | None = None) -> None:
        """Start the grabber thread; from now on it owns the device and calls ``release`` when it ends."""
        self._last_seq = 0
        self._grabber = LatestFrameGrabber(grab, name, release=release)
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


def _absent_device(target: int | str) -> str:
    """``": no camera is connected (no /dev/videoN)"`` when ``target`` is a V4L2 device (an index ``N`` or a
    ``/dev/video*`` path) whose node does not exist on Linux (the USB webcam is unplugged: the page then says
    "plug it in", dashboard/source_words.py), else ``""`` (the device is there but busy or not a camera)."""
    if not sys.platform.startswith("linux") or not _is_device(target):
        return ""
    node = Path(f"/dev/video{target}" if isinstance(target, int) else str(target))
    return "" if node.exists() else f": no camera is connected (no {node})"


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


class OpenCVSource(GrabbedSource):
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
            raise SourceError(f"cannot open {self._describe()}{_absent_device(self.target)}")
        if isinstance(self.target, int) or str(self.target).startswith("/dev/"):
            # USB webcams deliver 720p at 30 fps only as MJPG (raw YUYV is limited by USB 2 bandwidth).
            cap.set(cv2.CAP_PROP_FOURCC, float(cv2.VideoWriter.fourcc(*"MJPG")))
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
