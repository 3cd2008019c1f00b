"""Live pipeline: voting, throw checks, one throw per rest period, zones and the threaded runner (the
virtual table and scripted readers). Recovery of missed dice: test_pipeline_recovery.py; the real
photos and ``kosti watch``: test_pipeline_real.py."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from pipeline_helpers import _rest_hand_rest, dets

from kosti.sim.replay import FolderSource
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.detections import Detections
from kosti.vision.pipeline import Die, LivePipeline, ThrowDetector, check_throw, vote
from kosti.vision.settle import SettleState
from kosti.vision.zones import Zones


# -- voting -----------------------------------------------------------------------------------------
def test_vote_majority_per_die_with_box_matching():
    a = (100, 100, 140, 140)
    b = (300, 100, 340, 140)
    reads = [
        dets([(*a, 5, 0.9), (*b, 3, 0.8)]),
        dets([(102, 101, 141, 141, 5, 0.95), (301, 99, 341, 139, 2, 0.6)]),   # b misread once
        dets([(*b, 3, 0.85), (*a, 5, 0.9), (600, 600, 640, 640, 1, 0.9)]),    # spurious box once, order swapped
    ]
    dice = vote(reads)
    assert [d.value for d in dice] == [5, 3]  # left to right; the spurious box (1 of 3 frames) is dropped
    assert not any(d.uncertain for d in dice)
    assert dice[1].votes == (2, 3, 3)
    assert dice[0].confidence == pytest.approx((0.9 + 0.95 + 0.9) / 3)
    assert dice[1].confidence == pytest.approx(2 / 3 * 0.825)
    assert dice[0].box == pytest.approx((100, 100, 140, 140))  # median box


def test_vote_uncertain_when_faces_disagree_or_unread():
    a = (100, 100, 140, 140)
    b = (300, 100, 340, 140)
    reads = [dets([(*a, 1, 0.9), (*b, 0, 0.3)]), dets([(*a, 2, 0.9), (*b, 0, 0.4)]), dets([(*a, 3, 0.9), (*b, 4, 0.7)])]
    dice = vote(reads)
    assert [d.uncertain for d in dice] == [True, True]
    assert [d.value for d in dice] == [0, 0]
    assert dice[0].guess in (1, 2, 3) and dice[1].guess == 4
    # A die missed in 2 of 3 frames is not a die.
    assert vote([dets([(*a, 6, 0.9)]), dets([]), dets([])]) == []
    # One frame: pass-through, low probability → uncertain.
    one = vote([dets([(*a, 6, 0.4)])], min_value_confidence=0.5)
    assert one[0].uncertain and one[0].guess == 6


def test_duplicate_boxes_of_one_die_are_merged_but_real_overlaps_are_flagged():
    a = (100, 100, 140, 140)
    dup = (104, 103, 146, 144)  # IoU ≈ 0.7 with a: the same die found twice
    lean = (128, 100, 168, 140)  # IoU ≈ 0.18 with a: a die leaning on its neighbour
    d = Detections(np.array([dup, a, lean], dtype=float), np.array([0.6, 0.9, 0.8]), np.array([4, 5, 2]),
                   np.array([0.9, 0.9, 0.9]))
    from kosti.vision.pipeline import dedupe

    kept = dedupe(d)
    assert kept.value.tolist() == [5, 2]  # the less confident duplicate is gone, order kept
    dice = vote([d])
    assert [x.value for x in dice] == [5, 2]
    assert [c for c, _ in check_throw(dice, 2, overlap_iou=0.1)] == ["overlap"]
    assert len(vote([d], dedupe_iou=None)) == 3


def test_check_throw_reasons_in_english_and_russian():
    ok = [Die(5, 0.9, (0, 0, 10, 10)), Die(1, 0.9, (20, 0, 30, 10))]
    assert check_throw(ok, 2) == []
    assert check_throw(ok, None) == []
    reasons = dict(check_throw(ok, 3))
    assert "expected 3 dice" in reasons["wrong_count"] and "ожидалось" in reasons["wrong_count"]
    stacked = [Die(5, 0.9, (0, 0, 10, 10)), Die(1, 0.9, (2, 2, 12, 12))]
    assert [c for c, _ in check_throw(stacked, 2)] == ["overlap"]
    bad = [Die(0, 0.0, (0, 0, 10, 10), uncertain=True, guess=0, votes=(0, 3, 3)),
           Die(0, 0.3, (20, 0, 30, 10), uncertain=True, guess=4, votes=(3, 3, 3))]
    codes = [c for c, _ in check_throw(bad, 2)]
    assert codes == ["unreadable", "low_confidence"]
    warn = check_throw(ok, 2, set_aside=[Die(1, 0.9, (50, 0, 60, 10))], expected_set_aside=[5])
    assert [c for c, _ in warn] == ["set_aside_mismatch"]


# -- settle → throw on the virtual table (a truth reader stands in for the models) ---------------------
class TruthReader:
    """Reads the virtual table's ground truth of the dice at rest (tests settle/zones logic, not vision)."""

    def __init__(self, src: VirtualTableSource, misread: dict[int, int] | None = None) -> None:
        self.src = src
        self.calls = 0
        self.misread = misread or {}

    def read(self, image: np.ndarray) -> Detections:
        self.calls += 1
        th = self.src.last_throw
        assert th is not None and th.boxes is not None, "the reader ran before the dice came to rest"
        values = [self.misread.get(i, d.face) for i, d in enumerate(th.dice)]
        return Detections(th.boxes, np.full(len(values), 0.95), np.array(values), np.full(len(values), 0.97))


def virtual(n: int = 5, **kw) -> VirtualTableSource:
    return VirtualTableSource(n_dice=n, size=(640, 360), fps=30, realtime=False, tumble_s=0.8, seed=11,
                              initial_throw=False, **kw)


def drive(src: VirtualTableSource, det: ThrowDetector, plan: list[tuple[int, list[int] | None]], rest_frames: int = 40):
    """Throw per ``plan`` (n_dice, faces), letting each come to rest; returns (throws, results)."""
    throws, results = [], []
    with src:
        for n, faces in plan:
            src.throw(n_dice=n, faces=faces)
            for _ in range(int(0.8 * 30) + rest_frames):
                r = det.process(src.read())
                results.append(r)
                if r.throw is not None:
                    throws.append(r.throw)
    return throws, results


def test_every_virtual_throw_is_reported_once_with_the_right_faces():
    src = virtual()
    reader = TruthReader(src)
    det = ThrowDetector(reader, expected_dice=5, vote_frames=3)
    plan = [(5, None), (5, [1, 1, 5, 2, 3]), (3, None), (5, None)]
    throws, results = drive(src, det, plan)
    assert len(throws) == len(plan)
    for throw, truth in zip(throws, src.throws):
        assert throw.faces == truth.faces
        assert throw.frame_index >= truth.first_rest_index  # read only after the dice came to rest
        assert throw.frame_index - truth.first_rest_index <= 0.4 * 30 + 2  # within the still time (+1 frame)
        assert throw.frames_read == 3
    assert [t.status for t in throws] == ["ok", "ok", "uncertain", "ok"]  # 3 dice when 5 were expected
    assert "expected 5 dice" in throws[2].reasons[0]
    assert reader.calls == 3 * len(plan)  # the reader runs only on settle
    assert sum(r.update.settled_now for r in results) == len(plan)


def test_misread_die_and_zones():
    # Roll area: left 3/4 of the frame; set-aside strip on the right.
    zones = Zones(roll_area=[(0, 0), (0.75, 0), (0.75, 1), (0, 1)], set_aside=[(0.75, 0), (1, 0), (1, 1), (0.75, 1)])
    src = virtual()
    det = ThrowDetector(TruthReader(src), zones=zones, vote_frames=1)
    throws, _ = drive(src, det, [(5, None)])
    (throw,) = throws
    truth = src.throws[0]
    cx = (truth.boxes[:, 0] + truth.boxes[:, 2]) / 2
    in_roll = sorted(d.face for d, x in zip(truth.dice, cx) if x <= 0.75 * 640)
    in_aside = sorted(d.face for d, x in zip(truth.dice, cx) if x > 0.75 * 640)
    assert throw.faces == in_roll
    assert sorted(d.value for d in throw.set_aside) == in_aside
    assert len(throw.dice) + len(throw.set_aside) == 5


def test_unread_die_makes_the_throw_uncertain():
    src = virtual()
    det = ThrowDetector(TruthReader(src, misread={0: 0}), expected_dice=5)
    throws, _ = drive(src, det, [(5, [2, 3, 4, 6, 6])])
    (throw,) = throws
    assert throw.status == "uncertain"
    assert throw.reason_codes == ["unreadable"]
    assert sum(d.uncertain for d in throw.dice) == 1


def test_a_hand_over_still_dice_is_not_a_new_throw(tmp_path: Path):
    # A folder holding the same photo twice: the replay shows a hand sweep between two identical rests.
    src = virtual()
    with src:
        src.throw(faces=[1, 2, 3])
        frames = [src.read() for _ in range(40)]
    truth = src.throws[0]
    still = frames[-1].image
    cv2.imwrite(str(tmp_path / "a1.png"), still)
    cv2.imwrite(str(tmp_path / "a2.png"), still)
    table = np.full_like(still, 0)
    table[:] = frames[0].image  # the empty table (before the throw)
    cv2.imwrite(str(tmp_path / "a3.png"), table)

    class PhotoReader:
        def read(self, image: np.ndarray) -> Detections:
            if np.abs(image.astype(int) - still.astype(int)).mean() < 1:
                return Detections(truth.boxes, np.ones(3), np.array([d.face for d in truth.dice]), np.ones(3))
            return Detections.empty()

    det = ThrowDetector(PhotoReader())
    skipped, throws = [], []
    with FolderSource(tmp_path, hold_s=1.0, transition_s=0.5, fps=30) as folder:
        for frame in folder:
            r = det.process(frame)
            if r.throw:
                throws.append(r.throw)
            if r.skipped:
                skipped.append(r.skipped)
    assert len(throws) == 1 and throws[0].faces == [1, 2, 3]
    assert skipped == ["same", "empty"]


class ScriptedReader:
    """Returns the given Detections in turn, one per call (settle logic only)."""

    def __init__(self, script: list[Detections]) -> None:
        self.script = list(script)

    def read(self, image: np.ndarray) -> Detections:
        return self.script.pop(0)


def test_rereading_unmoved_dice_is_not_a_new_throw_unless_the_first_read_was_uncertain():
    two = [(60, 50, 90, 80), (200, 50, 230, 80)]
    read_a = dets([(*two[0], 5, 0.9), (*two[1], 1, 0.9)])
    misread = dets([(*two[0], 6, 0.9), (*two[1], 1, 0.9)])
    det = ThrowDetector(ScriptedReader([read_a, misread]), expected_dice=2, vote_frames=1)
    results = _rest_hand_rest(det)
    assert [r.throw.faces for r in results if r.throw] == [[1, 5]]
    assert [r.skipped for r in results if r.skipped] == ["same"]  # a misread of the same dice is not a throw

    unread = dets([(*two[0], 0, 0.3), (*two[1], 1, 0.9)])
    det = ThrowDetector(ScriptedReader([unread, read_a]), expected_dice=2, vote_frames=1)
    throws = [r.throw for r in _rest_hand_rest(det) if r.throw]
    assert [t.status for t in throws] == ["uncertain", "ok"]  # the readable second look is reported
    assert throws[1].faces == [1, 5]


def test_live_pipeline_thread_callbacks_iterator_status_and_overlay():
    src = virtual(n=4, auto_every_s=0.8, max_frames=30 * 6)
    pipe = LivePipeline(src, TruthReader(src), expected_dice=4, vote_frames=3,
                        zones=Zones(set_aside=[(0.9, 0.9), (1, 0.9), (1, 1), (0.9, 1)]))
    got, bad = [], []
    pipe.subscribe(got.append)
    pipe.subscribe(lambda t: bad.append(1 / 0))  # a failing subscriber must not stop the pipeline
    it = pipe.throws(timeout=30)
    pipe.start()
    from_iter = list(it)
    assert pipe.wait(30)
    pipe.stop()
    # Throws that rested 13+ frames before the end must be reported; one that rested in the last 13 frames
    # may be (the still time counts from when the dice stopped moving visibly, a frame or two before the
    # renderer's exact rest), but only after it rested.
    truths = [t for t in src.throws if t.first_rest_index is not None and t.first_rest_index + 13 < 30 * 6]
    rested = [t for t in src.throws if t.first_rest_index is not None]
    assert len(truths) >= 3 and len(truths) <= len(got) <= len(rested)
    assert [t.faces for t in got] == [t.faces for t in rested[: len(got)]]
    assert all(t.frame_index > r.first_rest_index for t, r in zip(got, rested))
    assert [t.frame_index for t in from_iter] == [t.frame_index for t in got]
    st = pipe.status()
    assert st["frames"] == 30 * 6 and st["throws"] == len(got) and st["expected_dice"] == 4
    assert st["state"] in {s.value for s in SettleState}
    assert st["last_throw"]["faces"] == got[-1].faces
    jpeg = pipe.live_jpeg()
    img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (360, 640, 3)
    pipe.expected_dice = 2
    assert pipe.detector.expected_dice == 2


class GlitchySource(VirtualTableSource):
    """A virtual table whose every 7th read fails (a flaky USB cable)."""

    def _read(self, timeout):
        if self._n % 7 == 3 and not getattr(self, "_failed_once", {}).get(self._n):
            self._failed_once = {self._n: True}
            from kosti.vision.sources import SourceError

            raise SourceError("USB read error")
        return super()._read(timeout)


def test_live_pipeline_survives_source_errors_and_stops_promptly():
    src = GlitchySource(n_dice=3, size=(320, 180), fps=30, realtime=False, tumble_s=0.5, seed=2, auto_every_s=0.6,
                        max_frames=30 * 4)
    pipe = LivePipeline(src, TruthReader(src), retry_s=0.001)
    got = []
    pipe.subscribe(got.append)
    pipe.start()
    assert pipe.wait(30)
    pipe.stop()
    rested = [t for t in src.throws if t.first_rest_index is not None and t.first_rest_index + 15 < 30 * 4]
    assert len(got) == len(rested) >= 2
    assert [t.faces for t in got] == [t.faces for t in rested]
    # A live source that blocks forever is woken by stop().
    from kosti.vision.sources import OpenCVSource

    class Silent:
        def isOpened(self):  # noqa: N802
            return True

        def set(self, *a):
            return True

        def read(self):
            import time as _t

            _t.sleep(0.05)
            return False, None

        def release(self):
            pass

    cam = OpenCVSource(0, capture_factory=lambda t: Silent(), read_timeout=60.0)
    pipe = LivePipeline(cam, TruthReader(src), retry_s=60.0)
    pipe.start()
    import time as _t

    _t.sleep(0.3)
    import threading

    stopper = threading.Thread(target=pipe.stop)
    stopper.start()
    stopper.join(30.0)  # half the camera's 60 s read timeout: a stop that waited for it would still be running
    assert not stopper.is_alive()
    assert not pipe.status()["running"]
