"""Issue 40 building blocks: the rest decided per die (:meth:`SettleDetector.set_focus`) and the scoring of clips
against their truth (:mod:`kosti.vision.truth`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from pipeline_helpers import DICE, WhiteSquares, cloth_frame

from kosti.vision.settle import SettleDetector, SettleState
from kosti.vision.truth import TruthError, judge, load_truth


def _boxes(det: SettleDetector) -> np.ndarray:
    s = det.width / 640
    return np.array([[x - 15, y - 15, x + 15, y + 15] for x, y in DICE], float) * s


def test_motion_away_from_the_dice_does_not_hold_the_rest_back_but_a_touch_does():
    frames = [cloth_frame(100 + 6 * k, seed=k) for k in range(40)]  # the arm never stops
    whole = SettleDetector()
    assert not any(whole.update(f, k / 30).settled_now for k, f in enumerate(frames)), "the test must show the fault"
    det = SettleDetector()
    for k, f in enumerate(frames[:10]):
        det.update(f, k / 30)
    poses = det.set_focus(_boxes(det))
    assert poses and poses[0][0] == 0.0  # the dice never moved: the rest started at the first kept frame
    ups = [det.update(f, (10 + k) / 30) for k, f in enumerate(frames[10:])]
    assert sum(u.settled_now for u in ups) == 1 and ups[-1].state is SettleState.SETTLED and ups[-1].per_die
    assert [u.settled_now for u in ups].index(True) == 2  # 0.4 s after the first frame, not after the focus
    # the arm reaches up over the dice' row: the rest ends and the focus with it
    u = det.update(cloth_frame(180, touch=True, seed=99), 50 / 30)
    assert u.state is SettleState.MOVING and not det.per_die


def test_a_die_still_rolling_is_never_at_rest_per_die():
    """Focused on every die, one of them still rolling (8 px a frame): the rest never settles, and the focus ends."""
    def rolling(k: int) -> np.ndarray:
        img = cloth_frame(None, seed=k)
        cv2.rectangle(img, (400 + 8 * k, 300), (430 + 8 * k, 330), (235, 235, 235), -1)
        return img

    det = SettleDetector()
    for k in range(5):
        det.update(rolling(k), k / 30)
    s = det.width / 640
    det.set_focus(np.vstack([_boxes(det), np.array([[432, 300, 462, 330]], float) * s]))
    ups = [det.update(rolling(k), k / 30) for k in range(5, 25)]
    assert not any(u.settled_now for u in ups)
    assert ups[-1].state is SettleState.MOVING and not det.per_die
    assert det.set_focus(None) == [] and not det.per_die


def test_truth_is_scored_right_missed_extra_and_merged():
    truth = {"throws": [[1, 2, 3], [4, 5, 6]], "rest_s": [[1.0, 1.5], [3.0, 3.4]]}

    def throw(frame: int, t: float, faces: list[int], **extra: object) -> dict:
        return {"frame": frame, "time_s": t, "dice": [{"value": f} for f in faces], "status": "ok", **extra}

    ok = judge(truth, [throw(30, 1.3, [3, 2, 1]), throw(100, 3.4, [6, 5, 4])])
    assert (ok["right"], ok["missed"], ok["extra"], ok["merged"], ok["read_s"]) == (2, 0, 0, 0, [0.3, 0.4])
    merged = judge(truth, [throw(30, 1.3, [1, 2, 3]), throw(100, 3.4, [4, 5, 6], corrects=30)])
    assert (merged["right"], merged["missed"], merged["extra"], merged["merged"]) == (1, 1, 0, 1)
    extra = judge(truth, [throw(30, 1.3, [1, 2, 3]), throw(60, 2.0, [1, 2, 2]), throw(100, 3.4, [4, 5, 6])])
    assert (extra["right"], extra["missed"], extra["extra"]) == (2, 0, 1)


def test_a_truth_folder_in_either_shape_and_bad_ones_refused(tmp_path):
    (tmp_path / "a.avi").write_bytes(b"x")
    (tmp_path / "b.mp4").write_bytes(b"x")
    (tmp_path / "throws.json").write_text(json.dumps({"b.mp4": {"throws": [[2, 2, 5]], "rest_s": [1.6, 2.9]}}))
    (tmp_path / "a.json").write_text(json.dumps({"throws": [], "rest_s": [0.4, 0.8]}))
    got = load_truth(tmp_path)
    assert got == {"b.mp4": {"throws": [[2, 2, 5]], "rest_s": [[1.6, 2.9]]},
                   "a.avi": {"throws": [], "rest_s": [[0.4, 0.8]]}}
    (tmp_path / "a.json").write_text('{"throws": [[7]]}')
    with pytest.raises(TruthError, match="faces 1-6"):
        load_truth(tmp_path)
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(TruthError, match="not a JSON truth file"):
        load_truth(tmp_path)
    with pytest.raises(TruthError, match="no such folder"):
        load_truth(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TruthError, match="no clip with its throws"):
        load_truth(empty)


def test_kosti_watch_truth_refuses_bad_input_with_exit_2(tmp_path, capsys):
    from kosti.cli import main

    assert main(["watch", "--truth", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["watch"]) == 2
    assert "--truth DIR" in capsys.readouterr().err


def test_kosti_watch_truth_scores_a_suite_of_kosti_datasets_clips(tmp_path, capsys):
    """``kosti datasets clips --out DIR`` writes its truth as ``clips.json``: ``kosti watch --truth DIR`` scores it (the
    ``leave`` clip with its dice count 5 and its ``uncertain`` throw of four dice) instead of refusing it."""
    import ci_guard

    from kosti.cli import main

    ci_guard.shipped(Path(__file__).resolve().parents[2] / "models" / "dice_det.onnx", "shipped detector")
    out = tmp_path / "clips"
    assert main(["datasets", "clips", "--out", str(out), "--clip", "fixed", "--clip", "leave",
                 "--real-root", str(tmp_path / "none")]) == 0
    assert (out / "clips.json").is_file() and not (out / "throws.json").exists()
    truth = load_truth(out)
    assert truth["leave.avi"]["dice"] == 5 and truth["leave.avi"]["status"] == ["uncertain"]
    capsys.readouterr()
    assert main(["watch", "--truth", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["clip"] for c in report["clips"]] == ["fixed.avi", "leave.avi"]
    t = report["total"]
    assert (t["throws"], t["right"], t["missed"], t["extra"], t["merged"]) == (3, 3, 0, 0, 0), report
    assert 0.0 <= t["read_s_max"] <= 0.5


def test_after_a_per_die_rest_a_die_thrown_elsewhere_is_read_too():
    """The focus serves one rest: kept on after the throw was read, it held the table "at rest" on those boxes while a
    die landed beside them, and that throw was never read (review of issue 40's change)."""
    from kosti.vision.frame_source import Frame
    from kosti.vision.throw_detector import ThrowDetector

    det = ThrowDetector(WhiteSquares(), expected_dice=None)
    throws = []
    for k in range(300):  # 10 s at 30 fps; the arm at the bottom edge never stops moving
        img = cloth_frame(100 + 3 * (k % 60), seed=k)
        if k >= 150:  # a fourth die lands beside the three at 5 s
            cv2.rectangle(img, (505, 65), (535, 95), (235, 235, 235), -1)
        r = det.process(Frame(img, k / 30, k))
        if r.throw is not None:
            throws.append((k, len(r.throw.dice)))
    assert throws and throws[0][1] == 3, throws  # the three dice, read while the arm moves
    assert any(k > 150 and n == 4 for k, n in throws), f"the die thrown at 5 s was never read: {throws}"
    assert len(throws) == 2, f"the unchanged dice were read again while the arm moved: {throws}"
