"""Dice found in one frame or one throw: the one die type of kosti.

:class:`Detections` follows the layout of ``supervision.Detections``: parallel NumPy arrays with one row
per die, filtered with boolean masks and handed to drawing or tracking code without copies, plus a
``data`` dict of optional per-die columns (:data:`COLUMNS`: ``guess``, ``votes``, ``recovered``,
``zone``, ``not_die``) that travel with every selection. A value of ``0`` means the reader could not tell the face
(the classifier said ``x`` — cocked, blurred, hidden, not a die — or its confidence was below the
reader's ``value_conf``); such dice are *uncertain* and are never silently guessed (``guess`` keeps the
best guess apart, for display and for labelling).

The reader returns one per frame, the vote one per throw, capture folders store one per image
(:mod:`kosti.datasets.capture`); :meth:`Detections.from_dice` takes the record-per-die shapes other
layers still use (``value``/``confidence``/``box`` objects, mappings or tuples) and
:meth:`Detections.to_records` gives them back as JSON-ready dicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Value code for a die whose face could not be read.
UNKNOWN_VALUE = 0

#: The optional per-die columns of :attr:`Detections.data`: name → (dtype, row shape, default, meaning).
#: Unknown names are allowed too (any ``(N, …)`` array).
COLUMNS: dict[str, tuple[Any, tuple[int, ...], Any, str]] = {
    "guess": (np.int8, (), 0, ("best-guess face 1–6 even when the die is uncertain (most voted face, or the "
                               "classifier's most probable one); 0 = no guess")),
    "votes": (np.int32, (3,), 1, "(frames agreeing on the value, frames that saw the die, frames read) of the vote"),
    "recovered": (np.bool_, (), False, ("found by the pipeline's recovery pass: the detector was unsure of this "
                                        "box and it was taken because the roll area held fewer dice than expected")),
    "zone": (np.int8, (), 1, "table zone of the box centre (kosti.vision.zones: 0 outside, 1 roll, 2 set aside)"),
    "not_die": (np.bool_, (), False, ("a candidate the classifier read as not a die (x at the reader's not_die_prob "
                                      "or above): never taken as a die")),
}


def _column(name: str, values: Any, n: int) -> np.ndarray:
    spec = COLUMNS.get(name)
    arr = np.asarray(values) if spec is None else np.asarray(values, dtype=spec[0])
    if spec is not None and spec[1]:
        arr = arr.reshape((-1, *spec[1]))
    if arr.ndim == 0 or len(arr) != n:
        raise ValueError(f"column {name!r} has {0 if arr.ndim == 0 else len(arr)} rows, expected {n}")
    return arr


def _default_column(name: str, n: int) -> np.ndarray:
    dtype, shape, default, _ = COLUMNS[name]
    return np.full((n, *shape), default, dtype=dtype)


@dataclass(frozen=True, eq=False)
class Detections:
    """Dice of one frame or one throw, as parallel arrays (row ``i`` is die ``i``).

    Attributes:
        xyxy: ``(N, 4)`` float32 boxes ``[x1, y1, x2, y2]`` in pixels of the frame (x right, y down).
        confidence: ``(N,)`` float32 detector confidence (0–1) that the box holds a die (NaN: unknown,
            e.g. a box drawn by a person).
        value: ``(N,)`` int8 face value 1–6, ``0`` = unknown (uncertain die).
        value_confidence: ``(N,)`` float32 probability of the reported value (0–1); for an uncertain
            die, the probability of the classifier's best face (so callers can see how close it was);
            NaN when unknown (labels read from a file).
        data: optional per-die columns, name → ``(N, …)`` array (:data:`COLUMNS` gives the known ones
            and their dtypes); selections and :meth:`concat` carry them along.

    Arrays are coerced to these dtypes on construction; mismatched lengths and values outside 0–6 raise
    ``ValueError``. Compare with :meth:`equals` (``==`` is identity, arrays have no single truth value).
    """

    xyxy: np.ndarray
    confidence: np.ndarray
    value: np.ndarray
    value_confidence: np.ndarray
    data: Mapping[str, np.ndarray] = field(default_factory=dict)

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
        data = {str(k): _column(str(k), v, n) for k, v in dict(self.data).items()}
        object.__setattr__(self, "xyxy", xyxy)
        object.__setattr__(self, "confidence", conf)
        object.__setattr__(self, "value", value.astype(np.int8))
        object.__setattr__(self, "value_confidence", vconf)
        object.__setattr__(self, "data", data)

    # -- constructors ----------------------------------------------------------------------------------
    @classmethod
    def empty(cls) -> Detections:
        """No dice."""
        return cls(np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int8), np.zeros(0))

    @classmethod
    def concat(cls, parts: Sequence[Detections]) -> Detections:
        """All dice of ``parts``, in order, as one :class:`Detections` (empty for no parts).

        A known column (:data:`COLUMNS`) missing from some parts is filled with its default there; an
        unknown column is kept only when every part has it.
        """
        if not parts:
            return cls.empty()
        names = {k for p in parts for k in p.data}
        data = {}
        for k in sorted(names):
            if all(k in p.data for p in parts):
                data[k] = np.concatenate([p.data[k] for p in parts])
            elif k in COLUMNS:
                data[k] = np.concatenate([p.data[k] if k in p.data else _default_column(k, len(p)) for p in parts])
        return cls(np.concatenate([p.xyxy for p in parts]), np.concatenate([p.confidence for p in parts]),
                   np.concatenate([p.value for p in parts]), np.concatenate([p.value_confidence for p in parts]),
                   data)

    @classmethod
    def from_dice(cls, dice: Iterable[Any]) -> Detections:
        """Build from one record per die: an object or mapping with ``value``, ``box`` and optionally
        ``confidence`` (value confidence), ``det_confidence``, ``uncertain``, ``guess``, ``votes``,
        ``recovered``, ``zone`` — e.g. :class:`kosti.vision.pipeline.Die` or the dashboard's ``TableDie`` —
        or a tuple ``(value, box[, confidence[, guess]])``.

        ``uncertain`` true stores value 0 (the face stays in ``guess`` when there is none); missing
        confidences are NaN; ``guess``/``votes``/``recovered``/``zone`` become columns when any die has them.

        Raises:
            ValueError: a record without a 4-number box, or a value outside 0–6.
        """
        rows: list[dict[str, Any]] = []
        for d in dice:
            if isinstance(d, (tuple, list)):
                if len(d) < 2:
                    raise ValueError(f"a die is (value, box[, confidence[, guess]]), got {d!r}")
                r: dict[str, Any] = {"value": d[0], "box": d[1]}
                if len(d) > 2:
                    r["confidence"] = d[2]
                if len(d) > 3:
                    r["guess"] = d[3]
            elif isinstance(d, Mapping):
                r = dict(d)
            else:
                r = {k: getattr(d, k) for k in ("value", "box", "confidence", "det_confidence", "uncertain",
                                                 *COLUMNS) if hasattr(d, k)}
            rows.append(r)
        n = len(rows)
        xyxy = np.zeros((n, 4), np.float32)
        value = np.zeros(n, np.int64)
        vconf = np.full(n, np.nan, np.float32)
        conf = np.full(n, np.nan, np.float32)
        for i, r in enumerate(rows):
            box = r.get("box")
            try:
                xyxy[i] = np.asarray(box, np.float64).reshape(4)
            except (TypeError, ValueError):
                raise ValueError(f"die {i}: box must be 4 numbers x1 y1 x2 y2, got {box!r}") from None
            v = int(r.get("value") or 0)
            guess = int(r.get("guess") or 0)
            if r.get("uncertain") and v:  # a face that stands in for an unread one: keep it as the guess
                if not 1 <= guess <= 6:
                    r["guess"] = v
                v = 0
            value[i] = v
            for arr, key in ((vconf, "confidence"), (conf, "det_confidence")):
                if r.get(key) is not None:
                    arr[i] = float(r[key])
        data = {}
        for k in COLUMNS:
            if any(k in r for r in rows):
                col = _default_column(k, n)
                for i, r in enumerate(rows):
                    if r.get(k) is not None:
                        col[i] = r[k]
                data[k] = col
        return cls(xyxy, conf, value, vconf, data)

    # -- selection ---------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: np.ndarray | slice | int | Sequence[int]) -> Detections:
        """Select dice by boolean mask, index array, slice or single index (always a Detections)."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        return Detections(
            self.xyxy[index], self.confidence[index], self.value[index], self.value_confidence[index],
            {k: v[index] for k, v in self.data.items()},
        )

    def filter(self, mask: np.ndarray) -> Detections:
        """Keep the dice where the ``(N,)`` boolean ``mask`` is true."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (len(self),):
            raise ValueError(f"mask shape {mask.shape} does not match {len(self)} detections")
        return self[mask]

    def with_data(self, **columns: Any) -> Detections:
        """A copy with the given per-die columns added or replaced (each ``(N, …)``, see :data:`COLUMNS`)."""
        return Detections(self.xyxy, self.confidence, self.value, self.value_confidence, {**self.data, **columns})

    def column(self, name: str) -> np.ndarray:
        """Column ``name`` of :attr:`data`, or its default (:data:`COLUMNS`) when absent.

        Raises:
            KeyError: an unknown column that is absent.
        """
        if name in self.data:
            return self.data[name]
        if name not in COLUMNS:
            raise KeyError(name)
        return _default_column(name, len(self))

    def equals(self, other: Detections) -> bool:
        """Same dice, row by row (arrays equal, NaN equal to NaN, same columns)."""
        return (len(self) == len(other) and set(self.data) == set(other.data)
                and all(np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
                        for a, b in [(self.xyxy, other.xyxy), (self.confidence, other.confidence),
                                     (self.value, other.value), (self.value_confidence, other.value_confidence)]
                        + [(self.data[k], other.data[k]) for k in self.data]))

    # -- views -------------------------------------------------------------------------------------------
    @property
    def uncertain(self) -> np.ndarray:
        """``(N,)`` bool: dice whose face could not be read (value 0)."""
        return np.asarray(self.value == UNKNOWN_VALUE)

    @property
    def all_read(self) -> bool:
        """True when every die's face was read (no uncertain die). True for no dice."""
        return not bool(self.uncertain.any())

    @property
    def faces(self) -> list[int]:
        """Values of the dice that were read, ascending (uncertain dice left out)."""
        return sorted(int(v) for v in self.value if v != UNKNOWN_VALUE)

    @property
    def best_faces(self) -> np.ndarray:
        """``(N,)`` int8: the value where read, else the ``guess`` column (0 where neither) — what a label
        file records for each die."""
        return np.where(self.value > 0, self.value, self.column("guess")).astype(np.int8)

    @property
    def centers(self) -> np.ndarray:
        """``(N, 2)`` float32 box centres in pixels."""
        return np.asarray((self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2, np.float32)

    def sorted_by_position(self) -> Detections:
        """Dice ordered left to right, then top to bottom (by box centre), for stable display."""
        if len(self) == 0:
            return self
        cx = (self.xyxy[:, 0] + self.xyxy[:, 2]) / 2
        cy = (self.xyxy[:, 1] + self.xyxy[:, 3]) / 2
        return self[np.lexsort((cy, cx))]

    def to_dicts(self, ndigits: int = 4) -> list[dict[str, Any]]:
        """The dice as JSON-ready dicts in the ``kosti read`` / ``kosti watch`` shape (``../shared/docs/cli.md``).

        Each die is ``{"value": 5, "confidence": 0.97, "box": [x1, y1, x2, y2]}`` where ``confidence``
        is the value confidence and boxes are rounded to 0.1 px. ``value`` is a face 1–6 as the contract says: an
        uncertain die gives its most likely face (the ``guess`` column) with that face's probability as its
        ``confidence`` and an extra ``"uncertain": true`` key (``0`` only where no face was guessed at all).
        """
        guess = self.data.get("guess")
        out = []
        for i in range(len(self)):
            value = int(self.value[i])
            if value == UNKNOWN_VALUE and guess is not None and 1 <= int(guess[i]) <= 6:
                value = int(guess[i])
            item: dict[str, Any] = {
                "value": value,
                "confidence": round(float(self.value_confidence[i]), ndigits),
                "box": [round(float(v), 1) for v in self.xyxy[i]],
            }
            if self.value[i] == UNKNOWN_VALUE:
                item["uncertain"] = True
            out.append(item)
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """Every field of every die as plain Python values, one dict per die: ``value``, ``confidence``
        (value confidence, ``None`` when unknown), ``det_confidence`` (``None`` when unknown), ``box``
        (floats, unrounded), ``uncertain``, and each :attr:`data` column (``votes`` as a tuple).
        The inverse of :meth:`from_dice` for records."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        out = []
        for i in range(len(self)):
            r: dict[str, Any] = {
                "value": int(self.value[i]),
                "confidence": num(float(self.value_confidence[i])),
                "det_confidence": num(float(self.confidence[i])),
                "box": tuple(float(v) for v in self.xyxy[i]),
                "uncertain": bool(self.value[i] == UNKNOWN_VALUE),
            }
            for k, col in self.data.items():
                v = col[i]
                r[k] = tuple(v.tolist()) if np.ndim(v) else v.item()
            out.append(r)
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
    inter = _intersection(a, b)
    union = _area(a)[:, None] + _area(b)[None, :] - inter
    return np.asarray(np.divide(inter, union, out=np.zeros_like(inter), where=union > 0))


def box_cover(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Share of each box of ``a`` that lies inside each box of ``b``.

    Args:
        a: ``(N, 4)`` and ``b``: ``(M, 4)`` boxes ``[x1, y1, x2, y2]`` in the same pixel frame.

    Returns:
        ``(N, M)`` float64, 0–1: intersection area over ``a[i]``'s own area (0 for an empty ``a[i]``).
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    inter = _intersection(a, b)
    area = _area(a)[:, None]
    return np.asarray(np.divide(inter, area, out=np.zeros_like(inter), where=area > 0))


def box_sides(xyxy: np.ndarray) -> np.ndarray:
    """``(N,)`` float64 sides of boxes ``xyxy`` ``(N, 4)`` ``[x1, y1, x2, y2]`` (pixels): the square root of each
    box's area ``w · h``, 0 where that is negative — one size per die for a box of any shape (the zoom's trigger
    and side, the settle detector's die size, the perspective of a throw)."""
    b = np.asarray(xyxy, np.float64).reshape(-1, 4)
    return np.asarray(np.sqrt(np.clip((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]), 0.0, None)))


def _intersection(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(N, M)`` intersection areas of float64 boxes ``a (N, 4)`` and ``b (M, 4)``."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    return np.asarray(np.clip(rb - lt, 0, None).prod(-1))


def _area(a: np.ndarray) -> np.ndarray:
    """``(N,)`` areas of float64 boxes ``a (N, 4)`` (0 for an inverted box)."""
    return np.asarray(np.clip(a[:, 2:] - a[:, :2], 0, None).prod(-1))


def unseen_in(boxes: np.ndarray, seen: np.ndarray, iou: float, cover: float | np.ndarray,
              seen_cover: float | np.ndarray | None = None) -> np.ndarray:
    """``(N,)`` bool: which of ``boxes`` lie on none of ``seen`` — IoU below ``iou`` with every box of ``seen``, and
    neither box of any pair covering the pair's cover share of the other's area (:func:`box_cover`: a die boxed
    whole in one read and by its top face, or two dice boxed as one, in the other).

    Args:
        boxes: ``(N, 4)`` and ``seen``: ``(M, 4)`` boxes ``[x1, y1, x2, y2]`` in the same pixel frame.
        iou: IoU (0–1) from which two boxes are the same die.
        cover: share of a box's own area (0–1] from which a box inside another is the same die: one value, or
            ``(N,)`` float, one per box of ``boxes``; 1 = no cover test, IoU alone.
        seen_cover: the same for the boxes of ``seen`` (one value or ``(M,)``; default ``cover``'s single value,
            or 1 = no less than ``cover``). A pair uses the smaller of its two shares, both ways.

    Returns:
        ``(N,)`` bool (all True when ``seen`` is empty).

    Raises:
        ValueError: ``cover`` or ``seen_cover`` is an array of another shape than ``(N,)`` / ``(M,)``.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    seen = np.asarray(seen, dtype=np.float64).reshape(-1, 4)

    def per_box(share: float | np.ndarray, n: int, name: str) -> np.ndarray:
        a = np.asarray(share, dtype=np.float64)
        if a.ndim == 0:
            a = np.full(n, float(a))
        if a.shape != (n,):
            raise ValueError(f"{name} must be one value or one per box, shape ({n},); got {a.shape}")
        return a

    covers = per_box(cover, len(boxes), "cover")
    if seen_cover is None:
        seen_cover = float(cover) if np.ndim(cover) == 0 else 1.0
    seen_covers = per_box(seen_cover, len(seen), "seen_cover")
    if len(seen) == 0 or len(boxes) == 0:
        return np.ones(len(boxes), bool)
    c = np.minimum(covers[:, None], seen_covers[None, :])
    on = c < 1.0  # a share of 1 turns the cover test off for that pair (as nested_in_stronger), IoU still counts
    inside = (box_cover(boxes, seen) >= c) | (box_cover(seen, boxes).T >= c)
    same = (box_iou(boxes, seen) >= iou) | (on & inside)
    unseen: np.ndarray = np.asarray(~same.any(axis=1), bool)
    return unseen


def _boxes_keep_fracs(xyxy: Any, keep: Any, frac: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xyxy (K, 4) float64, keep (K,) bool, fracs (K,) float64)`` for :func:`containers` and
    :func:`nested_in_stronger`: one ``frac`` for every box is spread to each. Raises :class:`ValueError` when
    ``frac`` is an array whose shape is not ``(K,)``."""
    boxes = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    fracs = np.asarray(frac, dtype=np.float64)
    if fracs.ndim == 0:
        fracs = np.full(len(boxes), float(fracs))
    if fracs.shape != (len(boxes),):
        raise ValueError(f"frac must be one value or one per box, shape ({len(boxes)},); got {fracs.shape}")
    return boxes, np.asarray(keep, bool), fracs


#: Largest area of a box held by a container, as a share of the container's own area (issue 38, "inner boxes
#: win"). A die's top or side face boxed inside the die's own box is a third to a half of it
#: (:func:`nested_in_stronger`), so two such face boxes never make a container; dice in a tray, a ring of tape
#: or a box lid are each a small part of it.
CONTAINER_AREA_RATIO = 0.25
#: Most that two boxes held by one container may cover each other (share of the smaller's area) and still be
#: two dice: dice lie side by side, a die's faces overlap.
CONTAINER_INNER_OVERLAP = 0.5


def containers(xyxy: np.ndarray, keep: np.ndarray, frac: float | np.ndarray) -> np.ndarray:
    """``(K,)`` bool: kept boxes that hold two or more separate, much smaller kept boxes — a tray, a ring, a box
    lid or a cup the dice were thrown into, boxed as one big "die".

    Issue 38: three dice thrown into a roll of tape were boxed as one die (read 2, p 0.29) and the one-box-per-die
    rule (:func:`nested_in_stronger`) then dropped the three dice inside it, because the outer box scored higher.
    Two real dice cannot lie inside one die, so when a box holds two or more boxes each covered ``≥`` their
    ``frac`` by it, each at most :data:`CONTAINER_AREA_RATIO` of its area and covering one another less than
    :data:`CONTAINER_INNER_OVERLAP`, the inner boxes are the dice and the outer one is not.

    Args:
        xyxy: ``(K, 4)`` boxes ``[x1, y1, x2, y2]`` in frame pixels.
        keep: ``(K,)`` bool, the boxes that are dice so far; only these hold or are held.
        frac: share of a held box's own area that must lie inside the container: one value, or ``(K,)`` float
            (the reader's :meth:`~kosti.vision.reader.DiceReader.cover_fracs`); ``≥ 1`` for a box that is never
            held (``nested_frac`` 1 turns the rule off).

    Returns:
        ``(K,)`` bool mask of the containers (a subset of ``keep``).

    Raises:
        ValueError: ``frac`` is an array whose shape is not ``(K,)``.
    """
    xyxy, keep, fracs = _boxes_keep_fracs(xyxy, keep, frac)
    found = np.zeros(len(xyxy), bool)
    if keep.sum() < 3:
        return found
    cover = box_cover(xyxy, xyxy)  # [i, j]: the share of box i inside box j
    area = _area(xyxy)
    for c in np.flatnonzero(keep):
        held = np.flatnonzero(keep & (fracs < 1.0) & (cover[:, c] >= fracs)
                              & (area <= CONTAINER_AREA_RATIO * area[c]))
        held = held[held != c]
        if len(held) < 2:
            continue
        apart = [int(held[0])]
        for j in held[1:]:  # the held boxes that are separate dice, not faces of one
            if all(max(cover[j, k], cover[k, j]) < CONTAINER_INNER_OVERLAP for k in apart):
                apart.append(int(j))
        found[c] = len(apart) >= 2
    return found


def nested_in_stronger(xyxy: np.ndarray, keep: np.ndarray, frac: float | np.ndarray) -> np.ndarray:
    """``(K,)`` bool: kept boxes covered ``≥`` their ``frac`` of their own area by an earlier (stronger) kept box.

    A die is found once. In oblique views the detector also boxes a die's top or side face inside the box
    of the whole die, and NMS keeps both because their IoU is small (a face is a third to a half of the
    die's box). Two real dice cannot lie inside one another, so a box whose area is covered ``≥ frac`` by
    a stronger kept box is the same die again.

    Args:
        xyxy: ``(K, 4)`` boxes ``[x1, y1, x2, y2]`` in frame pixels, strongest first (detector order).
        keep: ``(K,)`` bool, the boxes that are dice so far; only these suppress and are suppressed.
        frac: share of a box's own area, 0–1, that a stronger box must cover: one value for every box, or
            ``(K,)`` float, each box's own (the reader asks less of a weak box,
            :class:`kosti.vision.reader.DiceReader` ``weak_nested_frac``). A box whose share is ``≥ 1`` is
            never dropped (1 for every box turns the rule off).

    Returns:
        ``(K,)`` bool mask of the boxes to drop (a subset of ``keep``).

    Raises:
        ValueError: ``frac`` is an array whose shape is not ``(K,)``.
    """
    xyxy, keep, fracs = _boxes_keep_fracs(xyxy, keep, frac)
    drop = np.zeros(len(xyxy), bool)
    if keep.sum() < 2 or (fracs[keep] >= 1.0).all():
        return drop
    cover = box_cover(xyxy, xyxy)  # [i, j]: the share of box i inside box j
    for i in np.flatnonzero(keep & (fracs < 1.0)):
        stronger = np.flatnonzero(keep[:i] & ~drop[:i])
        if len(stronger) and cover[i, stronger].max() >= fracs[i]:
            drop[i] = True
    return drop
