"""How the active reader reads dice with custom faces (issues 38 and 41), on rendered throws.

Renders ``--throws`` seeded throws (five dice, :func:`proof_new_dice.render_throw`) of three dice sets — blue
dice with a skull for 1 and an emblem for 6 (``marks``), ivory numeral dice, and the same blue dice with pips
as the control — and reports, per face, what became of each die: read as a face (``read_N``; ``read_0`` =
boxed as uncertain), a weak candidate the second look did not confirm (``candidate``), dropped by the
not-a-die veto (``vetoed``), or not boxed at all (``missed``).

Usage::

    python benchmarks/custom_faces.py --throws 12 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proof_new_dice import render_throw  # noqa: E402

from kosti.sim.dice import DieStyle  # noqa: E402
from kosti.vision.detections import box_iou  # noqa: E402
from kosti.vision.reader import DiceReader  # noqa: E402

#: The dice sets measured: custom symbol faces, numeral faces, and the pip control of the same colours.
SETS = {
    "skull_emblem": DieStyle("skull_emblem", (170, 90, 40), (235, 235, 235), marks=((1, "skull"), (6, "emblem"))),
    "numeral": DieStyle("numeral", (200, 228, 240), (40, 40, 150), corner_radius=0.2,
                        marks=tuple((v, "numeral") for v in range(1, 7))),
    "pips_control": DieStyle("pips_control", (170, 90, 40), (235, 235, 235)),
}


def outcomes(reader: DiceReader, style: DieStyle, throws: int) -> dict[int, dict[str, int]]:
    """Per labelled face 1–6: counts of ``read_N`` / ``candidate`` / ``vetoed`` / ``missed`` (IoU ≥ 0.5)."""
    stat: dict[int, Counter[str]] = defaultdict(Counter)
    for seed in range(throws):
        frame, dice = render_throw(style, seed)
        found, cand = reader.read_candidates(frame)
        truth = np.array([b for _, b in dice], np.float32)
        on_die = box_iou(truth, found.xyxy) if len(found) else np.zeros((len(truth), 0))
        on_cand = box_iou(truth, cand.xyxy) if len(cand) else np.zeros((len(truth), 0))
        for i, (value, _) in enumerate(dice):
            if on_die.shape[1] and on_die[i].max() >= 0.5:
                stat[value][f"read_{int(found.value[on_die[i].argmax()])}"] += 1
            elif on_cand.shape[1] and on_cand[i].max() >= 0.5:
                stat[value]["vetoed" if cand.data["not_die"][on_cand[i].argmax()] else "candidate"] += 1
            else:
                stat[value]["missed"] += 1
    return {v: dict(sorted(stat[v].items())) for v in sorted(stat)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--throws", type=int, default=12, help="seeded throws per dice set (default 12)")
    ap.add_argument("--json", type=Path, help="write the result here too")
    args = ap.parse_args()
    reader = DiceReader()
    result = {name: outcomes(reader, st, args.throws) for name, st in SETS.items()}
    for name, faces in result.items():
        print(name)
        for value, counts in faces.items():
            print(f"  {value}: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
