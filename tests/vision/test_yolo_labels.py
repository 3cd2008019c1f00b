"""YOLO label files (kosti.vision.yolo_labels): the one reader and writer of ``class cx cy w h`` lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kosti.vision import yolo_labels as yl


def test_lines_round_trip_exactly():
    xyxy = np.array([[10.0, 20.0, 50.0, 60.0], [300.5, 100.25, 341.0, 139.75]])
    lines = yl.label_lines(xyxy, [4, 0], 640, 480)
    assert lines == ["4 0.046875 0.083333 0.062500 0.083333", "0 0.501172 0.250000 0.063281 0.082292"]
    boxes, faces = yl.parse_labels(yl.label_text(lines), 640, 480)
    assert faces.tolist() == [5, 1]
    np.testing.assert_allclose(boxes, xyxy, atol=640 * 1e-6)
    assert yl.label_text([]) == "" and yl.label_text(["a"]) == "a\n"


def test_polygon_lines_read_as_their_bounding_box_and_class_map():
    boxes, values = yl.parse_labels("2 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n\n", 200, 100, np.array([0, 0, 9]))
    np.testing.assert_allclose(boxes, [[20, 10, 60, 30]])
    assert values.tolist() == [9]


@pytest.mark.parametrize(("text", "match"), [
    ("0 0.5 0.5 0.1\n", r"a\.txt:1: expected 'class cx cy w h', got '0 0\.5 0\.5 0\.1'"),
    ("\n1 0.5 0.5 x 0.1\n", r"a\.txt:2: expected"),
    ("6 0.5 0.5 0.1 0.1\n", r"a\.txt:1: class 6 outside 0–5"),
    ("-1 0.5 0.5 0.1 0.1\n", r"class -1 outside"),
])
def test_malformed_lines_name_file_and_line(tmp_path: Path, text: str, match: str):
    f = tmp_path / "a.txt"
    f.write_text(text)
    with pytest.raises(yl.LabelError, match=match):
        yl.read_labels(f, 100, 100)


def test_missing_file_is_no_dice_and_label_path(tmp_path: Path):
    boxes, values = yl.read_labels(tmp_path / "none.txt", 10, 10)
    assert boxes.shape == (0, 4) and values.shape == (0,)
    assert yl.label_path(Path("/d/images/test/x.jpg")) == Path("/d/labels/test/x.txt")
    assert yl.label_path(Path("/d/images/a/images/x.png")) == Path("/d/images/a/labels/x.txt")
    assert yl.label_path(Path("/d/x.png")) == Path("/d/x.txt")


def test_check_box_clips_and_refuses():
    assert yl.check_box((-0.5, 0, 40, 480.5), 640, 480) == (0.0, 0.0, 40.0, 480.0)
    with pytest.raises(yl.LabelError, match="outside the 640×480 image"):
        yl.check_box((600, 440, 660, 480), 640, 480)
    with pytest.raises(yl.LabelError, match="empty"):
        yl.check_box((5, 5, 5, 9), 640, 480)
    with pytest.raises(yl.LabelError, match="die 1: box"):
        yl.label_lines(np.array([[0, 0, 9, 9], [0, 0, 9, 900]]), [0, 0], 640, 480)
    # unchecked lines are written as given (synthetic scenes: boxes already inside the square image)
    assert yl.label_lines(np.array([[0, 0, 9, 900]]), [0], 640, 480, check=False)[0].endswith("1.875000")


def test_counts_and_single_class():
    text = "0 0.1 0.1 0.1 0.1\n5 0.2 0.2 0.1 0.1\n\n5 0.3 0.3 0.1 0.1\n9 0 0 0 0\nbad\n"
    assert yl.class_counts(text).tolist() == [1, 0, 0, 0, 0, 2]
    assert yl.count_lines(text) == 5
    assert yl.single_class("3 0.1 0.2 0.3 0.4\n\n1 0.5 0.5 0.1 0.1") == "0 0.1 0.2 0.3 0.4\n0 0.5 0.5 0.1 0.1\n"
