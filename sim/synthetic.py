"""Quick synthetic dice frames for tests and benchmarks of the reader (NumPy/OpenCV only).

:func:`synthetic_frame` draws flat white dice with black pips on a plain table: cheaper and simpler than
the procedural renderer (:mod:`kosti.sim.render`), with exact boxes and values. Nothing here is used at
run time.
"""

from __future__ import annotations

import cv2
import numpy as np

#: Pip positions on a unit face (x, y in 0–1) for faces 1–6.
PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)],
}


def synthetic_frame(
    width: int = 1280, height: int = 720, n_dice: int = 5, side: int = 70, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw a top-down frame of ``n_dice`` white dice with black pips on green felt.

    Dice do not overlap and stay inside the frame. Good enough to exercise the pipeline and time it
    at a realistic resolution; not a substitute for real photos when measuring accuracy.

    Args:
        width, height: frame size in pixels; side: die side in pixels; seed: RNG seed.

    Returns:
        ``image (H, W, 3)`` uint8 BGR, ``boxes (n, 4)`` float32 ``[x1, y1, x2, y2]`` pixels,
        ``values (n,)`` int8 faces 1–6.

    Raises:
        ValueError: the dice cannot be placed without overlap.
    """
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 6, (height, width, 1))
    img = np.clip(np.array([40, 110, 45], np.float64) + noise, 0, 255).astype(np.uint8)
    boxes: list[list[float]] = []
    values = rng.integers(1, 7, n_dice).astype(np.int8)
    for v in values:
        for _ in range(1000):
            x = int(rng.integers(side, width - 2 * side))
            y = int(rng.integers(side, height - 2 * side))
            b = [x, y, x + side, y + side]
            if all(b[0] > o[2] + 8 or b[2] < o[0] - 8 or b[1] > o[3] + 8 or b[3] < o[1] - 8 for o in boxes):
                break
        else:
            raise ValueError(f"cannot place {n_dice} dice of side {side} in {width}x{height}")
        cv2.rectangle(img, (x + 3, y + 3), (x + side + 3, y + side + 3), (20, 60, 25), -1)  # shadow
        cv2.rectangle(img, (x, y), (x + side, y + side), (235, 235, 235), -1)
        r = max(side // 10, 2)
        for px, py in PIPS[int(v)]:
            cv2.circle(img, (int(x + px * side), int(y + py * side)), r, (20, 20, 20), -1, cv2.LINE_AA)
        boxes.append([float(c) for c in b])
    blurred: np.ndarray = cv2.GaussianBlur(img, (3, 3), 0)
    return blurred, np.asarray(boxes, np.float32).reshape(-1, 4), values
