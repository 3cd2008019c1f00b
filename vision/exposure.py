"""Exposure of a dim frame: how much gain brings its bright end up to a normal level, and the brightened frame.

A table under a dim lamp, or a webcam that under-exposes, gives frames at half their normal brightness or less. The
reader was trained on well-lit photos: at ×0.45 brightness it left byler-d6 test's small dice uncertain (die_accuracy
0.981 → 0.922, image_exact 0.88 → 0.64; ``benchmarks/robustness.py``). A gain brings such a frame back before it is
read (:class:`kosti.vision.reader.DiceReader`, ``dim_gain``).

The frame's *bright end* is the 99th percentile of ``max(B, G, R)`` over a 160 px wide copy (area-averaged, so
sensor noise barely moves it): the white of pips, dice and paper. The brightest channel, not the grey level, so that
saturated colours — red dice on blue felt — do not read as dim. On the shared sets' photos as shipped the gain is
at most 1.44 (rune55-dedup val), 1.32 (skovy-webcam), 1.25 (epanemu-dice val) and 1.2 (byler-d6 test).
"""

from __future__ import annotations

import cv2
import numpy as np

#: Level (0–255) a dim frame's bright end is brought to.
EXPOSURE_TARGET = 230.0
#: Most gain applied (a frame darker than this allows stays darker: noise grows with the gain).
MAX_EXPOSURE_GAIN = 2.5
#: Width (px) of the copy the bright end is measured on.
_PROBE_WIDTH = 160


def exposure_gain(image: np.ndarray) -> float:
    """The gain, at most :data:`MAX_EXPOSURE_GAIN`, that brings ``image``'s bright end to :data:`EXPOSURE_TARGET`
    (below 1 for a frame brighter than that).

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame.

    Returns:
        The gain, a float > 0.
    """
    h, w = image.shape[:2]
    probe = cv2.resize(image, (_PROBE_WIDTH, max(1, round(h * _PROBE_WIDTH / w))), interpolation=cv2.INTER_AREA)
    brightest = np.maximum(np.maximum(probe[..., 0], probe[..., 1]), probe[..., 2])  # 25x faster than max(axis=2)
    counts = np.cumsum(np.bincount(brightest.ravel(), minlength=256))
    bright = float(np.searchsorted(counts, 0.99 * brightest.size))  # the 99th percentile, as a grey level
    return min(MAX_EXPOSURE_GAIN, EXPOSURE_TARGET / max(bright, 1.0))


def brightened(image: np.ndarray, gain: float) -> np.ndarray:
    """``image`` ``(H, W, 3)`` uint8 with every channel multiplied by ``gain`` (clipped to 255), as a new array."""
    lut = np.clip(np.arange(256, dtype=np.float64) * gain + 0.5, 0, 255).astype(np.uint8)
    out: np.ndarray = cv2.LUT(image, lut)
    return out
