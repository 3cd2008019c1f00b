"""The virtual dice table: a frame source that renders throws with known ground truth.

:class:`VirtualTableSource` shows a tray seen from above. Calling :meth:`VirtualTableSource.throw`
(from any thread — the dashboard's "throw" button, a test) or waiting ``auto_every_s`` seconds starts a
throw: the dice fly in from the edge of the tray tumbling (random faces, rotation, motion blur) for
``tumble_s`` seconds, then lie still on their final faces until the next throw. Every throw's faces and
boxes are recorded in :attr:`VirtualTableSource.throws`, so the live pipeline can be checked against the
truth without a camera.

Frames are drawn by :func:`kosti.sim.render.render_table` (procedural dice on a procedural table top),
so the boxes recorded as ground truth are the renderer's exact silhouettes.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from kosti.sim import render
from kosti.vision.frame_source import EndOfStream, FrameSource


@dataclass(frozen=True)
class VirtualDie:
    """One die on the virtual table: face showing up (1–6), centre ``(cx, cy)`` and side in pixels, angle in degrees."""

    face: int
    cx: float
    cy: float
    side: float
    angle: float

    def spec(self) -> tuple[int, float, float, float]:
        """``(value, x, y, angle_deg)`` as :func:`kosti.sim.render.render_table` takes it."""
        return (self.face, self.cx, self.cy, self.angle)


@dataclass
class VirtualThrow:
    """Ground truth of one virtual throw.

    Attributes:
        number: 1-based throw number.
        dice: final dice (faces, positions).
        t_start: media/monotonic time the throw started (seconds, same clock as the frames).
        t_rest: time the dice came to rest.
        first_rest_index: index of the first frame with the dice at rest (set when that frame is rendered).
        boxes: ``(N, 4)`` float32 tight boxes ``x1, y1, x2, y2`` in pixels from the renderer, same order as
            ``dice`` (set with ``first_rest_index``).
    """

    number: int
    dice: list[VirtualDie]
    t_start: float
    t_rest: float
    first_rest_index: int | None = None
    boxes: np.ndarray | None = None

    @property
    def faces(self) -> list[int]:
        """Faces showing up, ascending."""
        return sorted(d.face for d in self.dice)


class VirtualTableSource(FrameSource):
    """A rendered dice tray; throws happen on :meth:`throw` or every ``auto_every_s`` seconds.

    Args:
        n_dice: dice thrown by default (1–6 for 1000/Farkle; any positive number works).
        size: ``(width, height)`` of the frames in pixels.
        fps: frame rate; in simulated time ``t = index / fps``.
        realtime: pace frames in wall-clock time (live demo); False = as fast as possible, simulated time.
        auto_every_s: seconds between automatic throws (counted from the previous rest), ``None`` = only on request.
        tumble_s: seconds the dice tumble before they rest.
        die_side: side of a die in pixels (default 7 % of the frame height).
        background: table top, one of :data:`kosti.sim.render.BACKGROUNDS`.
        style: die look, a :data:`kosti.sim.render.STYLES` name.
        seed: random seed (faces, positions).
        initial_throw: start with a throw already in the air (so a fresh demo shows dice quickly).
        max_frames: stop with :class:`EndOfStream` after this many frames (``None`` = endless).
    """

    kind = "virtual"

    def __init__(
        self,
        n_dice: int = 5,
        size: tuple[int, int] = (1280, 720),
        fps: float = 30.0,
        realtime: bool = True,
        auto_every_s: float | None = None,
        tumble_s: float = 1.0,
        die_side: float | None = None,
        background: str = "felt",
        style: str = "white_black",
        seed: int | None = None,
        initial_throw: bool = True,
        max_frames: int | None = None,
    ) -> None:
        super().__init__()
        if n_dice < 1:
            raise ValueError("n_dice must be >= 1")
        self.n_dice = n_dice
        self.width, self.height = int(size[0]), int(size[1])
        self.frame_rate = fps
        self.realtime = realtime
        self.auto_every_s = auto_every_s
        self.tumble_s = tumble_s
        self.die_side = die_side or 0.07 * self.height
        self.max_frames = max_frames
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._pending: list[tuple[int, list[int] | None]] = []
        self._initial_throw = initial_throw
        self.throws: list[VirtualThrow] = []
        self._start_dice: list[VirtualDie] = []
        self._t0 = 0.0
        self._n = 0
        self.style = style
        self._bg_seed = int(self._rng.integers(0, 2**31 - 1))
        self._background = render.make_background(background, self.width, self.height, self._bg_seed)
        self._rest_frame: np.ndarray | None = None
        #: Tray: the area where dice land (pixels, x1 y1 x2 y2) — the default roll area.
        m = 0.08
        self.tray = (m * self.width, m * self.height, (1 - m) * self.width, (1 - m) * self.height)

    # -- public control ------------------------------------------------------------------------------
    def throw(self, n_dice: int | None = None, faces: list[int] | None = None) -> None:
        """Start a throw at the next frame (thread-safe).

        Args:
            n_dice: dice to throw (default: :attr:`n_dice`); ignored when ``faces`` is given.
            faces: force the result (each 1–6), e.g. for a scripted demo or test.

        Raises:
            ValueError: ``n_dice < 1`` or a face outside 1–6.
        """
        if faces is not None:
            if not faces or any(int(f) not in range(1, 7) for f in faces):
                raise ValueError(f"faces must be 1–6, got {faces}")
            n = len(faces)
        else:
            n = self.n_dice if n_dice is None else int(n_dice)
        if n < 1:
            raise ValueError("n_dice must be >= 1")
        with self._lock:
            self._pending.append((n, None if faces is None else [int(f) for f in faces]))

    @property
    def last_throw(self) -> VirtualThrow | None:
        """Ground truth of the most recent throw (None before the first)."""
        return self.throws[-1] if self.throws else None

    @property
    def resting(self) -> bool:
        """True when the dice of the last throw lie still (or no throw has happened)."""
        last = self.last_throw
        return last is None or self._now() >= last.t_rest

    # -- FrameSource ---------------------------------------------------------------------------------
    def _open(self) -> None:
        self._t0 = time.monotonic()
        self._n = 0
        if self._initial_throw and not self.throws:
            self.throw()

    def _close(self) -> None:
        pass

    def _now(self) -> float:
        if self.realtime:
            return time.monotonic() - self._t0
        return self._n / self.frame_rate

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        if self.max_frames is not None and self._n >= self.max_frames:
            raise EndOfStream("virtual table: max_frames reached")
        if self.realtime:
            next_t = self._n / self.frame_rate
            now = time.monotonic() - self._t0
            if next_t > now:
                time.sleep(next_t - now)
                now = next_t
            self._n = max(self._n, int(now * self.frame_rate)) + 1
            t = now
        else:
            t = self._n / self.frame_rate
            self._n += 1
        self._maybe_start_throw(t)
        return self._render(t), t

    def _maybe_start_throw(self, t: float) -> None:
        with self._lock:
            req = self._pending.pop(0) if self._pending else None
        last = self.last_throw
        if req is None and self.auto_every_s is not None and (last is None or t >= last.t_rest + self.auto_every_s):
            req = (self.n_dice, None)
        if req is None:
            return
        if last is not None and t < last.t_rest:  # still tumbling: start after this throw comes to rest
            with self._lock:
                self._pending.insert(0, req)
            return
        n, faces = req
        if faces is None:
            faces = [int(f) for f in self._rng.integers(1, 7, size=n)]
        final = self._place(faces)
        self._start_dice = [
            VirtualDie(int(self._rng.integers(1, 7)), self.width * (1.05 + 0.1 * self._rng.random()),
                       self.height * (0.2 + 0.6 * self._rng.random()), d.side, float(self._rng.uniform(0, 90)))
            for d in final
        ]
        self.throws.append(VirtualThrow(len(self.throws) + 1, final, t, t + self.tumble_s))

    def _place(self, faces: list[int]) -> list[VirtualDie]:
        """Random non-overlapping resting places inside the tray."""
        x1, y1, x2, y2 = self.tray
        side = self.die_side
        margin = side
        out: list[VirtualDie] = []
        for face in faces:
            for _ in range(200):
                cx = self._rng.uniform(x1 + margin, x2 - margin)
                cy = self._rng.uniform(y1 + margin, y2 - margin)
                if all(math.hypot(cx - d.cx, cy - d.cy) > 1.9 * side for d in out):
                    break
            out.append(VirtualDie(face, float(cx), float(cy), side, float(self._rng.uniform(0, 90))))
        return out

    def _draw(self, dice: list[VirtualDie], motion_blur: float = 0.0, angle: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        return render.render_table([d.spec() for d in dice], self._background, self.style, motion_blur,
                                   size=(self.width, self.height), die_px=self.die_side, seed=self._bg_seed,
                                   blur_angle_deg=angle)

    def _render(self, t: float) -> np.ndarray:
        last = self.last_throw
        if last is None:
            return self._background.copy()
        if t >= last.t_rest:
            if last.first_rest_index is None or self._rest_frame is None:
                frame, boxes = self._draw(last.dice)
                self._rest_frame = frame
                if last.first_rest_index is None:
                    last.first_rest_index = self._index
                    last.boxes = boxes
            return self._rest_frame.copy()
        # Tumbling: ease-out flight from the start points to the final places, spinning, random faces.
        self._rest_frame = None
        p = (t - last.t_start) / max(1e-6, last.t_rest - last.t_start)
        e = 1.0 - (1.0 - p) ** 3
        bounce = abs(math.sin(3 * math.pi * p)) * (1 - p) * 0.08 * self.height
        dice = []
        for k, (a, b) in enumerate(zip(self._start_dice, last.dice)):
            face = int(self._rng.integers(1, 7)) if p < 0.85 else b.face
            spin = (1 - e) * 720.0 * (1 if k % 2 else -1)
            dice.append(VirtualDie(face, a.cx + (b.cx - a.cx) * e, a.cy + (b.cy - a.cy) * e - bounce, b.side, b.angle + spin))
        speed = 3.0 * (1 - p) ** 2 * abs(self._start_dice[0].cx - last.dice[0].cx) / max(1.0, self.frame_rate * self.tumble_s)
        frame, _ = self._draw(dice, motion_blur=min(60.0, speed), angle=180.0)
        return frame

    def info(self) -> dict[str, Any]:
        d = super().info()
        d.update(n_dice=self.n_dice, size=[self.width, self.height], frame_rate=self.frame_rate,
                 realtime=self.realtime, throws=len(self.throws))
        return d
