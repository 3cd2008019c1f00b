"""Zones: normalised polygons, point-in-polygon on box centres, roll vs set-aside vs ignored."""

from __future__ import annotations

import numpy as np
import pytest

from kosti.vision.detections import Detections
from kosti.vision.zones import OUTSIDE, ROLL, SET_ASIDE, Zones

# Roll area: left 70 % of the frame; set-aside strip: right 20 %; between them a gap that is ignored.
ZONES = Zones(roll_area=[(0.0, 0.0), (0.7, 0.0), (0.7, 1.0), (0.0, 1.0)],
              set_aside=[(0.8, 0.0), (1.0, 0.0), (1.0, 1.0), (0.8, 1.0)])


def box(cx: float, cy: float, side: float = 40) -> list[float]:
    return [cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2]


def test_classify_by_box_centre_at_two_resolutions():
    for w, h in [(1280, 720), (640, 360)]:
        boxes = np.array([box(0.1 * w, 0.5 * h), box(0.75 * w, 0.5 * h), box(0.9 * w, 0.2 * h),
                          box(0.69 * w, 0.9 * h)])
        assert ZONES.classify(boxes, w, h).tolist() == [ROLL, OUTSIDE, SET_ASIDE, ROLL]


def test_box_straddling_the_edge_goes_by_its_centre():
    w, h = 1000, 1000
    # Box spans x 680..740 (crosses the 700 edge) with centre 710 → outside the roll area.
    assert ZONES.classify(np.array([[680, 100, 740, 160]]), w, h).tolist() == [OUTSIDE]
    assert ZONES.classify(np.array([[660, 100, 720, 160]]), w, h).tolist() == [ROLL]


def test_set_aside_inside_roll_area_wins():
    z = Zones(set_aside=[(0.0, 0.0), (0.2, 0.0), (0.2, 0.2), (0.0, 0.2)])  # roll area = whole frame
    codes = z.classify(np.array([box(50, 50), box(500, 300)]), 640, 480)
    assert codes.tolist() == [SET_ASIDE, ROLL]


def test_non_convex_polygon():
    # An L-shaped roll area: the notch (top right quarter) is outside.
    z = Zones(roll_area=[(0, 0), (0.5, 0), (0.5, 0.5), (1, 0.5), (1, 1), (0, 1)])
    codes = z.classify(np.array([box(100, 100), box(300, 100), box(300, 300)]), 400, 400)
    assert codes.tolist() == [ROLL, OUTSIDE, ROLL]


def test_split_detections():
    w, h = 1280, 720
    det = Detections(np.array([box(100, 100), box(1000, 300), box(1200, 300)]), np.ones(3), np.array([1, 5, 6]),
                     np.ones(3))
    roll, aside = ZONES.split(det, w, h)
    assert roll.value.tolist() == [1]
    assert aside.value.tolist() == [6]


def test_round_trip_and_pixels():
    d = ZONES.to_dict()
    assert Zones.from_dict(d) == ZONES
    z = Zones.from_pixels([(0, 0), (640, 0), (640, 720), (0, 720)], 1280, 720)
    assert z.roll_area[1] == (0.5, 0.0)
    polys = ZONES.pixel_polygons(1280, 720)
    assert polys["roll_area"].tolist()[2] == [896, 720]
    assert Zones().classify(np.zeros((0, 4)), 10, 10).shape == (0,)


@pytest.mark.parametrize("bad", [[(0, 0), (1, 1)], [(0, 0), (1.5, 0), (1, 1)], [(0, 0), (0.5, 0.5), (1, 1)]])
def test_bad_polygons_are_rejected(bad):
    with pytest.raises(ValueError):
        Zones(roll_area=bad)
