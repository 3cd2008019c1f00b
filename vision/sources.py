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
``0``, an ``rtsp://``/``http(s)://`` URL, a video file, a folder of frames, or ``virtual`` (the grammar:
:func:`kosti.vision.source_spec.parse_source_spec`).

This module is the import point of the sources; each job lives in its own module:
:mod:`~kosti.vision.frame_source` (the interface, frames, errors), :mod:`~kosti.vision.camera_sources`
(OpenCV cameras and streams), :mod:`~kosti.vision.picamera_source` (the Pi camera),
:mod:`~kosti.vision.video_source` (video files and folders of their frames), :mod:`~kosti.vision.reconnect` (reconnect and stall
supervision), :mod:`~kosti.vision.source_spec` (the spec grammar); folders of photos replayed with synthetic
motion and the virtual table are simulation (:mod:`kosti.sim.replay`, :mod:`kosti.sim.virtual`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# The one secret-redaction rule for source URLs lives in kosti.common.redact (light: the CLI installs it for every
# command without importing OpenCV); it is re-exported here, where sources are opened.
from kosti.common.redact import RedactingFilter, install_log_redaction, redact_text, redact_url
from kosti.vision.camera_sources import STREAM_OPEN_TIMEOUT_S, STREAM_READ_TIMEOUT_S, OpenCVSource, open_capture
from kosti.vision.frame_source import (
    IMAGE_EXTENSIONS,
    ROTATIONS,
    EndOfStream,
    Frame,
    FrameSource,
    SourceError,
    SourceTimeout,
    check_rotation,
    loose_rotation,
    rotate_frame,
    turn_boxes,
    turn_points,
)
from kosti.vision.picamera_source import PicameraSource
from kosti.vision.reconnect import ReconnectingSource, SourceStatus
from kosti.vision.source_spec import SourceSpec, parse_source_spec
from kosti.vision.video_source import VideoFileSource

__all__ = [
    "IMAGE_EXTENSIONS", "ROTATIONS", "STREAM_OPEN_TIMEOUT_S", "STREAM_READ_TIMEOUT_S", "EndOfStream", "Frame",
    "FrameSource", "OpenCVSource", "PicameraSource", "ReconnectingSource", "RedactingFilter", "SourceError",
    "SourceSpec", "SourceStatus", "SourceTimeout", "VideoFileSource", "install_log_redaction", "open_capture",
    "check_rotation", "loose_rotation", "open_source", "parse_source_spec", "redact_text", "redact_url", "rotate_frame",
    "turn_boxes", "turn_points",
]


def open_source(
    spec: str,
    *,
    realtime: bool = True,
    reconnect: bool = True,
    width: int | None = None,
    height: int | None = None,
    fps: float | None = None,
    photos: bool = False,
    rotate: int = 0,
    **kwargs: Any,
) -> FrameSource:
    """Create (not yet open) the source named by a command-line string.

    ``spec`` forms (:func:`~kosti.vision.source_spec.parse_source_spec`): ``picamera`` · a device index
    (``0``) or a ``/dev/video*`` path · ``rtsp://…``, ``http(s)://…`` · a video file · an ordered folder of frames
    (a video saved as images, :class:`~kosti.vision.video_source.FrameFolderSource`; cli.md) or, with ``photos``, of
    photos of separate throws (:class:`kosti.sim.replay.FolderSource`), or one photo · ``virtual`` (``virtual:N`` =
    N dice).

    Args:
        spec: the string above.
        realtime: offline sources (files, folders, virtual) replay in real time; False = as fast as possible.
        reconnect: wrap live cameras/streams in :class:`ReconnectingSource`.
        width, height: capture size in pixels for cameras and the virtual table (``None`` = 1280×720);
            ignored by files and folders.
        fps: requested camera frame rate; the virtual table's and a folder's frame rate (a folder of frames: 30
            unless given); ignored by video files (they have their own).
        photos: a folder holds photos of separate throws (each held still, synthetic hand motion between them:
            ``kosti capture --source FOLDER``), not the frames of a video.
        rotate: turn every frame clockwise by this many degrees (0, 90, 180 or 270; ``[source] rotate``,
            :meth:`FrameSource.set_rotation`): a camera mounted sideways or upside down.
        **kwargs: further keyword arguments of the chosen source's constructor.

    Raises:
        SourceError: the string names nothing usable (missing path, unknown form, bad ``virtual:N``), or
            ``rotate`` is not 0, 90, 180 or 270, or turns the virtual table.
    """
    check_rotation(rotate)
    parsed = parse_source_spec(spec)
    if rotate and parsed.kind == "virtual":  # its ground truth knows where the dice lie in its own frames
        raise SourceError("the virtual table is never turned: rotate is for a camera, a video or photos")
    return _open_source(parsed, realtime=realtime, reconnect=reconnect, width=width,
                        height=height, fps=fps, photos=photos, **kwargs).set_rotation(rotate)


def _open_source(parsed: SourceSpec, *, realtime: bool, reconnect: bool, width: int | None, height: int | None,
                 fps: float | None, photos: bool, **kwargs: Any) -> FrameSource:
    """:func:`open_source` for a parsed spec, frames as the source gives them."""
    size = (int(width or 1280), int(height or 720))

    def live(factory: Callable[[], FrameSource]) -> FrameSource:
        return ReconnectingSource(factory) if reconnect else factory()

    if parsed.kind == "picamera":
        kw: dict[str, Any] = dict(size=size, fps=fps or 30.0)
        kw.update(kwargs)
        return live(lambda: PicameraSource(**kw))
    if parsed.kind in ("device", "url"):
        target = parsed.target
        assert isinstance(target, (int, str))
        kw = dict(width=size[0], height=size[1], fps=fps)
        kw.update(kwargs)
        return live(lambda: OpenCVSource(target, **kw))
    if parsed.kind == "virtual":
        from kosti.sim.virtual import VirtualTableSource  # simulation: imported only when asked for

        if parsed.n_dice is not None:
            kwargs.setdefault("n_dice", parsed.n_dice)
        if fps:
            kwargs.setdefault("fps", fps)
        return VirtualTableSource(realtime=realtime, size=size, **kwargs)
    if parsed.kind == "folder" and not photos:
        from kosti.vision.video_source import FrameFolderSource

        assert isinstance(parsed.target, Path)
        return FrameFolderSource(parsed.target, fps=fps or 30.0, realtime=realtime, **kwargs)
    if parsed.kind in ("folder", "photo"):
        from kosti.sim.replay import FolderSource  # a photo folder replayed with synthetic hand motion

        if fps:
            kwargs.setdefault("fps", fps)
        assert isinstance(parsed.target, Path)
        return FolderSource(parsed.target if parsed.kind == "folder" else [parsed.target], realtime=realtime, **kwargs)
    assert isinstance(parsed.target, Path)  # kind "video": an existing file
    return VideoFileSource(parsed.target, realtime=realtime, **kwargs)
