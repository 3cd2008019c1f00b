"""Untrained reader models for the reader/eval tests, built once per test session.

The YOLO11n detector (one class ``die``, 320 px) and YOLO11n-cls classifier (``1…6, x``, 64 px) come
from Ultralytics' YAML with seeded random weights (:func:`kosti.sim.untrained_models.build_untrained_models`),
nothing downloaded. Also the paths of the shipped models and shared photos.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import ci_guard

REPO = Path(__file__).resolve().parents[2]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
BYLER = SHARED_DATASETS / "byler-d6"
EPANEMU = SHARED_DATASETS / "epanemu-dice"


@cache
def _build(kind: str) -> dict[str, Path]:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from kosti.sim.untrained_models import build_untrained_models

    out = Path(tempfile.mkdtemp(prefix=f"kosti-reader-{kind}-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    if kind == "six":
        return build_untrained_models(out, det_classes=("1", "2", "3", "4", "5", "6"))
    if kind == "rect":
        return build_untrained_models(out, det_imgsz=(256, 416))
    if kind == "dynamic":
        return build_untrained_models(out, dynamic=True)
    return build_untrained_models(out)


def untrained_models() -> dict[str, Path]:
    """``{"det_pt", "det_onnx", "cls_pt", "cls_onnx"}`` of the two-stage untrained models."""
    return _build("two")


def untrained_six_class() -> dict[str, Path]:
    """Same, but the detector has six classes named ``1``…``6`` (the single-model design)."""
    return _build("six")


def untrained_rect() -> dict[str, Path]:
    """Two-stage models whose detector takes a 16:9-friendly 256×416 (H×W) input."""
    return _build("rect")


def untrained_dynamic() -> dict[str, Path]:
    """Two-stage models exported with dynamic input height and width (as the shipped detector)."""
    return _build("dynamic")


@cache
def shipped_float_models() -> dict[str, Path]:
    """``{"det_onnx", "cls_onnx"}``: the shipped ``.pt`` weights exported to float ONNX exactly as the
    ``export`` stage of ``scripts/finetune_reader.py`` does before quantising (:func:`kosti.datasets.train.
    export_onnx`) with the shipped ``reader.json`` beside them, once per test session — the float reference the INT8 files and the NCNN exports are
    compared with (the same weights without 8-bit rounding)."""
    ci_guard.need_module("ultralytics", "the float reference export needs Ultralytics (the train extra)")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from kosti.datasets.train import export_onnx
    from kosti.models import CLASSIFIER_PT, DETECTOR_PT, MODELS_DIR

    out = Path(tempfile.mkdtemp(prefix="kosti-float-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    shutil.copy2(MODELS_DIR / "reader.json", out / "reader.json")  # the same calibration as the shipped reader
    files = {}
    for key, pt, size in (("det_onnx", DETECTOR_PT, 640), ("cls_onnx", CLASSIFIER_PT, 64)):
        src = out / "src" / pt.name
        src.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pt, src)
        files[key] = export_onnx(src, size, out / pt.with_suffix(".onnx").name)
    return files


@cache
def shipped_int8_float_activations() -> dict[str, Path]:
    """``{"det_onnx", "cls_onnx"}``: the shipped INT8 files computing on float activations
    (:func:`kosti.datasets.ncnn_weights.float_activations`: their weights, dequantized, without the 8-bit rounding
    of activations), with the shipped ``reader.json`` beside them, once per test session — what the NCNN folders
    compute (they hold those weights, :func:`kosti.datasets.ncnn_weights.int8_weights_into_ncnn`), so the reference
    they are compared with."""
    ci_guard.need_module("onnx", "the reference is made with the onnx package (the train extra)")
    from kosti.datasets.ncnn_weights import float_activations
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX, MODELS_DIR

    out = Path(tempfile.mkdtemp(prefix="kosti-int8w-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    shutil.copy2(MODELS_DIR / "reader.json", out / "reader.json")
    return {"det_onnx": float_activations(DETECTOR_ONNX, out / "dice_det.onnx"),
            "cls_onnx": float_activations(CLASSIFIER_ONNX, out / "dice_cls.onnx")}


def scripted(reader: Any, monkeypatch: Any, boxes: Any, scores: Any, probs: Any) -> dict[str, int | float]:
    """Make ``reader``'s detector return ``boxes``/``scores`` (filtered by its ``conf`` argument, as the real one)
    and its classifier return ``probs`` row by row for the crops it is given; no zoomed read (the script is the only
    detector). Returns what they were asked: ``{"conf": …, "crops": …}``, filled as they are called."""
    import numpy as np

    boxes, scores, probs = (np.asarray(a, np.float32) for a in (boxes, scores, probs))
    seen: dict[str, int | float] = {}

    def detect(image: Any, conf: float) -> tuple[Any, Any, Any]:
        seen["conf"] = conf
        k = scores > conf
        return boxes[k], scores[k], np.zeros(int(k.sum()), np.int64)

    def classify(crops: Any) -> Any:
        seen["crops"] = len(crops)
        return probs[: len(crops)]

    monkeypatch.setattr(reader.detector, "detect", detect)
    monkeypatch.setattr(reader.classifier, "classify", classify)
    monkeypatch.setattr(reader, "zoom_detector", None)
    return seen


def require_dataset(path: Path) -> Path:
    """Return ``path``; missing data fails under ``CI=true`` and skips (with the reason) otherwise."""
    if path.exists():
        return path
    msg = f"shared dataset not found: {path} (expected beside the repository, see README)"
    ci_guard.missing(msg)
