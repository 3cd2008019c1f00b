"""YOLO26n against YOLO11n as kosti's dice detector: speed side by side on one core (issue 11).

Both detectors are built from Ultralytics' own YAML (``yolo11n.yaml``, ``yolo26n.yaml``; one class ``die``,
nothing downloaded), with the shipped YOLO11n's backbone weights copied into each where names and shapes
match (speed does not depend on the weights; it keeps NMS honest: random weights would flood it), exported to
ONNX exactly as the shipped detector is (:func:`kosti.datasets.train.export_onnx`: dynamic H×W, no NMS inside,
the DFL rewrite, float16 storage) and run on the reader's input for a 1280×720 frame (640×384 letterbox):

* ONNX Runtime, one thread, the reader's whole detector stage (letterbox, network, decode, NMS —
  YOLO26's end-to-end head needs no NMS: its export emits ``(1, 300, 6)`` rows already chosen);
* Ultralytics' PyTorch ``predict`` of the same ``.pt`` on one thread, for the speed-up ratio.

Runs are interleaved model by model, so a busy machine slows both alike; medians are printed with the ratios.
Accuracy is a separate question (weights trained on dice): see the model card.

Usage: ``python benchmarks/bench_yolo26.py [--runs 30]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kosti.common.ultralytics_env import import_ultralytics, offline_env
from kosti.models import DEFAULT_VERIFY_CONF
from kosti.vision.onnx_backend import OnnxDetector

offline_env()
REPO = Path(__file__).resolve().parents[1]
#: Detector threshold of both runs: the reader's second-look floor (kosti.models.DEFAULT_VERIFY_CONF).
CONF = DEFAULT_VERIFY_CONF


@dataclass
class Contender:
    """One detector architecture: its ONNX Runtime reader stage, its Ultralytics model and their timings (ms)."""

    name: str
    onnx: OnnxDetector
    ultralytics: Any
    params: int
    gflops: float
    onnx_ms: list[float] = field(default_factory=list)
    ultra_ms: list[float] = field(default_factory=list)

    def run_onnx(self, frame: np.ndarray) -> None:
        self.onnx.detect(frame, CONF)

    def run_ultralytics(self, frame: np.ndarray) -> None:
        self.ultralytics.predict(frame, conf=CONF, verbose=False)


def build(yaml: str, out: Path, backbone: Path) -> tuple[Path, Path, int, float]:
    """Build a one-class detector from ``yaml``, copy matching weights from ``backbone``, save and export it.

    Returns ``(pt, onnx, params, GFLOPs at 640)``.
    """
    import torch

    from kosti.datasets.train import export_onnx

    import_ultralytics()
    from ultralytics.nn.tasks import DetectionModel
    from ultralytics.utils.torch_utils import get_flops

    model = DetectionModel(yaml, nc=1, verbose=False)
    shipped = torch.load(backbone, map_location="cpu", weights_only=False)["model"].float()
    model.load(shipped, verbose=False)  # copies tensors whose names and shapes match (the backbone, mostly)
    model.names = {0: "die"}
    params = sum(p.numel() for p in model.parameters())
    flops = get_flops(model, 640)
    pt = out / "src" / f"{Path(yaml).stem}.pt"
    pt.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.half(), "train_args": {"imgsz": 640, "task": "detect"}, "epoch": -1}, pt)
    onnx = export_onnx(pt, 640, out / f"{Path(yaml).stem}.onnx")
    return pt, onnx, params, flops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()

    import torch

    from kosti.models import DETECTOR_ONNX
    from kosti.sim.synthetic import synthetic_frame

    torch.set_num_threads(1)
    YOLO = import_ultralytics().YOLO
    tmp = Path(tempfile.mkdtemp(prefix="bench-yolo26-"))
    frame = synthetic_frame(1280, 720, n_dice=5, side=70, seed=0)[0]
    backbone = DETECTOR_ONNX.with_suffix(".pt")
    contenders: list[Contender] = []
    for yaml in ("yolo11n.yaml", "yolo26n.yaml"):
        pt, onnx, params, flops = build(yaml, tmp, backbone)
        contenders.append(Contender(yaml, OnnxDetector(onnx, threads=1), YOLO(str(pt), task="detect"), params, flops))
    for _ in range(3):  # warm-up: ONNX Runtime's lazy initialisation, torch's first-call allocations
        for c in contenders:
            c.run_onnx(frame)
            c.run_ultralytics(frame)
    for _ in range(args.runs):
        for c in contenders:
            for run, out in ((c.run_onnx, c.onnx_ms), (c.run_ultralytics, c.ultra_ms)):
                t0 = time.perf_counter()
                run(frame)
                out.append((time.perf_counter() - t0) * 1e3)
    print(f"1280x720 frame, one thread, {args.runs} interleaved runs, medians")
    for c in contenders:
        h, w = c.onnx.preprocess(frame)[0].shape[2:]
        onnx_ms, ultra_ms = statistics.median(c.onnx_ms), statistics.median(c.ultra_ms)
        print(f"{c.name:13s} params {c.params / 1e6:.2f} M  {c.gflops:.1f} GFLOPs@640  input {w}x{h}  "
              f"end2end {c.onnx.info.end2end}  onnxruntime {onnx_ms:6.1f} ms (p90/median "
              f"{np.percentile(c.onnx_ms, 90) / onnx_ms:.2f})  ultralytics {ultra_ms:6.1f} ms  "
              f"speed-up {ultra_ms / onnx_ms:.2f}x")
    a, b = (statistics.median(c.onnx_ms) for c in contenders)
    print(f"onnxruntime: yolo26n / yolo11n = {b / a:.2f} (below 1: YOLO26n is faster)")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
