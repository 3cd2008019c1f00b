"""Detections container, face decisions (uncertain dice), temperature, NMS and decoding."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from reader_models import scripted, untrained_models, untrained_six_class

from kosti.sim.synthetic import synthetic_frame
from kosti.vision.detections import Detections, box_iou, nested_in_stronger
from kosti.vision.onnx_backend import decode_detections, nms
from kosti.vision.reader import DiceReader, face_values


def _dets():
    return Detections(
        xyxy=[[10, 10, 50, 50], [100, 20, 140, 60], [60, 80, 90, 110]],
        confidence=[0.9, 0.8, 0.7],
        value=[5, 0, 2],
        value_confidence=[0.97, 0.41, 0.88],
    )


def test_detections_dtypes_shapes_and_selection():
    d = _dets()
    assert d.xyxy.dtype == np.float32 and d.xyxy.shape == (3, 4)
    assert d.confidence.dtype == np.float32 and d.value.dtype == np.int8
    assert d.value_confidence.dtype == np.float32
    assert len(d) == 3 and len(Detections.empty()) == 0
    sub = d.filter(d.confidence > 0.75)
    assert sub.value.tolist() == [5, 0]
    assert d[2].value.tolist() == [2] and len(d[1:]) == 2
    assert d.uncertain.tolist() == [False, True, False]
    assert not d.all_read and d.faces == [2, 5]
    assert Detections.empty().all_read


def test_detections_validation():
    with pytest.raises(ValueError, match="mismatched"):
        Detections(np.zeros((2, 4)), [0.5], [1, 2], [0.9, 0.9])
    with pytest.raises(ValueError, match="1–6"):
        Detections(np.zeros((1, 4)), [0.5], [7], [0.9])
    with pytest.raises(ValueError):
        _dets().filter(np.array([True, False]))


def test_to_dicts_matches_cli_shape():
    out = _dets().to_dicts()
    assert out[0] == {"value": 5, "confidence": 0.97, "box": [10.0, 10.0, 50.0, 50.0]}
    assert out[1]["value"] == 0 and out[1]["uncertain"] is True  # no face guessed at all: 0
    assert "uncertain" not in out[2]
    # cli.md: `value` is the face showing up, 1–6 — an uncertain die gives its most likely face, flagged
    guessed = Detections(_dets().xyxy, _dets().confidence, _dets().value, _dets().value_confidence,
                         {"guess": np.array([5, 3, 2])}).to_dicts()
    assert guessed[1] == {"value": 3, "confidence": 0.41, "box": [100.0, 20.0, 140.0, 60.0], "uncertain": True}
    assert guessed[0] == out[0] and guessed[2] == out[2]
    assert Detections.from_dice(guessed).value.tolist() == [5, 0, 2]  # read back: still uncertain, guess kept
    assert Detections.from_dice(guessed).data["guess"][1] == 3
    json.dumps(out)  # plain Python types only
    recs = _dets().to_records()
    assert recs[1]["uncertain"] and not recs[0]["uncertain"] and recs[0]["det_confidence"] == pytest.approx(0.9)


def test_sorted_by_position():
    assert _dets().sorted_by_position().value.tolist() == [5, 2, 0]


def test_box_iou_known_values():
    a = np.array([[0, 0, 10, 10], [0, 0, 0, 0]])
    b = np.array([[5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 10, 10]])
    iou = box_iou(a, b)
    np.testing.assert_allclose(iou, [[50 / 150, 0, 1], [0, 0, 0]])


def test_face_values_from_names():
    assert face_values({0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "x"}).tolist() == [1, 2, 3, 4, 5, 6, 0]
    # classifier folders sorted differently still map by name
    assert face_values({0: "x", 1: "6", 2: "5", 3: "4", 4: "3", 5: "2", 6: "1"}).tolist() == [0, 6, 5, 4, 3, 2, 1]
    # generic names: class k = face k + 1 (YOLO dice datasets)
    assert face_values({i: str(i) for i in range(6)}).tolist() == [1, 2, 3, 4, 5, 6]


@pytest.fixture(scope="module")
def reader():
    m = untrained_models()
    return DiceReader(m["det_onnx"], m["cls_onnx"], value_conf=0.6)


def test_decide_uncertain_rules(reader):
    values = face_values({0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "x"})
    probs = np.array(
        [
            [0.0, 0.0, 0.0, 0.0, 0.95, 0.0, 0.05],  # clear 5
            [0.1, 0.0, 0.0, 0.0, 0.2, 0.0, 0.7],  # best is x → uncertain, best face 0.2
            [0.0, 0.55, 0.45, 0.0, 0.0, 0.0, 0.0],  # best face below value_conf → uncertain
            [0.0, 0.0, 0.0, 0.6, 0.0, 0.4, 0.0],  # exactly at value_conf → read
        ],
        np.float32,
    )
    v, c = reader.decide(probs, values)
    assert v.tolist() == [5, 0, 0, 4]
    np.testing.assert_allclose(c, [0.95, 0.2, 0.55, 0.6], rtol=1e-6)


def test_weak_boxes_are_dice_only_when_the_classifier_confirms_a_face(monkeypatch):
    m = untrained_models()
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.25, value_conf=0.5, temperature=1.0, tta=False,
                   verify_conf=0.05, verify_prob=0.9)
    assert r.verifies and r._cls_values.tolist() == [1, 2, 3, 4, 5, 6, 0]
    boxes = [[10, 10, 50, 50], [100, 10, 140, 50], [200, 10, 240, 50], [10, 100, 50, 140], [100, 100, 140, 140]]
    scores = [0.9, 0.2, 0.1, 0.06, 0.04]
    probs = [
        [0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 0.6],  # strong box: a die whatever the classifier says (uncertain)
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.95, 0.05],  # weak, a sure 6: kept
        [0.0, 0.7, 0.0, 0.0, 0.0, 0.0, 0.3],  # weak, a likely 2 but below verify_prob: dropped
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # weak, "x": dropped
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # below verify_conf: never looked at
    ]
    seen = scripted(r, monkeypatch, boxes, scores, probs)
    d = r.read(np.zeros((200, 300, 3), np.uint8))
    assert seen == {"conf": 0.05, "crops": 4}
    assert d.value.tolist() == [0, 6] and d.confidence.tolist() == pytest.approx([0.9, 0.2])
    np.testing.assert_allclose(d.xyxy, np.asarray(boxes[:2], np.float32))
    assert "verify>0.05@0.9" in r.describe()

    # At most max_verify weak boxes (the best-scoring) get the second look.
    r.max_verify = 1
    seen = scripted(r, monkeypatch, boxes, scores, probs)
    assert r.read(np.zeros((200, 300, 3), np.uint8)).value.tolist() == [0, 6] and seen["crops"] == 2

    # verify_conf >= conf turns the second look off: the detector threshold alone decides.
    off = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.25, temperature=1.0, tta=False, verify_conf=0.25)
    assert not off.verifies
    seen = scripted(off, monkeypatch, boxes, scores, probs)
    assert off.read(np.zeros((200, 300, 3), np.uint8)).value.tolist() == [0] and seen == {"conf": 0.25, "crops": 1}
    with pytest.raises(ValueError, match="verification"):
        DiceReader(m["det_onnx"], m["cls_onnx"], verify_prob=1.5)


@pytest.mark.parametrize("value_conf, values", [(0.0, [1, 5, 3]), (0.4, [1, 5, 0]), (0.6, [1, 0, 0]),
                                                 (0.5, [1, 5, 0])])
def test_the_single_model_reader_keeps_value_conf(monkeypatch, value_conf, values):
    """Without a classifier the detector's class is the face and its score the face's confidence: a die scored
    below ``value_conf`` is read uncertain (value 0, its class kept as the guess), as in the two-stage reader;
    exactly at ``value_conf`` it is read."""
    m = untrained_six_class()
    r = DiceReader(m["det_onnx"], conf=0.25, value_conf=value_conf, tta=False)
    assert not r.two_stage
    boxes = np.array([[10, 10, 50, 50], [100, 10, 140, 50], [200, 10, 240, 50]], np.float32)
    scores = np.array([0.9, 0.5, 0.3], np.float32)
    classes = np.array([0, 4, 2], np.int64)  # classes "1", "5", "3"

    def detect(image, conf):
        k = scores > conf
        return boxes[k], scores[k], classes[k]

    monkeypatch.setattr(r.detector, "detect", detect)
    monkeypatch.setattr(r, "zoom_detector", None)
    d = r.read(np.zeros((200, 300, 3), np.uint8))
    assert d.value.tolist() == values and d.data["guess"].tolist() == [1, 5, 3]
    assert d.value_confidence.tolist() == pytest.approx([0.9, 0.5, 0.3]) and len(d) == 3


def test_a_weak_box_read_as_a_one_needs_a_stronger_detector_score(monkeypatch):
    """``verify_one_conf``: a number token or coin reads as a lone pip, so the second look confirms a weak
    box whose best face is 1 only above that detector score; other faces and strong boxes are unaffected."""
    m = untrained_models()
    boxes = [[10, 10, 50, 50], [100, 10, 140, 50], [200, 10, 240, 50], [10, 100, 50, 140]]
    scores = [0.9, 0.3, 0.15, 0.12]
    one, five = [0.99, 0, 0, 0, 0, 0.01, 0], [0, 0, 0, 0, 0.99, 0.01, 0]
    probs = [one, one, one, five]  # a strong 1, a weak 1 above 0.2, a weak 1 below it (a token), a weak 5
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.5, temperature=1.0, tta=False,
                   verify_conf=0.05, verify_prob=0.95, verify_one_conf=0.2)
    scripted(r, monkeypatch, boxes, scores, probs)
    d = r.read(np.zeros((200, 300, 3), np.uint8))
    assert d.value.tolist() == [1, 1, 5] and d.confidence.tolist() == pytest.approx([0.9, 0.3, 0.12])
    assert "ones>0.2" in r.describe()
    # The token-like box stays a candidate, uncertain: a short throw's recovery cannot take it as a sure 1.
    scripted(r, monkeypatch, boxes, scores, probs)
    _, candidates = r.read_candidates(np.zeros((200, 300, 3), np.uint8))
    assert candidates.confidence.tolist() == pytest.approx([0.15]) and candidates.value.tolist() == [0]
    # ... its face kept as the guess, so the recovery can hold it for the table to confirm
    assert candidates.data["guess"].tolist() == [1] and candidates.value_confidence.tolist() == pytest.approx([0.99])
    off = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.5, temperature=1.0, tta=False,
                     verify_conf=0.05, verify_prob=0.95, verify_one_conf=0.0)
    scripted(off, monkeypatch, boxes, scores, probs)
    assert off.read(np.zeros((200, 300, 3), np.uint8)).value.tolist() == [1, 1, 1, 5] and "ones" not in off.describe()
    with pytest.raises(ValueError, match="verify_one_conf"):
        DiceReader(m["det_onnx"], m["cls_onnx"], verify_one_conf=-0.1)


def test_a_box_surely_read_as_not_a_die_is_no_die_whatever_its_score(monkeypatch):
    """``not_die_prob``: a box the classifier reads as ``x`` with at least that probability is dropped, however
    strongly the detector scored it (a noisy frame's dark corner); it stays a candidate, uncertain. A die the
    classifier cannot read but does not call ``x`` that surely (a cocked die) stays a die, uncertain."""
    m = untrained_models()
    boxes = [[10, 10, 50, 50], [100, 10, 140, 50], [200, 10, 240, 50]]
    scores = [0.9, 0.78, 0.6]
    four, noise, cocked = [0, 0, 0, 0.99, 0, 0, 0.01], [0.01, 0, 0, 0, 0, 0, 0.99], [0.2, 0, 0.2, 0, 0, 0, 0.6]
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.5, temperature=1.0, tta=False, not_die_prob=0.95)
    scripted(r, monkeypatch, boxes, scores, [four, noise, cocked])
    dice, candidates = r.read_candidates(np.zeros((200, 300, 3), np.uint8))
    assert dice.confidence.tolist() == pytest.approx([0.9, 0.6]) and dice.value.tolist() == [4, 0]
    assert candidates.confidence.tolist() == pytest.approx([0.78]) and candidates.value.tolist() == [0]
    assert candidates.data["not_die"].tolist() == [True]
    assert "not-die x>=0.95" in r.describe()
    # at exactly not_die_prob the box is no die (the rule is "at least")
    scripted(r, monkeypatch, boxes, scores, [four, [0.05, 0, 0, 0, 0, 0, 0.95], cocked])
    assert r.read(np.zeros((200, 300, 3), np.uint8)).confidence.tolist() == pytest.approx([0.9, 0.6])
    off = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.5, temperature=1.0, tta=False, not_die_prob=1.0)
    scripted(off, monkeypatch, boxes, scores, [four, noise, cocked])
    assert off.read(np.zeros((200, 300, 3), np.uint8)).value.tolist() == [4, 0, 0] and "not-die" not in off.describe()
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="not_die_prob"):
            DiceReader(m["det_onnx"], m["cls_onnx"], not_die_prob=bad)


def test_nested_in_stronger_drops_a_face_boxed_inside_its_die():
    boxes = np.array([[0, 0, 100, 100],    # the whole die (strongest)
                      [10, 5, 90, 60],     # its top face, all inside: the same die again
                      [95, 0, 195, 100],   # a neighbouring die touching it: kept
                      [150, 40, 260, 140],  # overlaps the neighbour by 40 % of its own area: kept
                      [60, 60, 160, 160]], np.float32)  # a heap: a quarter inside the first die: kept
    keep = np.ones(5, bool)
    assert nested_in_stronger(boxes, keep, 0.7).tolist() == [False, True, False, False, False]
    # Only kept boxes suppress: with the whole die not kept, its face stands.
    assert nested_in_stronger(boxes, np.array([False, True, True, True, True]), 0.7).tolist() == [False] * 5
    # A weaker outer box never removes a stronger inner one (order is strength).
    assert nested_in_stronger(boxes[[1, 0]], np.ones(2, bool), 0.7).tolist() == [False, False]
    assert not nested_in_stronger(boxes, keep, 1.0).any()


def test_nested_in_stronger_takes_each_box_its_own_share():
    boxes = np.array([[0, 0, 100, 100],     # a die
                      [50, 0, 150, 100],    # half onto it
                      [90, 0, 190, 100]], np.float32)  # a tenth onto it
    keep = np.ones(3, bool)
    assert nested_in_stronger(boxes, keep, np.array([1.0, 0.4, 0.4])).tolist() == [False, True, False]
    assert nested_in_stronger(boxes, keep, np.array([1.0, 0.7, 0.05])).tolist() == [False, False, True]
    # A box whose own share is 1 is never dropped, even lying wholly inside a stronger one.
    assert not nested_in_stronger(boxes[[0, 0]], np.ones(2, bool), np.array([0.4, 1.0])).any()
    with pytest.raises(ValueError, match="one per box"):
        nested_in_stronger(boxes, keep, np.array([0.4, 0.4]))


def test_reader_reports_a_die_once_when_its_face_is_boxed_too(monkeypatch):
    m = untrained_models()
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.25, value_conf=0.5, temperature=1.0, tta=False,
                   verify_conf=0.25)
    boxes = [[10, 10, 60, 60], [15, 12, 55, 40], [100, 10, 150, 60]]
    probs = [[0, 0, 0, 0, 0.9, 0, 0.1], [0, 0, 0, 0, 0.9, 0, 0.1], [0.9, 0, 0, 0, 0, 0, 0.1]]
    scripted(r, monkeypatch, boxes, [0.9, 0.8, 0.7], probs)
    dice, candidates = r.read_candidates(np.zeros((200, 300, 3), np.uint8))
    assert dice.value.tolist() == [5, 1] and len(candidates) == 1
    r.nested_frac = 1.0
    scripted(r, monkeypatch, boxes, [0.9, 0.8, 0.7], probs)
    assert r.read(np.zeros((200, 300, 3), np.uint8)).value.tolist() == [5, 5, 1]
    with pytest.raises(ValueError, match="nested_frac"):
        DiceReader(m["det_onnx"], m["cls_onnx"], nested_frac=0.0)


def test_a_weak_box_half_on_a_found_die_is_that_die_again(monkeypatch):
    """A second-look box shifted half onto a sure die (byler-d6 ``IMG_20191208_112933``'s pink 5, read twice
    before ``weak_nested_frac``) is dropped; the same overlap between two sure boxes is two dice."""
    m = untrained_models()
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.45, value_conf=0.5, temperature=1.0, tta=False,
                   verify_conf=0.05, verify_prob=0.9, verify_one_conf=0.05, weak_nested_frac=0.4)
    # a sure die, a weak lone die, and a weak box 42 % of whose area lies on the sure die (detector order)
    boxes = [[100, 100, 150, 150], [300, 100, 350, 150], [80, 85, 130, 135]]
    probs = [[0, 0, 0, 0, 0.99, 0, 0.01], [0, 0.99, 0, 0, 0, 0, 0.01], [0, 0, 0, 0, 0.99, 0, 0.01]]
    frame = np.zeros((400, 500, 3), np.uint8)
    scripted(r, monkeypatch, boxes, [0.9, 0.08, 0.06], probs)
    dice, candidates = r.read_candidates(frame)
    assert dice.value.tolist() == [5, 2]  # the weak twin dropped, the weak lone die kept
    assert candidates.value.tolist() == [5] and candidates.xyxy.tolist() == [boxes[2]]  # the twin, as a candidate
    r.weak_nested_frac = 0.5  # asks more than the twin's 42 %
    scripted(r, monkeypatch, boxes, [0.9, 0.08, 0.06], probs)
    assert r.read(frame).value.tolist() == [5, 2, 5]
    r.weak_nested_frac = 0.4
    scripted(r, monkeypatch, boxes, [0.9, 0.6, 0.5], probs)  # all sure: touching dice, nested_frac applies
    assert r.read(frame).value.tolist() == [5, 2, 5]
    r.weak_nested_frac = 1.0  # weak boxes as strong ones: 42 % is under nested_frac's 70 %
    scripted(r, monkeypatch, boxes, [0.9, 0.08, 0.06], probs)
    assert r.read(frame).value.tolist() == [5, 2, 5]
    r.weak_nested_frac, r.nested_frac = 0.4, 1.0  # nested_frac 1 turns the one-box rule off for every box
    scripted(r, monkeypatch, boxes, [0.9, 0.08, 0.06], probs)
    assert r.read(frame).value.tolist() == [5, 2, 5]
    r.weak_nested_frac, r.nested_frac = 0.9, 0.4  # a weak share above nested_frac is capped at it
    scripted(r, monkeypatch, boxes, [0.9, 0.08, 0.06], probs)
    assert r.read(frame).value.tolist() == [5, 2]
    with pytest.raises(ValueError, match="weak_nested_frac"):
        DiceReader(m["det_onnx"], m["cls_onnx"], weak_nested_frac=1.5)


def test_temperature_from_reader_json(tmp_path):
    m = untrained_models()
    shutil.copy(m["det_onnx"], tmp_path / "det.onnx")
    shutil.copy(m["cls_onnx"], tmp_path / "cls.onnx")
    img = synthetic_frame(1280, 720, 5, 70, seed=0)[0]
    plain = DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx", conf=0.7, value_conf=0.0)
    assert plain.temperature == 1.0
    (tmp_path / "reader.json").write_text(json.dumps({"temperature": 2.0}))
    hot = DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx", conf=0.7, value_conf=0.0)
    assert hot.temperature == 2.0
    a, b = plain.read(img), hot.read(img)
    assert np.array_equal(a.value, b.value)  # temperature never changes the ranking
    probs = plain.face_probs(plain.crops(img, a.xyxy))  # raw (TTA-averaged) probabilities
    p2 = np.sqrt(probs) / np.sqrt(probs).sum(1, keepdims=True)  # softmax(log p / 2)
    expect = np.where(p2.argmax(1) == 6, p2[:, :6].max(1), p2.max(1))  # class x → best face's prob
    np.testing.assert_allclose(b.value_confidence, expect, rtol=1e-4)
    read = a.value > 0
    assert read.any() and (b.value_confidence[read] < a.value_confidence[read] + 1e-6).all()  # T > 1 flattens
    (tmp_path / "reader.json").write_text("{not json")
    with pytest.raises(Exception, match="reader settings"):
        DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx")


def test_read_rejects_bad_arrays(reader):
    with pytest.raises(ValueError):
        reader.read(np.zeros((10, 10), np.uint8))
    with pytest.raises(ValueError):
        reader.read(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(ValueError):
        reader.read(np.zeros((0, 10, 3), np.uint8))


def test_read_tiny_and_huge_frames(reader):
    assert isinstance(reader.read(np.full((1, 1, 3), 90, np.uint8)), Detections)
    d = reader.read(synthetic_frame(3000, 400, 4, 60, seed=4)[0])
    assert (d.xyxy[:, 2] <= 3000).all() and (d.xyxy[:, 3] <= 400).all() and (d.xyxy >= 0).all()


def test_nms_known_case():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 9]], np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.95], np.float32)
    # box 3 (0.95) suppresses 0 (IoU 0.9) and 1 (IoU 0.61 > 0.5); box 2 is apart
    assert nms(boxes, scores, 0.5).tolist() == [3, 2]
    assert nms(boxes, scores, 0.95).tolist() == [3, 0, 1, 2]


def test_decode_detections_xywh_and_threshold():
    raw = np.array(
        [
            # cx, cy, w, h, score
            [50, 50, 20, 20, 0.9],
            [51, 50, 20, 20, 0.8],  # overlaps the first → suppressed
            [200, 100, 40, 20, 0.6],
            [300, 300, 10, 10, 0.25],  # not > conf
        ],
        np.float32,
    ).T[None]
    xyxy, s, c = decode_detections(raw, conf=0.25, iou=0.7)
    np.testing.assert_allclose(xyxy, [[40, 40, 60, 60], [180, 90, 220, 110]])
    np.testing.assert_allclose(s, [0.9, 0.6])
    assert c.tolist() == [0, 0]
    assert len(decode_detections(raw, conf=0.25, iou=0.7, max_det=1)[0]) == 1


def test_ncnn_folder_names_reach_ultralytics(tmp_path):
    """Registry folders such as det_ncnn/ get a *_ncnn_model name Ultralytics recognises."""
    from kosti.vision.ultralytics_backend import is_ncnn_dir, ultralytics_model_path

    d = tmp_path / "det_ncnn"
    d.mkdir()
    assert not is_ncnn_dir(d)
    (d / "model.ncnn.param").write_text("7767517\n")
    (d / "model.ncnn.bin").write_bytes(b"\0")
    assert is_ncnn_dir(d)
    link = ultralytics_model_path(d)
    assert link.name == "det_ncnn_ncnn_model" and link.resolve() == d.resolve()
    assert (link / "model.ncnn.param").is_file()
    named = tmp_path / "dice_det_ncnn_model"
    named.mkdir()
    assert ultralytics_model_path(named) == named


def test_tta_views_are_the_rotations_and_with_mirror_the_eight_symmetries_of_a_square():
    """:func:`tta_views`: view-major ``(4K, h, w, 3)``; view 0 is the crop itself; the views of an asymmetric
    crop are pairwise different and closed under the group (the views of any view are the same images); with
    ``mirror`` the same for the 8 symmetries."""
    from kosti.vision.crops import TTA_VIEWS, tta_views

    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (3, 6, 6, 3), dtype=np.uint8)
    for mirror, n in ((False, 4), (True, 8)):
        views = tta_views(crops, mirror=mirror)
        assert views.shape == (3 * n, 6, 6, 3) and views.flags.c_contiguous
        np.testing.assert_array_equal(views[:3], crops)
        first = views.reshape(n, 3, 6, 6, 3)[:, 0]
        keys = {v.tobytes() for v in first}
        assert len(keys) == n
        assert {v.tobytes() for v in tta_views(first[n - 1 : n], mirror=mirror)} == keys
    assert TTA_VIEWS == 4


def test_face_probs_average_the_four_views(monkeypatch):
    m = untrained_models()
    r = DiceReader(m["det_onnx"], m["cls_onnx"], temperature=1.0, tta=True)
    seen = []

    def classify(crops):
        seen.append(len(crops))
        out = np.zeros((len(crops), 7), np.float32)
        out[: len(crops) // 4, 0] = 1.0  # only view 0 says "1"; the other three say "6"
        out[len(crops) // 4 :, 5] = 1.0
        return out

    monkeypatch.setattr(r.classifier, "classify", classify)
    p = r.face_probs(np.zeros((2, 64, 64, 3), np.uint8))
    assert seen == [8] and p.shape == (2, 7)
    np.testing.assert_allclose(p[:, 0], 1 / 4)
    np.testing.assert_allclose(p[:, 5], 3 / 4)


def test_upright_views_keep_the_top_of_the_crop_on_top():
    """``reader_views(…, "upright")``: the crop and its left–right mirror, view-major; row 0 of each view is the
    crop's row 0 (a die seen from the side keeps its top face at the top). Unknown names are refused."""
    from kosti.vision.crops import VIEW_COUNTS, reader_views, tta_views

    rng = np.random.default_rng(1)
    crops = rng.integers(0, 255, (3, 6, 6, 3), dtype=np.uint8)
    views = reader_views(crops, "upright")
    assert views.shape == (3 * VIEW_COUNTS["upright"], 6, 6, 3) and views.flags.c_contiguous
    np.testing.assert_array_equal(views[:3], crops)
    np.testing.assert_array_equal(views[3:], crops[:, :, ::-1])
    assert {r.tobytes() for r in views[:, 0]} == {r.tobytes() for r in np.concatenate([crops[:, 0], crops[:, 0, ::-1]])}
    np.testing.assert_array_equal(reader_views(crops, "turns"), tta_views(crops))
    with pytest.raises(ValueError, match="unknown test-time views"):
        reader_views(crops, "sideways")


def test_the_views_come_from_reader_json_and_set_how_many_crops_are_read(tmp_path, monkeypatch):
    m = untrained_models()
    shutil.copy(m["det_onnx"], tmp_path / "det.onnx")
    shutil.copy(m["cls_onnx"], tmp_path / "cls.onnx")
    assert DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx").views == "turns"  # no reader.json
    (tmp_path / "reader.json").write_text(json.dumps({"temperature": 0.9, "views": "upright"}))
    r = DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx")
    assert (r.views, r.temperature) == ("upright", 0.9)
    assert DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx", views="turns").views == "turns"  # asked wins
    seen = []

    def classify(crops):
        seen.append(crops.copy())
        out = np.zeros((len(crops), 7), np.float32)
        out[: len(crops) // 2, 2] = 1.0  # the crop itself says "3", its mirror image "4"
        out[len(crops) // 2 :, 3] = 1.0
        return out

    monkeypatch.setattr(r.classifier, "classify", classify)
    crops = np.random.default_rng(2).integers(0, 255, (2, 64, 64, 3), dtype=np.uint8)
    p = r.face_probs(crops)
    assert len(seen[0]) == 4 and p.shape == (2, 7)
    np.testing.assert_array_equal(seen[0][2:], crops[:, :, ::-1])
    np.testing.assert_allclose(p[:, 2], 0.5)
    np.testing.assert_allclose(p[:, 3], 0.5)
    (tmp_path / "reader.json").write_text(json.dumps({"views": "sideways"}))
    with pytest.raises(Exception, match="unknown test-time views"):
        DiceReader(tmp_path / "det.onnx", tmp_path / "cls.onnx")


# Issue 38, "inner boxes win": dice thrown into a ring of tape, a tray, a box lid. Boxes as the detector gives
# them, strongest first: the container scored above the dice (the roll of tape: read 2 at p 0.29).
_RING = [[100, 100, 400, 400], [160, 170, 220, 230], [250, 200, 310, 260], [200, 300, 260, 360]]
_TRAY = [[20, 20, 620, 420], [60, 60, 110, 110], [300, 200, 350, 250], [500, 330, 550, 380], [400, 60, 450, 110]]
_LID = [[0, 0, 200, 150], [20, 20, 60, 60], [120, 80, 160, 120]]


@pytest.mark.parametrize("boxes", [_RING, _TRAY, _LID], ids=["ring of tape", "tray", "box lid"])
def test_a_container_holding_dice_is_dropped_and_its_dice_stay(boxes):
    from kosti.vision.detections import containers

    boxes = np.asarray(boxes, np.float32)
    keep = np.ones(len(boxes), bool)
    assert containers(boxes, keep, 0.7).tolist() == [True] + [False] * (len(boxes) - 1)
    # without the container rule the one-box rule keeps the container and drops every die inside it
    assert nested_in_stronger(boxes, keep, 0.7).tolist() == [False] + [True] * (len(boxes) - 1)
    assert not containers(boxes, keep, 1.0).any(), "nested_frac 1 turns the rule off"
    assert not containers(boxes[:2], keep[:2], 0.7).any(), "one die inside: the one-box rule decides"


def test_a_die_with_its_faces_boxed_is_no_container():
    """A die seen from the side with its top face and a side face boxed inside its box: one die, not a container
    (each face is more than a quarter of the die's box), nor are two dice lying on one another's edge."""
    from kosti.vision.detections import containers

    die = np.array([[0, 0, 100, 100], [10, 5, 90, 55], [10, 50, 90, 98]], np.float32)
    assert not containers(die, np.ones(3, bool), 0.7).any()
    assert nested_in_stronger(die, np.ones(3, bool), 0.7).tolist() == [False, True, True]
    # two small boxes lying on each other (one die boxed twice) inside a big box: one inner die, no container
    twice = np.array([[0, 0, 300, 300], [100, 100, 150, 150], [105, 102, 152, 150]], np.float32)
    assert not containers(twice, np.ones(3, bool), 0.7).any()
    # only kept boxes count
    assert not containers(np.asarray(_RING, np.float32), np.array([True, True, False, False]), 0.7).any()
    with pytest.raises(ValueError, match="one per box"):
        containers(die, np.ones(3, bool), np.array([0.7, 0.7]))


def test_reader_reads_the_dice_inside_a_tray_not_the_tray(monkeypatch):
    m = untrained_models()
    r = DiceReader(m["det_onnx"], m["cls_onnx"], conf=0.25, value_conf=0.5, temperature=1.0, tta=False,
                   verify_conf=0.25)
    two, three, six = ([0, 0.9, 0, 0, 0, 0, 0.1], [0, 0, 0.9, 0, 0, 0, 0.1], [0, 0, 0, 0, 0, 0.9, 0.1])
    tray = [[0.3, 0.35, 0, 0, 0, 0, 0.35]]  # the classifier's unsure "2" for the ring of tape
    scripted(r, monkeypatch, _RING, [0.9, 0.8, 0.7, 0.6], tray + [two, three, six])
    dice, candidates = r.read_candidates(np.zeros((500, 500, 3), np.uint8))
    assert sorted(dice.value.tolist()) == [2, 3, 6] and len(dice) == 3
    assert candidates.xyxy.tolist() == [_RING[0]], "the container is a candidate, not a die"
