"""Capture a table's own dice as labelled training data, and ``kosti capture``.

Players retrain the dice reader on their own dice (issue "Retrain on your own dice"): the live pipeline
saves every settled throw with the faces the current model proposes, players check and fix the labels
on the dashboard's review page (:mod:`kosti.dashboard.review`), and ``kosti train --data DIR``
fine-tunes on them. Corrections made while playing are saved the same way (:func:`save_correction`).

Capture folder layout (a plain YOLO detection dataset, usable as is by ``kosti train --data DIR``,
``kosti eval --data DIR`` and :func:`kosti.datasets.prepare.split_images`)::

    DIR/
      images/<id>.jpg     settled frames, JPEG quality 95, full camera resolution
      labels/<id>.txt     YOLO: one line "class cx cy w h" per die, class k = face k+1, box normalised 0–1
      review.json         {"version": 1, "images": {id: entry}} (see below)
      data.yaml           names 0–5 → faces "1"–"6" (so ``kosti eval --data DIR`` reads the classes right)
      .lock               flock(2) lock serialising writers (capture process and dashboard)

A ``review.json`` entry::

    {"file": "<id>.jpg", "reviewed": false, "source": "capture" | "correction",
     "model": "<model version / reader description>", "time": "2026-11-30T04:45:12.123Z",
     "width": 1280, "height": 720,
     "proposed": [{"value": 5, "confidence": 0.93, "uncertain": false}, ...],   # per die, as first written
     "reviewed_at": null | ISO time, "edited": false}

Dice the model could not read (value 0, *uncertain*) are written with its best guess of the face and
the image is left unreviewed; an image is only ``reviewed`` once a person saved or confirmed its labels.

Typical use::

    kosti capture --source 0 --out ~/dice            # play; every settled throw is saved (Ctrl-C stops)
    kosti capture --source ~/photos --out ~/dice     # photos you already have: ids keep their file names
    # open http://<pi>:8000/review and check the labels (Enter saves and opens the next one)
    kosti train --data ~/dice                        # fine-tune on every image (unchecked ones as proposed)

``kosti train`` reads every image of the folder, checked or not (unchecked labels are the model's own
proposals, i.e. pseudo-labels). To train on checked labels only, link them into a separate folder with
:func:`link_reviewed` and train on that.

Atomicity: every file is written to a hidden temporary file in the same folder, flushed, fsync'ed and
moved into place with :func:`os.replace` (atomic on POSIX), labels before the image, so a reader (a
training run, the review page) never sees a half-written file nor an image without its labels. The
read-modify-write of ``review.json`` holds an exclusive :func:`fcntl.flock` on ``DIR/.lock``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import math
import os
import queue
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

try:  # POSIX (Linux, the Raspberry Pi, macOS); without it writers are not serialised across processes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

REVIEW_JSON = "review.json"
DATA_YAML = "data.yaml"
LOCK_NAME = ".lock"
FORMAT_VERSION = 1
#: Where the image came from: the capture loop, or a correction made while playing.
SOURCES = ("capture", "correction")
#: JPEG quality of captured frames (training data: keep detail, ~200–400 kB at 1280×720).
JPEG_QUALITY = 95
#: Decimal places of normalised YOLO coordinates (1e-6 of a 4000 px frame is 0.004 px).
YOLO_DECIMALS = 6
#: Boxes may overhang the image by this many pixels (detector rounding); they are clipped.
BOX_TOLERANCE_PX = 1.0
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class CaptureError(ValueError):
    """Bad capture input or folder: unknown image id, malformed labels, unreadable ``review.json``,
    a value outside 1–6, a box outside the image. CLI exit code 2."""

    exit_code = 2


def default_capture_dir() -> Path:
    """Where ``kosti capture`` and the dashboard's review page keep captured throws unless told otherwise:
    ``storage.frames_dir`` of the kosti configuration (:attr:`kosti.config.StorageSettings.frames_path`;
    default ``$XDG_DATA_HOME/kosti/frames``, ``/var/lib/kosti/frames`` for the Raspberry Pi service).

    Raises:
        kosti.config.ConfigError: the configuration file is invalid (exit code 2).
    """
    from kosti.config import load_config

    return load_config().storage.frames_path


# ---------------------------------------------------------------------------------------------------
# Dice
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelledDie:
    """One labelled die.

    Attributes:
        value: face showing up, 1–6.
        box: ``(x1, y1, x2, y2)`` in pixels of the image (x right, y down, ``x1 < x2``, ``y1 < y2``).
        confidence: the model's confidence in ``value`` when it was proposed (0–1), ``None`` if unknown
            (a die drawn by a person, or read back from a label file without ``review.json``).
        uncertain: the model could not read the face; ``value`` is its best guess.
    """

    value: int
    box: tuple[float, float, float, float]
    confidence: float | None = None
    uncertain: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "box", "confidence", "uncertain"}`` (box rounded to 0.01 px) for JSON APIs."""
        return {"value": int(self.value), "box": [round(float(v), 2) for v in self.box],
                "confidence": None if self.confidence is None else round(float(self.confidence), 4),
                "uncertain": bool(self.uncertain)}


def _get(d: Any, key: str, default: Any = None) -> Any:
    if isinstance(d, Mapping):
        return d.get(key, default)
    return getattr(d, key, default)


def as_die(d: Any, allow_missing_box: bool = False) -> LabelledDie | None:
    """Normalise one die given as :class:`LabelledDie`, a tuple ``(value, box[, confidence[, guess]])``,
    a mapping or an object with ``value``, ``box`` and optionally ``confidence`` and ``guess``
    (:class:`kosti.vision.pipeline.Die`, the dashboard's ``TableDie``).

    A value of 0 (uncertain) is replaced by ``guess`` (1–6) and the die marked uncertain.

    Returns:
        the die, or ``None`` when it has no box and ``allow_missing_box`` (a die a player added by hand).

    Raises:
        CaptureError: no usable value (not 1–6 and no guess 1–6), or a malformed box.
    """
    if isinstance(d, LabelledDie):
        return d
    if isinstance(d, (tuple, list)):
        if len(d) < 2:
            raise CaptureError(f"a die is (value, box[, confidence[, guess]]), got {d!r}")
        value, box = d[0], d[1]
        conf = d[2] if len(d) > 2 else None
        guess = d[3] if len(d) > 3 else 0
    else:
        value, box = _get(d, "value"), _get(d, "box")
        conf, guess = _get(d, "confidence"), _get(d, "guess", 0)
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        value = int(value)
        guess = int(guess or 0)
    except (TypeError, ValueError):
        raise CaptureError(f"die value must be an integer 1–6, got {value!r}") from None
    uncertain = False  # True only when the model's best guess stands in for an unread face
    if not 1 <= value <= 6:
        if 1 <= guess <= 6:
            value, uncertain = guess, True
        else:
            raise CaptureError(f"die value must be 1–6 (or 0 with a best guess 1–6), got {value} (guess {guess})")
    if box is None or (hasattr(box, "__len__") and len(box) == 0):
        if allow_missing_box:
            return None
        raise CaptureError("die has no box")
    try:
        b = tuple(float(v) for v in box)
    except (TypeError, ValueError):
        raise CaptureError(f"die box must be 4 numbers x1 y1 x2 y2, got {box!r}") from None
    if len(b) != 4 or not all(math.isfinite(v) for v in b):
        raise CaptureError(f"die box must be 4 finite numbers x1 y1 x2 y2, got {box!r}")
    c = None if conf is None else float(conf)
    return LabelledDie(value, b, c, uncertain)  # type: ignore[arg-type]


def check_box(box: tuple[float, float, float, float], width: int, height: int,
              tolerance: float = BOX_TOLERANCE_PX) -> tuple[float, float, float, float]:
    """Validate a pixel box against a ``width`` × ``height`` image and clip it to the image.

    Raises:
        CaptureError: ``x1 >= x2`` or ``y1 >= y2``, or a corner lies more than ``tolerance`` px outside.
    """
    x1, y1, x2, y2 = box
    if not (x2 > x1 and y2 > y1):
        raise CaptureError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] is empty: need x1 < x2 and y1 < y2")
    if x1 < -tolerance or y1 < -tolerance or x2 > width + tolerance or y2 > height + tolerance:
        raise CaptureError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] lies outside the {width}×{height} image")
    c = (min(max(x1, 0.0), width), min(max(y1, 0.0), height), min(max(x2, 0.0), width), min(max(y2, 0.0), height))
    if c[2] - c[0] < 1.0 or c[3] - c[1] < 1.0:
        raise CaptureError(f"box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] is smaller than one pixel inside the image")
    return c


def yolo_lines(dice: Iterable[LabelledDie], width: int, height: int) -> list[str]:
    """YOLO label lines ``"class cx cy w h"`` (class = face − 1, coordinates normalised, 6 decimals).

    Raises:
        CaptureError: a value outside 1–6 or a box outside the image (see :func:`check_box`).
    """
    out = []
    for i, d in enumerate(dice):
        if not 1 <= int(d.value) <= 6:
            raise CaptureError(f"die {i}: value must be 1–6, got {d.value}")
        try:
            x1, y1, x2, y2 = check_box(d.box, width, height)
        except CaptureError as exc:
            raise CaptureError(f"die {i}: {exc}") from None
        cx, cy = (x1 + x2) / 2 / width, (y1 + y2) / 2 / height
        w, h = (x2 - x1) / width, (y2 - y1) / height
        out.append(f"{int(d.value) - 1} {cx:.{YOLO_DECIMALS}f} {cy:.{YOLO_DECIMALS}f} "
                   f"{w:.{YOLO_DECIMALS}f} {h:.{YOLO_DECIMALS}f}")
    return out


def parse_yolo(text: str, width: int, height: int, where: str = "labels") -> list[tuple[int, tuple[float, ...]]]:
    """Parse YOLO label text → ``[(value 1–6, (x1, y1, x2, y2) pixels)]``.

    Raises:
        CaptureError: a line that is not ``class cx cy w h`` with class 0–5.
    """
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        f = line.split()
        try:
            if len(f) != 5:
                raise ValueError
            k = int(f[0])
            cx, cy, w, h = (float(v) for v in f[1:])
        except ValueError:
            raise CaptureError(f"{where}:{n}: expected 'class cx cy w h', got {line!r}") from None
        if not 0 <= k <= 5:
            raise CaptureError(f"{where}:{n}: class {k} is not a face class 0–5")
        out.append((k + 1, ((cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height)))
    return out


# ---------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------
def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: hidden temp file in the same folder, fsync, :func:`os.replace`.

    A crash leaves either the old file or the new one (and at worst a ``.*.tmp`` file, never listed as an
    image or label). Raises ``OSError`` as the file system does; the temp file is removed on failure.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    with open(root / LOCK_NAME, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_review(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed ``review.json`` of a capture folder (an empty index if there is none yet).

    Raises:
        CaptureError: the file exists but is not valid JSON of this format (never overwritten then).
    """
    p = Path(root) / REVIEW_JSON
    if not p.exists():
        return {"version": FORMAT_VERSION, "images": {}}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaptureError(f"{p}: unreadable review index ({exc}); fix or remove it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("images"), dict):
        raise CaptureError(f"{p}: not a kosti review index (no 'images' object)")
    return data


def _write_review(root: Path, data: dict[str, Any]) -> None:
    atomic_write(root / REVIEW_JSON, (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode())


def _ensure_layout(root: Path) -> None:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    if not (root / DATA_YAML).exists():
        names = "\n".join(f"  {k}: '{k + 1}'" for k in range(6))
        atomic_write(root / DATA_YAML, (
            "# kosti capture folder: YOLO labels, class k = face k+1\n"
            f"path: .\ntrain: images\nval: images\ntest: images\nnames:\n{names}\n").encode())


def check_id(image_id: str) -> str:
    """Return ``image_id`` if it is a safe file stem (letters, digits, ``._-``, no path); else CaptureError."""
    if not isinstance(image_id, str) or not _ID_RE.match(image_id) or ".." in image_id:
        raise CaptureError(f"invalid image id {image_id!r}")
    return image_id


def image_path(root: str | os.PathLike[str], image_id: str) -> Path:
    """Path of image ``image_id`` in a capture folder (any image suffix).

    Raises:
        CaptureError: invalid id, or no such image.
    """
    root = Path(root)
    check_id(image_id)
    entry = read_review(root)["images"].get(image_id) or {}
    f = entry.get("file")
    names = [f] if isinstance(f, str) and Path(f).name == f and not f.startswith(".") else []
    names += [image_id + s for s in IMAGE_SUFFIXES]
    for name in names:
        p = root / "images" / name
        if p.is_file():
            return p
    raise CaptureError(f"no image {image_id!r} in {root}")


def label_file(root: str | os.PathLike[str], image_id: str) -> Path:
    """``DIR/labels/<id>.txt`` (the Ultralytics label path of ``DIR/images/<id>.*``)."""
    return Path(root) / "labels" / f"{check_id(image_id)}.txt"


def _image_size(path: Path) -> tuple[int, int]:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise CaptureError(f"{path}: not a readable image")
    return int(img.shape[1]), int(img.shape[0])


def _encode(image: np.ndarray | bytes | bytearray) -> tuple[bytes, int, int]:
    """JPEG bytes and ``(width, height)`` of a BGR array, or of already encoded image bytes (kept as is
    when JPEG, re-encoded otherwise)."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if arr is None:
            raise CaptureError("image bytes are not a decodable image")
        if data[:3] == b"\xff\xd8\xff":
            return data, int(arr.shape[1]), int(arr.shape[0])
        image = arr
    if not (isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
            and image.shape[0] > 0 and image.shape[1] > 0):
        raise CaptureError(f"expected an (H, W, 3) uint8 BGR image, got {getattr(image, 'shape', type(image))}")
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 BGR image
        raise CaptureError("JPEG encoding failed")
    return buf.tobytes(), int(image.shape[1]), int(image.shape[0])


# ---------------------------------------------------------------------------------------------------
# Writer and readers
# ---------------------------------------------------------------------------------------------------
@dataclass
class CaptureRecord:
    """One captured image with its labels (from :func:`load`).

    Attributes:
        id: image id (file stem). path: the image file. width, height: image size in pixels.
        dice: labelled dice in label-file order, boxes in pixels; ``confidence``/``uncertain`` from the
            model's proposal while the labels are unchanged since it was written, else ``None``/False.
        reviewed: a person saved or confirmed the labels. source: ``capture`` / ``correction`` / ``import``
            (an image found in the folder with no ``review.json`` entry).
        meta: the full ``review.json`` entry.
        image: ``(H, W, 3)`` uint8 BGR pixels, or ``None`` when loaded with ``with_image=False``.
    """

    id: str
    path: Path
    width: int
    height: int
    dice: list[LabelledDie]
    reviewed: bool
    source: str
    meta: dict[str, Any] = field(default_factory=dict)
    image: np.ndarray | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (no pixels): id, size, reviewed, source, model, time, dice."""
        return {"id": self.id, "file": self.path.name, "width": self.width, "height": self.height,
                "reviewed": self.reviewed, "source": self.source, "model": self.meta.get("model"),
                "time": self.meta.get("time"), "reviewed_at": self.meta.get("reviewed_at"),
                "edited": bool(self.meta.get("edited", False)), "note": self.meta.get("note"),
                "dice": [d.to_dict() for d in self.dice]}


class CaptureWriter:
    """Adds images with proposed labels to a capture folder (created with its layout on first use).

    Args:
        root: the capture folder ``DIR``.
        model: default model version recorded with each image (e.g. the registry version name).

    Safe to use from several threads and processes at once (ids are allocated under the folder lock).
    """

    def __init__(self, root: str | os.PathLike[str], model: str | None = None) -> None:
        self.root = Path(root).expanduser()
        self.model = model
        _ensure_layout(self.root)

    def _new_id(self, review: dict[str, Any], now: _dt.datetime) -> str:
        base = now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond // 1000:03d}"
        n, candidate = 1, base
        while candidate in review["images"] or any(
                (self.root / "images" / (candidate + s)).exists() for s in IMAGE_SUFFIXES):
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def add(self, image: np.ndarray | bytes, dice: Iterable[Any], source: str = "capture", reviewed: bool = False,
            model: str | None = None, note: str | None = None, image_id: str | None = None,
            extra: Mapping[str, Any] | None = None) -> str:
        """Save one image with its dice; returns the new image id.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame, or encoded image bytes (JPEG bytes are kept as they are).
            dice: per die ``(value 1–6, box xyxy pixels, confidence)`` or anything :func:`as_die` takes;
                a value of 0 (uncertain) needs a best guess 1–6 and forces ``reviewed=False``.
            source: ``"capture"`` or ``"correction"``.
            reviewed: the labels are known right (a person checked them).
            model: model version that proposed the labels (default: the writer's ``model``).
            note: free text shown on the review page (e.g. dice still missing a box).
            image_id: store under this id (letters, digits, ``._-``), replacing an image already stored
                under it (e.g. one throw corrected twice); default: a new id from the UTC time.
            extra: more JSON-ready facts kept in the image's ``review.json`` entry (``kosti capture`` keeps
                the throw's ``frame``, ``time_s``, ``status`` and ``reasons``).

        Raises:
            CaptureError: bad source, image, value or box (nothing is written then).
            OSError: the folder is not writable.
        """
        if source not in SOURCES:
            raise CaptureError(f"source must be one of {SOURCES}, got {source!r}")
        data, width, height = _encode(image)
        labelled = [as_die(d) for d in dice]
        labelled = [d for d in labelled if d is not None]
        lines = yolo_lines(labelled, width, height)  # validates before anything is written
        if any(d.uncertain for d in labelled):
            reviewed = False
        now = _dt.datetime.now(_dt.timezone.utc)
        with _locked(self.root):
            review = read_review(self.root)
            if image_id is None:
                image_id = self._new_id(review, now)
            else:
                check_id(image_id)
                for suffix in IMAGE_SUFFIXES:  # an earlier version of this image under another suffix
                    old = self.root / "images" / (image_id + suffix)
                    if suffix != ".jpg" and old.exists():
                        old.unlink()
            atomic_write(label_file(self.root, image_id), ("\n".join(lines) + ("\n" if lines else "")).encode())
            review["images"][image_id] = {
                "file": image_id + ".jpg",
                "reviewed": bool(reviewed),
                "source": source,
                "model": model if model is not None else self.model,
                "time": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "width": width,
                "height": height,
                "proposed": [{"value": d.value, "confidence": None if d.confidence is None else round(d.confidence, 4),
                              "uncertain": d.uncertain} for d in labelled],
                "labels": lines,
                "reviewed_at": _now() if reviewed else None,
                "edited": False,
                **({"note": note} if note else {}),
                **({"throw": dict(extra)} if extra else {}),
            }
            review["version"] = FORMAT_VERSION
            _write_review(self.root, review)
            atomic_write(self.root / "images" / (image_id + ".jpg"), data)  # last: the image makes it visible
        return image_id


def list_ids(root: str | os.PathLike[str]) -> list[str]:
    """Ids of the images in ``DIR/images`` (file stems), in name order = capture time order."""
    d = Path(root) / "images"
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.iterdir()
                  if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".") and _ID_RE.match(p.stem))


def load(root: str | os.PathLike[str], image_id: str, with_image: bool = True) -> CaptureRecord:
    """Read one image and its labels back.

    Raises:
        CaptureError: invalid or unknown id, unreadable image, malformed label file.
    """
    root = Path(root)
    path = image_path(root, image_id)
    entry = dict(read_review(root)["images"].get(image_id) or {})
    img = None
    if with_image:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise CaptureError(f"{path}: not a readable image")
        width, height = int(img.shape[1]), int(img.shape[0])
    elif entry.get("width") and entry.get("height"):
        width, height = int(entry["width"]), int(entry["height"])
    else:
        width, height = _image_size(path)
    lf = label_file(root, image_id)
    text = lf.read_text() if lf.exists() else ""
    rows = parse_yolo(text, width, height, str(lf))
    proposed = entry.get("proposed") or []
    # Proposal confidences apply while the label lines are still the ones first written.
    same = entry.get("labels") == [l for l in text.splitlines() if l.strip()] and len(proposed) == len(rows)
    dice = [LabelledDie(v, b, proposed[i].get("confidence") if same else None,  # type: ignore[arg-type]
                        bool(proposed[i].get("uncertain")) if same else False) for i, (v, b) in enumerate(rows)]
    return CaptureRecord(image_id, path, width, height, dice, bool(entry.get("reviewed", False)),
                         str(entry.get("source", "import")), entry, img)


def save_labels(root: str | os.PathLike[str], image_id: str, dice: Iterable[Any], reviewed: bool = True) -> CaptureRecord:
    """Replace the labels of one image (a person's review) and set its reviewed flag.

    Args:
        dice: per die ``(value 1–6, box xyxy pixels)`` or anything :func:`as_die` takes; value 0 is refused.
        reviewed: mark the image reviewed (default) or leave it for later.

    Returns:
        the image as now stored (without pixels).

    Raises:
        CaptureError: unknown id, a value outside 1–6, a box outside the image (nothing is written then).
    """
    root = Path(root)
    dice = list(dice)
    for i, d in enumerate(dice):
        v = _get(d, "value") if not isinstance(d, (tuple, list)) else d[0]
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= int(v) <= 6:
            raise CaptureError(f"die {i}: value must be an integer 1–6, got {v!r}")
    labelled = [as_die(d) for d in dice]
    rec = load(root, image_id, with_image=False)
    lines = yolo_lines([d for d in labelled if d is not None], rec.width, rec.height)
    with _locked(root):
        review = read_review(root)
        entry = review["images"].setdefault(image_id, {"file": rec.path.name, "source": "import", "time": _now(),
                                                        "width": rec.width, "height": rec.height})
        atomic_write(label_file(root, image_id), ("\n".join(lines) + ("\n" if lines else "")).encode())
        entry["edited"] = bool(entry.get("edited")) or entry.get("labels") != lines
        entry["reviewed"] = bool(reviewed)
        entry["reviewed_at"] = _now() if reviewed else None
        entry.setdefault("width", rec.width)
        entry.setdefault("height", rec.height)
        if reviewed:
            entry.pop("note", None)
        _write_review(root, review)
    return load(root, image_id, with_image=False)


def set_reviewed(root: str | os.PathLike[str], image_id: str, reviewed: bool = True) -> CaptureRecord:
    """Mark an image reviewed (its labels are right as they are) or not. Raises CaptureError if unknown."""
    root = Path(root)
    rec = load(root, image_id, with_image=False)
    with _locked(root):
        review = read_review(root)
        entry = review["images"].setdefault(image_id, {"file": rec.path.name, "source": "import", "time": _now(),
                                                        "width": rec.width, "height": rec.height, "edited": False})
        entry["reviewed"] = bool(reviewed)
        entry["reviewed_at"] = _now() if reviewed else None
        _write_review(root, review)
    return load(root, image_id, with_image=False)


def save_correction(root: str | os.PathLike[str], image: np.ndarray | bytes, dice: Iterable[Any],
                    model: str | None = None, reviewed: bool | None = None, key: str | None = None) -> str:
    """Save a throw a player corrected during a game (dashboard "fix" / "confirm") as training data.

    Args:
        root: the capture folder.
        image: the settled frame (BGR array, or the stored JPEG bytes).
        dice: the dice with the player's faces: ``value`` 1–6 and the camera's ``box`` (pixels); a die the
            player added by hand has no box (``None`` / empty), and a die still unread (value 0, no guess)
            has no face: both are left out of the labels and the image is left for the review page.
        model: model version that read the throw.
        reviewed: default ``None`` = reviewed when every die has a box and a face 1–6 (the player checked
            the values while confirming); a die left out always leaves the image unreviewed.
        key: a stable name of the throw (e.g. ``"game3-throw17"``): saving the same throw again (a second
            correction) replaces its earlier image instead of adding another.

    Returns:
        the new image id (source ``"correction"``).

    Raises:
        CaptureError: a value outside 1–6 or a box outside the image.
    """
    kept: list[LabelledDie] = []
    missing = unread = 0
    for d in dice:
        value, guess = (d[0], d[3] if len(d) > 3 else 0) if isinstance(d, (tuple, list)) else (_get(d, "value"), _get(d, "guess", 0))
        if value in (0, None) and not (isinstance(guess, (int, np.integer)) and 1 <= int(guess) <= 6):
            unread += 1  # still unread when saved: the review page asks for its box and face
            continue
        die = as_die(d, allow_missing_box=True)
        if die is None:
            missing += 1
        else:
            kept.append(die)
    notes = []
    if missing:
        notes.append(f"{missing} dice have no box: draw them / у {missing} костей нет рамки: обведите их")
    if unread:
        notes.append(f"{unread} dice were not read: draw them and set their face / {unread} костей не распознаны: "
                     "обведите их и укажите грань")
    complete = missing == 0 and unread == 0
    auto = complete and not any(d.uncertain for d in kept)
    return CaptureWriter(root, model=model).add(
        image, kept, source="correction", reviewed=auto if reviewed is None else (reviewed and complete),
        note="; ".join(notes) or None, image_id=key)


def list_images(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every image of the folder: ``{"id", "reviewed", "source", "dice", "time", "width", "height"}``,
    in capture order. ``dice`` counts label lines. Raises CaptureError on an unreadable ``review.json``."""
    root = Path(root)
    review = read_review(root)["images"]
    out = []
    for image_id in list_ids(root):
        e = review.get(image_id) or {}
        lf = root / "labels" / f"{image_id}.txt"
        n = sum(1 for l in lf.read_text().splitlines() if l.strip()) if lf.exists() else 0
        out.append({"id": image_id, "reviewed": bool(e.get("reviewed", False)), "source": e.get("source", "import"),
                    "dice": n, "time": e.get("time"), "width": e.get("width"), "height": e.get("height"),
                    "uncertain": sum(1 for p in e.get("proposed") or [] if p.get("uncertain"))
                    if not e.get("edited") else 0})
    return out


def stats(root: str | os.PathLike[str], items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Counts of a capture folder: ``images``, ``reviewed``, ``unreviewed``, ``dice`` (label lines),
    ``reviewed_dice``, ``corrections`` (images from play), ``faces`` (dice per face ``"1"``–``"6"``).
    ``items``: a :func:`list_images` result just taken (saves listing the folder again)."""
    root = Path(root)
    items = list_images(root) if items is None else items
    faces = {str(k): 0 for k in range(1, 7)}
    for it in items:
        lf = root / "labels" / f"{it['id']}.txt"
        if lf.exists():
            for line in lf.read_text().splitlines():
                f = line.split()
                if f and f[0] in {"0", "1", "2", "3", "4", "5"}:
                    faces[str(int(f[0]) + 1)] += 1
    return {
        "images": len(items),
        "reviewed": sum(1 for it in items if it["reviewed"]),
        "unreviewed": sum(1 for it in items if not it["reviewed"]),
        "dice": sum(it["dice"] for it in items),
        "reviewed_dice": sum(it["dice"] for it in items if it["reviewed"]),
        "corrections": sum(1 for it in items if it["source"] == "correction"),
        "faces": faces,
    }


def link_reviewed(root: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Make ``out/images`` + ``out/labels`` of symbolic links to the *reviewed* images of a capture folder,
    for training on checked labels only (``kosti train --data OUT``). Existing links in ``out`` are
    replaced. Returns the number of images linked."""
    root, out = Path(root), Path(out)
    for sub in ("images", "labels"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for p in (out / sub).iterdir():
            if p.is_symlink():
                p.unlink()
    n = 0
    for it in list_images(root):
        if not it["reviewed"]:
            continue
        img = image_path(root, it["id"])
        for src, dst in ((img, out / "images" / img.name), (label_file(root, it["id"]), out / "labels" / f"{it['id']}.txt")):
            if src.exists():
                os.symlink(src.resolve(), dst)
        n += 1
    return n


# ---------------------------------------------------------------------------------------------------
# kosti capture
# ---------------------------------------------------------------------------------------------------
class CaptureInputError(CaptureError):
    """Bad ``kosti capture`` arguments or source (exit code 2)."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kosti capture`` to the top-level parser."""
    p = subparsers.add_parser(
        "capture",
        help="save each settled throw with the faces the model proposes, for review and retraining",
        description="Run the live pipeline (source → settle → dice reader) and save every settled throw as a "
        "labelled image in a capture folder (YOLO images/ + labels/ + review.json). Review the labels on the "
        "dashboard's /review page, then fine-tune with `kosti train --data DIR`. Stop with Ctrl-C.",
    )
    p.add_argument("--source", required=True,
                   help="picamera, a device index (0), an rtsp:// or http:// URL, a video file, a folder of photos, virtual")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="capture folder, created or appended to (default: storage.frames_dir of the kosti config, "
                   "~/.local/share/kosti/frames)")
    p.add_argument("--still-time", type=float, default=0.4, metavar="SECONDS",
                   help="seconds the table must stay still before a throw counts as settled (default 0.4)")
    p.add_argument("--max", type=int, default=None, metavar="N", help="stop after N saved throws")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="detector (default: the active model version, see `kosti models list`)")
    p.add_argument("--cls-model", type=Path, default=None, metavar="PATH", help="face classifier (default: the active one)")
    p.add_argument("--dice", type=int, default=None, metavar="N",
                   help="dice expected per throw (throws with another count are saved but flagged)")
    p.add_argument("--ok-only", action="store_true", help="save only throws the pipeline read with confidence")
    p.add_argument("--realtime", action="store_true",
                   help="replay video files and photo folders at their own speed (default: as fast as possible)")
    p.add_argument("--json", action="store_true", help="print one JSON summary at the end instead of progress lines")
    p.set_defaults(func=run_capture)


def _open_reader(args: argparse.Namespace) -> tuple[Any, str]:
    """The dice reader and the model version string recorded with each image."""
    from kosti.vision.reader import DiceReader

    from kosti.registry import reader_files

    det, cls, version = reader_files(args.model, args.cls_model)
    reader = DiceReader(det_path=det, cls_path=cls)
    desc = reader.describe()
    return reader, (f"{version} ({desc})" if version != "custom" else desc)


def guess_faces(reader: Any, image: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Best-guess face (1–6) of each box even where the reader is unsure: the classifier's most probable
    face class (two-stage reader) or the six-class detector's class of the best-overlapping box.

    Args:
        reader: a :class:`kosti.vision.reader.DiceReader`. image: ``(H, W, 3)`` uint8 BGR.
        boxes: ``(K, 4)`` xyxy pixels.

    Returns:
        ``(K,)`` int64 faces, 0 where no guess can be made.
    """
    from kosti.vision.reader import face_values

    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    out = np.zeros(len(boxes), np.int64)
    if not len(boxes):
        return out
    try:
        if getattr(reader, "classifier", None) is not None:
            probs = np.asarray(reader.face_probs(reader.crops(image, boxes)), np.float64)
            values = face_values(reader.classifier.names)
            probs = np.where((values > 0)[None, :], probs, -1.0)
            best = probs.argmax(1)
            return np.where(probs[np.arange(len(boxes)), best] >= 0, values[best], 0).astype(np.int64)
        from kosti.vision.detections import box_iou

        xyxy, _, classes = reader.detect(image, conf=0.05)
        if len(xyxy):
            values = face_values(reader.detector.names)[np.asarray(classes, np.int64)]
            iou = box_iou(boxes, np.asarray(xyxy, np.float32))
            j = iou.argmax(1)
            return np.where(iou[np.arange(len(boxes)), j] >= 0.5, values[j], 0).astype(np.int64)
    except Exception:  # noqa: BLE001 - a guess is optional; the image stays unreviewed anyway
        pass
    return out


def throw_dice(throw: Any, reader: Any = None) -> list[tuple[int, tuple[float, ...], float, int]]:
    """Dice of a pipeline :class:`~kosti.vision.pipeline.Throw` (roll area and set-aside dice: every die
    on the frame is labelled) as ``(value 0–6, box, confidence, guess)`` for :meth:`CaptureWriter.add`.
    Uncertain dice get the vote's guess, else :func:`guess_faces` from ``reader``."""
    dice = list(throw.dice) + list(getattr(throw, "set_aside", []) or [])
    need = [i for i, d in enumerate(dice) if (d.uncertain or not 1 <= d.value <= 6) and not 1 <= getattr(d, "guess", 0) <= 6]
    extra = np.zeros(len(dice), np.int64)
    if need and reader is not None and throw.image is not None:
        extra[need] = guess_faces(reader, throw.image, np.array([dice[i].box for i in need], np.float32))
    out = []
    for i, d in enumerate(dice):
        value = 0 if d.uncertain else int(d.value)
        guess = int(getattr(d, "guess", 0) or 0) if 1 <= int(getattr(d, "guess", 0) or 0) <= 6 else int(extra[i])
        out.append((value, tuple(float(v) for v in d.box), float(d.confidence), guess))
    return out


def _faces_text(dice: list[tuple[int, tuple[float, ...], float, int]]) -> str:
    return " ".join(str(v) if v else (f"{g}?" if g else "?") for v, _, _, g in dice) or "-"


def source_photo(source: Any, frame_index: int) -> Path | None:
    """The photo file a folder source (:class:`kosti.sim.replay.FolderSource`) showed at ``frame_index``;
    ``None`` for cameras, videos and the virtual table, or during a transition."""
    photo_at = getattr(source, "photo_at", None)
    if photo_at is None or not getattr(source, "files", None):
        return None
    i = photo_at(frame_index)
    return None if i is None else Path(source.files[i])


def _free_id(root: Path, photo: Path | None) -> str | None:
    """An unused image id named after ``photo``'s file name (``IMG_0042.jpg`` → ``IMG_0042``; ``-2``, ``-3``…
    when taken; characters outside ``A–Z a–z 0–9 . _ -`` become ``_``), or ``None`` (a time-stamped id)."""
    if photo is None:
        return None
    base = re.sub(r"[^A-Za-z0-9._-]", "_", photo.stem).lstrip("._-")[:120] or "photo"
    taken = set(list_ids(root))
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def run_capture(args: argparse.Namespace) -> int:
    """Handler of ``kosti capture``: returns 0 when stopped by ``--max``, the end of a file source or Ctrl-C.

    Raises:
        CaptureInputError: bad arguments or source (exit code 2); ModelLoadError: no usable model (exit 2).
    """
    from kosti.vision.pipeline import LivePipeline
    from kosti.vision.settle import SettleDetector
    from kosti.vision.sources import SourceError, open_source

    if args.max is not None and args.max < 1:
        raise CaptureInputError("--max must be >= 1")
    if not 0 < args.still_time <= 10:
        raise CaptureInputError("--still-time must be in (0, 10] seconds")
    if args.dice is not None and args.dice < 1:
        raise CaptureInputError("--dice must be >= 1")
    out = (args.out or default_capture_dir()).expanduser()
    try:
        source = open_source(args.source, realtime=args.realtime)
    except SourceError as exc:
        raise CaptureInputError(str(exc)) from None
    reader, model = _open_reader(args)
    writer = CaptureWriter(out, model=model)
    throws: queue.Queue[Any] = queue.Queue()
    pipe = LivePipeline(source, reader, settle=SettleDetector(still_s=args.still_time), expected_dice=args.dice)
    pipe.subscribe(throws.put)
    saved: list[str] = []
    skipped = 0
    say = (lambda *a, **k: None) if args.json else print
    say(f"capturing from {args.source} into {out} (model {model}); Ctrl-C stops", flush=True)
    t0 = time.monotonic()
    pipe.start()
    interrupted = False
    try:
        while args.max is None or len(saved) < args.max:
            try:
                throw = throws.get(timeout=0.25)
            except queue.Empty:
                if pipe.wait(0) and throws.empty():
                    break  # a finite source (file, folder) has ended
                continue
            if args.ok_only and not throw.ok:
                skipped += 1
                continue
            dice = throw_dice(throw, reader)
            photo = source_photo(source, int(throw.frame_index))
            try:
                image_id = writer.add(throw.image, dice, source="capture", image_id=_free_id(out, photo), extra={
                    "frame": int(throw.frame_index), "time_s": round(float(throw.time_s), 3), "status": throw.status,
                    "reasons": list(getattr(throw, "reason_codes", []) or []), "source": str(args.source),
                    **({"source_file": photo.name} if photo is not None else {})})
            except CaptureError as exc:
                skipped += 1
                print(f"kosti capture: throw at frame {throw.frame_index} not saved: {exc}", file=sys.stderr)
                continue
            saved.append(image_id)
            codes = list(dict.fromkeys(getattr(throw, "reason_codes", []) or []))
            flag = f" ({', '.join(codes)})" if codes else ""
            say(f"[{len(saved)}] {image_id}  faces {_faces_text(dice)}  {throw.status}{flag}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        pipe.stop()
    st = stats(out)
    summary = {"out": str(out), "saved": len(saved), "ids": saved, "skipped": skipped,
               "frames": source.frames_read, "seconds": round(time.monotonic() - t0, 1),
               "interrupted": interrupted, "model": model, "stats": st}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(f"saved {len(saved)} throws to {out}: {st['images']} images, {st['reviewed']} reviewed, "
              f"{st['dice']} dice. Review them at /review on the dashboard, then `kosti train --data {out}`.")
    return 0


__all__ = [
    "CaptureError",
    "CaptureRecord",
    "CaptureWriter",
    "LabelledDie",
    "as_die",
    "atomic_write",
    "check_box",
    "default_capture_dir",
    "guess_faces",
    "image_path",
    "label_file",
    "link_reviewed",
    "list_ids",
    "list_images",
    "load",
    "parse_yolo",
    "source_photo",
    "read_review",
    "register",
    "run_capture",
    "save_correction",
    "save_labels",
    "set_reviewed",
    "stats",
    "throw_dice",
    "yolo_lines",
]
