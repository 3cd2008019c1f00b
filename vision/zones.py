"""Table zones: where a die counts as thrown, where it counts as set aside, and where it is ignored.

Zones are polygons in *normalised* frame coordinates (x right, y down, both in [0, 1]), so a calibration
survives a change of camera resolution. A die belongs to the zone that holds the centre of its box
(``cv2.pointPolygonTest``; a centre exactly on an edge counts as inside). The set-aside area is tested
first, so it may be drawn inside the roll area. Dice in neither zone (on the table edge, in a player's
hand, another tray) are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Zone codes returned by :meth:`Zones.classify`.
OUTSIDE, ROLL, SET_ASIDE = 0, 1, 2

Polygon = list[tuple[float, float]]

#: The whole frame.
FULL_FRAME: Polygon = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


#: Least area of a zone polygon, as a share of the frame (0.01 %: a zone smaller than that holds no die).
MIN_POLYGON_AREA = 1e-4


def polygon_problem(points: Sequence[Sequence[float]]) -> str | None:
    """Why ``points`` is not a usable zone polygon, or ``None`` — the one polygon rule of kosti (table zones
    from the configuration file, :class:`kosti.config.ZonesSettings`, and from the dashboard, :class:`Zones`).

    A usable polygon has at least 3 points, every point finite and inside the unit square (normalised
    frame coordinates, x right, y down), an area of at least :data:`MIN_POLYGON_AREA` of the frame, and
    no two edges that cross (a simple polygon; neighbouring edges share a vertex and may touch).

    Args:
        points: ``[(x, y), …]`` normalised coordinates, in drawing order (the last point joins the first).

    Returns:
        a reason in English (``"needs at least 3 points, got 2"``, ``"point 1 (1.5, 0) lies outside the
        frame: coordinates are normalised to [0, 1]"``, ``"encloses no area (points are collinear or
        repeated)"``, ``"edges 0–1 and 2–3 cross (self-intersecting polygon)"``), or ``None``.
    """
    try:
        pts = [(float(p[0]), float(p[1])) for p in points]
    except (TypeError, ValueError, IndexError):
        return "points must be pairs of numbers [x, y]"
    if len(pts) < 3:
        return f"needs at least 3 points, got {len(pts)}"
    for i, (x, y) in enumerate(pts):
        if not (math.isfinite(x) and math.isfinite(y) and 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
            return f"point {i} ({x:g}, {y:g}) lies outside the frame: coordinates are normalised to [0, 1]"
    n = len(pts)
    area2 = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))
    if abs(area2) / 2 < MIN_POLYGON_AREA:
        return "encloses no area (points are collinear or repeated)"
    edges = [(pts[i], pts[(i + 1) % n]) for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if j == i + 1 or (i == 0 and j == n - 1):
                continue  # neighbouring edges share a vertex
            if _segments_cross(*edges[i], *edges[j]):
                return f"edges {i}–{i + 1} and {j}–{(j + 1) % n} cross (self-intersecting polygon)"
    return None


def _segments_cross(p1: tuple[float, float], p2: tuple[float, float],
                    p3: tuple[float, float], p4: tuple[float, float]) -> bool:
    """True when segments p1p2 and p3p4 cross at a point inside both (touching does not count)."""
    def orient(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2 = orient(p3, p4, p1), orient(p3, p4, p2)
    d3, d4 = orient(p1, p2, p3), orient(p1, p2, p4)
    return d1 * d2 < 0 and d3 * d4 < 0


def _check_polygon(name: str, poly: Sequence[Sequence[float]]) -> Polygon:
    problem = polygon_problem(poly)
    if problem:
        raise ValueError(f"{name}: {problem}")
    return [(float(p[0]), float(p[1])) for p in poly]


@dataclass
class Zones:
    """Roll area and optional set-aside area, normalised polygons.

    Attributes:
        roll_area: polygon (≥ 3 points in [0, 1]²) where thrown dice must land. Default: the whole frame.
        set_aside: polygon for dice set aside (kept) this turn, or ``None``.

    Raises:
        ValueError: a polygon :func:`polygon_problem` refuses (fewer than 3 points, points outside [0, 1],
            no area, crossing edges), the message naming the zone.
    """

    roll_area: Polygon = field(default_factory=lambda: list(FULL_FRAME))
    set_aside: Polygon | None = None

    def __post_init__(self) -> None:
        self.roll_area = _check_polygon("roll_area", self.roll_area)
        if self.set_aside is not None:
            self.set_aside = _check_polygon("set_aside", self.set_aside)

    def turned(self, degrees: int) -> Zones:
        """These zones on the frame turned clockwise by ``degrees`` (0, 90, 180 or 270; ``[source] rotate``): each
        normalised point ``(x, y)`` goes to ``(1 - y, x)`` for 90, ``(1 - x, 1 - y)`` for 180 and ``(y, 1 - x)`` for
        270, so a tray marked before the picture was turned stays on the tray. Raises ValueError for another angle."""
        from kosti.vision.frame_source import SourceError, turn_points

        def turn(poly: Polygon) -> Polygon:  # rounded: turned and turned back, a tray is the one marked
            try:
                pts = turn_points(np.asarray(poly, np.float64), 1.0, 1.0, degrees)
            except SourceError as exc:
                raise ValueError(f"zones: {exc}") from None
            return [(round(float(u), 9), round(float(v), 9)) for u, v in pts]

        return Zones(turn(self.roll_area), None if self.set_aside is None else turn(self.set_aside))

    # -- (de)serialisation for the config file and the dashboard -------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """``{"roll_area": [[x, y], ...], "set_aside": [[x, y], ...] | None}``."""
        return {
            "roll_area": [list(p) for p in self.roll_area],
            "set_aside": None if self.set_aside is None else [list(p) for p in self.set_aside],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Zones:
        """Inverse of :meth:`to_dict` (missing ``roll_area`` = whole frame). Raises ValueError on bad polygons."""
        return cls(roll_area=d.get("roll_area") or list(FULL_FRAME), set_aside=d.get("set_aside"))

    @classmethod
    def from_pixels(cls, roll_area: Sequence[Sequence[float]], width: int, height: int,
                    set_aside: Sequence[Sequence[float]] | None = None) -> Zones:
        """Build zones from polygons in pixels of a ``width × height`` frame."""
        def norm(poly: Sequence[Sequence[float]]) -> Polygon:
            return [(min(1.0, max(0.0, x / width)), min(1.0, max(0.0, y / height))) for x, y in poly]

        return cls(norm(roll_area), None if set_aside is None else norm(set_aside))

    # -- geometry --------------------------------------------------------------------------------------
    @staticmethod
    def _contour(poly: Polygon, width: int, height: int) -> np.ndarray:
        return (np.asarray(poly, dtype=np.float32) * np.asarray([width, height], np.float32)).reshape(-1, 1, 2)

    def pixel_polygons(self, width: int, height: int) -> dict[str, np.ndarray]:
        """Zones as ``(K, 2)`` int32 pixel polygons for drawing: keys ``roll_area`` and (if set) ``set_aside``."""
        out = {"roll_area": np.round(self._contour(self.roll_area, width, height).reshape(-1, 2)).astype(np.int32)}
        if self.set_aside is not None:
            out["set_aside"] = np.round(self._contour(self.set_aside, width, height).reshape(-1, 2)).astype(np.int32)
        return out

    def classify(self, boxes: np.ndarray, width: int, height: int) -> np.ndarray:
        """Zone of each box by its centre.

        Args:
            boxes: ``(N, 4)`` boxes ``[x1, y1, x2, y2]`` in pixels of a ``width × height`` frame.
            width, height: frame size in pixels.

        Returns:
            ``(N,)`` int8 codes: :data:`SET_ASIDE` (2), :data:`ROLL` (1) or :data:`OUTSIDE` (0).
        """
        import cv2  # here, not at import: the configuration validates polygons without OpenCV

        boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        codes = np.zeros(len(boxes), dtype=np.int8)
        if not len(boxes):
            return codes
        roll = self._contour(self.roll_area, width, height)
        aside = None if self.set_aside is None else self._contour(self.set_aside, width, height)
        for i, (x1, y1, x2, y2) in enumerate(boxes):
            c = (float((x1 + x2) / 2), float((y1 + y2) / 2))
            if aside is not None and cv2.pointPolygonTest(aside, c, False) >= 0:
                codes[i] = SET_ASIDE
            elif cv2.pointPolygonTest(roll, c, False) >= 0:
                codes[i] = ROLL
        return codes

    def split(self, detections: Any, width: int, height: int) -> tuple[Any, Any]:
        """Split a :class:`~kosti.vision.detections.Detections` into ``(in roll area, in set-aside area)``.

        Dice in neither zone are dropped.
        """
        codes = self.classify(detections.xyxy, width, height)
        return detections.filter(codes == ROLL), detections.filter(codes == SET_ASIDE)
