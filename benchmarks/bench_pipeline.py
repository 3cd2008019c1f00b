"""Live pipeline speed: CPU share of watching a still table, the cost of motion compensation, and
settle-to-throw latency.

1. *Still table*: a 1280×720, 30 fps video of a table with dice at rest (sensor-like noise on every frame)
   is written to a temporary MJPG file and replayed in real time through ``VideoFileSource → ThrowDetector``.
   Reported: CPU share = process CPU time / wall time (all threads, decode included) — the target is
   ≤ 30 % of one core — and the per-frame cost of decode and of the settle detector alone. With
   ``--shake PX`` the camera moves 0.5–PX px every frame (a hand-held phone, issue 13), so the settle
   detector compensates the camera's motion on every frame.
1b. *Motion compensation*: median settle-detector time per 1280×720 frame, side by side — fixed camera
   with compensation off / on, shaking camera (0.5–3 px a frame) with compensation on — and the ratio; and a
   dim table (the fixed camera's frames at 45 % light) with the brightening of dim frames off / on.
2. *Latency*: throws on the virtual table (simulated time, as fast as possible). Reported: median media
   latency from the dice coming to rest to the throw (settle time + frame quantisation) and median wall
   time from the settle frame to the finished throw (reading ``--vote`` frames).

The shipped reader is used when ``models/dice_det.onnx`` exists; otherwise a reader that finds nothing
(only the settle/voting path is timed; this is printed).

Usage: ``python benchmarks/bench_pipeline.py [--seconds 10] [--throws 10] [--vote 3] [--shake 3] [--model DET --cls-model CLS]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from kosti.models import DETECTOR_ONNX
from kosti.sim.virtual import VirtualTableSource
from kosti.vision.detections import Detections
from kosti.vision.pipeline import LivePipeline, ThrowDetector
from kosti.vision.settle import SettleDetector
from kosti.vision.sources import VideoFileSource


class NullReader:
    """Finds no dice (stands in when the models are not built yet)."""

    def read(self, image: np.ndarray) -> Detections:
        return Detections.empty()


def make_reader(det: Path | None = None, cls: Path | None = None):
    if det is not None or DETECTOR_ONNX.is_file():
        from kosti.vision.reader import DiceReader

        r = DiceReader(det_path=det, cls_path=cls)
        return r, f"DiceReader ({(det or DETECTOR_ONNX).name}, {(cls.name if cls else 'dice_cls.onnx')})"
    return NullReader(), "NullReader (models/dice_det.onnx missing: reader cost NOT included)"


def still_frames(n: int, shake: float = 0.0, seed: int = 0) -> list[np.ndarray]:
    """``n`` 1280×720 frames of dice at rest with sensor noise; ``shake`` > 0: the camera moves 0.5–shake
    px every frame (a bounded random walk) and turns up to ±0.5°."""
    src = VirtualTableSource(n_dice=5, size=(1280, 720), realtime=False, tumble_s=0.1, seed=4)
    with src:
        frames = [src.read().image for _ in range(10)]
    rest = frames[-1]
    rng = np.random.default_rng(seed)
    noise = [rng.normal(0, 2.0, rest.shape).astype(np.float32) for _ in range(8)]
    out, pos, ang = [], np.zeros(2), 0.0
    for i in range(n):
        img = rest
        if shake > 0:
            step = rng.uniform(0.5, shake) * np.array([np.cos(a := rng.uniform(0, 2 * np.pi)), np.sin(a)])
            pos = pos + step if np.linalg.norm(pos + step) < 8 else pos - step
            ang = float(np.clip(ang + rng.normal(0, 0.05), -0.5, 0.5))
            m = np.asarray(cv2.getRotationMatrix2D((640, 360), ang, 1.0), np.float64)
            m[:, 2] += pos
            img = cv2.warpAffine(rest, m, (1280, 720), borderMode=cv2.BORDER_REFLECT101)
        out.append(np.clip(img + noise[i % len(noise)], 0, 255).astype(np.uint8))
    return out


def write_still_video(path: Path, seconds: float, fps: float = 30.0, shake: float = 0.0) -> None:
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (1280, 720))
    for img in still_frames(int(seconds * fps), shake):
        vw.write(img)
    vw.release()


def bench_compensation(n: int = 150) -> None:
    """Median settle-detector milliseconds per frame: fixed camera (compensation off / on) and a shaking one."""
    def per_frame(frames: list[np.ndarray], compensate: bool, dim_gain: float | None = None) -> tuple[float, int]:
        sd = SettleDetector(compensate=compensate) if dim_gain is None else \
            SettleDetector(compensate=compensate, dim_gain=dim_gain)
        times, events = [], 0
        for i, f in enumerate(frames):
            t0 = time.perf_counter()
            events += sd.update(f, i / 30).settled_now
            times.append(time.perf_counter() - t0)
        return 1000 * statistics.median(times[5:]), events

    fixed, shaking = still_frames(n), still_frames(n, shake=3.0, seed=1)
    off, ev_off = per_frame(fixed, False)
    on, ev_on = per_frame(fixed, True)
    shk, ev_shk = per_frame(shaking, True)
    shk_off, ev_shk_off = per_frame(shaking, False)
    dim = [cv2.convertScaleAbs(f, alpha=0.45) for f in fixed]
    dim_off, ev_dim_off = per_frame(dim, True, 0.0)
    dim_on, ev_dim_on = per_frame(dim, True)
    print(f"settle detector per 1280x720 frame (median of {n}):")
    print(f"  fixed camera, compensation off: {off:.3f} ms ({ev_off} settle events)")
    print(f"  fixed camera, compensation on:  {on:.3f} ms ({ev_on} settle events)  ratio {on / off:.2f}")
    print(f"  shaking camera 0.5-3 px/frame, compensation on:  {shk:.3f} ms ({ev_shk} settle events)  "
          f"ratio {shk / off:.2f}, compensation cost {shk - off:.3f} ms/frame")
    print(f"  shaking camera, compensation off: {shk_off:.3f} ms ({ev_shk_off} settle events: it never settles)")
    print(f"  fixed camera, dim table (45 % light), brightening off: {dim_off:.3f} ms ({ev_dim_off} settle events)")
    print(f"  fixed camera, dim table (45 % light), brightened: {dim_on:.3f} ms ({ev_dim_on} settle events)  "
          f"ratio {dim_on / dim_off:.2f}")


def bench_still(seconds: float, reader, vote: int, shake: float = 0.0) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "still.avi"
        write_still_video(path, seconds, shake=shake)
        # Decode alone, as fast as possible.
        with VideoFileSource(path, realtime=False) as src:
            t0 = time.process_time()
            n = sum(1 for _ in src)
            decode_ms = (time.process_time() - t0) / n * 1000
        # Settle alone on one decoded frame.
        with VideoFileSource(path, realtime=False) as src:
            img = src.read().image
        sd = SettleDetector()
        t0 = time.process_time()
        for i in range(300):
            sd.update(img, i / 30)
        settle_ms = (time.process_time() - t0) / 300 * 1000
        # The real thing: real-time replay through the one camera runner (in this thread) and its detector.
        with VideoFileSource(path, realtime=True) as src:
            pipe = LivePipeline(src, reader, vote_frames=vote, tick_s=0)
            w0, c0 = time.perf_counter(), time.process_time()
            pipe.run()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            frames, fps, det = pipe.frames_read, src.fps, pipe.detector
    cam = f"camera shaking 0.5-{shake:g} px/frame" if shake else "fixed camera"
    print(f"still table 1280x720 @30 fps, {cam}, {frames} frames over {wall:.1f} s (measured {fps:.1f} fps)")
    print(f"  CPU share (process time / wall): {100 * cpu / wall:.1f} % of one core  (target <= 30 %)")
    print(f"  CPU per frame: MJPG decode {decode_ms:.2f} ms, settle detector {settle_ms:.3f} ms")
    print(f"  settle events: {det.settle.last.rest_id if det.settle.last else 0} (one expected)")


def bench_latency(throws: int, reader, vote: int) -> None:
    src = VirtualTableSource(n_dice=5, size=(1280, 720), fps=30, realtime=False, tumble_s=1.0, seed=5,
                             auto_every_s=1.0)
    det = ThrowDetector(reader, vote_frames=vote, suppress_repeats=False)
    media, wall, settle_events = [], [], 0
    with src:
        while settle_events < throws:
            frame = src.read()
            t_in = time.perf_counter()
            r = det.process(frame)
            if r.update.settled_now:
                settle_events += 1
                wall.append(time.perf_counter() - t_in)
                truth = src.last_throw
                assert truth is not None  # a settle on the virtual table follows one of its throws
                media.append(frame.t - truth.t_rest)
    print(f"latency over {throws} virtual throws (vote {vote} frames):")
    print(f"  dice at rest -> settle event (media time): median {1000 * statistics.median(media):.0f} ms"
          f"  (still time {det.settle.still_s * 1000:.0f} ms)")
    print(f"  settle frame -> throw (wall, reading): median {1000 * statistics.median(wall):.1f} ms, "
          f"max {1000 * max(wall):.1f} ms")
    print(f"  settle-to-throw total: median {1000 * (statistics.median(media) + statistics.median(wall)):.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the still-table replay")
    ap.add_argument("--throws", type=int, default=10, help="virtual throws for the latency median")
    ap.add_argument("--vote", type=int, default=3, help="frames read per throw")
    ap.add_argument("--shake", type=float, default=3.0,
                    help="also replay the still table with the camera moving 0.5-SHAKE px a frame (0 = skip)")
    ap.add_argument("--model", type=Path, default=None, help="detector weights (default: the shipped model)")
    ap.add_argument("--cls-model", type=Path, default=None, help="classifier weights (default: the shipped model)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    reader, name = make_reader(args.model, args.cls_model)
    print(f"reader: {name}")
    bench_still(args.seconds, reader, args.vote)
    if args.shake > 0:
        bench_still(args.seconds, reader, args.vote, shake=args.shake)
    bench_compensation()
    bench_latency(args.throws, reader, args.vote)


if __name__ == "__main__":
    main()
