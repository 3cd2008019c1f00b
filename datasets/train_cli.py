"""``kosti train``: teach the dice reader a table's own dice, gate the result, register and activate it.

Typical use (``../shared/docs/cli.md``; ``docs/retraining.md``)::

    kosti train --data ~/kosti-captures        # a capture folder: its reviewed photos
    kosti train --data ~/my-dice-photos        # a plain Ultralytics YOLO folder (images/, labels/) or data.yaml

What it does by default (issue 14, "teach kosti your dice without forgetting every other table"):

1. takes the user's labelled photos — a capture folder's *reviewed* photos (``--include-unreviewed`` for
   all), or every photo of a YOLO folder — and holds back at least 10 of them (half when there are fewer
   than 20; :func:`kosti.datasets.gate.holdout_count`), never trained on;
2. measures the current (active) reader on the photos it will train on and retrains only what is needed:
   nothing when it already reads them all right (recall and die accuracy ≥ :data:`NOTHING_TO_LEARN` on the
   training photos and the held-back ones; ``--retrain`` trains anyway), else the face classifier, and the
   detector too only when it *misses* dice (:func:`kosti.datasets.gate.needs_detector`; ``--detector
   always|never`` overrides, ``--classifier-only`` = ``never``);
3. replays the shipped real photos (:data:`kosti.datasets.replay.REPLAY_TRAIN`, no ``--base-data`` needed)
   with the user's photos, which are repeated so that they weigh about half as much as the replay, and mixes
   the fine-tuned classifier with the current one (:mod:`kosti.datasets.weight_mix`, ``--cls-share``);
4. fits each candidate's softmax temperature on its held-back crops (its own ``reader.json``), measures it
   on the held-back photos and on the shipped reference photos, and activates it only when it is no worse
   than the current model on both (:func:`kosti.datasets.gate.gate`: precision, recall and die accuracy each
   within 0.005). A retrained detector that fails the gate is dropped and the classifier-only candidate
   (the kept detector with the new classifier) is tried next.

With ``--json`` the last and only line on stdout is one JSON document, always with ``version`` (``null`` when
no version was registered), ``activated`` (``false`` then), ``before`` and ``after`` (the current and the new
reader on the held-back photos, each the full ``kosti eval --json`` document; ``null`` with ``--holdout 0``; when
nothing needs learning, the current reader on the training photos)
and ``minutes``, plus ``reference``, ``passes``, ``gate``, ...; training logs go to stderr. Dataset arguments
take ``PATH`` or ``PATH:SPLIT`` (default split ``train``) and are checked as ``kosti eval`` checks them
(:func:`kosti.vision.evaluate.load_dataset`: a malformed data.yaml is one line and exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from kosti.datasets.prepare import label_path, split_images
from kosti.datasets.train import DEFAULT_IMGSZ, TrainingError, TrainPlan, run_training, split_holdout
from kosti.engine.texts import ru_plural
from kosti.models import MODELS_DIR

#: Calibrating a temperature on fewer matched dice than this is noise; the base model's is kept instead.
MIN_CALIBRATION_DICE = 20
#: A temperature fitted on held-back crops with fewer wrong reads than this may not fall below the base
#: model's: with (nearly) no errors to see, the fit runs to its lower bound (see :func:`_calibrate`).
MIN_CALIBRATION_ERRORS = 5
#: The current reader "already reads your dice" when recall and die accuracy on the user's photos are both at
#: least this: one wrong or missed die in 200. Retraining then has nothing to fix, and a fine-tune can only
#: drift (measured on skovy-webcam with reader v1.0: a classifier retrained on 14 perfectly read photos fell
#: from 1.000 to 0.950 on the held-back ones and from 0.964 to 0.951 on the reference set; the gate refused it).
NOTHING_TO_LEARN = 0.995
#: Candidate names in Russian, for the refusal reason on the teach page.
_CANDIDATE_RU = {"classifier": "классификатор", "detector+classifier": "детектор и классификатор"}
#: The user's photos are repeated up to this many times to weigh about half as much as the replay photos.
MAX_REPEAT = 8
#: Keys every ``--json`` document has (``../shared/docs/cli.md``), with their value when nothing was made.
CONTRACT_KEYS: dict[str, Any] = {"version": None, "activated": False, "before": None, "after": None}


def _dataset_arg(text: str) -> tuple[Path, str]:
    path, _, split = text.partition(":") if ":" in text and not Path(text).exists() else (text, "", "")
    p = Path(path).expanduser()
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{path}: no such dataset (a data.yaml or a folder with images/)")
    return p, split or "train"


def _auto_or(convert: Callable[[str], float], valid: Callable[[float], bool], what: str) -> Callable[[str], Any]:
    """An argparse type for an option that is ``auto`` or a number ``convert`` reads and ``valid`` accepts; anything
    else is one line naming ``what`` to give (exit 2)."""

    def parse(text: str) -> Any:
        if text == "auto":
            return text
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not valid(value):
            raise argparse.ArgumentTypeError(f"{text!r}: give auto or {what}")
        return value

    return parse


_share_arg = _auto_or(float, lambda v: 0.0 <= v <= 1.0, "a share from 0 to 1")
_epochs_arg = _auto_or(int, lambda v: v >= 0, "a number of epochs (0 = keep the classifier)")


#: ``kosti train --help``: the module docstring for people (no cross-references).
DESCRIPTION = """Teach the dice reader your own dice, check it against forgetting, register and activate it.

  kosti train --data ~/kosti-captures    # a capture folder: its reviewed photos
  kosti train --data ~/my-dice-photos    # a plain Ultralytics YOLO folder (images/, labels/) or data.yaml

By default it holds back at least 10 of your photos (never trained on), measures the reader you use now on
the others and retrains only what is needed: nothing when it already reads them all right (--retrain
trains anyway), else the face classifier, and a short detector pass (2 epochs, backbone frozen) only when
dice are still missed. It replays real photos that ship with kosti and mixes the new classifier with the
current one (--cls-share), so other tables are not forgotten, and activates a new version only when it reads
your held-back photos better and, on the shipped reference photos, precision, recall and die accuracy are
each no worse than the current reader's by more than 0.005. It prints what each pass cost and bought.
Rerun the same command after an interruption to resume. See docs/retraining.md."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kosti train`` to the top-level parser."""
    p = subparsers.add_parser(
        "train",
        help="teach the dice reader your own dice (classifier first, gated against forgetting)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", type=_dataset_arg, action="append", required=True, metavar="PATH[:SPLIT]",
                   help="your labelled photos: a capture folder, a YOLO folder (images/, labels/) or a data.yaml "
                        "(repeatable)")
    p.add_argument("--val", type=_dataset_arg, action="append", default=[], metavar="PATH[:SPLIT]",
                   help="validation data for Ultralytics' per-epoch checks (default: your training photos)")
    p.add_argument("--base-data", type=_dataset_arg, action="append", default=[], metavar="PATH[:SPLIT]",
                   help="more earlier data replayed with yours (the replay set from the shared data sets is "
                        "always used unless --no-replay)")
    p.add_argument("--no-replay", action="store_true",
                   help="do not replay the real photos of the replay set (datasets/replay_set/manifest.json)")
    p.add_argument("--holdout", type=float, default=0.2,
                   help="fraction of your photos held back (default 0.2; at least 10, or half when fewer than 20; 0 = none)")
    p.add_argument("--detector", choices=["auto", "always", "never"], default="auto",
                   help="retrain the detector: auto = only when it misses your dice (default)")
    p.add_argument("--classifier-only", action="store_true", help="same as --detector never")
    p.add_argument("--epochs-det", type=int, default=2,
                   help="epochs of the detector pass, when one runs (default 2; with the backbone frozen an epoch of 100 "
                        "photos took about 2.5 min on a 2-core PC)")
    p.add_argument("--freeze-det", type=int, default=10, metavar="N",
                   help="detector pass: keep its first N layers as they are (default 10 = YOLO11n's backbone up to "
                        "SPPF, half the time per epoch; 0 = train every layer)")
    p.add_argument("--epochs-cls", type=_epochs_arg, default="auto", metavar="auto|N",
                   help="classifier epochs (default auto: 12 when the current reader reads fewer than 0.95 of the "
                        "dice it finds in your photos right — faces it has no pips for, such as numerals, need a "
                        "fine-tune sure of them before it is mixed with the current one, --cls-share — else 5, "
                        "when it reads them right and only misses dice; 0 = keep the current one)")
    p.add_argument("--imgsz", type=int, default=None,
                   help=f"detector input size in pixels (default: the base detector's own size; "
                        f"{DEFAULT_IMGSZ} with --from-scratch)")
    p.add_argument("--from-scratch", action="store_true", help="start from the YAML, not the shipped weights")
    p.add_argument("--base", type=Path, default=MODELS_DIR, help="folder with dice_det.pt / dice_cls.pt to fine-tune")
    p.add_argument("--work", type=Path, default=None, help="work folder (checkpoints; rerun to resume)")
    p.add_argument("--out", type=Path, default=None, help="write the new models here instead of the registry")
    p.add_argument("--registry", type=Path, default=None, metavar="DIR",
                   help="model registry root (default $XDG_DATA_HOME/kosti/models)")
    p.add_argument("--fraction", type=float, default=1.0, help="use only this fraction of training images")
    p.add_argument("--batch-det", type=int, default=16, help="detector images per batch (default 16)")
    p.add_argument("--batch-cls", type=int, default=128, help="classifier crops per batch (default 128)")
    p.add_argument("--lr", type=float, default=0.002,
                   help="initial learning rate when fine-tuning the detector (AdamW, no warm-up)")
    p.add_argument("--lr-cls", type=float, default=0.0005,
                   help="initial learning rate when fine-tuning the face classifier (gentler: it must not forget)")
    p.add_argument("--cls-share", type=_share_arg, default="auto", metavar="auto|0-1",
                   help="mix the fine-tuned classifier with the current one so other tables' dice stay read: auto = "
                        "the smallest share of the new weights that reads your dice as well (default), 1 = the "
                        "fine-tune alone")
    p.add_argument("--seed", type=int, default=1, help="random seed of the split and the training (default 1)")
    p.add_argument("--ncnn", action="store_true", help="also export NCNN models for the Raspberry Pi")
    p.add_argument("--float", dest="int8", action="store_false",
                   help="keep the new models' ONNX files float (default: INT8, as the shipped reader's)")
    p.add_argument("--no-activate", action="store_true", help="register the new version without activating it")
    p.add_argument("--force", action="store_true", help="activate even if the gate refuses it")
    p.add_argument("--retrain", action="store_true",
                   help="train even when the current reader already reads every photo right")
    p.add_argument("--include-unreviewed", action="store_true",
                   help="with a capture folder: also train on photos nobody reviewed (their labels are the "
                        "model's own proposals)")
    p.add_argument("--reviewed-only", action="store_true", help=argparse.SUPPRESS)  # the default now
    p.add_argument("--json", action="store_true", help="print one JSON document (the last line on stdout)")
    p.set_defaults(func=_run)


def _link_subset(images: list[Path], dest: Path) -> Path:
    """Make a YOLO folder ``dest/images``, ``dest/labels`` of links to ``images`` and their labels."""
    for sub in ("images", "labels"):
        if (dest / sub).exists():
            shutil.rmtree(dest / sub)
        (dest / sub).mkdir(parents=True)
    for i, img in enumerate(images):
        name = f"{i:05d}_{img.name}"
        os.symlink(img.resolve(), dest / "images" / name)
        if label_path(img).exists():
            os.symlink(label_path(img).resolve(), dest / "labels" / Path(name).with_suffix(".txt"))
    return dest


def _is_capture(path: Path) -> bool:
    from kosti.datasets.capture import REVIEW_JSON

    return path.is_dir() and (path / REVIEW_JSON).is_file()


def check_datasets(args: argparse.Namespace) -> None:
    """Check ``--val`` and ``--base-data`` as ``kosti eval`` checks a dataset (``--data`` is checked by
    :func:`user_images`), before anything is measured or trained.

    Raises:
        DatasetError: a malformed or unreadable data.yaml, a missing split, no images (exit 2).
    """
    from kosti.vision.evaluate import load_dataset

    for d, split in [*args.val, *args.base_data]:
        load_dataset(d, split)


def user_images(args: argparse.Namespace, work: Path) -> list[Path]:
    """The user's labelled photos: a capture folder's reviewed ones (all with ``--include-unreviewed``),
    every photo of a YOLO folder / data.yaml split. Each dataset is first loaded as ``kosti eval`` loads it
    (:func:`kosti.vision.evaluate.load_dataset`), and every label file is read once here, so a malformed
    data.yaml or label file stops the run before any training (``DatasetError``, exit 2).

    Raises:
        TrainingError: no photos, or a capture folder with nothing reviewed. DatasetError: see above.
    """
    from kosti.datasets.capture import link_reviewed
    from kosti.datasets.prepare import read_labels
    from kosti.vision.evaluate import load_dataset
    from kosti.vision.reader import load_image

    images: list[Path] = []
    for i, (d, split) in enumerate(args.data):
        if _is_capture(d) and not args.include_unreviewed:
            linked = work / f"reviewed_{i}"
            if link_reviewed(d, linked) == 0:
                raise TrainingError(f"{d}: no reviewed photos (check them on the dashboard's review page, or "
                                    "pass --include-unreviewed)")
            d, split = linked, "train"
        # Found as kosti eval finds them, with its checks and one-line errors (malformed YAML, missing split, ...)
        found = [item.image for item in load_dataset(d, split).items]
        for img in found:
            h, w = load_image(img).shape[:2]
            read_labels(img, w, h)
        images += found
    if not images:
        raise TrainingError("no images in " + ", ".join(str(d) for d, _ in args.data))
    return images


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _calibrate(det: Path, cls: Path, holdout: Path | None, fallback: Path | None,
               keep_views: bool = True) -> dict[str, Any]:
    """Fit the classifier's temperature on the held-back photos' matched dice and write ``reader.json``
    beside ``cls`` (the base model's temperature when fewer than :data:`MIN_CALIBRATION_DICE` dice), with the
    base's test-time ``views`` when it names them (the candidate is read, and fitted, in those views; not with
    ``keep_views`` False: a classifier trained from scratch, on turned crops, is read in the four turns).

    A fit on held-back crops that the candidate reads (almost) all right is degenerate: the likelihood only
    grows as the temperature falls, so the fit runs to its lower bound and makes every probability ~1 — and
    the reader's second look, which confirms a weak box at face probability ≥ ``verify_prob``, then confirms
    clutter (measured on the procedural-dice proof: T 0.18 against the base 0.895, reference precision
    0.947 → 0.917). With fewer than :data:`MIN_CALIBRATION_ERRORS` wrong reads among them, the temperature
    is therefore kept at least the base model's.
    """
    from kosti.vision.evaluate import collect_face_probs, fit_temperature, load_dataset
    from kosti.vision.reader import DiceReader

    base_t, views = 1.0, None
    if fallback is not None and fallback.is_file():
        base_doc = json.loads(fallback.read_text())
        base_t, views = float(base_doc.get("temperature", 1.0)), base_doc.get("views") if keep_views else None
    doc: dict[str, Any] = {}
    if holdout is not None:
        reader = DiceReader(det, cls, temperature=1.0, views=views or "turns")  # read as the candidate will be
        probs, target = collect_face_probs(reader, load_dataset(holdout, "train"))
        if len(target) >= MIN_CALIBRATION_DICE:
            fitted = round(fit_temperature(probs, target), 4)
            wrong = int((np.asarray(probs).argmax(axis=1) != np.asarray(target)).sum())
            doc = {"temperature": fitted,
                   "fitted_on": f"{len(target)} matched dice of {holdout.name} (kosti train's held-back photos)"}
            if wrong < MIN_CALIBRATION_ERRORS and fitted < base_t:
                doc = {"temperature": base_t, "fitted": fitted,
                       "fitted_on": f"kept from the base model: the fit on {len(target)} held-back dice with "
                                    f"{wrong} wrong reads gave {fitted}, lower than the base's (overconfident)"}
    if not doc:
        doc = {"temperature": base_t, "fitted_on": f"kept from the base model (fewer than {MIN_CALIBRATION_DICE} "
                                                   "held-back dice to fit on)"}
    if views is not None:  # the candidate is read in its base's views (kosti.datasets.train.base_views)
        doc["views"] = views
    (cls.parent / "reader.json").write_text(json.dumps(doc, indent=2) + "\n")
    return doc


def _eval(data: Path, det: Path, cls: Path, compute_map: bool = True) -> dict[str, Any]:
    """The reader ``det``/``cls`` measured on ``data``: the ``kosti eval --json`` document
    (:func:`kosti.vision.evaluate.evaluate_data`, the evaluation ``kosti eval`` runs).

    ``compute_map`` runs the low-threshold detector pass for mAP50 / mAP50-95, which doubles the detector's
    time: on for the documents that ``before`` and ``after`` report, off where only recall and die accuracy
    decide something (mAP then comes from the working-threshold boxes, as ``kosti eval --no-map``).
    """
    from kosti.vision.evaluate import evaluate_data

    doc = evaluate_data(data, split="train", detector=det, classifier=cls, compute_map=compute_map)
    doc.pop("data", None)  # a link folder in the work folder: not part of the eval document
    doc.pop("split", None)
    return doc


def _already_reads(user_train: Path, holdout: Path | None, det: Path, cls: Path) -> dict[str, Any] | None:
    """The summary part of "nothing to learn", or ``None`` when the current reader gets something wrong.

    The current reader (``det``/``cls``) is measured on the training photos and on the held-back ones; when
    recall and die accuracy are both ≥ :data:`NOTHING_TO_LEARN` on each, returns ``{"before", "after"}``
    (the held-back ``kosti eval`` document, with mAP; equal: nothing changes), ``"training_photos"`` (the
    metrics there), and the reason in both languages (``"nothing_to_learn"``, ``"nothing_to_learn_ru"``).
    The held-back photos are measured only when the training photos are read right.
    """
    def reads_all(m: dict[str, Any]) -> bool:
        return m["dice"] > 0 and m["recall"] >= NOTHING_TO_LEARN and m["die_accuracy"] >= NOTHING_TO_LEARN

    on_train = _eval(user_train, det, cls, compute_map=holdout is None)  # it is before/after without held-back photos
    if not reads_all(on_train):
        return None
    sets = [on_train] + ([_eval(holdout, det, cls)] if holdout is not None else [])
    if not all(reads_all(m) for m in sets):
        return None
    dice = sum(m["dice"] for m in sets)
    photos = sum(m["images"] for m in sets)
    worst_recall = min(m["recall"] for m in sets)
    worst_da = min(m["die_accuracy"] for m in sets)
    en = (f"nothing to retrain: the current reader already reads your dice (recall {worst_recall:.3f}, die "
          f"accuracy {worst_da:.3f} on {photos} photos, {dice} dice); the current reader stays (--retrain "
          "trains anyway)")
    ru = (f"переобучать нечего: текущая модель уже читает ваши кости (полнота {_ru_num(worst_recall)}, доля "
          f"верно прочитанных костей {_ru_num(worst_da)} на {photos} "
          f"{ru_plural(photos, 'снимке', 'снимках', 'снимках')}, {dice} {ru_plural(dice, 'кость', 'кости', 'костей')}); "
          "остаётся текущая модель")
    held = sets[-1] if holdout is not None else on_train
    return {"before": held, "after": held, "training_photos": on_train, "nothing_to_learn": en,
            "nothing_to_learn_ru": ru}


def pass_report(work: Path, before: dict[str, Any], verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each training pass cost and bought (issue 41 item 3).

    Args:
        work: the work folder (each pass's ``runs/<det|cls>/cost.json``, :data:`kosti.datasets.train.COST_JSON`).
        before: the current reader's ``kosti eval`` document on the held-back photos.
        verdicts: the gate's verdicts (``candidate`` ``classifier`` = the kept detector + the new classifier,
            ``detector+classifier`` = both retrained), each with its ``held_back`` document.

    Returns:
        one row per pass that ran, classifier first: ``{"pass", "minutes", "cpu_minutes", "from", "to"}`` —
        ``from``/``to`` are ``{"recall", "die_accuracy", "image_exact"}`` on the held-back photos before and after
        the pass (the classifier pass from the current reader, the detector pass from the classifier pass's
        candidate, or from the current reader when no classifier-only candidate was measured).
    """
    from kosti.datasets.train import COST_JSON

    keys = ("recall", "die_accuracy", "image_exact")
    held = {v["candidate"]: v["held_back"] for v in verdicts}
    rows: list[dict[str, Any]] = []
    for name, role, start in (("classifier", "cls", before), ("detector", "det", held.get("classifier", before))):
        end = held.get("classifier" if role == "cls" else "detector+classifier")
        cost_file = work / "runs" / role / COST_JSON
        if end is None or not cost_file.is_file() or (role == "cls" and "classifier" not in held):
            continue
        cost = json.loads(cost_file.read_text())
        rows.append({"pass": name, "minutes": cost.get("minutes"), "cpu_minutes": cost.get("cpu_minutes"),
                     "from": {k: start[k] for k in keys}, "to": {k: end[k] for k in keys}})
    return rows


def pass_lines(report: list[dict[str, Any]]) -> list[str]:
    """One English line per row of :func:`pass_report`: minutes (wall and CPU) and recall / die accuracy / exact
    throws on the held-back photos before → after the pass."""
    return [f"{r['pass']} pass: {r['minutes']:.1f} min ({r['cpu_minutes']:.1f} CPU min); held-back recall "
            f"{r['from']['recall']:.3f} → {r['to']['recall']:.3f}, die accuracy {r['from']['die_accuracy']:.3f} → "
            f"{r['to']['die_accuracy']:.3f}, exact throws {r['from']['image_exact']:.2f} → {r['to']['image_exact']:.2f}"
            for r in report]


def _ru_num(x: float) -> str:
    """``0.998`` → ``"0,998"`` (a decimal comma in Russian text)."""
    return f"{x:.3f}".replace(".", ",")


def _say(msg: str) -> None:
    print(f"kosti train: {msg}", file=sys.stderr, flush=True)


def _teach(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from kosti.datasets.gate import (
        EPOCHS_CLS_NEW_FACES,
        FOUND_TARGET,
        classifier_epochs,
        found_recall,
        gate_verdict,
        holdout_count,
        needs_detector,
    )
    from kosti.datasets.replay import ReplayUnavailable, reference_metrics, replay_train
    from kosti.registry import Registry, reader_files
    from kosti.vision.evaluate import load_dataset
    from kosti.vision.reader import DiceReader

    check_datasets(args)
    images = user_images(args, work)
    k = holdout_count(len(images), args.holdout)
    train_imgs, held = split_holdout(images, k / len(images) if k else 0.0, args.seed)
    user_train = _link_subset(train_imgs, work / "user_train")
    holdout = _link_subset(held, work / "user_holdout") if held else None
    registering = args.out is None
    reg = Registry(args.registry) if registering else None
    summary: dict[str, Any] = {"train_images": len(train_imgs), "held_back_images": len(held)}

    # What needs retraining: measured with the model the user reads with now.
    before_det, before_cls, before_version = reader_files(registry=reg) if registering else \
        (args.base / "dice_det.onnx", args.base / "dice_cls.onnx", "base")
    assert before_det is not None and before_cls is not None  # no files named: the active (or --base) pair
    summary["before_version"] = before_version
    auto_epochs = args.epochs_cls == "auto"
    if auto_epochs:  # a classifier from scratch has every face to learn
        args.epochs_cls = EPOCHS_CLS_NEW_FACES
    summary["epochs_cls"] = {"epochs": args.epochs_cls, "auto": auto_epochs, "reason": (
        f"{args.epochs_cls} classifier epochs: " + ("trained from scratch" if auto_epochs else "--epochs-cls"))}
    if args.from_scratch:
        detector = "always"
    else:
        found = found_recall(DiceReader(before_det, before_cls), load_dataset(user_train, "train"))
        summary["found_before"] = found
        if auto_epochs:  # measured in the same pass as found_recall (issue 41)
            args.epochs_cls, why, why_ru = classifier_epochs(found)
            summary["epochs_cls"] = {"epochs": args.epochs_cls, "auto": True, "reason": why, "reason_ru": why_ru}
        detector = "never" if args.classifier_only else args.detector
        if detector == "auto":
            detector = "classifier_first" if needs_detector(found) and args.epochs_cls > 0 else \
                "always" if needs_detector(found) else "never"
        plan_words = {"always": "retraining the detector too", "never": "classifier only",
                      "classifier_first": "the classifier first, the detector only if your dice are still missed"}
        _say(f"the current detector finds {found['found']:.3f} of your {found['dice']} dice (boxes above "
             f"{found['floor']}): {plan_words[detector]}")
        if auto_epochs:
            _say(summary["epochs_cls"]["reason"])
        if detector == "never" and not args.retrain and not args.force:
            reads = _already_reads(user_train, holdout, before_det, before_cls)
            if reads is not None:
                summary.update(reads, passes=[], trained="nothing", activated=False)
                _say(summary["nothing_to_learn"])
                return summary
    summary["passes"] = (["detector"] if detector in ("always", "classifier_first") else []) + (
        ["classifier"] if args.epochs_cls > 0 else [])

    replay = []
    if not args.no_replay:
        try:
            replay = [replay_train()]
        except ReplayUnavailable as exc:
            _say(f"training without replay: {exc}")
            summary["replay"] = str(exc)
    repeat = 1
    if replay:
        n_replay = len(split_images(*replay[0]))
        repeat = max(1, min(MAX_REPEAT, round(0.5 * n_replay / max(1, len(train_imgs)))))
    summary["user_repeat"] = repeat
    plan = TrainPlan(
        train=[(user_train, "train")] * repeat + replay + list(args.base_data), turned=replay + list(args.base_data),
        val=list(args.val) or [(user_train, "train")], work=work,
        epochs_det=args.epochs_det if detector in ("always", "classifier_first") else 0,
        epochs_cls=args.epochs_cls, imgsz=args.imgsz,
        base=None if args.from_scratch else args.base, from_scratch=args.from_scratch, batch_det=args.batch_det,
        batch_cls=args.batch_cls, fraction=args.fraction, seed=args.seed, lr_finetune=args.lr,
        lr_cls=args.lr_cls, freeze_det=0 if args.from_scratch else args.freeze_det,  # a random backbone must learn
        int8=args.int8, cls_share=None if args.from_scratch else args.cls_share,
    )
    out = args.out or work / "export"
    if detector == "classifier_first":
        # Classifier first: a detector pass costs several times the classifier's time (issue 14: ≤ 15 min), and
        # a classifier that knows the dice confirms the detector's weak boxes (the reader's second look).
        files = run_training(replace(plan, epochs_det=0), out, ncnn=args.ncnn)
        _calibrate(Path(files["det"]), Path(files["cls"]), holdout, args.base / "reader.json" if args.base else None,
                   keep_views=not args.from_scratch)
        reads = _eval(user_train, Path(files["det"]), Path(files["cls"]), compute_map=False)  # recall decides
        summary["classifier_first"] = reads
        detector = "never" if reads["recall"] >= FOUND_TARGET else "always"
        _say(f"with the new classifier the reader finds {reads['recall']:.3f} of your dice: "
             + ("the detector stays" if detector == "never" else "retraining the detector too"))
        if detector == "always":
            det_files = run_training(replace(plan, epochs_cls=0), work / "export_detector", ncnn=args.ncnn)
            files = {**{k: v for k, v in det_files.items() if k.startswith("det")},
                     **{k: v for k, v in files.items() if k.startswith("cls")}}
        summary["passes"] = (["detector"] if detector == "always" else []) + ["classifier"]
    else:
        files = run_training(plan, out, ncnn=args.ncnn)
    summary["files"] = {k: str(v) for k, v in files.items()}
    mix = work / "runs" / "cls" / "mix" / "mix.json"
    if plan.epochs_cls > 0 and mix.is_file():
        summary["classifier_share"] = json.loads(mix.read_text())

    # Candidates, best first: the retrained pair; then the kept detector with the new classifier.
    candidates = [("detector+classifier" if detector == "always" else "classifier", files)]
    if detector == "always" and plan.epochs_cls > 0 and args.base is not None and not args.from_scratch:
        alt = work / "export_classifier_only"
        alt.mkdir(parents=True, exist_ok=True)
        shutil.copy2(args.base / "dice_det.onnx", alt / "dice_det.onnx")
        shutil.copy2(files["cls"], alt / "dice_cls.onnx")
        candidates.append(("classifier", {"det": alt / "dice_det.onnx", "cls": alt / "dice_cls.onnx"}))
    base_reader_json = args.base / "reader.json" if args.base is not None else None
    for _name, f in candidates:
        summary.setdefault("calibration", {})[_name] = _calibrate(Path(f["det"]), Path(f["cls"]), holdout,
                                                                 base_reader_json, keep_views=not args.from_scratch)
    if holdout is None or not registering:  # nothing registered: version null, activated false (_run)
        if holdout is not None:
            if before_det.is_file() and before_cls.is_file():  # --from-scratch may have no current pair
                summary["before"] = _eval(holdout, before_det, before_cls)
            summary["after"] = _eval(holdout, Path(files["det"]), Path(files["cls"]))
        return summary

    _say(f"measuring the current model and the candidates on {len(held)} held-back photos and the reference set")
    assert reg is not None
    before = {"held_back": _eval(holdout, before_det, before_cls)}
    try:
        before["reference"] = reference_metrics(before_det, before_cls, cache_dir=reg.root)
    except ReplayUnavailable as exc:  # the gate then holds on the held-back photos alone
        _say(f"no reference photos: {exc}")
    summary["before"], summary["reference"] = before["held_back"], {"before": before.get("reference")}
    chosen = None
    verdicts: list[dict[str, Any]] = []
    for name, f in candidates:
        det, cls = Path(f["det"]), Path(f["cls"])
        measured: dict[str, Any] = {"held_back": _eval(holdout, det, cls),
                    "reference": reference_metrics(det, cls) if "reference" in before else None}
        ok, reason, reason_ru = gate_verdict(measured, before)
        verdicts.append({"candidate": name, "passed": ok, "reason": reason, "reason_ru": reason_ru, **measured})
        _say(f"candidate {name}: {'passes' if ok else 'refused'}: {reason}")
        if chosen is None and (ok or args.force):
            chosen = (name, f, measured)
    summary["gate"] = verdicts
    summary["pass_report"] = pass_report(work, before["held_back"], verdicts)
    for line in pass_lines(summary["pass_report"]):
        _say(line)
    name, f, measured = chosen or (verdicts[-1]["candidate"], candidates[-1][1],
                                   {k: verdicts[-1][k] for k in ("held_back", "reference")})
    summary["after"], summary["reference"]["after"] = measured["held_back"], measured["reference"]
    summary["trained"] = name
    metrics = {**(measured["reference"] or {}), "reference": measured["reference"],
               "held_back": {**measured["held_back"], "data": f"{len(held)} held-back photos of kosti train"}}
    version = reg.add_version({"det": f["det"], "cls": f["cls"]}, metrics,
                              source=f"kosti train ({name}) on {len(train_imgs)} photos, {len(held)} held back")
    summary["version"], summary["activated"] = version, False
    if chosen is None:
        summary["refused"] = "; ".join(f"{v['candidate']}: {v['reason']}" for v in verdicts)
        summary["refused_ru"] = "; ".join(f"{_CANDIDATE_RU.get(v['candidate'], v['candidate'])}: {v['reason_ru']}"
                                          for v in verdicts)
    elif not args.no_activate:
        reg.use(version, force=True)  # gated above, on the same photos as the current model
        summary["activated"] = True
    return summary


def _run(args: argparse.Namespace) -> int:
    from kosti.common.writable import writable_dir
    from kosti.registry import Registry

    t0, cpu0 = time.monotonic(), _cpu_seconds()
    # every folder training writes to, checked before the first minute of training (exit 2, one line)
    if args.out is not None:
        writable_dir(args.out, "--out folder")
    else:
        writable_dir(Registry(args.registry).root, "model registry")
    work = writable_dir(args.work, "--work folder") if args.work is not None \
        else Path(tempfile.mkdtemp(prefix="kosti-train-"))
    from kosti.common.ultralytics_env import offline_env, stdout_to_stderr

    offline_env()  # before anything below imports Ultralytics
    # Ultralytics logs to stdout (Python and native writes); cli.md keeps stdout for the JSON
    with stdout_to_stderr(), contextlib.redirect_stdout(sys.stderr):
        summary = {**CONTRACT_KEYS, **_teach(args, work)}  # the documented keys, first, even when nothing was made
    summary["work"] = str(work)
    summary["minutes"] = round((time.monotonic() - t0) / 60, 2)
    summary["cpu_minutes"] = round((_cpu_seconds() - cpu0) / 60, 2)
    if args.json:
        print(json.dumps(summary, default=str))
        return 0
    print(f"trained {', '.join(summary['passes']) or 'nothing'} in {summary['minutes']:.1f} min "
          f"({summary['train_images']} photos, {summary['held_back_images']} held back)")
    for key in ("before", "after"):
        if summary[key] is not None:
            m = summary[key]
            print(f"  {key:<6} held-back: precision {m['precision']:.3f}  recall {m['recall']:.3f}  "
                  f"die accuracy {m['die_accuracy']:.3f}  exact {m['image_exact']:.3f}")
    for line in pass_lines(summary.get("pass_report", [])):
        print(f"  {line}")
    if "nothing_to_learn" in summary:
        print(summary["nothing_to_learn"])
    elif summary["version"] is not None:
        state = "activated" if summary["activated"] else f"not activated ({summary.get('refused', '--no-activate')})"
        print(f"version {summary['version']}: {state}")
    else:
        print(f"models written to {summary['files']}")
    return 0


