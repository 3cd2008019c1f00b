"""Which inference runtime reads a model file, what the reader needs of each, and loading it.

The reader (:class:`kosti.vision.reader.DiceReader`) runs its detector and face classifier through one of three
runtimes: ONNX Runtime (:mod:`kosti.vision.onnx_backend`, the default), the ``ncnn`` package
(:mod:`kosti.vision.ncnn_backend`, the Raspberry Pi's lean runtime) or Ultralytics (:mod:`kosti.vision.ultralytics_backend`,
``.pt`` files, needs the train extra). Each runtime module is imported only when a model needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from kosti.vision.onnx_backend import ModelLoadError

#: Inference runtimes a :class:`~kosti.vision.reader.DiceReader` can use (``auto`` picks one per model path:
#: :func:`backend_for`).
BACKENDS = ("auto", "onnx", "ncnn", "ultralytics")


def _is_onnx(path: Path) -> bool:
    return path.suffix.lower() == ".onnx"


def backend_for(path: Path, backend: str) -> str:
    """The runtime that reads ``path``: ``"onnx"``, ``"ncnn"`` or ``"ultralytics"``.

    ``auto`` goes by the path: an ``.onnx`` file → onnx, an NCNN export folder (``*.param`` + ``*.bin``)
    → ncnn, anything else (``.pt``) → ultralytics.

    Raises:
        ModelLoadError: ``onnx`` asked for a non-``.onnx`` path (``ncnn`` checks its folder when loading).
    """
    if backend == "onnx" and not _is_onnx(path):
        raise ModelLoadError(f"{path}: the onnx backend needs an .onnx file (use backend ncnn or ultralytics)")
    if backend != "auto":
        return backend
    if _is_onnx(path):
        return "onnx"
    if path.is_dir() and any(path.glob("*.param")) and any(path.glob("*.bin")):
        return "ncnn"
    return "ultralytics"


class DetectorBackend(Protocol):
    """What the reader needs of a detector runtime (:mod:`~kosti.vision.onnx_backend`, ``ncnn_backend``,
    ``ultralytics_backend``): class names, the NMS IoU, ``detect`` (``xyxy (K, 4)``, ``scores (K,)``,
    ``classes (K,)`` in frame pixels), the input's longest side and ``resized`` (the same network at another
    input side, ``None`` if it takes one size only)."""

    iou: float

    @property
    def names(self) -> dict[int, str]: ...

    @property
    def input_side(self) -> int: ...

    def resized(self, side: int) -> DetectorBackend | None: ...

    def detect(self, image: np.ndarray, conf: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


class ClassifierBackend(Protocol):
    """What the reader needs of a classifier runtime: class names and ``classify`` (``(K, nc)`` float32
    probabilities for ``(K, h, w, 3)`` uint8 BGR crops)."""

    @property
    def names(self) -> dict[int, str]: ...

    def classify(self, crops: np.ndarray) -> np.ndarray: ...


def make_detector(path: Path, backend: str, threads: int, iou: float, max_det: int) -> DetectorBackend:
    """The detector runtime for ``path`` (:func:`backend_for`), ``threads`` CPU threads, NMS at ``iou``, at most
    ``max_det`` boxes. Raises :class:`~kosti.vision.onnx_backend.ModelLoadError` for a missing or unusable model."""
    runtime = backend_for(path, backend)
    if runtime == "ultralytics":
        from kosti.vision.ultralytics_backend import UltralyticsDetector

        return UltralyticsDetector(path, threads=threads, iou=iou, max_det=max_det)
    if runtime == "ncnn":
        from kosti.vision.ncnn_backend import NcnnDetector

        return NcnnDetector(path, threads=threads, iou=iou, max_det=max_det, agnostic=True)
    from kosti.vision.onnx_backend import OnnxDetector

    return OnnxDetector(path, threads=threads, iou=iou, max_det=max_det, agnostic=True)


def make_classifier(path: Path, backend: str, threads: int) -> ClassifierBackend:
    """The classifier runtime for ``path`` (:func:`backend_for`), ``threads`` CPU threads. Raises
    :class:`~kosti.vision.onnx_backend.ModelLoadError` for a missing or unusable model."""
    runtime = backend_for(path, backend)
    if runtime == "ultralytics":
        from kosti.vision.ultralytics_backend import UltralyticsClassifier

        return UltralyticsClassifier(path, threads=threads)
    if runtime == "ncnn":
        from kosti.vision.ncnn_backend import NcnnClassifier

        return NcnnClassifier(path, threads=threads)
    from kosti.vision.onnx_backend import OnnxClassifier

    return OnnxClassifier(path, threads=threads)
