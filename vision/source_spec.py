"""The one grammar of a source spec string: what ``--source`` / ``[source] spec`` names.

Forms (``docs/setup.md``, ``shared/docs/cli.md``): ``picamera`` (also ``picamera2``, ``pi``) · a device
index such as ``0`` or a ``/dev/…`` path (``/dev/video0``, ``/dev/v4l/by-id/…``) · a stream URL
(``rtsp``, ``rtsps``, ``rtmp``, ``http``, ``https``, ``udp``, ``tcp``) · ``virtual`` or ``virtual:N``
(the built-in virtual table with N dice) · a folder of frames (or of photos, ``open_source(photos=True)``) or one photo · a video file.

:func:`parse_source_spec` is used by :func:`kosti.vision.sources.open_source` (which builds the source)
and by the configuration (:class:`kosti.config.SourceSettings`, which checks the spec at start); no other
code parses the grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kosti.vision.frame_source import IMAGE_EXTENSIONS, SourceError

#: URL schemes opened as network streams through OpenCV/FFmpeg.
URL_SCHEMES = ("rtsp", "rtsps", "rtmp", "http", "https", "udp", "tcp")
#: Spellings of the Raspberry Pi camera.
PICAMERA_NAMES = frozenset({"picamera", "picamera2", "pi"})

SourceKind = Literal["picamera", "device", "url", "virtual", "folder", "photo", "video"]
#: Kinds that are live cameras (reconnected when they fail; asked for a size and a frame rate).
LIVE_KINDS: frozenset[str] = frozenset({"picamera", "device", "url"})


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source spec.

    Attributes:
        kind: ``picamera``, ``device``, ``url``, ``virtual``, ``folder`` (a folder of images: the frames of a video, or photos), ``photo``
            (one photo file) or ``video`` (any other existing file, opened as a video).
        target: what the source opens: the device index (``int``) or ``/dev`` path, the URL, the file or
            folder :class:`~pathlib.Path`; ``None`` for ``picamera`` and ``virtual``.
        n_dice: the ``N`` of ``virtual:N`` (``None`` = the virtual table's default).
    """

    kind: SourceKind
    target: int | str | Path | None = None
    n_dice: int | None = None

    @property
    def live(self) -> bool:
        """A live camera or stream (not a file, folder or the virtual table)."""
        return self.kind in LIVE_KINDS


def parse_source_spec(spec: str) -> SourceSpec:
    """Parse a source spec string (surrounding blanks ignored; keywords and URL schemes case-insensitive).

    Files and folders must exist (checked here); a ``/dev`` path and a URL are not probed (a camera may
    be plugged in later; the configuration checks that a ``/dev`` path exists at start).

    Args:
        spec: e.g. ``"picamera"``, ``"0"``, ``"/dev/video2"``, ``"rtsp://cam.local/live"``, ``"virtual:3"``,
            ``"~/throws"``, ``"game.mp4"``.

    Returns:
        The :class:`SourceSpec`.

    Raises:
        SourceError: the string names nothing usable (a bad ``virtual:N``, a missing path, an unknown
            form); the message names the spec and the accepted forms.
    """
    s = spec.strip()
    low = s.lower()
    if low in PICAMERA_NAMES:
        return SourceSpec("picamera")
    if re.fullmatch(r"\d+", s):
        return SourceSpec("device", int(s))
    if low == "virtual" or low.startswith("virtual:"):
        n = low.partition(":")[2]
        if ":" in low and not re.fullmatch(r"\d+", n):
            raise SourceError(f"bad virtual source {spec!r}: use virtual or virtual:N")
        return SourceSpec("virtual", None, int(n) if n else None)
    if re.match(rf"^({'|'.join(URL_SCHEMES)})://\S+", low):
        return SourceSpec("url", s)
    if s.startswith("/dev/"):
        return SourceSpec("device", s)
    path = Path(s).expanduser()
    if path.is_dir():
        return SourceSpec("folder", path)
    if path.is_file():
        return SourceSpec("photo" if path.suffix.lower() in IMAGE_EXTENSIONS else "video", path)
    raise SourceError(
        f"unknown source {spec!r}: no such file or folder, and not picamera, a device index such as 0, "
        "an rtsp:// or http:// URL, or virtual"
    )
