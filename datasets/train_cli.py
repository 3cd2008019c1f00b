"""``kosti train``: fine-tune (or build) the dice reader on labelled photos, evaluate, register, activate.

Typical use on a table's own dice (issue "Retrain on your own dice")::

    kosti train --data ~/kosti-captures            # detector + classifier, ~10 min on a 2-core CPU
    kosti train --data ~/kosti-captures --classifier-only --epochs-cls 8   # dice changed only: fits a Pi

A part of the user's images (``--holdout``, default 0.2) is held back; the active model and the new
one are both measured on it with :func:`kosti.vision.evaluate.evaluate` and the new version is
activated only when it is not worse (``--force`` overrides); every version stays in the registry for
``kosti models use`` / ``kosti models rollback``. ``--base-data`` replays earlier data (for example the
shared real photos) so old dice are not forgotten.

Dataset arguments take ``PATH`` or ``PATH:SPLIT`` (default split ``train``), PATH being a YOLO
``data.yaml`` or a folder with ``images/`` and ``labels/`` (faces as classes, class k = face k+1).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from kosti.datasets.prepare import label_path, split_images
from kosti.datasets.train import DEFAULT_IMGSZ, TrainingError, TrainPlan, run_training, split_holdout
from kosti.models import MODELS_DIR


def _dataset_arg(text: str) -> tuple[Path, str]:
    path, _, split = text.partition(":") if ":" in text and not Path(text).exists() else (text, "", "")
    p = Path(path).expanduser()
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{path}: no such dataset (a data.yaml or a folder with images/)")
    return p, split or "train"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kosti train`` to the top-level parser."""
    p = subparsers.add_parser(
        "train",
        help="fine-tune the dice reader on your own labelled photos (or build it from scratch)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", type=_dataset_arg, action="append", required=True, metavar="PATH[:SPLIT]",
                   help="labelled photos to learn (repeatable)")
    p.add_argument("--val", type=_dataset_arg, action="append", default=[], metavar="PATH[:SPLIT]",
                   help="validation data for per-epoch checks (default: the held-back part)")
    p.add_argument("--base-data", type=_dataset_arg, action="append", default=[], metavar="PATH[:SPLIT]",
                   help="earlier data replayed with yours so old dice are not forgotten")
    p.add_argument("--holdout", type=float, default=0.2,
                   help="fraction of --data held back to compare old and new model (0 = none)")
    p.add_argument("--epochs-det", type=int, default=10, help="detector epochs (0 = keep the current detector)")
    p.add_argument("--epochs-cls", type=int, default=10, help="classifier epochs (0 = keep the current one)")
    p.add_argument("--classifier-only", action="store_true", help="retrain only the face classifier")
    p.add_argument("--imgsz", type=int, default=None,
                   help=f"detector input size in pixels (default: the base detector's own size; "
                        f"{DEFAULT_IMGSZ} with --from-scratch)")
    p.add_argument("--from-scratch", action="store_true", help="start from the YAML, not the shipped weights")
    p.add_argument("--base", type=Path, default=MODELS_DIR, help="folder with dice_det.pt / dice_cls.pt to fine-tune")
    p.add_argument("--work", type=Path, default=None, help="work folder (checkpoints; rerun to resume)")
    p.add_argument("--out", type=Path, default=None, help="write the new models here instead of the registry")
    p.add_argument("--fraction", type=float, default=1.0, help="use only this fraction of training images")
    p.add_argument("--batch-det", type=int, default=16)
    p.add_argument("--batch-cls", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.002,
                   help="initial learning rate when fine-tuning (AdamW, no warm-up); lower it for very short runs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ncnn", action="store_true", help="also export NCNN models for the Raspberry Pi")
    p.add_argument("--no-activate", action="store_true", help="register the new version without activating it")
    p.add_argument("--force", action="store_true", help="activate even if the new model measures worse")
    p.add_argument("--reviewed-only", action="store_true",
                   help="train only on images marked reviewed in a capture folder (kosti capture / review page)")
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON line (the only output on stdout; logs go to stderr)")
    p.set_defaults(func=_run)


def _link_subset(images: list[Path], dest: Path) -> Path:
    """Make a YOLO folder ``dest/images``, ``dest/labels`` of links to ``images`` and their labels."""
    (dest / "images").mkdir(parents=True, exist_ok=True)
    (dest / "labels").mkdir(parents=True, exist_ok=True)
    for i, img in enumerate(images):
        name = f"{i:05d}_{img.name}"
        for src, dst in ((img, dest / "images" / name), (label_path(img), dest / "labels" / Path(name).with_suffix(".txt"))):
            if dst.is_symlink() or dst.exists():
                dst.unlink()
            if src.exists():
                os.symlink(src.resolve(), dst)
    return dest


def _run(args: argparse.Namespace) -> int:
    """Train, measure, register; everything but the summary goes to stderr (Ultralytics logs to stdout)."""
    from kosti.ultralytics_env import offline_env, stdout_to_stderr

    offline_env()  # before anything below imports Ultralytics
    with stdout_to_stderr():
        summary = _train(args)
    print(json.dumps(summary, indent=None if args.json else 2, default=str))
    return 0


def _train(args: argparse.Namespace) -> dict:
    work = args.work or Path(tempfile.mkdtemp(prefix="kosti-train-"))
    work.mkdir(parents=True, exist_ok=True)
    data = list(args.data)
    if args.reviewed_only:
        from kosti.datasets.capture import link_reviewed

        data = []
        for i, (d, _split) in enumerate(args.data):
            linked = work / f"reviewed_{i}"
            if link_reviewed(d, linked) == 0:
                raise TrainingError(f"{d}: no reviewed images (review them on the dashboard's /review page)")
            data.append((linked, "train"))
    images = [img for d, s in data for img in split_images(d, s)]
    if not images:
        raise TrainingError("no images in " + ", ".join(str(d) for d, _ in data))
    train_imgs, held = split_holdout(images, args.holdout, args.seed)
    user_train = _link_subset(train_imgs, work / "user_train")
    train = [(user_train, "train")] + list(args.base_data)
    holdout = _link_subset(held, work / "user_holdout") if held else None
    val = list(args.val) or ([(holdout, "train")] if holdout else [(user_train, "train")])
    plan = TrainPlan(
        train=train, val=val, work=work, epochs_det=0 if args.classifier_only else args.epochs_det,
        epochs_cls=args.epochs_cls, imgsz=args.imgsz, base=None if args.from_scratch else args.base,
        from_scratch=args.from_scratch, batch_det=args.batch_det, batch_cls=args.batch_cls,
        fraction=args.fraction, seed=args.seed, lr_finetune=args.lr,
    )
    out = args.out or work / "export"
    files = run_training(plan, out, ncnn=args.ncnn)
    summary: dict = {"work": str(work), "files": {k: str(v) for k, v in files.items()},
                     "train_images": len(train_imgs), "held_back_images": len(held)}
    if holdout is not None:
        from kosti.vision.evaluate import evaluate  # imported late: training must not depend on it to start

        summary["new"] = evaluate(holdout, detector=files["det"], classifier=files["cls"])
        if args.out is None:
            from kosti.registry import Registry

            reg = Registry()
            old = reg.active_paths()
            summary["old"] = evaluate(holdout, detector=old.detector, classifier=old.classifier)
            summary["new"]["data"] = summary["old"]["data"] = f"holdout:{work}"
            version = reg.add_version(
                {k: v for k, v in files.items()}, summary["new"], source=f"kosti train on {len(train_imgs)} images",
                activate=False,
            )
            summary["version"] = version
            summary["activated"] = False
            if not args.no_activate:
                from kosti.registry import compare_metrics

                sign, reason = compare_metrics(summary["new"], summary["old"])
                if sign >= 0 or args.force:
                    reg.use(version, force=True)  # compared here, on the same held-back images
                    summary["activated"] = True
                else:
                    summary["refused"] = f"new model is worse on the held-back images: {reason}"
    return summary
