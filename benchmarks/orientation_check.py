"""How the picture's turn matters to the reader, and how well :class:`kosti.vision.orientation.OrientationCheck`
tells it (2026-12-04; model card "After v1.3").

1. ``--reads``: each listed split read by the shipped reader with every photo turned 0°, 90° and 180° clockwise
   (labels turned with it; audited labels, ``datasets/label_errors/``): precision, recall, die accuracy,
   image_exact, wrong and uncertain reads.
2. Slopes (always): per set, the photos with ≥ 3 labelled dice, how many have a vertical slope
   (:func:`kosti.vision.orientation.perspective_slopes`) above :data:`~kosti.vision.orientation.MIN_SLOPE` in size,
   how many of those shrink upwards, and the median slope.
3. Suggestions (always): ``--draws`` random tables per set and turn — :data:`~kosti.vision.orientation.WINDOW`
   photos of the set drawn without replacement, their label boxes turned — fed to an ``OrientationCheck``. A photo
   from a seat (epanemu-dice) turned by ``t`` should be answered with the turn back, ``(360 - t) % 360`` (nothing
   for 0); a top-down set (rune55-dedup, byler-d6) with nothing (skovy-webcam has no photo with 3 dice). Prints the share of right, wrong
   and missing answers.

Usage: ``python benchmarks/orientation_check.py [--reads] [--draws 200]``
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_errors import labelled_photos, on_ignore_region  # noqa: E402  (a sibling module)

SHARED = Path(os.environ.get("KOSTI_SHARED", Path(__file__).resolve().parents[2] / "shared" / "datasets"))
#: ``(set, split, seen from a seat)``: photos taken from a seat (the far side up) or from above.
SETS = (("epanemu-dice", "train", True), ("epanemu-dice", "val", True), ("rune55-dedup", "val", False),
        ("byler-d6", "test", False))
READ_SETS = (("epanemu-dice", "val"), ("rune55-dedup", "val"), ("byler-d6", "test"))


def _labelled(name: str, split: str) -> list[tuple[np.ndarray, int, int]]:
    """``(boxes, width, height)`` of every photo of the split, audited labels (photos listed without a fix left
    out; :func:`label_errors.labelled_photos`)."""
    return [(xy, img.shape[1], img.shape[0]) for _, img, xy, _, _ in labelled_photos(SHARED, name, split)]


def reads() -> None:
    """Part 1: the shipped reader on turned photos."""
    from kosti.vision.evaluate import evaluate_predictions
    from kosti.vision.reader import DiceReader
    from kosti.vision.sources import rotate_frame, turn_boxes

    reader = DiceReader()
    for name, split in READ_SETS:
        for degrees in (0, 90, 180):
            truths, preds = [], []
            for item, img, tx, tv, ig in labelled_photos(SHARED, name, split):
                h, w = img.shape[:2]
                det = reader.read(rotate_frame(img, degrees))
                ttx, tig = turn_boxes(tx, w, h, degrees), turn_boxes(ig, w, h, degrees)
                truths.append((item.image, ttx, tv))
                preds.append(det[~on_ignore_region(det.xyxy, ttx, tig)])
            rep = evaluate_predictions(truths, preds)
            j = rep.to_json()
            print(f"reads {name} {split} turned {degrees:3d}: P {j['precision']:.3f} R {j['recall']:.3f} "
                  f"DA {j['die_accuracy']:.3f} exact {j['image_exact']:.3f} wrong {rep.n_wrong} "
                  f"uncertain {rep.n_unsure}", flush=True)


def slopes_and_suggestions(draws: int) -> None:
    """Parts 2 and 3."""
    from kosti.vision.orientation import MIN_DICE, MIN_SLOPE, WINDOW, OrientationCheck, perspective_slopes
    from kosti.vision.sources import turn_boxes

    rng = np.random.default_rng(0)
    for name, split, seat in SETS:
        photos = [p for p in _labelled(name, split) if len(p[0]) >= MIN_DICE]
        ys = np.array([s[1] for p in photos if (s := perspective_slopes(*p)) is not None and np.isfinite(s[1])])
        strong = ys[np.abs(ys) > MIN_SLOPE]
        print(f"slopes {name} {split}: {len(photos)} photos with >= {MIN_DICE} dice, {len(strong)} with a vertical "
              f"slope above {MIN_SLOPE}, {int((strong > 0).sum())} of them shrinking upwards; median "
              f"{float(np.median(ys)) if len(ys) else float('nan'):.2f}")
        if len(photos) < WINDOW:
            continue
        for degrees in (0, 90, 180, 270):
            want = (360 - degrees) % 360 if seat else 0
            right = wrong = none = 0
            for _ in range(draws):
                check = OrientationCheck()
                for k in rng.choice(len(photos), WINDOW, replace=False):
                    xy, w, h = photos[k]
                    tw, th = (w, h) if degrees in (0, 180) else (h, w)
                    check.add(turn_boxes(xy, w, h, degrees), tw, th)
                got = check.suggestion() or 0
                right += got == want
                none += got == 0 and want != 0
                wrong += got not in (0, want)
            print(f"suggest {name} {split} turned {degrees:3d} (right answer {want or 'none'}): right {right / draws:.2f} "
                  f"wrong {wrong / draws:.2f} missing {none / draws:.2f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reads", action="store_true", help="also read every split turned (about 5 minutes)")
    ap.add_argument("--draws", type=int, default=200, help="random tables per set and turn (200)")
    a = ap.parse_args()
    if a.reads:
        reads()
    slopes_and_suggestions(a.draws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
