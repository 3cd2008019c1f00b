"""The shipped reader on rendered scenes of issue 38: dice thrown into a container are each one box (inner boxes
win), and a die whose face is no pip face is boxed as uncertain, never dropped.

Scenes from the project's renderer (``kosti.sim``): three ivory dice, 48 px, in a 1280 × 720 frame, inside a ring of
tape, a tray or a box lid drawn on the table top. Before the look inside a large box (``kosti.vision.inner_look``)
the ring was read as one die (uncertain, or a 4) and its three dice were not boxed at all, even as weak candidates;
the tray and the lid were read right without it (their rims are not boxed). Custom faces: a row of blue dice with
skulls and emblems (boxed as uncertain by v1.3) and of ivory numeral dice (read as 1 by v1.3: marked as not met).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kosti.sim.dice import DieStyle
from kosti.sim.table_top import render_table

FRAME = (1280, 720)
#: Custom dice: blue with a skull for 1 and an emblem for 6; ivory with a digit on every face.
CUSTOM = (DieStyle("skull_emblem", (170, 90, 40), (235, 235, 235), marks=((1, "skull"), (6, "emblem"))),
          DieStyle("numeral", (200, 228, 240), (40, 40, 150), corner_radius=0.2,
                   marks=tuple((v, "numeral") for v in range(1, 7))))
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


def _custom_scene(style: DieStyle) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Five dice of ``style`` in a row, 54 px, on cloth, seen slightly from the side: faces 1–5 for the numeral dice,
    1, 6, 1, 6, 3 for the skull/emblem dice (a pip 3 as the control). ``(frame, boxes (5, 4), faces)``."""
    faces = [1, 6, 1, 6, 3] if style.name == "skull_emblem" else [1, 2, 3, 4, 5]
    dice = [(v, 240.0 + 200 * i, 360.0 + 40 * (i % 2), 20.0 * i) for i, v in enumerate(faces)]
    frame, boxes = render_table(dice, "cloth", style, size=FRAME, die_px=54.0, seed=7, tilt=(0.0, 0.1), shadow=0.45)
    return frame, boxes, faces


NOT_MET = pytest.mark.xfail(strict=True, reason=(
    "issue 38 item 1, not met by the shipped reader v1.3: it reads every numeral face here as a 1. The candidate "
    "classifier cls_v15 boxes each as uncertain but was not shipped (model card, 'Reader v2'); strict, so a reader "
    "that meets it fails here until this mark is removed"))


@pytest.mark.parametrize("style", [CUSTOM[0], pytest.param(CUSTOM[1], marks=NOT_MET)], ids=lambda st: st.name)
def test_a_die_with_an_unknown_face_is_boxed_uncertain_never_dropped(reader, style: DieStyle):
    from kosti.vision.detections import box_iou

    frame, boxes, faces = _custom_scene(style)
    read = reader.read(frame)
    iou = box_iou(boxes, read.xyxy) if len(read) else np.zeros((len(boxes), 0))
    for i, face in enumerate(faces):
        assert iou.shape[1] and iou[i].max() >= 0.5, f"die {i} ({style.name}, face {face}) not boxed"
        read_as = int(read.value[iou[i].argmax()])
        if dict(style.marks).get(face, "pips") != "pips":
            assert read_as == 0, f"die {i} ({style.name}, a marked {face}) read as {read_as}"
        else:
            assert read_as == face  # the pip control
