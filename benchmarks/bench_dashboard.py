"""Dashboard speed: settle-to-score latency on the WebSocket, and MJPEG frame rate with 10 viewers.

Runs the real dashboard (uvicorn, in this process, on a free port) on the virtual table at 1280×720,
30 fps, and measures:

1. **settle → score latency**: for each throw, the wall time from reading the frame at which the table
   settled (``last_throw.settled_at``) to the WebSocket client receiving the new state that carries the
   throw (reading the dice on the vote frames, the engine, the SQLite commit, the broadcast). Median, p90.
2. **10 simultaneous MJPEG viewers**: each viewer's received frames per second over ``--seconds``
   (target ≥ 10 fps each; one JPEG encode per frame is shared by all viewers).

Usage::

    python benchmarks/bench_dashboard.py [--throws 10] [--viewers 10] [--seconds 10] [--reader auto|models|truth]

The reader is the shipped ONNX models when present (``auto``), else the virtual table's ground truth.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
import websockets

from kosti.dashboard.app import DashboardConfig, create_app
from kosti.sim.virtual import VirtualTableSource


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app, port: int) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.05)
    return server


async def settle_to_score(base: str, n: int) -> list[float]:
    """Latencies (seconds) from the settled frame to the WebSocket state, for ``n`` throws."""
    lat: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as http, \
            websockets.connect(base.replace("http", "ws") + "/ws", max_size=None) as ws:
        r = await http.post("/api/games", json={"players": ["Ann", "Boris"], "preset": "classic"})
        gid = r.json()["game"]["id"]
        last_id = None
        first = json.loads(await ws.recv())
        await asyncio.sleep(1.0)  # let the empty tray settle once
        for _ in range(n):
            await http.post(f"/api/games/{gid}/throw")
            while True:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                lt = msg.get("last_throw") or {}
                if msg.get("type") == "state" and lt.get("id") not in (None, last_id):
                    lat.append(time.time() - lt["settled_at"])
                    last_id = lt["id"]
                    break
            await asyncio.sleep(0.3)
        del first
    return lat


async def mjpeg_viewers(base: str, viewers: int, seconds: float) -> list[float]:
    """Frames per second received by each of ``viewers`` simultaneous MJPEG clients."""

    async def one() -> float:
        frames = 0
        async with httpx.AsyncClient(timeout=30) as c:
            async with c.stream("GET", base + "/video.mjpg") as r:
                t0 = time.monotonic()
                async for chunk in r.aiter_bytes():
                    frames += chunk.count(b"--frame\r\n")
                    if time.monotonic() - t0 >= seconds:
                        break
                return frames / (time.monotonic() - t0)

    return list(await asyncio.gather(*(one() for _ in range(viewers))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--throws", type=int, default=10)
    ap.add_argument("--viewers", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--reader", default="auto", choices=("auto", "models", "truth"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        src = VirtualTableSource(size=(1280, 720), fps=30, realtime=True, initial_throw=False, tumble_s=0.6)
        app = create_app(DashboardConfig(db_path=Path(tmp) / "bench.db", source_obj=src, reader_kind=args.reader))
        port = _free_port()
        server = _serve(app, port)
        base = f"http://127.0.0.1:{port}"
        table = app.state.table
        print(f"reader: {table.live.reader_desc}")
        lat = asyncio.run(settle_to_score(base, args.throws))
        lat_ms = sorted(x * 1000 for x in lat)
        print(f"settle -> score on WebSocket: median {statistics.median(lat_ms):.1f} ms, "
              f"p90 {lat_ms[int(0.9 * (len(lat_ms) - 1))]:.1f} ms, max {lat_ms[-1]:.1f} ms over {len(lat_ms)} throws")
        fps = asyncio.run(mjpeg_viewers(base, args.viewers, args.seconds))
        print(f"MJPEG with {args.viewers} viewers: source {table.live.fps:.1f} fps; per viewer median "
              f"{statistics.median(fps):.1f} fps, min {min(fps):.1f} fps "
              f"({'OK' if min(fps) >= 10 else 'BELOW'} the 10 fps target)")
        server.should_exit = True
        time.sleep(1.0)


if __name__ == "__main__":
    main()
