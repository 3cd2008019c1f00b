"""INT8 quantisation of the reader's ONNX models for ONNX Runtime on the CPU (the shipped reader since v1.1).

Static post-training quantisation (``onnxruntime.quantization.quantize_static``), QDQ format:

* weights signed 8 bit per output channel, activations unsigned 8 bit per tensor, ranges by MinMax
  calibration on real training photos (never on a set the reader is measured on);
* ``reduce_range``: weights use 7 bits. ONNX Runtime's u8×s8 kernels on x86 CPUs without VNNI sum pairs of
  products in 16 bits (``VPMADDUBSW``) and can saturate with full 8-bit weights, so the same file could read
  differently on an older CPU than on the one it was measured on; with 7-bit weights no pair can overflow
  (onnxruntime's quantisation guide, "When and why do I need to try U8U8 / reduce_range"). On the selection
  splits the 7-bit file read as well as the 8-bit one (``models/README.md``, "v1.1");
* the detector's head keeps its last convolution of each branch and its decoding (DFL, anchors, box maths,
  sigmoid) in float32: box coordinates up to 640 px and 0–1 scores share one output tensor and 8 bits cannot
  hold both; the classifier keeps its final linear layer and softmax in float32.

Measured (``models/README.md``, "v1.1"): the 1280×720 frame reads in 30.9–32.5 ms instead of 44.6 ms on one
core of this x86 CPU (AVX-512 VNNI), 2.06–2.16× Ultralytics' PyTorch predict of the same ``.pt`` weights;
selection splits image_exact 0.659 vs 0.649 for the float files at each one's own operating point.

Needs the ``onnx`` package and ``onnxruntime.quantization`` (the ``train`` extra); the results run on plain
``onnxruntime``.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kosti.vision.evaluate import DatasetError
from kosti.vision.image_files import IMAGE_SUFFIXES

#: The training splits whose photos calibrate the activation ranges (shared sets; train splits only).
CALIBRATION_SETS = ("byler-d6", "rune55-dedup", "epanemu-dice")
#: Photos drawn for the detector's calibration / for the classifier's crops (seeded, without replacement).
DETECTOR_CALIBRATION_PHOTOS = 150
CLASSIFIER_CALIBRATION_PHOTOS = 120
#: At most this many classifier crops (each labelled die cut once, in the reader's test-time views).
CLASSIFIER_CALIBRATION_CROPS = 2000
#: ONNX metadata key that marks a quantised file (value: a one-line recipe).
QUANT_METADATA_KEY = "kosti_quantization"


def calibration_photos(root: Path, sets: Sequence[str] = CALIBRATION_SETS, split: str = "train") -> list[Path]:
    """Photos of ``root/<set>/images/<split>`` for every set, sorted (the calibration pool).

    Raises:
        DatasetError: none found (``root`` is not the shared datasets folder, or the sets are missing).
    """
    photos = sorted(p for name in sets for p in (Path(root) / name / "images" / split).glob("*")
                    if p.suffix.lower() in IMAGE_SUFFIXES)
    if not photos:
        raise DatasetError(f"no calibration photos under {root}/{{{','.join(sets)}}}/images/{split}")
    return photos


def quantize_detector(src: Path, out: Path, photos: Sequence[Path], n: int = DETECTOR_CALIBRATION_PHOTOS,
                      seed: int = 0) -> Path:
    """Write the INT8 version of a float ONNX YOLO detector export to ``out``.

    Args:
        src: float detector (:func:`kosti.datasets.train.export_onnx`, float16-stored weights allowed).
        out: destination ``.onnx`` (replaced).
        photos: calibration pool; ``n`` are drawn with ``seed`` and letterboxed exactly as the reader does
            (:meth:`kosti.vision.onnx_backend.OnnxDetector.preprocess`). Unreadable photos are skipped.

    Returns:
        ``out``. The file keeps the export's metadata (names, stride, imgsz) and adds
        :data:`QUANT_METADATA_KEY`.

    Raises:
        DatasetError: no photo could be read.
    """
    import cv2

    from kosti.vision.onnx_backend import OnnxDetector

    det = OnnxDetector(src)

    def inputs() -> Iterator[dict[str, np.ndarray]]:
        for path in _draw(photos, n, seed):
            img = cv2.imread(str(path))
            if img is not None:
                yield {det.input_name: det.preprocess(img)[0]}

    def head(graph: Any) -> list[str]:  # the Detect layer's last convolution of each branch and its decoding
        last = _last_layer(graph)
        return [nd.name for nd in graph.node if nd.name.startswith(f"/model.{last}/")
                and (not re.search(r"/cv[23]\.\d+/", nd.name) or re.search(r"/cv[23]\.\d+\.2/", nd.name))]

    return _quantize(src, out, inputs(), head, f"static int8 QDQ, reduce_range, MinMax on {n} photos, seed {seed}")


def quantize_classifier(src: Path, out: Path, photos: Sequence[Path], n: int = CLASSIFIER_CALIBRATION_PHOTOS,
                        seed: int = 0, max_crops: int = CLASSIFIER_CALIBRATION_CROPS, views: str = "turns") -> Path:
    """Write the INT8 version of a float ONNX face classifier export to ``out``.

    Calibration crops are cut from the labelled dice of ``n`` photos drawn from ``photos`` with ``seed``,
    exactly as the reader cuts them (:func:`kosti.vision.crops.square_crop` at the model's input size), each
    in the reader's test-time ``views`` (:func:`kosti.vision.crops.reader_views`: ``turns``, the four rotations,
    or ``upright``), at most ``max_crops`` in all. Photos without a label file are skipped.

    Returns:
        ``out`` (metadata kept, :data:`QUANT_METADATA_KEY` added).

    Raises:
        DatasetError: no labelled die in the drawn photos.
        kosti.vision.yolo_labels.LabelError: a malformed label file.
    """
    import cv2

    from kosti.vision.crops import reader_views, square_crop
    from kosti.vision.onnx_backend import OnnxClassifier
    from kosti.vision.yolo_labels import label_path, read_labels

    cls = OnnxClassifier(src)
    side = cls.info.imgsz[0]

    def inputs() -> Iterator[dict[str, np.ndarray]]:
        count = 0
        for path in _draw(photos, n, seed):
            img = cv2.imread(str(path))
            if img is None or not label_path(path).is_file():
                continue
            boxes, _ = read_labels(label_path(path), img.shape[1], img.shape[0])
            for box in boxes:
                if min(box[2] - box[0], box[3] - box[1]) < 1:
                    continue
                for view in reader_views(square_crop(img, box, size=side)[None], views):
                    if count >= max_crops:
                        return
                    count += 1
                    yield {cls.input_name: cls.preprocess(np.ascontiguousarray(view)[None])}

    def head(graph: Any) -> list[str]:  # the Classify layer's linear map and softmax
        last = _last_layer(graph)
        return [nd.name for nd in graph.node if nd.name.startswith(f"/model.{last}/")
                and nd.op_type in ("Gemm", "MatMul", "Softmax")]

    return _quantize(src, out, inputs(), head,
                     f"static int8 QDQ, reduce_range, MinMax on <= {max_crops} crops of {n} photos, seed {seed}"
                     + (f", {views} views" if views != "turns" else ""))


def is_quantized(path: Path) -> bool:
    """True when the ONNX file at ``path`` holds ``QuantizeLinear`` nodes (an INT8 QDQ model)."""
    import onnx

    return any(nd.op_type == "QuantizeLinear" for nd in onnx.load(str(path)).graph.node)


def _last_layer(graph: Any) -> int:
    """Index of the Ultralytics head (``Detect`` / ``Classify``): the last ``/model.N/`` prefix in the graph."""
    return max(int(m.group(1)) for nd in graph.node if (m := re.match(r"/model\.(\d+)/", nd.name)))


def _draw(photos: Sequence[Path], n: int, seed: int) -> list[Path]:
    rng = np.random.default_rng(seed)
    idx = sorted(rng.choice(len(photos), min(n, len(photos)), replace=False)) if photos else []
    return [photos[i] for i in idx]


def _quantize(src: Path, out: Path, inputs: Iterator[dict[str, np.ndarray]], float_nodes: Any, recipe: str) -> Path:
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    first = next(inputs, None)
    if first is None:
        raise DatasetError(f"{src.name}: no calibration input could be made (no readable, labelled photo)")

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.pending: dict[str, np.ndarray] | None = first

        def get_next(self) -> dict[str, np.ndarray] | None:
            if self.pending is not None:
                x, self.pending = self.pending, None
                return x
            return next(inputs, None)

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kosti-int8-") as tmp:
        full, pre = Path(tmp) / "float.onnx", Path(tmp) / "pre.onnx"
        onnx.save(expand_onnx(onnx.load(str(src))), str(full))
        quant_pre_process(str(full), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(out), _Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        reduce_range=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax,
                        nodes_to_exclude=float_nodes(onnx.load(str(pre)).graph))
    model = onnx.load(str(out))
    meta = {p.key: p.value for p in onnx.load(str(src)).metadata_props}
    meta[QUANT_METADATA_KEY] = recipe
    del model.metadata_props[:]
    for key, value in meta.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(out))
    return out


def expand_onnx(model: Any) -> Any:
    """Undo :func:`kosti.datasets.train.compact_onnx` on a loaded ONNX model: each ``Cast`` of a float16
    weight becomes the float32 weight again, under the ``Cast``'s output name (the quantiser needs float32
    weights). A model without such weights is returned unchanged."""
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
