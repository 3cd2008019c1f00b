"""The live view's frames for every viewer: :class:`FrameHub` holds the newest encoded frame (one JPEG encode
per frame, shared by every MJPEG viewer). The overlay and the encoder are the vision layer's
(:func:`kosti.vision.overlay.annotate`, :func:`kosti.vision.overlay.encode_jpeg`, re-exported here)."""

from __future__ import annotations

import asyncio
import threading
import time

from kosti.vision.overlay import encode_jpeg, placeholder_frame

__all__ = ["FrameHub", "encode_jpeg", "placeholder_frame"]


class FrameHub:
    """The newest encoded live frame, shared by every MJPEG viewer (one encode per frame, any viewers).

    Encoding costs CPU (a few ms per 960-px frame), so the capture thread encodes only while someone
    watches: every viewer calls :meth:`touch` per frame, and :meth:`wanted` stays true for ``linger_s``
    seconds after the last touch.
    """

    def __init__(self, linger_s: float = 2.0) -> None:
        self._lock = threading.Lock()
        self._jpeg: bytes | None = None
        self._seq = 0
        self._t = 0.0
        self._wanted_until = 0.0
        self.linger_s = linger_s

    def publish(self, jpeg: bytes) -> None:
        """Make ``jpeg`` (one encoded frame) the newest frame (from the capture thread)."""
        with self._lock:
            self._jpeg = jpeg
            self._seq += 1
            self._t = time.monotonic()

    def touch(self) -> None:
        """A viewer wants frames (keeps encoding on for ``linger_s`` seconds)."""
        self._wanted_until = time.monotonic() + self.linger_s

    def wanted(self) -> bool:
        """True while a viewer has asked for frames recently."""
        return time.monotonic() < self._wanted_until

    def latest(self) -> tuple[int, bytes | None]:
        """``(sequence number, JPEG bytes or None)``."""
        with self._lock:
            return self._seq, self._jpeg

    def age(self) -> float:
        """Seconds since the latest frame was published (infinite before the first)."""
        with self._lock:
            return time.monotonic() - self._t if self._jpeg is not None else float("inf")

    async def next_frame(self, after: int, poll_s: float = 0.01, timeout_s: float = 2.0) -> tuple[int, bytes | None]:
        """Wait (asynchronously) for a frame newer than ``after``; on timeout return the latest anyway."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.touch()
            seq, jpeg = self.latest()
            if seq > after or time.monotonic() >= deadline:
                return seq, jpeg
            await asyncio.sleep(poll_s)
