"""One reader over every shared data set: the ``kosti eval --json`` document per set, side by side (issue 38).

A model is judged on all shared sets at once so that a loss anywhere shows (the model card's tables are this
module's output): for each set in :data:`SHARED_SETS` the :func:`kosti.vision.evaluate.evaluate` document (P, R,
die accuracy, image_exact, ``uncertain``, ``wrong``, the 7 × 8 ``confusion_full``), and on a set that lists boxes
of dice that are no pip die (``distractors.csv``: banachowicz-d6's numeral d6, d8 and d10) what became of them
(:func:`distractor_reads`).

Usage (the venv's python, from the repository root)::

    python -m kosti.vision.evaluate_sets [--model DET] [--cls-model CLS] [--sets byler-d6,...] [--json OUT]

``--model`` / ``--cls-model`` as ``kosti eval``'s (default: the shipped models); the shared sets are found under
``KOSTI_SHARED`` or ``../shared/datasets`` beside the repository.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kosti.vision.detections import box_iou
from kosti.vision.evaluate import MATCH_IOU, EvalReport, evaluate, load_dataset
from kosti.vision.reader import DiceReader

#: The shared sets and the split each is judged on: ``(name, split)``. Only validation or test splits (never a
#: split a model trains on); banachowicz-d6 and skovy-webcam are evaluation-only sets.
SHARED_SETS: tuple[tuple[str, str], ...] = (
    ("byler-d6", "test"),
    ("epanemu-dice", "val"),
    ("rune55-dedup", "val"),
    ("skovy-webcam", "test"),
    ("damiantab-d6", "val"),
    ("banachowicz-d6", "test"),
)
#: File of a shared set that lists the boxes of dice that are no pip d6 (``file, split, class, x1, y1, x2, y2``).
DISTRACTORS_CSV = "distractors.csv"


def shared_root() -> Path:
    """The shared data sets' folder: ``KOSTI_SHARED``, else ``../shared/datasets`` beside the repository."""
    env = os.environ.get("KOSTI_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "datasets"


@dataclass(frozen=True)
class DistractorReads:
    """What a reader made of the dice that are no pip d6 on one set (counts of reader boxes).

    Attributes:
        confident: boxes read as a face 1–6 (no uncertain flag).
        confident_on_pip: of those, boxes that match a labelled pip die (IoU ≥ 0.5, the evaluation's match).
        confident_on_distractor: confident boxes matching no pip die but a listed distractor (IoU ≥ 0.5).
        uncertain_on_distractor: boxes flagged uncertain matching a distractor and no pip die.
        distractors: listed distractor boxes on the evaluated images.
    """

    confident: int
    confident_on_pip: int
    confident_on_distractor: int
    uncertain_on_distractor: int
    distractors: int

    @property
    def pip_share(self) -> float:
        """Share of the confident reads that are pip dice (the issue's "≥ 95 % are pip dice"); 1.0 with none."""
        return self.confident_on_pip / self.confident if self.confident else 1.0

    def to_json(self) -> dict[str, Any]:
        """The counts and :attr:`pip_share` (4 decimals) as a JSON object."""
        return {"confident": self.confident, "confident_on_pip": self.confident_on_pip,
                "confident_on_distractor": self.confident_on_distractor,
                "uncertain_on_distractor": self.uncertain_on_distractor, "distractors": self.distractors,
                "pip_share_of_confident": round(self.pip_share, 4)}


def load_distractors(csv_path: Path) -> dict[str, np.ndarray]:
    """``distractors.csv`` as ``{file name: (N, 4) float64 boxes x1, y1, x2, y2 in pixels}``.

    Raises:
        OSError: the file cannot be read; ValueError: a row without four numeric coordinates.
    """
    boxes: dict[str, list[list[float]]] = {}
    with csv_path.open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                box = [float(row[k]) for k in ("x1", "y1", "x2", "y2")]
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{csv_path}: bad row {row}: {exc}") from None
            boxes.setdefault(row["file"], []).append(box)
    return {k: np.array(v, np.float64).reshape(-1, 4) for k, v in boxes.items()}


def distractor_reads(report: EvalReport, distractors: dict[str, np.ndarray]) -> DistractorReads:
    """Count the reader's boxes of ``report`` on pip dice and on the ``distractors`` (by image file name).

    A reader box matched to a labelled pip die (the evaluation's own matching) is on a pip die; any other box is
    on a distractor when it overlaps a listed distractor box at IoU ≥ 0.5 (:data:`MATCH_IOU`).
    """
    confident = on_pip = conf_dis = unsure_dis = listed = 0
    for rec in report.records:
        dis = distractors.get(rec.image.name, np.zeros((0, 4)))
        listed += len(dis)
        matched = {j for _, j in rec.pairs}
        iou = box_iou(rec.pred.xyxy, dis) if len(rec.pred) and len(dis) else np.zeros((len(rec.pred), 0))
        for j in range(len(rec.pred)):
            sure = int(rec.pred.value[j]) != 0
            confident += sure
            if j in matched:
                on_pip += sure
            elif iou.shape[1] and float(iou[j].max()) >= MATCH_IOU:
                conf_dis += sure
                unsure_dis += not sure
    return DistractorReads(confident, on_pip, conf_dis, unsure_dis, listed)


def evaluate_sets(reader: DiceReader, root: Path | None = None,
                  sets: tuple[tuple[str, str], ...] = SHARED_SETS) -> dict[str, dict[str, Any]]:
    """Run ``reader`` over each shared set and return ``{set name: kosti eval --json document}``.

    Each document is :meth:`kosti.vision.evaluate.EvalReport.to_json` (mAP from the working-threshold boxes: the
    low-threshold pass is skipped) plus ``"split"``, and ``"distractors"`` (:meth:`DistractorReads.to_json`) for a
    set with a :data:`DISTRACTORS_CSV`.

    Raises:
        kosti.vision.evaluate.DatasetError: a set or split is missing; ImageReadError: an unreadable photo.
    """
    base = root or shared_root()
    out: dict[str, dict[str, Any]] = {}
    for name, split in sets:
        report = evaluate(reader, load_dataset(base / name / "data.yaml", split), compute_map=False)
        doc = report.to_json()
        doc["split"] = split
        listed = base / name / DISTRACTORS_CSV
        if listed.is_file():
            doc["distractors"] = distractor_reads(report, load_distractors(listed)).to_json()
        out[name] = doc
    return out


#: The selection splits a candidate's temperature is fitted on (as v1.3's operating point: ``models/README.md``).
SELECTION_SETS: tuple[tuple[str, str], ...] = (("epanemu-dice", "val"), ("rune55-dedup", "val"))


def fit_selection_temperature(reader: DiceReader, root: Path | None = None,
                              sets: tuple[tuple[str, str], ...] = SELECTION_SETS) -> dict[str, Any]:
    """Fit the classifier's softmax temperature by NLL on the reader's matched dice of the selection ``sets``
    (:func:`kosti.vision.evaluate.collect_face_probs`, :func:`kosti.vision.evaluate.fit_temperature`).

    Returns:
        ``{"temperature": T, "views": …, "dice": K, "nll": [before, after], "fitted_on": …}``: a ``reader.json``.

    Raises:
        kosti.vision.evaluate.DatasetError: a set is missing or holds no matched die.
    """
    from kosti.vision.evaluate import DatasetError, collect_face_probs, fit_temperature, nll

    base = root or shared_root()
    parts = [collect_face_probs(reader, load_dataset(base / name / "data.yaml", split)) for name, split in sets]
    probs = np.concatenate([p for p, _ in parts])
    target = np.concatenate([t for _, t in parts])
    if not len(target):
        raise DatasetError("no matched dice to fit a temperature on")
    t = fit_temperature(probs, target)
    return {"temperature": round(t, 4), "views": reader.views, "dice": int(len(target)),
            "nll": [round(nll(probs, target), 4), round(nll(probs, target, t), 4)],
            "fitted_on": ", ".join(f"{n} {s}" for n, s in sets) + " (kosti.vision.evaluate_sets)"}


def table(results: dict[str, dict[str, Any]]) -> str:
    """One line a set: P / R / DA / image_exact, uncertain, wrong (and the pip share of confident reads)."""
    lines = [f"{'set':<16} {'P':>6} {'R':>6} {'DA':>6} {'exact':>6} {'unsure':>6} {'wrong':>5}"]
    for name, d in results.items():
        extra = f"  pip share of confident reads {d['distractors']['pip_share_of_confident']:.3f}" \
            if "distractors" in d else ""
        lines.append(f"{name:<16} {d['precision']:6.3f} {d['recall']:6.3f} {d['die_accuracy']:6.3f} "
                     f"{d['image_exact']:6.3f} {d['uncertain']:6d} {d['wrong']:5d}{extra}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: evaluate one reader on the shared sets, print :func:`table`, optionally write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="detector (default: the shipped one)")
    ap.add_argument("--cls-model", type=Path, help="face classifier (default: the shipped one)")
    ap.add_argument("--sets", help="comma-separated set names (default: all of SHARED_SETS)")
    ap.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (default 1)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="another DiceReader setting (a number), e.g. value_conf=0.4 (repeatable): an earlier "
                         "version's operating point")
    ap.add_argument("--fit-temperature", type=Path, metavar="READER_JSON",
                    help="first fit the classifier's temperature on the selection splits (SELECTION_SETS), write it "
                         "here (a reader.json) and read with it")
    ap.add_argument("--json", type=Path, help="write the documents here too")
    args = ap.parse_args(argv)
    try:
        settings: dict[str, Any] = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
    except ValueError:
        print(f"error: --set takes KEY=NUMBER, got {' '.join(args.set)}", file=sys.stderr)
        return 2
    chosen = SHARED_SETS
    if args.sets:
        wanted = args.sets.split(",")
        unknown = sorted(set(wanted) - {n for n, _ in SHARED_SETS})
        if unknown:
            print(f"error: unknown set {', '.join(unknown)} (known: {', '.join(n for n, _ in SHARED_SETS)})",
                  file=sys.stderr)
            return 2
        chosen = tuple(s for s in SHARED_SETS if s[0] in wanted)
    reader = DiceReader(det_path=args.model, cls_path=args.cls_model, threads=args.threads, **settings)
    if args.fit_temperature is not None:
        fitted = fit_selection_temperature(DiceReader(det_path=args.model, cls_path=args.cls_model,
                                                      threads=args.threads, **{**settings, "temperature": 1.0}))
        args.fit_temperature.write_text(json.dumps(fitted, indent=2) + "\n")
        print(f"temperature {fitted['temperature']} on {fitted['dice']} dice (NLL {fitted['nll'][0]} -> "
              f"{fitted['nll'][1]}): {args.fit_temperature}")
        reader = DiceReader(det_path=args.model, cls_path=args.cls_model, threads=args.threads,
                            **{**settings, "temperature": fitted["temperature"]})
    results = evaluate_sets(reader, sets=chosen)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
