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

**A camera that moves.** A hand-held phone, a camera arm the dice hit or a wobbling stand moves the whole
image by 0.5–3 px a frame; uncompensated, every such shake is "motion" and the table never settles. So
when a frame changed, the detector estimates the camera's own motion — a similarity transform (shift,
rotation, scale) from corners tracked on the small image (:func:`estimate_camera_motion`: Shi–Tomasi
corners, pyramidal Lucas–Kanade, RANSAC) — warps the previous frame (and the rest reference) onto this
one, compensates a global exposure change (gain), and counts only what still differs: the dice's own
motion. The rest reference is tracked directly (reference corners → this frame), so the camera pose of
a rest never accumulates frame-to-frame error, and :attr:`SettleUpdate.camera` gives it to the pipeline
(per-die checks and the "same dice as the last throw" check work in table coordinates). A transform is
only believed when it is small (a shake, not a die flying: ≤ ``max_shift`` small-image px and ≤ 2° per
frame), explains most tracked corners, and those corners spread over the image (one die's corners cannot
pose as the camera); otherwise no compensation. A fixed camera costs nothing extra: frames that did not
change skip the estimation.

**A dim table.** The thresholds are grey levels of a normally lit frame. Under a dim lamp or an under-exposed
webcam, a die and the felt differ by half as many levels, a die turning or still rolling changes fewer pixels
by more than ``diff_threshold``, and the table looked still while a die still moved: on the clip suite darkened
to 45 %, the spinning die's throw was read 1.03 s before it stopped. So each small image is first brightened
by the gain that brings its bright end to a normal level (:func:`kosti.vision.exposure.exposure_gain`, the
reader's own measure, taken on the 160 px colour image the detector shrinks anyway), when that gain is above
``dim_gain`` — the rule by which the reader brightens a dim frame; the gain is held steady from frame to frame
(:func:`kosti.vision.exposure.held_gain`) so that its jitter is no motion. :attr:`SettleDetector.gain` hands
it to the throw detector's hand and turning-die checks.

Cost: one ``cv2.resize`` (INTER_AREA), one colour conversion and blur on a 160×90 image and two
``absdiff`` per frame — well under a millisecond at 1280×720; the motion compensation, when the image
changed, adds corner tracking on the 160×90 image (``benchmarks/bench_pipeline.py``, 1b, measures both).
Defaults: 0.4 s still time (a die rolling on felt stops within a few tenths of a second; shorter times
fire on the pause of a bounce), thresholds tuned on the virtual table and the folder replays of
``../shared/datasets`` photos with added sensor noise (σ ≈ 3 gray levels stays below ``diff_threshold``
after the blur).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

import cv2
import numpy as np

from kosti.vision.exposure import MAX_EXPOSURE_GAIN, brightened, exposure_gain, held_gain
from kosti.vision.params import DIE_FRACTION, DIE_MARGIN, MOTION_FRACTION, STILL_FRACTION, SettleParams

__all__ = ["DIE_FRACTION", "DIE_MARGIN", "MOTION_FRACTION", "STILL_FRACTION", "SettleDetector", "SettleParams",
           "SettleState", "SettleUpdate"]

# MOTION_FRACTION, STILL_FRACTION (the hysteresis), DIE_FRACTION, DIE_MARGIN (per-die rest; a die at rest on the real
# clips, ``../shared/clips/real-throws``, changes under 0.02 of its box, a camera refocusing included; a die rolling
# by a quarter of its side, or the arm's shadow reaching it, over 0.3): declared with every other setting in
# :mod:`kosti.vision.params` (:class:`~kosti.vision.params.SettleParams`).
#: Small images kept for :meth:`SettleDetector.set_focus` to find when the dice stopped (2 s at 30 fps).
HISTORY_FRAMES = 60


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
        camera: ``(2, 3)`` float64 similarity transform mapping small-image coordinates of the rest
            reference (the frame at which the table went still) to this frame's, or None while moving;
            identity for a fixed camera. Scale its translation by ``frame width / width`` for frame pixels
            (:func:`scale_transform`).
        shift_px: the camera's own motion since the previous frame that was compensated, in small-image
            pixels (0 when none was needed or believed).
        per_die: the rest is judged on the dice's boxes only (:meth:`SettleDetector.set_focus`): motion elsewhere
            in the view (an arm at the edge, a shadow crossing the cloth) does not count.
        die_change: with ``per_die``, the largest share (0–1) of one die's box that changed since the previous
            frame or since the start of the rest (the larger of the two); 0 otherwise.
    """

    state: SettleState
    motion: float
    drift: float
    still_for_s: float
    settled_now: bool
    rest_id: int
    camera: np.ndarray | None = None
    shift_px: float = 0.0
    per_die: bool = False
    die_change: float = 0.0


IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def corners(gray: np.ndarray, max_corners: int = 100) -> np.ndarray | None:
    """Shi–Tomasi corners of a small ``(h, w)`` uint8 gray image as ``(N, 1, 2)`` float32, or None if < 8."""
    pts = cv2.goodFeaturesToTrack(gray, maxCorners=max_corners, qualityLevel=0.005, minDistance=3, blockSize=5)
    return pts if pts is not None and len(pts) >= 8 else None


def estimate_camera_motion(
    src: np.ndarray,
    dst: np.ndarray,
    pts: np.ndarray | None = None,
    max_shift: float = 2.0,
    max_angle_deg: float = 2.0,
    min_inliers: float = 0.4,
    min_spread: float = 0.3,
) -> np.ndarray | None:
    """The camera's own motion from ``src`` to ``dst``: a similarity transform, or None when not believable.

    Corners of ``src`` (``pts``, or found with :func:`corners`) are tracked into ``dst`` with pyramidal
    Lucas–Kanade (``cv2.calcOpticalFlowPyrLK``, 9×9 window, 2 levels) and a similarity (rotation, uniform
    scale, shift) is fitted with RANSAC (``cv2.estimateAffinePartial2D``, 0.8 px threshold). It is the
    camera's motion only when enough tracked corners follow it (≥ ``min_inliers`` of those tracked, ≥ 8),
    those corners spread over at least ``min_spread`` of the image's width and of its height (moving
    dice are small: their corners
    cannot pose as the whole table), the shift is at most ``max_shift`` px, the rotation at most
    ``max_angle_deg`` and the scale within 2 % of 1 — a shaking camera, not dice flying. When the
    corners do not give a transform (a plain table top has few), the shift of the whole image by phase
    correlation (``cv2.phaseCorrelate``, peak response ≥ 0.2) stands in, rotation ignored.

    Args:
        src, dst: ``(h, w)`` uint8 gray images of one size (the settle detector's small frames).
        pts: ``(N, 1, 2)`` float32 corners of ``src`` (reused across frames for a fixed reference).

    Returns:
        ``(2, 3)`` float64 matrix mapping ``src`` pixel coordinates to ``dst``'s, or None.
    """
    found = _camera_motion(src, dst, pts, max_shift, max_angle_deg, min_inliers, min_spread)
    return None if found is None else found[0]


def _camera_motion(src: np.ndarray, dst: np.ndarray, pts: np.ndarray | None, max_shift: float = 2.0,
                   max_angle_deg: float = 2.0, min_inliers: float = 0.4,
                   min_spread: float = 0.3) -> tuple[np.ndarray, bool] | None:
    """:func:`estimate_camera_motion` and whether it came from tracked corners (True: accurate to a
    fraction of a pixel) or from phase correlation (False: shift only, rotation left out)."""
    if src.shape != dst.shape:
        return None
    if pts is None:
        pts = corners(src)
    m = _track_similarity(src, dst, pts, min_inliers, min_spread) if pts is not None else None
    exact = m is not None
    if m is None:  # too few corners that agree (a plain table top): the shift of the whole image
        (dx, dy), response = cv2.phaseCorrelate(src.astype(np.float32), dst.astype(np.float32))
        if response < 0.2 or np.hypot(dx, dy) < 0.1:  # (no shift: a fixed camera, nothing to take out)
            return None
        m = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]])
    scale = float(np.hypot(m[0, 0], m[1, 0]))
    angle = float(np.degrees(np.arctan2(m[1, 0], m[0, 0])))
    if abs(scale - 1.0) > 0.02 or abs(angle) > max_angle_deg or float(np.hypot(m[0, 2], m[1, 2])) > max_shift:
        return None
    return m.astype(np.float64), exact


def _track_similarity(src: np.ndarray, dst: np.ndarray, pts: np.ndarray, min_inliers: float,
                      min_spread: float) -> np.ndarray | None:
    # nextPts is an output here (no OPTFLOW_USE_INITIAL_FLOW): a copy of pts is passed rather than None because
    # OpenCV's stubs disagree between releases on whether None is allowed (4.x: no, 5.x: yes).
    nxt, status, _ = cv2.calcOpticalFlowPyrLK(src, dst, pts, pts.copy(), winSize=(9, 9), maxLevel=2,
                                              criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))
    if nxt is None:
        return None
    ok = status.reshape(-1) == 1
    if ok.sum() < 8:
        return None
    a, b = pts.reshape(-1, 2)[ok], nxt.reshape(-1, 2)[ok]
    m, inl = cv2.estimateAffinePartial2D(a, b, method=cv2.RANSAC, ransacReprojThreshold=0.8, maxIters=200,
                                         confidence=0.98, refineIters=5)
    if m is None or inl is None:
        return None
    inl = inl.reshape(-1).astype(bool)
    if inl.sum() < max(8, min_inliers * len(a)):
        return None
    h, w = src.shape[:2]
    spread = a[inl].max(0) - a[inl].min(0)
    if spread[0] < min_spread * w or spread[1] < min_spread * h:
        return None
    similarity: np.ndarray = m
    return similarity


def scale_transform(m: np.ndarray, factor: float) -> np.ndarray:
    """A similarity ``m`` on small-image pixels as the same motion on pixels ``factor`` times larger.

    The rotation/scale part is unchanged; the shift is multiplied (``x_big = factor · x_small``).
    Returns a new ``(2, 3)`` float64 matrix.
    """
    out = np.array(m, dtype=np.float64, copy=True)
    out[:, 2] *= factor
    return out


def compose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(2, 3)`` transforms: first ``a`` then ``b`` (``x → b(a(x))``), as a ``(2, 3)`` float64 matrix."""
    a3 = np.vstack([a, [0.0, 0.0, 1.0]])
    b3 = np.vstack([b, [0.0, 0.0, 1.0]])
    out: np.ndarray = (b3 @ a3)[:2]
    return out


def invert(m: np.ndarray) -> np.ndarray:
    """Inverse of a ``(2, 3)`` affine transform (``cv2.invertAffineTransform``), float64."""
    return cv2.invertAffineTransform(np.asarray(m, dtype=np.float64))


class SettleDetector:
    """Hysteresis motion detector on downscaled grayscale frames, compensating a moving camera.

    Args:
        params: the settings (:class:`kosti.vision.params.SettleParams`, each declared there once with its default,
            unit and bounds); default ``SettleParams()``.
        settings: any field of :class:`~kosti.vision.params.SettleParams` by name, replacing ``params``' value.

    What each setting does:
        still_s: seconds of stillness before the table counts as settled (default
            :data:`kosti.vision.params.STILL_S`).
        width: width in pixels of the downscaled image (height keeps the aspect ratio).
        blur_sigma: Gaussian blur sigma in small-image pixels (suppresses sensor noise and JPEG ringing).
        diff_threshold: gray-level change (0–255) for a pixel to count as changed.
        motion_fraction: changed-pixel fraction above which the table is moving (enter ``moving``).
        still_fraction: fraction below which a frame counts as still (``< motion_fraction``: hysteresis).
        drift_fraction: changed fraction against the frame at which the table went still above which it
            is moving again (0.003 ≈ half a die's area at 720p: a 50 px die is ~6 px wide at 160 px).
        compensate: estimate and remove the camera's own motion and exposure changes (module docstring);
            False = the fixed-camera detector.
        max_shift: largest camera shift per frame believed, in small-image px (2 px at 160 px wide = 16 px
            at 1280: three times the 2.6 px/frame of a hand-held phone filmed at 720p).
        dim_gain: a frame that takes a gain above this to look normally lit (:func:`kosti.vision.exposure.
            exposure_gain`, measured on the small image) has its motion measured brightened by that gain
            (module docstring, "A dim table"); the reader's own rule and default
            (:data:`kosti.models.DEFAULT_DIM_GAIN`, 1.5); 0 = off.

    Raises:
        ValueError: inconsistent thresholds (``still_fraction > motion_fraction``) or non-positive sizes.
    """

    def __init__(self, params: SettleParams | None = None, **settings: Any) -> None:
        p = dataclasses.replace(params or SettleParams(), **settings)  # TypeError: no such setting
        #: The settings this detector was built with (:class:`kosti.vision.params.SettleParams`).
        self.params = p
        still_s, width, diff_threshold, dim_gain = p.still_s, p.width, p.diff_threshold, p.dim_gain
        still_fraction, motion_fraction, die_fraction, die_margin = (p.still_fraction, p.motion_fraction,
                                                                     p.die_fraction, p.die_margin)
        if still_s < 0 or width < 8 or diff_threshold < 1:
            raise ValueError("still_s must be >= 0, width >= 8, diff_threshold >= 1")
        if dim_gain != 0.0 and not 1.0 <= dim_gain <= MAX_EXPOSURE_GAIN:
            raise ValueError(f"dim_gain must be 0 (off) or from 1 to {MAX_EXPOSURE_GAIN:g}, got {dim_gain}")
        if not 0 <= still_fraction <= motion_fraction <= 1:
            raise ValueError("need 0 <= still_fraction <= motion_fraction <= 1")
        if not 0 < die_fraction <= 1 or die_margin < 0:
            raise ValueError(f"need 0 < die_fraction <= 1 and die_margin >= 0, got {die_fraction}, {die_margin}")
        self.still_s = still_s
        self.width = width
        self.blur_sigma = p.blur_sigma
        self.diff_threshold = diff_threshold
        self.motion_fraction = motion_fraction
        self.still_fraction = still_fraction
        self.drift_fraction = p.drift_fraction
        self.compensate = p.compensate
        self.max_shift = p.max_shift
        self.dim_gain = float(dim_gain)
        self.die_fraction, self.die_margin = float(die_fraction), float(die_margin)
        self.reset()

    def reset(self) -> None:
        """Forget the history: the next frames start in ``moving``."""
        self._prev: np.ndarray | None = None
        self._rest_ref: np.ndarray | None = None
        self._ref_pts: np.ndarray | None = None
        self._ref_cam: np.ndarray = IDENTITY
        self._state = SettleState.MOVING
        self._still_since: float | None = None
        self._rest_id = 0
        self._last: SettleUpdate | None = None
        self._small: np.ndarray | None = None
        self._moved: np.ndarray | None = None
        self._peak = 0.0
        self._gain = 1.0
        self._before: np.ndarray | None = None
        self._prev_shrunk: np.ndarray | None = None  # the last frame shrunk, in colour (to re-grey at a new gain)
        self._ref_shrunk: np.ndarray | None = None  # the same for the rest reference
        # Per-die rest (set_focus): the recent small images with the camera's pose (anchor small px → frame small px),
        # and the dice boxes the rest is judged on (rest reference small px, grown by die_margin), or None.
        self._hist: deque[tuple[float, np.ndarray, np.ndarray]] = deque(maxlen=HISTORY_FRAMES)
        self._cum: np.ndarray = IDENTITY
        self._focus: np.ndarray | None = None

    @property
    def before_motion(self) -> np.ndarray | None:
        """The small gray image (``(h, width)`` uint8, as exposed: not brightened) of the table as it was before
        the motion that led to the current rest: the last frame of the last completed rest, or the stream's first frame when there was none
        (None before any frame). The throw detector finds what a hand left on the table against it."""
        return self._before

    @property
    def state(self) -> SettleState:
        """Current state."""
        return self._state

    @property
    def last(self) -> SettleUpdate | None:
        """The last update (None before the first frame)."""
        return self._last

    @property
    def last_small(self) -> np.ndarray | None:
        """The small gray image of the last frame fed (``(h, width)`` uint8, as the camera exposed it: not
        brightened by :attr:`gain`), or None."""
        return self._small

    def small(self, image: np.ndarray, gain: float = 1.0) -> np.ndarray:
        """Downscale ``(H, W, 3)`` uint8 BGR (or ``(H, W)`` gray) to blurred ``(h, width)`` uint8 gray, its grey
        levels multiplied by ``gain`` (clipped to 255)."""
        return self._grey(self._shrink(image), gain)

    def _shrink(self, image: np.ndarray) -> np.ndarray:
        h, w = image.shape[:2]
        sh = max(1, round(h * self.width / w))
        shrunk: np.ndarray = cv2.resize(image, (self.width, sh), interpolation=cv2.INTER_AREA)
        return shrunk

    def _grey(self, shrunk: np.ndarray, gain: float = 1.0) -> np.ndarray:
        return self._blurred(cv2.cvtColor(shrunk, cv2.COLOR_BGR2GRAY) if shrunk.ndim == 3 else shrunk, gain)

    def _blurred(self, small: np.ndarray, gain: float = 1.0) -> np.ndarray:
        if gain != 1.0:  # (before the blur: finer steps than brightening the blurred image)
            small = brightened(small, gain)
        if self.blur_sigma > 0:
            small = cv2.GaussianBlur(small, (0, 0), self.blur_sigma)
        return small

    @property
    def gain(self) -> float:
        """The gain the last frame was brightened by before its motion was measured (1.0: a normally lit table;
        :func:`kosti.vision.exposure.held_gain`; measured on colour frames only, a grey frame keeps the last one).
        When it changes, the previous frame and the rest reference are brought to the new gain before they are
        compared, so a change of gain is no motion. The throw detector's hand and turning-die checks use it too.
        Measured on the bright end, it is above 1 on an empty table of dark or saturated felt under a normal lamp
        (2–2.5 for the clip suite's green felt): motion between throws is then measured brightened, which changes
        nothing but the sensitivity to noise, well below the threshold."""
        return self._gain

    def _changed_warped(self, cur: np.ndarray, other: np.ndarray, m: np.ndarray,
                        tolerant: bool = False) -> tuple[float, np.ndarray | None]:
        """Changed fraction of ``cur`` against ``other`` warped by ``m`` (other → cur), gain-compensated,
        over the part of ``cur`` that ``other`` covers (a border band of the shift + 2 px is left out),
        and the ``(h, w)`` bool mask of the changed pixels (None when nothing overlaps). A pixel changed
        when it differs by more than ``diff_threshold``; with ``tolerant`` (a shift from phase correlation,
        rotation left out), when it lies that far outside the range of the warped 3×3 neighbourhood."""
        h, w = cur.shape[:2]
        warped = cv2.warpAffine(other, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        pad = int(np.ceil(abs(m[0, 2]) + abs(m[1, 2]) + abs(m[1, 0]) * max(w, h))) + 2
        if 2 * pad >= min(h, w):
            return 1.0, None
        c, o = cur[pad:-pad, pad:-pad], warped[pad:-pad, pad:-pad]
        mc, mo = float(c.mean()), float(o.mean())
        if mo > 1.0 and abs(mc / mo - 1.0) > 0.005:  # exposure flicker: a global gain
            o = cv2.convertScaleAbs(o, alpha=mc / mo)
        thr = self.diff_threshold
        if tolerant:
            k = np.ones((3, 3), np.uint8)
            inner = (cv2.subtract(c, cv2.dilate(o, k)) > thr) | (cv2.subtract(cv2.erode(o, k), c) > thr)
        else:
            inner = cv2.absdiff(c, o) > thr
        mask = np.zeros((h, w), bool)
        mask[pad:-pad, pad:-pad] = inner
        return float(np.count_nonzero(inner)) / inner.size, mask

    @property
    def motion_mask(self) -> np.ndarray | None:
        """``(h, width)`` bool: every small-image pixel that changed (after the camera's motion was taken
        out) during the motion that led to the current rest — where a hand or the dice moved. None before
        any motion. Kept until the table moves again after a completed rest."""
        return self._moved

    @property
    def motion_peak(self) -> float:
        """Largest :attr:`SettleUpdate.motion` of the motion that led to the current rest (0–1): a die
        tipping over changes one or two dice areas, a hand or a throw far more."""
        return self._peak

    def update(self, image: np.ndarray, t: float) -> SettleUpdate:
        """Feed one frame.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame (any size; a size change counts as motion).
            t: frame time in seconds (monotonic or media time; must not decrease).

        Returns:
            The :class:`SettleUpdate` for this frame; ``settled_now`` is True once per rest period.
        """
        shrunk = self._shrink(image)
        if shrunk.ndim == 3:
            gain = held_gain(exposure_gain(shrunk), self._gain, self.dim_gain)
            if gain != self._gain:  # the images compared with this one are brought to the new gain first
                self._gain = gain
                if self._prev_shrunk is not None:
                    self._prev = self._grey(self._prev_shrunk, gain)
                if self._rest_ref is not None and self._ref_shrunk is not None:
                    self._rest_ref = self._grey(self._ref_shrunk, gain)
        grey = cv2.cvtColor(shrunk, cv2.COLOR_BGR2GRAY) if shrunk.ndim == 3 else shrunk
        raw = self._blurred(grey)
        small = raw if self._gain == 1.0 else self._blurred(grey, self._gain)  # motion is measured at a normal level
        prev, prev_raw = self._prev, self._small
        self._prev, self._small, self._prev_shrunk = small, raw, shrunk
        shift = 0.0
        mask: np.ndarray | None = None
        step = IDENTITY  # the camera's motion from the previous frame to this one (small px), when believed
        if prev is None or prev.shape != small.shape:
            motion = 1.0
            self._before = raw
            self._hist.clear()
            self._focus = None
            self._cum = IDENTITY
        else:
            mask = cv2.absdiff(small, prev) > self.diff_threshold
            motion = float(np.count_nonzero(mask)) / mask.size
            if self.compensate and motion >= self.still_fraction:
                found = _camera_motion(prev, small, None, max_shift=self.max_shift)
                if found is not None:
                    m = found[0]
                    moved, moved_mask = self._changed_warped(small, prev, m, tolerant=not found[1])
                    if moved < motion and moved_mask is not None:
                        motion, mask = moved, moved_mask
                        step = m
                    shift = float(np.hypot(m[0, 2], m[1, 2]))
            self._cum = compose(self._cum, step)
        self._hist.append((t, small, self._cum))
        drift = 0.0
        dmask: np.ndarray | None = None
        settled_now = False
        state = self._state
        ref = self._rest_ref
        cam: np.ndarray | None = None
        if state is not SettleState.MOVING and ref is not None:
            if ref.shape != small.shape:
                drift = 1.0
            else:
                dmask = cv2.absdiff(small, ref) > self.diff_threshold
                drift = float(np.count_nonzero(dmask)) / dmask.size
                cam = IDENTITY
                if self.compensate and drift > 0.5 * self.drift_fraction:
                    found = _camera_motion(ref, small, self._ref_pts, max_shift=4 * self.max_shift)
                    if found is not None:
                        moved, moved_mask = self._changed_warped(small, ref, found[0], tolerant=not found[1])
                        if moved < drift and moved_mask is not None:
                            drift, cam, dmask = moved, found[0], moved_mask
                    elif self._ref_cam is not IDENTITY:
                        moved, moved_mask = self._changed_warped(small, ref, self._ref_cam, tolerant=True)
                        if moved < drift and moved_mask is not None:
                            drift, dmask = moved, moved_mask
                        cam = self._ref_cam
                self._ref_cam = cam
        die_change = 0.0
        focus = self._focus if state is not SettleState.MOVING and ref is not None and cam is not None else None
        if focus is not None and ref is not None and prev is not None and prev.shape == small.shape:
            boxes = _move_boxes(focus, cam if cam is not None else IDENTITY)
            die_change = max(self._die_change(small, prev, step, boxes),
                             self._die_change(small, ref, cam if cam is not None else IDENTITY, boxes))
        if focus is not None:  # the rest is judged on the dice's boxes alone
            if die_change > self.die_fraction:
                state = SettleState.MOVING
                self._still_since = None
                self._rest_ref = None
                self._focus = None
                cam = None
            else:
                assert self._still_since is not None
                if t - self._still_since >= self.still_s - 1e-6:
                    if state is not SettleState.SETTLED:
                        settled_now = True
                        self._rest_id += 1
                    state = SettleState.SETTLED
        elif state is SettleState.SETTLED:
            if motion > self.motion_fraction or drift > self.drift_fraction:
                state = SettleState.MOVING
                self._still_since = None
                self._rest_ref = None
                cam = None
        elif (
            motion > self.motion_fraction
            or (state is SettleState.MOVING and motion >= self.still_fraction)
            or drift > self.drift_fraction
        ):
            state = SettleState.MOVING
            self._still_since = None
            self._rest_ref = None
            cam = None
        else:
            # Still frame (moving: below still_fraction; settling: not above motion_fraction, no drift).
            if self._still_since is None:
                self._still_since = t
                self._rest_ref, self._ref_shrunk = small, shrunk
                self._ref_pts = corners(small) if self.compensate else None
                self._ref_cam = IDENTITY
                cam = IDENTITY
                state = SettleState.SETTLING
            if t - self._still_since >= self.still_s - 1e-6:  # tolerate float rounding of frame times
                if state is not SettleState.SETTLED:
                    settled_now = True
                    self._rest_id += 1
                state = SettleState.SETTLED
            else:
                state = SettleState.SETTLING
        if state is SettleState.MOVING:
            if self._state is SettleState.SETTLED:  # a new motion after a completed rest
                self._moved, self._peak = None, 0.0
                if prev_raw is not None and prev_raw.shape == raw.shape:
                    self._before = prev_raw
            if mask is not None and motion <= 0.5:  # (a cut or a new size is no place of motion)
                self._moved = mask if self._moved is None or self._moved.shape != mask.shape else self._moved | mask
            self._peak = max(self._peak, motion)
        self._state = state
        still_for = 0.0 if self._still_since is None else max(0.0, t - self._still_since)
        self._last = SettleUpdate(state, motion, drift, still_for, settled_now, self._rest_id, cam, shift,
                                  per_die=focus is not None and state is not SettleState.MOVING, die_change=die_change)
        return self._last

    @property
    def per_die(self) -> bool:
        """True while the rest is judged on the dice's boxes alone (:meth:`set_focus`)."""
        return self._focus is not None

    def set_focus(self, boxes: np.ndarray | None) -> list[tuple[float, np.ndarray]]:
        """Judge the rest on these dice's boxes alone (issue 40: rest decided per die).

        From the last frame fed on, the table is at rest when every box (grown by ``die_margin`` of its side on each
        side: a hand or a shadow that touches a die counts) has changed by at most ``die_fraction`` of its pixels,
        since the previous frame and since the start of the rest, after the camera's own motion is taken out; motion
        anywhere else in the view (an arm at the edge, a shadow crossing the cloth, a cup moved) is ignored. The rest
        starts at the oldest kept frame (:data:`HISTORY_FRAMES`) since which no box changed, so a per-die rest settles
        ``still_s`` after the dice stopped, however late the boxes were found. The focus ends when a box changes (the
        state goes ``moving``), at :meth:`reset` or with ``set_focus(None)``.

        Args:
            boxes: ``(N, 4)`` ``(x1, y1, x2, y2)`` in small-image pixels of the last frame fed (frame pixels times
                ``width / frame width``), or None to judge the whole image again.

        Returns:
            ``[(t, pose)]`` for every kept frame of the rest, oldest first (``t`` as fed to :meth:`update`, ``pose``
            the ``(2, 3)`` camera motion from the rest's first frame to that one, small-image px, as
            :attr:`SettleUpdate.camera`); ``[]`` when nothing is focused (None or no box given, no frame yet, the
            detector already settled, or a box changed since the previous frame).
        """
        if boxes is None or len(boxes) == 0 or not self._hist or self._state is SettleState.SETTLED:
            self._focus = None
            return []
        grown = grow_boxes(np.asarray(boxes, np.float64).reshape(-1, 4), self.die_margin)
        t_now, now, cum_now = self._hist[-1]
        start = len(self._hist) - 1
        for j in range(len(self._hist) - 2, -1, -1):
            _t, img, cum_j = self._hist[j]
            if img.shape != now.shape:
                break
            rel = compose(invert(cum_j), cum_now)
            if self._die_change(now, img, rel, grown) > self.die_fraction:
                break
            start = j
        if start == len(self._hist) - 1 and len(self._hist) > 1:
            self._focus = None  # a die moved since the previous frame: nothing at rest yet
            return []
        t0, ref, cum_ref = self._hist[start]
        to_now = compose(invert(cum_ref), cum_now)
        self._focus = _move_boxes(grown, invert(to_now))
        self._rest_ref, self._ref_shrunk = ref, None
        self._ref_pts = corners(ref) if self.compensate else None
        self._ref_cam = to_now
        self._still_since = t0
        self._state = SettleState.SETTLING
        return [(tk, compose(invert(cum_ref), cum_k)) for tk, _img, cum_k in list(self._hist)[start:]]


    def _die_change(self, cur: np.ndarray, other: np.ndarray, m: np.ndarray, boxes: np.ndarray) -> float:
        """The largest share (0–1) of one box of ``cur`` (``(N, 4)`` small px) that changed against ``other`` warped by
        ``m`` (other → cur): a pixel changed when it lies more than ``diff_threshold`` outside the range of the warped
        3×3 neighbourhood (what is left of the camera's motion, a pixel or less, is no change). Boxes narrower than
        3 px are left out."""
        h, w = cur.shape[:2]
        warped = other if np.allclose(m, IDENTITY, atol=1e-6) else cv2.warpAffine(
            other, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        k = np.ones((3, 3), np.uint8)
        best = 0.0
        for x1, y1, x2, y2 in np.asarray(boxes, np.float64).reshape(-1, 4):
            a, b = max(0, int(np.floor(x1)) - 1), max(0, int(np.floor(y1)) - 1)
            c, d = min(w, int(np.ceil(x2)) + 1), min(h, int(np.ceil(y2)) + 1)
            if c - a < 3 or d - b < 3:
                continue
            cc, oo = cur[b:d, a:c], warped[b:d, a:c]
            thr = self.diff_threshold
            moved = (cv2.subtract(cc, cv2.dilate(oo, k)) > thr) | (cv2.subtract(cv2.erode(oo, k), cc) > thr)
            best = max(best, float(np.count_nonzero(moved[1:-1, 1:-1])) / max(1, (c - a - 2) * (d - b - 2)))
        return best


def grow_boxes(boxes: np.ndarray, margin: float) -> np.ndarray:
    """``(N, 4)`` boxes grown by ``margin`` of their side (width, height) on each side, float64."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    gx, gy = margin * (b[:, 2] - b[:, 0]), margin * (b[:, 3] - b[:, 1])
    return np.stack([b[:, 0] - gx, b[:, 1] - gy, b[:, 2] + gx, b[:, 3] + gy], 1)


def _move_boxes(boxes: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``(N, 4)`` boxes with their centres moved by the ``(2, 3)`` transform ``m`` (sizes kept), float64."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    c = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, np.ones(len(b))], 1) @ np.asarray(m).T
    half = np.stack([(b[:, 2] - b[:, 0]) / 2, (b[:, 3] - b[:, 1]) / 2], 1)
    out: np.ndarray = np.concatenate([c - half, c + half], 1)
    return out
