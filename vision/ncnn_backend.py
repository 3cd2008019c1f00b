"""NCNN inference for the dice detector and face classifier on the ``ncnn`` Python package alone.

The lean runtime for the Raspberry Pi: NumPy, OpenCV and ``ncnn`` — never torch or Ultralytics. It gives the
same results as :mod:`kosti.vision.onnx_backend`: the same preprocessing
(:func:`~kosti.vision.onnx_backend.detector_input`, :func:`~kosti.vision.onnx_backend.classifier_input`),
the same decoding and NMS (:func:`~kosti.vision.onnx_backend.decode_detections`).

Model folders (``kosti export --format ncnn``, :func:`kosti.datasets.train.export_ncnn`): ``model.ncnn.param``,
``model.ncnn.bin`` and ``metadata.yaml`` (``task``, ``imgsz``, ``stride``, ``names``).

* Detector, kosti's export (``outputs: head_maps`` in the metadata; 2·nl graph outputs): the network up to
  the YOLO head's last convolutions, traced by pnnx at two input shapes so every reshape follows the input
  size (:func:`kosti.vision.ultralytics_backend._export_ncnn_detector_maps`). Its outputs are ``nl`` box
  maps ``(4·reg_max, h, w)`` then ``nl`` class-logit maps ``(nc, h, w)``; :func:`decode_head` decodes them
  as Ultralytics' ``Detect`` does (``ultralytics/nn/modules/head.py``: DFL softmax over ``reg_max`` bins →
  expected distance; ``make_anchors`` / ``dist2bbox`` in ``ultralytics/utils/tal.py``: anchor at each cell
  centre, ``xyxy = anchor ∓ distance``, × stride; score = sigmoid). A 1280×720 frame runs at 640×384, as
  the ONNX export's dynamic shape.
* Detector, Ultralytics' own NCNN export (one output ``(4 + nc, N)``, already decoded): its reshapes and
  anchors are constants of the export size, so it is fed the square ``imgsz`` letterbox only.
* Classifier: Ultralytics' classify export (64×64 input, ends in a softmax); one crop per extractor call
  (NCNN has no batch axis).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from kosti.models import DEFAULT_IOU
from kosti.vision.letterbox import LetterboxParams
from kosti.vision.onnx_backend import (
    ModelInfo,
    ModelLoadError,
    ResizableDetector,
    classifier_input,
    detector_input,
    frame_detections,
)

#: File names of an Ultralytics NCNN export (``ultralytics/engine/exporter.py``, ``export_ncnn``).
PARAM_GLOB, METADATA_YAML = "*.ncnn.param", "metadata.yaml"


def ncnn_files(path: str | Path) -> tuple[Path, Path]:
    """``(param, bin)`` files of an NCNN export folder.

    Raises:
        ModelLoadError: the folder is missing, or lacks a ``*.ncnn.param`` with its ``*.ncnn.bin``.
    """
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"model not found: {path}")
    if not path.is_dir():
        raise ModelLoadError(f"{path}: the ncnn backend needs an NCNN export folder (*.ncnn.param + *.ncnn.bin)")
    for param in sorted(path.glob(PARAM_GLOB)):
        weights = param.with_name(param.name[: -len(".param")] + ".bin")
        if weights.is_file():
            return param, weights
    raise ModelLoadError(f"{path}: not an NCNN export folder (no *.ncnn.param with its *.ncnn.bin)")


def read_metadata(folder: Path) -> dict[str, Any]:
    """The export's ``metadata.yaml`` as a dict (``task``, ``imgsz``, ``stride``, ``names``, …).

    Raises:
        ModelLoadError: the file is missing or is not a YAML mapping.
    """
    import yaml

    meta_file = folder / METADATA_YAML
    if not meta_file.is_file():
        raise ModelLoadError(f"{folder}: no {METADATA_YAML} (export it with 'kosti export --format ncnn')")
    try:
        meta = yaml.safe_load(meta_file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ModelLoadError(f"{meta_file}: unreadable ({str(exc).splitlines()[0]})") from exc
    if not isinstance(meta, dict):
        raise ModelLoadError(f"{meta_file}: not a YAML mapping")
    return meta


def _model_info(folder: Path, meta: dict[str, Any]) -> ModelInfo:
    try:
        size = meta.get("imgsz", 640)
        imgsz = (int(size), int(size)) if isinstance(size, int) else (int(size[0]), int(size[1]))
        names = {int(k): str(v) for k, v in (meta.get("names") or {}).items()}
        task = str(meta.get("task", "detect"))
        return ModelInfo(path=folder, task=task, imgsz=imgsz, stride=int(meta.get("stride", 32)), names=names,
                         batch=1, end2end=bool(meta.get("end2end", False)), dynamic_hw=False)
    except (TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModelLoadError(f"{folder / METADATA_YAML}: malformed metadata ({exc})") from exc


def decode_head(box_maps: list[np.ndarray], cls_maps: list[np.ndarray], input_hw: tuple[int, int],
                reg_max: int, conf: float = 0.0) -> np.ndarray:
    """Decode a YOLO head's per-level maps into the raw detector output the ONNX export gives.

    Args:
        box_maps: per level ``(4·reg_max, h, w)`` float32 DFL logits (sides left, top, right, bottom).
        cls_maps: per level ``(nc, h, w)`` float32 class logits.
        input_hw: the network input's ``(H, W)`` in pixels (each level's stride is ``H / h``).
        reg_max: DFL bins per side.
        conf: anchors whose best class score is ``≤ conf`` are left out (they could not pass
            :func:`~kosti.vision.onnx_backend.decode_detections` anyway); 0 keeps all.

    Returns:
        ``(4 + nc, N)`` float32: ``cx, cy, w, h`` in input pixels, then sigmoid class scores — the layout
        of the ONNX export's output (``Detect._inference``).
    """
    cols = []
    for box, cls in zip(box_maps, cls_maps, strict=True):
        nc, h, w = cls.shape
        stride = input_hw[0] / h
        scores = 1.0 / (1.0 + np.exp(-cls.reshape(nc, h * w)))
        keep = np.flatnonzero(scores.max(0) > conf)
        dist = box.reshape(4, reg_max, h * w)[:, :, keep]
        dist = np.exp(dist - dist.max(1, keepdims=True))
        dist = (dist * np.arange(reg_max, dtype=np.float32)[None, :, None]).sum(1) / dist.sum(1)  # (4, K)
        ax, ay = keep % w + 0.5, keep // w + 0.5
        x1, y1, x2, y2 = ax - dist[0], ay - dist[1], ax + dist[2], ay + dist[3]
        xywh = np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1]) * stride
        cols.append(np.concatenate([xywh, scores[:, keep]]).astype(np.float32))
    return np.concatenate(cols, axis=1) if cols else np.zeros((4, 0), np.float32)


#: Input elements (3·H·W) from which a run hands the freed memory back to the system: the detector's zoomed read of
#: a 1280×720 frame (1280×736) and anything as large; the 640×384 first read and the classifier's crops do not.
_TRIM_ABOVE = 3 * 1024 * 640


def _release_freed_memory() -> None:
    """Give the heap memory a large NCNN run freed back to the system (glibc ``malloc_trim``; nothing elsewhere).

    A zoomed detector read allocates and frees ~120 MB of blobs; glibc keeps much of it in its heap, so the next
    read's peak stacked on top (``kosti run`` with NCNN: 300 MB median, 294–307, before; see
    ``benchmarks/bench_memory.py`` and models/README.md, "Memory")."""
    global _LIBC
    if _LIBC is None:
        import ctypes
        import ctypes.util

        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: Any = None


def _net(param: Path, weights: Path, threads: int) -> Any:
    """An ``ncnn.Net`` on the CPU (typed ``Any``: ncnn ships no types)."""
    try:
        import ncnn
    except ImportError as exc:
        raise ModelLoadError(
            f"{param.parent}: the ncnn backend needs the 'ncnn' package (a kosti dependency: pip install ncnn)") from exc
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.num_threads = max(int(threads), 1)
    # No im2col-GEMM convolutions (issue 44, memory): their unfolded input buffers made a zoomed 1280×736 detector
    # read peak 162 MB above the loaded net, 117 MB without them, at the same results (x86, one run each;
    # benchmarks/bench_memory.py: kosti run's peak, below 300 MB with this).
    net.opt.use_sgemm_convolution = False
    if net.load_param(str(param)) != 0 or net.load_model(str(weights)) != 0:
        raise ModelLoadError(f"{param.parent}: not a readable NCNN model")
    return net


class _NcnnModel:
    def __init__(self, path: str | Path, threads: int, task: str) -> None:
        folder = Path(path)
        param, weights = ncnn_files(folder)
        #: The export's ``metadata.yaml``.
        self.meta = read_metadata(folder)
        self.info = _model_info(folder, self.meta)
        if self.info.task != task:
            raise ModelLoadError(f"{folder}: expected a {task} model, got task={self.info.task!r}")
        self.param_text = param.read_text(encoding="utf-8", errors="replace")
        self.net = _net(param, weights, threads)
        names = self.net.input_names()
        self.input_name = names[0] if names else "in0"
        out = self.net.output_names()
        self.output_name = out[0] if out else "out0"

    @property
    def names(self) -> dict[int, str]:
        """Class index → name, from the export's ``metadata.yaml``."""
        return self.info.names

    def run(self, x: np.ndarray, blobs: list[str]) -> list[np.ndarray]:
        """Feed one ``(3, H, W)`` float32 tensor and return the named blobs as arrays (``(C, h, w)`` or
        ``(C,)``). Raises ``RuntimeError`` when NCNN fails on a blob."""
        import ncnn

        out = []
        data = np.ascontiguousarray(x, dtype=np.float32)  # ncnn.Mat borrows this memory: keep it referenced
        # This run's own pools, emptied when it ends. The net's default pools keep every blob size they ever held
        # (a detector at each frame size, the classifier, the second look), about 80 MB more at rest in a
        # kosti run (issue 44, benchmarks/bench_memory.py); the same results, no slower (measured on 12 reads).
        blob_pool, work_pool = ncnn.UnlockedPoolAllocator(), ncnn.PoolAllocator()
        ex = self.net.create_extractor()
        try:
            ex.set_blob_allocator(blob_pool)
            ex.set_workspace_allocator(work_pool)
            inp = ncnn.Mat(data)
            ex.input(self.input_name, inp)
            for name in blobs:
                ret, mat = ex.extract(name)
                if ret != 0:
                    raise RuntimeError(f"{self.info.path}: NCNN failed to compute blob {name!r} (code {ret})")
                out.append(np.array(mat))  # a copy: the blob goes back to the pool below
                del mat
        finally:
            ex.clear()  # every blob back in the pools before they are emptied (ncnn refuses to free one in use)
            del ex
            blob_pool.clear()
            work_pool.clear()
            if data.size >= _TRIM_ABOVE:
                _release_freed_memory()
        return out


class NcnnDetector(_NcnnModel, ResizableDetector):
    """YOLO detector through the ``ncnn`` package on the CPU (no torch, no Ultralytics).

    Args:
        path: NCNN export folder (task ``detect``): kosti's head-map export (any input size) or Ultralytics'
            own (square ``imgsz`` only); see the module docstring.
        threads: NCNN threads (1 = one core).
        iou: NMS IoU threshold; max_det: most boxes per frame; agnostic: class-agnostic NMS.

    Raises:
        ModelLoadError: missing folder, no ``ncnn`` package, unreadable files, or not a detector.
    """

    def __init__(
        self, path: str | Path, threads: int = 1, iou: float = DEFAULT_IOU, max_det: int = 300, agnostic: bool = True
    ) -> None:
        super().__init__(path, threads, "detect")
        outputs = list(self.net.output_names())
        #: ``(box map blobs, class map blobs)`` of a head-map export, finest level first; ``None`` otherwise.
        self.head_maps: tuple[list[str], list[str]] | None = None
        if self.meta.get("outputs") == "head_maps":
            if len(outputs) < 2 or len(outputs) % 2:
                raise ModelLoadError(f"{self.info.path}: a head-map export needs 2 outputs per level, got {outputs}")
            n = len(outputs) // 2
            self.head_maps = (outputs[:n], outputs[n:])
            self.info = replace(self.info, dynamic_hw=True)  # every reshape follows the input size
        self.iou, self.max_det, self.agnostic = iou, max_det, agnostic

    def preprocess(self, image: np.ndarray) -> tuple[np.ndarray, LetterboxParams]:
        """Letterbox a ``(H, W, 3)`` uint8 BGR frame into a ``(1, 3, H_in, W_in)`` float RGB 0–1 tensor."""
        return detector_input(image, self.info)

    def raw(self, image: np.ndarray, conf: float = 0.0) -> tuple[np.ndarray, LetterboxParams]:
        """Run the network on one BGR frame: ``(4 + nc, N)`` raw output (as the ONNX export's) and the
        letterbox geometry. ``conf`` drops anchors that cannot pass it (see :func:`decode_head`)."""
        x, params = self.preprocess(image)
        if self.head_maps is None:
            return self.run(x[0], [self.output_name])[0], params
        box, cls = self.head_maps
        maps = self.run(x[0], [*box, *cls])
        reg_max = maps[0].shape[0] // 4
        return decode_head(maps[: len(box)], maps[len(box) :], x.shape[2:], reg_max, conf), params

    def detect(self, image: np.ndarray, conf: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Find objects in one ``(H, W, 3)`` uint8 BGR frame at confidence ``> conf``: ``xyxy (K, 4)`` float32
        frame pixels, ``scores (K,)`` float32, ``classes (K,)`` int64, best first (as ``OnnxDetector``)."""
        out, params = self.raw(image, conf)
        return frame_detections(out, params, conf, self.iou, self.max_det, self.agnostic, self.info.end2end)


class NcnnClassifier(_NcnnModel):
    """YOLO classifier through the ``ncnn`` package on the CPU (the die face reader).

    Args:
        path: Ultralytics NCNN export folder (task ``classify``).
        threads: NCNN threads.

    Raises:
        ModelLoadError: missing folder, no ``ncnn`` package, unreadable files, or not a classifier.
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        super().__init__(path, threads, "classify")

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """Class probabilities for a batch of BGR crops.

        Args:
            crops: ``(N, h, w, 3)`` uint8 BGR (``N`` may be 0); crops of another size than the model's are
                resized as :func:`~kosti.vision.onnx_backend.classifier_input` says.

        Returns:
            ``(N, nc)`` float32 softmax probabilities (rows sum to 1).
        """
        if len(crops) == 0:
            return np.zeros((0, len(self.names)), np.float32)
        x = classifier_input(crops, self.info.imgsz)
        return np.stack([self.run(xi, [self.output_name])[0].reshape(-1) for xi in x]).astype(np.float32)
