"""The reader's zoom for small dice (``DiceReader(zoom_below=…, zoom_imgsz=…)``): off by default; when on, a
frame whose dice are small is read again with the detector at a larger input, and a frame of large dice is not.

Real photos from ``../shared/datasets``: epanemu-dice val ``dice_441`` (19 small coloured dice on a blue folder
seen from a seated player's height; the 640 px read finds 4-5 of them) and byler-d6 test (large dice, never
zoomed). These pin behaviour; accuracy is ``kosti eval``'s (``models/README.md``).
"""

from __future__ import annotations

import numpy as np
import pytest
from reader_models import BYLER, SHARED_DATASETS, require_dataset

EPANEMU = SHARED_DATASETS / "epanemu-dice"
SMALL_DICE = "dice_441_jpg.rf.cf88a7dddd71324b270ec98d21593f0e.jpg"


def _labelled(root, split, name):
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(root, split)
    item = next(i for i in ds.items if i.image.name == name) if name else ds.items[0]
    img = load_image(item.image)
    truth, _ = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
    return img, truth


def _found_and_extra(truth: np.ndarray, xyxy: np.ndarray) -> tuple[int, int]:
    from kosti.vision.detections import box_iou

    if len(xyxy) == 0:
        return 0, 0
    iou = box_iou(truth, xyxy)
    return int((iou.max(axis=1) >= 0.5).sum()), int((iou.max(axis=0) < 0.5).sum())


def test_zoom_is_off_by_default():
    from kosti.models import DEFAULT_ZOOM_BELOW
    from kosti.vision.reader import DiceReader

    reader = DiceReader()
    assert DEFAULT_ZOOM_BELOW == 0 and reader.zoom_detector is None
    assert "zoom" not in reader.describe()
    assert DiceReader(zoom_below=28).zoom_detector is not None


def test_small_dice_are_read_again_larger_and_more_are_found():
    require_dataset(EPANEMU / "data.yaml")
    from kosti.vision.reader import DiceReader

    img, truth = _labelled(EPANEMU, "val", SMALL_DICE)
    plain, zoomed = DiceReader(), DiceReader(zoom_below=28, zoom_imgsz=960)
    before = _found_and_extra(truth, plain.read(img).xyxy)
    after = _found_and_extra(truth, zoomed.read(img).xyxy)
    assert zoomed.last_zoomed and not plain.last_zoomed
    assert zoomed.zoom_detector is not None and zoomed.zoom_detector.input_side == 960
    # without the zoom v1.0 found 5, v1.1 (INT8) 4 and v1.2 10 of the 19; zoomed, v1.0 10 and v1.2 13
    assert len(truth) == 19 and before[0] <= 12 and before[1] == 0, before
    assert after[0] >= before[0] + 3 and after[1] == 0, f"zoomed read found {after[0]} of 19 with {after[1]} extra boxes"


def test_large_dice_are_not_read_again():
    require_dataset(BYLER / "data.yaml")
    from kosti.vision.reader import DiceReader

    img, truth = _labelled(BYLER, "test", None)
    plain, zoomed = DiceReader(), DiceReader(zoom_below=28)
    a, b = plain.read(img), zoomed.read(img)
    assert len(truth) >= 10 and len(a) >= len(truth) - 1, f"{len(a)} of {len(truth)} dice found"
    assert not zoomed.last_zoomed
    assert np.array_equal(a.xyxy, b.xyxy) and np.array_equal(a.value, b.value)


def test_needs_zoom_rule():
    from kosti.vision.detections import Detections
    from kosti.vision.reader import DiceReader

    reader = DiceReader(zoom_below=28)

    def dets(*sides: float) -> Detections:
        xyxy = np.array([[10, 10, 10 + s, 10 + s] for s in sides], np.float32).reshape(-1, 4)
        n = len(sides)
        return Detections(xyxy, np.full(n, 0.9, np.float32), np.ones(n, np.int8), np.full(n, 0.9, np.float32))

    # A 1280x720 frame goes to the 640 px input at half size: a 50 px die is 25 px there (zoom), 60 px is 30.
    assert reader.needs_zoom(dets(50, 50, 200), dets(), (720, 1280))
    assert not reader.needs_zoom(dets(60, 60, 20), dets(), (720, 1280))
    assert reader.needs_zoom(dets(), dets(40), (720, 1280)), "nothing found but a weak candidate: look closer"
    assert not reader.needs_zoom(dets(), dets(), (720, 1280)), "an empty table is not read twice"
    assert not DiceReader().needs_zoom(dets(5), dets(), (720, 1280)), "off by default"


def test_zoom_side_is_rounded_to_the_stride():
    from kosti.sim.synthetic import synthetic_frame
    from kosti.vision.reader import DiceReader

    reader = DiceReader(zoom_below=640, zoom_imgsz=1000)  # every frame with dice is read again
    assert reader.zoom_detector is not None and reader.zoom_detector.input_side == 1024
    frame = synthetic_frame(1280, 720, n_dice=3, side=60, seed=1)[0]
    dice = reader.read(frame)  # a 1000-wide input would fail in the network's concats
    assert reader.last_zoomed and len(dice) == 3


@pytest.mark.parametrize("bad", [{"zoom_below": -1.0}, {"zoom_imgsz": 0}, {"zoom_below": 28, "zoom_imgsz": 640}])
def test_bad_zoom_settings_are_refused(bad):
    from kosti.vision.reader import DiceReader

    with pytest.raises(ValueError, match="zoom"):
        DiceReader(**bad)


def test_cli_refuses_a_zoom_the_model_cannot_do_in_one_line(capsys):
    require_dataset(BYLER / "data.yaml")
    from kosti.cli import main

    photo = sorted((BYLER / "images" / "test").iterdir())[0]
    assert main(["read", "--json", "--zoom-below", "28", "--zoom-imgsz", "320", str(photo)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "zoom_imgsz 320" in err[0], err
    assert main(["read", "--json", "--zoom-below", "28", str(photo)]) == 0
