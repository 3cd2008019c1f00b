"""INT8 detector experiment: quantise the shipped ONNX detector and write it for ``bench_reader`` / ``kosti eval``.

Not shipped (``models/README.md``, "Speed"): static INT8 makes the 640 px detector 1.4× faster on this CPU
(14.3 vs 20.3 ms with the last-axis DFL; end to end 2.17× Ultralytics instead of 1.73–1.80×), but on the
selection split it reads worse (reader v0.3 on rune55 val at the shipped operating point: image_exact 0.752
vs 0.762, die_accuracy 0.979 vs 0.981 — below the 0.98 target), and it would not fit the 20 MB weights
budget beside the float model. Keeping the first convolution or the whole detection head in float32 did
not recover the accuracy (rune55 val image_exact 0.738 and 0.729), nor did calibrating on 300 photos (0.743).

Usage (from the repository root, ``train`` extra installed)::

    python benchmarks/quantize_detector.py --out runs/int8/dice_det.onnx
    python benchmarks/bench_reader.py --det runs/int8/dice_det.onnx --det-pt models/dice_det.pt
    kosti eval --data ../shared/datasets/rune55-dedup/data.yaml --split val --model runs/int8/dice_det.onnx

Calibration images: byler-d6 and rune55-dedup *train* photos only (never the sets it is measured on).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KOSTI_SHARED", REPO.parent / "shared" / "datasets"))


def quantize_detector(src: Path, out: Path, calib_images: list[Path], n: int = 100, seed: int = 0) -> Path:
    """Static INT8 quantisation of an ONNX YOLO detector for ONNX Runtime on the CPU; writes ``out``.

    QDQ format, per-channel signed weights, unsigned activations, MinMax calibration on ``n`` images
    drawn (``seed``) from ``calib_images`` and letterboxed exactly as the reader does
    (:meth:`kosti.vision.onnx_backend.OnnxDetector.preprocess`). Convolutions, SiLU (``Sigmoid`` +
    ``Mul``), ``Add``/``Concat`` of the backbone and neck all run in INT8 (quantising only the convolutions
    leaves a dequantise/quantise pair around every activation and gained just 1.16× in v0.1); the
    detection head's last convolution of each branch and its decoding (DFL, anchors, box maths, sigmoid
    scores) stay float32, since box coordinates up to 640 px and 0–1 scores share one output tensor
    and 8 bits cannot hold both.

    ``src`` may be a plain float32 export or one rewritten by :func:`compact_onnx` (its float16 weights
    are expanded back first: the quantiser needs float32 weights). Needs the ``onnx`` package (the
    ``train`` extra); the result runs on plain ``onnxruntime``.

    Raises:
        ValueError: no calibration images.
    """
    import re

    import cv2
    import numpy as np
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from kosti.vision.onnx_backend import OnnxDetector

    if not calib_images:
        raise ValueError("quantize_detector: no calibration images")
    rng = np.random.default_rng(seed)
    picked = [calib_images[i] for i in sorted(rng.choice(len(calib_images), min(n, len(calib_images)), replace=False))]
    det = OnnxDetector(src)

    class _Frames(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(picked)

        def get_next(self):
            for path in self.it:
                img = cv2.imread(str(path))
                if img is not None:
                    return {det.input_name: det.preprocess(img)[0]}
            return None

    out.parent.mkdir(parents=True, exist_ok=True)
    full, pre = out.with_suffix(".f32.onnx"), out.with_suffix(".pre.onnx")
    onnx.save(_expand_onnx(onnx.load(str(src))), str(full))
    quant_pre_process(str(full), str(pre), skip_symbolic_shape=True)
    graph = onnx.load(str(pre)).graph
    head = [nd.name for nd in graph.node if nd.name.startswith(f"/model.{_head_index(graph)}/")
            and (not re.search(r"/cv[23]\.\d+/", nd.name) or re.search(r"/cv[23]\.\d+\.2/", nd.name))]
    quantize_static(str(pre), str(out), _Frames(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax, nodes_to_exclude=head)
    pre.unlink(missing_ok=True)
    full.unlink(missing_ok=True)
    return out


def _expand_onnx(model):
    """Undo :func:`compact_onnx` on a loaded model: each ``Cast`` of a float16 weight becomes the float32
    weight again (under its original name). Models without such weights are returned unchanged."""
    import numpy as np
    from onnx import numpy_helper

    from kosti.datasets.train import FP16_SUFFIX

    graph = model.graph
    halves = {i.name: i for i in graph.initializer if i.name.endswith(FP16_SUFFIX)}
    if not halves:
        return model
    casts = [nd for nd in graph.node if nd.op_type == "Cast" and nd.input[0] in halves]
    full = [numpy_helper.from_array(numpy_helper.to_array(halves[nd.input[0]]).astype(np.float32), nd.output[0])
            for nd in casts]
    keep_init = [i for i in graph.initializer if i.name not in halves] + full
    keep_nodes = [nd for nd in graph.node if not (nd.op_type == "Cast" and nd.input[0] in halves)]
    del graph.initializer[:]
    graph.initializer.extend(keep_init)
    del graph.node[:]
    graph.node.extend(keep_nodes)
    return model


def _head_index(graph) -> int:
    """Index of the Ultralytics ``Detect`` layer (the last ``/model.N/`` prefix in the graph)."""
    import re

    idx = [int(m.group(1)) for nd in graph.node if (m := re.match(r"/model\.(\d+)/", nd.name))]
    return max(idx)


def main() -> int:
    from kosti.models import DETECTOR_ONNX

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--det", type=Path, default=DETECTOR_ONNX, help="float ONNX detector (default: the shipped one)")
    ap.add_argument("--out", type=Path, required=True, help="where to write the INT8 model")
    ap.add_argument("--n", type=int, default=100, help="calibration images (default 100)")
    a = ap.parse_args()
    calib = sorted(p for name in ("byler-d6", "rune55-dedup") for p in (SHARED / name / "images" / "train").glob("*")
                   if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    if not calib:
        print(f"no training photos under {SHARED}", file=sys.stderr)
        return 2
    quantize_detector(a.det, a.out, calib, n=a.n)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e6:.1f} MB) from {a.det}, calibrated on {min(a.n, len(calib))} photos")
    return 0


if __name__ == "__main__":
    sys.exit(main())
