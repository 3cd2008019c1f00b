"""Zones: normalised polygons, point-in-polygon on box centres, roll vs set-aside vs ignored."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kosti.vision.detections import Detections
from kosti.vision.zones import OUTSIDE, ROLL, SET_ASIDE, Zones, polygon_problem

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


@pytest.mark.parametrize(("points", "reason"), [
    ([(0, 0), (1, 1)], "needs at least 3 points, got 2"),
    ([(0, 0), (1.5, 0), (1, 1)], "point 1 (1.5, 0) lies outside the frame"),
    ([(0, 0), (float("nan"), 0), (1, 1)], "point 1 (nan, 0) lies outside"),
    ([(0, 0), (0.5, 0.5), (1, 1)], "encloses no area"),
    ([(0, 0), (0.005, 0), (0.005, 0.005), (0, 0.005)], "encloses no area"),  # 0.0025 % of the frame
    ([(0, 0), (1, 0.8), (1, 0), (0, 1)], "edges 0–1 and 2–3 cross (self-intersecting polygon)"),
    ([(0, 0), "x"], "points must be pairs of numbers"),
])
def test_one_polygon_rule_for_config_and_dashboard(points, reason):
    """The same polygon is refused with the same reason by the zones (dashboard) and the config file."""
    from kosti.config import ConfigError, ZonesSettings

    assert reason in (polygon_problem(points) or "")
    with pytest.raises(ValueError, match=re.escape(f"roll_area: {reason}")):
        Zones(roll_area=points)
    with pytest.raises((ValueError, ConfigError)):
        ZonesSettings(roll_area=points)


def test_usable_polygons_pass_the_rule():
    assert polygon_problem([(0, 0), (0.5, 0), (0.5, 0.5), (1, 0.5), (1, 1), (0, 1)]) is None  # non-convex
    assert polygon_problem([(0, 0), (0.02, 0), (0.02, 0.02)]) is None  # 0.02 % of the frame
    assert polygon_problem([(1, 1), (0, 1), (0, 0), (1, 0)]) is None  # either winding
