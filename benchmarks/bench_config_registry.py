"""Cost of the configuration and model-registry calls that run at start-up or on every frame.

Targets (per frame at 30 fps the whole budget is 33 ms; these must be negligible):
``Registry.change_token`` and ``ActiveModelWatcher.poll`` < 50 µs (one ``stat`` / a clock read),
``Registry.use`` (atomic switch with fsync) < 50 ms, ``load_config`` < 100 ms (start-up only).

Usage: ``python benchmarks/bench_config_registry.py [--repeat N]``; prints medians in microseconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kosti.config import load_config
from kosti.registry import ActiveModelWatcher, Registry

REPO = Path(__file__).resolve().parents[1]


def median_us(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``fn()`` over ``repeat`` calls, in microseconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shipped = root / "shipped"
        shipped.mkdir()
        for name in ("dice_det.onnx", "dice_cls.onnx"):
            (shipped / name).write_bytes(b"placeholder")
        reg = Registry(root / "models", shipped_dir=shipped)
        for v in ("a", "b"):
            d = reg.root / v
            d.mkdir(parents=True)
            (d / "det.onnx").write_bytes(b"x")
            (d / "cls.onnx").write_bytes(b"x")
        reg.use("a", force=True)
        watcher = ActiveModelWatcher(reg, min_interval_s=0.0)
        flip = iter(("b", "a") * args.repeat)
        rows = [
            ("Registry.change_token", median_us(reg.change_token, args.repeat), 50),
            ("ActiveModelWatcher.poll (no change)", median_us(watcher.poll, args.repeat), 50),
            ("Registry.active_paths", median_us(reg.active_paths, args.repeat), 1000),
            ("Registry.use (atomic switch + fsync)",
             median_us(lambda: reg.use(next(flip), force=True), max(20, args.repeat // 50)), 50_000),
            ("load_config(deploy/kosti.toml)",
             median_us(lambda: load_config(REPO / "deploy" / "kosti.toml"), max(20, args.repeat // 50)), 100_000),
        ]
    print(f"{'call':40s} {'median µs':>12s} {'target µs':>10s}  ok")
    for name, us, target in rows:
        print(f"{name:40s} {us:12.1f} {target:10d}  {'yes' if us < target else 'NO'}")


if __name__ == "__main__":
    main()
