"""Two cheap levers on the reader's recall, measured at the shipped operating point (2026-12-04, model card "After
v1.3"); neither is shipped.

1. **Tiers of the second look** (``--only tiers``): besides the shipped rule (a weak box, detector score in
   ``(verify_conf, conf]``, is a die when its face reads ≥ ``verify_prob``), also confirm a weak box scoring above
   ``mid_conf`` whose face reads ≥ ``mid_prob``. Scored on the raw arrays of
   :func:`select_operating_point.collect` (selection splits with their audited labels, and the two measured sets),
   zoom off as in the selection.
2. **A zoom for unsure frames** (``--only zoom``): every photo read by the shipped reader and by the same reader
   zooming always (``zoom_below`` 640); a rule takes the zoomed read where the shipped reader zooms, or where it left
   at least ``k`` candidates unconfirmed (not read as not-a-die) and at least ``f`` × the dice it found.

Usage: ``python benchmarks/recall_levers.py [--only tiers|zoom]`` (about 10 minutes on two cores).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import select_operating_point as sop  # noqa: E402  (a sibling module)
from label_errors import labelled_photos, on_ignore_region  # noqa: E402

#: ``(mid_conf, mid_prob)`` of the tiers tried; ``None`` = the shipped rule alone.
TIERS = (None, *((c, p) for c in (0.2, 0.25, 0.3, 0.35, 0.4) for p in (0.8, 0.85, 0.9, 0.95)))
#: ``(k, f)`` of the zoom rules tried.
ZOOM_RULES = tuple((k, f) for k in (2, 3, 4) for f in (0.0, 0.25, 0.5, 1.0))
SETS = (*sop.SELECT, *sop.MEASURE)


def tiers() -> None:
    """Print each tier's scores (image_exact, P, R, die_accuracy, wrong reads) per set and on the pooled selection."""
    from kosti.models import (
        DEFAULT_CONF,
        DEFAULT_VALUE_CONF,
        DEFAULT_VERIFY_CONF,
        DEFAULT_VERIFY_ONE_CONF,
        DEFAULT_VERIFY_PROB,
    )
    from kosti.vision.reader import DiceReader, best_face_prob

    reader = DiceReader()
    recs = {f"{n} {s}": sop.collect(reader, n, s) for n, s in SETS}
    shipped = DiceReader.dice_mask
    point = (DEFAULT_VERIFY_CONF, DEFAULT_VERIFY_PROB, DEFAULT_VERIFY_ONE_CONF)
    for tier in TIERS:
        def mask(self: Any, scores: np.ndarray, probs: np.ndarray, tier: Any = tier) -> np.ndarray:
            keep: np.ndarray = shipped(self, scores, probs)
            if tier is not None and len(probs):
                sure = best_face_prob(probs, self._cls_values) >= tier[1]
                keep = keep | (self.second_look(scores) & (scores > tier[0]) & sure
                               & ~self.lone_ones(scores, probs) & ~self.not_die(probs))
            return keep

        DiceReader.dice_mask = mask  # type: ignore[method-assign]
        sel = [r for n, s in sop.SELECT for r in recs[f"{n} {s}"]]
        row = [f"tier {tier}:"]
        for key, rs in (("selection", sel), *recs.items()):
            sc = sop.score(reader, rs, DEFAULT_CONF, DEFAULT_VALUE_CONF, point)
            row.append(f"{key.split()[0]} ie {sc['image_exact']:.3f} P {sc['precision']:.3f} R {sc['recall']:.3f} "
                       f"DA {sc['die_accuracy']:.3f} wrong {sc['wrong']:.4f}")
        print(" | ".join(row), flush=True)
    DiceReader.dice_mask = shipped  # type: ignore[method-assign]


def _photo(reader: Any, img: np.ndarray, tx: np.ndarray, tv: np.ndarray, ig: np.ndarray) -> dict[str, Any]:
    """One photo read by ``reader``: dice found, matched, read right, read wrong, exact, unconfirmed candidates."""
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import match_pairs

    dice, cands = reader.read_candidates(img)
    dice = dice[~on_ignore_region(dice.xyxy, tx, ig)]
    pairs = match_pairs(box_iou(tx, dice.xyxy)) if len(tx) and len(dice) else []
    right = sum(int(dice.value[j]) == int(tv[k]) for k, j in pairs)
    return dict(nd=len(dice), tp=len(pairs), right=right, wrong=sum(int(dice.value[j]) not in (0, int(tv[k]))
                                                                     for k, j in pairs),
                exact=right == len(tx) == len(dice), zoomed=bool(reader.last_zoomed),
                nc=int((~cands.data["not_die"]).sum()) if len(cands) else 0)


def zoom() -> None:
    """Print each zoom rule's scores per set: P, R, die_accuracy, image_exact, wrong reads, photos zoomed."""
    from kosti.vision.reader import DiceReader

    shipped, always = DiceReader(), DiceReader(zoom_below=640)
    photos: list[dict[str, Any]] = []
    for name, split in SETS:
        for _, img, tx, tv, ig in labelled_photos(sop.SHARED, name, split):
            photos.append(dict(set=name, n=len(tx), d=_photo(shipped, img, tx, tv, ig), z=_photo(always, img, tx, tv, ig)))

    def report(label: str, rule: Any) -> None:
        agg: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for p in photos:
            z = bool(rule(p["d"]))
            m, a = (p["z"] if z else p["d"]), agg[p["set"]]
            a.update(n=p["n"], nd=m["nd"], tp=m["tp"], right=m["right"], wrong=m["wrong"], exact=int(m["exact"]),
                     photos=1, zoomed=int(z))
        print(f"{label:<22}" + " | ".join(
            f"{k} P {a['tp'] / max(a['nd'], 1):.3f} R {a['tp'] / max(a['n'], 1):.3f} DA {a['right'] / max(a['tp'], 1):.3f}"
            f" ie {a['exact'] / a['photos']:.3f} wrong {a['wrong']} zoomed {a['zoomed']}/{a['photos']}"
            for k, a in agg.items()), flush=True)

    report("shipped", lambda d: d["zoomed"])
    report("always", lambda d: True)
    for k, f in ZOOM_RULES:
        report(f"candidates>={k},>={f}x", lambda d, k=k, f=f: d["zoomed"] or (d["nc"] >= k and d["nc"] >= f * d["nd"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("tiers", "zoom"), default=None, help="measure one lever (default both)")
    a = ap.parse_args()
    if a.only in (None, "tiers"):
        tiers()
    if a.only in (None, "zoom"):
        zoom()
    return 0


if __name__ == "__main__":
    sys.exit(main())
