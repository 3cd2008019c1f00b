"""A video file replayed as a frame source, in real time or as fast as possible."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.vision.frame_source import EndOfStream, FrameSource, Pacer, SourceError


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
