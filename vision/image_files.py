"""Reading image files safely: bounded bytes and pixels, regular files only, one clear error, nothing on stderr.

Every command that reads photos (``kosti read``, ``kosti watch`` and the dashboard over a folder, ``kosti eval``)
goes through :func:`read_image_file`:

* only a regular file is read (a FIFO made ``kosti read`` hang; ``/dev/zero`` never ends);
* at most :data:`MAX_IMAGE_BYTES` bytes are read;
* the width and height are read from the file's header first (Pillow, no decoding) and an image over
  :data:`MAX_IMAGE_PIXELS` is refused before it is decoded (a 30000×30000 PNG peaked at 5.3 GB, a
  12000×12000 photo at 3 GB);
* libjpeg's own warnings ("Corrupt JPEG data: …"), which the C library prints straight to the process's
  stderr, are kept off it, so a corrupt file gives exactly the one-line error.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

#: Largest image accepted, in pixels: 50 MP (8660×5773), above every phone and camera photo we read; a decoded
#: 50 MP BGR image takes 150 MB. Dice are read on the 640-px letterbox anyway.
MAX_IMAGE_PIXELS = 50_000_000
#: Largest image file read, in bytes (a 50 MP PNG of a noisy table is ~100 MB at worst; JPEGs are far smaller).
MAX_IMAGE_BYTES = 128 * 1024 * 1024

_stderr_lock = threading.Lock()


class ImageFileError(ValueError):
    """An image file that cannot or must not be read (exit code 2). The message starts with the file name."""

    exit_code = 2


def regular_file_size(path: str | os.PathLike[str], what: str = "file") -> int:
    """Size in bytes of ``path`` when it is a regular file; :class:`ImageFileError` for a missing path, a folder,
    a FIFO, a device or a socket (reading those blocks for ever or never ends)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ImageFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ImageFileError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ImageFileError(f"{path}: is a directory, not {what}")
    if not stat.S_ISREG(st.st_mode):
        raise ImageFileError(f"{path}: not a regular file (a pipe or a device); give {what} file")
    return st.st_size


def image_header_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from an image's header (Pillow reads only the header), or ``None`` when Pillow does
    not know the format (OpenCV may still decode it; its own limit then applies)."""
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the size is checked by the caller
            with Image.open(io.BytesIO(data)) as im:
                return int(im.size[0]), int(im.size[1])
    except Image.DecompressionBombError:
        return (1 << 31, 1)  # Pillow's own bomb guard: far over any limit here
    except Exception:  # noqa: BLE001 - unknown or broken header: the decoder decides
        return None


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 (C libraries such as libjpeg print warnings there) for the block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    with _stderr_lock, tempfile.TemporaryFile() as sink:
        saved = os.dup(fd)
        try:
            os.dup2(sink.fileno(), fd)
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)


def read_image_file(path: str | os.PathLike[str], max_pixels: int = MAX_IMAGE_PIXELS,
                    max_bytes: int = MAX_IMAGE_BYTES) -> np.ndarray:
    """Read an image file as ``(H, W, 3)`` uint8 BGR (``cv2.imdecode`` of the bytes: non-ASCII paths work).

    Raises:
        ImageFileError: missing, a folder, not a regular file, empty, over ``max_bytes`` bytes or
            ``max_pixels`` pixels, or not decodable (the message names the file and the limit).
    """
    size = regular_file_size(path, "an image")
    if size == 0:
        raise ImageFileError(f"{path}: empty file")
    if size > max_bytes:
        raise ImageFileError(f"{path}: {size / 2**20:.0f} MB is larger than the {max_bytes / 2**20:.0f} MB limit for a photo")
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ImageFileError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    wh = image_header_size(data)
    if wh is not None and wh[0] * wh[1] > max_pixels:
        w, h = wh
        what = f"{w}×{h}" if w < (1 << 31) else "too many"
        raise ImageFileError(f"{path}: {what} pixels is over the {max_pixels / 1e6:.0f} MP limit; scale the photo down")
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # our one-line error says it all
    try:
        with quiet_stderr():
            img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    finally:
        cv2.utils.logging.setLogLevel(level)
    if img is None or img.size == 0:
        raise ImageFileError(f"{path}: not a readable image (corrupt or unsupported format)")
    return img


#: File name endings read as photos (lower case): folder replay, ``kosti read``/``eval`` and the spec parser.
IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def is_image_name(path: str | os.PathLike[str]) -> bool:
    """True for a file name ending like a photo (:data:`IMAGE_SUFFIXES`)."""
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


def natural_key(path: str | os.PathLike[str]) -> list[Any]:
    """Sort key of a file name that orders ``img2`` before ``img10`` (frames ``f9.png``, ``f10.png`` in order)."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", Path(path).name)]
