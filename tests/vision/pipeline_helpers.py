"""Helpers shared by the live-pipeline tests (test_pipeline.py, test_pipeline_recovery.py,
test_pipeline_real.py, test_settle.py, test_clips.py): the shared datasets' paths, Detections from rows, a
scripted rest–hand–rest clip, a frame under a dimmer light, and the dataset guard."""

from __future__ import annotations

from pathlib import Path

import ci_guard
import numpy as np

from kosti.vision.detections import Detections
from kosti.vision.pipeline import ThrowDetector

REPO = Path(__file__).resolve().parents[2]
BYLER = REPO.parent / "shared" / "datasets" / "byler-d6"
SKOVY = REPO.parent / "shared" / "datasets" / "skovy-webcam"
DETECTOR = REPO / "models" / "dice_det.onnx"


def dimmed(img: np.ndarray, light: float = 0.45) -> np.ndarray:
    """``img`` (uint8) under ``light`` times the light (a dim lamp: 0.45, ``benchmarks/robustness.py``'s "dark-0.45")."""
    return (img.astype(np.float32) * light + 0.5).astype(np.uint8)


def dets(rows: list[tuple[float, float, float, float, int, float]]) -> Detections:
    """Detections from ``(x1, y1, x2, y2, value, value_confidence)`` rows (detector confidence 0.9)."""
    if not rows:
        return Detections.empty()
    a = np.array(rows, dtype=np.float64)
    return Detections(a[:, :4], np.full(len(a), 0.9), a[:, 4].astype(int), a[:, 5])


def _rest_hand_rest(det: ThrowDetector) -> list:
    """A still table, a hand sweeping over it, the same still table again (30 fps)."""
    still = np.full((180, 320, 3), 90, np.uint8)
    still[50:80, 60:90] = 230
    frames = [still] * 30
    for k in range(8):
        f = still.copy()
        f[60:170, 40 * k : 40 * k + 90] = (120, 150, 200)
        frames.append(f)
    frames += [still] * 30
    from kosti.vision.sources import Frame

    return [det.process(Frame(f, i / 30, i)) for i, f in enumerate(frames)]


def _dataset_or_skip(root: Path = BYLER, models: bool = True) -> Path:
    """``root`` when its photos are there (fails in CI, skips elsewhere) and, with ``models``, the shipped
    detector too (fails without it: the models are committed)."""
    if not (root / "images").is_dir():
        msg = f"shared dataset missing: {root} (see /work/shared/datasets/README.md)"
        ci_guard.missing(msg)
    if models:
        ci_guard.shipped(DETECTOR, "shipped detector")
    return root
