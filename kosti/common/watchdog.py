"""systemd's service watchdog for the dashboard: ``READY=1`` once ``/healthz`` answers, then ``WATCHDOG=1`` every
third of ``WatchdogSec`` while it keeps answering (``deploy/kosti.service``: ``Type=notify``, ``WatchdogSec=30``).

The protocol is one datagram per message on the ``AF_UNIX`` socket named by ``$NOTIFY_SOCKET`` (sd_notify(3); a
name starting with ``@`` is in the abstract namespace); ``$WATCHDOG_USEC`` is the watchdog's period and
``$WATCHDOG_PID`` the process it watches (sd_watchdog_enabled(3)). A few lines of the standard library, so the
Pi's runtime needs no ``libsystemd`` binding.

What a restart can mend decides when the pings stop. The watchdog asks the dashboard's own ``/healthz`` over
loopback, the way a phone reaches it: as long as the server answers — 200, or 503 with a camera that stalled, a
full disk or a read-only database — the process is alive and is pinged, and ``STATUS=`` carries the health
(``systemctl status kosti`` shows "camera: stalled: no frame for 12 s"). Those faults are not mended by a
restart (the camera is reopened by the source itself, :class:`kosti.vision.reconnect.ReconnectingSource`; a
disk stays full), and a restart loop would only drop every phone's connection. When the server stops answering
within ``timeout_s`` (a hung event loop, a deadlock), the pings stop and systemd kills and restarts the service
after ``WatchdogSec``; the game resumes from SQLite where it was.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import urllib.error
import urllib.request

log = logging.getLogger(__name__)


def notify(message: str) -> bool:
    """Send ``message`` (``"READY=1"``, ``"WATCHDOG=1\\nSTATUS=…"``) to systemd; False when not run by systemd
    (no ``$NOTIFY_SOCKET``) or the socket is gone."""
    path = os.environ.get("NOTIFY_SOCKET", "")
    if not path:
        return False
    address = "\0" + path[1:] if path.startswith("@") else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(address)
            s.sendall(message.encode("utf-8"))
        return True
    except OSError as exc:
        log.debug("sd_notify failed: %s", exc)
        return False


def watchdog_period_s() -> float | None:
    """The watchdog period systemd asked for (``$WATCHDOG_USEC``), when it is meant for this process
    (``$WATCHDOG_PID`` unset or ours); else None."""
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0 or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 1e6


class Watchdog(threading.Thread):
    """The pinging thread (a daemon): see the module docstring.

    Args:
        url: the dashboard's ``/healthz`` on this machine (``http://127.0.0.1:8000/healthz``).
        period_s: the watchdog period (:func:`watchdog_period_s`); pings every third of it. None: only ``READY=1``.
        timeout_s: how long one check may take before it counts as no answer (default: a third of the period, at most 5 s).

    Attributes:
        ready: set once ``READY=1`` was sent. pings, failures: checks that answered / did not.
        last_status: the ``STATUS=`` text last sent.
    """

    def __init__(self, url: str, period_s: float | None, timeout_s: float | None = None) -> None:
        super().__init__(name="kosti-watchdog", daemon=True)
        self.url, self.period_s = url, period_s
        self.interval_s = period_s / 3 if period_s else 1.0
        self.timeout_s = timeout_s if timeout_s is not None else min(5.0, self.interval_s)
        self.ready = threading.Event()
        self.pings = 0
        self.failures = 0
        self.last_status = ""
        self._stop = threading.Event()

    def check(self) -> str | None:
        """Ask ``/healthz`` once: the status line when the server answered (any HTTP status), None when it did not."""
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout_s) as r:  # noqa: S310 - our own loopback URL
                body = r.read(65536)
        except urllib.error.HTTPError as exc:  # 503 (failing) or 403: the server answered
            body = exc.read(65536)
        except (OSError, ValueError):
            return None
        try:
            h = json.loads(body)
        except ValueError:
            return "answering"
        if not isinstance(h, dict) or "ok" not in h:
            return "answering"
        if h.get("ok"):
            return "healthy"
        parts = [f"{name}: {h[name].get('state') or h[name].get('error') or 'failing'}"
                 + (f" ({h[name]['message']})" if h[name].get("message") else "")
                 for name in h.get("failing", []) if isinstance(h.get(name), dict)]
        return "; ".join(parts) or "failing"

    def run(self) -> None:
        """Wait for the first answer (``READY=1``), then ping while answers come."""
        while not self._stop.is_set():
            status = self.check()
            if status is not None:
                self.last_status = status
                notify(f"READY=1\nSTATUS={status}")
                self.ready.set()
                break
            self._stop.wait(0.5)
        while self.period_s and not self._stop.wait(self.interval_s):
            status = self.check()
            if status is None:
                self.failures += 1
                log.warning("the dashboard did not answer %s within %.0f s: no watchdog ping", self.url, self.timeout_s)
                continue
            self.pings += 1
            self.last_status = status
            notify(f"WATCHDOG=1\nSTATUS={status}")

    def stop(self) -> None:
        """End the thread (it sends nothing more)."""
        self._stop.set()


def start_watchdog(host: str, port: int) -> Watchdog | None:
    """Start a :class:`Watchdog` for a dashboard bound to ``host:port`` when systemd asked for notifications
    (``$NOTIFY_SOCKET``); None otherwise."""
    if not os.environ.get("NOTIFY_SOCKET"):
        return None
    target = "127.0.0.1" if host in ("0.0.0.0", "", "localhost") else ("::1" if host == "::" else host)
    name = f"[{target}]" if ":" in target else target
    dog = Watchdog(f"http://{name}:{port}/healthz", watchdog_period_s())
    dog.start()
    return dog
