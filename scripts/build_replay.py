#!/usr/bin/env python
"""Choose the photos of kosti's replay set (``datasets/replay_set/manifest.json``) among the shared real photos.

``kosti train`` replays it with a user's own photos so the reader does not forget ordinary dice, and
gates a new version on its ``reference`` part (:mod:`kosti.datasets.replay`). Sources, both licence-clean
for redistribution with their notices (copied beside the images):

* byler-d6 (BSD 3-Clause, Nell Byler): ``train`` → replay, ``test`` → reference (all 50);
* rune55-dedup (CC BY 4.0, Roboflow Universe "rune55" by rune-zkmvl): ``train`` → replay,
  ``val`` → reference.

Only the photos' names are written (data set, split, image): the photos themselves stay in the shared
data sets and are linked when a part is used (:mod:`kosti.datasets.replay`). The choice is a seeded
random sample (``--seed``), so the build is reproducible. The replay part never holds a reference image
(different source splits).

    .venv/bin/python scripts/build_replay.py            # rewrites datasets/replay_set/manifest.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "datasets"
OUT = REPO / "datasets" / "replay_set"
SUFFIXES = {".jpg", ".jpeg", ".png"}
#: (part, source set, source split, how many images; None = all)
PLAN = [
    ("train", "byler-d6", "train", 120),
    ("train", "rune55-dedup", "train", 120),
    ("reference", "byler-d6", "test", None),
    ("reference", "rune55-dedup", "val", 100),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", type=Path, default=OUT / "manifest.json")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    manifest: dict = {"format": "kosti-replay/1", "tags": {name: name.split("-")[0] for _, name, _, _ in PLAN},
                      "train": [], "reference": []}
    for part, name, split, n in PLAN:
        src = SHARED / name
        imgs = sorted(p for p in (src / "images" / split).iterdir() if p.suffix.lower() in SUFFIXES)
        labelled = [p for p in imgs if (src / "labels" / split / f"{p.stem}.txt").is_file()]
        pick = sorted(rng.sample(labelled, n)) if n is not None and n < len(labelled) else labelled
        manifest[part] += [[name, split, p.name] for p in pick]
    for part in ("train", "reference"):  # one order for both, whatever the plan's order
        manifest[part].sort(key=lambda row: (manifest["tags"][row[0]], row[2]))
    args.out.write_text(json.dumps(manifest, indent=0) + "\n")
    print(f"{args.out}: " + ", ".join(f"{part} {len(manifest[part])} photos" for part in ("train", "reference")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
