"""The review page's boxes to confirm (issue 41 item 2): what the shipped reader saw on an unreviewed photo but
did not take as a die comes back as ``suggested``, so the user taps instead of drawing. Real reader, rendered
numeral dice (faces the shipped classifier has no class for), a real capture folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fastapi import FastAPI
from fastapi.testclient import TestClient

from kosti.dashboard.routes.review import create_review_router
from kosti.datasets import capture as cap
from kosti.datasets.suggest import ReaderSuggester, uncertain_boxes
from kosti.models import MODELS_DIR
from kosti.sim.render import DieStyle, render_table
from kosti.vision.detections import Detections, box_iou
from kosti.vision.reader import DiceReader

NUMERAL = DieStyle("numeral", (200, 228, 240), (40, 40, 150), corner_radius=0.2,
                   marks=tuple((v, "numeral") for v in range(1, 7)))


def _throw(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    placed = [(int(rng.integers(1, 7)), 160.0 + 240 * i, float(rng.uniform(150, 330)), float(rng.uniform(0, 90)))
              for i in range(5)]
    frame, boxes = render_table(placed, "felt", NUMERAL, size=(1280, 480), die_px=52.0, seed=seed)
    return frame, np.asarray(boxes, np.float64)


def test_dice_left_out_of_the_labels_come_back_as_boxes_to_confirm(tmp_path: Path) -> None:
    root = tmp_path / "cap"
    reader = DiceReader(MODELS_DIR / "dice_det.onnx", MODELS_DIR / "dice_cls.onnx")
    writer = cap.CaptureWriter(root, model="shipped")
    truth, dropped = {}, {}
    for seed in range(4):
        frame, boxes = _throw(seed)
        dice = reader.read(frame)
        read = [(int(v), tuple(map(float, b)), float(c))
                for v, b, c in zip(dice.value, dice.xyxy, dice.value_confidence) if v > 0]
        # as the teach page saves a throw (a die read with no face is left out), and one die the user has not got
        image_id = writer.add(frame, read[1:], note="test")
        truth[image_id], dropped[image_id] = boxes, np.asarray([read[0][1]])
    app = FastAPI()
    app.include_router(create_review_router(root, suggest=ReaderSuggester(MODELS_DIR / "dice_det.onnx",
                                                                           MODELS_DIR / "dice_cls.onnx")))
    c = TestClient(app)
    covered = total = 0
    for image_id, boxes in truth.items():
        view = c.get(f"/api/review/images/{image_id}").json()
        labelled = np.asarray([d["box"] for d in view["dice"]]).reshape(-1, 4)
        sugg = view["suggested"]
        assert all(1 <= s["guess"] <= 6 and s["reason"] in ("not_die", "weak", "unlabelled") for s in sugg)
        sb = np.asarray([s["box"] for s in sugg]).reshape(-1, 4)
        # the die left out of the labels is offered back; no box offered sits on a labelled die
        assert len(sb) and box_iou(dropped[image_id], sb).max() >= 0.9, sugg
        assert not len(labelled) or box_iou(sb, labelled).max() < 0.3
        # the labels and the boxes to confirm together hold (nearly) every die: little left to draw by hand
        both = np.concatenate([labelled, sb])
        covered += int((box_iou(boxes, both) >= 0.5).any(1).sum())
        total += len(boxes)
    assert covered >= total - 1, (covered, total)
    # once reviewed, nothing more is suggested
    first = next(iter(truth))
    cap.set_reviewed(root, first)
    assert "suggested" not in c.get(f"/api/review/images/{first}").json()


def test_only_die_sized_boxes_off_the_labels_are_suggested() -> None:
    """Candidates of another size, stretched, or on a labelled die are not offered; overlapping ones once."""
    labelled = np.array([[100, 100, 150, 150], [300, 100, 350, 150]], np.float64)
    cand = Detections(
        np.array([[500, 100, 548, 150],    # a die-sized veto: offered
                  [503, 102, 550, 152],    # the same die again, weaker: not twice
                  [102, 98, 151, 149],     # on a labelled die
                  [700, 100, 900, 300],    # a tray (4x the side)
                  [900, 100, 1000, 130],   # a stick (aspect 3.3)
                  [40, 300, 80, 345]]),    # a weak die-sized box: offered
        np.array([0.6, 0.5, 0.9, 0.8, 0.7, 0.1]), np.zeros(6, np.int8), np.full(6, 0.4),
        {"guess": np.array([3, 3, 2, 1, 1, 5], np.int8), "not_die": np.array([1, 1, 0, 1, 0, 0], bool)})
    got = uncertain_boxes(cand, labelled)
    assert [(s["guess"], s["reason"]) for s in got] == [(3, "not_die"), (5, "weak")]
    assert got[0]["box"] == [500.0, 100.0, 548.0, 150.0] and got[0]["confidence"] == 0.6
    assert uncertain_boxes(Detections.empty(), labelled) == []
