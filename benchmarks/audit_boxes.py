"""Contact sheets of every disagreement between the reader and a set's labels, for auditing the labels by eye.

Reads one split of a YOLO dataset with the shipped reader (``DiceReader()``'s defaults, as ``kosti eval``) and
cuts a crop around each **extra** box (a read no label matched), each **missed** label and each **wrong** read
(matched, face read differently or left uncertain). Each crop shows the box with 1× its size of context on every
side, enlarged to a 192 px tile, the box outlined (magenta: the reader's box; green: the label's box) and captioned
with its id. Tiles are laid out 5 × 4 per sheet (``sheet_NN.png``); ``index.json`` lists every id with its photo,
kind, box (pixels of the photo), the label's face and the reader's face and probabilities, so that an auditor can
write down, per id, what the crop shows (``datasets/label_errors/<set>.json``).

Usage: ``python benchmarks/audit_boxes.py --data ../shared/datasets/epanemu-dice --split val --out /tmp/audit``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

TILE, COLS, ROWS = 192, 5, 4
MAGENTA, GREEN = (255, 0, 255), (0, 200, 0)


def crop_tile(image: np.ndarray, box: np.ndarray, color: tuple[int, int, int], caption: str) -> np.ndarray:
    """A ``(TILE + 20, TILE, 3)`` uint8 BGR tile: ``box`` (``[x1, y1, x2, y2]`` pixels of ``image``) with its own
    size of context on each side (at least 24 px), enlarged to ``TILE`` px, the box outlined in ``color`` and
    ``caption`` written under it."""
    h, w = image.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1)
    pad = max(side, 24.0)
    cx, cy, half = (x1 + x2) / 2, (y1 + y2) / 2, side / 2 + pad
    a, b = int(max(0, cx - half)), int(max(0, cy - half))
    c, d = int(min(w, cx + half)), int(min(h, cy + half))
    crop = image[b:d, a:c]
    s = TILE / max(crop.shape[:2])
    big = cv2.resize(crop, (max(1, round(crop.shape[1] * s)), max(1, round(crop.shape[0] * s))),
                     interpolation=cv2.INTER_CUBIC)
    tile = np.full((TILE + 20, TILE, 3), 255, np.uint8)
    tile[: big.shape[0], : big.shape[1]] = big
    p1 = (round((x1 - a) * s), round((y1 - b) * s))
    p2 = (round((x2 - a) * s), round((y2 - b) * s))
    cv2.rectangle(tile, p1, p2, color, 1)
    cv2.putText(tile, caption, (3, TILE + 15), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    return tile


def audit(report: Any, out: Path) -> list[dict[str, Any]]:
    """Write ``out/sheet_NN.png`` and ``out/index.json`` for an :class:`kosti.vision.evaluate.EvalReport`;
    returns the index entries (``id``, ``photo``, ``kind`` = extra / missed / wrong, ``box``, ``label_face``,
    ``read_face`` (0 = uncertain), ``read_prob``, ``det_conf``)."""
    from kosti.vision.reader import load_image

    out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    tiles: list[np.ndarray] = []
    for rec in report.records:
        if rec.exact:
            continue
        img = load_image(rec.image)
        p = rec.pred
        items: list[tuple[str, np.ndarray, tuple[int, int, int], int, int]] = []
        items += [("extra", p.xyxy[j], MAGENTA, 0, j) for j in rec.extra]
        items += [("missed", rec.true_xyxy[k], GREEN, int(rec.true_values[k]), -1) for k in rec.missed]
        items += [("wrong", p.xyxy[j], MAGENTA, int(rec.true_values[k]), j) for k, j in rec.wrong]
        for kind, box, color, label_face, j in items:
            n = len(entries)
            read = int(p.value[j]) if j >= 0 else None
            guess = p.data.get("guess") if j >= 0 else None
            entries.append({
                "id": n, "photo": rec.image.name, "kind": kind, "box": [round(float(v), 1) for v in box],
                "label_face": label_face or None, "read_face": read,
                "read_guess": int(guess[j]) if guess is not None else None,
                "read_prob": round(float(p.value_confidence[j]), 3) if j >= 0 else None,
                "det_conf": round(float(p.confidence[j]), 3) if j >= 0 else None,
            })
            what = {"extra": f"x read {read or '?'}", "missed": f"miss t{label_face}",
                    "wrong": f"t{label_face} read {read or '?'}"}[kind]
            tiles.append(crop_tile(img, box, color, f"#{n} {what}"))
    per = COLS * ROWS
    for s in range(0, len(tiles), per):
        chunk = tiles[s:s + per] + [np.full_like(tiles[0], 255)] * (per - len(tiles[s:s + per]))
        rows = [np.hstack(chunk[r * COLS:(r + 1) * COLS]) for r in range(ROWS)]
        path = out / f"sheet_{s // per:02d}.png"
        if not cv2.imwrite(str(path), np.vstack(rows)):
            raise OSError(f"cannot write {path}")
    (out / "index.json").write_text(json.dumps(entries, indent=1))
    return entries


def main() -> int:
    from kosti.vision.evaluate import evaluate, load_dataset
    from kosti.vision.reader import DiceReader

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="data.yaml or a set folder")
    ap.add_argument("--split", default="val")
    ap.add_argument("--out", type=Path, required=True, help="folder for the sheets and index.json")
    a = ap.parse_args()
    data = a.data / "data.yaml" if a.data.is_dir() and (a.data / "data.yaml").exists() else a.data
    report = evaluate(DiceReader(), load_dataset(data, a.split), compute_map=False)
    entries = audit(report, a.out)
    kinds = {k: sum(e["kind"] == k for e in entries) for k in ("extra", "missed", "wrong")}
    print(f"{len(entries)} crops in {a.out} ({kinds})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
