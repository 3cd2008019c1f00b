"""The dice of a capture folder image: what callers hand in, as :class:`~kosti.vision.detections.Detections`,
and what the label file and the JSON API get out (:mod:`kosti.datasets.capture`).

A die to label has a face 1–6 and a pixel box. The model may not have read a face: such a die has
value 0 and its best guess in the ``guess`` column; it is labelled with the guess and its image stays
unreviewed until a person checks it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from kosti.datasets.capture_files import CaptureError
from kosti.vision.detections import Detections
from kosti.vision.yolo_labels import LabelError, label_lines


def _field(d: Any, key: str, default: Any = None) -> Any:
    if isinstance(d, (tuple, list)):
        i = {"value": 0, "box": 1, "confidence": 2, "guess": 3}[key]
        return d[i] if len(d) > i else default
    if isinstance(d, Mapping):
        return d.get(key, default)
    return getattr(d, key, default)


def _face(value: Any, name: str = "die value") -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise CaptureError(f"{name} must be an integer 1–6, got {value!r}")
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise CaptureError(f"{name} must be an integer 1–6, got {value!r}") from None


def labelled_dice(dice: Detections | Iterable[Any], allow_missing_box: bool = False) -> tuple[Detections, int]:
    """The dice to label, as :class:`~kosti.vision.detections.Detections` with a ``guess`` column.

    Args:
        dice: a :class:`Detections` (faces in ``value``, or ``value`` 0 with a ``guess`` column), or one
            record per die: a tuple ``(value, box[, confidence[, guess]])``, a mapping, or an object with
            ``value``, ``box`` and optionally ``confidence`` (of the value) and ``guess`` — e.g. the
            pipeline's dice or the dashboard's. A value of 0 (unread) needs a ``guess`` 1–6; the die is
            then stored with value 0 and that guess (it is labelled with the guess, and the image stays
            unreviewed).
        allow_missing_box: leave out dice without a box (``None`` or empty: a die a player added by hand)
            instead of refusing them.

    Returns:
        ``(dice, missing)``: ``value`` 0–6, ``value_confidence`` NaN where unknown, ``guess`` 0–6 and
        every die's label face in :attr:`Detections.best_faces`; ``missing`` = dice left out for no box.

    Raises:
        CaptureError: no usable face (not 1–6 and no guess 1–6), or a box that is not 4 finite numbers.
    """
    if isinstance(dice, Detections):
        if len(dice) and not np.isin(dice.best_faces, np.arange(1, 7)).all():
            raise CaptureError("die value must be 1–6 (or 0 with a best guess 1–6)")
        return dice.with_data(guess=dice.column("guess")), 0
    values, guesses, boxes, confs, missing = [], [], [], [], 0
    for d in dice:
        if isinstance(d, (tuple, list)) and len(d) < 2:
            raise CaptureError(f"a die is (value, box[, confidence[, guess]]), got {d!r}")
        value, guess = _face(_field(d, "value")), _face(_field(d, "guess", 0), "die guess")
        if not 1 <= value <= 6:
            if not 1 <= guess <= 6:
                raise CaptureError(f"die value must be 1–6 (or 0 with a best guess 1–6), got {value} (guess {guess})")
            value = 0
        box = _field(d, "box")
        if box is None or (hasattr(box, "__len__") and len(box) == 0):
            if allow_missing_box:
                missing += 1
                continue
            raise CaptureError("die has no box")
        try:
            b = [float(v) for v in box]
        except (TypeError, ValueError):
            raise CaptureError(f"die box must be 4 numbers x1 y1 x2 y2, got {box!r}") from None
        if len(b) != 4 or not all(math.isfinite(v) for v in b):
            raise CaptureError(f"die box must be 4 finite numbers x1 y1 x2 y2, got {box!r}")
        conf = _field(d, "confidence")
        values.append(value)
        guesses.append(guess if value == 0 else 0)
        boxes.append(b)
        confs.append(np.nan if conf is None else float(conf))
    n = len(values)
    return Detections(np.asarray(boxes, np.float64).reshape(n, 4), np.full(n, np.nan), np.asarray(values, np.int64),
                      np.asarray(confs, np.float64), {"guess": np.asarray(guesses, np.int64)}), missing


def yolo_lines(dice: Detections, width: int, height: int) -> list[str]:
    """YOLO label lines ``"class cx cy w h"`` of :func:`labelled_dice` output (class = label face − 1,
    coordinates normalised, 6 decimals; boxes clipped to the image by
    :func:`kosti.vision.yolo_labels.check_box`).

    Raises:
        CaptureError: a face outside 1–6, or ``die i: …`` for a box outside the image.
    """
    faces = dice.best_faces
    for i, f in enumerate(faces.tolist()):
        if not 1 <= f <= 6:
            raise CaptureError(f"die {i}: value must be 1–6, got {f}")
    try:
        return label_lines(dice.xyxy.astype(np.float64), faces.astype(np.int64) - 1, width, height)
    except LabelError as exc:
        raise CaptureError(str(exc)) from None


def dice_json(dice: Detections) -> list[dict[str, Any]]:
    """The dice of a capture record as ``[{"value", "box", "confidence", "uncertain"}]`` for JSON APIs:
    ``value`` the label face 1–6 (an unread die's guess, with ``uncertain`` true), box rounded to 0.01 px,
    ``confidence`` the model's value confidence (4 decimals) or ``None`` when unknown."""
    out = []
    for face, box, conf, unread in zip(dice.best_faces.tolist(), dice.xyxy.tolist(),
                                       dice.value_confidence.tolist(), dice.uncertain.tolist()):
        out.append({"value": int(face), "box": [round(float(v), 2) for v in box],
                    "confidence": None if math.isnan(conf) else round(float(conf), 4), "uncertain": bool(unread)})
    return out


__all__ = ["dice_json", "labelled_dice", "yolo_lines"]
