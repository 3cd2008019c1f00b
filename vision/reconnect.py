"""Supervision of a live source: reconnect with exponential backoff, stall detection, a status for the dashboard.

:class:`ReconnectingSource` wraps a factory of live sources; when the camera or stream fails or stalls it
closes it and retries, exposing a :class:`SourceStatus` (``ok``, ``connecting``, ``stalled``,
``reconnecting``, ``failed``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kosti.common.redact import redact_text
from kosti.vision.frame_source import EndOfStream, FrameSource, SourceError, SourceTimeout

log = logging.getLogger("kosti.vision.sources")


@dataclass(frozen=True)
class SourceStatus:
    """Health of a (reconnecting) source for the dashboard.

    Attributes:
        state: ``"ok"`` (frames arrive), ``"connecting"`` (opening the camera or stream), ``"stalled"``
            (connected, but no frame for a while), ``"reconnecting"`` (waiting to retry), ``"failed"`` (gave up).
        message: human-readable detail (the last error), English.
        attempts: failed attempts since the last good frame.
        retry_in_s: seconds until the next attempt (0 when not waiting).
    """

    state: str
    message: str = ""
    attempts: int = 0
    retry_in_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "message": self.message, "attempts": self.attempts, "retry_in_s": round(self.retry_in_s, 2)}


class _Connect:
    """One attempt to create and open an inner source, in its own thread (opening a network stream can block
    for the backend's whole open timeout; the reader keeps answering meanwhile). The thread owns the source it
    opens until :meth:`ReconnectingSource._read` takes it; an attempt abandoned by ``close()`` closes its own."""

    def __init__(self, factory: Callable[[], FrameSource], on_start: Callable[[str], None]) -> None:
        self.done = threading.Event()
        self.abandoned = threading.Event()
        self.source: FrameSource | None = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self._factory, self._on_start = factory, on_start
        threading.Thread(target=self._run, name="source-connect", daemon=True).start()

    def _run(self) -> None:
        src = None
        try:
            src = self._factory()
            describe = getattr(src, "_describe", None)
            self._on_start(f"connecting to {describe() if callable(describe) else src.kind}")
            src.open()
            self.source = src
        except BaseException as exc:  # noqa: BLE001 - handed to the reader
            self.error = exc
        finally:
            self.done.set()
        if self.abandoned.is_set() and src is not None:
            src.close()


class ReconnectingSource(FrameSource):
    """Wraps a live source and reopens it with exponential backoff when it fails or stalls.

    ``read()`` keeps trying until a frame arrives, :meth:`close`/:meth:`cancel` is called, or
    ``max_attempts`` failures in a row have happened (then the status is ``failed`` and
    :class:`SourceError` is raised). ``read(timeout)`` instead raises :class:`SourceError`
    ("reconnecting …", "connecting …", "no frame for …") when the timeout runs out, so a caller can show the
    status; the next read continues where this one stopped. Delays are
    ``initial_delay * factor**k`` capped at ``max_delay`` seconds. :class:`EndOfStream` is passed through
    (a finished file is not a dropped camera).

    A connected source that sends nothing is **stalled**: shorter than ``stall_s`` seconds the status says
    ``stalled`` and the same connection is kept (a 2 s hiccup recovers by itself); after ``stall_s`` seconds
    it is closed — by the inner source's own capture thread, after any read in flight returns (see
    :class:`LatestFrameGrabber`) — and a new connection is made. Opening runs in a helper thread (:class:`_Connect`),
    so a camera that accepts a connection and never answers shows ``connecting`` with its address, not a
    silent wait.

    Args:
        factory: ``callable() -> FrameSource`` creating a fresh inner source for each attempt.
        initial_delay, factor, max_delay: backoff schedule in seconds.
        max_attempts: give up after this many consecutive failures (``None`` = never).
        stall_s: seconds without a frame after which a connected source is reconnected.
        sleep, clock: injectable ``time.sleep`` / ``time.monotonic`` (tests).
    """

    kind = "reconnecting"

    def __init__(
        self,
        factory: Callable[[], FrameSource],
        initial_delay: float = 0.5,
        factor: float = 2.0,
        max_delay: float = 10.0,
        max_attempts: int | None = None,
        stall_s: float = 5.0,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        self._factory = factory
        self.initial_delay, self.factor, self.max_delay, self.max_attempts = initial_delay, factor, max_delay, max_attempts
        self.stall_s = stall_s
        self._sleep = sleep
        self._clock = clock or time.monotonic
        self._inner: FrameSource | None = None
        self._connecting: _Connect | None = None
        self._stopping = threading.Event()
        self._status_lock = threading.Lock()
        self._status = SourceStatus("connecting", "not started")
        self._attempts = 0
        self._next_try = 0.0
        self.delays: list[float] = []  # every backoff delay waited, in order (diagnostics and tests)
        self._logged = ""  # the failure last logged as a warning: the same cause again is only logged at debug

    @property
    def status(self) -> SourceStatus:
        """Current :class:`SourceStatus` (``retry_in_s`` counts down while waiting)."""
        with self._status_lock:
            s = self._status
        if s.state == "reconnecting" and self._next_try:
            return SourceStatus(s.state, s.message, s.attempts, max(0.0, self._next_try - self._clock()))
        return s

    def _set_status(self, state: str, message: str = "") -> None:
        with self._status_lock:
            self._status = SourceStatus(state, redact_text(message), self._attempts)

    def backoff(self, attempt: int) -> float:
        """Delay in seconds before retry number ``attempt`` (1-based)."""
        return min(self.max_delay, self.initial_delay * self.factor ** (attempt - 1))

    def _open(self) -> None:
        self._stopping.clear()
        self._attempts = 0
        # The inner source is opened lazily by read(), so a missing camera does not fail open().

    def cancel(self) -> None:
        self._stopping.set()
        inner = self._inner
        if inner is not None:
            inner.cancel()

    def _close(self) -> None:
        self._stopping.set()
        if self._connecting is not None:
            self._connecting.abandoned.set()
            if self._connecting.done.is_set() and self._connecting.source is not None:
                self._connecting.source.close()
            self._connecting = None
        if self._inner is not None:
            self._inner.close()
        self._inner = None

    def _wait(self, delay: float) -> None:
        if self._sleep is not None:
            self._sleep(delay)
        else:
            self._stopping.wait(delay)

    def _connect(self, deadline: float | None) -> FrameSource:
        """The opened inner source; raises the open's error, or :class:`SourceTimeout` at ``deadline`` while
        the connection is still being made (the attempt goes on in its thread)."""
        c = self._connecting
        if c is None:
            prev = self._status.message if self._status.state in ("reconnecting", "stalled") else ""
            c = self._connecting = _Connect(self._factory, lambda msg: self._set_status(
                "connecting", f"{msg} (attempt {self._attempts + 1}{'; last error: ' + prev if prev else ''})"))
        left = None if deadline is None else max(0.0, deadline - self._clock())
        if not c.done.wait(left):
            raise SourceTimeout(f"{self._status.message or 'connecting'} ({time.monotonic() - c.started:.0f} s)")
        self._connecting = None
        if c.error is not None:
            raise c.error
        assert c.source is not None
        return c.source

    def _read(self, timeout: float | None) -> tuple[np.ndarray, float]:
        # With a timeout, a read that falls into a backoff wait, a connection being made or a short stall gives
        # up at the deadline with a SourceError so the caller can show the status; the next read resumes the
        # same schedule. Without one, read() waits until a frame arrives (or close/cancel).
        deadline = None if timeout is None else self._clock() + timeout
        while not self._stopping.is_set():
            wait = self._next_try - self._clock() if self._next_try else 0.0
            if wait > 0:
                if deadline is not None and self._clock() + wait > deadline:
                    self._wait(max(0.0, deadline - self._clock()))
                    wait_s = max(0.0, self._next_try - self._clock())
                    raise SourceError(f"reconnecting ({self._status.message}); next attempt in {wait_s:.1f} s")
                self._wait(wait)
                if self._stopping.is_set():
                    break
            self._next_try = 0.0
            try:
                if self._inner is None:
                    self._inner = self._connect(deadline)
                left = None if deadline is None else max(0.05, deadline - self._clock())
                frame = self._inner.read(left if timeout is not None else None)
            except EndOfStream:
                raise
            except SourceTimeout as exc:
                if self._inner is None:  # still connecting: not a failure yet
                    raise SourceError(str(exc)) from None
                quiet = float(getattr(self._inner, "seconds_since_frame", 0.0) or 0.0)
                if quiet < self.stall_s:
                    self._set_status("stalled", f"no frame for {quiet:.1f} s")
                    raise SourceError(f"stalled: no frame for {quiet:.1f} s") from None
                if not self._failed(SourceError(f"stalled: no frame for {quiet:.1f} s")):
                    continue
                raise AssertionError("unreachable") from exc  # pragma: no cover
            except Exception as exc:  # noqa: BLE001 - any failure of the inner source is retried
                self._failed(exc)
                continue
            if self._attempts or self._status.state != "ok":
                if self._logged:
                    log.warning("source is back after %d failed attempts", self._attempts)
                    self._logged = ""
                self._attempts = 0
                self._set_status("ok", "")
            return frame.image, frame.t
        raise SourceError("source closed")

    def _failed(self, exc: BaseException) -> bool:
        """Close the inner source (its capture thread releases the device after any read in flight), count
        the attempt, schedule the retry; raises :class:`SourceError` when ``max_attempts`` is reached."""
        if self._inner is not None:
            self._inner.close()
            self._inner = None
        self._attempts += 1
        msg = redact_text(str(exc) if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}")
        if self.max_attempts is not None and self._attempts >= self.max_attempts:
            self._set_status("failed", msg)
            raise SourceError(f"gave up after {self._attempts} attempts: {msg}") from exc
        delay = self.backoff(self._attempts)
        self._next_try = self._clock() + delay
        self._set_status("reconnecting", msg)
        # One warning when the source fails or its cause changes; the same cause again (a camera that stays
        # unplugged) only at debug level, so the log does not repeat a long message at every retry (issue 42).
        cause = msg if len(msg) <= 160 else msg[:157] + "..."
        if msg != self._logged:
            log.warning("source failed (%s); retrying with backoff, next in %.1f s (further failures of this kind "
                        "are logged at debug level; the dashboard shows each)", cause, delay)
            self._logged = msg
        else:
            log.debug("source failed (%s); retry %d in %.1f s", cause, self._attempts, delay)
        self.delays.append(delay)
        return False

    @property
    def inner(self) -> FrameSource | None:
        """The currently open inner source (None while reconnecting)."""
        return self._inner

    def info(self) -> dict[str, Any]:
        d: dict[str, Any] = dict(self._inner.info() if self._inner is not None else {"kind": "none"})
        d["fps"] = round(self.fps, 2)
        d["status"] = self.status.to_dict()
        if self.rotation:  # the wrapper turns the frames, not the camera inside it
            d["rotate"] = self.rotation
        return d
