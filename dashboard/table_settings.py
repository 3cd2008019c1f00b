"""The table's settings: their defaults, the stored values that are still valid, one merge rule, and the
live runner's :class:`~kosti.vision.runner.Tuning` made from them. (The thresholds earlier versions stored as
their defaults are dropped once, by migration 2 of :mod:`kosti.dashboard.migrations`.)

Settings are a JSON object: ``zones`` (:meth:`kosti.vision.zones.Zones.to_dict`, normalised polygons; None =
the whole frame), ``thresholds`` (``conf``, ``value_conf`` 0–1 of the reader, ``still_s`` seconds and
``motion_fraction`` / ``still_fraction`` 0–1 of the settle detector), ``live_width`` px and ``jpeg_quality``
of the live view, and ``rotate`` (degrees clockwise the camera's frames are turned, ``[source] rotate``; absent =
as the source was opened).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import JsonValue

from kosti.dashboard.errors import Invalid
from kosti.vision.frame_source import ROTATIONS
from kosti.vision.params import LIVE_THRESHOLDS, live_threshold_problem, meta
from kosti.vision.runner import Tuning
from kosti.vision.settle import MOTION_FRACTION, STILL_FRACTION
from kosti.vision.zones import Zones

log = logging.getLogger(__name__)

#: A settings object (JSON).
Settings = dict[str, JsonValue]

DEFAULT_SETTINGS: Settings = {
    "zones": None,  # kosti.vision.zones.Zones.to_dict(): normalised polygons, None = whole frame
    # The shipped reader's operating point (kosti.models, chosen by benchmarks/select_operating_point.py)
    # and the settle detector's still time, as declared (kosti.vision.params); the table changes them in
    # Settings or in kosti.toml.
    "thresholds": {k: meta(LIVE_THRESHOLDS[k], k)["default"] for k in ("conf", "value_conf", "still_s")},
    "live_width": 960,
    "jpeg_quality": 75,
}


def merged(base: Settings, values: Settings) -> Settings:
    """``base`` settings updated by ``values``: a table of values (``thresholds``) is merged key by key,
    anything else (``zones``, sizes) is replaced; ``source`` is not a stored setting and is skipped."""
    out = dict(base)
    for k, v in values.items():
        if k == "source":
            continue
        old = out.get(k)
        if isinstance(v, dict) and isinstance(old, dict) and k != "zones":
            out[k] = {**old, **v}
        else:
            out[k] = v
    return out


def valid_stored_settings(stored: Settings) -> Settings:
    """The stored settings whose values have the right kind and range; any other row is left out with a
    warning in the log (a hand-edited or damaged ``settings`` row must not stop the table: defaults apply).
    Thresholds are judged one by one: a bad one is left out, the others kept.

    Ranges are those of the dashboard's ``PUT /api/settings`` models: thresholds as declared
    (:data:`kosti.vision.params.LIVE_THRESHOLDS`: ``still_s`` > 0 and ≤ 10 s, the others 0–1), ``live_width``
    160–3840 px, ``jpeg_quality`` 20–95, ``zones`` as :meth:`kosti.vision.zones.Zones.from_dict` accepts,
    ``source`` a string, ``rotate`` 0, 90, 180 or 270.
    """
    def number(v: object, lo: float, hi: float) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and lo <= float(v) <= hi

    out: dict[str, Any] = {}
    for key, value in stored.items():
        ok = False
        try:
            if key == "thresholds" and isinstance(value, dict):
                # each threshold on its own: one value an older version stored out of today's range (conf 0)
                # must not take the table's other choices (its settle time) with it
                kept = {k: v for k, v in value.items() if live_threshold_problem(k, v) is None}
                for k in sorted(set(value) - set(kept)):
                    log.warning("stored threshold %r has a bad value (%.80r); the default is used", k, value[k])
                out[key] = kept
                continue
            if key == "thresholds":
                ok = False  # not a table of thresholds at all
            elif key == "zones":
                ok = value is None or (isinstance(value, dict) and Zones.from_dict(value) is not None)
            elif key == "live_width":
                ok = number(value, 160, 3840)
            elif key == "jpeg_quality":
                ok = number(value, 20, 95)
            elif key == "source":
                ok = isinstance(value, str) and len(value) <= 2048
            elif key == "rotate":
                ok = type(value) is int and value in ROTATIONS
            elif key == "record":
                ok = isinstance(value, bool)
            elif key == "record_mb":
                ok = number(value, 10, 100000)
            else:
                ok = True  # settings of other versions pass through untouched
        except (TypeError, ValueError, KeyError):
            ok = False
        if ok:
            out[key] = value
        else:
            log.warning("stored setting %r has a bad value (%.80r); the default is used", key, value)
    return out


def with_turned_zones(current: Settings, values: Settings, rotation: int) -> Settings:
    """``values`` to apply over ``current`` settings, plus — when they turn the picture (``rotate``, degrees
    clockwise) from ``rotation`` (the frames' turn now) without marking new zones — the current zones turned with
    it (:meth:`kosti.vision.zones.Zones.turned`): the tray stays marked where it is on the table."""
    new = values.get("rotate")
    zones = current.get("zones")
    if new is None or "zones" in values or not isinstance(zones, dict) or not zones or not isinstance(new, int):
        return values
    turn = (new - rotation) % 360
    if turn == 0:
        return values
    return {**values, "zones": Zones.from_dict(zones).turned(turn).to_dict()}


#: The stored settings row that remembers what the config file (or a flag) set at the last start
#: (:func:`file_settings_gone`); not a setting of its own, never shown.
FROM_FILE = "from_file"


def file_settings_gone(before: Settings, now: Settings, stored: Settings) -> tuple[Settings, list[str]]:
    """What to undo at start for the table settings the config file set at the last start (``before``) and sets no
    longer (``now``), where the page has not changed them since (``stored``, the stored settings, still hold the
    file's value): ``(values, thresholds)`` — settings to apply (``rotate`` 0, turning the zones back; ``zones``
    None, the whole frame) and the threshold keys to forget (back to their defaults). A value the page chose
    after the file's stays."""
    values: Settings = {}
    if "rotate" in before and "rotate" not in now and stored.get("rotate") == before["rotate"]:
        values["rotate"] = 0
    if "zones" in before and "zones" not in now and stored.get("zones") == before["zones"]:
        values["zones"] = None
    was, still, kept = thresholds_of(before), thresholds_of(now), thresholds_of(stored)
    return values, sorted(k for k in was if k not in still and kept.get(k) == was[k])


def thresholds_of(settings: Settings) -> dict[str, JsonValue]:
    """A copy of the ``thresholds`` table of ``settings``; ``{}`` when absent, or damaged (not a table)."""
    th = settings.get("thresholds")
    return dict(th) if isinstance(th, dict) else {}


def check_settle(current: Settings, values: Settings) -> None:
    """Refuse (:class:`Invalid`) new ``values`` whose settle thresholds, merged into ``current``, put the still
    fraction above the motion fraction (the gap between them is the settle detector's hysteresis)."""
    th = {**_table(current.get("thresholds")), **_table(values.get("thresholds"))}
    motion = _number(th.get("motion_fraction", MOTION_FRACTION))
    still = _number(th.get("still_fraction", STILL_FRACTION))
    if still > motion:
        raise Invalid(f"still_fraction {still} must not exceed motion_fraction {motion} (the gap is the hysteresis)",
                      f"still_fraction {still} не может быть больше motion_fraction {motion}")


def tuning(settings: Settings) -> Tuning:
    """The live runner's zones and thresholds from ``settings`` (a missing threshold stays as the runner has
    it; no zones = the whole frame is the roll area)."""
    z = settings.get("zones")
    th = _table(settings.get("thresholds"))

    def num(key: str) -> float | None:
        return _number(th[key]) if key in th else None

    return Tuning(zones=Zones.from_dict(z) if isinstance(z, dict) and z else Zones(),
                  **{key: num(key) for key in LIVE_THRESHOLDS})


def _table(v: JsonValue) -> dict[str, JsonValue]:
    """A settings table (``thresholds``): the JSON object, or ``{}`` when absent (``None``)."""
    if v is None:
        return {}
    if isinstance(v, dict):
        return v
    raise TypeError(f"expected a table of settings, got {v!r}")


def _number(v: JsonValue) -> float:
    """A stored threshold as ``float`` (as ``float(v)``: a number or numeric text; anything else raises)."""
    if isinstance(v, (int, float, str)):
        return float(v)
    raise TypeError(f"expected a number, got {v!r}")
