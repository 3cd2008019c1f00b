"""The table's health (``GET /healthz``) and its metrics (``GET /metrics``, the Prometheus text format by
``prometheus_client``), for systemd's watchdog (:mod:`kosti.common.watchdog`), a monitor or a Prometheus server.

:func:`health` checks three things and says which failed:

* **camera** — frames arrive: the source reports ``ok`` and the newest frame is at most ``stall_s`` seconds old
  (:data:`STALL_S`, 5 s: the same time after which a stalled stream is reopened,
  :class:`kosti.vision.reconnect.ReconnectingSource`). A table without a camera (keypad only) passes.
* **database** — writable: no write has failed since the last good one (:attr:`kosti.dashboard.store.Store.write_error`)
  and the file and its folder are writable.
* **disk** — at least :data:`MIN_FREE_BYTES` free where the database lives.

:class:`TableMetrics` keeps a per-app registry (several apps in one process do not mix): frames read, throws and
uncertain throws (counted as the camera settles them), the read latency histogram (``Throw.read_ms``: reading and
voting a settled throw), the reader version, WebSocket clients, and the health values as gauges.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from kosti.dashboard.table import TableService
    from kosti.vision.throws import Throw

#: Seconds without a frame after which the camera counts as stalled (the reconnecting source's own ``stall_s``).
STALL_S = 5.0
#: Free bytes below which the disk check fails (about 150 stored throws with their frames, or a day of play).
MIN_FREE_BYTES = 50 * 2**20
#: Read latency buckets, seconds: a settled throw is read in 20–60 ms on a PC, 60–200 ms on a Pi (models/README.md).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def camera_health(table: TableService, stall_s: float = STALL_S, now: float | None = None) -> dict[str, Any]:
    """``{"ok", "state", "fps", "last_frame_age_s", "message"}`` of the table's camera (see the module docstring).
    ``state``: the source's (``ok``, ``connecting``, ``stalled``, ``reconnecting``, …), ``none`` without a camera,
    ``stalled`` when frames stopped although the source did not notice yet."""
    info = table.live.source_info()
    if info.get("kind") == "none":
        return {"ok": True, "state": "none", "fps": 0.0, "last_frame_age_s": None, "message": "no camera"}
    status = info.get("status")
    state = str(status.get("state", "ok")) if isinstance(status, dict) else ("ok" if status == "ok" else "error")
    message = str(status.get("message", "")) if isinstance(status, dict) else str(info.get("message") or "")
    last = table.live.last_frame_at
    now = time.monotonic() if now is None else now
    age = None if last is None else max(0.0, now - last)
    if age is None:
        state, message = (state if state != "ok" else "connecting"), message or "no frame yet"
    elif age > stall_s and state == "ok":
        state, message = "stalled", f"no frame for {age:.1f} s"
    ok = state == "ok" and age is not None and age <= stall_s
    fps = info.get("fps")
    return {"ok": ok, "state": state, "fps": round(float(fps), 1) if isinstance(fps, int | float) else 0.0,
            "last_frame_age_s": None if age is None else round(age, 2), "message": message}


def database_health(table: TableService) -> dict[str, Any]:
    """``{"ok", "path", "error"}``: the database takes writes (no failed write pending, file and folder writable)."""
    store = table.store
    path = Path(store.path)
    err = store.write_error
    if err is not None:
        return {"ok": False, "path": str(path), "error": err.en}
    if store.path != ":memory:" and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return {"ok": False, "path": str(path), "error": f"{path} or its folder is not writable"}
    return {"ok": True, "path": str(path), "error": None}


def disk_health(table: TableService, min_free: int = MIN_FREE_BYTES) -> dict[str, Any]:
    """``{"ok", "free_bytes", "min_free_bytes"}`` of the file system holding the database."""
    where = Path(table.store.path).parent if table.store.path != ":memory:" else Path.cwd()
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return {"ok": False, "free_bytes": None, "min_free_bytes": min_free}
    return {"ok": free >= min_free, "free_bytes": free, "min_free_bytes": min_free}


def health(table: TableService, stall_s: float = STALL_S) -> dict[str, Any]:
    """The whole check: ``{"ok": bool, "status": "ok" | "failing", "failing": [names], "camera": …, "database": …,
    "disk": …}`` (each part as its function returns it)."""
    parts = {"camera": camera_health(table, stall_s), "database": database_health(table), "disk": disk_health(table)}
    failing = [name for name, part in parts.items() if not part["ok"]]
    return {"ok": not failing, "status": "ok" if not failing else "failing", "failing": failing, **parts}


class TableMetrics(Collector):
    """The table's Prometheus metrics (see the module docstring). :meth:`throw` is a
    :attr:`kosti.dashboard.wiring.LiveTable.throw_listeners` entry; the rest is read from the table at each scrape.

    Attributes:
        registry: the app's own registry (``prometheus_client.generate_latest(registry)`` writes the text format).
    """

    def __init__(self, table: TableService) -> None:
        self.table = table
        self.registry = CollectorRegistry(auto_describe=True)
        self.throws = Counter("kosti_throws", "Settled throws the camera read", registry=self.registry)
        self.uncertain = Counter("kosti_uncertain_throws", "Settled throws read with an uncertain die (the table "
                                 "was asked)", registry=self.registry)
        self.latency = Histogram("kosti_read_latency_seconds", "Time to read and vote a settled throw",
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.registry.register(self)
        table.live.throw_listeners.append(self.throw)

    def throw(self, throw: Throw) -> None:
        """Count a settled throw and its read latency (the runner's thread)."""
        self.throws.inc()
        if throw.status != "ok":
            self.uncertain.inc()
        self.latency.observe(max(0.0, float(throw.read_ms)) / 1000.0)

    def collect(self) -> Iterator[Any]:
        """The values read at scrape time: frames, reader, WebSocket clients, camera and storage health."""
        live = self.table.live
        frames = CounterMetricFamily("kosti_frames_read", "Frames read from the camera")
        frames.add_metric([], float(live.frames_seen))
        yield frames
        reader = InfoMetricFamily("kosti_reader", "The dice reader in use (model version and runtime)")
        reader.add_metric([], {"reader": live.reader_desc or "none"})
        yield reader
        clients = GaugeMetricFamily("kosti_websocket_clients", "Screens connected to the live WebSocket")
        clients.add_metric([], float(self.table.broadcaster.count))
        yield clients
        cam = camera_health(self.table)
        up = GaugeMetricFamily("kosti_camera_up", "1 while frames arrive from the camera (or there is none)")
        up.add_metric([], 1.0 if cam["ok"] else 0.0)
        yield up
        fps = GaugeMetricFamily("kosti_frames_per_second", "Frames per second read from the camera")
        fps.add_metric([], float(cam["fps"]))
        yield fps
        if cam["last_frame_age_s"] is not None:
            age = GaugeMetricFamily("kosti_last_frame_age_seconds", "Seconds since the newest frame")
            age.add_metric([], float(cam["last_frame_age_s"]))
            yield age
        db = GaugeMetricFamily("kosti_database_writable", "1 while the games database takes writes")
        db.add_metric([], 1.0 if database_health(self.table)["ok"] else 0.0)
        yield db
        disk = disk_health(self.table)
        if disk["free_bytes"] is not None:
            free = GaugeMetricFamily("kosti_disk_free_bytes", "Free bytes on the database's file system")
            free.add_metric([], float(disk["free_bytes"]))
            yield free
