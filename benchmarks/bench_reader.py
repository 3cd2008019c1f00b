"""Dice reader speed and memory: ONNX Runtime on one core vs the same models through Ultralytics.

Measures, on one 1280×720 frame with 5 dice (drawn by :func:`kosti.sim.synthetic.synthetic_frame`):

* median end-to-end time of :meth:`DiceReader.read` (letterbox → detector → NMS → 5 full-resolution
  crops → face classifier) with ONNX Runtime on one thread;
* median time of the same pipeline through Ultralytics' PyTorch ``predict`` (its own letterbox and
  NMS at the reader's detector threshold — ``verify_conf`` when the second look is on — then
  ``square_crop`` crops of the same boxes the reader classifies: those above ``conf`` and the weak ones
  :meth:`DiceReader.second_look` picks; classifier ``predict`` on the same views: with the reader's
  test-time views, each crop in the reader's ``views``, :func:`kosti.vision.crops.reader_views`), torch limited
  to one thread;
* the same two on a frame of 5 small dice (drawn 30 px wide) that the reader's zoom reads twice (on by
  default since 2026-12-03; Ultralytics then also detects twice, the second time at the reader's zoomed side —
  ``reader.last_zoom_side``: 1152 px for this frame since 2026-12-04 (800 before), :meth:`DiceReader.zoom_side` — and
  classifies both reads' boxes);
* peak resident memory (max RSS) of ``kosti read --json`` on each of the two frames, in a fresh process.

Targets (the Raspberry Pi budget, from the project brief): ≤ 60 ms, ≥ 2× faster than Ultralytics,
≤ 300 MB. Models: the shipped ``models/dice_*.onnx`` with ``--det-pt/--cls-pt`` weights of the same
training run (default ``models/dice_*.pt``); without them, untrained YOLO11n / YOLO11n-cls of the
shipped architecture are built from YAML (same compute, meaningless answers; both pipelines then keep
the 5 best boxes so each classifies exactly 5 crops).

Usage: ``python benchmarks/bench_reader.py [--runs 30] [--imgsz 416] [--det X.onnx --cls Y.onnx
--det-pt X.pt --cls-pt Y.pt]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from kosti.common.ultralytics_env import import_ultralytics, offline_env

offline_env()
REPO = Path(__file__).resolve().parents[1]
TARGET_MS, TARGET_SPEEDUP, TARGET_MB = 60.0, 2.0, 300.0


_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.close(1)
    os.open(os.devnull, os.O_WRONLY)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def _peak_rss_mb(args: list[str]) -> tuple[float, int]:
    """Peak resident set size (MiB) and exit code of a command run in a fresh process.

    Linux keeps a process's pre-``exec`` high-water RSS in ``ru_maxrss``; spawning straight from this
    (torch-laden) benchmark would report the benchmark's own size. So a bare ``python -S`` launcher
    (≈ 10 MiB) forks and execs the command and reports ``wait4``'s ``ru_maxrss`` (KiB on Linux).
    """
    out = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *args], capture_output=True, text=True,
                         cwd=REPO, check=True)
    kib, rc = out.stdout.split()
    if int(rc):
        sys.stderr.write(out.stderr)
    return int(kib) / 1024, int(rc)


def main() -> int:
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--imgsz", type=int, default=416, help="detector size of untrained stand-in models")
    ap.add_argument("--det", type=Path, default=DETECTOR_ONNX)
    ap.add_argument("--cls", type=Path, default=CLASSIFIER_ONNX)
    ap.add_argument("--det-pt", type=Path, default=DETECTOR_ONNX.with_suffix(".pt"))
    ap.add_argument("--cls-pt", type=Path, default=CLASSIFIER_ONNX.with_suffix(".pt"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    from kosti.sim.synthetic import synthetic_frame
    from kosti.sim.untrained_models import build_untrained_models
    from kosti.vision.crops import VIEW_COUNTS, reader_views, square_crop
    from kosti.vision.onnx_backend import OnnxDetector
    from kosti.vision.reader import DiceReader

    tmp_dir = tempfile.TemporaryDirectory(prefix="bench-reader-")  # removed at exit, a refusal's too
    tmp = Path(tmp_dir.name)
    have = all(p.exists() for p in (args.det, args.cls, args.det_pt, args.cls_pt))
    if have:
        det_onnx, cls_onnx, det_pt, cls_pt, max_det = args.det, args.cls, args.det_pt, args.cls_pt, 300
        label = f"{det_onnx.name} + {cls_onnx.name} (PyTorch: {det_pt.name} + {cls_pt.name})"
    else:
        m = build_untrained_models(tmp / "models", det_imgsz=args.imgsz)
        det_onnx, cls_onnx, det_pt, cls_pt, max_det = m["det_onnx"], m["cls_onnx"], m["det_pt"], m["cls_pt"], 5
        label = f"untrained YOLO11n@{args.imgsz} + YOLO11n-cls@64 (no shipped .onnx+.pt pair found)"

    frame, boxes, values = synthetic_frame(1280, 720, n_dice=5, side=70, seed=0)
    frame_path = tmp / "frame.jpg"
    cv2.imwrite(str(frame_path), frame)

    reader = DiceReader(det_onnx, cls_onnx, threads=args.threads, max_det=max_det)

    import torch
    YOLO = import_ultralytics().YOLO

    torch.set_num_threads(args.threads)
    det_model, cls_model = YOLO(str(det_pt), task="detect"), YOLO(str(cls_pt), task="classify")

    det_conf = reader.verify_conf if reader.verifies else reader.conf

    def ultralytics_detect(image: np.ndarray = frame, **kw):  # detector alone, Ultralytics' default (rect) letterbox
        return det_model.predict(image, conf=det_conf, iou=reader.detector.iou, max_det=max_det, verbose=False,
                                 **kw)[0]

    def ultralytics_boxes(image: np.ndarray, **kw) -> np.ndarray:  # the boxes the reader classifies
        r = ultralytics_detect(image, **kw)
        xyxy, scores = r.boxes.xyxy.numpy(), r.boxes.conf.numpy()
        if reader.verifies:  # classify the boxes above conf and the weak ones given a second look
            xyxy = xyxy[(scores > reader.conf) | reader.second_look(scores)]
        return np.asarray(xyxy)

    def ultralytics_read(image: np.ndarray = frame, zoom_side: int = 0) -> int:
        """The reader's steps: detect at the second-look threshold, crop, classify; with ``zoom_side`` the
        detector again at that input side and the boxes of both reads classified (the reader classifies each
        read's)."""
        xyxy = ultralytics_boxes(image)
        if zoom_side:
            xyxy = np.concatenate([xyxy, ultralytics_boxes(image, imgsz=zoom_side)])
        crops = [square_crop(image, b) for b in xyxy]
        if crops and reader.tta:  # the same views per die as DiceReader.face_probs
            crops = list(reader_views(np.stack(crops), reader.views))
        if crops:
            cls_model.predict(crops, verbose=False)
        return len(crops) // (VIEW_COUNTS[reader.views] if reader.tta else 1)

    def timed(fns: dict[str, Callable[[], object]], runs: int, timing: bool = False) -> dict[str, float]:
        """Median ms of each of ``fns`` over ``runs`` rounds, run interleaved so that a busy machine slows all
        alike (3 warm-up calls each first); with ``timing`` also the reader's own "detect" and "classify" ms."""
        for fn in fns.values():
            for _ in range(3):
                fn()
        times: dict[str, list[float]] = {k: [] for k in (*fns, *(("detect", "classify") if timing else ()))}
        for _ in range(runs):
            for k, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[k].append((time.perf_counter() - t0) * 1e3)
            if timing:
                times["detect"].append(reader.last_timing["detect"])
                times["classify"].append(reader.last_timing["classify"])
        return {k: statistics.median(v) for k, v in times.items()}

    reader.read(frame)
    if reader.last_zoomed:  # Ultralytics' side reads once: the like-for-like frame must not be zoomed
        raise SystemExit("bench_reader: the reader zoomed the 70 px frame; its speed would not compare")
    med = timed({"onnx": lambda: reader.read(frame), "ultra": ultralytics_read, "det_only": ultralytics_detect},
                args.runs, timing=True)
    onnx_ms, ultra_ms, ultra_det_ms, onnx_det_ms = med["onnx"], med["ultra"], med["det_only"], med["detect"]
    found, n_ultra = reader.read(frame), ultralytics_read()
    # Ultralytics' predict letterboxes a .pt to the minimum stride-32 rectangle (rect=True: 416x256 for a
    # 16:9 frame); the reader feeds a dynamic ONNX export the same rectangle, so "det_only" is like for like.

    # A frame of small dice (drawn 30 px wide, boxed 34-37 px: 17-19 px at the 640 px input, under zoom_below)
    # is read twice (the zoom).
    small = synthetic_frame(1280, 720, n_dice=5, side=30, seed=0)[0]
    small_path = tmp / "small.jpg"
    cv2.imwrite(str(small_path), small)
    reader.read(small)
    zoomed = reader.last_zoom_side
    zmed = timed({"onnx": lambda: reader.read(small), "ultra": lambda: ultralytics_read(small, zoom_side=zoomed)},
                 max(args.runs // 3, 5))

    read_cmd = [sys.executable, "-m", "kosti", "read", "--json", "--model", str(det_onnx), "--cls-model", str(cls_onnx)]
    rss_mb, rc = _peak_rss_mb([*read_cmd, str(frame_path)])
    zrss_mb, zrc = _peak_rss_mb([*read_cmd, str(small_path)])

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    speedup = ultra_ms / onnx_ms
    print(f"models: {label}")
    print(f"frame: 1280x720, {len(values)} dice drawn; onnx found {len(found)}; ultralytics classified {n_ultra}"
          f" boxes (dice + second looks; max_det {max_det}); threads {args.threads}; {args.runs} runs; classifier TTA "
          f"{f'{VIEW_COUNTS[reader.views]} views ({reader.views})' if reader.tta else 'off'} in both")
    print(f"onnxruntime reader   median {onnx_ms:7.1f} ms  (detect {med['detect']:.1f}"
          f" + classify {med['classify']:.1f})  target <= {TARGET_MS:.0f}: "
          f"{mark(onnx_ms <= TARGET_MS)}")
    print(f"ultralytics pytorch  median {ultra_ms:7.1f} ms  (its default rect letterbox)")
    assert isinstance(reader.detector, OnnxDetector), reader.detector  # this benchmark times the ONNX reader
    h, w = reader.detector.preprocess(frame)[0].shape[2:]
    print(f"detector only: onnxruntime {onnx_det_ms:.1f} ms vs pytorch {ultra_det_ms:.1f} ms "
          f"(both {w}x{h} input) = {ultra_det_ms / onnx_det_ms:.2f} x")
    print(f"speed-up             {speedup:7.2f} x   target >= {TARGET_SPEEDUP:.0f}: {mark(speedup >= TARGET_SPEEDUP)}")
    zoom = f"read twice, at {zoomed} px the second time" if zoomed else "not read twice"
    print(f"small dice (5 drawn 30 px wide; {zoom}): onnxruntime median {zmed['onnx']:.1f} ms vs pytorch "
          f"{zmed['ultra']:.1f} ms = {zmed['ultra'] / zmed['onnx']:.2f} x; target <= {TARGET_MS:.0f}: "
          f"{mark(zmed['onnx'] <= TARGET_MS)}")
    print(f"kosti read peak RSS  {rss_mb:7.1f} MiB  target <= {TARGET_MB:.0f}: {mark(rss_mb <= TARGET_MB)}"
          f"{'' if rc == 0 else f'  (kosti read exited {rc})'}; on the small-dice frame {zrss_mb:.1f} MiB: "
          f"{mark(zrss_mb <= TARGET_MB)}{'' if zrc == 0 else f'  (kosti read exited {zrc})'}")
    tmp_dir.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
