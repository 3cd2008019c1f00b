"""A live camera's causes that cannot heal, found before a command starts (issue 42, item 4).

``kosti run`` and ``kosti capture`` read a live camera through :class:`kosti.vision.reconnect.ReconnectingSource`,
which retries a camera that goes away with backoff — right for an unplugged cable, pointless for a camera that
can never come: the ``picamera2`` module is not installed (a laptop, a venv made without
``--system-site-packages``), libcamera lists no camera, or a device index / ``/dev/videoN`` that OpenCV cannot
open. :func:`probe_camera` finds those at start and raises :class:`SourceError` with one line, so the command
exits 2 instead of serving a page that says "camera down" forever. Network streams are left alone (a camera on
the network may come up later).

Of those, a camera that is only not plugged in *yet* (libcamera lists none, a device that cannot be opened) raises
:class:`CameraAbsent`: a table's service (``kosti run --wait-for-camera``, deploy/kosti.service) serves the page
saying "no camera is connected: plug it in" and picks the camera up when it appears (issue 44: a Pi installed
before its camera was plugged in stayed down for good); an interactive ``kosti run`` still exits 2 at once. A
missing ``picamera2`` module cannot come by plugging anything in: always :class:`SourceError`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Protocol

from kosti.vision.frame_source import SourceError
from kosti.vision.source_spec import parse_source_spec


class CameraAbsent(SourceError):
    """A local camera that is not connected now but may be plugged in while kosti runs (libcamera lists no camera,
    a device that cannot be opened); the message is the same one line as a plain :class:`SourceError`."""


class Capture(Protocol):
    """What the probe uses of a ``cv2.VideoCapture``."""

    def isOpened(self) -> bool: ...  # noqa: N802 - OpenCV's name
    def release(self) -> None: ...


def quiet_native_camera_logs() -> None:
    """Keep OpenCV's and FFmpeg's own warnings (``[ WARN:0@19.4] global cap.cpp …``, ``[tcp @ 0x…] Connection …
    refused``) out of a live table's log: they would repeat at every reconnect attempt, while kosti says the
    cause once and the page says it in words. Sets ``OPENCV_FFMPEG_LOGLEVEL=-8`` (FFmpeg quiet) unless the user set
    it (set it to 32 to see FFmpeg's lines again) and OpenCV's log level to errors. Call before the camera opens."""
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # read when OpenCV's FFmpeg backend first opens a stream
    import cv2

    log = getattr(cv2.utils, "logging", None)  # OpenCV's own log (not in every build)
    if log is not None:
        log.setLogLevel(log.LOG_LEVEL_ERROR)


def probe_picamera(spec: str) -> None:
    """The Raspberry Pi camera (``picamera``, kosti's default source): :class:`SourceError` when the ``picamera2``
    module is not installed, or when it is and libcamera lists no camera (``Picamera2.global_camera_info()``,
    the Picamera2 manual; :class:`CameraAbsent`, which plugging a camera in mends). When libcamera cannot tell,
    nothing is raised: the running source says why."""
    if "picamera2" not in sys.modules and importlib.util.find_spec("picamera2") is None:
        raise SourceError(f"--source {spec}: the Raspberry Pi camera needs the picamera2 module, which is not "
                          "installed (on a Pi: sudo apt install python3-picamera2, venv with --system-site-packages); "
                          "on another machine use --source 0 (a USB webcam), a video file, a folder of frames or virtual")
    try:
        from picamera2 import Picamera2

        cameras = Picamera2.global_camera_info()
    except Exception:  # noqa: BLE001 - libcamera cannot tell: the running source says why, with retries
        return
    if not cameras:
        raise CameraAbsent(f"--source {spec}: no Raspberry Pi camera is connected (libcamera lists none): check the "
                          "ribbon cable and `rpicam-hello --list-cameras`, or use --source 0 for a USB webcam")


def probe_camera(spec: str, factory: Callable[[int | str], Capture] | None = None) -> None:
    """Refuse a local camera that cannot be there (see the module docstring) with :class:`SourceError`, or with
    :class:`CameraAbsent` when it is only not connected now.

    A ``picamera`` spec goes to :func:`probe_picamera`; a device (an index such as ``0`` or ``/dev/videoN``) is
    opened once with OpenCV (``factory``: ``cv2.VideoCapture`` unless a test gives another) and released;
    OpenCV's own warnings are silenced during the probe and kept at error level afterwards (the dashboard shows
    the camera's state). Any other source, and a spec :func:`parse_source_spec` refuses, is left alone
    (``open_source`` says why, in the same words).

    Args:
        spec: the ``--source`` / ``[source] spec`` string.
        factory: ``factory(target) -> capture`` with ``isOpened()`` and ``release()``.
    """
    s = str(spec).strip()
    try:
        parsed = parse_source_spec(s)
    except SourceError:
        return
    if parsed.kind == "picamera":
        probe_picamera(s)
        return
    target = parsed.target
    if parsed.kind != "device" or not isinstance(target, int | str):  # a device: an index or a /dev path
        return
    import cv2

    logging_: ModuleType | None
    try:
        logging_ = cv2.utils.logging  # OpenCV's own log (not in every build)
    except AttributeError:
        logging_ = None
    if logging_ is not None:  # the probe's failure is said in our line, not in OpenCV's
        logging_.setLogLevel(logging_.LOG_LEVEL_SILENT)
    try:
        cap = factory(target) if factory is not None else cv2.VideoCapture(target)
        try:
            ok = cap.isOpened()
        finally:
            cap.release()
    finally:
        if logging_ is not None:
            logging_.setLogLevel(logging_.LOG_LEVEL_ERROR)
    if not ok:
        raise CameraAbsent(f"camera {s} cannot be opened: no such camera, or it is busy (list them: ls /dev/video*)")
