"""The shipped reader on real photos (byler-d6 test split, never seen in training)."""

from __future__ import annotations

import cv2
import pytest
from reader_models import BYLER, require_dataset

from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
from kosti.vision.evaluate import Dataset, evaluate, load_dataset

#: Photos checked (the first of the sorted test split): keeps the test to a few seconds.
N_IMAGES = 6
#: Floors for a usable reader on these top-down tray photos (the model card's numbers are far above).
MIN_RECALL, MIN_PRECISION, MIN_DIE_ACCURACY = 0.85, 0.85, 0.85


@pytest.fixture(scope="module")
def shipped_reader():
    require_dataset(BYLER / "data.yaml")  # missing photos fail under CI even before the model lands
    if not DETECTOR_ONNX.is_file():
        pytest.skip(f"shipped detector not there yet: {DETECTOR_ONNX} (run the training, see models/README.md)")
    from kosti.vision.reader import DiceReader
    from kosti.vision.onnx_backend import OnnxDetector

    if len(OnnxDetector(DETECTOR_ONNX).names) != 6 and not CLASSIFIER_ONNX.is_file():
        pytest.skip(f"shipped face classifier not there yet: {CLASSIFIER_ONNX}")
    return DiceReader()


def test_shipped_reader_on_byler_photos(shipped_reader):
    full = load_dataset(BYLER / "data.yaml", "test")
    subset = Dataset(full.items[:N_IMAGES], full.class_values, full.root, full.split)
    report = evaluate(shipped_reader, subset, compute_map=False)
    assert report.n_dice >= 20
    assert report.recall >= MIN_RECALL, report.to_json()
    assert report.precision >= MIN_PRECISION, report.to_json()
    assert report.die_accuracy >= MIN_DIE_ACCURACY, report.to_json()
    for rec in report.records:  # boxes are in the photo's own pixels, non-empty
        h, w = cv2.imread(str(rec.image)).shape[:2]
        b = rec.pred.xyxy
        assert (b >= 0).all() and (b[:, 2] <= w).all() and (b[:, 3] <= h).all()
        assert (b[:, 2] > b[:, 0]).all() and (b[:, 3] > b[:, 1]).all()
