"""Evaluation metrics on hand-made labels/predictions with known answers, and mAP against Ultralytics."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from kosti.vision.detections import Detections
from kosti.vision.evaluate import (
    IOU_THRESHOLDS,
    DatasetError,
    average_precision,
    compute_ap,
    evaluate_predictions,
    load_dataset,
    match_greedy,
    read_labels,
)


def _det(rows):
    """Detections from ``(x1, y1, x2, y2, conf, value)`` rows (value confidence 0.9)."""
    a = np.asarray(rows, np.float64).reshape(-1, 6)
    return Detections(a[:, :4], a[:, 4], a[:, 5].astype(int), np.full(len(a), 0.9))


def _truth(name, rows):
    a = np.asarray(rows, np.float64).reshape(-1, 5)
    return Path(name), a[:, :4].astype(np.float32), a[:, 4].astype(np.int8)


@pytest.fixture()
def report():
    truths = [
        _truth("a.jpg", [[0, 0, 10, 10, 1], [20, 0, 30, 10, 2], [40, 0, 50, 10, 3]]),
        _truth("b.jpg", [[0, 0, 20, 20, 6], [50, 50, 70, 70, 4]]),
        _truth("c.jpg", []),
        _truth("d.jpg", [[0, 0, 10, 10, 3]]),
    ]
    preds = [
        # right; shifted 1 px (IoU 0.818) but read 5 instead of 2; extra; label 3 missed
        _det([[0, 0, 10, 10, 0.9, 1], [21, 0, 31, 10, 0.8, 5], [100, 100, 110, 110, 0.7, 4]]),
        _det([[50, 50, 70, 70, 0.6, 4], [0, 0, 20, 20, 0.95, 6]]),
        _det([]),
        _det([[0, 0, 10, 10, 0.5, 0]]),  # found but uncertain
    ]
    return evaluate_predictions(truths, preds, ms=[10.0, 30.0, 20.0, 40.0])


def test_counts_and_rates(report):
    doc = report.to_json()
    assert (doc["images"], doc["dice"]) == (4, 6)
    assert report.n_pred == 6 and report.n_matched == 5
    assert doc["precision"] == pytest.approx(5 / 6, abs=1e-4)
    assert doc["recall"] == pytest.approx(5 / 6, abs=1e-4)
    assert doc["die_accuracy"] == pytest.approx(3 / 5)  # 1, 6, 4 right; 2→5 and 3→? wrong
    assert doc["image_exact"] == pytest.approx(2 / 4)  # b and the empty c
    assert doc["ms_per_image_median"] == pytest.approx(25.0)
    assert report.uncertain == 1
    # of the 2 matched dice not read right, one is read as another face (2 -> 5), one left uncertain (the 3)
    assert (report.n_wrong, report.n_unsure) == (1, 1)


def test_confusion(report):
    cm = np.array(report.to_json()["confusion"])
    assert cm.shape == (6, 6) and cm.sum() == 4
    assert cm[0, 0] == 1 and cm[1, 4] == 1 and cm[5, 5] == 1 and cm[3, 3] == 1
    full = report.confusion_full
    assert full.shape == (7, 8)
    assert full[2, 7] == 1  # the missed 3
    assert full[2, 6] == 1  # the uncertain 3
    assert full[6, 3] == 1  # the extra box read as 4
    assert full.sum() == 7


def test_per_image_records(report):
    a = report.records[0]
    assert a.missed == [2] and a.extra == [2] and a.wrong == [(1, 1)] and not a.exact
    assert report.records[1].exact and report.records[2].exact


def test_map_perfect_detector_equals_ultralytics():
    """All boxes exact: AP is Ultralytics' ceiling for a complete curve (0.995 with its sentinels)."""
    from ultralytics.utils.metrics import compute_ap as ultra_compute_ap

    truths = [_truth("a", [[0, 0, 10, 10, 1], [20, 20, 40, 40, 2]])]
    rep = evaluate_predictions(truths, [_det([[0, 0, 10, 10, 0.9, 1], [20, 20, 40, 40, 0.8, 2]])])
    expect = ultra_compute_ap(np.array([0.5, 1.0]), np.array([1.0, 1.0]))[0]
    assert rep.to_json()["mAP50"] == pytest.approx(expect, abs=1e-4) == pytest.approx(0.995, abs=1e-4)
    assert rep.to_json()["mAP50_95"] == pytest.approx(expect, abs=1e-4)


def test_ap_hand_computed_curve():
    """TP, FP, TP over 2 labels: precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1.

    Envelope: 1 up to recall 0.5, then 2/3 up to recall 1, then 0. Trapezoid over 101 points:
    0.49 + 0.01·(1 + 2/3)/2 + 0.48·2/3 + 0.01·(2/3)/2 ≈ 0.8283 (±0.0033 depending on which side
    of the step x = 0.5 falls).
    """
    ap = compute_ap(np.array([0.5, 0.5, 1.0]), np.array([1.0, 0.5, 2 / 3]))
    assert 0.825 <= ap <= 0.832
    from ultralytics.utils.metrics import compute_ap as ultra_compute_ap

    assert ap == pytest.approx(ultra_compute_ap(np.array([0.5, 0.5, 1.0]), np.array([1.0, 0.5, 2 / 3]))[0])


def test_map50_95_with_offset_box():
    """One box at IoU 0.818 is a TP for thresholds 0.50–0.80 (7 of 10), an FP above."""
    truths = [_truth("a", [[0, 0, 10, 10, 1]])]
    rep = evaluate_predictions(truths, [_det([[1, 0, 11, 10, 0.9, 1]])])
    doc = rep.to_json()
    assert doc["mAP50"] == pytest.approx(0.995, abs=1e-4)
    assert doc["mAP50_95"] == pytest.approx(0.995 * 7 / 10, abs=1e-4)


def test_map_matches_ultralytics_on_random_fixture():
    """Random labels, jittered/false predictions over 12 images: our mAP = Ultralytics' matching +
    ap_per_class."""
    import torch
    from ultralytics.models.yolo.detect import DetectionValidator
    from ultralytics.utils.metrics import ap_per_class

    from kosti.vision.detections import box_iou

    rng = np.random.default_rng(0)
    validator = DetectionValidator()
    truths, raws, preds, tps, confs = [], [], [], [], []
    n_labels = 0
    for i in range(12):
        m = int(rng.integers(0, 8))
        xy = rng.uniform(0, 600, (m, 2))
        wh = rng.uniform(20, 80, (m, 2))
        lab = np.concatenate([xy, xy + wh], 1)
        keep = rng.random(m) > 0.2
        jit = lab[keep] + rng.normal(0, 4, (keep.sum(), 4))
        fps = rng.uniform(0, 600, (int(rng.integers(0, 4)), 2))
        fp = np.concatenate([fps, fps + 50], 1)
        boxes = np.concatenate([jit, fp]).astype(np.float32)
        conf = rng.uniform(0.01, 1, len(boxes)).astype(np.float32)
        truths.append((Path(f"{i}.jpg"), lab.astype(np.float32), np.ones(m, np.int8)))
        raws.append((boxes, conf))
        preds.append(Detections(boxes, conf, np.ones(len(boxes), np.int8), np.ones(len(boxes))))
        order = np.argsort(-conf, kind="stable")
        iou = box_iou(lab, boxes[order])
        tp = validator.match_predictions(
            torch.zeros(len(boxes)), torch.zeros(m), torch.from_numpy(iou).float()
        ).numpy()
        tps.append(tp)
        confs.append(conf[order])
        n_labels += m
        np.testing.assert_array_equal(tp, match_greedy(iou, IOU_THRESHOLDS))
    rep = evaluate_predictions(truths, preds, raws)
    tp, conf = np.concatenate(tps), np.concatenate(confs)
    ap = ap_per_class(tp, conf, np.zeros(len(conf)), np.zeros(n_labels))[5][0]
    np.testing.assert_allclose(rep.ap, ap, atol=1e-9)
    np.testing.assert_allclose(average_precision(tp, conf, n_labels), ap, atol=1e-9)


def _write_dataset(root: Path, with_yaml: bool = True) -> None:
    for split in ("test", "train"):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
    img = np.full((100, 200, 3), 90, np.uint8)
    for name in ("a", "b"):
        cv2.imwrite(str(root / "images" / "test" / f"{name}.jpg"), img)
    cv2.imwrite(str(root / "images" / "train" / "c.png"), img)
    (root / "labels" / "test" / "a.txt").write_text("0 0.5 0.5 0.1 0.2\n5 0.25 0.25 0.1 0.1\n\n")
    # b.jpg has no label file: no dice
    (root / "labels" / "train" / "c.txt").write_text("2 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n")  # polygon
    if with_yaml:
        (root / "data.yaml").write_text(
            "path: .\ntrain: images/train\nval: images/test\ntest: images/test\n"
            "names: {0: '1', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6'}\n"
        )


def test_load_dataset_yaml_and_folder(tmp_path):
    _write_dataset(tmp_path)
    ds = load_dataset(tmp_path / "data.yaml", "test")
    assert [i.image.name for i in ds.items] == ["a.jpg", "b.jpg"]
    assert ds.class_values.tolist() == [1, 2, 3, 4, 5, 6]
    xyxy, vals = read_labels(ds.items[0].label, 200, 100, ds.class_values)
    np.testing.assert_allclose(xyxy, [[90, 40, 110, 60], [40, 20, 60, 30]], atol=1e-4)
    assert vals.tolist() == [1, 6]
    assert read_labels(ds.items[1].label, 200, 100, ds.class_values)[0].shape == (0, 4)
    train = load_dataset(tmp_path, "train")
    assert [i.image.name for i in train.items] == ["c.png"]
    xyxy, vals = read_labels(train.items[0].label, 200, 100, train.class_values)
    np.testing.assert_allclose(xyxy, [[20, 10, 60, 30]], atol=1e-4)
    assert vals.tolist() == [3]


def test_dataset_errors(tmp_path):
    _write_dataset(tmp_path)
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("path: .\ntrain: images/train\n")
    with pytest.raises(DatasetError, match="no 'test' split"):
        load_dataset(tmp_path / "bad.yaml", "test")
    (tmp_path / "labels" / "test" / "a.txt").write_text("0 0.5 0.5 0.1\n")
    ds = load_dataset(tmp_path / "data.yaml")
    with pytest.raises(DatasetError, match=r"a\.txt:1"):
        read_labels(ds.items[0].label, 200, 100, ds.class_values)
    (tmp_path / "labels" / "test" / "a.txt").write_text("9 0.5 0.5 0.1 0.1\n")
    with pytest.raises(DatasetError, match="class 9"):
        read_labels(ds.items[0].label, 200, 100, ds.class_values)
    with pytest.raises(DatasetError, match="no 'val' split.*its splits: train, test"):
        load_dataset(tmp_path, "val")  # images/ has train/ and test/ only: never mix splits
    (tmp_path / "noval.yaml").write_text("path: .\ntrain: images/train\nval: images/test\n")
    with pytest.raises(DatasetError, match=r"no 'test' split \(its splits: train, val\)"):
        load_dataset(tmp_path / "noval.yaml", "test")  # never val in place of test
    assert len(load_dataset(tmp_path / "noval.yaml", "val").items) == 2
    assert DatasetError("x").exit_code == 2


def test_dataset_needs_labels_folder(tmp_path):
    """images/ without labels/ is refused; labels/ missing some photos' files is fine (no dice there)."""
    img = np.full((100, 200, 3), 90, np.uint8)
    (tmp_path / "images").mkdir()
    for name in ("a", "b"):
        cv2.imwrite(str(tmp_path / "images" / f"{name}.jpg"), img)
    with pytest.raises(DatasetError, match="no labels/ folder"):
        load_dataset(tmp_path, "test")
    (tmp_path / "data.yaml").write_text("path: .\ntest: images\n")
    with pytest.raises(DatasetError, match="no labels folder"):
        load_dataset(tmp_path / "data.yaml", "test")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.txt").write_text("0 0.5 0.5 0.1 0.2\n")
    for ds in (load_dataset(tmp_path, "test"), load_dataset(tmp_path / "data.yaml", "test")):
        assert [i.image.name for i in ds.items] == ["a.jpg", "b.jpg"]
        assert [read_labels(i.label, 200, 100, ds.class_values)[1].tolist() for i in ds.items] == [[1], []]


def test_fit_temperature_recovers_overconfidence():
    """Labels drawn from softmax(z); the model reports softmax(3 z): the fitted T is ≈ 3 and the
    calibration error drops."""
    from kosti.vision.evaluate import expected_calibration_error, fit_temperature, nll

    rng = np.random.default_rng(1)
    z = rng.normal(0, 1.5, (6000, 7))
    p_true = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    target = np.array([rng.choice(7, p=p) for p in p_true])
    over = np.exp(3 * z) / np.exp(3 * z).sum(1, keepdims=True)
    t = fit_temperature(over, target)
    assert t == pytest.approx(3.0, rel=0.1)
    assert nll(over, target, t) < nll(over, target)
    assert expected_calibration_error(over, target, t) < 0.5 * expected_calibration_error(over, target)
    assert fit_temperature(np.zeros((0, 7)), np.zeros(0, int)) == 1.0
