"""``[zones]``: the roll and set-aside areas (:class:`kosti.vision.zones.Zones`)."""

from __future__ import annotations

from pydantic import Field, field_validator

from kosti.config.base import _FULL_FRAME, Point, Section, doc


def _polygon_problem(points: list[tuple[float, float]]) -> str | None:
    """Why ``points`` is not a usable zone polygon, or ``None``: the one rule, :func:`kosti.vision.zones.polygon_problem`."""
    from kosti.vision.zones import polygon_problem

    return polygon_problem(points)


class ZonesSettings(Section):
    """Table zones (``[zones]``) as polygons of ``[x, y]`` points normalised to the frame (0–1, origin top-left).

    The set-aside area may lie inside the roll area: a die is tested against it first
    (:class:`kosti.vision.zones.Zones`), as on the dashboard's calibration page, where they are best drawn
    (docs/setup.md).
    """

    roll_area: list[Point] = Field(default_factory=lambda: list(_FULL_FRAME), description=doc("""
        Polygons of [x, y] points normalised to the frame (0–1, origin top-left). Draw them on the dashboard
        (Calibrate) instead of by hand. roll_area: where thrown dice are read (default: the whole frame)."""))
    set_aside: list[Point] = Field(default_factory=list, description=doc("""
        set_aside: where kept dice are put aside between throws (отложенные кости); [] = no such zone."""))

    @field_validator("roll_area")
    @classmethod
    def _roll_ok(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        problem = _polygon_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("set_aside")
    @classmethod
    def _aside_ok(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        problem = _polygon_problem(v) if v else None
        if problem:
            raise ValueError(problem)
        return v
