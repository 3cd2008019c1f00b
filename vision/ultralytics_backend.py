"""Ultralytics backend for the dice reader: ``.pt`` (PyTorch) or NCNN models, and model export.

Imports ``ultralytics`` (and so torch) lazily, only when one of these classes is built — the default
ONNX runtime never loads this module. Same interface as :mod:`kosti.vision.onnx_backend`:
``detect(image, conf) -> (xyxy, scores, classes)`` and ``classify(crops) -> probs``.

NCNN is the fast runtime on a Raspberry Pi's ARM cores; :func:`export_model` makes an
``*_ncnn_model`` folder with ``yolo export format=ncnn`` (needs the ``ncnn`` and ``pnnx`` tools that
Ultralytics installs on first use; run it on a machine with network access, or where they are present).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from kosti.models import DEFAULT_IOU

from kosti.vision.onnx_backend import ModelLoadError

_SUFFIXES = {".pt", ".onnx", ".torchscript", ".engine", ".mlpackage", ".tflite"}


def is_ncnn_dir(path: Path) -> bool:
    """True for a folder holding an NCNN export (``*.ncnn.param`` + ``*.ncnn.bin``)."""
    return path.is_dir() and any(path.glob("*.ncnn.param")) and any(path.glob("*.ncnn.bin"))


def ultralytics_model_path(path: Path) -> Path:
    """The path to hand to ``YOLO()``: Ultralytics recognises NCNN exports only by a folder name
    containing ``_ncnn_model``, so any other NCNN folder (e.g. the model registry's ``det_ncnn/``) is
    reached through a symlink ``<tmp>/<name>_ncnn_model`` (removed at exit).
    """
    if is_ncnn_dir(path) and "_ncnn_model" not in path.name.lower():
        import atexit
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="kosti-ncnn-"))
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        link = tmp / f"{path.name}_ncnn_model"
        link.symlink_to(path.resolve(), target_is_directory=True)
        return link
    return path


def _yolo(path: Path, task: str):
    if not (path.is_file() or is_ncnn_dir(path)):
        raise ModelLoadError(f"model not found: {path}")
    path = ultralytics_model_path(path)
    os.environ.setdefault("YOLO_OFFLINE", "1")  # never let Ultralytics reach the network
    try:
        from ultralytics import YOLO
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelLoadError(
            f"{path}: the Ultralytics backend needs the 'train' extra (pip install 'kosti[train]')"
        ) from exc
    try:
        model = YOLO(str(path), task=task)
    except Exception as exc:  # noqa: BLE001 - Ultralytics raises many types for bad files
        raise ModelLoadError(f"{path}: cannot load model ({str(exc).splitlines()[0]})") from exc
    if model.task != task:
        raise ModelLoadError(f"{path}: expected a {task} model, got task={model.task!r}")
    return model


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(int(threads), 1))


class UltralyticsDetector:
    """YOLO detector run by Ultralytics' own ``predict`` (PyTorch ``.pt`` or NCNN folder).

    Uses the same square letterbox as the ONNX runtime (``rect=False``), so both backends see the same
    input and give the same boxes on the same weights.

    Args:
        path: weights; threads: torch CPU threads; iou, max_det: NMS settings (as ``predict``);
        imgsz: input size override (default: the model's training size).

    Raises:
        ModelLoadError: missing or unusable weights.
    """

    def __init__(
        self, path: str | Path, threads: int = 1, iou: float = DEFAULT_IOU, max_det: int = 300, imgsz: int | None = None
    ) -> None:
        self.model = _yolo(Path(path), "detect")
        _set_threads(threads)
        self.iou, self.max_det, self.imgsz = iou, max_det, imgsz

    @property
    def names(self) -> dict[int, str]:
        """Class index → name."""
        return {int(k): str(v) for k, v in self.model.names.items()}

    def detect(self, image: np.ndarray, conf: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``xyxy (K, 4)`` float32 frame pixels, ``scores (K,)`` float32, ``classes (K,)`` int64."""
        kw = {"imgsz": self.imgsz} if self.imgsz else {}
        r = self.model.predict(  # rect=False: the full square letterbox, as the ONNX runtime
            image, conf=conf, iou=self.iou, max_det=self.max_det, agnostic_nms=True, rect=False, verbose=False, **kw
        )[0]
        b = r.boxes
        return (
            b.xyxy.cpu().numpy().astype(np.float32),
            b.conf.cpu().numpy().astype(np.float32),
            b.cls.cpu().numpy().astype(np.int64),
        )


class UltralyticsClassifier:
    """YOLO classifier run by Ultralytics' own ``predict`` (PyTorch ``.pt`` or NCNN folder).

    Raises:
        ModelLoadError: missing or unusable weights.
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        self.model = _yolo(Path(path), "classify")
        _set_threads(threads)

    @property
    def names(self) -> dict[int, str]:
        """Class index → name."""
        return {int(k): str(v) for k, v in self.model.names.items()}

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """``(N, h, w, 3)`` uint8 BGR crops → ``(N, nc)`` float32 probabilities."""
        if len(crops) == 0:
            return np.zeros((0, len(self.names)), np.float32)
        res = self.model.predict(list(crops), imgsz=crops.shape[1], verbose=False)
        return np.stack([r.probs.data.cpu().numpy() for r in res]).astype(np.float32)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to file descriptor 1 (Python or native code) to fd 2 meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def export_model(weights: str | Path, fmt: str = "onnx", imgsz: int | None = None, half: bool = False) -> Path:
    """Export Ultralytics ``.pt`` weights for the runtime.

    Args:
        weights: a trained ``.pt`` (detector or classifier).
        fmt: ``"onnx"`` (static shape, no NMS in the graph, simplified — what :mod:`onnx_backend`
            reads) or ``"ncnn"`` (for the Raspberry Pi).
        imgsz: input size in pixels (default: the size the model was trained at).
        half: FP16 weights (NCNN only; ONNX stays FP32 for CPU speed and exactness).

    Returns:
        Path of the exported file (``.onnx``) or folder (``*_ncnn_model``), next to the weights.

    Raises:
        ModelLoadError: weights missing/unusable, or the export failed (e.g. NCNN tools unavailable).
        ValueError: unknown format.
    """
    fmt = fmt.lower()
    if fmt not in {"onnx", "ncnn"}:
        raise ValueError(f"unknown export format {fmt!r} (onnx or ncnn)")
    weights = Path(weights)
    if weights.suffix.lower() != ".pt":
        raise ModelLoadError(f"{weights}: export needs Ultralytics .pt weights")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO

    if not weights.is_file():
        raise ModelLoadError(f"model not found: {weights}")
    model = YOLO(str(weights))
    kw: dict = {"format": fmt}
    if imgsz:
        kw["imgsz"] = int(imgsz)
    if fmt == "onnx":
        kw.update(simplify=True, dynamic=False, nms=False)
    elif half:
        kw.update(half=True)
    try:
        with _stdout_to_stderr():  # Ultralytics logs to stdout; keep stdout for the command's answer
            out = model.export(**kw)
    except Exception as exc:  # noqa: BLE001
        hint = ""
        if fmt == "ncnn" and ("ncnn" in str(exc) or "pnnx" in str(exc)):
            hint = "; install the Pi extra (pip install 'kosti[pi]') and pnnx, then retry"
        raise ModelLoadError(f"{weights}: {fmt} export failed ({str(exc).splitlines()[0]}){hint}") from exc
    if not out:
        raise ModelLoadError(f"{weights}: {fmt} export produced nothing")
    return Path(out)

