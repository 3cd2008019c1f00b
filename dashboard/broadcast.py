"""Thread-safe fan-out of the table's JSON messages (snapshots, source health) to asyncio subscribers, one
queue per WebSocket, and to plain callables in the publishing thread (the MQTT publisher, :mod:`kosti.dashboard.mqtt`)
(:class:`Broadcaster`)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Broadcaster:
    """Thread-safe fan-out of JSON messages to asyncio subscribers (one queue per WebSocket).

    Attributes:
        listeners: called with every message in the publishing thread, after the queues (each must return at
            once; a listener's exception is logged and the others still hear the message).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self.listeners: list[Callable[[Mapping[str, object]], None]] = []

    def subscribe(self) -> asyncio.Queue:
        """A new queue receiving every later message (call from the event loop's thread)."""
        q: asyncio.Queue = asyncio.Queue(maxsize=64)
        with self._lock:
            self._subs.add((asyncio.get_running_loop(), q))
        return q

    def unsubscribe(self, q: asyncio.Queue) -> None:
        """Stop sending to ``q`` (idempotent)."""
        with self._lock:
            self._subs = {s for s in self._subs if s[1] is not q}

    @property
    def count(self) -> int:
        """Number of subscribers."""
        with self._lock:
            return len(self._subs)

    def publish(self, message: Mapping[str, object]) -> None:
        """Send ``message`` to every subscriber (from any thread). A full queue drops its oldest message."""
        with self._lock:
            subs = list(self._subs)
        for loop, q in subs:
            try:
                loop.call_soon_threadsafe(_put_latest, q, message)
            except RuntimeError:  # loop closed
                self.unsubscribe(q)
        for listener in list(self.listeners):
            try:
                listener(message)
            except Exception:  # noqa: BLE001 - a listener's fault must not stop the screens' updates
                log.exception("broadcast listener %r failed", listener)


def _put_latest(q: asyncio.Queue, message: Mapping[str, object]) -> None:
    if q.full():
        try:
            q.get_nowait()
        except asyncio.QueueEmpty:
            pass
    q.put_nowait(message)
