"""A second look inside a large box: the dice a container swallowed (issue 38, "inner boxes win").

Three dice thrown into a roll of tape, 1280 × 720, dice 48 px: at the detector's 640 px input the ring is one
"die" of 170 px and the dice inside it are not proposed at all, even at score 0.05 (rendered, ``tests/vision/
test_reader_scenes.py``); :func:`kosti.vision.detections.containers` can drop a container only when the dice inside
it are boxed too. So a box much larger than a die should be (:func:`large_boxes`) is read once more on its own:
the region is cut out of the frame and read by the same detector and classifier, and when that read finds two or
more separate dice inside it, each at most a quarter of its area (the containers rule), at least two of them read as
a face, those are the dice and the large box is dropped (it becomes a candidate, as a box the one-box-per-die rule
drops). A large box read surely as a face (a die seen close up) is not looked inside (:data:`LOOK_FACE_PROB`), and
one that holds no dice is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kosti.vision.detections import Detections, box_iou, box_sides, containers

#: A box is large enough to look inside when its side (root of its area) is at least this share of the frame's
#: shorter side (a ring of tape around three 48 px dice in a 1280 × 720 frame: 0.47; a die is 0.03–0.2 of it on
#: every shared set's photos but the close-ups; rune55-dedup's webcam close-ups reach 0.4 and are looked inside,
#: finding no dice there) ...
LARGE_FRAME_SHARE = 0.25
#: ... or at least this many times the median side of the frame's other dice (a tray beside a die thrown out).
LARGE_DIE_RATIO = 3.0
#: A large box the classifier reads as a face with at least this probability is a die seen close up and is not
#: looked inside: read again on their own, the pips of such a die are boxed as small "dice" read as 1 or uncertain
#: (rune55-dedup val close-ups and damiantab-d6 val ``dice50``, every one read at 1.00, lost their die to their pips
#: before this rule). A container is read as no face, or as a face at 0.47–0.76 (the rendered rings of tape).
LOOK_FACE_PROB = 0.9
#: Fewest dice read as a face (not uncertain) that a look inside must find for the large box to be a container.
LOOK_MIN_FACES = 2
#: Most boxes a frame is looked inside (the largest first): each look costs one more detector pass.
MAX_LOOKS = 2
#: Margin cut around the large box, as a share of its longer side on each side (the rim of a tray and the
#: classifier's padded crops of the dice next to it).
LOOK_PAD = 0.1

#: ``read(region) -> (dice, candidates)``: the reader's own read of an image region, without zoom or a look inside.
RegionReader = Callable[[np.ndarray], tuple[Detections, Detections]]


def large_boxes(dice: Detections, frame_hw: tuple[int, int]) -> np.ndarray:
    """``(N,)`` bool: the boxes of ``dice`` that are large enough to hold dice (:data:`LARGE_FRAME_SHARE`,
    :data:`LARGE_DIE_RATIO`) and not read surely as a face (``value_confidence`` below :data:`LOOK_FACE_PROB`; an
    uncertain die's is its best face's probability), at most :data:`MAX_LOOKS` of them, the largest."""
    sides = box_sides(dice.xyxy)
    big = sides >= LARGE_FRAME_SHARE * min(frame_hw)
    if len(sides) >= 2:
        for i in range(len(sides)):
            others = np.delete(sides, i)
            big[i] |= sides[i] >= LARGE_DIE_RATIO * float(np.median(others))
    big &= ~(dice.value_confidence >= LOOK_FACE_PROB)  # NaN (a box drawn by hand) is not a sure face
    order = np.argsort(-sides, kind="stable")
    chosen = np.zeros(len(sides), bool)
    chosen[[i for i in order if big[i]][:MAX_LOOKS]] = True
    return chosen


def look_inside(image: np.ndarray, dice: Detections, candidates: Detections, read: RegionReader,
                frac: Callable[[np.ndarray], np.ndarray]) -> tuple[Detections, Detections]:
    """Read again inside each large box of ``dice``; a box that holds two or more dice is replaced by them.

    Args:
        image: the ``(H, W, 3)`` uint8 BGR frame the dice were read on (after the reader's exposure gain).
        dice, candidates: the reader's result for ``image`` (:meth:`~kosti.vision.reader.DiceReader.read_candidates`).
        read: the reader's read of a region (its detector and classifier, no zoom, no look inside).
        frac: the reader's :meth:`~kosti.vision.reader.DiceReader.cover_fracs` (detector scores → the share of a
            box's area that must lie inside another for it to be held).

    Returns:
        ``(dice, candidates)``: unchanged when no large box held dice; otherwise each container's dice added to
        ``dice`` (those not already there, IoU < 0.5) and the container moved to ``candidates``. Dice stay in
        descending detector confidence.
    """
    if not len(dice):
        return dice, candidates
    h, w = image.shape[:2]
    added: list[Detections] = []
    dropped = np.zeros(len(dice), bool)
    for i in np.flatnonzero(large_boxes(dice, (h, w))):
        x1, y1, x2, y2 = (float(v) for v in dice.xyxy[i])
        pad = LOOK_PAD * max(x2 - x1, y2 - y1)
        cx1, cy1 = int(max(0.0, x1 - pad)), int(max(0.0, y1 - pad))
        cx2, cy2 = int(min(float(w), x2 + pad + 1)), int(min(float(h), y2 + pad + 1))
        inner, _ = read(np.ascontiguousarray(image[cy1:cy2, cx1:cx2]))
        if len(inner) < 2:
            continue
        shift = np.array([cx1, cy1, cx1, cy1], np.float32)
        inner = Detections(inner.xyxy + shift, inner.confidence, inner.value, inner.value_confidence, inner.data)
        boxes = np.vstack([dice.xyxy[i:i + 1], inner.xyxy])
        scores = np.concatenate([dice.confidence[i:i + 1], inner.confidence])
        held = containers(boxes, np.ones(len(boxes), bool), frac(scores))
        if not held[0]:
            continue
        # The dice inside: boxes mostly within the container, not the container again, not already read.
        inside = box_iou(inner.xyxy, dice.xyxy[i:i + 1])[:, 0] < 0.5
        others = np.delete(np.arange(len(dice)), i)
        if len(others):
            inside &= box_iou(inner.xyxy, dice.xyxy[others]).max(1) < 0.5
        if inside.sum() < 2 or int((inner.value[inside] != 0).sum()) < LOOK_MIN_FACES:
            continue
        dropped[i] = True
        added.append(inner[inside])
    if not dropped.any():
        return dice, candidates
    out = Detections.concat([dice[~dropped], *added])
    out = out[np.argsort(-out.confidence, kind="stable")]
    container = dice[dropped]
    container = Detections(container.xyxy, container.confidence, container.value, container.value_confidence,
                           {**container.data, "not_die": np.zeros(len(container), bool)})
    return out, Detections.concat([candidates, container])
