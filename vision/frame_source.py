"""The frame-source interface: :class:`FrameSource`, :class:`Frame` and the source errors.

Every source is a context manager whose :meth:`FrameSource.read` returns the next :class:`Frame`
(``image`` ``(H, W, 3)`` uint8 BGR, ``t`` seconds, ``index``). Errors: :class:`SourceError` (a
recoverable failure: camera gone, stream dropped, unreadable file), :class:`SourceTimeout` (no new frame
yet) and :class:`EndOfStream` (a finite source has no more frames; not an error). The concrete sources
live in :mod:`kosti.vision.camera_sources`, :mod:`kosti.vision.picamera_source`,
:mod:`kosti.vision.video_source`, :mod:`kosti.vision.reconnect` and :mod:`kosti.sim`;
:func:`kosti.vision.sources.open_source` picks one from a spec string.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from kosti.vision.image_files import IMAGE_SUFFIXES

log = logging.getLogger("kosti.vision.sources")

#: File name endings read as photos by :class:`kosti.sim.replay.FolderSource` (those ``cv2.imread`` decodes).
IMAGE_EXTENSIONS = IMAGE_SUFFIXES

#: The turns a source may give its frames (``[source] rotate``, degrees clockwise) and OpenCV's code for each.
ROTATIONS: dict[int, int | None] = {0: None, 90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180,
                                    270: cv2.ROTATE_90_COUNTERCLOCKWISE}


class SourceError(RuntimeError):
    """A recoverable failure of a frame source (camera missing or gone, stream dropped, bad file).

    ``exit_code`` 2 makes the CLI report it as bad input (one line on stderr).
    """

    exit_code = 2


def check_rotation(degrees: object) -> int:
    """``degrees`` as one of :data:`ROTATIONS` (0, 90, 180, 270; clockwise), or :class:`SourceError` naming it."""
    if isinstance(degrees, bool) or not isinstance(degrees, int) or degrees not in ROTATIONS:
        raise SourceError(f"rotate must be 0, 90, 180 or 270 (degrees clockwise), got {degrees!r}")
    return degrees


def rotate_frame(image: np.ndarray, degrees: int) -> np.ndarray:
    """``image`` ``(H, W, C)`` turned clockwise by ``degrees`` (0, 90, 180 or 270): ``(W, H, C)`` for a quarter
    turn, the same array for 0. Raises :class:`SourceError` for another angle (:func:`check_rotation`)."""
    code = ROTATIONS[check_rotation(degrees)]
    return image if code is None else cv2.rotate(image, code)


def loose_rotation(value: object) -> object:
    """A turn as a file, an environment variable or JSON may write it — text ``"90"``, the float ``90.0`` — as the
    int; anything else unchanged, for a validator to accept or refuse (a pydantic ``mode="before"`` validator of
    ``[source] rotate`` and the dashboard's ``rotate`` setting)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def turn_points(points: np.ndarray, width: float, height: float, degrees: int) -> np.ndarray:
    """Points ``(N, 2)`` ``[x, y]`` of a ``width × height`` frame, as they lie once the frame is turned clockwise by
    ``degrees`` (0, 90, 180 or 270; :func:`rotate_frame`): ``(height - y, x)`` for 90, ``(width - x, height - y)``
    for 180, ``(y, width - x)`` for 270 — continuous coordinates (pixel edges; ``width = height = 1`` for normalised
    points). Returns a new ``(N, 2)`` float64 array. Raises :class:`SourceError` for another angle."""
    xy = np.asarray(points, np.float64).reshape(-1, 2)
    x, y = xy[:, 0], xy[:, 1]
    turned = {0: (x, y), 90: (height - y, x), 180: (width - x, height - y), 270: (y, width - x)}
    return np.stack(turned[check_rotation(degrees)], 1)


def turn_boxes(xyxy: np.ndarray, width: float, height: float, degrees: int) -> np.ndarray:
    """Boxes ``(N, 4)`` ``[x1, y1, x2, y2]`` of a ``width × height`` frame once it is turned clockwise by ``degrees``
    (:func:`turn_points` of two corners, reordered): a new ``(N, 4)`` float32 array. Raises :class:`SourceError` for
    another angle."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    a, b = turn_points(boxes[:, :2], width, height, degrees), turn_points(boxes[:, 2:], width, height, degrees)
    return np.concatenate([np.minimum(a, b), np.maximum(a, b)], 1).astype(np.float32)


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
    #: Degrees clockwise every delivered frame is turned by (:data:`ROTATIONS`; ``[source] rotate``): a camera
    #: mounted sideways or upside down, a phone on its side. Set it with :meth:`set_rotation`.
    rotation = 0

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

    def cancel(self) -> None:  # noqa: B027 - an optional hook: sources whose reads never block keep the no-op
        """Wake a :meth:`read` blocked in another thread (it raises :class:`SourceError`); thread-safe.

        Used by :class:`~kosti.vision.pipeline.LivePipeline` to stop promptly; call :meth:`close` after the
        reading thread has finished. Sources whose reads never block for long do nothing.
        """


    def set_rotation(self, degrees: int) -> FrameSource:
        """Turn every frame :meth:`read` delivers from now on clockwise by ``degrees`` (0, 90, 180 or 270), before
        anything reads it: settle, the reader, the zones (drawn on the turned frame) and the live view all see the
        turned frame. Returns ``self``. Raises :class:`SourceError` for another angle."""
        self.rotation = check_rotation(degrees)
        return self

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
        if self.rotation:
            image = rotate_frame(image, self.rotation)
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
        doc = {"kind": self.kind, "open": self._is_open, "fps": round(self.fps, 2), "frames": self._index}
        if self.rotation:
            doc["rotate"] = self.rotation
        return doc

    @abstractmethod
    def _open(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    @abstractmethod
    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]: ...


class Pacer:
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
