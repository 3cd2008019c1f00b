"""Shipped model weights and their model card (``models/README.md``).

Files here are loaded by default by :mod:`kosti.vision`:

* ``dice_det.onnx`` — YOLO11n detector, one class ``die``; Ultralytics ONNX export (metadata holds
  ``imgsz``, ``stride``, ``names``), raw output ``(1, 5, N)`` = ``cx, cy, w, h, score`` in letterbox pixels.
* ``dice_cls.onnx`` — YOLO11n-cls face classifier on :func:`kosti.vision.crops.square_crop` crops,
  classes ``1 2 3 4 5 6 x`` (``x`` = unreadable: cocked, blurred, hidden or not a die).
"""

from __future__ import annotations

from pathlib import Path

#: Folder holding the shipped weights (inside the installed package or the source checkout).
MODELS_DIR = Path(__file__).resolve().parent
DETECTOR_ONNX = MODELS_DIR / "dice_det.onnx"
CLASSIFIER_ONNX = MODELS_DIR / "dice_cls.onnx"
