#!/usr/bin/env python
"""Build the replay set that ships inside kosti (``datasets/replay_set/``) from the shared real photos.

``kosti train`` replays it with a user's own photos so the reader does not forget ordinary dice, and
gates a new version on its ``reference`` part (:mod:`kosti.datasets.replay`). Sources, both licence-clean
for redistribution with their notices (copied beside the images):

* byler-d6 (BSD 3-Clause, Nell Byler): ``train`` → replay, ``test`` → reference (all 50);
* rune55-dedup (CC BY 4.0, Roboflow Universe "rune55" by rune-zkmvl): ``train`` → replay,
  ``val`` → reference.

Images are copied byte for byte (640×640 JPEG, no re-encoding) with their YOLO labels; the choice is a
seeded random sample (``--seed``), so the build is reproducible. The replay part never holds a
reference image (different source splits). Budget: ≤ 15 MB in all (issue 14).

    .venv/bin/python scripts/build_replay.py            # rewrites datasets/replay_set/
"""

from __future__ import annotations

import argparse
import random
import shutil
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
LIMIT_BYTES = 15 * 1024 * 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    rng = random.Random(args.seed)
    counts: dict[tuple[str, str], int] = {}
    for part, name, split, n in PLAN:
        src = SHARED / name
        imgs = sorted(p for p in (src / "images" / split).iterdir() if p.suffix.lower() in SUFFIXES)
        labelled = [p for p in imgs if (src / "labels" / split / f"{p.stem}.txt").is_file()]
        pick = sorted(rng.sample(labelled, n)) if n is not None and n < len(labelled) else labelled
        (args.out / part / "images").mkdir(parents=True, exist_ok=True)
        (args.out / part / "labels").mkdir(parents=True, exist_ok=True)
        tag = name.split("-")[0]
        for p in pick:
            shutil.copyfile(p, args.out / part / "images" / f"{tag}__{p.name}")
            shutil.copyfile(src / "labels" / split / f"{p.stem}.txt", args.out / part / "labels" / f"{tag}__{p.stem}.txt")
        counts[(part, name)] = len(pick)
        for lic in ("LICENSE", "SOURCE.md"):
            shutil.copyfile(src / lic, args.out / f"{lic.split('.')[0]}-{name}{'.md' if lic.endswith('.md') else '.txt'}")
    (args.out / "data.yaml").write_text(
        "# kosti's shipped replay set (scripts/build_replay.py). Paths are relative to this file's folder.\n"
        "path: .\ntrain: train/images\nval: reference/images\ntest: reference/images\n"
        "names: {0: '1', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6'}\n")
    dice = {part: sum(len([l for l in f.read_text().splitlines() if l.strip()])
                      for f in (args.out / part / "labels").iterdir()) for part in ("train", "reference")}
    rows = "\n".join(f"| {part} | {name} | {c} |" for (part, name), c in counts.items())
    (args.out / "README.md").write_text(f"""# The replay set shipped with kosti

Real labelled photos that `kosti train` uses automatically (no `--base-data` needed), built by
`scripts/build_replay.py --seed {args.seed}` from the project's shared data sets. Images are the
original 640×640 JPEGs, unchanged; labels are YOLO txt, class k = face k+1.

- `train/` ({dice['train']} dice): replayed with a user's own photos when a model is fine-tuned, so it does not forget
  ordinary dice.
- `reference/` ({dice['reference']} dice): never trained on; every model version is measured on it (`kosti models list`)
  and a retrained detector is activated only if it is no worse here (precision, recall, die accuracy
  each within 0.005).

| part | source | images |
|---|---|---|
{rows}

## Licences and attribution

- **byler-d6**: photos and labels by Nell Byler, <https://github.com/nell-byler/dice_detection>, BSD
  3-Clause licence — copyright notice and conditions in `LICENSE-byler-d6.txt` (kept as the licence
  requires); provenance and the three label corrections in `SOURCE-byler-d6.md`. File names start with `byler__`.
- **rune55**: Roboflow Universe data set "rune55" (v3) by workspace "rune-zkmvl",
  <https://universe.roboflow.com/rune-zkmvl/rune55>, licensed under CC BY 4.0
  (<https://creativecommons.org/licenses/by/4.0/>, `LICENSE-rune55-dedup.txt`); de-duplicated and
  re-split as described in `SOURCE-rune55-dedup.md`. Changes: a subset of images was selected; nothing
  else. File names start with `rune55__`.
""")
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"{args.out}: {counts}, dice {dice}, {total / 1e6:.1f} MB")
    if total > LIMIT_BYTES:
        raise SystemExit(f"replay set is {total / 1e6:.1f} MB, over the 15 MiB budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
