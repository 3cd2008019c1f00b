"""Far dice in a large frame: the zoomed read at the frame's own resolution against the fixed 800 px zoom
(2026-12-04; model card "Far dice in a large frame"; :meth:`kosti.vision.reader.DiceReader.zoom_side`).

The shared sets are 640 px photos, so none of them shows what a 1080p webcam or a phone's 12-megapixel photo of a
whole table does: dice with enough pixels to read that are small *at the detector's 640 px input*. Each set's
photos are laid out ``n`` × ``n`` in one frame (``n`` = 2: 1280 px, dice at half their size at the input; 3:
1920 px, a third), labels moved with them (audited labels, ``datasets/label_errors/``), and every frame is read by
the shipped reader with the zoom at each ``(zoom_max)`` of :data:`ZOOM_MAXES` — 800: one 800 px read, the zoom's
size before 2026-12-04 — and with the zoom off. ``--quantile 0.5`` decides a large frame's zoom on its dice's median
instead of their lower quartile (:data:`kosti.models.ZOOM_LARGE_FRAME_QUANTILE`); with zoom_max 800 that is the zoom
as it was before (the model card's "before" column); ``--quantile 0`` on its smallest die. Prints ``kosti eval``'s numbers, wrong reads, the zoomed sides used
and the median time per frame (one core).

Photos of one set share a camera and a table, so a frame of nine of them is a fair stand-in for one table seen
wider; epanemu-dice mixes photos whose dice differ 5× in size, so a frame of its photos is harder than any real
table (the zoom's side follows the median die of the frame; whether a frame larger than 800 px is zoomed, the
lower quartile: :data:`kosti.models.ZOOM_LARGE_FRAME_QUANTILE`).

Usage: ``python benchmarks/far_dice.py [--n 2 3] [--frames 5] [--sets byler-d6:test epanemu-dice:val] [--quantile Q]``
(about 5 minutes on two cores with the defaults).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_errors import labelled_photos  # noqa: E402  (a sibling module)

SHARED = Path(os.environ.get("KOSTI_SHARED", Path(__file__).resolve().parents[2] / "shared" / "datasets"))
#: ``zoom_max`` values compared: 800 = the fixed 800 px zoom of 2026-12-03; 0 = the zoom off.
ZOOM_MAXES = (0, 800, 1280, 1920)


def tiled_frames(name: str, split: str, n: int, frames: int) -> list[tuple[Path, np.ndarray, np.ndarray, np.ndarray]]:
    """Up to ``frames`` frames of ``n`` × ``n`` photos of the split, in the split's order: ``(name, frame (nH, nW,
    3) uint8, label boxes (N, 4) float32 frame px, faces (N,) int8)``. Photos of other sizes than the first are
    skipped."""
    photos: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for _item, img, tx, tv, _ig in labelled_photos(SHARED, name, split):
        if photos and img.shape != photos[0][0].shape:
            continue
        photos.append((img, tx, tv))
        if len(photos) == n * n * frames:
            break
    from kosti.datasets.far_table import tiled_frame

    out = []
    for f in range(len(photos) // (n * n)):
        frame, boxes, faces = tiled_frame(photos[f * n * n:(f + 1) * n * n], n)
        out.append((Path(f"{name}-{n}x{n}-{f}"), frame, boxes, faces))
    return out


def main() -> int:
    from kosti.vision.evaluate import evaluate_predictions
    from kosti.vision.reader import DiceReader

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2, 3], help="photos per side of a frame (2 3)")
    ap.add_argument("--frames", type=int, default=5, help="frames per set and n (5)")
    ap.add_argument("--sets", nargs="+", default=["byler-d6:test", "epanemu-dice:val"], help="set:split ...")
    ap.add_argument("--quantile", type=float, default=None,
                    help="which of a large frame's dice decide its zoom (0.25 as shipped; 0.5: the median, as before)")
    a = ap.parse_args()
    if a.quantile is not None:
        import kosti.vision.reader as reader_module

        vars(reader_module)["ZOOM_LARGE_FRAME_QUANTILE"] = a.quantile  # the module global needs_zoom reads
    for spec in a.sets:
        name, split = spec.split(":")
        for n in a.n:
            frames = tiled_frames(name, split, n, a.frames)
            if not frames:
                print(f"{name} {split}: fewer than {n * n} photos of one size, no {n}x{n} frame")
                continue
            dice = sum(len(f[3]) for f in frames)
            print(f"{name} {split}, {len(frames)} frames of {n}x{n} photos ({frames[0][1].shape[1]} px), {dice} dice")
            for zoom_max in ZOOM_MAXES:
                reader = DiceReader(zoom_below=0) if zoom_max == 0 else DiceReader(zoom_max=zoom_max)
                preds, truths, ms, sides = [], [], [], set()
                for path, frame, tx, tv in frames:
                    t0 = time.perf_counter()
                    preds.append(reader.read(frame))
                    ms.append((time.perf_counter() - t0) * 1e3)
                    sides.add(reader.last_zoom_side)
                    truths.append((path, tx, tv))
                rep = evaluate_predictions(truths, preds)
                doc = rep.to_json()
                label = "zoom off" if zoom_max == 0 else f"zoom_max {zoom_max}"
                print(f"  {label:>14}: P {doc['precision']:.3f} R {doc['recall']:.3f} DA {doc['die_accuracy']:.3f} "
                      f"exact {doc['image_exact']:.3f} wrong {rep.n_wrong}  sides {sorted(sides - {0}) or '-'}  "
                      f"{np.median(ms):.0f} ms/frame")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
