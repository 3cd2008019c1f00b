"""What publishing the table on MQTT costs the game (kosti.dashboard.mqtt), and how soon an event reaches a subscriber.

Plays the same actions (a throw typed in, then Stop, turn after turn, classic rules, two players) through
:class:`kosti.dashboard.table.TableService` on an in-memory database, three ways: without MQTT; publishing to a
local Mosquitto; publishing while that broker is down (every event queued). Prints the process CPU time per action
(the table's thread and paho's network thread together) and the wall time per action, median of the runs; and, with
the broker up, the delay from the action's return to a subscriber's receipt of its ``event/throw`` (median, 95th
percentile).

Needs Debian's ``mosquitto`` and ``kosti[mqtt]``. Run: ``python benchmarks/bench_mqtt.py [--actions 2000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from kosti.config.sections import MqttSettings
from kosti.dashboard.errors import TableError
from kosti.dashboard.mqtt import TableMqtt
from kosti.dashboard.store import Store
from kosti.dashboard.table import TableService


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _play(table: TableService, n_actions: int, stamps: list[float]) -> tuple[float, float]:
    """``n_actions`` actions: a throw of 1 1 1 5 2 (the 5 dice again after hot dice), then Stop where the rules
    allow it (a pit or a barrel may not), a new game when one ends; the time each throw returned goes to ``stamps``.
    Returns (cpu_s, wall_s)."""
    table.session.new_game(["Ann", "Boris"], "classic", replace=True)
    c0, t0 = time.process_time(), time.perf_counter()
    done, thrown = 0, False
    while done < n_actions:
        st = table.session.state
        if st is None or st.over:
            table.session.new_game(["Ann", "Boris"], "classic", replace=True)
            thrown = False
            continue
        if thrown:
            try:
                table.session.bank()
                thrown = False
                done += 1
                continue
            except TableError:  # not allowed now (a pit, the barrel, the opening): throw on
                pass
        table.session.enter([1, 1, 1, 5, 2][:st.dice_to_throw])
        stamps.append(time.perf_counter())
        thrown = True
        done += 1
    return time.process_time() - c0, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--actions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    import paho.mqtt.client as mqtt

    tmp = Path(tempfile.mkdtemp(prefix="bench-mqtt-"))
    port = _free_port()
    (tmp / "m.conf").write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n", encoding="utf-8")
    broker = subprocess.Popen(["mosquitto", "-c", str(tmp / "m.conf")], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    rows = []
    try:
        for mode in ("off", "broker up", "broker down"):
            cpu, wall, delays = [], [], []
            for _ in range(args.runs):
                table = TableService(Store(":memory:"))
                pub = None
                got: list[float] = []
                sub = None
                if mode != "off":
                    pub = TableMqtt(MqttSettings(broker=f"127.0.0.1:{port if mode == 'broker up' else _free_port()}",
                                                 table="bench"), table, "bench")
                    pub.start()
                    if mode == "broker up":
                        assert pub.connected.wait(10)
                        sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
                        ready = threading.Event()
                        sub.on_connect = lambda c, u, f, rc, p: c.subscribe("kosti/bench/event/throw", 1)
                        sub.on_subscribe = lambda c, u, m, r, p, ready=ready: ready.set()
                        sub.on_message = lambda c, u, m, got=got: got.append(time.perf_counter())
                        sub.connect("127.0.0.1", port)
                        sub.loop_start()
                        assert ready.wait(10)
                stamps: list[float] = []
                c, w = _play(table, args.actions, stamps)
                cpu.append(c / args.actions * 1e6)
                wall.append(w / args.actions * 1e6)
                if sub is not None:
                    deadline = time.monotonic() + 30
                    while len(got) < len(stamps) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    assert len(got) == len(stamps), f"{len(stamps)} throws, {len(got)} events arrived"
                    delays += [(a - s) * 1e3 for s, a in zip(stamps, got)]  # in order: the i-th throw's event
                    sub.disconnect()
                    sub.loop_stop()
                if pub is not None:
                    pub.stop(timeout_s=1)
                table.store.close()
            q95 = statistics.quantiles(delays, n=20)[-1] if len(delays) >= 20 else float("nan")
            rows.append((mode, statistics.median(cpu), statistics.median(wall),
                         statistics.median(delays) if delays else float("nan"), q95))
    finally:
        broker.terminate()
        broker.wait(10)
    print(f"{args.actions} actions x {args.runs} runs, in-memory database")
    print(f"{'MQTT':<12} {'CPU µs/action':>14} {'wall µs/action':>15} {'event delay ms p50':>19} {'p95':>7}")
    for mode, c, w, d50, d95 in rows:
        print(f"{mode:<12} {c:>14.0f} {w:>15.0f} {d50:>19.2f} {d95:>7.2f}")


if __name__ == "__main__":
    main()
