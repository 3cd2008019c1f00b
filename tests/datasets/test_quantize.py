"""INT8 reader (v1.1): the shipped ONNX files are the recipe's output, and 8-bit rounding changes little.

The shipped ``models/dice_*.onnx`` are :mod:`kosti.datasets.quantize` applied to the float export of the
shipped ``.pt`` files, calibrated on shared training photos. These tests re-run that recipe and compare
weights exactly, compare the INT8 reader with the float one on real photos, and check the errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ci_guard
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
from reader_models import BYLER, SHARED_DATASETS, require_dataset, shipped_float_models  # noqa: E402

ci_guard.need_module("onnx", "the train extra (scripts/test installs it)")


def _weights(path: Path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}


def _metadata(path: Path) -> dict[str, str]:
    import onnx

    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


def test_shipped_onnx_files_are_int8_with_their_recipe_and_metadata():
    from kosti.datasets.quantize import QUANT_METADATA_KEY, is_quantized
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX

    for path, task in ((DETECTOR_ONNX, "detect"), (CLASSIFIER_ONNX, "classify")):
        assert is_quantized(path), path.name
        meta = _metadata(path)
        assert meta["task"] == task and "names" in meta and "imgsz" in meta  # the reader's model_info needs them
        assert "reduce_range" in meta[QUANT_METADATA_KEY], meta[QUANT_METADATA_KEY]
        weights = _weights(path)
        assert any(w.dtype == np.int8 for w in weights.values())


def test_the_recipe_reproduces_the_shipped_int8_files(tmp_path):
    """Float export of the shipped .pt → :func:`quantize_detector` / :func:`quantize_classifier` with the
    default settings (the classifier calibrated in its ``reader.json`` views) on the shared training photos →
    exactly the shipped weights and quantisation ranges."""
    require_dataset(SHARED_DATASETS / "epanemu-dice" / "data.yaml")
    from functools import partial

    from kosti.datasets.quantize import calibration_photos, quantize_classifier, quantize_detector
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX

    views = json.loads((CLASSIFIER_ONNX.parent / "reader.json").read_text()).get("views", "turns")
    floats = shipped_float_models()
    photos = calibration_photos(SHARED_DATASETS)
    assert all("/train/" in p.as_posix() for p in photos)  # calibration never sees a measured split
    for make, src, shipped in ((quantize_detector, floats["det_onnx"], DETECTOR_ONNX),
                               (partial(quantize_classifier, views=views), floats["cls_onnx"], CLASSIFIER_ONNX)):
        mine, ref = _weights(make(src, tmp_path / shipped.name, photos)), _weights(shipped)
        assert mine.keys() == ref.keys(), shipped.name
        differ = [k for k in ref if mine[k].shape != ref[k].shape or not np.array_equal(mine[k], ref[k])]
        assert differ == [], f"{shipped.name}: {len(differ)} tensors differ, e.g. {differ[:3]}"


def test_int8_reads_byler_photos_as_the_float_reader_does():
    """Same weights, 8-bit rounding: on 12 byler-d6 test photos the INT8 reader finds the same dice and reads
    the same faces as the float export of the same ``.pt`` on all but at most 2 dice. Boxes move by a few
    pixels (paired IoU median 0.95, lowest 0.79 when measured; ``kosti eval`` matches at IoU 0.5), so pairs
    must overlap at IoU >= 0.75."""
    from kosti.vision.detections import box_iou
    from kosti.vision.reader import DiceReader, load_image

    photos = sorted((require_dataset(BYLER) / "images" / "test").glob("*.jpg"))[:12]
    floats = shipped_float_models()
    int8, f32 = DiceReader(), DiceReader(floats["det_onnx"], floats["cls_onnx"])
    dice = differ = 0
    for photo in photos:
        img = load_image(photo)
        a, b = int8.read(img), f32.read(img)
        assert abs(len(a) - len(b)) <= 1, (photo.name, len(a), len(b))
        if len(a) and len(b):
            iou = box_iou(a.xyxy, b.xyxy)
            pairs = iou.max(axis=1) >= 0.75
            assert pairs.sum() >= min(len(a), len(b)) - 1, photo.name
            differ += int((a.value[pairs] != b.value[iou.argmax(axis=1)][pairs]).sum())
        dice += len(a)
    assert dice >= 40 and differ <= 2, (dice, differ)


def test_unusable_calibration_is_one_clear_error(tmp_path):
    from kosti.datasets.quantize import calibration_photos, quantize_classifier, quantize_detector
    from kosti.vision.evaluate import DatasetError

    with pytest.raises(DatasetError, match="no calibration photos"):
        calibration_photos(tmp_path)
    floats = shipped_float_models()
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image")
    with pytest.raises(DatasetError, match="no calibration input"):
        quantize_detector(floats["det_onnx"], tmp_path / "d.onnx", [junk])
    with pytest.raises(DatasetError, match="no calibration input"):
        quantize_classifier(floats["cls_onnx"], tmp_path / "c.onnx", [junk])
    assert not (tmp_path / "d.onnx").exists() and not (tmp_path / "c.onnx").exists()
