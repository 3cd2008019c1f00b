"""Capture folders on disk: layout, atomic writes, the ``review.json`` index and image ids.

The storage layer under :mod:`kosti.datasets.capture` (which documents the layout): every file is written
to a hidden temporary file in the same folder, flushed, fsync'ed and moved into place with
:func:`os.replace` (atomic on POSIX); the read-modify-write of ``review.json`` holds an exclusive
:func:`fcntl.flock` on ``DIR/.lock``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import tempfile
from collections.abc import Iterator
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
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class CaptureError(ValueError):
    """Bad capture input or folder: unknown image id, malformed labels, unreadable ``review.json``,
    a value outside 1–6, a box outside the image. CLI exit code 2."""

    exit_code = 2


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
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


__all__ = [
    "DATA_YAML",
    "FORMAT_VERSION",
    "IMAGE_SUFFIXES",
    "JPEG_QUALITY",
    "LOCK_NAME",
    "REVIEW_JSON",
    "SOURCES",
    "CaptureError",
    "atomic_write",
    "check_id",
    "image_path",
    "label_file",
    "read_review",
]
