"""Choose the reader's zoom for small dice (``zoom_imgsz``, ``zoom_below``) on the selection splits.

The zoom (:meth:`kosti.vision.reader.DiceReader.needs_zoom`, :meth:`~kosti.vision.reader.DiceReader.merge_zoomed`)
reads a frame whose dice are small a second time with the detector at a larger input, and keeps that read's dice
plus the first read's dice it missed. This script reads every photo of the selection splits (rune55-dedup val +
epanemu-dice val, without the photos of ``datasets/label_errors/``, as :mod:`select_operating_point`) once at the
detector's own input and once at each
candidate ``zoom_imgsz``, all at the shipped operating point, then scores every ``zoom_imgsz`` × ``zoom_below`` of
the grid (0 = off) with ``kosti eval``'s definitions (:func:`kosti.vision.evaluate.evaluate_predictions`).

The choice: the best selection ``image_exact``; among ties the smallest ``zoom_below`` (the fewest frames read twice:
the Raspberry Pi's time), then the smaller ``zoom_imgsz``. The test sets (byler-d6 test, skovy-webcam) are only
measured at the choice.

Usage: ``python benchmarks/select_zoom.py [--det D.onnx --cls C.onnx] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_errors import without_label_errors  # noqa: E402
from select_operating_point import MEASURE, SELECT, SHARED, _names  # noqa: E402  (a sibling module)

#: Zoomed input sides tried (multiples of 32 above the detector's 640; det_v7/det_v8 learnt at 800).
SIZES = (704, 736, 800, 960)
#: ``zoom_below`` values tried, px of the 640 px input (0 = off).
BELOW = (0.0, 16.0, 20.0, 24.0, 28.0, 32.0, 36.0, 40.0)


def sizes(reader) -> tuple[int, ...]:
    """The sides of :data:`SIZES` above the reader's detector input (a zoom must read larger)."""
    return tuple(s for s in SIZES if s > reader.detector.input_side)


def collect(reader, name: str, split: str) -> list[dict]:
    """Per photo of ``name``'s ``split`` (listed label errors left out): its labels, the first read and each
    zoomed read (``(dice, candidates)`` of :meth:`DiceReader._read_with`)."""
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(SHARED / name, split)
    zoomed = {s: reader.detector.resized(s) for s in sizes(reader)}  # main() refused a model that cannot zoom
    out = []
    for item in without_label_errors(ds.items, name, split)[0]:
        img = load_image(item.image)
        h, w = img.shape[:2]
        tx, tv = read_labels(item.label, w, h, ds.class_values)
        img = reader.exposed(img)[0]  # as read() sees the frame (a dim one brightened)
        out.append(dict(image=item.image, tx=tx, tv=tv, hw=(h, w), first=reader._read_with(reader.detector, img),
                        zoomed={s: reader._read_with(d, img) for s, d in zoomed.items()}))
    return out


def score(reader, recs: list[dict], size: int, below: float) -> dict:
    """``kosti eval`` metrics of ``recs`` (from :func:`collect`) with the zoom at ``size`` / ``below`` (0 = off),
    plus ``zoomed``: how many photos were read twice. ``reader`` must have a zoom on (``needs_zoom`` answers False
    without one); its ``zoom_below`` is set to ``below``."""
    from kosti.vision.evaluate import evaluate_predictions

    reader.zoom_below = below
    preds, n = [], 0
    for r in recs:
        dice, cands = r["first"]
        if below > 0 and reader.needs_zoom(dice, cands, r["hw"]):
            dice, n = reader.merge_zoomed(r["first"], r["zoomed"][size])[0], n + 1
        preds.append(dice)
    rep = evaluate_predictions([(r["image"], r["tx"], r["tv"]) for r in recs], preds).to_json()
    doc = {k: rep[k] for k in ("precision", "recall", "die_accuracy", "image_exact")}
    doc["zoomed"] = n
    return doc


def main() -> int:
    from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
    from kosti.vision.reader import DiceReader, ReaderSettingsError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--det", type=Path, default=DETECTOR_ONNX)
    ap.add_argument("--cls", type=Path, default=CLASSIFIER_ONNX)
    ap.add_argument("--json", type=Path, default=None, help="also write the choice and all scores here")
    a = ap.parse_args()
    # the shipped operating point; a zoom on, so that needs_zoom answers (score() sets zoom_below)
    try:
        reader = DiceReader(a.det, a.cls, zoom_below=max(BELOW), zoom_imgsz=max(SIZES))
    except ReaderSettingsError as e:  # e.g. an export of one input size, which cannot zoom
        raise SystemExit(f"select_zoom: {e}") from None
    sel = [r for name, split in SELECT for r in collect(reader, name, split)]
    print(f"selection: {len(sel)} photos of {_names(SELECT)}")
    sides = sizes(reader)
    grid = {(s, b): score(reader, sel, s, b) for s in sides for b in BELOW if b > 0 or s == sides[0]}
    for (s, b), doc in grid.items():
        print(f"zoom_imgsz {s} zoom_below {b:>4}: " + " ".join(f"{k} {v}" for k, v in doc.items()))
    best = max(grid, key=lambda k: (grid[k]["image_exact"], -k[1], -k[0]))
    print(f"chosen: zoom_imgsz {best[0]} zoom_below {best[1]}: {grid[best]}")
    measured = {}
    for name, split in MEASURE:
        recs = collect(reader, name, split)
        measured[name] = {"off": score(reader, recs, best[0], 0.0), "chosen": score(reader, recs, *best)}
        print(f"{name} {split}: off {measured[name]['off']}, at the choice {measured[name]['chosen']}")
    if a.json:
        a.json.write_text(json.dumps({
            "zoom_imgsz": best[0], "zoom_below": best[1], "selection": _names(SELECT), "selection_photos": len(sel),
            "selection_scores": grid[best], "measured": measured,
            "grid": [{"zoom_imgsz": s, "zoom_below": b, **doc} for (s, b), doc in grid.items()]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
