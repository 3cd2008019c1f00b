"""Record a table's own throws as labelled clips: ``kosti run --record DIR`` (issue 40).

:class:`ThrowRecorder` hears every frame the runner reads and every throw it reports. It keeps the last
``before_s`` seconds of frames (JPEG-compressed in memory, shrunk to ``max_width``), and for each throw writes the
stream from just before the table started moving (``lead_s``; at most ``before_s`` before the throw was read) to
``after_s`` seconds after the read as one short clip
(``DIR/<time>_f<frame>.avi``, Motion-JPEG at the source's frame rate) with its truth beside it
(``DIR/<time>_f<frame>.json``, the shape :mod:`kosti.vision.truth` reads: ``{"throws": [[faces]], "rest_s":
[start, end]}``, times from the clip's start). The faces are first the camera's; :meth:`ThrowRecorder.label` sets
them to what the game finally recorded (after a fix or a confirmation at the table), or drops the throw (``[]``)
when the table refused it. A folder above ``max_mb`` megabytes loses its oldest clips first.

So every game a table plays becomes a labelled real test of its own table, camera and dice:
``kosti watch --truth DIR`` scores the pipeline on it (docs/live-pipeline.md, "Check your own table").
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.vision.params import STILL_S
from kosti.vision.throws import Throw

log = logging.getLogger(__name__)


@dataclass
class _Clip:
    """A clip being collected: its frames (JPEG bytes, frame time) and what it records."""

    stem: str
    frames: list[tuple[bytes, float]]
    throw: Throw
    rest_start_s: float
    end_t: float
    faces: list[int] = field(default_factory=list)


class ThrowRecorder:
    """Keeps the camera stream around each throw as a short clip with its truth (module docstring).

    Args:
        folder: where the clips go (created).
        before_s: seconds of stream kept before the frame the throw was read at (4: the throw's own motion and the
            still time it needs).
        after_s: seconds kept after it (2: a die that tips, a hand that comes).
        max_mb: the folder's size cap in megabytes: after each clip, the oldest clips go until it fits (0 = no cap).
        max_width: frames wider than this are shrunk to it (pixels; 0 = kept as they are).
        quality: JPEG quality 1–100 of the kept frames.
        still_s: the settle detector's still time: the rest is taken to start this long before the throw was read.
        lead_s: seconds of still table kept before the motion that led to the throw (0.3: under the still time, so
            a replay does not take the dice lying there before the throw for a throw of their own).

    Raises:
        ValueError: a negative time or size, a quality outside 1–100.
        OSError: the folder cannot be made.
    """

    def __init__(self, folder: Path | str, before_s: float = 4.0, after_s: float = 2.0, max_mb: float = 500.0,
                 max_width: int = 1280, quality: int = 85, still_s: float = STILL_S, lead_s: float = 0.3) -> None:
        if before_s < 0 or after_s < 0 or max_mb < 0 or max_width < 0 or still_s < 0:
            raise ValueError("before_s, after_s, max_mb, max_width and still_s must be >= 0")
        if not 1 <= quality <= 100:
            raise ValueError(f"quality must be 1-100, got {quality}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.before_s, self.after_s, self.max_mb = float(before_s), float(after_s), float(max_mb)
        self.max_width, self.quality, self.still_s = int(max_width), int(quality), float(still_s)
        self.lead_s = float(lead_s)
        self._moving_since: float | None = None  # when the table started moving (frame time), None while still
        self._still_from: float | None = None
        self._ring: deque[tuple[bytes, float]] = deque()
        self._open: list[_Clip] = []
        self._fps = 30.0
        self._last_t: float | None = None
        self._stems: dict[int, str] = {}  # frame index of each throw recorded this session -> its clip's stem
        self.written: list[Path] = []

    def frame(self, image: np.ndarray, t: float, moving: bool = False) -> None:
        """One frame of the stream (``(H, W, 3)`` uint8 BGR, time ``t`` seconds; ``moving``: the settle detector's
        state is ``moving``); finishes clips whose end it passed."""
        if moving:
            self._still_from = None
            if self._moving_since is None:
                self._moving_since = t
        elif self._still_from is None:
            self._still_from = t
        elif t - self._still_from > self.still_s + 0.5:
            self._moving_since = None  # a rest went by without a throw: the next throw's motion starts afresh
        if self._last_t is not None and t > self._last_t:
            self._fps = 0.9 * self._fps + 0.1 * (1.0 / (t - self._last_t))
        self._last_t = t
        h, w = image.shape[:2]
        if self.max_width and w > self.max_width:
            image = cv2.resize(image, (self.max_width, max(1, round(h * self.max_width / w))),
                               interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            return
        item = (buf.tobytes(), t)
        self._ring.append(item)
        while self._ring and self._ring[0][1] < t - self.before_s:
            self._ring.popleft()
        for clip in list(self._open):
            clip.frames.append(item)
            if t >= clip.end_t:
                self._open.remove(clip)
                self._write(clip)

    def throw(self, throw: Throw) -> None:
        """A throw was read at the last frame: start its clip with the frames kept before it."""
        if throw.corrects is not None:  # the same physical throw, corrected: its clip is the one already kept
            for clip in self._open:
                if clip.throw.frame_index == throw.corrects:
                    clip.throw, clip.faces = throw, list(throw.faces)
            self._relabel_written(throw.corrects, throw.frame_index, list(throw.faces))
            return
        since = (self._moving_since if self._moving_since is not None else throw.time_s) - self.lead_s
        self._moving_since = None
        kept = [f for f in self._ring if f[1] >= since - 1e-6] or list(self._ring)
        start = kept[0][1] if kept else throw.time_s
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}_f{throw.frame_index}"
        self._stems[throw.frame_index] = stem
        self._open.append(_Clip(stem, kept, throw, max(0.0, throw.time_s - self.still_s - start),
                                throw.time_s + self.after_s, list(throw.faces) if throw.ok else []))

    @property
    def frames(self) -> list[int]:
        """Frame indices of the throws recorded (or being recorded) this session."""
        return list(self._stems)

    def label(self, frame_index: int, faces: list[int] | None) -> None:
        """What the game finally recorded for the throw read at ``frame_index``: its faces, or None when the table
        refused the throw (no throw happened). Rewrites the clip's truth (or the one still being collected)."""
        for clip in self._open:
            if clip.throw.frame_index == frame_index:
                clip.faces = [] if faces is None else sorted(int(f) for f in faces)
                return
        self._relabel_written(frame_index, frame_index, faces)

    def close(self) -> None:
        """Write the clips still being collected, with what they hold."""
        for clip in self._open:
            self._write(clip)
        self._open.clear()

    def _relabel_written(self, frame_index: int, new_index: int, faces: list[int] | None) -> None:
        stem = self._stems.get(frame_index)
        if stem is None:
            return
        self._stems[new_index] = stem
        for path in [self.folder / f"{stem}.json"]:
            if not path.is_file():
                continue
            try:
                truth = json.loads(path.read_text())
                truth["throws"] = [] if not faces else [sorted(int(f) for f in faces)]
                truth["frame"] = new_index
                path.write_text(json.dumps(truth) + "\n")
            except (OSError, ValueError) as exc:
                log.warning("could not relabel %s: %s", path, exc)

    def _write(self, clip: _Clip) -> None:
        if not clip.frames:
            return
        first = cv2.imdecode(np.frombuffer(clip.frames[0][0], np.uint8), cv2.IMREAD_COLOR)
        if first is None:
            return
        h, w = first.shape[:2]
        path = self.folder / f"{clip.stem}.avi"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), round(self._fps, 2) or 30.0, (w, h))
        if not writer.isOpened():
            log.warning("cannot write %s (no MJPG encoder)", path)
            return
        try:
            for data, _t in clip.frames:
                img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
                if img is not None and img.shape[:2] == (h, w):
                    writer.write(img)
        finally:
            writer.release()
        t0 = clip.frames[0][1]
        truth: dict[str, Any] = {
            "throws": [clip.faces] if clip.faces else [],
            "rest_s": [round(clip.rest_start_s, 3), round(clip.throw.time_s - t0, 3)],
            "frame": clip.throw.frame_index,
            "camera": {"faces": list(clip.throw.faces), "status": clip.throw.status},
        }
        (self.folder / f"{clip.stem}.json").write_text(json.dumps(truth) + "\n")
        self.written.append(path)
        self._cap()

    def _cap(self) -> None:
        """Delete the oldest clips (and their truths) until the folder fits ``max_mb``."""
        if not self.max_mb:
            return
        clips = sorted(self.folder.glob("*.avi"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in self.folder.glob("*") if p.is_file())
        while clips and total > self.max_mb * 1e6:
            old = clips.pop(0)
            for p in (old, old.with_suffix(".json")):
                if p.is_file():
                    total -= p.stat().st_size
                    p.unlink()
