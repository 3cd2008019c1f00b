"""Die crops for the face classifier — one definition shared by training-data tools and the reader.

The face classifier never sees the detector's letterboxed input: it reads a square crop of the
full-resolution frame around each detected die, so small dice keep every pip pixel the camera gave.
Training crops (``kosti.datasets.prepare``) and runtime crops (``kosti.vision.reader``) both come from
:func:`square_crop`, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

#: Side of the square crop relative to the longer side of the die's box (1.25 keeps the die's edges
#: and a margin of table so that a slightly loose or tight box still shows the whole face).
CROP_PAD = 1.25
#: Classifier input size in pixels (square). Dice are 30–250 px in the shared photos; 64 px keeps a
#: six's pips 6–8 px apart, enough to count them, and costs < 1 ms per die on one CPU core.
CROP_SIZE = 64
#: Views per crop in the reader's test-time augmentation (:func:`tta_views`): the four 90° rotations.
TTA_VIEWS = 4
#: The reader's test-time views by name (``reader.json``'s ``views``, :func:`reader_views`) and how many each
#: gives per crop: ``turns`` the four 90° rotations (a classifier trained on crops turned at random: v0.1–v1.2),
#: ``upright`` the crop and its mirror image (a classifier trained on upright crops of dice seen from the side,
#: which reads the face at the top of the crop as the die's top face: v1.3).
VIEW_COUNTS = {"turns": TTA_VIEWS, "upright": 2}


def square_crop(
    image: np.ndarray,
    box: np.ndarray | Sequence[float],
    pad: float = CROP_PAD,
    size: int = CROP_SIZE,
) -> np.ndarray:
    """Cut a square, padded crop centred on a die's box and resize it for the face classifier.

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame (any size).
        box: ``[x1, y1, x2, y2]`` in pixels of ``image`` (float).
        pad: crop side = ``pad * max(box width, box height)``.
        size: output side in pixels.

    Returns:
        ``(size, size, 3)`` uint8 BGR crop. Parts of the square that fall outside the frame are filled
        by replicating the border, so dice at the edge of the frame keep their shape.

    Raises:
        ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array or ``box`` is empty.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {image.shape} {image.dtype}")
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1) * pad
    if not np.isfinite(side) or side < 1.0:
        raise ValueError(f"empty box {list(box)}")
    cx, cy = (x1 + x2) / 2.0, (y1 + y2) / 2.0
    # Affine map: crop square → (size, size). warpAffine handles sub-pixel centres and borders at once.
    scale = size / side
    m = np.array(
        [[scale, 0.0, size / 2.0 - scale * cx], [0.0, scale, size / 2.0 - scale * cy]], dtype=np.float64
    )
    interp = cv2.INTER_AREA if scale < 1.0 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE)


def tta_views(crops: np.ndarray, mirror: bool = False) -> np.ndarray:
    """The reader's test-time views of ``(K, h, w, 3)`` crops: ``(4K, h, w, 3)`` (``(8K, …)`` with ``mirror``),
    view-major: rows ``v*K … (v+1)*K - 1`` hold view ``v`` of every crop.

    The crops rotated by 0°, 90°, 180° and 270° (a die's value does not change when it is turned); with
    ``mirror`` also the same four mirrored left–right, the 8 symmetries of a square (a pip face keeps its value
    under each). Measured for v1.1 and not used by the reader (``models/README.md``, "v1.1"): at the same
    thresholds the mirrored views cut wrong reads on the selection splits only where ``value_conf`` is low
    (0.6: 1.24 % → 0.96 %); at the shipped 0.7 they read no better (image_exact 0.662 vs 0.666) for twice the
    classifier's time.
    """
    sources = (crops, crops[:, :, ::-1]) if mirror else (crops,)
    return np.ascontiguousarray(np.concatenate([np.rot90(c, r, axes=(1, 2)) for c in sources for r in range(4)]))


def reader_views(crops: np.ndarray, views: str = "turns") -> np.ndarray:
    """The test-time views ``views`` (a key of :data:`VIEW_COUNTS`) of ``(K, h, w, 3)`` crops, view-major:
    ``(VIEW_COUNTS[views] * K, h, w, 3)``; rows ``v*K … (v+1)*K - 1`` hold view ``v`` of every crop, view 0 the
    crop itself.

    ``turns``: :func:`tta_views` (the four 90° rotations). ``upright``: the crop and its left–right mirror image,
    which keeps the top of the crop on top — turning a die seen from the side would put its top face on the left
    or the bottom of the crop, where a classifier trained upright reads the face towards the camera instead.

    Raises:
        ValueError: ``views`` is not a known name.
    """
    if views == "turns":
        return tta_views(crops)
    if views == "upright":
        return np.ascontiguousarray(np.concatenate([crops, crops[:, :, ::-1]]))
    raise ValueError(f"unknown test-time views {views!r} ({', '.join(VIEW_COUNTS)})")
