"""YOLO label files: the one reader and writer of ``class cx cy w h`` lines in kosti.

Format (Ultralytics detection labels): one text file per image, ``labels/…/<stem>.txt`` beside
``images/…/<stem>.<ext>`` (:func:`label_path`), one line per object::

    class cx cy w h          class: integer index; cx cy w h: box centre and size normalised 0–1
    class x1 y1 x2 y2 …      a segment polygon (≥ 3 points); read as its bounding box, as Ultralytics does

For the dice sets class ``k`` is face ``k + 1`` (:data:`FACE_CLASSES`); a data.yaml may map classes
differently (``class_values`` of :func:`parse_labels`). A missing label file means no objects (an
Ultralytics negative). Every malformed line raises :class:`LabelError` naming ``file:line``.

Used by scoring (:mod:`kosti.vision.evaluate`), training-set preparation (:mod:`kosti.datasets.prepare`),
capture folders (:mod:`kosti.datasets.capture`), synthetic scenes (:mod:`kosti.datasets.synth`) and
the test clips; it lives in ``vision/`` so the scorer does not import the training package.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

#: Class index → face for the YOLO dice sets (class k = face k+1).
FACE_CLASSES = np.arange(1, 7, dtype=np.int8)
#: Decimal places of normalised coordinates written (1e-6 of a 4000 px frame is 0.004 px).
YOLO_DECIMALS = 6
#: Boxes may overhang the image by this many pixels (detector rounding) before :func:`check_box` refuses them.
BOX_TOLERANCE_PX = 1.0


class LabelError(ValueError):
    """A malformed label line (``file:line: …``), a class outside the class map, or a box that does not fit
    its image. CLI exit code 2."""

    exit_code = 2


def label_path(image: str | os.PathLike[str]) -> Path:
    """Ultralytics' ``img2label_paths``: the last ``/images/`` in the path becomes ``/labels/``, suffix ``.txt``
    (no ``images`` folder in the path: the ``.txt`` beside the image)."""
    image = Path(image)
    parts = list(image.parts)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == "images":
            parts[i] = "labels"
            return Path(*parts).with_suffix(".txt")
    return image.with_suffix(".txt")


def parse_labels(text: str, width: float, height: float, class_values: np.ndarray = FACE_CLASSES,
                 where: str = "labels") -> tuple[np.ndarray, np.ndarray]:
    """Parse label text into pixel boxes and the value of each class.

    Args:
        text: the label file's contents; blank lines are skipped.
        width, height: image size in pixels (the normalised coordinates are scaled by them).
        class_values: ``(nc,)`` class → value map (default :data:`FACE_CLASSES`: class k = face k+1).
        where: the file name used in error messages.

    Returns:
        ``xyxy (M, 4)`` float64 pixel boxes ``[x1, y1, x2, y2]`` (x right, y down) and ``values (M,)`` int8
        ``class_values[class]`` per line, in file order.

    Raises:
        LabelError: ``where:n: expected 'class cx cy w h', got '…'`` for a line that is not a class and 4
        numbers (or a polygon of ≥ 3 points), ``where:n: class c outside 0–(nc-1)`` for an unknown class.
    """
    class_values = np.asarray(class_values)
    boxes, values = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            c, nums = int(float(parts[0])), np.asarray(parts[1:], np.float64)
            if len(nums) == 4:
                cx, cy, w, h = nums
                x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
            elif len(nums) >= 6 and len(nums) % 2 == 0:  # a segment polygon: its bounding box
                xs, ys = nums[0::2], nums[1::2]
                x1, y1, x2, y2 = xs.min(), ys.min(), xs.max(), ys.max()
            else:
                raise ValueError
        except (ValueError, IndexError, OverflowError):
            raise LabelError(f"{where}:{n}: expected 'class cx cy w h', got {line.strip()!r}") from None
        if not 0 <= c < len(class_values):
            raise LabelError(f"{where}:{n}: class {c} outside 0–{len(class_values) - 1}")
        boxes.append([x1 * width, y1 * height, x2 * width, y2 * height])
        values.append(class_values[c])
    return np.asarray(boxes, np.float64).reshape(-1, 4), np.asarray(values, np.int8)


def read_labels(label: str | os.PathLike[str], width: float, height: float,
                class_values: np.ndarray = FACE_CLASSES) -> tuple[np.ndarray, np.ndarray]:
    """Read one label file with :func:`parse_labels` (a missing file: no objects, ``(0, 4)`` and ``(0,)``).

    Raises:
        LabelError: a malformed line or an unknown class (message ``<label>:<line>: …``).
    """
    label = Path(label)
    if not label.is_file():
        return np.zeros((0, 4), np.float64), np.zeros(0, np.int8)
    return parse_labels(label.read_text(), width, height, class_values, str(label))


def class_counts(text: str, nc: int = 6) -> np.ndarray:
    """``(nc,)`` int64 number of lines per class ``0…nc-1`` in label text; lines of other classes or
    unreadable lines are not counted (for folder statistics, never raises)."""
    counts = np.zeros(nc, np.int64)
    for line in text.splitlines():
        f = line.split()
        if f and f[0].isdigit() and int(f[0]) < nc:
            counts[int(f[0])] += 1
    return counts


def count_lines(text: str) -> int:
    """Number of objects (non-blank lines) in label text."""
    return sum(1 for line in text.splitlines() if line.strip())


def single_class(text: str, cls: int = 0) -> str:
    """The same labels with every object's class replaced by ``cls`` (a one-class detector set), boxes
    copied verbatim; blank lines dropped, one ``\\n`` after each line."""
    out = [f"{cls} " + " ".join(line.split()[1:]) for line in text.splitlines() if line.strip()]
    return "".join(line + "\n" for line in out)


def check_box(box: Iterable[float], width: int, height: int,
              tolerance: float = BOX_TOLERANCE_PX) -> tuple[float, float, float, float]:
    """Validate one pixel box ``(x1, y1, x2, y2)`` against a ``width`` × ``height`` image and clip it to the image.

    Raises:
        LabelError: ``x1 >= x2`` or ``y1 >= y2``, a corner more than ``tolerance`` px outside the image, or
        less than one pixel left inside it.
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    if not (x2 > x1 and y2 > y1):
        raise LabelError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] is empty: need x1 < x2 and y1 < y2")
    if x1 < -tolerance or y1 < -tolerance or x2 > width + tolerance or y2 > height + tolerance:
        raise LabelError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] lies outside the {width}×{height} image")
    c = (min(max(x1, 0.0), width), min(max(y1, 0.0), height), min(max(x2, 0.0), width), min(max(y2, 0.0), height))
    if c[2] - c[0] < 1.0 or c[3] - c[1] < 1.0:
        raise LabelError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] is smaller than one pixel inside the image")
    return c


def label_lines(xyxy: np.ndarray, classes: np.ndarray | Sequence[int], width: float, height: float, check: bool = True,
                decimals: int = YOLO_DECIMALS) -> list[str]:
    """Label lines ``"class cx cy w h"`` for pixel boxes.

    Args:
        xyxy: ``(N, 4)`` pixel boxes ``[x1, y1, x2, y2]``. classes: ``(N,)`` integer class per box
            (for dice: face − 1).
        width, height: image size in pixels (coordinates are divided by them).
        check: validate and clip each box with :func:`check_box` (``False``: written as given).
        decimals: decimal places of the normalised numbers.

    Raises:
        LabelError: ``die i: …`` for a box :func:`check_box` refuses (only with ``check``), or
        mismatched lengths.
    """
    xyxy = np.asarray(xyxy, np.float64).reshape(-1, 4)
    classes = np.asarray(classes).reshape(-1)
    if len(classes) != len(xyxy):
        raise LabelError(f"{len(xyxy)} boxes but {len(classes)} classes")
    out = []
    for i, (k, row) in enumerate(zip(classes.tolist(), xyxy.tolist())):
        x1, y1, x2, y2 = row
        if check:
            try:
                x1, y1, x2, y2 = check_box(row, int(width), int(height))
            except LabelError as exc:
                raise LabelError(f"die {i}: {exc}") from None
        cx, cy = (x1 + x2) / 2 / width, (y1 + y2) / 2 / height
        w, h = (x2 - x1) / width, (y2 - y1) / height
        out.append(f"{int(k)} {cx:.{decimals}f} {cy:.{decimals}f} {w:.{decimals}f} {h:.{decimals}f}")
    return out


def label_text(lines: Iterable[str]) -> str:
    """A label file's contents: the lines, each ended by ``\\n`` (empty text for no lines)."""
    return "".join(line + "\n" for line in lines)


__all__ = [
    "BOX_TOLERANCE_PX",
    "FACE_CLASSES",
    "YOLO_DECIMALS",
    "LabelError",
    "check_box",
    "class_counts",
    "count_lines",
    "label_lines",
    "label_path",
    "label_text",
    "parse_labels",
    "read_labels",
    "single_class",
]
