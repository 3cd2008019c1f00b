"""Which way up the table is: an angled camera's perspective, measured on the dice of settled throws.

A camera at an angle sees the dice near it larger than the dice far from it. In a frame with the far side of the
table at the top — what the face classifier needs: since v1.3 it reads a die seen from the side by the face at the top
of the die (docs/reader.md) — the dice grow towards the bottom of the frame. A camera mounted sideways or upside down,
or a phone streaming its sensor's orientation, gives frames where they grow sideways or upwards, and the classifier
then reads side faces: epanemu-dice val (photos from a seat) turned upside down reads 45 dice wrong instead of 2, die
accuracy 0.676 instead of 0.934; turned a quarter, 24 wrong (``benchmarks/orientation_check.py``).

:class:`OrientationCheck` fits, for each settled throw with enough dice spread over the frame, the slope of the log
of the die's side against its centre's position (:func:`perspective_slopes`), and once the last throws agree that
the dice grow in another direction than downwards, it names the clockwise turn (``[source] rotate``) that puts the
far side at the top. A camera looking straight down shows no such growth, and is never told to turn.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from kosti.vision.detections import box_sides

if TYPE_CHECKING:
    from kosti.vision.throws import Throw

#: Fewest dice, and least spread of their centres along an axis (share of the frame's side), for a throw to give a
#: slope along that axis.
MIN_DICE = 3
MIN_SPREAD = 0.15
#: Least median slope (change of ln(die side) across the whole frame) taken as perspective. On the labelled photos
#: of epanemu-dice train, taken from a seat, 84 of 156 photos with ≥ 3 dice have a vertical slope above 0.3 in
#: size and 81 of them upwards-shrinking (far side at the top); rune55-dedup val's mostly top-down photos have a
#: median slope of 0.04 (``benchmarks/orientation_check.py``).
MIN_SLOPE = 0.3
#: Fewest throws with a slope along the deciding axis before anything is said, the throws remembered, and the share
#: of them whose slope must have the median's sign.
MIN_THROWS = 6
WINDOW = 12
AGREE = 0.75


def perspective_slopes(xyxy: np.ndarray, width: int, height: int) -> tuple[float, float] | None:
    """Slopes of ``ln(side)`` against the dice's centres, ``(slope_x, slope_y)``, per the frame's width and height.

    Args:
        xyxy: ``(N, 4)`` float boxes ``[x1, y1, x2, y2]`` in pixels of a ``width × height`` frame; the side of a
            box is ``sqrt(w · h)``.
        width, height: the frame's size in pixels (> 0).

    Returns:
        The least-squares slopes of ``ln(side) ~ a + slope_x · cx / width + slope_y · cy / height`` (positive
        ``slope_y``: dice larger towards the bottom); an axis along which the centres spread less than
        :data:`MIN_SPREAD` of the frame gives ``nan`` and is left out of the fit. ``None`` when there are fewer
        than :data:`MIN_DICE` boxes with a positive area or neither axis is spread enough.

    Raises:
        ValueError: ``xyxy`` is not ``(N, 4)``, or ``width`` / ``height`` is not positive.
    """
    boxes = np.asarray(xyxy, np.float64)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"expected (N, 4) boxes, got shape {boxes.shape}")
    if width <= 0 or height <= 0:
        raise ValueError(f"frame size must be positive, got {width}×{height}")
    wh = boxes[:, 2:] - boxes[:, :2]
    boxes = boxes[(wh[:, 0] > 0) & (wh[:, 1] > 0)]
    if len(boxes) < MIN_DICE:
        return None
    side = np.log(box_sides(boxes))
    centre = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2 / width, (boxes[:, 1] + boxes[:, 3]) / 2 / height], 1)
    spread = centre.max(0) - centre.min(0) >= MIN_SPREAD
    if not spread.any():
        return None
    design = np.concatenate([np.ones((len(boxes), 1)), centre[:, spread]], 1)
    coef = np.linalg.lstsq(design, side, rcond=None)[0][1:]
    slopes = np.full(2, np.nan)
    slopes[spread] = coef
    return float(slopes[0]), float(slopes[1])


class OrientationCheck:
    """Remembers the perspective of the last settled throws and says when the picture should be turned.

    Feed it every settled throw's dice (:meth:`add`); :meth:`suggestion` then gives the clockwise turn (90, 180 or
    270 degrees) that would put the far side of the table at the top of the frames it was given, or ``None``. Call
    :meth:`reset` when the picture is turned or the camera changes. One thread adds (the runner's); another may
    :meth:`reset` and read :meth:`suggestion`, which copies what it reads — safe because each operation on the
    bounded deque is atomic under the GIL; a throw read just before a reset may still land after it (one stale
    slope among the next dozen, which the median outvotes).
    """

    def __init__(self, window: int = WINDOW) -> None:
        self._slopes: deque[tuple[float, float]] = deque(maxlen=window)

    def add(self, xyxy: np.ndarray, width: int, height: int) -> None:
        """Take one settled throw's dice ``xyxy`` ``(N, 4)`` (pixels of a ``width × height`` frame); a throw with
        too few or too bunched dice is ignored (:func:`perspective_slopes`). Raises ValueError as it does."""
        slopes = perspective_slopes(xyxy, width, height)
        if slopes is not None:
            self._slopes.append(slopes)

    def add_throw(self, throw: Throw) -> bool:
        """:meth:`add` a settled throw's roll-area dice in its frame (``throw.image``); a throw that corrects an
        earlier one (``throw.corrects``: the same dice, nudged) or has no frame or no dice is not counted again.
        Returns whether it was taken."""
        if throw.corrects is not None or throw.image is None or not throw.dice:
            return False
        h, w = throw.image.shape[:2]
        self.add(np.array([d.box for d in throw.dice], np.float64).reshape(-1, 4), w, h)
        return True

    def reset(self) -> None:
        """Forget every throw (the picture was turned, or another camera is read)."""
        self._slopes.clear()

    @property
    def throws(self) -> int:
        """How many of the remembered throws gave a slope."""
        return len(self._slopes)

    def suggestion(self) -> int | None:
        """The clockwise turn that would put the far side of the table at the top: 180 when the dice grow
        upwards, 90 when they grow to the right (the far side is on the left), 270 when to the left; ``None``
        while fewer than :data:`MIN_THROWS` throws give a slope along the axis of the larger median slope, when
        that median is under :data:`MIN_SLOPE` (a camera looking straight down), when fewer than :data:`AGREE`
        of those throws share its sign, or when the dice already grow downwards (the right way up)."""
        if not self._slopes:
            return None
        s = np.array(list(self._slopes), np.float64)
        medians = np.array([np.nanmedian(s[:, a]) if np.isfinite(s[:, a]).any() else 0.0 for a in (0, 1)])
        axis = int(np.argmax(np.abs(medians)))
        along = s[:, axis][np.isfinite(s[:, axis])]
        m = float(medians[axis])
        if len(along) < MIN_THROWS or abs(m) < MIN_SLOPE or float(np.mean(np.sign(along) == np.sign(m))) < AGREE:
            return None
        if axis == 1:
            return None if m > 0 else 180
        return 90 if m > 0 else 270

    def rotate_for(self, current: int) -> int | None:
        """The ``[source] rotate`` (degrees clockwise) to set on a source whose frames are turned ``current``
        degrees now: :meth:`suggestion` added to it (mod 360), or ``None`` when there is nothing to suggest."""
        turn = self.suggestion()
        return None if turn is None else (current + turn) % 360
