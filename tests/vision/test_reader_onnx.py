"""The ONNX runtime gives what Ultralytics' own predict gives on the same weights.

Models are untrained YOLO11n / YOLO11n-cls built from YAML (``reader_models``); the detector's scores
are spread so a frame yields dozens of distinct boxes, which exercises decoding and NMS.
"""

from __future__ import annotations

import ci_guard
import numpy as np
import pytest
from reader_models import untrained_dynamic, untrained_models, untrained_rect, untrained_six_class

from kosti.models import DEFAULT_IOU
from kosti.sim.synthetic import synthetic_frame
from kosti.vision.crops import TTA_VIEWS, square_crop, tta_views
from kosti.vision.onnx_backend import OnnxClassifier, OnnxDetector
from kosti.vision.reader import DiceReader

BOX_TOL_PX = 1.0
CONF_TOL = 1e-3


@pytest.fixture(scope="module")
def models():
    return untrained_models()


@pytest.fixture(scope="module")
def frames():
    return [synthetic_frame(1280, 720, 5, 70, seed=0)[0], synthetic_frame(480, 640, 4, 50, seed=7)[0]]


def _ultra_detect(weights, image, conf, max_det=300):
    from ultralytics import YOLO

    r = YOLO(str(weights), task="detect").predict(
        image, conf=conf, rect=False, verbose=False, agnostic_nms=True, max_det=max_det, iou=DEFAULT_IOU
    )[0]
    return r.boxes.xyxy.numpy(), r.boxes.conf.numpy()


def _nondegenerate(xyxy, *arrays):
    """What DiceReader keeps: boxes at least 1 px wide and high after clipping to the frame."""
    keep = ((xyxy[:, 2] - xyxy[:, 0]) >= 1) & ((xyxy[:, 3] - xyxy[:, 1]) >= 1)
    return (xyxy[keep], *(a[keep] for a in arrays))


def _pair(ours_xyxy, ours_conf, ref_xyxy, ref_conf):
    """Index into ours for each reference box. Both lists are sorted by confidence, but near-equal
    scores may swap places, so pairs are formed globally cheapest first (box distance + confidence)."""
    cost = np.abs(ours_xyxy[None, :, :] - ref_xyxy[:, None, :]).max(2) + 1e3 * np.abs(
        ours_conf[None, :] - ref_conf[:, None]
    )
    j = np.full(len(ref_xyxy), -1)
    used_i, used_j = np.zeros(len(ref_xyxy), bool), np.zeros(len(ours_xyxy), bool)
    for flat in np.argsort(cost, axis=None, kind="stable"):
        i, k = divmod(int(flat), cost.shape[1])
        if not used_i[i] and not used_j[k]:
            j[i], used_i[i], used_j[k] = k, True, True
    return j


def _assert_same_boxes(ours_xyxy, ours_conf, ref_xyxy, ref_conf):
    assert len(ours_xyxy) == len(ref_xyxy)
    assert len(ours_xyxy) > 3  # the comparison must actually cover boxes
    j = _pair(ours_xyxy, ours_conf, ref_xyxy, ref_conf)
    assert np.abs(ours_xyxy[j] - ref_xyxy).max() <= BOX_TOL_PX
    assert np.abs(ours_conf[j] - ref_conf).max() <= CONF_TOL
    return j


@pytest.mark.parametrize("conf", [0.5, 0.8])
def test_detector_matches_ultralytics_pt(models, frames, conf):
    det = OnnxDetector(models["det_onnx"])
    for img in frames:
        xyxy, scores, _ = det.detect(img, conf=conf)
        ref_xyxy, ref_conf = _ultra_detect(models["det_pt"], img, conf)
        _assert_same_boxes(xyxy, scores, ref_xyxy, ref_conf)


def test_detector_matches_ultralytics_onnx_predict(models, frames):
    """Ultralytics running the same .onnx file (its own letterbox/NMS) agrees too."""
    det = OnnxDetector(models["det_onnx"])
    xyxy, scores, _ = det.detect(frames[0], conf=0.6)
    ref_xyxy, ref_conf = _ultra_detect(models["det_onnx"], frames[0], 0.6)
    _assert_same_boxes(xyxy, scores, ref_xyxy, ref_conf)


def test_classifier_matches_ultralytics(models, frames):
    from ultralytics import YOLO

    img, boxes, _ = synthetic_frame(1280, 720, 6, 80, seed=3)
    crops = np.stack([square_crop(img, b) for b in boxes])
    probs = OnnxClassifier(models["cls_onnx"]).classify(crops)
    ref = YOLO(str(models["cls_pt"]), task="classify").predict(list(crops), verbose=False)
    ref = np.stack([r.probs.data.numpy() for r in ref])
    assert probs.shape == (6, 7)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    assert np.abs(probs - ref).max() <= CONF_TOL
    assert np.ptp(probs.argmax(1)) > 0 or np.ptp(probs.max(1)) > 0.01  # crops are told apart


def test_reader_equals_ultralytics_pipeline(models, frames):
    """Reader end to end = Ultralytics detect → square_crop → Ultralytics classify of the crop in its four
    90° rotations (:func:`kosti.vision.crops.tta_views`), probabilities averaged (the reader's test-time
    augmentation) → same decision."""
    from ultralytics import YOLO

    reader = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.7, value_conf=0.3)
    img = frames[0]
    det = reader.read(img)
    ref_xyxy, ref_conf = _nondegenerate(*_ultra_detect(models["det_pt"], img, 0.7))
    _assert_same_boxes(det.xyxy, det.confidence, ref_xyxy, ref_conf)
    crops = [square_crop(img, b) for b in det.xyxy]
    views = list(tta_views(np.stack(crops)))
    ref = YOLO(str(models["cls_pt"]), task="classify").predict(views, verbose=False)
    probs = np.stack([r.probs.data.numpy() for r in ref]).reshape(TTA_VIEWS, len(crops), -1).mean(0)
    top = probs.argmax(1)
    expect = np.where((top < 6) & (probs.max(1) >= 0.3), top + 1, 0)
    sure = np.abs(probs.max(1) - 0.3) > CONF_TOL  # skip dice right at the threshold
    assert np.array_equal(det.value[sure], expect[sure])
    assert (det.value > 0).any() and (det.value == 0).any()  # both branches exercised


def test_ultralytics_backend_agrees_with_onnx(models, frames):
    img = frames[1]
    onnx = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, value_conf=0.3).read(img)
    pt = DiceReader(models["det_pt"], models["cls_pt"], conf=0.6, value_conf=0.3, backend="ultralytics").read(img)
    j = _assert_same_boxes(onnx.xyxy, onnx.confidence, pt.xyxy, pt.confidence)
    assert np.abs(onnx.value_confidence[j] - pt.value_confidence).max() <= CONF_TOL


def test_six_class_detector_gives_values():
    """Without a classifier, a detector with classes "1"…"6" reads faces from its class."""
    from ultralytics import YOLO

    m = untrained_six_class()
    img = synthetic_frame(1280, 720, 5, 70, seed=0)[0]
    # nested_frac=1.0: the comparison is of decoding and NMS, which Ultralytics does without kosti's one-box rule
    reader = DiceReader(m["det_onnx"], conf=0.6, value_conf=0.0, nested_frac=1.0)
    assert not reader.two_stage
    det = reader.read(img)
    r = YOLO(str(m["det_pt"]), task="detect").predict(img, conf=0.6, rect=False, agnostic_nms=True, iou=DEFAULT_IOU, verbose=False)[0]
    ref_xyxy, ref_conf, ref_cls = _nondegenerate(r.boxes.xyxy.numpy(), r.boxes.conf.numpy(), r.boxes.cls.numpy())
    j = _assert_same_boxes(det.xyxy, det.confidence, ref_xyxy, ref_conf)
    assert np.array_equal(det.value[j], ref_cls.astype(int) + 1)
    np.testing.assert_allclose(det.value_confidence, det.confidence)


def test_threads_setting_does_not_change_results(models, frames):
    a = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, threads=1).read(frames[0])
    b = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, threads=2).read(frames[0])
    assert len(a) == len(b)
    np.testing.assert_allclose(a.xyxy, b.xyxy, atol=1e-2)
    assert np.array_equal(a.value, b.value)


def test_rectangular_detector_input():
    """A detector exported at (H, W) = (256, 416): size read from metadata, same boxes as Ultralytics."""
    from ultralytics import YOLO

    m = untrained_rect()
    det = OnnxDetector(m["det_onnx"])
    assert det.info.imgsz == (256, 416)
    for img in (synthetic_frame(1280, 720, 5, 70, seed=0)[0], synthetic_frame(480, 640, 4, 50, seed=7)[0]):
        xyxy, scores, _ = det.detect(img, conf=0.6)
        r = YOLO(str(m["det_pt"]), task="detect").predict(
            img, conf=0.6, rect=False, agnostic_nms=True, imgsz=(256, 416), iou=DEFAULT_IOU, verbose=False
        )[0]
        _assert_same_boxes(xyxy, scores, r.boxes.xyxy.numpy(), r.boxes.conf.numpy())


def test_dynamic_detector_letterboxes_like_ultralytics_predict():
    """A dynamic-shape export is fed the smallest stride-multiple rectangle (LetterBox(auto=True)), as
    Ultralytics' predict feeds a .pt model: a 1280×720 frame becomes 192×320 at imgsz 320, not 320×320,
    and the boxes and confidences are the same as Ultralytics' own predict on the same weights."""
    from ultralytics import YOLO

    from kosti.vision.letterbox import rect_shape

    m = untrained_dynamic()
    det = OnnxDetector(m["det_onnx"])
    assert det.info.dynamic_hw and det.info.imgsz == (320, 320)
    img = synthetic_frame(1280, 720, 5, 70, seed=0)[0]
    x, _ = det.preprocess(img)
    assert x.shape == (1, 3, 192, 320) == (1, 3, *rect_shape(img.shape[:2], 320, 32))
    for frame in (img, synthetic_frame(480, 640, 4, 50, seed=7)[0]):
        xyxy, scores, _ = det.detect(frame, conf=0.6)
        r = YOLO(str(m["det_pt"]), task="detect").predict(frame, conf=0.6, agnostic_nms=True, iou=DEFAULT_IOU, verbose=False)[0]
        _assert_same_boxes(xyxy, scores, r.boxes.xyxy.numpy(), r.boxes.conf.numpy())


def test_last_axis_dfl_keeps_the_detector_outputs(tmp_path):
    """The export's DFL rewrite (softmax over the last axis + MatMul instead of Transpose + Softmax(1) +
    Conv) gives the same raw output on two input shapes, and the same boxes through the reader; it leaves
    a classifier and an already rewritten detector alone."""
    import shutil

    onnx = ci_guard.need_module("onnx", "the train extra (scripts/test installs it)")
    from kosti.datasets.train import last_axis_dfl

    m = untrained_dynamic()
    path = tmp_path / "det.onnx"
    shutil.copy2(m["det_onnx"], path)
    before = OnnxDetector(m["det_onnx"])
    assert last_axis_dfl(path) is True
    g = onnx.load(str(path)).graph
    softmax = [n for n in g.node if n.op_type == "Softmax" and "dfl" in n.name]
    assert [a.i for n in softmax for a in n.attribute if a.name == "axis"] == [-1]
    assert not [n for n in g.node if n.op_type == "Conv" and "dfl" in n.name]
    after = OnnxDetector(path)
    for frame in (synthetic_frame(1280, 720, 5, 70, seed=0)[0], synthetic_frame(480, 640, 4, 50, seed=7)[0]):
        raw_before, raw_after = before.raw(frame)[0], after.raw(frame)[0]
        assert raw_before.shape == raw_after.shape
        np.testing.assert_allclose(raw_after, raw_before, rtol=1e-5, atol=1e-4)
        _assert_same_boxes(*after.detect(frame, conf=0.6)[:2], *before.detect(frame, conf=0.6)[:2])
    assert last_axis_dfl(path) is False
    # A model with recorded shapes (after onnx shape inference) loses those of the tensors it changes.
    shaped = tmp_path / "shaped.onnx"
    onnx.save(onnx.shape_inference.infer_shapes(onnx.load(str(m["det_onnx"]))), str(shaped))
    assert last_axis_dfl(shaped) is True
    g = onnx.load(str(shaped)).graph
    changed = {o for n in g.node if "dfl" in n.name and n.op_type in ("Transpose", "Softmax", "MatMul") for o in n.output}
    assert len(changed) == 3 and not changed & {v.name for v in g.value_info} and len(g.value_info) > 100
    cls = tmp_path / "cls.onnx"
    shutil.copy2(m["cls_onnx"], cls)
    assert last_axis_dfl(cls) is False and cls.read_bytes() == m["cls_onnx"].read_bytes()


def test_shipped_detector_has_the_last_axis_dfl():
    """models/dice_det.onnx went through :func:`last_axis_dfl` (the export does it; a re-export that
    skipped it would be ~1.7 ms slower per frame)."""
    onnx = ci_guard.need_module("onnx", "the train extra (scripts/test installs it)")
    from kosti.models import DETECTOR_ONNX

    g = onnx.load(str(DETECTOR_ONNX)).graph
    axes = [a.i for n in g.node if n.op_type == "Softmax" for a in n.attribute if a.name == "axis"]
    assert axes and all(a == -1 for a in axes)


def test_tta_reading_does_not_depend_on_how_the_die_is_turned(models, frames):
    """With rotation TTA the face probabilities of a crop and of the same crop turned by 90° are the same
    (the four views are the same set); without TTA they differ (the model is not rotation invariant)."""
    reader = DiceReader(models["det_onnx"], models["cls_onnx"], conf=0.6, value_conf=0.3)
    img = frames[0]
    crops = reader.crops(img, reader.detect(img)[0])
    assert len(crops)
    turned = np.ascontiguousarray(np.rot90(crops, 1, axes=(1, 2)))
    np.testing.assert_allclose(reader.face_probs(turned), reader.face_probs(crops), atol=1e-5)
    reader.tta = False
    assert np.abs(reader.face_probs(turned) - reader.face_probs(crops)).max() > 1e-3
