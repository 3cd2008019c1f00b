"""Boxes to confirm on the review page: dice the reader saw but did not take (issue 41 item 2).

On dice the shipped reader does not know (a skull for 1, numerals, marbled bodies) it often *sees* a die and
then turns it down: the classifier reads the box as "not a die" (the reader's veto, ``not_die``), or the
detector scores it below the box threshold and the second look does not confirm it. Those boxes are
:meth:`kosti.vision.reader.DiceReader.read_candidates`' second answer. Shown on ``/review`` as uncertain boxes
that one tap turns into a die, they spare the user drawing most boxes by hand (in the issue's trial, 155 of
308 dice were drawn by hand because the reader proposed nothing there).

:func:`uncertain_boxes` keeps the candidates that look like one die: about the size of the dice of the same
photo (:data:`SIZE_RANGE` of their median side), roughly square (:data:`MAX_ASPECT`), not on a labelled box
(:data:`OVERLAP`) and not on a stronger candidate. :class:`ReaderSuggester` runs the active reader on a photo
and returns them; the review page asks it once per unreviewed photo.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kosti.vision.detections import Detections, box_iou, box_sides

#: A candidate is die-sized when its side (square root of its area) lies within these multiples of the median
#: side of the photo's dice (labelled and read). Dice of one throw differ by perspective, rarely by 1.6×.
SIZE_RANGE = (0.6, 1.6)
#: Longest over shortest side of a die's box at most (a die seen from the side with its top shows about 1.3).
MAX_ASPECT = 1.6
#: A candidate overlapping a labelled box or a stronger candidate by this IoU, or covering this share of its
#: own area, is that die again.
OVERLAP = 0.3
#: At most this many boxes are suggested per photo (strongest detector scores first).
MAX_SUGGESTED = 32


def uncertain_boxes(candidates: Detections, labelled: np.ndarray, dice: Detections | None = None) -> list[dict[str, Any]]:
    """The reader's candidates that look like one more die, strongest first.

    Args:
        candidates: the second answer of :meth:`~kosti.vision.reader.DiceReader.read_candidates` (boxes in
            pixels, detector ``confidence``, ``guess`` column = the classifier's best face 1–6, ``not_die``
            column = turned down as "not a die").
        labelled: ``(N, 4)`` boxes ``[x1, y1, x2, y2]`` already labelled in the photo (pixels).
        dice: the reader's own dice of the photo (its first answer): those not labelled are suggested too
            (a die read with no face, which the teach page does not save), and their sizes count.

    Returns:
        ``[{"box": [x1, y1, x2, y2], "guess": 1–6, "confidence": detector score 0–1, "reason": "not_die" |
        "weak" | "unlabelled"}]`` — ``not_die``: the classifier took it for something else; ``weak``: scored
        below the box threshold and not confirmed; ``unlabelled``: a die the reader read that the labels lack.
        Boxes are rounded to 0.1 px. Empty when nothing is left.
    """
    labelled = np.asarray(labelled, np.float64).reshape(-1, 4)
    parts = [candidates] + ([dice] if dice is not None and len(dice) else [])
    pool = Detections.concat(parts)
    if not len(pool):
        return []
    not_die = np.asarray(candidates.data.get("not_die", np.zeros(len(candidates), bool)), bool)
    reason = np.array(["not_die" if nd else "weak" for nd in not_die] + ["unlabelled"] * (len(pool) - len(candidates)),
                      dtype=object)
    known = np.concatenate([labelled, dice.xyxy if dice is not None and len(dice) else np.zeros((0, 4))])
    sides = box_sides(pool.xyxy)
    ref = box_sides(known)
    ref = ref[ref > 0]
    w = pool.xyxy[:, 2] - pool.xyxy[:, 0]
    h = pool.xyxy[:, 3] - pool.xyxy[:, 1]
    ok = (w > 0) & (h > 0) & (np.maximum(w, h) <= MAX_ASPECT * np.minimum(w, h))
    if len(ref):
        median = float(np.median(ref))
        ok &= (sides >= SIZE_RANGE[0] * median) & (sides <= SIZE_RANGE[1] * median)
    if len(labelled):
        ok &= ~_overlaps(pool.xyxy, labelled)
    guess = pool.data.get("guess", pool.value)
    out: list[dict[str, Any]] = []
    taken: list[np.ndarray] = []
    for i in np.argsort(-np.nan_to_num(pool.confidence, nan=0.0), kind="stable"):
        if not ok[i] or (taken and _overlaps(pool.xyxy[i:i + 1], np.array(taken))[0]):
            continue
        if not 1 <= int(guess[i]) <= 6:
            continue
        taken.append(pool.xyxy[i])
        out.append({"box": [round(float(v), 1) for v in pool.xyxy[i]], "guess": int(guess[i]),
                    "confidence": round(float(np.nan_to_num(pool.confidence[i])), 3), "reason": str(reason[i])})
        if len(out) >= MAX_SUGGESTED:
            break
    return out


def _overlaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(N,)`` True where box ``a[i]`` overlaps some box of ``b`` by IoU ≥ :data:`OVERLAP`, or a box of ``b``
    covers that share of ``a[i]``'s area (or ``a[i]`` that share of it)."""
    iou = box_iou(a, b)
    ax = np.asarray(a, np.float64).reshape(-1, 4)
    bx = np.asarray(b, np.float64).reshape(-1, 4)
    lt = np.maximum(ax[:, None, :2], bx[None, :, :2])
    rb = np.minimum(ax[:, None, 2:], bx[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area_a = ((ax[:, 2] - ax[:, 0]) * (ax[:, 3] - ax[:, 1]))[:, None]
    area_b = ((bx[:, 2] - bx[:, 0]) * (bx[:, 3] - bx[:, 1]))[None, :]
    cover = np.maximum(inter / np.maximum(area_a, 1e-9), inter / np.maximum(area_b, 1e-9))
    return np.asarray(((iou >= OVERLAP) | (cover >= OVERLAP)).any(1))


class ReaderSuggester:
    """Suggests boxes to confirm with the reader the dashboard reads with, loaded on first use and again when the
    files it reads with change (the active model version). Thread-safe.

    Args:
        detector, classifier: model files, when ``files`` is not given.
        files: ``() -> (detector, classifier)``, asked before each image: the application top passes the model
            registry's active version (:func:`kosti.registry.reader_files`), which datasets/ does not import
            (docs/architecture.md, the floors).

    Raises :class:`ValueError` when neither the two files nor ``files`` are given.
    """

    def __init__(self, detector: Path | None = None, classifier: Path | None = None, *,
                 files: Callable[[], tuple[Path | None, Path | None]] | None = None) -> None:
        if files is None:
            if detector is None or classifier is None:
                raise ValueError("ReaderSuggester needs the detector and classifier files, or files=")
            det, cls = Path(detector), Path(classifier)
            files = lambda: (det, cls)  # noqa: E731
        self._files = files
        self._reader: Any = None
        self._key: tuple[Any, ...] | None = None
        self._lock = threading.Lock()

    def _current(self) -> Any:
        from kosti.vision.reader import DiceReader

        det, cls = self._files()
        key = (det, cls)
        if self._reader is None or key != self._key:
            self._reader, self._key = DiceReader(det, cls), key
        return self._reader

    def __call__(self, image: np.ndarray, labelled: np.ndarray) -> list[dict[str, Any]]:
        """:func:`uncertain_boxes` of ``image`` (``(H, W, 3)`` uint8 BGR) with the reader's candidates and
        dice, beside the ``labelled`` ``(N, 4)`` boxes. Raises what the reader raises (a model that cannot be
        loaded: ``ModelLoadError``; the registry: ``RegistryError``)."""
        with self._lock:
            dice, candidates = self._current().read_candidates(image)
        return uncertain_boxes(candidates, labelled, dice)


__all__ = ["MAX_ASPECT", "MAX_SUGGESTED", "OVERLAP", "SIZE_RANGE", "ReaderSuggester", "uncertain_boxes"]
