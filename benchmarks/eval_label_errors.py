"""``kosti eval`` of a shared set as shipped and without the photos whose labels are known to be wrong.

The label errors found while auditing the reader are listed, with what is right, in
``datasets/label_errors/<set>.json`` (never edited in ``../shared``). This script reads the set's split at the
shipped defaults (or ``--model`` / ``--cls-model``) twice — all photos, then all but the listed ones — and prints
both ``kosti eval --json`` documents side by side, so the model card can give the numbers against the labels as
shipped and against the corrections (leaving a wrongly labelled photo out is the correction where the right
boxes cannot be drawn here). A third document, ``corrected``, scores the same reads against the labels corrected
box by box where the list gives a ``fix`` (``label_errors.corrected_report``; photos without one left out; no
mAP).

Usage: ``python benchmarks/eval_label_errors.py [epanemu-dice] [--no-map] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_errors import corrected_report, listed_sets, read_list, without_label_errors  # noqa: E402  (a sibling module)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KOSTI_SHARED", REPO.parent / "shared" / "datasets"))
KEYS = ("images", "dice", "precision", "recall", "die_accuracy", "image_exact", "mAP50", "mAP50_95")


def main() -> int:
    from kosti.vision.evaluate import evaluate, load_dataset
    from kosti.vision.reader import DiceReader

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=listed_sets())
    ap.add_argument("--model", type=Path, default=None, help="detector (default: the shipped one)")
    ap.add_argument("--cls-model", type=Path, default=None, help="face classifier (default: the shipped one)")
    ap.add_argument("--no-map", action="store_true", help="skip the low-threshold pass for mAP")
    ap.add_argument("--json", type=Path, default=None, help="also write the documents here")
    a = ap.parse_args()
    reader = DiceReader(a.model, a.cls_model)
    out: dict[str, dict[str, object]] = {}
    for name in a.sets:
        split, wrong = read_list(name)
        ds = load_dataset(SHARED / name, split)
        try:
            clean = replace(ds, items=without_label_errors(ds.items, name, split)[0])
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        shipped = evaluate(reader, ds, compute_map=not a.no_map)
        fixed, n_fixed, n_dropped = corrected_report(shipped, name, split)
        corrected = {k: v for k, v in fixed.to_json().items() if not k.startswith("mAP")}  # not recomputed
        both = {"as_shipped": shipped.to_json(),
                "without_label_errors": evaluate(reader, clean, compute_map=not a.no_map).to_json(),
                "corrected": corrected}
        scores = {k: {m: v.get(m) for m in KEYS} for k, v in both.items()}
        out[name] = {**scores, "left_out": sorted(wrong), "corrected_photos": n_fixed,
                     "left_out_uncorrected": n_dropped}
        for k, s in scores.items():
            print(f"{name} {split} {k:21s} " + " ".join(f"{m} {s[m]}" for m in KEYS))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
