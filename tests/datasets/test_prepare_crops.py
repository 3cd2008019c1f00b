"""Crop first, rotate only the crop (issue 14): ``rotated_crop`` gives the crop of the whole rotated photo."""

from __future__ import annotations

import random

import numpy as np

from kosti.datasets.prepare import _rotated, rotated_crop
from kosti.vision.crops import CROP_SIZE, square_crop


def test_rotated_crop_equals_the_crop_of_the_rotated_photo():
    rng = np.random.default_rng(0)
    # a textured 720p "photo": smooth gradients + blobs, so interpolation differences stay small but visible
    yy, xx = np.mgrid[0:720, 0:1280].astype(np.float32)
    img = np.stack([(xx * 0.2) % 256, (yy * 0.35) % 256, ((xx + yy) * 0.1) % 256], -1)
    img += rng.normal(0, 8, img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    r = random.Random(1)
    diffs = []
    for _ in range(200):
        side = r.uniform(20, 220)
        cx, cy = r.uniform(-15, 1295), r.uniform(-15, 735)  # dice at and beyond the edges too
        angle = r.uniform(-180, 180)
        box = [cx + r.uniform(-8, 8) - side / 2, cy - side / 2, cx + side / 2, cy + r.uniform(-8, 8) + side / 2]
        want = square_crop(_rotated(img, (cx, cy), angle), box)
        got = rotated_crop(img, (cx, cy), angle, box)
        assert got.shape == want.shape == (CROP_SIZE, CROP_SIZE, 3) and got.dtype == np.uint8
        d = np.abs(got.astype(int) - want.astype(int))
        diffs.append(d)
        assert d.max() <= 2, "only interpolation rounding may differ"
    assert np.mean([d.mean() for d in diffs]) < 0.05


def _photo_set(root):
    """A one-photo YOLO set: two labelled dice (faces 3 and 5) on a grey 320×240 photo."""
    import cv2

    (root / "images" / "train").mkdir(parents=True)
    (root / "labels" / "train").mkdir(parents=True)
    img = np.full((240, 320, 3), 128, np.uint8)
    cv2.rectangle(img, (40, 40), (80, 80), (255, 255, 255), -1)
    cv2.rectangle(img, (200, 100), (250, 150), (255, 255, 255), -1)
    cv2.imwrite(str(root / "images" / "train" / "p.png"), img)
    # classes 2 and 4 are faces 3 and 5 (FACE_CLASSES: class k is face k + 1)
    (root / "labels" / "train" / "p.txt").write_text("2 0.1875 0.25 0.125 0.1667\n4 0.703 0.521 0.156 0.208\n")


def test_detector_crops_take_the_detectors_boxes_and_its_weak_strays_as_x(tmp_path, monkeypatch):
    from kosti.datasets.prepare import prepare_detector_crops

    _photo_set(tmp_path / "set")
    boxes = np.array([
        [42, 46, 80, 80],     # die 1 (face 3), its top face only: IoU 0.8 with the label
        [40, 40, 80, 80],     # die 1 again, weaker: one box per die, the best scored
        [200, 100, 250, 150],  # die 2 (face 5)
        [120, 180, 150, 210],  # a weak stray: a hard negative
        [270, 10, 300, 40],    # a sure stray: maybe an unlabelled die, skipped
        [60, 60, 100, 100],    # half on die 1 (IoU 0.14): neither a match nor a negative
        [210, 110, 222, 122],  # one pip of die 2 (IoU 0.06): part of a die, not a negative
        [30, 30, 260, 160],    # around both dice: not a negative either
    ], np.float32)
    scores = np.array([0.9, 0.5, 0.8, 0.2, 0.9, 0.3, 0.1, 0.1], np.float32)
    seen = []

    def detect(image):
        seen.append(image.shape)
        return boxes, scores

    import kosti.datasets.prepare as prepare

    centres = []
    real_crop = prepare.rotated_crop

    def recording_crop(image, centre, angle, box, pad=1.25):
        centres.append(tuple(round(float(c), 1) for c in centre))
        return real_crop(image, centre, angle, box, pad)

    monkeypatch.setattr(prepare, "rotated_crop", recording_crop)
    counts = prepare_detector_crops([(tmp_path / "set", "train")], tmp_path / "out", "train", detect, per_die=2)
    assert seen == [(240, 320, 3)]
    # die 1 is cut around the detector's best-scored box (its top face), not the label's or the first box's
    assert centres == [(61.0, 63.0)] * 2 + [(225.0, 125.0)] * 2
    assert counts == {"1": 0, "2": 0, "3": 2, "4": 0, "5": 2, "6": 0, "x": 1}
    files = sorted(p.relative_to(tmp_path / "out" / "train").as_posix()
                   for p in (tmp_path / "out" / "train").rglob("*.png"))
    assert files == ["3/det_set_p_0_0.png", "3/det_set_p_0_1.png", "5/det_set_p_1_0.png", "5/det_set_p_1_1.png",
                     "x/det_set_p_neg3.png"]
    import cv2

    neg = cv2.imread(str(tmp_path / "out" / "train" / "x" / "det_set_p_neg3.png"))
    assert neg.shape == (CROP_SIZE, CROP_SIZE, 3) and int(neg.max()) == 128  # grey table, no die in it
    die = cv2.imread(str(tmp_path / "out" / "train" / "5" / "det_set_p_1_0.png"))
    assert int(die.max()) == 255  # the die is in its crop


def test_detector_crops_of_a_photo_with_no_boxes_write_nothing(tmp_path):
    from kosti.datasets.prepare import prepare_detector_crops

    _photo_set(tmp_path / "set")
    counts = prepare_detector_crops([(tmp_path / "set", "train")], tmp_path / "out", "train",
                                    lambda image: (np.zeros((0, 4), np.float32), np.zeros(0, np.float32)))
    assert sum(counts.values()) == 0 and not list((tmp_path / "out").rglob("*.png"))


def test_detector_crops_of_an_unlabelled_photo_are_its_weak_boxes_as_x_and_repeatable(tmp_path):
    from kosti.datasets.prepare import prepare_detector_crops

    _photo_set(tmp_path / "set")
    (tmp_path / "set" / "labels" / "train" / "p.txt").unlink()
    boxes = np.array([[40, 40, 80, 80], [120, 180, 150, 210]], np.float32)

    def detect(image):
        return boxes, np.array([0.3, 0.9], np.float32)

    runs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        counts = prepare_detector_crops([(tmp_path / "set", "train")], out, "train", detect, seed=3)
        assert counts["x"] == 1 and sum(counts.values()) == 1  # the weak box; the sure one may be a die
        runs.append((out / "train" / "x" / "det_set_p_neg0.png").read_bytes())
    assert runs[0] == runs[1]


def test_detector_crops_of_two_sets_with_the_same_photo_names_keep_both(tmp_path):
    from kosti.datasets.prepare import prepare_detector_crops

    _photo_set(tmp_path / "a" / "set")
    _photo_set(tmp_path / "b" / "set2")
    boxes = np.array([[200, 100, 250, 150]], np.float32)
    counts = prepare_detector_crops([(tmp_path / "a" / "set", "train"), (tmp_path / "b" / "set2", "train"),
                                     (tmp_path / "a" / "set", "train")], tmp_path / "out", "train",
                                    lambda image: (boxes, np.array([0.9], np.float32)), per_die=1)
    files = sorted(p.name for p in (tmp_path / "out" / "train").rglob("*.png"))
    assert counts["5"] == 3 and files == ["det_set2_p_1_0.png", "det_set_p_1_0.png", "det_set_p_r2_1_0.png"]
