"""Far tables from near photos: labelled photos laid out n × n in one frame, as a wider camera would see a table.

The shared photo sets are 640 px crops, so none shows what a 1080p webcam or a phone's photo of a whole table does:
dice with enough pixels to read that are small *at the detector's 640 px input*. Nine 640 px photos of one set in a
1920 px frame keep every die's pixels and put it at a third of its size at that input. Used by
``benchmarks/far_dice.py`` (the zoom's side, :meth:`kosti.vision.reader.DiceReader.zoom_side`) and its test.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def tiled_frame(photos: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int) -> tuple[np.ndarray, np.ndarray,
                                                                                              np.ndarray]:
    """One ``(n·H, n·W, 3)`` uint8 BGR frame of ``n * n`` photos laid out row by row, with their labels moved along.

    Args:
        photos: ``n * n`` tuples ``(image (H, W, 3) uint8, boxes (K, 4) float xyxy px, faces (K,) int)``, every
            image the first one's size.
        n: photos per side.

    Returns:
        ``(frame, boxes (ΣK, 4) float32 frame px, faces (ΣK,) int8)``.

    Raises:
        ValueError: not ``n * n`` photos, or photos of different sizes.
    """
    if n < 1 or len(photos) != n * n:
        raise ValueError(f"tiled_frame: {len(photos)} photos for a {n}x{n} frame")
    h, w = photos[0][0].shape[:2]
    if any(img.shape != photos[0][0].shape for img, _, _ in photos):
        raise ValueError("tiled_frame: the photos differ in size")
    frame = np.zeros((n * h, n * w, 3), np.uint8)
    boxes, faces = [], []
    for k, (img, xyxy, values) in enumerate(photos):
        r, c = divmod(k, n)
        frame[r * h:(r + 1) * h, c * w:(c + 1) * w] = img
        boxes.append(np.asarray(xyxy, np.float32).reshape(-1, 4) + np.array([c * w, r * h] * 2, np.float32))
        faces.append(np.asarray(values, np.int8).reshape(-1))
    return frame, np.concatenate(boxes), np.concatenate(faces)
