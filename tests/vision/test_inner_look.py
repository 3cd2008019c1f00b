"""The look inside a large box (``kosti.vision.inner_look``) on hand-made boxes: which boxes are looked inside, and
when what the look finds replaces the box. The shipped reader on rendered containers: ``test_reader_scenes.py``."""

from __future__ import annotations

import numpy as np

from kosti.vision.detections import Detections
from kosti.vision.inner_look import LOOK_FACE_PROB, large_boxes, look_inside

FRAME = np.zeros((720, 1280, 3), np.uint8)
RING = [490, 175, 835, 520]  # 345 px square: 0.48 of the frame's height


def _dice(rows, vconf):
    """Detections from ``(x1, y1, x2, y2, value)`` rows, detector score 0.8, the given value confidences."""
    a = np.asarray(rows, np.float64).reshape(-1, 5)
    return Detections(a[:, :4], np.full(len(a), 0.8), a[:, 4].astype(int), np.asarray(vconf, np.float32),
                      {"guess": np.maximum(a[:, 4].astype(int), 1)})


def _region_reader(found):
    """A region read that returns ``found`` (boxes in the region's own pixels) and records each region's shape."""
    seen = []

    def read(region):
        seen.append(region.shape)
        return found, Detections.empty()

    return read, seen


#: Three 48 px dice inside RING's region (its pixels: RING less a 10 % margin).
INSIDE = _dice([[120, 120, 168, 168, 3], [230, 110, 278, 158, 4], [175, 215, 223, 263, 4]], [0.99, 0.98, 0.97])


def test_a_container_read_as_no_sure_face_gives_way_to_its_dice():
    read, seen = _region_reader(INSIDE)
    ring = _dice([[*RING, 0]], [0.51])
    dice, candidates = look_inside(FRAME, ring, Detections.empty(), read, lambda s: np.full(len(s), 0.6))
    assert seen == [(415, 415, 3)]  # the box and a margin of 34.5 px each side, read once
    assert sorted(dice.value.tolist()) == [3, 4, 4]
    x0, y0 = 455, 140  # the region's origin: RING less its margin, rounded down
    assert np.allclose(dice.xyxy[np.argsort(dice.xyxy[:, 0])][0], [x0 + 120, y0 + 120, x0 + 168, y0 + 168])
    assert len(candidates) == 1 and np.allclose(candidates.xyxy[0], RING) and not candidates.data["not_die"][0]


def test_a_die_seen_close_up_is_not_looked_inside():
    read, seen = _region_reader(INSIDE)
    close = _dice([[*RING, 0]], [LOOK_FACE_PROB])  # read surely as a face: its pips would be boxed as "dice"
    assert not large_boxes(close, FRAME.shape[:2]).any()
    dice, _ = look_inside(FRAME, close, Detections.empty(), read, lambda s: np.full(len(s), 0.6))
    assert seen == [] and dice.equals(close)


def test_boxes_inside_that_read_no_face_leave_the_box_alone():
    pips = Detections(INSIDE.xyxy, INSIDE.confidence, np.zeros(3, np.int8), np.full(3, 0.3), {"guess": np.ones(3)})
    read, seen = _region_reader(pips)
    box = _dice([[*RING, 0]], [0.6])
    dice, candidates = look_inside(FRAME, box, Detections.empty(), read, lambda s: np.full(len(s), 0.6))
    assert len(seen) == 1 and dice.equals(box) and len(candidates) == 0


def test_a_small_box_or_a_die_among_its_like_is_not_looked_inside():
    row = _dice([[100 + 80 * i, 100, 150 + 80 * i, 150, 2] for i in range(4)], [0.5] * 4)
    assert not large_boxes(row, FRAME.shape[:2]).any()
    tray_beside_dice = _dice([[100, 100, 150, 150, 2], [200, 100, 250, 150, 3], [400, 100, 600, 260, 0]],
                             [0.99, 0.99, 0.4])
    assert large_boxes(tray_beside_dice, FRAME.shape[:2]).tolist() == [False, False, True]  # 3x the others' side
