"""Replay of a photo folder as a camera stream, with synthetic hand motion between the photos.

:class:`FolderSource` holds each photo still for a while and plays :func:`transition_frame` (the old scene
sliding out, the new one sliding in, a hand-shaped blob sweeping across) between them, so a folder of
throw photos looks to the settle detector like a sequence of real throws. Used by ``kosti run`` /
``kosti capture`` on a folder and by tests; frames are BGR ``uint8``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.vision.frame_source import IMAGE_EXTENSIONS, EndOfStream, FrameSource, Pacer, SourceError
from kosti.vision.image_files import natural_key


def _fit_to_canvas(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale ``image`` to fit ``width×height`` keeping its aspect ratio, padding by edge replication."""
    h, w = image.shape[:2]
    if (w, h) == (width, height):
        return image
    s = min(width / w, height / h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    top, left = (height - nh) // 2, (width - nw) // 2
    return cv2.copyMakeBorder(resized, top, height - nh - top, left, width - nw - left, cv2.BORDER_REPLICATE)


def _shift(image: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
    return cv2.warpAffine(image, m, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REPLICATE)


def _motion_blur(image: np.ndarray, length: int) -> np.ndarray:
    return cv2.blur(image, (max(1, length), 1)) if length > 1 else image


def transition_frame(prev: np.ndarray, nxt: np.ndarray, p: float) -> np.ndarray:
    """One frame of the synthetic "hand picks up and throws" motion between two still photos.

    The old scene slides out and the new one slides in, both motion-blurred, cross-faded, while a dark
    hand-sized blob sweeps across the frame — the kind of large change a settle detector sees when a
    player gathers and throws the dice.

    Args:
        prev, nxt: ``(H, W, 3)`` uint8 BGR photos of the same size.
        p: progress in ``(0, 1)``.

    Returns:
        ``(H, W, 3)`` uint8 BGR frame.
    """
    h, w = prev.shape[:2]
    amp = 0.12 * w
    blur = int(4 + 0.06 * w * math.sin(math.pi * p))
    a = _motion_blur(_shift(prev, amp * p, 0.02 * h * math.sin(3 * p)), blur)
    b = _motion_blur(_shift(nxt, -amp * (1 - p), -0.02 * h * math.sin(3 * p)), blur)
    out = cv2.addWeighted(a, 1.0 - p, b, p, 0.0)
    # The "hand": a skin-toned ellipse with a forearm crossing the frame from the bottom right.
    cx, cy = int(w * (1.1 - 1.2 * p)), int(h * (0.75 - 0.3 * math.sin(math.pi * p)))
    axes = (int(0.16 * min(w, h)), int(0.11 * min(w, h)))
    cv2.ellipse(out, (cx, cy), axes, -25, 0, 360, (120, 150, 200), -1, cv2.LINE_AA)
    cv2.line(out, (cx, cy), (cx + int(0.5 * w), cy + int(0.4 * h)), (110, 140, 190), int(0.14 * min(w, h)), cv2.LINE_AA)
    return out


class FolderSource(FrameSource):
    """An ordered folder of still photos replayed as a camera would see a sequence of throws.

    Each photo is held still for ``hold_s`` seconds (``hold_s * fps`` identical frames, optionally with
    sensor-like noise); between photos, ``transition_s`` seconds of synthetic motion
    (:func:`transition_frame`) stand for the hand gathering and throwing the dice. Photos are ordered by
    natural sort of their file names. All frames take the size of the first photo (others are scaled to
    fit and padded). ``t`` is media time (frame index / ``fps``).

    Args:
        path: folder of photos (``IMAGE_EXTENSIONS``), or an explicit list of photo paths in order.
        hold_s: seconds each photo stays still (must exceed the settle time to count as a throw).
        transition_s: seconds of motion between photos (0 = a hard cut, still one frame of motion).
        fps: frames per second of simulated time.
        realtime: pace frames to ``fps`` in wall-clock time; False = as fast as possible.
        loop: start again with the first photo after the last.
        noise: standard deviation of Gaussian pixel noise added to still frames (gray levels; 0 = none).
        seed: noise seed.

    Raises:
        SourceError: (on open) the folder is missing, holds no photos, or a file is not a readable image.
    """

    kind = "folder"

    def __init__(
        self,
        path: str | os.PathLike[str] | list[str | os.PathLike[str]],
        hold_s: float = 1.5,
        transition_s: float = 0.6,
        fps: float = 15.0,
        realtime: bool = False,
        loop: bool = False,
        noise: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if fps <= 0 or hold_s <= 0 or transition_s < 0:
            raise ValueError("fps and hold_s must be > 0 and transition_s >= 0")
        self.path = path
        self.hold_s, self.transition_s, self.frame_rate = hold_s, transition_s, fps
        self.realtime, self.loop, self.noise = realtime, loop, noise
        self.files: list[Path] = []
        self._rng = np.random.default_rng(seed)
        self._pacer = Pacer()
        self._canvas: tuple[int, int] | None = None
        self._cache: dict[int, np.ndarray] = {}
        self._n = 0
        self._schedule: list[tuple[int, int, int]] = []  # (first frame, photo index, frames of transition)

    def _list_files(self) -> list[Path]:
        if isinstance(self.path, (list, tuple)):
            files = [Path(p) for p in self.path]
        else:
            folder = Path(self.path)
            if not folder.is_dir():
                raise SourceError(f"folder not found: {folder}")
            files = sorted((p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS), key=natural_key)
        if not files:
            raise SourceError(f"no photos ({', '.join(IMAGE_EXTENSIONS)}) in {self.path}")
        bad = [str(p) for p in files if not p.is_file() or not cv2.haveImageReader(str(p))]
        if bad:
            raise SourceError(f"not a readable image: {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
        return files

    @property
    def hold_frames(self) -> int:
        """Still frames per photo."""
        return max(1, round(self.hold_s * self.frame_rate))

    @property
    def transition_frames(self) -> int:
        """Motion frames between two photos (at least one: a cut)."""
        return max(1, round(self.transition_s * self.frame_rate))

    def photo_start_frames(self) -> list[int]:
        """Index of the first still frame of each photo in one pass (for tests and ground truth)."""
        return [s + tr for s, _, tr in self._schedule]

    def _open(self) -> None:
        self.files = self._list_files()
        self._cache.clear()
        first = self._load(0)
        self._canvas = (first.shape[1], first.shape[0])
        self._schedule = []
        start = 0
        for i in range(len(self.files)):
            tr = 0 if i == 0 else self.transition_frames
            self._schedule.append((start, i, tr))
            start += tr + self.hold_frames
        self._cycle = start
        self._n = 0
        self._pacer.reset()

    def _close(self) -> None:
        self._cache.clear()

    def _load(self, i: int) -> np.ndarray:
        if i not in self._cache:
            from kosti.vision.image_files import ImageFileError, read_image_file

            try:  # bounded: regular files, 128 MB, 50 MP checked from the header before decoding
                image = read_image_file(self.files[i])
            except ImageFileError as exc:
                raise SourceError(f"cannot read image {exc}") from None
            if self._canvas is not None:
                image = _fit_to_canvas(image, *self._canvas)
            for k in [k for k in self._cache if k < i - 1]:  # keep the current and previous photo only
                del self._cache[k]
            self._cache[i] = image
        return self._cache[i]

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        n = self._n
        cycle, local = divmod(n, self._cycle)
        if cycle > 0 and not self.loop:
            raise EndOfStream(str(self.path))
        # The photo whose span holds this frame (the schedule is short; linear scan from the end).
        start, i, tr = next((entry for entry in reversed(self._schedule) if local >= entry[0]), self._schedule[0])
        k = local - start
        if cycle > 0 and i == 0:
            tr = self.transition_frames  # looping: move from the last photo back to the first
        if k < tr:
            prev_i = (i - 1) % len(self.files)
            prev = self._load(prev_i) if prev_i != i else self._load(i)
            image = transition_frame(prev, self._load(i), (k + 1) / (tr + 1))
        else:
            image = self._load(i).copy()
            if self.noise > 0:
                noise = self._rng.normal(0.0, self.noise, image.shape)
                image = np.clip(image.astype(np.float32) + noise, 0, 255).astype(np.uint8)
        t = n / self.frame_rate
        self._n += 1
        if self.realtime:
            self._pacer.wait(t)
        return image, t

    def photo_at(self, index: int) -> int | None:
        """Index into :attr:`files` of the photo shown still at frame ``index`` (None during a transition)."""
        cycle, local = divmod(index, self._cycle)
        if cycle > 0 and not self.loop:
            return None
        for start, i, tr in reversed(self._schedule):
            if local >= start:
                if cycle > 0 and i == 0:
                    tr = self.transition_frames
                return i if local - start >= tr else None
        return None

    def info(self) -> dict[str, Any]:
        d = super().info()
        d.update(path=str(self.path), photos=len(self.files), hold_s=self.hold_s, transition_s=self.transition_s,
                 frame_rate=self.frame_rate, realtime=self.realtime)
        return d
