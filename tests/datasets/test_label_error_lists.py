"""The label-error lists (``datasets/label_errors/``) and their reader ``benchmarks/label_errors.py``, which keeps
photos with known wrong labels out of the numbers and out of the operating-point selection."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import label_errors as le  # noqa: E402  (a benchmark script's sibling module)


class _Item:
    def __init__(self, stem: str, split: str = "val") -> None:
        self.label = Path(f"/x/labels/{split}/{stem}.txt")


def _write(folder: Path, name: str, doc: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder


def test_the_shipped_epanemu_list_corrects_what_it_can_and_leaves_the_empty_heap_out():
    assert "epanemu-dice" in le.listed_sets()
    split, stems = le.read_list("epanemu-dice")
    fixes = le.read_fixes("epanemu-dice")
    assert split == "val" and len(stems) == 8
    assert [s for s in stems if s not in fixes] == [s for s in stems if s.startswith("dice_59_jpg")]  # no fix
    assert not any(s.startswith(("dice_90_jpg", "dice_163_jpg")) for s in stems)  # audited: labelled right
    assert {"line": 1, "face": 5} in next(f for s, f in fixes.items() if s.startswith("dice_297_jpg"))


def test_listed_photos_are_dropped_for_their_split_only(tmp_path: Path):
    errors = _write(tmp_path, "demo", {"set": "demo", "split": "val", "errors": [
        {"label": "labels/val/b.txt", "wrong": "empty", "right": "two dice"}]})
    items = [_Item("a"), _Item("b"), _Item("c")]
    kept, dropped = le.without_label_errors(items, "demo", "val", errors)
    assert [i.label.stem for i in kept] == ["a", "c"] and dropped == 1
    assert le.without_label_errors(items, "demo", "test", errors) == (items, 0)  # the list is for val
    assert le.without_label_errors(items, "other", "val", errors) == (items, 0)  # no list
    with pytest.raises(ValueError, match="not in the set"):  # the list and the set disagree
        le.without_label_errors([_Item("a")], "demo", "val", errors)


@pytest.mark.parametrize("doc, why", [
    ({"split": "val"}, "errors"),
    ({"set": "other", "split": "val", "errors": []}, "other"),
    ({"set": "demo", "split": "val", "errors": [{"label": "labels/train/b.txt"}]}, "outside"),
    ("not a list", "not a label-error list"),
])
def test_a_malformed_list_is_a_one_line_error(tmp_path: Path, doc, why):
    errors = _write(tmp_path, "demo", doc)
    with pytest.raises(ValueError, match=why):
        le.read_list("demo", errors)
    (errors / "demo.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a label-error list"):
        le.read_list("demo", errors)


def _fix_list(folder: Path, fix: object) -> Path:
    return _write(folder, "demo", {"set": "demo", "split": "val", "errors": [
        {"label": "labels/val/b.txt", "wrong": "w", "right": "r", "fix": fix},
        {"label": "labels/val/c.txt", "wrong": "empty", "right": "a heap of dice"}]})


def test_a_fix_relabels_removes_adds_and_ignores_boxes(tmp_path: Path):
    errors = _fix_list(tmp_path, [{"line": 1, "face": 5}, {"line": 2, "remove": True}, {"line": 3, "face": None},
                                  {"add": [0.5, 0.5, 0.1, 0.2], "face": 3}, {"add": [0.1, 0.1, 0.1, 0.1], "face": None}])
    fixes = le.read_fixes("demo", errors)
    assert list(fixes) == ["b"]  # c has no fix: it stays a photo to leave out
    xyxy = np.array([[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]], np.float32)
    boxes, faces, ignore = le.apply_fix(xyxy, np.array([2, 4, 6]), 100, 200, fixes["b"])
    assert faces.tolist() == [5, 3]
    np.testing.assert_allclose(boxes, [[0, 0, 10, 10], [45, 80, 55, 120]])
    np.testing.assert_allclose(ignore, [[40, 40, 50, 50], [5, 10, 15, 30]])
    with pytest.raises(ValueError, match="line 4"):
        le.apply_fix(xyxy, np.array([2, 4, 6]), 100, 200, [{"line": 4, "face": 1}])


@pytest.mark.parametrize("fix", [[{"line": 0, "face": 1}], [{"line": 1, "face": 7}], [{"add": [0.5, 0.5], "face": 1}],
                                 [{"line": 1}], "relabel"])
def test_a_malformed_fix_is_refused(tmp_path: Path, fix):
    with pytest.raises(ValueError, match="malformed fix"):
        le.read_fixes("demo", _fix_list(tmp_path, fix))


def test_the_corrected_report_scores_against_the_fixed_labels(tmp_path: Path):
    import cv2

    from kosti.vision.detections import Detections
    from kosti.vision.evaluate import evaluate_predictions
    for stem in "abc":
        cv2.imwrite(str(tmp_path / f"{stem}.png"), np.zeros((200, 100, 3), np.uint8))
    errors = _fix_list(tmp_path / "lists", [{"line": 1, "face": 5}, {"add": [0.5, 0.5, 0.1, 0.1], "face": None}])

    def det(boxes, faces):
        n = len(faces)
        return Detections(np.array(boxes, np.float32).reshape(-1, 4), np.ones(n, np.float32),
                          np.array(faces, np.int8), np.ones(n, np.float32))

    truths = [(tmp_path / "a.png", np.array([[0, 0, 10, 10]], np.float32), np.array([1])),
              (tmp_path / "b.png", np.array([[0, 0, 10, 10]], np.float32), np.array([2])),
              (tmp_path / "c.png", np.zeros((0, 4), np.float32), np.zeros(0, int))]
    preds = [det([[0, 0, 10, 10]], [1]),
             det([[0, 0, 10, 10], [45, 90, 55, 110]], [5, 4]),  # the second box is on the ignore region
             det([[0, 0, 10, 10]], [3])]  # c: a heap its labels leave out
    shipped = evaluate_predictions(truths, preds)
    assert (shipped.precision, shipped.die_accuracy) == (0.5, 0.5)
    fixed, n_fixed, n_dropped = le.corrected_report(shipped, "demo", "val", errors)
    assert (n_fixed, n_dropped, fixed.n_images) == (1, 1, 2)
    assert (fixed.precision, fixed.recall, fixed.die_accuracy, fixed.image_exact) == (1.0, 1.0, 1.0, 1.0)


def test_the_operating_point_rule_never_falls_below_the_value_conf_floor(monkeypatch):
    """When no grid point keeps wrong reads within the limit, the choice keeps the fewest wrong reads at an
    allowed ``value_conf`` (before, it took the best image_exact of the whole grid: value_conf 0.3, 3.4 % wrong)."""
    import select_operating_point as sop

    def fake_score(reader, sel, conf, value_conf, verify):
        wrong = 0.034 if value_conf < 0.7 else (0.011 if conf == 0.5 else 0.015)
        exact = 0.72 if value_conf < 0.7 else (0.68 if conf == 0.5 else 0.70)
        return {"image_exact": exact, "recall": 0.9, "precision": 0.9, "wrong": wrong}

    monkeypatch.setattr(sop, "score", fake_score)
    _, best = sop.choose(None, [], max_wrong=0.01, min_value_conf=0.7)
    assert best[0] == 0.5 and best[1] >= 0.7
    monkeypatch.setattr(sop, "score", lambda r, s, c, v, vf: {"image_exact": c, "recall": 0.9, "precision": 0.9,
                                                              "wrong": 0.005})
    assert sop.choose(None, [], max_wrong=0.01, min_value_conf=0.7)[1][:2] == (max(sop.CONFS), 0.7)
