"""The reader's decisions judged at their bounds (issue 45: the mutants of ``DiceReader.decide``, ``second_look``,
``dice_mask``, ``one_box_per_die`` and ``_read_with`` that the reader's unit and ONNX tests let through): a
detector score exactly at ``conf`` or ``verify_conf``, a face probability exactly at ``verify_prob``, the
second-look budget, degenerate boxes, empty frames, and what a read reports of its time (on a fake clock).
Probabilities are binary fractions (0.75, 0.875 …) so a float32 score or probability is exactly the threshold."""

from __future__ import annotations

import numpy as np
import pytest
from reader_models import scripted, untrained_models, untrained_six_class

from kosti.vision import reader as reader_module
from kosti.vision.reader import DiceReader

FRAME = np.zeros((200, 300, 3), np.uint8)
FIVE = [0, 0, 0, 0, 0.875, 0, 0.125]
ONE = [0.875, 0, 0, 0, 0, 0, 0.125]
X = [0.125, 0, 0, 0, 0, 0, 0.875]


def _reader(**settings: object) -> DiceReader:
    m = untrained_models()
    base = {"conf": 0.5, "value_conf": 0.5, "temperature": 1.0, "tta": False, "verify_conf": 0.125,
            "verify_prob": 0.875, "verify_one_conf": 0.0, "not_die_prob": 1.0, "nested_frac": 0.7}
    return DiceReader(m["det_onnx"], m["cls_onnx"], **{**base, **settings})  # type: ignore[arg-type]


def _boxes(n: int) -> list[list[float]]:
    return [[10.0 + 60 * i, 10.0, 50.0 + 60 * i, 50.0] for i in range(n)]


def test_the_second_look_takes_scores_from_above_verify_conf_up_to_conf_within_its_budget():
    r = _reader(max_verify=2)
    scores = np.array([0.75, 0.5, 0.375, 0.25, 0.125, 0.0625])
    assert r.second_look(scores).tolist() == [False, True, True, False, False, False]  # 0.5 = conf: weak
    r.max_verify = 3
    assert r.second_look(scores).tolist() == [False, True, True, True, False, False]  # 0.125 = verify_conf: not
    r.max_verify = 10  # the budget no bound: exactly verify_conf is still no second look
    assert r.second_look(scores).tolist() == [False, True, True, True, False, False]
    r.max_verify = 0
    assert not r.second_look(scores).any() and not r.verifies
    off = _reader(verify_conf=0.5)
    assert not off.verifies and off.second_look(scores).tolist() == [False] * 6
    assert off.second_look(np.zeros(0)).shape == (0,)


def test_a_box_is_a_die_above_conf_or_confirmed_at_verify_prob_exactly():
    r = _reader()
    scores = np.array([0.5, 0.375, 0.25, 0.75], np.float32)
    probs = np.array([X, [0, 0, 0.875, 0, 0, 0, 0.125], [0, 0, 0.75, 0, 0, 0, 0.25], X], np.float32)
    # 0.5 = conf and read "x": no die; a face at exactly verify_prob confirms; below it does not; above conf a die
    assert r.dice_mask(scores, probs).tolist() == [False, True, False, True]
    # no classifier probabilities (nothing classified): the detector's threshold alone
    assert r.dice_mask(scores, np.zeros((0, 7), np.float32)).tolist() == [False, False, False, True]
    # the lone-1 rule: a weak 1 scored exactly verify_one_conf is not confirmed, one scored above it is
    ones = _reader(verify_one_conf=0.375)
    p1 = np.array([ONE, ONE, ONE, ONE], np.float32)
    assert ones.dice_mask(np.array([0.75, 0.5, 0.4375, 0.375], np.float32), p1).tolist() == [True, True, True, False]
    # the not-a-die rule drops even a strong box; off (1.0), it does not
    sure_x = _reader(not_die_prob=0.875)
    assert sure_x.dice_mask(np.array([0.75, 0.75], np.float32), np.array([X, FIVE], np.float32)).tolist() == [
        False, True]


def test_decide_on_no_boxes_and_on_ties_with_the_unreadable_class():
    r = _reader(value_conf=0.5)
    values = r.class_values
    v, c = r.decide(np.zeros((0, 7), np.float32), values)
    assert v.shape == (0,) and c.shape == (0,) and v.dtype == np.int8 and c.dtype == np.float32
    probs = np.array([[0, 0, 0, 0, 0, 0.5, 0.5],  # a tie of 6 and x: the first best class (6) at 0.5 = value_conf
                      [0, 0.25, 0, 0, 0, 0, 0.75],  # x wins: uncertain, the best face's 0.25 reported
                      [0.5, 0, 0, 0, 0.5, 0, 0]], np.float32)  # a tie of faces: the first (1)
    v, c = r.decide(probs, values)
    assert v.tolist() == [6, 0, 1] and c.tolist() == [0.5, 0.25, 0.5]


def test_one_box_per_die_needs_one_flag_and_score_per_box_and_keeps_separate_dice():
    r = _reader()
    xyxy = np.array(_boxes(3), np.float32)
    keep = np.array([True, False, True])
    assert r.one_box_per_die(xyxy, keep, np.array([0.9, 0.8, 0.7])).tolist() == [True, False, True]
    for bad in ((xyxy[:2], keep, [0.9, 0.8, 0.7]), (xyxy, keep[:2], [0.9, 0.8, 0.7]), (xyxy, keep, [0.9, 0.8])):
        with pytest.raises(ValueError, match="one_box_per_die"):
            r.one_box_per_die(bad[0], bad[1], np.asarray(bad[2]))
    nested = np.array([[0, 0, 100, 100], [10, 10, 90, 90]], np.float32)
    assert r.one_box_per_die(nested, np.ones(2, bool), np.array([0.9, 0.8])).tolist() == [True, False]


def test_a_box_exactly_at_conf_is_classified_only_within_the_second_look_budget(monkeypatch):
    """Two boxes scored exactly ``conf`` with room for one second look: the first is classified (a weak box), the
    second is not even read — it is neither a die nor a candidate."""
    r = _reader(max_verify=1)
    seen = scripted(r, monkeypatch, _boxes(3), [0.75, 0.5, 0.5], [FIVE, FIVE, FIVE])
    dice, candidates = r.read_candidates(FRAME)
    assert seen == {"conf": 0.125, "crops": 2}
    assert dice.confidence.tolist() == [0.75, 0.5] and len(candidates) == 0


def test_a_box_one_pixel_wide_is_read_and_a_thinner_one_dropped(monkeypatch):
    r = _reader()
    boxes = [[10, 10, 50, 50], [100, 10, 101, 50], [150, 10, 150.5, 50], [200, 20, 240, 21], [250, 20, 290, 20.5]]
    seen = scripted(r, monkeypatch, boxes, [0.75] * 5, [FIVE] * 5)
    dice, candidates = r.read_candidates(FRAME)
    assert seen["crops"] == 3 and len(candidates) == 0
    assert dice.xyxy.tolist() == [boxes[0], boxes[1], boxes[3]] and dice.value.tolist() == [5, 5, 5]


def test_an_empty_frame_reads_no_dice_and_no_candidates(monkeypatch):
    for r in (_reader(), _reader(verify_conf=0.5)):
        scripted(r, monkeypatch, np.zeros((0, 4)), np.zeros(0), np.zeros((0, 7)))
        dice, candidates = r.read_candidates(FRAME)
        assert len(dice) == 0 and len(candidates) == 0
        assert dice.value.dtype == np.int8 and candidates.data["not_die"].dtype == bool
    single = DiceReader(untrained_six_class()["det_onnx"], conf=0.5, tta=False)
    assert not single.two_stage
    monkeypatch.setattr(single.detector, "detect", lambda image, conf: (np.zeros((0, 4), np.float32),
                                                                        np.zeros(0, np.float32), np.zeros(0, np.int64)))
    monkeypatch.setattr(single, "zoom_detector", None)
    dice, candidates = single.read_candidates(FRAME)
    assert len(dice) == 0 and len(candidates) == 0 and len(dice.data["guess"]) == 0


def test_a_read_reports_its_detector_and_classifier_time_in_milliseconds(monkeypatch):
    """On a fake clock: 0.25 s detecting, 0.5 s classifying."""
    r = _reader()
    scripted(r, monkeypatch, _boxes(1), [0.75], [FIVE])
    ticks = iter([10.0, 10.25, 10.75])

    class Clock:
        @staticmethod
        def perf_counter() -> float:
            return next(ticks)

    monkeypatch.setattr(reader_module, "time", Clock)
    dice, _ = r._read_with(r.detector, FRAME)
    assert len(dice) == 1
    assert r.last_timing == {"detect": 250.0, "classify": 500.0, "total": 750.0}
