"""A video file, or a folder of its frames, replayed as a frame source, in real time or as fast as possible."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.vision.frame_source import EndOfStream, FrameSource, Pacer, SourceError
from kosti.vision.image_files import ImageFileError, is_image_name, natural_key, read_image_file

log = logging.getLogger(__name__)


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
        self._pacer = Pacer()

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


class FrameFolderSource(FrameSource):
    """An ordered folder of frames — a video saved as images (``ffmpeg -i clip.mp4 f%05d.png``) — replayed as the video.

    The folder's images (:func:`~kosti.vision.image_files.is_image_name`), in natural name order (``f9`` before
    ``f10``), are consecutive frames ``fps`` apart: ``t`` is media time, file index / ``fps``, as for a video file.
    Not :class:`kosti.sim.replay.FolderSource`, which holds each of a folder of *photos* still for a while and draws
    synthetic motion between them (``kosti watch --photos``).

    Args:
        path: the folder.
        fps: frame rate the frames were taken at (a folder does not say; 30 is a phone's and a webcam's).
        realtime: pace frames to ``fps`` in wall-clock time; False = as fast as possible.

    Raises:
        SourceError: (on open) the folder is missing or holds no readable image. A frame that cannot be read is
        skipped with a warning in the log (the frames around it keep their times); names starting with "." are not
        frames.
    """

    kind = "frames"

    def __init__(self, path: str | os.PathLike[str], fps: float = 30.0, realtime: bool = False) -> None:
        super().__init__()
        if not (math.isfinite(fps) and fps > 0):
            raise ValueError(f"fps must be > 0, got {fps}")
        self.path, self.frame_rate, self.realtime = Path(path), float(fps), realtime
        self.files: list[Path] = []
        self.skipped: list[str] = []
        self._n = 0
        self._first: tuple[np.ndarray, float] | None = None  # read by open, delivered by the first read
        self._pacer = Pacer()

    def _load(self, path: Path) -> np.ndarray:
        try:  # bounded: regular files, size and pixel limits checked before decoding
            return read_image_file(path)
        except ImageFileError as exc:
            raise SourceError(f"cannot read frame {exc}") from None

    def _open(self) -> None:
        if not self.path.is_dir():
            raise SourceError(f"folder not found: {self.path}")
        self.files = sorted((p for p in self.path.iterdir()  # (not macOS's ._f0.png resource forks)
                             if is_image_name(p) and not p.name.startswith(".") and p.is_file()), key=natural_key)
        if not self.files:
            raise SourceError(f"no frames (images) in folder {self.path}")
        self._n, self.skipped = 0, []
        try:  # the first readable frame now, so that a folder of unreadable files is refused on open
            self._first = self._next()
        except EndOfStream:
            raise SourceError(f"no readable frame in folder {self.path}") from None
        self._pacer.reset()

    def _close(self) -> None:
        self._first = None

    def _next(self) -> tuple[np.ndarray, float]:
        """The next readable frame and its media time; an unreadable one is skipped (logged, in :attr:`skipped`)."""
        while self._n < len(self.files):
            i, self._n = self._n, self._n + 1
            try:
                return self._load(self.files[i]), i / self.frame_rate
            except SourceError as exc:
                self.skipped.append(self.files[i].name)
                log.warning("%s: skipped", exc)
        raise EndOfStream(str(self.path))

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        if self._first is not None:
            (image, t), self._first = self._first, None
        else:
            image, t = self._next()
        if self.realtime:
            self._pacer.wait(t)
        return image, t

    def info(self) -> dict[str, Any]:
        d = super().info()
        d.update(path=str(self.path), nominal_fps=self.frame_rate, frame_count=len(self.files), realtime=self.realtime,
                 skipped=list(self.skipped))
        return d
