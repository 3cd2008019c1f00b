"""Settle detection: decide, cheaply, when the dice have come to rest after a throw.

Every frame is shrunk to a small grayscale image (``width`` px wide, default 160), blurred, and compared
with the previous small frame; the *motion* is the fraction of pixels whose gray level changed by more
than ``diff_threshold``. A hysteresis state machine turns that signal into states:

``moving`` —(motion < ``still_fraction``)→ ``settling`` —(still for ``still_s`` s)→ ``settled``
``settling``/``settled`` —(motion > ``motion_fraction``)→ ``moving``

Entering ``settled`` raises exactly one *settle event* per rest period; the table staying still does not
raise more. A hand in the tray changes many pixels, so it counts as motion. While settling and settled,
each frame is also compared with the frame at which the table went still (*drift*), so a die that rolls
slowly — a fraction of a pixel of the small image per frame, too little between consecutive frames — or a
slow push still counts as motion (drift > ``drift_fraction``). The detector starts in ``moving`` (the table's
state is unknown), so dice already at rest when watching starts are reported once.

Cost: one ``cv2.resize`` (INTER_AREA), one colour conversion and blur on a 160×90 image and two
``absdiff`` per frame — well under a millisecond at 1280×720 (see ``benchmarks/bench_pipeline.py``).
Defaults: 0.4 s still time (a die rolling on felt stops within a few tenths of a second; shorter times
fire on the pause of a bounce), thresholds tuned on the virtual table and the folder replays of
``../shared/datasets`` photos with added sensor noise (σ ≈ 3 gray levels stays below ``diff_threshold``
after the blur).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

#: Default changed-pixel fraction (of the 160 px wide grey image) above which the table is moving, and
#: below which a frame counts as still (the gap is the hysteresis); ``[settle] motion_threshold`` /
#: ``still_threshold`` in kosti.toml. Tuned on the virtual table and folder replays of the shared photos
#: with added sensor noise (module docstring).
MOTION_FRACTION = 0.004
STILL_FRACTION = 0.0015


class SettleState(str, Enum):
    """Motion state of the table."""

    MOVING = "moving"
    SETTLING = "settling"
    SETTLED = "settled"


@dataclass(frozen=True)
class SettleUpdate:
    """Result of feeding one frame to :class:`SettleDetector`.

    Attributes:
        state: state after this frame.
        motion: fraction (0–1) of small-image pixels that changed since the previous frame.
        drift: fraction changed since the frame at which the table went still (0 while moving).
        still_for_s: seconds the table has been still (0 while moving).
        settled_now: True on exactly the one frame that completes a rest period (the settle event).
        rest_id: number of settle events so far (the current rest period's id once settled).
    """

    state: SettleState
    motion: float
    drift: float
    still_for_s: float
    settled_now: bool
    rest_id: int


class SettleDetector:
    """Hysteresis motion detector on downscaled grayscale frames.

    Args:
        still_s: seconds of stillness before the table counts as settled (default 0.4).
        width: width in pixels of the downscaled image (height keeps the aspect ratio).
        blur_sigma: Gaussian blur sigma in small-image pixels (suppresses sensor noise and JPEG ringing).
        diff_threshold: gray-level change (0–255) for a pixel to count as changed.
        motion_fraction: changed-pixel fraction above which the table is moving (enter ``moving``).
        still_fraction: fraction below which a frame counts as still (``< motion_fraction``: hysteresis).
        drift_fraction: changed fraction against the frame at which the table went still above which it
            is moving again (0.003 ≈ half a die's area at 720p: a 50 px die is ~6 px wide at 160 px).

    Raises:
        ValueError: inconsistent thresholds (``still_fraction > motion_fraction``) or non-positive sizes.
    """

    def __init__(
        self,
        still_s: float = 0.4,
        width: int = 160,
        blur_sigma: float = 1.0,
        diff_threshold: int = 14,
        motion_fraction: float = MOTION_FRACTION,
        still_fraction: float = STILL_FRACTION,
        drift_fraction: float = 0.003,
    ) -> None:
        if still_s < 0 or width < 8 or diff_threshold < 1:
            raise ValueError("still_s must be >= 0, width >= 8, diff_threshold >= 1")
        if not 0 <= still_fraction <= motion_fraction <= 1:
            raise ValueError("need 0 <= still_fraction <= motion_fraction <= 1")
        self.still_s = still_s
        self.width = width
        self.blur_sigma = blur_sigma
        self.diff_threshold = diff_threshold
        self.motion_fraction = motion_fraction
        self.still_fraction = still_fraction
        self.drift_fraction = drift_fraction
        self.reset()

    def reset(self) -> None:
        """Forget the history: the next frames start in ``moving``."""
        self._prev: np.ndarray | None = None
        self._rest_ref: np.ndarray | None = None
        self._state = SettleState.MOVING
        self._still_since: float | None = None
        self._rest_id = 0
        self._last: SettleUpdate | None = None

    @property
    def state(self) -> SettleState:
        """Current state."""
        return self._state

    @property
    def last(self) -> SettleUpdate | None:
        """The last update (None before the first frame)."""
        return self._last

    def small(self, image: np.ndarray) -> np.ndarray:
        """Downscale ``(H, W, 3)`` uint8 BGR (or ``(H, W)`` gray) to blurred ``(h, width)`` uint8 gray."""
        h, w = image.shape[:2]
        sh = max(1, round(h * self.width / w))
        small = cv2.resize(image, (self.width, sh), interpolation=cv2.INTER_AREA)
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        if self.blur_sigma > 0:
            small = cv2.GaussianBlur(small, (0, 0), self.blur_sigma)
        return small

    def _changed(self, a: np.ndarray, b: np.ndarray) -> float:
        diff = cv2.absdiff(a, b)
        return float(np.count_nonzero(diff > self.diff_threshold)) / diff.size

    def update(self, image: np.ndarray, t: float) -> SettleUpdate:
        """Feed one frame.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame (any size; a size change counts as motion).
            t: frame time in seconds (monotonic or media time; must not decrease).

        Returns:
            The :class:`SettleUpdate` for this frame; ``settled_now`` is True once per rest period.
        """
        small = self.small(image)
        prev = self._prev
        self._prev = small
        if prev is None or prev.shape != small.shape:
            motion = 1.0
        else:
            motion = self._changed(small, prev)
        drift = 0.0
        settled_now = False
        state = self._state
        ref = self._rest_ref
        if state is not SettleState.MOVING and ref is not None:
            drift = self._changed(small, ref) if ref.shape == small.shape else 1.0
        if state is SettleState.SETTLED:
            if motion > self.motion_fraction or drift > self.drift_fraction:
                state = SettleState.MOVING
                self._still_since = None
                self._rest_ref = None
        elif (
            motion > self.motion_fraction
            or (state is SettleState.MOVING and motion >= self.still_fraction)
            or drift > self.drift_fraction
        ):
            state = SettleState.MOVING
            self._still_since = None
            self._rest_ref = None
        else:
            # Still frame (moving: below still_fraction; settling: not above motion_fraction, no drift).
            if self._still_since is None:
                self._still_since = t
                self._rest_ref = small
                state = SettleState.SETTLING
            if t - self._still_since >= self.still_s - 1e-6:  # tolerate float rounding of frame times
                state = SettleState.SETTLED
                settled_now = True
                self._rest_id += 1
            else:
                state = SettleState.SETTLING
        self._state = state
        still_for = 0.0 if self._still_since is None else max(0.0, t - self._still_since)
        self._last = SettleUpdate(state, motion, drift, still_for, settled_now, self._rest_id)
        return self._last
