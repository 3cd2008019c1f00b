"""What the review page's boxes to confirm buy (issue 41 item 2): on a labelled folder, how many dice the reader
misses, how many boxes :func:`kosti.datasets.suggest.uncertain_boxes` offers beside its dice, and how many of
those lie on a missed die (IoU ≥ 0.5) — the dice the user confirms with a tap instead of drawing.

Usage::

    python benchmarks/suggested_boxes.py DATASET[:SPLIT] [...]   # e.g. a proof_new_dice.py capture folder:test

Prints one line per set; the reader is the shipped one (``--model``/``--cls-model`` for others).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from kosti.datasets.prepare import read_labels, split_images
from kosti.datasets.suggest import uncertain_boxes
from kosti.models import MODELS_DIR
from kosti.vision.detections import box_iou
from kosti.vision.reader import DiceReader, load_image


def measure(reader: DiceReader, data: Path, split: str) -> dict[str, int]:
    """``{"photos", "dice", "missed", "offered", "offered_on_missed"}`` of the reader on ``data``/``split``."""
    out = {"photos": 0, "dice": 0, "missed": 0, "offered": 0, "offered_on_missed": 0}
    for img in split_images(data, split):
        image = load_image(img)
        truth, _faces = read_labels(img, image.shape[1], image.shape[0])
        dice, candidates = reader.read_candidates(image)
        offered = uncertain_boxes(candidates, dice.xyxy)
        found = (box_iou(truth, dice.xyxy) >= 0.5).any(1) if len(dice) and len(truth) else np.zeros(len(truth), bool)
        boxes = np.asarray([s["box"] for s in offered]).reshape(-1, 4)
        on_missed = (box_iou(truth, boxes) >= 0.5).any(1) & ~found if len(boxes) and len(truth) else found & False
        out["photos"] += 1
        out["dice"] += len(truth)
        out["missed"] += int((~found).sum())
        out["offered"] += len(offered)
        out["offered_on_missed"] += int(on_missed.sum())
    return out


def main() -> None:
    """Command line: see the module docstring."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", nargs="+", help="DATASET[:SPLIT] (a YOLO folder or data.yaml; default split train)")
    p.add_argument("--model", type=Path, default=MODELS_DIR / "dice_det.onnx")
    p.add_argument("--cls-model", type=Path, default=MODELS_DIR / "dice_cls.onnx")
    a = p.parse_args()
    reader = DiceReader(a.model, a.cls_model)
    for spec in a.data:
        path, _, split = spec.partition(":") if ":" in spec and not Path(spec).exists() else (spec, "", "")
        m = measure(reader, Path(path), split or "train")
        print(f"{spec}: {m['photos']} photos, {m['dice']} dice, missed {m['missed']}, boxes offered {m['offered']}, "
              f"on a missed die {m['offered_on_missed']}")


if __name__ == "__main__":
    main()
