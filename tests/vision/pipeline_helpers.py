"""Helpers shared by the live-pipeline tests (test_pipeline.py, test_pipeline_recovery.py,
test_pipeline_real.py, test_settle.py, test_clips.py): the shared datasets' paths, Detections from rows, a
scripted rest–hand–rest clip, a frame under a dimmer light, the dataset guard, and the per-die cloth scene
(test_per_die.py, test_rest_memory.py) with its reader."""

from __future__ import annotations

from pathlib import Path

import ci_guard
import cv2
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


DICE = [(200, 150), (300, 200), (420, 140)]  # centres of three white 30 px "dice" on a 640x360 green cloth


def cloth_frame(arm_x: float | None, touch: bool = False, seed: int = 0) -> np.ndarray:
    """The three :data:`DICE` on a 640×360 green cloth with a little sensor noise (``seed``), and a dark arm from the
    bottom edge at ``arm_x`` (None: no arm) that reaches up over the dice' row when ``touch`` (test_per_die.py,
    test_rest_memory.py)."""
    rng = np.random.default_rng(seed)
    img = np.full((360, 640, 3), (40, 120, 50), np.uint8)
    for x, y in DICE:
        cv2.rectangle(img, (x - 15, y - 15), (x + 15, y + 15), (235, 235, 235), -1)
    if arm_x is not None:  # a dark arm from the bottom edge, moving sideways
        cv2.rectangle(img, (int(arm_x), 250 if not touch else 120), (int(arm_x) + 90, 359), (60, 70, 90), -1)
    return np.clip(img.astype(np.int16) + rng.normal(0, 2, img.shape).round().astype(np.int16), 0, 255).astype(np.uint8)


class WhiteSquares:
    """A reader of the test's cloth: every white square is a die showing 5, surely (what a reader sees there)."""

    def read(self, image: np.ndarray):
        from kosti.vision.detections import Detections

        bright = (image.min(axis=2) > 200).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(bright, 8)
        boxes = [[x, y, x + w, y + h] for x, y, w, h, a in stats[1:] if a >= 200]
        k = len(boxes)
        return Detections(np.array(boxes, float).reshape(-1, 4), np.full(k, 0.95), np.full(k, 5), np.full(k, 0.97))
