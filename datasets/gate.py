"""What ``kosti train`` retrains, how many photos it holds back, and when a new version may replace the old.

Issue 14 (teach kosti your dice without forgetting every other table) measured that a classifier-only
retraining fixed misread symbol dice (die accuracy 0.85 → 1.00) with no loss elsewhere, while retraining
the detector too destroyed the reader on other tables (exact reads 0.68 → 0.04) and a 3-photo gate could
not see it. Hence:

* :func:`needs_detector` — retrain the detector only when the current one *misses* dice: a die counts as
  found when any detector box scoring above the reader's second-look floor (``verify_conf``) matches it,
  because the face classifier can confirm such a box once it knows the dice (:class:`DiceReader`).
* :func:`holdout_count` — at least :data:`MIN_HELD_BACK` photos held back (half when there are fewer than
  twice as many), never trained on.
* :func:`gate` — a candidate is activated only if, on every measured set (the shipped reference photos
  and the user's held-back photos), each of :data:`GATE_METRICS` is no worse than the current model's by
  more than :data:`GATE_TOLERANCE`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: Metrics the gate checks (``kosti eval`` keys), each must stay within the tolerance (issue 14).
GATE_METRICS = ("precision", "recall", "die_accuracy")
#: Largest allowed loss on any gate metric (issue 14: "each within 0.005").
GATE_TOLERANCE = 0.005
#: Fewest held-back photos (issue 14: at least 10; half of the photos when there are fewer than 20).
MIN_HELD_BACK = 10
#: Share of labelled dice the detector must find (at the second-look floor) before the detector is left
#: alone; below it ``kosti train --detector auto`` retrains it. 0.98 is the recall target of issue 14.
FOUND_TARGET = 0.98


def holdout_count(n: int, fraction: float, min_held: int = MIN_HELD_BACK) -> int:
    """Photos held back of ``n``: ``max(round(fraction·n), min(min_held, n // 2))``; 0 when ``fraction`` ≤ 0.

    With 24 photos 10 are held back (14 train); with 14, 7; a 20 % holdout of 14 photos (3) was too few to
    see a forgetting detector (issue 14).
    """
    if n <= 0 or fraction <= 0:
        return 0
    return min(n - 1, max(round(fraction * n), min(min_held, n // 2), 1)) if n > 1 else 0


def gate(candidate: Mapping[str, Mapping[str, Any]], before: Mapping[str, Mapping[str, Any]],
         tolerance: float = GATE_TOLERANCE, metrics: tuple[str, ...] = GATE_METRICS) -> tuple[bool, str]:
    """Is ``candidate`` no worse than ``before`` on every set?

    Args:
        candidate, before: set name (``"reference"``, ``"held_back"``) → ``kosti eval`` metrics dict. Every
            set of ``before`` must be in ``candidate``.
        tolerance: largest allowed drop of each metric.

    Returns:
        ``(passed, reason)``; ``reason`` (English) names the first failing metric and set, or sums up the pass.
        :func:`gate_verdict` gives the same verdict with the Russian reason too.

    Raises:
        KeyError: a set or metric of ``before`` is missing from ``candidate``.
    """
    ok, en, _ru = gate_verdict(candidate, before, tolerance, metrics)
    return ok, en


#: Russian names of the gate metrics and measured sets, for the teach page's verdict.
_METRIC_RU = {"precision": "точность", "recall": "полнота", "die_accuracy": "доля верно прочитанных костей"}
_SET_RU = {"held_back": "на отложенных снимках", "reference": "на эталонных снимках"}


def gate_verdict(candidate: Mapping[str, Mapping[str, Any]], before: Mapping[str, Mapping[str, Any]],
                 tolerance: float = GATE_TOLERANCE,
                 metrics: tuple[str, ...] = GATE_METRICS) -> tuple[bool, str, str]:
    """:func:`gate` with its reason in English and in Russian: ``(passed, reason_en, reason_ru)``.

    Raises:
        KeyError: a set or metric of ``before`` is missing from ``candidate``.
    """
    for name, ref in before.items():
        got = candidate[name]
        for m in metrics:
            if ref.get(m) is None:
                continue
            was, now = float(ref[m]), float(got[m])
            if now < was - tolerance - 1e-9:  # exactly at the tolerance passes
                return False, (f"{m} on the {name.replace('_', '-')} photos fell from {was:.3f} to {now:.3f} "
                               f"(more than {tolerance})"), (
                    f"{_METRIC_RU.get(m, m)} {_SET_RU.get(name, name)} упала с {was:.3f} до {now:.3f} "
                    f"(больше чем на {tolerance})").replace(".", ",")
    en = "no worse than the current model on " + " and ".join(
        n.replace("_", "-") + " photos" for n in before) + f" ({', '.join(metrics)} within {tolerance})"
    names_ru = [_METRIC_RU.get(m, m) for m in metrics]
    listed_ru = ", ".join(names_ru[:-1]) + " и " + names_ru[-1] if len(names_ru) > 1 else names_ru[0]
    ru = "не хуже текущей модели " + " и ".join(_SET_RU.get(n, n) for n in before) + (
        f" ({listed_ru} — в пределах {tolerance})").replace(".", ",")
    return True, en, ru


def found_recall(reader: Any, dataset: Any, floor: float | None = None) -> dict[str, float]:
    """How many labelled dice the detector proposes at all: share matched (IoU ≥ 0.5) by a box scoring above
    ``floor`` (default the reader's ``verify_conf``), and the reader's working recall for comparison.

    Args:
        reader: a :class:`kosti.vision.reader.DiceReader`. dataset: :func:`kosti.vision.evaluate.load_dataset`.

    Returns:
        ``{"dice": N, "found": share found at the floor, "floor": floor}``.
    """
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import match_pairs, read_labels
    from kosti.vision.reader import load_image

    floor = float(reader.verify_conf if floor is None else floor)
    total = found = 0
    for item in dataset.items:
        img = load_image(item.image)
        txyxy, _ = read_labels(item.label, img.shape[1], img.shape[0], dataset.class_values)
        if not len(txyxy):
            continue
        xyxy, scores, _ = reader.detect(reader.exposed(img)[0], conf=floor)  # as read() sees the frame
        order = np.argsort(-np.asarray(scores))
        total += len(txyxy)
        found += len(match_pairs(box_iou(txyxy, np.asarray(xyxy)[order]))) if len(xyxy) else 0
    return {"dice": total, "found": round(found / total, 4) if total else 1.0, "floor": floor}


def needs_detector(found: Mapping[str, float], target: float = FOUND_TARGET) -> bool:
    """True when the detector misses dice (share found at the floor below ``target``): retrain it too."""
    return found["dice"] > 0 and found["found"] < target


__all__ = ["FOUND_TARGET", "GATE_METRICS", "GATE_TOLERANCE", "MIN_HELD_BACK", "found_recall", "gate", "gate_verdict",
           "holdout_count", "needs_detector"]
