"""Crop first, rotate only the crop (issue 14): ``rotated_crop`` gives the crop of the whole rotated photo."""

from __future__ import annotations

import random

import numpy as np

from kosti.datasets.prepare import _rotated, rotated_crop
from kosti.vision.crops import CROP_SIZE, square_crop


def test_rotated_crop_equals_the_crop_of_the_rotated_photo():
    rng = np.random.default_rng(0)
    # a textured 720p "photo": smooth gradients + blobs, so interpolation differences stay small but visible
    yy, xx = np.mgrid[0:720, 0:1280].astype(np.float32)
    img = np.stack([(xx * 0.2) % 256, (yy * 0.35) % 256, ((xx + yy) * 0.1) % 256], -1)
    img += rng.normal(0, 8, img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    r = random.Random(1)
    diffs = []
    for _ in range(200):
        side = r.uniform(20, 220)
        cx, cy = r.uniform(-15, 1295), r.uniform(-15, 735)  # dice at and beyond the edges too
        angle = r.uniform(-180, 180)
        box = [cx + r.uniform(-8, 8) - side / 2, cy - side / 2, cx + side / 2, cy + r.uniform(-8, 8) + side / 2]
        want = square_crop(_rotated(img, (cx, cy), angle), box)
        got = rotated_crop(img, (cx, cy), angle, box)
        assert got.shape == want.shape == (CROP_SIZE, CROP_SIZE, 3) and got.dtype == np.uint8
        d = np.abs(got.astype(int) - want.astype(int))
        diffs.append(d)
        assert d.max() <= 2, "only interpolation rounding may differ"
    assert np.mean([d.mean() for d in diffs]) < 0.05
