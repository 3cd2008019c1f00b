"""The shipped reader on rendered scenes of issue 38: dice thrown into a container are each one box (inner boxes
win), and a die whose face is no pip face is boxed as uncertain, never dropped.

Scenes from the project's renderer (``kosti.sim``): three ivory dice, 48 px, in a 1280 × 720 frame, inside a ring of
tape, a tray or a box lid drawn on the table top. Before the look inside a large box (``kosti.vision.inner_look``)
the ring was read as one die (uncertain, or a 4) and its three dice were not boxed at all, even as weak candidates;
the tray and the lid were read right without it (their rims are not boxed).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kosti.sim.table_top import render_table

FRAME = (1280, 720)
#: Centres of the three dice relative to the container's centre, px.
OFFSETS = ((-60, -30), (55, -35), (0, 50))


def _container_scene(kind: str, seed: int) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Three ivory dice inside a ``ring`` of tape, a ``tray`` or a box ``lid``; ``(frame, faces, boxes (3, 4))``."""
    rng = np.random.default_rng([seed, 38])
    cx, cy = 640 + rng.uniform(-80, 80), 360 + rng.uniform(-40, 40)
    dice = [(int(rng.integers(1, 7)), cx + dx, cy + dy, float(rng.uniform(0, 90))) for dx, dy in OFFSETS]
    table, _ = render_table([], "felt", size=FRAME, seed=seed)
    c = (int(cx), int(cy))
    if kind == "ring":  # a roll of tape: a grey band with a darker outer edge
        cv2.circle(table, c, 150, (200, 200, 205), 34, cv2.LINE_AA)
        cv2.circle(table, c, 168, (120, 120, 125), 3, cv2.LINE_AA)
    elif kind == "tray":  # a wooden tray: a brown rim around a lighter floor
        cv2.rectangle(table, (c[0] - 170, c[1] - 130), (c[0] + 170, c[1] + 130), (40, 70, 110), 26)
        cv2.rectangle(table, (c[0] - 157, c[1] - 117), (c[0] + 157, c[1] + 117), (70, 110, 150), -1)
    else:  # a cardboard box lid: a pale floor, a shadowed rim
        cv2.rectangle(table, (c[0] - 185, c[1] - 145), (c[0] + 185, c[1] + 145), (90, 150, 185), -1)
        cv2.rectangle(table, (c[0] - 185, c[1] - 145), (c[0] + 185, c[1] + 145), (50, 90, 120), 14)
    frame, boxes = render_table(dice, table, "ivory", size=FRAME, die_px=48.0, seed=seed)
    return frame, [v for v, *_ in dice], boxes


@pytest.fixture(scope="module")
def reader():
    from kosti.vision.reader import DiceReader

    return DiceReader(threads=1)


@pytest.mark.parametrize("kind", ["ring", "tray", "lid"])
@pytest.mark.parametrize("seed", [0, 1])
def test_three_dice_in_a_container_are_three_boxes(reader, kind: str, seed: int):
    from kosti.vision.detections import box_iou

    frame, faces, boxes = _container_scene(kind, seed)
    read = reader.read(frame)
    assert len(read) == 3, f"{kind}: {len(read)} boxes {read.xyxy.astype(int).tolist()} for 3 dice"
    iou = box_iou(boxes, read.xyxy)
    assert (iou.max(1) >= 0.5).all(), f"{kind}: a die not boxed: {iou.round(2).tolist()}"
    assert sorted(read.value.tolist()) == sorted(faces)
