"""NCNN (the ``ncnn`` package, :mod:`kosti.vision.ncnn_backend`) vs ONNX Runtime, side by side, one thread.

Measures on real 1280×720 webcam frames (skovy-webcam test, ``../shared/datasets``; synthetic frames from
:func:`kosti.sim.synthetic.synthetic_frame` when absent):

* median wall time and CPU time (``time.process_time``: this process's own cores, so other load on a
  shared machine inflates it far less than the wall time) per frame of the detector alone (letterbox → network → decode → NMS) and of the whole
  :meth:`DiceReader.read` (plus crops, face classifier with 4-rotation TTA, the second look), for both
  runtimes in one process, alternating frame by frame so both see the same machine load; the ratio
  NCNN / ONNX of the medians;
* the number of frames whose dice differ between the two (count, faces, or a box IoU < 0.95);
* peak RSS of ``kosti read --backend X --json FRAME`` in a fresh process per runtime (as
  ``bench_reader.py``: ``wait4``'s ``ru_maxrss`` of a bare launcher's child);
* expected Raspberry Pi 5 figures — estimates, not measurements: Ultralytics' Raspberry Pi guide
  (docs.ultralytics.com/guides/raspberry-pi, as quoted in issue 16) gives YOLO11n at 640×640 on a Pi 5
  88–94 ms with NCNN and 130–180 ms with ONNX; the shipped detector is YOLO11n run at 640×384 for a
  1280×720 frame (0.6 of the pixels; convolution cost scales with them), and the classifier's share is
  taken from this machine's measured classify / detect ratio of the same runtime.

Usage: ``python benchmarks/bench_ncnn.py [--frames 12] [--rounds 3]`` (about a minute on one core).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
SKOVY = REPO.parent / "shared" / "datasets" / "skovy-webcam" / "images" / "test"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reader import _peak_rss_mb  # noqa: E402

#: Ultralytics' Raspberry Pi guide, YOLO11n 640×640 on a Pi 5, ms per frame (low, high).
PI5_YOLO11N_640_MS = {"ncnn": (88.0, 94.0), "onnx": (130.0, 180.0)}


def _frames(n: int) -> tuple[list[np.ndarray], str]:
    files = sorted(SKOVY.glob("*.jpg"))[:n] if SKOVY.is_dir() else []
    loaded = [cv2.imread(str(f)) for f in files]
    frames = [f for f in loaded if f is not None and f.shape[:2] == (720, 1280)]
    if frames:
        return frames, f"{len(frames)} skovy-webcam test frames (1280×720)"
    from kosti.sim.synthetic import synthetic_frame

    return [synthetic_frame(n_dice=5, seed=i)[0] for i in range(n)], f"{n} synthetic 1280×720 frames (5 dice)"


def _same(a, b) -> bool:
    if len(a) != len(b):
        return False
    used: set[int] = set()
    for i in range(len(a)):
        best, j_best = -1.0, -1
        for j in range(len(b)):
            if j in used:
                continue
            lt, rb = np.maximum(a.xyxy[i, :2], b.xyxy[j, :2]), np.minimum(a.xyxy[i, 2:], b.xyxy[j, 2:])
            inter = float(np.prod(np.clip(rb - lt, 0, None)))
            union = float(np.prod(a.xyxy[i, 2:] - a.xyxy[i, :2]) + np.prod(b.xyxy[j, 2:] - b.xyxy[j, :2])) - inter
            if inter / union > best:
                best, j_best = inter / union, j
        used.add(j_best)
        if best < 0.95 or int(a.value[i]) != int(b.value[j_best]):
            return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3, help="passes over the frames (timings: medians of all)")
    args = ap.parse_args()

    from kosti.vision.reader import DiceReader

    frames, what = _frames(args.frames)
    readers = {"onnx": DiceReader(backend="onnx", threads=1), "ncnn": DiceReader(backend="ncnn", threads=1)}
    for r in readers.values():  # warm-up (allocations, NCNN's first-run packing)
        r.read(frames[0])
    det_ms: dict[str, list[float]] = {k: [] for k in readers}
    read_ms: dict[str, list[float]] = {k: [] for k in readers}
    det_cpu: dict[str, list[float]] = {k: [] for k in readers}
    read_cpu: dict[str, list[float]] = {k: [] for k in readers}
    differ = 0
    for rnd in range(args.rounds):
        for i, frame in enumerate(frames):
            order = list(readers) if (i + rnd) % 2 == 0 else list(readers)[::-1]
            out = {}
            for name in order:
                r = readers[name]
                t0, c0 = time.perf_counter(), time.process_time()
                r.detect(frame, r.verify_conf)
                det_ms[name].append((time.perf_counter() - t0) * 1e3)
                det_cpu[name].append((time.process_time() - c0) * 1e3)
                t0, c0 = time.perf_counter(), time.process_time()
                out[name] = r.read(frame)
                read_ms[name].append((time.perf_counter() - t0) * 1e3)
                read_cpu[name].append((time.process_time() - c0) * 1e3)
            if rnd == 0:
                differ += not _same(out["onnx"], out["ncnn"])
    med: dict[str, dict[str, Any]] = {k: {"detect_ms": round(statistics.median(det_ms[k]), 1), "read_ms": round(statistics.median(read_ms[k]), 1),
               "detect_cpu_ms": round(statistics.median(det_cpu[k]), 1),
               "read_cpu_ms": round(statistics.median(read_cpu[k]), 1)} for k in readers}

    with tempfile.TemporaryDirectory() as tmp:
        frame_file = Path(tmp) / "frame.jpg"
        cv2.imwrite(str(frame_file), frames[0])
        kosti = str(Path(sys.executable).with_name("kosti"))
        for name in readers:
            mb, rc = _peak_rss_mb([kosti, "read", "--backend", name, "--json", str(frame_file)])
            med[name]["peak_rss_mb"] = round(mb, 1) if rc == 0 else None

    pixels = 640 * 384 / (640 * 640)
    pi5 = {}
    for name in readers:
        lo, hi = (v * pixels for v in PI5_YOLO11N_640_MS[name])
        cls_share = (med[name]["read_cpu_ms"] - med[name]["detect_cpu_ms"]) / med[name]["detect_cpu_ms"]
        pi5[name] = {"detect_ms": [round(lo), round(hi)],
                     "read_ms": [round(lo * (1 + cls_share)), round(hi * (1 + cls_share))]}
    doc = {
        "frames": what, "rounds": args.rounds, "threads": 1,
        "this_machine": med,
        "ncnn_over_onnx": {k: round(med["ncnn"][k] / med["onnx"][k], 2)
                           for k in ("detect_ms", "read_ms", "detect_cpu_ms", "read_cpu_ms")},
        "frames_whose_dice_differ": differ,
        "pi5_estimate": {**pi5, "note": "estimates from Ultralytics' published Pi 5 YOLO11n 640x640 times "
                         "(NCNN 88-94 ms, ONNX 130-180 ms) scaled to 640x384, classifier share as measured here"},
    }
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
