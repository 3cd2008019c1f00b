"""Capture a table's own dice as labelled training data, and ``kosti capture``.

Players retrain the dice reader on their own dice (issue "Retrain on your own dice"): the live pipeline
saves every settled throw with the faces the current model proposes, players check and fix the labels
on the dashboard's review page (:mod:`kosti.dashboard.routes.review`), and ``kosti train --data DIR``
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

Modules: this one holds the folder's API (writer, readers, review state, statistics; dice are
:class:`~kosti.vision.detections.Detections`, normalised by :mod:`kosti.datasets.capture_dice`),
:mod:`kosti.datasets.capture_files` the files on disk,
:mod:`kosti.datasets.capture_cli` the ``kosti capture`` command; label lines are written and read by
:mod:`kosti.vision.yolo_labels`.

Atomicity: every file is written to a hidden temporary file in the same folder, flushed, fsync'ed and
moved into place with :func:`os.replace` (atomic on POSIX), labels before the image, so a reader (a
training run, the review page) never sees a half-written file nor an image without its labels. The
read-modify-write of ``review.json`` holds an exclusive :func:`fcntl.flock` on ``DIR/.lock``.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.datasets.capture_dice import _field, dice_json, labelled_dice, yolo_lines
from kosti.datasets.capture_files import (  # noqa: F401 - re-exported: the capture folder API in one place
    _ID_RE,
    DATA_YAML,
    FORMAT_VERSION,
    IMAGE_SUFFIXES,
    JPEG_QUALITY,
    LOCK_NAME,
    REVIEW_JSON,
    SOURCES,
    CaptureError,
    _encode,
    _ensure_layout,
    _image_size,
    _locked,
    _now,
    _write_review,
    atomic_write,
    check_id,
    image_path,
    label_file,
    read_review,
)
from kosti.vision.detections import Detections
from kosti.vision.yolo_labels import (
    BOX_TOLERANCE_PX,
    FACE_CLASSES,
    LabelError,
    class_counts,
    count_lines,
    label_text,
    parse_labels,
)


# ---------------------------------------------------------------------------------------------------
# Writer and readers
# ---------------------------------------------------------------------------------------------------
@dataclass
class CaptureRecord:
    """One captured image with its labels (from :func:`load`).

    Attributes:
        id: image id (file stem). path: the image file. width, height: image size in pixels.
        dice: labelled dice in label-file order (:class:`~kosti.vision.detections.Detections`, boxes in
            pixels, label faces in ``best_faces``): while the labels are unchanged since the model proposed
            them, ``value_confidence`` is its confidence and a die it could not read has value 0 with the
            label face in the ``guess`` column; otherwise confidences are NaN and every value is the label.
        reviewed: a person saved or confirmed the labels. source: ``capture`` / ``correction`` / ``import``
            (an image found in the folder with no ``review.json`` entry).
        meta: the full ``review.json`` entry.
        image: ``(H, W, 3)`` uint8 BGR pixels, or ``None`` when loaded with ``with_image=False``.
    """

    id: str
    path: Path
    width: int
    height: int
    dice: Detections
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
                "dice": dice_json(self.dice)}


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

    def add(self, image: np.ndarray | bytes, dice: Detections | Iterable[Any], source: str = "capture", reviewed: bool = False,
            model: str | None = None, note: str | None = None, image_id: str | None = None,
            extra: Mapping[str, Any] | None = None) -> str:
        """Save one image with its dice; returns the new image id.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame, or encoded image bytes (JPEG bytes are kept as they are).
            dice: a :class:`~kosti.vision.detections.Detections`, or per die ``(value 1–6, box xyxy
                pixels, confidence)`` or anything :func:`labelled_dice` takes; a value of 0 (uncertain)
                needs a best guess 1–6 and forces ``reviewed=False``.
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
        labelled, _ = labelled_dice(dice)
        lines = yolo_lines(labelled, width, height)  # validates before anything is written
        if not labelled.all_read:
            reviewed = False
        now = _dt.datetime.now(_dt.UTC)
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
            atomic_write(label_file(self.root, image_id), label_text(lines).encode())
            review["images"][image_id] = {
                "file": image_id + ".jpg",
                "reviewed": bool(reviewed),
                "source": source,
                "model": model if model is not None else self.model,
                "time": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "width": width,
                "height": height,
                "proposed": [{"value": d["value"], "confidence": d["confidence"], "uncertain": d["uncertain"]}
                             for d in dice_json(labelled)],
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
    try:
        xyxy, faces = parse_labels(text, width, height, FACE_CLASSES, str(lf))
    except LabelError as exc:
        raise CaptureError(str(exc)) from None
    proposed = entry.get("proposed") or []
    # Proposal confidences apply while the label lines are still the ones first written.
    same = entry.get("labels") == [line for line in text.splitlines() if line.strip()] and len(proposed) == len(faces)
    conf = [proposed[i].get("confidence") if same else None for i in range(len(faces))]
    unread = np.array([bool(proposed[i].get("uncertain")) if same else False for i in range(len(faces))], bool)
    dice = Detections(xyxy, np.full(len(faces), np.nan), np.where(unread, 0, faces),
                      np.array([np.nan if c is None else float(c) for c in conf], np.float64),
                      {"guess": np.where(unread, faces, 0)})
    return CaptureRecord(image_id, path, width, height, dice, bool(entry.get("reviewed", False)),
                         str(entry.get("source", "import")), entry, img)


def save_labels(root: str | os.PathLike[str], image_id: str, dice: Iterable[Any], reviewed: bool = True) -> CaptureRecord:
    """Replace the labels of one image (a person's review) and set its reviewed flag.

    Args:
        dice: per die ``(value 1–6, box xyxy pixels)`` or anything :func:`labelled_dice` takes; value 0 is refused.
        reviewed: mark the image reviewed (default) or leave it for later.

    Returns:
        the image as now stored (without pixels).

    Raises:
        CaptureError: unknown id, a value outside 1–6, a box outside the image (nothing is written then).
    """
    root = Path(root)
    dice = list(dice)
    for i, d in enumerate(dice):
        v = _field(d, "value")
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= int(v) <= 6:
            raise CaptureError(f"die {i}: value must be an integer 1–6, got {v!r}")
    labelled, _ = labelled_dice(dice)
    rec = load(root, image_id, with_image=False)
    lines = yolo_lines(labelled, rec.width, rec.height)
    with _locked(root):
        review = read_review(root)
        entry = review["images"].setdefault(image_id, {"file": rec.path.name, "source": "import", "time": _now(),
                                                        "width": rec.width, "height": rec.height})
        atomic_write(label_file(root, image_id), label_text(lines).encode())
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
    dice = list(dice)
    readable = []
    for d in dice:
        value, guess = _field(d, "value"), _field(d, "guess", 0)
        if value in (0, None) and not (isinstance(guess, (int, np.integer)) and 1 <= int(guess) <= 6):
            continue  # still unread when saved: the review page asks for its box and face
        readable.append(d)
    unread = len(dice) - len(readable)
    kept, missing = labelled_dice(readable, allow_missing_box=True)
    notes = []
    if missing:
        notes.append(f"{missing} dice have no box: draw them / у {missing} костей нет рамки: обведите их")
    if unread:
        notes.append(f"{unread} dice were not read: draw them and set their face / {unread} костей не распознаны: "
                     "обведите их и укажите грань")
    complete = missing == 0 and unread == 0
    auto = complete and kept.all_read
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
        n = count_lines(lf.read_text()) if lf.exists() else 0
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
    counts = np.zeros(6, np.int64)
    for it in items:
        lf = root / "labels" / f"{it['id']}.txt"
        if lf.exists():
            counts += class_counts(lf.read_text(), 6)
    faces = {str(k + 1): int(counts[k]) for k in range(6)}
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


__all__ = [
    "BOX_TOLERANCE_PX",
    "CaptureError",
    "CaptureRecord",
    "CaptureWriter",
    "atomic_write",
    "check_id",
    "dice_json",
    "image_path",
    "label_file",
    "labelled_dice",
    "link_reviewed",
    "list_ids",
    "list_images",
    "load",
    "read_review",
    "save_correction",
    "save_labels",
    "set_reviewed",
    "stats",
    "yolo_lines",
]
