"""Exposure of a dim frame: how much gain brings its bright end up to a normal level, and the brightened frame.

A table under a dim lamp, or a webcam that under-exposes, gives frames at half their normal brightness or less. The
reader was trained on well-lit photos: at ×0.45 brightness it left byler-d6 test's small dice uncertain (die_accuracy
0.981 → 0.922, image_exact 0.88 → 0.64; ``benchmarks/robustness.py``). A gain brings such a frame back before it is
read (:class:`kosti.vision.reader.DiceReader`, ``dim_gain``).

The frame's *bright end* is the 99.9th percentile of ``max(B, G, R)`` over a copy shrunk to at most 160 px on its
longer side (area-averaged, so sensor noise barely moves it): the brightest 0.1 % of the frame, about 14 pixels of
a 160×90 copy — the white of the dice and their pips even when one or two dice lie on a dark felt (a 35 px die of a
1280×720 frame covers about 19 of them), so a dark table under a normal lamp is not taken as dim. The brightest
channel, not the grey level, so that saturated colours — red dice on blue felt — do not read as dim either. On the
four measured splits' photos as shipped (byler-d6 test, epanemu-dice val, rune55-dedup val, skovy-webcam) the gain
is at most 1.2.
"""

from __future__ import annotations

import cv2
import numpy as np

from kosti.vision.params import MAX_EXPOSURE_GAIN

__all__ = ["EXPOSURE_TARGET", "MAX_EXPOSURE_GAIN", "brightened", "exposure_gain", "held_gain"]

#: Level (0–255) a dim frame's bright end is brought to.
EXPOSURE_TARGET = 230.0
# MAX_EXPOSURE_GAIN: the most gain applied (a frame darker than this allows stays darker: noise grows with the
# gain); declared with the settings it bounds in kosti.vision.params.
#: Longer side (px) of the copy the bright end is measured on (a smaller frame is measured as it is).
PROBE_SIDE = 160
#: Share of the copy's pixels above the bright end: 0.1 %.
BRIGHT_SHARE = 0.001


def exposure_gain(image: np.ndarray) -> float:
    """The gain, at most :data:`MAX_EXPOSURE_GAIN`, that brings ``image``'s bright end to :data:`EXPOSURE_TARGET`
    (below 1 for a frame brighter than that).

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame.

    Returns:
        The gain, a float > 0.
    """
    h, w = image.shape[:2]
    scale = min(1.0, PROBE_SIDE / max(h, w))  # only ever shrink
    probe = image if scale == 1.0 else cv2.resize(
        image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    brightest = np.maximum(np.maximum(probe[..., 0], probe[..., 1]), probe[..., 2])  # 25x faster than max(axis=2)
    counts = np.cumsum(np.bincount(brightest.ravel(), minlength=256))
    bright = float(np.searchsorted(counts, (1.0 - BRIGHT_SHARE) * brightest.size))  # that percentile, a level 0-255
    return min(MAX_EXPOSURE_GAIN, EXPOSURE_TARGET / max(bright, 1.0))


def brightened(image: np.ndarray, gain: float) -> np.ndarray:
    """``image`` ``(H, W, 3)`` uint8 with every channel multiplied by ``gain`` (clipped to 255), as a new array."""
    lut = np.clip(np.arange(256, dtype=np.float64) * gain + 0.5, 0, 255).astype(np.uint8)
    out: np.ndarray = cv2.LUT(image, lut)
    return out


#: A brightening under way is kept unchanged while the gain measured on each new frame stays within this share of
#: it: the bright end of a still table jitters by a grey level or two from frame to frame, and a gain that
#: followed it would flicker the whole image.
GAIN_HOLD = 0.05
#: Once a stream is brightened, it stays so until its measured gain falls below ``dim_gain`` divided by this (a
#: lamp right at the limit does not switch the brightening on and off every frame).
GAIN_HYSTERESIS = 1.1


def held_gain(measured: float, held: float, dim_gain: float) -> float:
    """The gain to apply to the next frame of a stream (1.0 = none), from the gain :func:`exposure_gain` measured on
    it and the gain applied to the frame before (``held``; 1.0 at the start).

    1.0 when brightening is off (``dim_gain`` 0) or the frame is not dim: its measured gain is below ``dim_gain``
    (below ``dim_gain`` / :data:`GAIN_HYSTERESIS` once the stream is being brightened). Otherwise the held gain
    while the measurement stays within :data:`GAIN_HOLD` of it, else the measured gain.

    Args:
        measured: gain measured on this frame (> 0).
        held: gain applied to the previous frame (≥ 1).
        dim_gain: the gain above which a frame is dim (:data:`kosti.models.DEFAULT_DIM_GAIN`), or 0 for off.

    Returns:
        The gain: 1.0, or at least ``dim_gain`` / :data:`GAIN_HYSTERESIS` and never below 1.
    """
    if dim_gain <= 0.0:
        return 1.0
    on = held > 1.0
    if measured < (dim_gain / GAIN_HYSTERESIS if on else dim_gain):
        return 1.0
    if on and abs(measured / held - 1.0) <= GAIN_HOLD:
        return held
    return max(1.0, measured)
