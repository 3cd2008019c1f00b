"""Dice found in one frame: boxes, detector confidence and the face each die shows.

:class:`Detections` follows the layout of ``supervision.Detections`` (parallel NumPy arrays, one row per
object) so it can be filtered with boolean masks and handed to drawing or tracking code without copies.
A value of ``0`` means the reader could not tell the face (the classifier said ``x`` — cocked, blurred,
hidden, not a die — or its confidence was below the reader's ``value_conf``); such dice are *uncertain*
and are never silently guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: Value code for a die whose face could not be read.
UNKNOWN_VALUE = 0


class ReadDie(NamedTuple):
    """One die as plain Python values (for the live pipeline, the throw builder and JSON).

    Attributes:
        value: face showing up, 1–6, or 0 when uncertain.
        confidence: probability that ``value`` is right (calibrated classifier softmax), 0–1.
        box: ``(x1, y1, x2, y2)`` in pixels of the input frame.
        det_confidence: detector confidence that this box is a die, 0–1.
    """

    value: int
    confidence: float
    box: tuple[float, float, float, float]
    det_confidence: float

    @property
    def uncertain(self) -> bool:
        """True when the face could not be read (``value == 0``)."""
        return self.value == UNKNOWN_VALUE


@dataclass(frozen=True)
class Detections:
    """Dice detected in one frame, as parallel arrays (row ``i`` is die ``i``).

    Attributes:
        xyxy: ``(N, 4)`` float32 boxes ``[x1, y1, x2, y2]`` in pixels of the input frame.
        confidence: ``(N,)`` float32 detector confidence (0–1) that the box holds a die.
        value: ``(N,)`` int8 face value 1–6, ``0`` = unknown (uncertain die).
        value_confidence: ``(N,)`` float32 probability of the reported value (0–1); for an uncertain
            die, the probability of the classifier's best face (so callers can see how close it was).

    Arrays are coerced to these dtypes on construction; mismatched lengths raise ``ValueError``.
    """

    xyxy: np.ndarray
    confidence: np.ndarray
    value: np.ndarray
    value_confidence: np.ndarray

    def __post_init__(self) -> None:
        xyxy = np.asarray(self.xyxy, dtype=np.float32).reshape(-1, 4)
        conf = np.asarray(self.confidence, dtype=np.float32).reshape(-1)
        value = np.asarray(self.value).reshape(-1)
        vconf = np.asarray(self.value_confidence, dtype=np.float32).reshape(-1)
        n = len(xyxy)
        if not (len(conf) == len(value) == len(vconf) == n):
            raise ValueError(
                f"mismatched lengths: xyxy {n}, confidence {len(conf)}, value {len(value)}, "
                f"value_confidence {len(vconf)}"
            )
        if n and (value.min() < 0 or value.max() > 6):
            raise ValueError(f"die values must be 0 (unknown) or 1–6, got {sorted(set(value.tolist()))}")
        object.__setattr__(self, "xyxy", xyxy)
        object.__setattr__(self, "confidence", conf)
        object.__setattr__(self, "value", value.astype(np.int8))
        object.__setattr__(self, "value_confidence", vconf)

    @classmethod
    def empty(cls) -> Detections:
        """No dice."""
        return cls(np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int8), np.zeros(0))

    @classmethod
    def concat(cls, parts: Sequence[Detections]) -> Detections:
        """All dice of ``parts``, in order, as one :class:`Detections` (empty for no parts)."""
        if not parts:
            return cls.empty()
        return cls(np.concatenate([p.xyxy for p in parts]), np.concatenate([p.confidence for p in parts]),
                   np.concatenate([p.value for p in parts]), np.concatenate([p.value_confidence for p in parts]))

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: np.ndarray | slice | int | Sequence[int]) -> Detections:
        """Select dice by boolean mask, index array, slice or single index (always a Detections)."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        return Detections(
            self.xyxy[index], self.confidence[index], self.value[index], self.value_confidence[index]
        )

    def filter(self, mask: np.ndarray) -> Detections:
        """Keep the dice where the ``(N,)`` boolean ``mask`` is true."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (len(self),):
            raise ValueError(f"mask shape {mask.shape} does not match {len(self)} detections")
        return self[mask]

    @property
    def uncertain(self) -> np.ndarray:
        """``(N,)`` bool: dice whose face could not be read (value 0)."""
        return self.value == UNKNOWN_VALUE

    @property
    def all_read(self) -> bool:
        """True when every die's face was read (no uncertain die). True for no dice."""
        return not bool(self.uncertain.any())

    @property
    def faces(self) -> list[int]:
        """Values of the dice that were read, ascending (uncertain dice left out)."""
        return sorted(int(v) for v in self.value if v != UNKNOWN_VALUE)

    def sorted_by_position(self) -> Detections:
        """Dice ordered left to right, then top to bottom (by box centre), for stable display."""
        if len(self) == 0:
            return self
        cx = (self.xyxy[:, 0] + self.xyxy[:, 2]) / 2
        cy = (self.xyxy[:, 1] + self.xyxy[:, 3]) / 2
        return self[np.lexsort((cy, cx))]

    def to_dice(self) -> list[ReadDie]:
        """The dice as :class:`ReadDie` tuples, in row order."""
        return [
            ReadDie(
                int(self.value[i]),
                float(self.value_confidence[i]),
                tuple(float(v) for v in self.xyxy[i]),  # type: ignore[arg-type]
                float(self.confidence[i]),
            )
            for i in range(len(self))
        ]

    def to_dicts(self, ndigits: int = 4) -> list[dict]:
        """The dice as JSON-ready dicts in the ``kosti read`` shape (``../shared/docs/cli.md``).

        Each die is ``{"value": 5, "confidence": 0.97, "box": [x1, y1, x2, y2]}`` where ``confidence``
        is the value confidence and boxes are rounded to 0.1 px. An uncertain die has ``"value": 0`` and
        an extra ``"uncertain": true`` key, so a reader of the documented keys never mistakes it for a face.
        """
        out = []
        for d in self.to_dice():
            item: dict = {
                "value": d.value,
                "confidence": round(d.confidence, ndigits),
                "box": [round(v, 1) for v in d.box],
            }
            if d.uncertain:
                item["uncertain"] = True
            out.append(item)
        return out


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in ``a`` with every box in ``b``.

    Args:
        a: ``(N, 4)`` and ``b``: ``(M, 4)`` boxes ``[x1, y1, x2, y2]`` in the same pixel frame.

    Returns:
        ``(N, M)`` float64 IoU matrix (0 where boxes do not overlap or are empty).
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area_a = np.clip(a[:, 2:] - a[:, :2], 0, None).prod(-1)
    area_b = np.clip(b[:, 2:] - b[:, :2], 0, None).prod(-1)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def nested_in_stronger(xyxy: np.ndarray, keep: np.ndarray, frac: float) -> np.ndarray:
    """``(K,)`` bool: kept boxes that lie mostly inside an earlier (stronger) kept box.

    A die is found once. In oblique views the detector also boxes a die's top or side face inside the box
    of the whole die, and NMS keeps both because their IoU is small (a face is a third to a half of the
    die's box). Two real dice cannot lie inside one another, so a box whose area is covered ``≥ frac`` by
    a stronger kept box is the same die again.

    Args:
        xyxy: ``(K, 4)`` boxes ``[x1, y1, x2, y2]`` in frame pixels, strongest first (detector order).
        keep: ``(K,)`` bool, the boxes that are dice so far; only these suppress and are suppressed.
        frac: share of a box's own area, 0–1, that a stronger box must cover (1 turns the rule off).

    Returns:
        ``(K,)`` bool mask of the boxes to drop (a subset of ``keep``).
    """
    xyxy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    keep = np.asarray(keep, bool)
    drop = np.zeros(len(xyxy), bool)
    if frac >= 1.0 or keep.sum() < 2:
        return drop
    lt = np.maximum(xyxy[:, None, :2], xyxy[None, :, :2])
    rb = np.minimum(xyxy[:, None, 2:], xyxy[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area = np.clip(xyxy[:, 2:] - xyxy[:, :2], 0, None).prod(-1)
    cover = np.divide(inter, area[:, None], out=np.zeros_like(inter), where=area[:, None] > 0)  # [i, j]: of i
    for i in np.flatnonzero(keep):
        stronger = np.flatnonzero(keep[:i] & ~drop[:i])
        if len(stronger) and cover[i, stronger].max() >= frac:
            drop[i] = True
    return drop
