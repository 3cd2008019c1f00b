"""Reader v0.2, v0.3 and v1.0 recipe: fine-tune the v0.1 models (``bash scripts/build_models.sh``) on real + synthetic data.

Exactly the runs behind the shipped weights (``models/README.md``); CPU only, offline, checkpointed: rerun
the same command after an interruption and Ultralytics resumes from ``runs/v02/<stage>/weights/last.pt``
(a finished stage is skipped).

Stages, in order (run from the repository root with the project's venv):

* ``det``: the v0.1 detector, 2 more epochs at 416 px then 5 at 640 px (small dice: most misses on rune55
  val and every miss on skovy-webcam were dice under 20 px at 416), on byler-d6 train (twice: it is the
  smallest set) + rune55-dedup train + 1,500 synthetic scenes (seeded shuffle of ``kosti datasets synth
  --out work/synth/det --n 3000 --seed 1 --classes die``), stronger hue jitter (``hsv_h=0.15``) for
  coloured dice; validation rune55 val.
* ``cls``: the v0.1 classifier, 15 more epochs on real crops (``kosti.datasets.prepare.prepare_classification``
  of byler-d6 + rune55 train, 3 per die; val 1 per die of rune55 val) + synthetic crops
  (``kosti datasets synth --crops --out work/synth/cls --n 8000 --seed 1``), ``hsv_h=0.2``; then 8 + 10
  epochs (lr0 0.0004, then 0.0003) with 9 extra crops per die of the 86 rune55 train photos named
  ``*PXL*`` (marbled and glittered RPG dice in trays: 85 % of the classifier's rune55 val errors).
  These two stages made v0.2.
* ``det_v3``: the v0.2 detector (``det640``), epochs 1–3 of a 4-epoch cosine schedule at 640 px (lr0 0.0005,
  mosaic off for the last 2 of the 4), on ``det``'s real photos + its first 1,000 synthetic scenes + 700
  scenes of which 70 % are seen from the side (``kosti datasets synth --oblique 0.7 --seed 2``). v0.3 ships
  epoch 3: end to end on rune55 val it gave the best image_exact (0.762 vs 0.752 for epoch 4).
* ``cls_p5``: the full YOLO11n-cls (P5 stage back; 1.54 M parameters), layers 0–6 copied from the v0.2
  classifier (``cls_pxl2``), 20 epochs (lr0 0.001) then 10 more (lr0 0.0003) on ``cls_pxl2``'s crops.
  v0.3 ships the last epoch.
* ``det_v4`` (measured, not shipped): the v0.3 detector, 3 more epochs at 640 px (lr0 0.0003, mosaic off in
  the last) with v0.3's 1,000 top-down synthetic scenes swapped for 1,000 new ones, half seen from the side
  (``--oblique 0.5 --seed 3``). Ultralytics' rune55 val mAP50-95 rose 0.619 → 0.649, but read end to end
  at each epoch's own operating point rune55 val image_exact was 0.752, 0.757, 0.757 vs v0.3's 0.762, so
  v0.3 stays.
* ``cls_p5c`` (measured, not shipped): one more 10-epoch cosine cycle of the v0.3 classifier on the same
  crops (lr0 0.0003, seed 12; 14 min). Val top-1 0.952 → 0.956, but end to end on rune55 val it ties v0.3
  (image_exact 0.762 at its operating point; die_accuracy 0.980 vs 0.981), so v0.3 stays.
* ``det_v5`` (v1.0 detector, shipped): the v0.3 detector, 2 epochs at 640 px (lr0 0.0005, mosaic off in
  the last) on :func:`det_data_v5` (epanemu-dice train, byler-d6 train, 250 rune55 train photos, 300 wide
  synthetic scenes); epanemu val mAP50 0.747, 0.783.
* ``det_v5b`` (measured, not shipped): ``det_v5``'s last epoch, 3 more (lr0 0.0003): mAP50 0.790 but a
  worse end-to-end read on the selection splits (image_exact 0.633 vs 0.649).
* ``cls_v5`` (measured, not shipped): the v0.3 classifier, 8 epochs on real crops only (:func:`cls_data_v5`):
  better on epanemu, forgot some byler-d6 and rune55.
* ``cls_v5m`` (v1.0 classifier, shipped): the v0.3 classifier, 6 epochs on v0.3's crops plus epanemu
  train's (:func:`cls_data_v5m`).
* ``det_v6``, ``cls_v6``, ``cmp26`` (measured 2026-12-02, none shipped; model card, "After v1.0"): the v1.0
  detector, 4 more epochs on :func:`det_data_v6` (det_v5's data, rune55 doubled); the v1.0 classifier, 4
  epochs on :func:`cls_data_v5`'s real crops; YOLO11n and YOLO26n on the v1.0 backbone (:func:`backbone_init`,
  frozen), neck and head trained 2 epochs each. Read end to end by ``benchmarks/compare_detectors.py``.
* ``det_v7``, ``cls_v7`` (measured 2026-12-02/03, not shipped; model card, "After v1.1"): the v1.0 detector, 5
  epochs at 800 px on :func:`det_data_v6`; the v1.0 classifier, 4 epochs on :func:`cls_data_v7` (v1.0's crops
  plus crops around a detector's own boxes, ``--det-pt``: any detector file the reader loads, default the
  shipped ``dice_det.onnx``). The float 800 px detector read every set better; its INT8 version did not (the
  model card has the numbers).
* ``cls_v8`` (measured 2026-12-03, not shipped; model card, "Also tried on 2026-12-03"): the v1.0 classifier,
  3 epochs on :func:`cls_data_v8` (``cls_v7``'s crops plus dim, flat copies of a quarter of them).
* ``det_v8`` (2026-12-03, **v1.2's detector**): ``det_v7``'s fifth epoch (``runs/v02/det_v7_e5.pt``, or
  ``--det-pt``), 3 epochs at 640 px on :func:`det_data_v6`: a detector at the shipped input size that keeps the
  800 px recall; shipped by ``export --det-pt runs/v02/det_v8/weights/last.pt --cls-pt
  runs/v02/cls_v5m/weights/last.pt``.
* ``cls_v9`` (measured 2026-12-03, not shipped; model card, "The selection without known label errors"): the
  v1.0 classifier, 3 epochs on :func:`cls_data_v9` (``cls_v8``'s crops plus copies of a quarter of the
  originals with a lamp's glint).
* ``det_v9`` (measured 2026-12-03, not shipped; model card, "The zoom on by default"): ``det_v8``'s last epoch
  (its full ``last.pt``; only the weights are taken), 3 more epochs at 640 px on :func:`det_data_v6` (lr0 0.0002,
  mosaic off in the last two). Ultralytics' epanemu val mAP50 / mAP50-95 by epoch: 0.799 / 0.509, 0.796 / 0.507,
  0.802 / 0.522 (``det_v8``: 0.800 / 0.513); in INT8 end to end the selection fell 0.700 → 0.683.
* ``cls_v10`` (2026-12-03): the shipped classifier, 3 epochs on :func:`cls_data_v10` (``cls_v7``'s crops plus
  copies of 40 % of them as other dice under a worse camera would look).
* ``det_v10`` (2026-12-03): ``det_v8``'s last epoch, 2 more epochs at 640 px on :func:`det_data_v10` (``det_v6``'s
  data without :data:`EMPTY_LABELLED_DICE`, plus worse-camera copies of a third of the real photos).
* ``cls_v11`` (2026-12-03, measured, not shipped; model card, section "Picture dice"): the shipped classifier,
  2 epochs on :func:`cls_data_v11` (real crops plus the hand-checked hard negatives of
  ``datasets/hard_negatives/rune55-dedup-train.json`` as ``x``).
* ``cls_v12`` (2026-12-03, late): the shipped classifier, 3 epochs on :func:`cls_data_v12` (dice seen from the
  side kept upright, no vertical flips), for reading without turning the crop; ``cls_v12b``: 3 more epochs of it
  (lr0 0.0002); ``cls_v13``: the shipped classifier, 6 epochs on :func:`cls_data_v13` (cls_v12's crops with the dice
  seen from above twice). ``export_cls --cls-pt P --views upright``: a candidate classifier's shipped files.
* ``cls_v15`` (2026-12-07, issue 38, reader v2's classifier): the shipped classifier (``cls_v13``), 3 epochs on
  :func:`cls_data_v15` (a third of ``cls_v13``'s crops, damiantab-d6 train, rendered plain overhead dice under a hard shadow,
  rendered numeral / skull / emblem / d8 / d10 faces, half as ``x``, half as a random face); ``--threads 1`` on a shared machine, one checkpoint
  per epoch, ``--resume`` after an interruption. Measured, not shipped (model card, "Reader v2"): die accuracy fell on
  byler-d6, epanemu and rune55 val; ``export_cls --cls-pt runs/v02/cls_v15/weights/last.pt --views upright`` gave its files.
* ``export``: float ONNX exports (``dice_*.float.onnx``, float16-stored weights,
  :func:`kosti.datasets.train.compact_onnx`), their INT8 versions (``dice_*.onnx``, the shipped files since
  v1.1: :mod:`kosti.datasets.quantize`, calibrated on the shared sets' train photos), NCNN export folders
  (:func:`kosti.datasets.train.export_ncnn`) and stripped ``.pt`` of ``det_v3`` (640 px) and ``cls_p5b``
  (64 px) into ``runs/v02/export``; copy to ``models/`` after
  ``python benchmarks/select_operating_point.py --det … --cls …`` has chosen the operating point and
  ``kosti eval`` agrees. ``--det-pt`` / ``--cls-pt`` name other checkpoints; v1.0 is
  ``export --det-pt runs/v02/det_v5/weights/last.pt --cls-pt runs/v02/cls_v5m/weights/last.pt`` (v1.1 = the same
  command with the INT8 step, then ``select_operating_point.py`` on the INT8 files).

Usage: ``python scripts/finetune_reader.py det|cls|det_v3|cls_p5|det_v4|cls_p5c|det_v5|det_v5b|cls_v5|cls_v5m|det_v6|cls_v6|cmp26|det_v7|cls_v7|cls_v8|cls_v9|cls_v10|cls_v11|cls_v12|cls_v12b|cls_v13|cls_v14|cls_v15|export_cls|det_v8|det_v9|det_v10|export [--base-det models/dice_det.pt]
[--base-cls models/dice_cls.pt] [--threads N] [--resume]`` (the bases are v0.1's, for ``det`` and ``cls``). Needs
``../shared/datasets`` (or ``KOSTI_SHARED``) and the ``train`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from kosti.common.ultralytics_env import import_ultralytics, offline_env

offline_env()  # before anything imports Ultralytics
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reader_data import (  # noqa: E402  (a sibling module: the stages' training sets)
    REPO,
    RUNS,
    SHARED,
    _tag,
    cls_data,
    cls_data_v5,
    cls_data_v5m,
    cls_data_v7,
    cls_data_v8,
    cls_data_v9,
    cls_data_v10,
    cls_data_v11,
    cls_data_v12,
    cls_data_v13,
    cls_data_v15,
    det_data,
    det_data_v3,
    det_data_v4,
    det_data_v5,
    det_data_v6,
    det_data_v10,
)

#: Detector settings of every detector stage (v0.2 and v0.3): one class, flips, scale, mosaic, strong hue
#: jitter for coloured dice.
DET_AUG: dict[str, Any] = dict(batch=16, workers=2, single_cls=True, fliplr=0.5, flipud=0.5, degrees=0.0, scale=0.5, mosaic=1.0,
               hsv_h=0.15, hsv_s=0.7, hsv_v=0.4)
#: Classifier settings of every classifier stage: 64 px crops, flips, light scale and erasing, colour jitter.
CLS_AUG: dict[str, Any] = dict(imgsz=64, batch=128, workers=1, fliplr=0.5, flipud=0.5, scale=0.15, erasing=0.1, hsv_h=0.2,
               hsv_s=0.6, hsv_v=0.4)


def _epoch(ckpt: Path) -> int:
    """Epochs completed in an Ultralytics checkpoint (its ``epoch`` is 0-based)."""
    import torch

    return int(torch.load(ckpt, map_location="cpu", weights_only=False).get("epoch", -1)) + 1


def _train(name: str, start: Path | str, stop_after: int | None = None, transfer: Path | None = None,
           threads: int | None = None, **settings) -> Path:
    """Train (or resume) stage ``name`` from ``start`` (a ``.pt``, or a model YAML whose layers of matching
    name and shape are first copied from ``transfer``) with ``threads`` torch threads (default: every core);
    returns the stage's ``best.pt``."""
    YOLO = import_ultralytics().YOLO
    from ultralytics.utils import torch_utils

    # Ultralytics trains on the CPU with os.cpu_count() - 1 torch threads (1 on this 2-core machine, the other
    # core left idle: its data loader keeps up with one); with both, 3.2 s per batch of 16 instead of 6.0 here.
    torch_utils.NUM_THREADS = threads or os.cpu_count() or 1

    last = RUNS / name / "weights" / "last.pt"
    best = RUNS / name / "weights" / "best.pt"
    if last.exists() and _finished(last):  # a rerun skips stages that are done
        return best
    model = YOLO(str(last if last.exists() else start))
    if transfer is not None and not last.exists():
        model.load(str(transfer))
    if stop_after is not None:  # end the run after this many epochs, keeping the full schedule's LR curve
        def _stop(trainer):
            if trainer.epoch + 1 >= stop_after:
                trainer.stop = True
        model.add_callback("on_fit_epoch_end", _stop)
    caches = set(SHARED.rglob("*.cache"))
    try:
        if last.exists():
            model.train(resume=True)
        else:
            model.train(project=str(RUNS), name=name, exist_ok=True, device="cpu", amp=False, plots=False,
                        cache=True, deterministic=False, optimizer="AdamW", warmup_epochs=0, cos_lr=True,
                        **settings)
    finally:  # Ultralytics writes a label cache beside any writable labels folder: ../shared is never written
        for new in set(SHARED.rglob("*.cache")) - caches:
            new.unlink(missing_ok=True)
    return best


def backbone_init(yaml: str, base: Path, out: Path, layers: int = 11) -> Path:
    """Save at ``out`` a one-class detector built from ``yaml`` whose first ``layers`` layers (the backbone:
    0-10 in YOLO11n and YOLO26n, the same modules in both) are copied from the detector ``base``; the rest
    keeps Ultralytics' initial weights. Returns ``out`` (kept: a rerun reuses it)."""
    import torch

    import_ultralytics()
    from ultralytics.nn.tasks import DetectionModel

    if out.exists():
        return out
    model = DetectionModel(yaml, nc=1, verbose=False)
    src = torch.load(base, map_location="cpu", weights_only=False)["model"].float().state_dict()
    own = model.state_dict()
    picked = {k: v for k, v in src.items() if int(k.split(".")[1]) < layers and k in own and own[k].shape == v.shape}
    if len(picked) != sum(int(k.split(".")[1]) < layers for k in own):
        raise RuntimeError(f"{yaml}: the backbone of {base} does not fit ({len(picked)} tensors matched)")
    model.load_state_dict({**own, **picked})
    model.names = {0: "die"}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model, "train_args": {"imgsz": 640, "task": "detect"}, "epoch": -1}, out)
    return out


def _finished(ckpt: Path) -> bool:
    """True for a completed Ultralytics run: its final checkpoint is stripped (no optimizer state)."""
    import torch

    return torch.load(ckpt, map_location="cpu", weights_only=False).get("optimizer") is None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=["det", "cls", "det_v3", "cls_p5", "det_v4", "cls_p5c", "det_v5", "det_v5b", "cls_v5", "cls_v5m",
                                     "det_v6", "cmp26", "cls_v6", "det_v7", "cls_v7", "cls_v8", "cls_v9", "cls_v10", "cls_v11", "cls_v12", "cls_v12b", "cls_v13", "cls_v14", "cls_v15", "export_cls", "det_v8", "det_v9", "det_v10",
                                     "export"])
    ap.add_argument("--base-det", type=Path, default=REPO / "models" / "dice_det.pt")
    ap.add_argument("--base-cls", type=Path, default=REPO / "models" / "dice_cls.pt")
    ap.add_argument("--det-pt", type=Path, default=None,
                    help="export: the detector checkpoint to ship (default: det_v3's last.pt, v0.3); cls_v7: the "
                         "detector whose boxes the crops are cut around (.onnx or .pt; default models/dice_det.onnx)")
    ap.add_argument("--cls-pt", type=Path, default=None,
                    help="export: the classifier checkpoint to ship (default: cls_p5b's last.pt, v0.3)")
    ap.add_argument("--views", choices=["turns", "upright"], default="turns",
                    help="export / export_cls: the classifier's test-time views (reader.json; INT8 calibration)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads of a training stage (default: every core; 1 leaves a shared machine room)")
    ap.add_argument("--resume", action="store_true",
                    help="go on with the stage's interrupted run (runs/v02/STAGE/weights/last.pt; a stage rerun "
                         "without it resumes too): refused when the stage has no checkpoint")
    args = ap.parse_args()
    if args.resume and not (RUNS / args.stage / "weights" / "last.pt").exists():
        ap.error(f"--resume: no checkpoint at {RUNS / args.stage / 'weights' / 'last.pt'}")
    if args.stage == "det":
        aug: dict[str, Any] = dict(data=str(det_data()), **DET_AUG)
        # Stage a: 2 epochs at 416 of a 9-epoch cosine schedule (stopped by hand after epoch 2, as in v0.2).
        a = RUNS / "det416" / "weights" / "last.pt"
        if not (RUNS / "det640").is_dir() and not (a.exists() and _epoch(a) >= 2):
            _train("det416", args.base_det, imgsz=416, epochs=9, close_mosaic=2, seed=5, lr0=0.0015,
                   stop_after=2, **aug)
        # Stage b: 640 px. v0.2 ran its first 2 epochs on a 7-epoch cosine schedule, then the schedule was
        # cut to 5 epochs (to fit the session); a rebuild with epochs=5 differs only in those 2 epochs' LR.
        _train("det640", a, imgsz=640, epochs=5, close_mosaic=2, seed=6, lr0=0.001, **aug)
    elif args.stage == "cls":
        a = _train("cls", args.base_cls, data=str(cls_data()), epochs=15, seed=3, lr0=0.0006, **CLS_AUG)
        mixed = str(cls_data(pxl_extra=9))
        b = _train("cls_pxl", a, data=mixed, epochs=8, seed=4, lr0=0.0004, **CLS_AUG)
        _train("cls_pxl2", b, data=mixed, epochs=10, seed=5, lr0=0.0003, **CLS_AUG)
    elif args.stage == "det_v3":
        # v0.3 detector: the v0.2 detector, 3 epochs of a fresh 4-epoch cosine schedule at 640 px, with
        # oblique synthetic scenes in the mix (v0.3 was trained through epoch 4; epoch 3 measured better).
        aug = dict(data=str(det_data_v3()), **DET_AUG)
        _train("det_v3", RUNS / "det640" / "weights" / "best.pt", imgsz=640, epochs=4, close_mosaic=2, seed=9,
               lr0=0.0005, stop_after=3, **aug)
    elif args.stage == "det_v4":
        # candidate v0.4 detector: the shipped v0.3 detector (det_v3 epoch 3), 3 epochs of a cosine schedule
        # at 640 px on det_data_v4 (lower rate, mosaic off in the last epoch).
        aug = dict(data=str(det_data_v4()), **DET_AUG)
        _train("det_v4", RUNS / "det_v3_e3.pt", imgsz=640, epochs=3, close_mosaic=1, seed=11, lr0=0.0003,
               save_period=1, **aug)
    elif args.stage == "det_v5":
        # candidate v1.0 detector: the shipped v0.3 detector, 2 epochs of a cosine schedule at 640 px on
        # det_data_v5 (epanemu train and wide synthetic scenes in the mix; mosaic off in the last), every
        # epoch saved for selection.
        aug = dict(data=str(det_data_v5()), **DET_AUG)
        _train("det_v5", args.base_det, imgsz=640, epochs=2, close_mosaic=1, seed=13, lr0=0.0005,
               save_period=1, **aug)
    elif args.stage == "det_v5b":
        # candidate v1.0 detector, continued: det_v5's last epoch, 3 more epochs of a fresh cosine schedule at
        # a lower rate on the same data (det_v5 was still improving: epanemu val mAP50 0.747 -> 0.783), mosaic
        # off in the last, every epoch saved for selection.
        aug = dict(data=str(det_data_v5()), **DET_AUG)
        _train("det_v5b", RUNS / "det_v5" / "weights" / "last.pt", imgsz=640, epochs=3, close_mosaic=1, seed=15,
               lr0=0.0003, save_period=1, **aug)
    elif args.stage == "det_v6":
        # candidate v1.1 detector: the shipped v1.0 detector (det_v5 epoch 2), 4 epochs of a fresh cosine
        # schedule at 640 px on det_data_v6 (det_v5's data, rune55 doubled), mosaic off in the last, every
        # epoch saved for selection end to end (a better mAP is not a better reading).
        aug = dict(data=str(det_data_v6()), **DET_AUG)
        _train("det_v6", args.base_det, imgsz=640, epochs=4, close_mosaic=1, seed=17, lr0=0.0004,
               save_period=1, **aug)
    elif args.stage == "det_v7":
        # candidate v1.2 detector: the shipped v1.0 detector, 5 epochs of a fresh cosine schedule at 800 px on
        # det_data_v6 (the shared sets' 640 px photos are upscaled 1.25x, so a 15-30 px die of epanemu val is
        # 19-37 px at the network: the small dice v1.0 misses), mosaic off in the last, every epoch saved for
        # selection end to end at 800 px.
        aug = dict(data=str(det_data_v6()), **DET_AUG)
        _train("det_v7", args.base_det, imgsz=800, epochs=5, close_mosaic=1, seed=29, lr0=0.0005,
               save_period=1, **aug)
    elif args.stage == "det_v8":
        # candidate: det_v7 (runs/v02/det_v7_e5.pt, its 5th epoch at 800 px) brought back to 640 px, 3 epochs of
        # a fresh cosine schedule on det_data_v6 at a low rate: a detector that reads at the shipped 640 px input
        # (the speed target) with the small-die recall learnt at 800. Read at 640, det_v7 already finds more
        # dice than v1.0 but was never trained at that size.
        start = args.det_pt or RUNS / "det_v7_e5.pt"
        if not start.exists():  # det_v7's last epoch, its training state stripped (float16 weights), as it was run
            from kosti.datasets.train import stripped_copy

            stripped_copy(RUNS / "det_v7" / "weights" / "last.pt", start)
        aug = dict(data=str(det_data_v6()), **DET_AUG)
        _train("det_v8", start, imgsz=640, epochs=3, close_mosaic=1, seed=37, lr0=0.0003, save_period=1, **aug)
    elif args.stage == "det_v9":
        # candidate: det_v8 (shipped in v1.2) 3 more epochs of a fresh cosine schedule at 640 px on det_data_v6 at
        # a lower rate, mosaic off in the last two: det_v8's epanemu val mAP50-95 rose in each of its 3 epochs
        # (0.495, 0.500, 0.513; most in the last, its one epoch without mosaic). Every epoch saved for selection.
        aug = dict(data=str(det_data_v6()), **DET_AUG)
        _train("det_v9", args.det_pt or RUNS / "det_v8" / "weights" / "last.pt", imgsz=640, epochs=3, close_mosaic=2,
               seed=41, lr0=0.0002, save_period=1, **aug)
    elif args.stage == "cls_v7":
        # candidate v1.2 classifier: the shipped v1.0 classifier, 4 epochs at a low rate on cls_v5m's crops plus
        # crops cut around the detector's own boxes (--det-pt, default the shipped INT8 detector), matched dice
        # and the detector's weak stray boxes as "x": the classifier meets the boxes, and the clutter, that
        # the reader gives it.
        det = args.det_pt or REPO / "models" / "dice_det.onnx"
        _train(f"cls_v7_{_tag(det)}", args.base_cls, data=str(cls_data_v7(det)), epochs=4, seed=31, lr0=0.0003,
               save_period=1, **CLS_AUG)
    elif args.stage in ("cls_v8", "cls_v9"):
        # candidate classifiers: cls_v7's crops plus dim, flat copies of a quarter of them (cls_v8: dark dice with
        # dark pips), and cls_v8's plus lamp-glint copies (cls_v9); from the shipped v1.0 classifier, 3 epochs at
        # cls_v7's rate.
        det = args.det_pt or REPO / "models" / "dice_det.onnx"
        data, seed = (cls_data_v8, 33) if args.stage == "cls_v8" else (cls_data_v9, 35)
        _train(f"{args.stage}_{_tag(det)}", args.base_cls, data=str(data(det)), epochs=3, seed=seed, lr0=0.0003,
               save_period=1, **CLS_AUG)
    elif args.stage == "det_v10":
        # candidate detector (2026-12-03): det_v8 (v1.2's detector, its full last.pt) 2 epochs of a fresh cosine
        # schedule at 640 px on det_data_v10 (det_v6's data without the empty-labelled dice, plus worse-camera
        # copies of a third of the real photos), mosaic off in the last. Every epoch saved for selection.
        start = args.det_pt or RUNS / "det_v8" / "weights" / "last.pt"
        aug = dict(data=str(det_data_v10()), **DET_AUG)
        _train("det_v10", start, imgsz=640, epochs=2, close_mosaic=1, seed=41, lr0=0.0002, save_period=1, **aug)
    elif args.stage == "cls_v10":
        # candidate classifier (2026-12-03): cls_v7's crops plus copies of 40 % of them as other dice under a worse
        # camera (hue, blur, shake, noise, JPEG …); from the shipped classifier, 3 epochs at cls_v7's rate.
        det = args.det_pt or REPO / "models" / "dice_det.onnx"
        _train(f"cls_v10_{_tag(det)}", args.base_cls, data=str(cls_data_v10(det)), epochs=3, seed=37, lr0=0.0003,
               save_period=1, **CLS_AUG)
    elif args.stage == "cls_v11":
        # candidate classifier (2026-12-03, evening): the shipped classifier, 2 epochs on real crops plus the picture
        # dice and other sure boxes on no die of rune55 train as ``x`` (cls_data_v11), at a low rate.
        _train("cls_v11", args.base_cls, data=str(cls_data_v11()), epochs=2, seed=54, lr0=0.0002, **CLS_AUG)
    elif args.stage == "cls_v12":
        # candidate classifier (2026-12-03, late): the shipped classifier, 3 epochs on crops that keep dice seen from
        # the side upright (cls_data_v12) and without vertical flips, to be read without turning the crop
        # (identity and mirror views only): a die's top face is the one at the top of such a crop.
        _train("cls_v12", args.base_cls, data=str(cls_data_v12()), epochs=3, seed=61, lr0=0.0003, save_period=1,
               **{**CLS_AUG, "flipud": 0.0})
    elif args.stage == "cls_v12b":
        # cls_v12 (its last epoch), 3 more epochs of a fresh cosine schedule at a lower rate on the same crops.
        _train("cls_v12b", RUNS / "cls_v12" / "weights" / "last.pt", data=str(cls_data_v12()), epochs=3, seed=62,
               lr0=0.0002, save_period=1, **{**CLS_AUG, "flipud": 0.0})
    elif args.stage == "cmp26":
        # YOLO26n against YOLO11n on the same footing (issue 11): each built from Ultralytics' YAML with one
        # class, the shipped detector's backbone (layers 0-10, identical in both) copied in and frozen, neck
        # and head trained from their initial weights for 2 epochs on det_data_v6; only the architecture
        # after the backbone differs. Read end to end by benchmarks/compare_detectors.py; speed: bench_yolo26.py.
        aug = dict(data=str(det_data_v6()), **DET_AUG)
        for arch in ("yolo11n", "yolo26n"):
            init = backbone_init(f"{arch}.yaml", args.base_det, RUNS / f"cmp_{arch}_init.pt")
            _train(f"cmp_{arch}", init, imgsz=640, epochs=2, close_mosaic=1, seed=19, lr0=0.002, freeze=11,
                   save_period=1, **aug)
    elif args.stage == "cls_v6":
        # candidate v1.1 classifier: the shipped v1.0 classifier (cls_v5m), 4 epochs at a low rate on cls_v5's
        # real crops (epanemu train 3 per die, byler-d6 and rune55 train 2 per die): more of the coloured,
        # translucent and oblique dice v1.0 leaves uncertain, with the sets it already reads in the mix.
        _train("cls_v6", args.base_cls, data=str(cls_data_v5()), epochs=4, seed=23, lr0=0.0002, **CLS_AUG)
    elif args.stage == "cls_v5":
        # candidate v1.0 classifier: the shipped v0.3 classifier, 8 epochs on real crops incl. epanemu train
        _train("cls_v5", args.base_cls, data=str(cls_data_v5()), epochs=8, seed=14, lr0=0.0004, **CLS_AUG)
    elif args.stage == "cls_v5m":
        # candidate v1.0 classifier, mixed: the shipped v0.3 classifier, 6 epochs on v0.3's own crops (real,
        # synthetic and *PXL* extras) plus cls_v5's epanemu train crops; cls_v5 alone (real crops only) read
        # epanemu val better (die_accuracy 0.866 -> 0.938) but forgot some of byler-d6 and rune55.
        _train("cls_v5m", args.base_cls, data=str(cls_data_v5m()), epochs=6, seed=16, lr0=0.0004, **CLS_AUG)
    elif args.stage == "cls_p5c":
        # candidate: one more 10-epoch cosine cycle of the v0.3 classifier on the same crops (seed 12)
        _train("cls_p5c", RUNS / "cls_p5b" / "weights" / "last.pt", data=str(cls_data(pxl_extra=9)), epochs=10,
               seed=12, lr0=0.0003, **CLS_AUG)
    elif args.stage == "cls_p5":
        # v0.3 classifier: the full YOLO11n-cls (P5 stage back), its layers 0-6 copied from the v0.2
        # (P4-cut) classifier, trained on the same crops as cls_pxl2.
        mixed = str(cls_data(pxl_extra=9))
        a = _train("cls_p5", "yolo11n-cls.yaml", transfer=RUNS / "cls_pxl2" / "weights" / "best.pt", data=mixed,
                   epochs=20, seed=8, lr0=0.001, **CLS_AUG)
        # then 10 more epochs from its last epoch (its best.pt by val top-1 is epoch 8: read end to end
        # on rune55 val, epoch 20 is better, so the continuation starts there) at a lower rate.
        _train("cls_p5b", a.with_name("last.pt"), data=mixed, epochs=10, seed=10, lr0=0.0003, **CLS_AUG)
    elif args.stage == "cls_v13":
        # cls_v12's recipe for longer on cls_data_v13 (the dice seen from above twice as often): the shipped
        # classifier, 6 epochs, no vertical flips.
        _train("cls_v13", args.base_cls, data=str(cls_data_v13()), epochs=6, seed=65, lr0=0.0003, save_period=1,
               **{**CLS_AUG, "flipud": 0.0})
    elif args.stage == "cls_v14":
        # cls_v13's recipe twice as long (its training loss was still falling, above the validation loss): the
        # shipped classifier (cls_v13), 12 epochs of a fresh cosine schedule on the same crops, no vertical flips.
        _train("cls_v14", args.base_cls, data=str(cls_data_v13()), epochs=12, seed=71, lr0=0.0003, save_period=1,
               **{**CLS_AUG, "flipud": 0.0})
    elif args.stage == "cls_v15":
        # Reader v2's classifier (issue 38): the shipped classifier (cls_v13), 3 epochs on cls_data_v15 (a third of cls_v13's
        # crops + damiantab-d6 train + rendered overhead plain dice under a hard shadow + rendered unknown faces, half
        # as x and half as a random face), a low rate (the shipped weights are the start), no vertical flips; checkpoint every epoch.
        _train("cls_v15", args.base_cls, data=str(cls_data_v15()), epochs=3, seed=75, lr0=0.0002, save_period=1,
               threads=args.threads, **{**CLS_AUG, "flipud": 0.0})
    elif args.stage == "export_cls":
        # A candidate classifier alone, as the shipped files would be: INT8 ONNX calibrated in its views, the float
        # export, NCNN, and a reader.json naming its views (its temperature is fitted by select_operating_point.py).
        if args.cls_pt is None:
            ap.error("export_cls needs --cls-pt")
        from kosti.datasets.ncnn_weights import int8_weights_into_ncnn
        from kosti.datasets.quantize import calibration_photos, quantize_classifier
        from kosti.datasets.train import export_ncnn, export_onnx, stripped_copy

        out = RUNS / f"{_tag(args.cls_pt)}_export"
        out.mkdir(parents=True, exist_ok=True)
        pt = stripped_copy(args.cls_pt, out / "dice_cls_src.pt")
        f32 = export_onnx(pt, 64, out / "dice_cls.float.onnx")
        shutil.move(out / "dice_cls.float.pt", out / "dice_cls.pt")
        quantize_classifier(f32, out / "dice_cls.onnx", calibration_photos(SHARED), views=args.views)
        export_ncnn(out / "dice_cls.pt", 64, out / "dice_cls_ncnn_model")
        int8_weights_into_ncnn(out / "dice_cls.onnx", out / "dice_cls_ncnn_model")  # reads as the INT8 file
        pt.unlink()
        (out / "reader.json").write_text(json.dumps({"views": args.views}) + "\n")
        print(f"exported to {out}")
    else:
        from kosti.datasets.train import export_ncnn, export_onnx, stripped_copy, trained_imgsz

        out = RUNS / "export"
        out.mkdir(parents=True, exist_ok=True)
        det_pt = args.det_pt or RUNS / "det_v3" / "weights" / "last.pt"
        cls_pt = args.cls_pt or RUNS / "cls_p5b" / "weights" / "last.pt"
        from kosti.datasets.ncnn_weights import int8_weights_into_ncnn
        from kosti.datasets.quantize import calibration_photos, quantize_classifier, quantize_detector

        photos = calibration_photos(SHARED)  # train splits only
        for src, name, size, quantize in ((det_pt, "dice_det", trained_imgsz(det_pt, 640), quantize_detector),
                                          (cls_pt, "dice_cls", 64, quantize_classifier)):
            pt = stripped_copy(src, out / f"{name}_src.pt")
            f32 = export_onnx(pt, size, out / f"{name}.float.onnx")  # also copies the .pt beside it
            shutil.move(out / f"{name}.float.pt", out / f"{name}.pt")
            quantize(f32, out / f"{name}.onnx", photos)  # v1.1: the shipped ONNX file is the INT8 one
            export_ncnn(out / f"{name}.pt", size, out / f"{name}_ncnn_model")  # the Pi's lean runtime
            int8_weights_into_ncnn(out / f"{name}.onnx", out / f"{name}_ncnn_model")  # reads as the INT8 file
            pt.unlink()
        print(f"exported to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
