"""How the reader holds up when the table is not the one in the photos: the same labelled photos read again
after a camera fault or a change of dice colour, side by side with the photos as shipped.

A real table differs from the shared sets in ways no label changes: a warmer lamp, a phone camera's JPEG, a
shaky or badly focused webcam, a set of dice in another colour, a phone held in portrait. Each fault of
:data:`FAULTS` is applied to every whole frame (labels moved with it where the frame turns or shrinks), the
frame read by the reader at its shipped defaults, and scored with ``kosti eval``'s definitions
(:func:`kosti.vision.evaluate.evaluate_predictions`). Besides precision, recall, die_accuracy and image_exact it
counts **wrong reads**: matched dice read as a face other than the label's (an uncertain die asks the table and
is not one). A fault may make dice uncertain; it should not make them wrong.

The faults are sized for dice of 30–40 px (byler-d6 test's): shake 4 px is a hand-held phone at 1/30 s;
9 px smears the pips into lines, where *uncertain* is the right answer. ``portrait`` turns the frame 90°; the
photos of the two default sets are square, so on them it tests dice seen turned, and a tall frame's letterbox
only on a set of wide frames (``--sets skovy-webcam:test``).

Usage: ``python benchmarks/robustness.py [--sets byler-d6:test,rune55-dedup:val] [--faults none,grey,…]
[--det D.onnx] [--cls C.onnx] [--not-die-prob P] [--dim-gain G] [--json OUT]``. Photos listed in ``datasets/label_errors/`` are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_errors import without_label_errors  # noqa: E402
from select_operating_point import SHARED  # noqa: E402  (a sibling module)

from kosti.datasets.prepare import gamma_curve, jpeg_roundtrip, turn_hue  # noqa: E402  (camera_degraded's faults)

Frame = np.ndarray
Boxes = np.ndarray


def _gains(b: float, g: float, r: float) -> Callable[[Frame], Frame]:
    return lambda im: np.clip(im * np.array([b, g, r], np.float32) + 0.5, 0, 255).astype(np.uint8)


def _shake(px: int) -> Callable[[Frame], Frame]:
    kernel = np.ones((1, px), np.float32) / px
    return lambda im: cv2.filter2D(im, -1, kernel, borderType=cv2.BORDER_REFLECT)


def _noise(sigma: float) -> Callable[[Frame], Frame]:
    def f(im: Frame) -> Frame:
        rng = np.random.default_rng(0)
        return np.clip(im + rng.normal(0.0, sigma, im.shape), 0, 255).astype(np.uint8)
    return f


def _half(im: Frame, boxes: Boxes) -> tuple[Frame, Boxes]:
    return cv2.resize(im, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA), boxes * 0.5


def _portrait(im: Frame, boxes: Boxes) -> tuple[Frame, Boxes]:
    h = im.shape[0]
    x1, y1, x2, y2 = boxes.T
    return cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE), np.stack([h - y2, x1, h - y1, x2], 1).reshape(-1, 4)


def _photometric(f: Callable[[Frame], Frame]) -> Callable[[Frame, Boxes], tuple[Frame, Boxes]]:
    return lambda im, boxes: (np.ascontiguousarray(f(im)), boxes)


#: Name → ``(frame (H, W, 3) uint8 BGR, label boxes (M, 4) xyxy px) -> (frame, boxes)``.
FAULTS: dict[str, Callable[[Frame, Boxes], tuple[Frame, Boxes]]] = {
    "none": lambda im, boxes: (im, boxes),
    "hue+60": _photometric(lambda im: turn_hue(im, 30)),
    "hue+120": _photometric(lambda im: turn_hue(im, 60)),
    "grey": _photometric(lambda im: cv2.cvtColor(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)),
    "warm-lamp": _photometric(_gains(0.7, 0.95, 1.2)),
    "cool-light": _photometric(_gains(1.2, 1.0, 0.75)),
    "dim-0.6": _photometric(lambda im: (im * 0.6).astype(np.uint8)),
    "dark-0.45": _photometric(lambda im: (im * 0.45).astype(np.uint8)),
    "bright-gamma0.5": _photometric(lambda im: gamma_curve(im, 0.5)),
    "focus-1px": _photometric(lambda im: cv2.GaussianBlur(im, (0, 0), 1.0)),
    "focus-2px": _photometric(lambda im: cv2.GaussianBlur(im, (0, 0), 2.0)),
    "shake-4px": _photometric(_shake(4)),
    "shake-9px": _photometric(_shake(9)),
    "jpeg-40": _photometric(lambda im: jpeg_roundtrip(im, 40)),
    "jpeg-20": _photometric(lambda im: jpeg_roundtrip(im, 20)),
    "noise-12": _photometric(_noise(12.0)),
    "half-size": _half,
    "portrait": _portrait,
}


def measure(reader, name: str, split: str, faults: list[str]) -> dict[str, dict]:
    """``kosti eval`` metrics of ``name``'s ``split`` under each fault, plus ``wrong`` (matched dice read as another
    face) and ``uncertain`` (matched dice left uncertain), keyed by fault name."""
    from kosti.vision.evaluate import evaluate_predictions, load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(SHARED / name, split)
    items = without_label_errors(ds.items, name, split)[0]
    frames = []
    for item in items:
        img = load_image(item.image)
        h, w = img.shape[:2]
        frames.append((item.image, img, *read_labels(item.label, w, h, ds.class_values)))
    out = {}
    for fault in faults:
        truths, preds = [], []
        for path, img, boxes, values in frames:
            im, bx = FAULTS[fault](img, boxes)
            truths.append((path, bx.astype(np.float32), values))
            preds.append(reader.read(np.ascontiguousarray(im)))
        rep = evaluate_predictions(truths, preds)
        metrics = rep.to_json()
        doc = {k: metrics[k] for k in ("precision", "recall", "die_accuracy", "image_exact")}
        doc["wrong"], doc["uncertain"] = rep.n_wrong, rep.n_unsure
        doc["matched"] = rep.n_matched
        out[fault] = doc
        print(f"{name}:{split} {fault:12s} P {doc['precision']:.3f} R {doc['recall']:.3f} "
              f"DA {doc['die_accuracy']:.3f} exact {doc['image_exact']:.3f} wrong {doc['wrong']} "
              f"uncertain {doc['uncertain']} of {doc['matched']}", flush=True)
    return out


def fault_names(ap: argparse.ArgumentParser, text: str) -> list[str]:
    """The comma-separated ``--faults`` value as names of :data:`FAULTS`; an unknown name ends the program with a
    one-line usage error (``ap.error``)."""
    faults = text.split(",")
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        ap.error(f"unknown faults {unknown}; known: {', '.join(FAULTS)}")
    return faults


def main() -> int:
    from kosti.vision.reader import DiceReader

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="byler-d6:test,rune55-dedup:val",
                    help="comma-separated SET:SPLIT of ../shared/datasets (default %(default)s)")
    ap.add_argument("--faults", default=",".join(FAULTS), help="comma-separated names of FAULTS (default: all)")
    ap.add_argument("--det", help="detector (default: the shipped one)")
    ap.add_argument("--cls", help="face classifier (default: the shipped one)")
    ap.add_argument("--not-die-prob", type=float, default=None,
                    help="the reader's not_die_prob (default: the shipped one; 1 = the rule off)")
    ap.add_argument("--dim-gain", type=float, default=None,
                    help="the reader's dim_gain (default: the shipped one; 0 = dim frames read as they come)")
    ap.add_argument("--json", type=Path, help="write the results there")
    args = ap.parse_args()
    faults = fault_names(ap, args.faults)
    entries = args.sets.split(",")
    if not all(e.count(":") == 1 for e in entries):
        ap.error(f"--sets takes SET:SPLIT entries, comma-separated; got {args.sets!r}")
    from kosti.vision.evaluate import DatasetError
    from kosti.vision.onnx_backend import ModelLoadError
    from kosti.vision.reader import ReaderSettingsError

    extra = {k: v for k, v in (("not_die_prob", args.not_die_prob), ("dim_gain", args.dim_gain)) if v is not None}
    try:
        reader = DiceReader(args.det, args.cls, **extra)
        print(reader.describe())
        sets: dict[str, dict[str, dict]] = {}
        for entry in entries:
            name, split = entry.split(":")
            sets[entry] = measure(reader, name, split, faults)
    except (DatasetError, ModelLoadError, ReaderSettingsError) as exc:
        ap.error(str(exc))
    if args.json:
        args.json.write_text(json.dumps({"reader": reader.describe(), "sets": sets}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
