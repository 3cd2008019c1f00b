"""Following the dice of a read throw until the next rest (issue 40: a correction only with continuity), and the
small geometry helpers on lists of dice the throw detector shares (:mod:`kosti.vision.throw_detector`).

Pure functions on frames and :class:`~kosti.vision.throws.Die` lists, and :class:`FollowsThrows`, the throw
detector's part that keeps :class:`Continuity`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import cv2
import numpy as np

from kosti.vision.detections import Detections, box_iou, box_sides
from kosti.vision.hands import appearance_change
from kosti.vision.settle import (
    DIE_FRACTION,
    IDENTITY,
    SettleDetector,
    SettleUpdate,
    estimate_camera_motion,
    scale_transform,
)
from kosti.vision.sources import Frame
from kosti.vision.throws import Die, Throw
from kosti.vision.vote import reason_pair

#: Continuity of a throw (issue 40): around a die that changed after the throw was read, a square reaching this many
#: die sides beyond its box on each side is watched (a correction moves a die at most 1.5 sides); the die is *gone*
#: when fewer than :data:`GONE_SHARE` of the pixels that differed from the cloth there at the throw still differ
#: (picked up), and *covered* when more than :data:`COVERED_SHARE` times as many do (a hand over it).
AROUND_SIDES = 1.5
GONE_SHARE = 0.4
COVERED_SHARE = 2.5
#: Colour distance (BGR, 0–441) from the cloth at which a pixel is part of a die, a hand or anything else on it.
OBJECT_COLOUR = 40.0


@dataclass
class Continuity:
    """The last throw's dice followed frame by frame until the next rest (issue 40: a correction only with continuity).

    Attributes:
        throw: the throw followed.
        image: its settle frame, ``(H, W, 3)`` uint8 BGR (the reference; not copied).
        small: the settle detector's small grey image of that frame (:attr:`SettleDetector.last_small`), which
            each later frame is registered onto (:func:`rest_motion`: the camera's motion since).
        boxes: ``(N, 4)`` its dice's boxes, frame pixels.
        cloth: ``(N, 3)`` the cloth's colour around each die (BGR, the median of the watched square's border).
        baseline: ``(N,)`` pixels around each die that differed from the cloth at the throw.
        disturbed: indices of the dice whose box changed since (:data:`kosti.vision.settle.DIE_FRACTION`).
        camera: the camera's motion from ``small`` to the last frame followed (small px; the last one found).
        broken: why the dice did not stay in view, unchanged but for one (``"dice"``: two or more changed; ``"gone"``;
            ``"covered"``; ``"camera"``: the picture's size changed), or None while they did.
    """

    throw: Throw
    image: np.ndarray
    small: np.ndarray | None
    boxes: np.ndarray
    cloth: np.ndarray
    baseline: np.ndarray
    disturbed: set[int] = field(default_factory=set)
    broken: str | None = None
    camera: np.ndarray = field(default_factory=lambda: np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))


def around_square(image: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, float, int, int]:
    """The square of ``image`` reaching :data:`AROUND_SIDES` die sides beyond ``box`` (frame pixels) on each side,
    clipped to the frame and shrunk to at most 64 px wide (BGR uint8), with its scale (crop px per frame px) and
    its top-left corner in frame pixels."""
    h, w = image.shape[:2]
    side = float(max(box[2] - box[0], box[3] - box[1], 1.0))
    cx, cy, r = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, (0.5 + AROUND_SIDES) * side
    x1, y1 = min(w - 1, max(0, int(cx - r))), min(h - 1, max(0, int(cy - r)))
    x2, y2 = max(x1 + 1, min(w, int(np.ceil(cx + r)))), max(y1 + 1, min(h, int(np.ceil(cy + r))))
    crop = image[y1:y2, x1:x2]
    scale = 1.0
    if crop.shape[1] > 64:
        scale = 64 / crop.shape[1]
        crop = cv2.resize(crop, (64, max(1, round(crop.shape[0] * scale))), interpolation=cv2.INTER_AREA)
    return crop, scale, x1, y1


def cloth_colour(around: np.ndarray) -> np.ndarray:
    """``(3,)`` the cloth's colour around a die: the median BGR of the border (2 px) of its square."""
    border = np.concatenate([around[:2].reshape(-1, 3), around[-2:].reshape(-1, 3),
                             around[:, :2].reshape(-1, 3), around[:, -2:].reshape(-1, 3)])
    cloth: np.ndarray = np.median(border, axis=0)
    return cloth


def object_pixels(image: np.ndarray, boxes: np.ndarray, i: int, cloth: np.ndarray) -> float:
    """Pixels around die ``i`` of ``boxes`` (``(N, 4)`` frame pixels; :func:`around_square`) whose colour is more than
    :data:`OBJECT_COLOUR` from ``cloth`` (a die, a hand), the other dice's boxes left out, in pixels of the square."""
    around, scale, x0, y0 = around_square(image, boxes[i])
    d = np.linalg.norm(around.astype(np.float32) - cloth.astype(np.float32), axis=-1) > OBJECT_COLOUR
    for j, b in enumerate(boxes):
        if j != i:
            a, c = max(0, int((b[0] - x0) * scale)), max(0, int((b[1] - y0) * scale))
            d[c:max(c, int(np.ceil((b[3] - y0) * scale))), a:max(a, int(np.ceil((b[2] - x0) * scale)))] = False
    return float(np.count_nonzero(d))


def rest_motion(before: np.ndarray | None, now: np.ndarray | None) -> np.ndarray | None:
    """The camera's motion between two rests' settle images (``(h, w_small)`` uint8 gray): a ``(2, 3)``
    transform of small-image pixels (:func:`estimate_camera_motion`, up to a tenth of the width and 5°),
    or None when there is none, none is found, or the images cannot be compared."""
    if before is None or now is None or before.shape != now.shape:
        return None
    m = estimate_camera_motion(before, now, max_shift=0.1 * now.shape[1], max_angle_deg=5.0)
    return None if m is None or np.allclose(m, IDENTITY, atol=1e-3) else m


def registered_rest(before: np.ndarray | None, now: np.ndarray | None) -> np.ndarray | None:
    """Settle image ``before`` warped onto ``now`` through the camera's motion between them
    (:func:`rest_motion`; unchanged when there is none)."""
    m = rest_motion(before, now)
    if m is None or before is None or now is None:
        return before
    out: np.ndarray = cv2.warpAffine(before, m, (now.shape[1], now.shape[0]), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE)
    return out


def changed_since(box: tuple[float, float, float, float], before: np.ndarray | None, now: np.ndarray | None,
                   width: int, diff_threshold: float, min_share: float = 0.3) -> bool:
    """Whether the table changed under ``box`` (frame pixels, frame ``width`` px wide) between two settle
    images ``before`` and ``now`` (``(h, w_small)`` uint8 gray, :attr:`SettleDetector.last_small`): at least
    ``min_share`` of the box's small-image pixels differ by more than ``diff_threshold`` grey levels. A
    die that landed there changes most of its box; a token lying there since the last rest changes none
    (0.3: a die whose box partly covers one that lay there before still changes well over half). False
    without a ``before`` image or with images of different sizes (nothing to compare)."""
    if before is None or now is None or before.shape != now.shape:
        return False
    s = now.shape[1] / float(width)
    x1, y1 = max(0, int(box[0] * s)), max(0, int(box[1] * s))
    x2, y2 = min(now.shape[1], int(np.ceil(box[2] * s))), min(now.shape[0], int(np.ceil(box[3] * s)))
    if x2 <= x1 or y2 <= y1:
        return False
    diff = cv2.absdiff(now[y1:y2, x1:x2], before[y1:y2, x1:x2])
    return float(np.count_nonzero(diff > diff_threshold)) / diff.size >= min_share


def die_side(dice: list[Die]) -> float:
    """Median side (pixels) of the dice's boxes (0 when none)."""
    if not dice:
        return 0.0
    return float(np.median(box_sides(dice_boxes(dice))))


def move_boxes(xyxy: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``(N, 4)`` boxes moved by the ``(2, 3)`` transform ``m`` (centres mapped, sizes kept), float32."""
    b = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    c = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, np.ones(len(b))], 1) @ np.asarray(m).T
    half = np.stack([(b[:, 2] - b[:, 0]) / 2, (b[:, 3] - b[:, 1]) / 2], 1)
    return np.concatenate([c - half, c + half], 1).astype(np.float32)


def dice_boxes(dice: list[Die]) -> np.ndarray:
    """``(N, 4)`` float32 boxes of ``dice``."""
    return np.array([d.box for d in dice], dtype=np.float32).reshape(-1, 4)


def unmoved(now: list[Die], before: list[Die], iou: float = 0.7) -> bool:
    """True when every die now lies where one of ``before`` lay (box IoU ≥ ``iou``), whatever its face
    reads: nobody threw, dice were at most taken away."""
    if not now or not before:
        return False
    m = box_iou(np.array([d.box for d in now]), np.array([d.box for d in before]))
    used: set[int] = set()
    for i in range(len(now)):
        j = int(np.argmax(m[i]))
        if m[i, j] < iou or j in used:
            return False
        used.add(j)
    return True


def matched(die: Die, others: list[Die], iou: float = 0.7) -> bool:
    """True when ``die``'s box matches one of ``others`` (IoU ≥ ``iou``)."""
    return bool(others) and float(box_iou(np.array([die.box]), np.array([d.box for d in others])).max()) >= iou


def to_detections(dice: list[Die]) -> Detections:
    if not dice:
        return Detections.empty()
    return Detections(
        np.array([d.box for d in dice]), np.array([d.det_confidence for d in dice]),
        np.array([d.value for d in dice]), np.array([d.confidence for d in dice]),
    )


class FollowsThrows:
    """The throw detector's part that follows the last throw's dice until the next rest and judges whether a change
    corrects that throw (issue 40; mixed into :class:`kosti.vision.throw_detector.ThrowDetector`, which sets the
    attributes below)."""

    settle: SettleDetector
    continuity: Continuity | None
    continue_s: float
    quiet_dice: float
    per_die: bool
    _rest: deque[tuple[Frame, np.ndarray]]

    def _watch_from(self, throw: Throw, image: np.ndarray) -> None:
        """Follow ``throw``'s dice from its settle frame ``image`` on (:class:`Continuity`)."""
        boxes = dice_boxes(throw.dice).astype(np.float64)
        if not len(boxes):
            self.continuity = None
            return
        cloth = np.array([cloth_colour(around_square(image, b)[0]) for b in boxes]).reshape(-1, 3)
        baseline = np.array([object_pixels(image, boxes, i, c) for i, c in enumerate(cloth)], np.float64)
        self.continuity = Continuity(throw, image, self.settle.last_small, boxes, cloth, baseline)

    def _follow(self, frame: Frame, update: SettleUpdate) -> None:
        """One frame of :attr:`continuity`: which of the last throw's dice changed, and whether one went or was
        covered. Frames in which no pixel changed cost nothing."""
        c = self.continuity
        if c is None or c.broken is not None or frame.t - c.throw.time_s > self.continue_s:
            return
        if (update.motion == 0.0 and update.drift == 0.0) or frame.image is c.image:
            return  # not a pixel changed (a fixed camera over a still table)
        if frame.image.shape != c.image.shape:
            c.broken = "camera"
            return
        w = frame.image.shape[1]
        now = self.settle.last_small
        if c.small is not None and now is not None and c.small.shape == now.shape:
            m = estimate_camera_motion(c.small, now, max_shift=0.1 * now.shape[1], max_angle_deg=5.0)
            if m is not None:  # (none found in this frame: the camera stays where it was last found)
                c.camera = m
        rel = scale_transform(c.camera, w / self.settle.width)
        boxes = move_boxes(c.boxes, rel)
        for i, b in enumerate(boxes):
            if i not in c.disturbed and appearance_change(c.image, frame.image, b, rel,
                                                         gain=self.settle.gain) > DIE_FRACTION:
                c.disturbed.add(i)
        if len(c.disturbed) > 1:
            c.broken = "dice"
            return
        for i in c.disturbed:
            n = object_pixels(frame.image, boxes, i, c.cloth[i])
            if n < GONE_SHARE * c.baseline[i]:
                c.broken = "gone"
            elif n > COVERED_SHARE * max(1.0, c.baseline[i]):
                c.broken = "covered"

    def _continues(self, last: Throw, roll: list[Die], before: list[Die], t: float) -> bool:
        """True when this rest is the last throw continuing: same count, soon after it, and — with ``per_die``
        (issue 40) — the same dice stayed in view the whole time (:attr:`continuity`: no frame with a die gone or
        covered, at most one die changed) and that one die alone moved, by at most 1.5 die sides; without it, at
        most two dice moved, each by at most 1.5 die sides, and the motion in between was quiet (no hand, no
        throw). A wrong merge deletes a scored throw unseen; a missed one is entered on the keypad: when in
        doubt, a new throw."""
        if not last.dice or len(roll) != len(last.dice) or t - last.time_s > self.continue_s:
            return False
        side = die_side(last.dice)
        if self.settle.last_small is None:
            return False
        m = box_iou(dice_boxes(roll), dice_boxes(before))
        moved_now = [i for i in range(len(roll)) if m[i].max() < 0.7]
        if self.per_die:
            c = self.continuity
            if c is None or c.throw is not last or c.broken is not None or len(c.disturbed) != 1 or len(moved_now) != 1:
                return False
        else:
            area = self.settle.last_small.size
            scale = self.settle.width / float(self._rest[-1][0].image.shape[1])
            die_fraction = (side * scale) ** 2 / area
            if self.settle.motion_peak > max(0.004, self.quiet_dice * die_fraction):
                return False
        if not moved_now or len(moved_now) > 2:
            return False
        free = [j for j in range(len(before)) if m[:, j].max() < 0.7]
        for i in moved_now:
            centre = np.array(roll[i].center)
            if not any(np.hypot(*(centre - np.array(before[j].center))) <= 1.5 * side for j in free):
                return False
        return True

    def _correction_reason(self, last: Throw, roll: list[Die], before: list[Die]) -> tuple[str, str]:
        """The ``corrected`` reason of a throw that corrects ``last``, saying why (English / Russian)."""
        m = box_iou(dice_boxes(roll), dice_boxes(before))
        moved = [i for i in range(len(roll)) if m[i].max() < 0.7]
        gone = [j for j in range(len(before)) if m[:, j].max() < 0.7]

        def face(d: Die) -> str:
            return "?" if d.uncertain else str(d.value)

        if len(moved) == 1 and len(gone) == 1:
            a, b = face(before[gone[0]]), face(roll[moved[0]])
            en = f"a die turned from {a} to {b} after the throw was read"
            ru = f"кость перевернулась с {a} на {b} после того, как бросок был прочитан"
        else:
            en, ru = "a die moved on after the throw was read", "кость сдвинулась после того, как бросок был прочитан"
        others = len(roll) - len(moved)
        if self.per_die and others:
            en += (", the other die stayed where it lay" if others == 1 else ", the other dice stayed where they lay")
            ru += (", другая кость не сдвинулась" if others == 1 else ", остальные кости не сдвинулись")
        if self.per_die:
            en += " and every die stayed in view"
            ru += (" и все кости оставались на виду" if len(roll) > 1 else " и оставалась на виду")
        else:
            en += ", with no hand or throw in between"
            ru += ", без руки и без броска между ними"
        return reason_pair("corrected", f"{en}: the throw is corrected", f"{ru}: бросок исправлен")
