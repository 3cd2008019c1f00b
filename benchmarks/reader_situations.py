"""The reader in rendered camera situations (issue 38's camera-situation table): P / R / DA / image_exact per situation.

Each situation renders ``--scenes`` seeded frames with the project's renderer (``kosti.sim``) and scores the reader on
them with the evaluation's own matching (:func:`kosti.vision.evaluate.evaluate_predictions`; IoU ≥ 0.5, an uncertain
die counts wrong, except on a face that is no pip face, where *uncertain is the right answer*: its label is 0):

* ``overhead_plain``: a fixed camera straight above (tilt ≤ 0.06), 720 × 576, 3–6 white, ivory or black dice of
  25–40 px under a hard shadow (0.6–0.9) — the mission's set-up, where v1.3 read clear 6s as 5 on real photos;
* ``coloured``: 1280 × 720, 4–6 dice of random colours (:func:`kosti.sim.dice.random_style`), 40–60 px, seen
  slightly from the side;
* ``translucent``: the same with the translucent styles (green, blue, casino red);
* ``custom_faces``: blue dice with a skull for 1 and an emblem for 6, and ivory numeral dice (every face a digit);
  the label of a marked face is 0 (uncertain is right; a face read is wrong, and so is a die not boxed);
* ``far``: 1280 × 720, 6–8 ivory or white dice of 14–20 px (a camera far above a large table);
* ``container``: three ivory dice of 48 px inside a ring of tape, a tray or a box lid (``tests/vision/
  test_reader_scenes.py``'s scenes).

Usage::

    python benchmarks/reader_situations.py [--scenes 12] [--model DET] [--cls-model CLS] [--value-conf V] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.datasets.rendered_crops import scene_positions
from kosti.sim.dice import STYLES, DieStyle, random_style
from kosti.sim.table_top import BACKGROUNDS, render_table
from kosti.vision import inner_look
from kosti.vision.evaluate import EvalReport, evaluate_predictions
from kosti.vision.reader import DiceReader

#: One rendered scene: ``(frame (H, W, 3) uint8 BGR, label boxes (N, 4) px, label values (N,): 1–6, 0 = no pip face)``.
Scene = tuple[np.ndarray, np.ndarray, np.ndarray]

CUSTOM_STYLES = (
    DieStyle("skull_emblem", (170, 90, 40), (235, 235, 235), marks=((1, "skull"), (6, "emblem"))),
    DieStyle("numeral", (200, 228, 240), (40, 40, 150), corner_radius=0.2,
             marks=tuple((v, "numeral") for v in range(1, 7))),
)
TRANSLUCENT = ("translucent_green", "translucent_blue", "casino_red")


def _scene(rng: np.random.Generator, seed: int, styles: list[DieStyle], side: float, size: tuple[int, int],
           tilt: tuple[float, float], shadow: float, n: int, background: str | np.ndarray | None = None) -> Scene:
    faces = [int(rng.integers(1, 7)) for _ in range(n)]
    dice = [(v, x, y, float(rng.uniform(0, 90))) for v, (x, y) in zip(faces, scene_positions(rng, n, side, size, tries=300))]
    kind = background if background is not None else BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
    frame, boxes = render_table(dice, kind, styles if len(styles) == n else styles[0], size=size, die_px=side,
                                seed=seed, tilt=tilt, glare=float(rng.uniform(0.0, 0.3)), shadow=shadow)
    labels = [0 if dict(st.marks).get(v, "pips") != "pips" else v
              for v, st in zip(faces, styles if len(styles) == n else [styles[0]] * n)]
    return frame, boxes, np.array(labels, np.int8)


def overhead_plain(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 1])
    st = STYLES[("white_black", "ivory", "black_white")[seed % 3]]
    return _scene(rng, seed, [st], float(rng.uniform(25, 40)), (720, 576),
                  (float(rng.normal(0, 0.03)), float(rng.uniform(-0.06, 0.06))), float(rng.uniform(0.6, 0.9)),
                  int(rng.integers(3, 7)))


def coloured(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 2])
    n = int(rng.integers(4, 7))
    return _scene(rng, seed, [random_style(rng) for _ in range(n)], float(rng.uniform(40, 60)), (1280, 720),
                  (float(rng.normal(0, 0.05)), float(rng.uniform(0.0, 0.15))), 0.45, n)


def translucent(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 3])
    n = int(rng.integers(4, 7))
    return _scene(rng, seed, [STYLES[TRANSLUCENT[int(rng.integers(3))]] for _ in range(n)],
                  float(rng.uniform(40, 60)), (1280, 720), (float(rng.normal(0, 0.05)), float(rng.uniform(0.0, 0.15))),
                  0.45, n)


def custom_faces(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 4])
    return _scene(rng, seed, [CUSTOM_STYLES[seed % 2]], float(rng.uniform(43, 65)), (1280, 720),
                  (float(rng.normal(0, 0.05)), float(rng.uniform(0.0, 0.18))), float(rng.uniform(0.3, 0.55)), 5)


def far(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 5])
    return _scene(rng, seed, [STYLES[("ivory", "white_black")[seed % 2]]], float(rng.uniform(14, 20)), (1280, 720),
                  (float(rng.normal(0, 0.04)), float(rng.uniform(0.0, 0.1))), 0.45, int(rng.integers(6, 9)))


def container(seed: int) -> Scene:
    rng = np.random.default_rng([seed, 38])
    cx, cy = 640 + rng.uniform(-80, 80), 360 + rng.uniform(-40, 40)
    dice = [(int(rng.integers(1, 7)), cx + dx, cy + dy, float(rng.uniform(0, 90)))
            for dx, dy in ((-60, -30), (55, -35), (0, 50))]
    table, _ = render_table([], "felt", size=(1280, 720), seed=seed)
    c = (int(cx), int(cy))
    kind = ("ring", "tray", "lid")[seed % 3]
    if kind == "ring":
        cv2.circle(table, c, 150, (200, 200, 205), 34, cv2.LINE_AA)
        cv2.circle(table, c, 168, (120, 120, 125), 3, cv2.LINE_AA)
    elif kind == "tray":
        cv2.rectangle(table, (c[0] - 170, c[1] - 130), (c[0] + 170, c[1] + 130), (40, 70, 110), 26)
        cv2.rectangle(table, (c[0] - 157, c[1] - 117), (c[0] + 157, c[1] + 117), (70, 110, 150), -1)
    else:
        cv2.rectangle(table, (c[0] - 185, c[1] - 145), (c[0] + 185, c[1] + 145), (90, 150, 185), -1)
        cv2.rectangle(table, (c[0] - 185, c[1] - 145), (c[0] + 185, c[1] + 145), (50, 90, 120), 14)
    frame, boxes = render_table(dice, table, "ivory", size=(1280, 720), die_px=48.0, seed=seed)
    return frame, boxes, np.array([v for v, *_ in dice], np.int8)


SITUATIONS: dict[str, Callable[[int], Scene]] = {
    "overhead_plain": overhead_plain, "coloured": coloured, "translucent": translucent,
    "custom_faces": custom_faces, "far": far, "container": container,
}


def measure(reader: DiceReader, make: Callable[[int], Scene], scenes: int) -> EvalReport:
    """Score ``reader`` on ``scenes`` seeded scenes of one situation."""
    truths, preds = [], []
    for seed in range(scenes):
        frame, boxes, values = make(seed)
        truths.append((Path(f"{make.__name__}_{seed}"), boxes.astype(np.float32), values))
        preds.append(reader.read(frame))
    return evaluate_predictions(truths, preds)


def unknown_faces(report: EvalReport) -> dict[str, int]:
    """What became of the labelled dice whose face is no pip face (label 0): ``uncertain`` (boxed and flagged, the
    right answer), ``read`` (boxed and read as a face 1–6), ``missed`` (not boxed: dropped or never found)."""
    out = {"uncertain": 0, "read": 0, "missed": 0}
    for rec in report.records:
        pred = dict(rec.pairs)
        for k, v in enumerate(rec.true_values):
            if v != 0:
                continue
            if k not in pred:
                out["missed"] += 1
            else:
                out["uncertain" if rec.pred.value[pred[k]] == 0 else "read"] += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=12, help="seeded scenes per situation (default 12)")
    ap.add_argument("--model", type=Path, help="detector (default: the shipped one)")
    ap.add_argument("--cls-model", type=Path, help="face classifier (default: the shipped one)")
    ap.add_argument("--value-conf", type=float, help="the reader's value_conf (default: the shipped point)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="another DiceReader setting (a number), e.g. not_die_prob=1 zoom_below=0 (repeatable): an "
                         "earlier version's operating point")
    ap.add_argument("--no-look", action="store_true",
                    help="without the look inside a large box (kosti.vision.inner_look; the reader before 2026-12-07)")
    ap.add_argument("--json", type=Path, help="write the kosti eval --json documents here too")
    args = ap.parse_args()
    if args.no_look:
        inner_look.MAX_LOOKS = 0
    kw: dict[str, Any] = {} if args.value_conf is None else {"value_conf": args.value_conf}
    kw.update({k: float(v) for k, v in (item.split("=", 1) for item in args.set)})
    reader = DiceReader(det_path=args.model, cls_path=args.cls_model, threads=1, **kw)
    out = {}
    print(f"{'situation':<16} {'P':>6} {'R':>6} {'DA':>6} {'exact':>6} {'unsure':>6} {'wrong':>5}")
    for name, make in SITUATIONS.items():
        report = measure(reader, make, args.scenes)
        doc = report.to_json()
        unknown = unknown_faces(report)
        if sum(unknown.values()):
            doc["unknown_faces"] = unknown
        out[name] = doc
        tail = f"  faces no pip face: {unknown}" if sum(unknown.values()) else ""
        print(f"{name:<16} {doc['precision']:6.3f} {doc['recall']:6.3f} {doc['die_accuracy']:6.3f} "
              f"{doc['image_exact']:6.3f} {doc['uncertain']:6d} {doc['wrong']:5d}{tail}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
