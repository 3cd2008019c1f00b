"""Speed of the synthetic-data tools on one core: die renderer, virtual-table frames, scene generator.

Target (engineering brief): ≥ 20 synthetic scenes per second at 640 px on one core, JPEG encoding
included. Times are CPU time of this process with OpenCV held to one thread (robust to other jobs on
the machine; wall time on a busy machine is longer). Printed: medians over ``--runs`` timing runs of

* ``render_die`` — one die at 32 / 64 / 128 / 200 px (tilted, with glare), ms per die;
* ``render_table`` — a 1280×720 virtual-table frame with 6 dice on a cached table top (and with
  motion blur), ms per frame;
* scene generation — ``SceneGenerator.scene`` + JPEG encode at ``--imgsz``, scenes/s, for rendered
  dice only and (when the shared photos are present) with the default real-crop mix; the one-off
  cost of loading the real crops and of the table-top cache is printed separately.

Run: ``python benchmarks/bench_synth.py [--runs 5] [--scenes 60] [--imgsz 640]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import cv2
import numpy as np

from kosti.datasets.synth import DEFAULT_REAL_ROOT, RealBank, SceneGenerator, SynthConfig
from kosti.sim.render import make_background, render_die, render_table


def _median_ms(fn, reps: int, runs: int) -> float:
    """Median CPU milliseconds per call of this process (OpenCV limited to one thread), so the
    figure is one core's cost even when other jobs share the machine."""
    times = []
    for _ in range(runs):
        t = time.process_time()
        for _ in range(reps):
            fn()
        times.append((time.process_time() - t) / reps * 1000.0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scenes", type=int, default=60, help="scenes per timing run")
    ap.add_argument("--imgsz", type=int, default=640)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    rng = np.random.default_rng(0)

    for size in (32, 64, 128, 200):
        ms = _median_ms(lambda size=size: render_die(5, size, rotation_deg=33, rng=rng, tilt=(0.1, 0.15), glare=0.4), 50, args.runs)
        print(f"render_die {size:>3} px: {ms:6.2f} ms")

    bg = make_background("felt", 1280, 720, 1)
    dice = [(v, 200.0 + 150 * v, 300.0 + 40 * (v % 2), 17.0 * v) for v in range(1, 7)]
    for blur in (0.0, 20.0):
        ms = _median_ms(lambda blur=blur: render_table(dice, bg, "ivory", blur), 20, args.runs)
        print(f"render_table 1280x720, 6 dice, motion_blur {blur:>4}: {ms:6.2f} ms/frame")

    def bench_scenes(label: str, cfg: SynthConfig, bank: RealBank | None) -> None:
        gen = SceneGenerator(cfg, bank, seed=1)
        t = time.perf_counter()
        gen.warm_tables()  # the table-top cache (one-off per series)
        warm = time.perf_counter() - t
        index = [0]

        def one() -> None:
            scene = gen.scene(index[0])
            index[0] += 1
            cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])

        ms = _median_ms(one, args.scenes, args.runs)
        print(f"scenes {args.imgsz} px, {label}: {1000.0 / ms:5.1f} scenes per CPU-second ({ms:.1f} ms/scene; "
              f"table-top cache {warm:.1f} s once)")

    bench_scenes("rendered dice only", SynthConfig(imgsz=args.imgsz, real_frac=0.0, real_bg_frac=0.0), None)
    if (DEFAULT_REAL_ROOT / "byler-d6").is_dir():
        t = time.perf_counter()
        bank = RealBank.load(DEFAULT_REAL_ROOT)
        print(f"real crops: {len(bank.crops)} dice from {len(bank.backgrounds)} training photos, "
              f"loaded in {time.perf_counter() - t:.1f} s")
        bench_scenes("default mix (real crops + rendered)", SynthConfig(imgsz=args.imgsz), bank)
    else:
        print(f"shared photos not found under {DEFAULT_REAL_ROOT}: real-crop mix not measured")


if __name__ == "__main__":
    main()
