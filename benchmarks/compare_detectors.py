"""Read candidate detectors end to end, each at its own operating point chosen on the selection splits.

For each candidate (an ONNX file, or an Ultralytics ``.pt`` checkpoint, exported first to float ONNX as the
shipped detector's float export is, at the size it was trained: :func:`kosti.datasets.train.export_onnx`) paired with the shipped face
classifier (or ``--cls``):

1. collect the detector's boxes at 0.05 and the classifier's probabilities once per image, on the selection
   splits (rune55-dedup val, epanemu-dice val) and the measured sets (byler-d6 test, skovy-webcam), without the
   photos whose labels are known to be wrong (``datasets/label_errors/``; since 2026-12-03, as
   ``select_operating_point.collect``);
2. fit the temperature and choose ``conf`` × ``value_conf`` × second look on the pooled selection splits
   exactly as ``benchmarks/select_operating_point.py`` does (best image_exact with at most 1 % wrong reads);
3. print precision / recall / die_accuracy / image_exact of every set, separately, at that point and at the
   shipped thresholds (``kosti.models``; with the candidate's own fitted temperature), one row per
   candidate and set.

The test sets never choose anything: they are read at the point the selection splits chose.

Usage: ``python benchmarks/compare_detectors.py CANDIDATE [CANDIDATE …] [--cls C.onnx] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import select_operating_point as sop  # noqa: E402  (a sibling script)

METRICS = ("precision", "recall", "die_accuracy", "image_exact", "wrong", "uncertain")


def as_onnx(candidate: Path, tmp: Path) -> Path:
    """The ONNX file of ``candidate`` (a detector or a classifier): itself, or a ``.pt`` exported into ``tmp``
    to float ONNX as the shipped models' float exports are, at the size it was trained (640 if unrecorded)."""
    if candidate.suffix == ".onnx":
        return candidate
    from kosti.datasets.train import export_onnx, stripped_copy, trained_imgsz

    size = trained_imgsz(candidate, 640)  # before stripping, which fills a missing train_args with defaults
    src = stripped_copy(candidate, tmp / "src" / f"{candidate.parent.parent.name}_{candidate.stem}.pt")
    return export_onnx(src, size, tmp / f"{src.stem}.onnx")


def read_candidate(det: Path, cls: Path | None) -> dict[str, Any]:
    """Operating point chosen on the selection splits and every set's scores there and at the shipped point."""
    from kosti.models import (
        DEFAULT_CONF,
        DEFAULT_VALUE_CONF,
        DEFAULT_VERIFY_CONF,
        DEFAULT_VERIFY_ONE_CONF,
        DEFAULT_VERIFY_PROB,
    )
    from kosti.vision.reader import DiceReader

    reader = DiceReader(det, cls, temperature=1.0)
    recs = {name: sop.collect(reader, name, split) for name, split in sop.SELECT + sop.MEASURE}
    sel = [r for name, _ in sop.SELECT for r in recs[name]]
    sop.fit_selection_temperature(reader, sel)
    grid, best = sop.choose(reader, sel)
    shipped = (DEFAULT_CONF, DEFAULT_VALUE_CONF, (DEFAULT_VERIFY_CONF, DEFAULT_VERIFY_PROB, DEFAULT_VERIFY_ONE_CONF))
    return {"detector": str(det), "temperature": round(reader.temperature, 4),
            "operating_point": {"conf": best[0], "value_conf": best[1], "verify": best[2]},
            "selection": grid[best],
            "sets": {name: sop.score(reader, recs[name], *best) for name in recs},
            "sets_at_shipped_point": {name: sop.score(reader, recs[name], *shipped) for name in recs}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("candidates", type=Path, nargs="+", help="detector .onnx or Ultralytics .pt checkpoints")
    ap.add_argument("--cls", type=Path, default=None,
                    help="face classifier, .onnx or an Ultralytics .pt checkpoint (default: the shipped one)")
    ap.add_argument("--json", type=Path, default=None, help="also write every result here")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="compare-detectors-"))
    results = []
    cls = as_onnx(a.cls, tmp) if a.cls is not None else None
    for cand in a.candidates:
        res = read_candidate(as_onnx(cand, tmp), cls)
        res["candidate"] = str(cand)
        results.append(res)
        op = res["operating_point"]
        print(f"{cand}: T {res['temperature']:.3f}, conf {op['conf']} value_conf {op['value_conf']} "
              f"verify {op['verify']}; selection image_exact {res['selection']['image_exact']:.3f}", flush=True)
        for where in ("sets", "sets_at_shipped_point"):
            for name, s in res[where].items():
                print(f"  {where:22s} {name:14s} " + " ".join(f"{k} {s[k]:.3f}" for k in METRICS), flush=True)
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str) + "\n")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
