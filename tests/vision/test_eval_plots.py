"""``kosti eval --plots``: the sheets of dice the reader did not read right (``dice/sheet_NN.png``, ``dice.csv``)."""

from __future__ import annotations

import csv

import cv2
import numpy as np
import pytest

from kosti.vision.detections import Detections
from kosti.vision.eval_plots import (
    CAPTION,
    DIE_CSV_COLUMNS,
    DIE_ERRORS,
    LEGEND_LINE,
    SHEET_TILES,
    TILE,
    die_caption,
    die_errors,
    die_tile,
    draw_legend,
    sheet_legend,
    write_die_sheets,
)
from kosti.vision.evaluate import EvalReport, ImageRecord


@pytest.fixture
def photo(tmp_path):
    """A 200×300 photo: a black background with four coloured squares (the dice)."""
    img = np.zeros((200, 300, 3), np.uint8)
    for k, (x, y) in enumerate([(20, 20), (120, 20), (220, 20), (20, 120)]):
        img[y:y + 40, x:x + 40] = (50 * (k + 1), 255 - 40 * k, 100)
    p = tmp_path / "table.png"
    cv2.imwrite(str(p), img)
    return p, img


def _record(path, n_extra=1):
    """Labels: four dice (3, 5, 2, 6). Reads: the 3 right, the 5 read as 4, the 2 left uncertain (best guess 2),
    the 6 missed, and ``n_extra`` boxes on no die."""
    true = np.array([[20, 20, 60, 60], [120, 20, 160, 60], [220, 20, 260, 60], [20, 120, 60, 160]], np.float32)
    extra = [[150 + 2 * i, 120, 190 + 2 * i, 160] for i in range(n_extra)]
    pred = Detections(np.array([[21, 21, 60, 60], [120, 20, 161, 61], [219, 20, 260, 60], *extra], np.float32),
                      np.array([0.9, 0.8, 0.3] + [0.6] * n_extra, np.float32),
                      np.array([3, 4, 0] + [1] * n_extra, np.int8),
                      np.array([0.99, 0.85, 0.55] + [0.97] * n_extra, np.float32),
                      {"guess": np.array([3, 4, 2] + [1] * n_extra, np.int8)})
    return ImageRecord(path, true, np.array([3, 5, 2, 6], np.int8), pred, [(0, 0), (1, 1), (2, 2)], 1.0)


def test_each_die_not_read_right_once_with_what_it_is_and_what_was_read(photo):
    rows = die_errors(_record(photo[0]))
    assert [r["kind"] for r in rows] == ["wrong", "uncertain", "missed", "extra"]
    wrong, unsure, missed, extra = rows
    assert (wrong["true"], wrong["read"], wrong["face_prob"]) == (5, 4, 0.85)
    assert (unsure["true"], unsure["read"], unsure["guess"]) == (2, 0, 2)
    assert missed["true"] == 6 and (missed["x1"], missed["y2"]) == (20.0, 160.0) and missed["read"] == 0
    assert np.isnan(missed["det_conf"])
    assert extra["true"] == 0 and extra["read"] == 1 and extra["side_px"] == 40.0
    assert die_caption(wrong) == ("5 read 4 0.85", "41px det 0.80")
    assert die_caption(unsure)[0] == "2 ? (2) 0.55"
    assert die_caption(missed) == ("6 missed", "40px")
    assert die_caption(extra)[0] == "extra 1 0.97"


def test_a_tile_shows_the_die_scaled_and_grey_past_the_photo_edge(photo):
    _, img = photo
    tile = die_tile(img, np.array([220, 20, 260, 60], np.float32), ("a", "b"), (0, 0, 255))
    assert tile.shape == (TILE + CAPTION, TILE, 3) and tile.dtype == np.uint8
    centre = tile[TILE // 2, TILE // 2]
    assert np.abs(centre.astype(int) - img[40, 240].astype(int)).max() <= 2  # the die's colour at the middle
    # a die at the photo's corner: the crop past the photo's top and left edges is grey, not smeared pixels
    corner = die_tile(img, np.array([0, 0, 30, 30], np.float32), ("a", "b"), (0, 0, 255))
    assert (corner[2, 2] == 128).all()


def test_sheets_and_csv_list_every_die_also_past_the_last_sheet(photo, tmp_path):
    recs = [_record(photo[0], n_extra=30) for _ in range(3)]  # 3 × 33 = 99 dice not read right
    report = EvalReport(recs)
    out = tmp_path / "plots"
    written = write_die_sheets(report, out, max_sheets=1)
    assert [p.name for p in written] == ["sheet_00.png", "dice.csv"]
    sheet = cv2.imread(str(out / "dice" / "sheet_00.png"))
    assert sheet.shape[0] == draw_legend(sheet.shape[1]).shape[0] + (SHEET_TILES // 8) * (TILE + CAPTION + 2)
    with open(out / "dice" / "dice.csv") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == DIE_CSV_COLUMNS and len(rows) == 99
    assert [r["kind"] for r in rows[:9]] == ["wrong"] * 3 + ["uncertain"] * 3 + ["missed"] * 3
    assert sum(r["sheet"] == "sheet_00.png" for r in rows) == SHEET_TILES
    assert all(r["sheet"] == "" for r in rows[SHEET_TILES:])
    assert [int(r["tile"]) for r in rows[:3]] == [0, 1, 2]

    two = write_die_sheets(report, tmp_path / "more")
    assert [p.name for p in two] == ["sheet_00.png", "sheet_01.png", "dice.csv"]


def test_a_split_read_right_gets_no_sheet(photo, tmp_path):
    rec = _record(photo[0], n_extra=0)
    right = ImageRecord(rec.image, rec.true_xyxy[:1], rec.true_values[:1], rec.pred[:1], [(0, 0)], 1.0)
    written = write_die_sheets(EvalReport([right]), tmp_path)
    assert [p.name for p in written] == ["dice.csv"]
    assert (tmp_path / "dice" / "dice.csv").read_text().strip() == ",".join(DIE_CSV_COLUMNS)


def test_every_sheet_opens_with_a_legend_of_its_captions(photo, tmp_path):
    """Issue 42 #14: "5 ? (5) 0.52" is explained on the sheet itself — one legend line per kind, in the kind's caption
    colour, written with the captions' own function, and the box line below."""
    legend = sheet_legend()
    kinds = legend[1:1 + len(DIE_ERRORS)]
    assert [c for _, c in kinds] == list(DIE_ERRORS.values())
    texts = [t for t, _ in kinds]
    assert texts[0].startswith("5 read 4 0.85  = a die labelled 5 read as 4")
    assert texts[1].startswith("5 ? (5) 0.52  = a 5 left uncertain") and "(5) = its best guess" in texts[1]
    assert texts[2].startswith("6 missed  = ") and texts[3].startswith("extra 3 0.91  = ")
    assert legend[-1][0].startswith("41px det 0.80  = the box's shorter side in photo pixels")

    write_die_sheets(EvalReport([_record(photo[0])]), tmp_path)
    sheet = cv2.imread(str(tmp_path / "dice" / "sheet_00.png"))
    band = draw_legend(sheet.shape[1])
    assert np.array_equal(sheet[:band.shape[0]], band)  # the legend is on the sheet, above the tiles
    for i, (text, color) in enumerate(legend):  # each line is written, in its colour, and fits the sheet
        line = band[i * LEGEND_LINE + 3: (i + 1) * LEGEND_LINE + 3].reshape(-1, 3).astype(int)
        near = np.abs(line - np.array(color)).max(axis=1) < 60
        assert near.sum() > 4 * len(text), text
        ink = np.where((band[i * LEGEND_LINE + 3: (i + 1) * LEGEND_LINE + 3] < 200).any(axis=(0, 2)))[0]
        assert ink.max() < sheet.shape[1] - 8, text
