"""Train the dice reader's two models with Ultralytics on the CPU, export them, and package a version.

This is the one training entry point (``kosti train``) used both to build the shipped models from the
shared real photos (``scripts/build_models.sh``) and to fine-tune them on a table's own dice
(issue "Retrain on your own dice"). Steps:

1. gather labelled YOLO datasets (faces as classes, class k = face k+1) — the user's captures, a replay
   of base data so old dice are not forgotten, and optional synthetic scenes;
2. build the one-class detector set (:func:`kosti.datasets.prepare.prepare_detection`) and the face
   classifier crops (:func:`kosti.datasets.prepare.prepare_classification`) in a work folder;
3. train the YOLO11n detector and the YOLO11n-cls face classifier, starting from the shipped ``.pt``
   weights (fine-tune; reader v0.3's classifier is the full YOLO11n-cls) or from the YAML
   (``from_scratch``: v0.1's design, the classifier cut at P4, ``models/kosti-cls-p4.yaml``);
   Ultralytics checkpoints every epoch, so an interrupted run resumes with ``resume=True``;
4. export both to ONNX (dynamic shape, no NMS inside, float16-stored weights: :func:`compact_onnx`) next
   to the ``.pt`` files.

Offline by construction: models are built from YAML or local ``.pt`` files, ``amp=False`` (Ultralytics'
AMP check would download weights), ``plots=False``, and Ultralytics imported only through
:func:`kosti.common.ultralytics_env.import_ultralytics` (no connectivity probe, PyPI check, analytics or font
download; ``tests/test_offline.py`` fails on any socket connection during a tiny ``kosti train``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from kosti.datasets.prepare import prepare_classification, prepare_detection, split_images
from kosti.models import MODELS_DIR

#: Architecture files (Ultralytics YAML) used when training from scratch.
DETECTOR_YAML = "yolo11n.yaml"
CLASSIFIER_YAML = str(MODELS_DIR / "kosti-cls-p4.yaml")
#: Detector input size in pixels when training from scratch (v0.1's first stage). Fine-tuning keeps the
#: base detector's own size (:func:`detector_imgsz`; 640 for the shipped v0.2 and v0.3, whose small-dice recall
#: needs it).
DEFAULT_IMGSZ = 416
#: Classifier input size (matches :data:`kosti.vision.crops.CROP_SIZE`).
CLS_IMGSZ = 64
#: Name suffix of the float16 copy of a weight written by :func:`compact_onnx` (the ``Cast`` back to
#: float32 outputs the weight's original name).
FP16_SUFFIX = "__fp16"
#: What one model's training cost (``{"minutes", "cpu_minutes"}``: training, mixing, export, INT8), written by
#: :func:`run_training` beside the run (``work/runs/<role>/cost.json``).
COST_JSON = "cost.json"


class TrainingError(RuntimeError):
    """Training input is unusable (no images, missing labels, unknown base model). CLI exit code 2."""

    exit_code = 2


#: Modules of the ``train`` extra (``pyproject.toml``) that every training run imports: Ultralytics trains, torch
#: under it, onnx for the export. The default install has none of them.
TRAIN_MODULES = ("torch", "ultralytics", "onnx")
#: How to install them (README, "Training").
TRAIN_INSTALL = "bash scripts/setup --train (or pip install 'kosti[train]')"


def require_train_extra() -> None:
    """Check that the ``train`` extra is installed, before any data is prepared.

    Raises:
        TrainingError: a module of :data:`TRAIN_MODULES` is missing (one line naming the install command).
    """
    import importlib.util

    def missing(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is None
        except (ImportError, ValueError):  # a broken or half-imported module: let the import itself tell
            return False

    absent = [m for m in TRAIN_MODULES if missing(m)]
    if absent:
        raise TrainingError(f"training needs the 'train' extra ({', '.join(absent)} not installed); install it "
                            f"with: {TRAIN_INSTALL}")


@dataclass
class TrainPlan:
    """What to train and from which data.

    Attributes:
        train: ``(dataset, split)`` pairs whose images train both models (dataset = a ``data.yaml`` or a
            folder with ``images/`` and ``labels/``).
        val: ``(dataset, split)`` pairs used for Ultralytics' per-epoch validation and ``best.pt``.
        work: folder for the prepared sets and Ultralytics runs (checkpoints live here).
        epochs_det / epochs_cls: epochs per model (0 skips that model; it is then copied from ``base``).
        imgsz: detector input size in pixels (multiple of 32); None = :func:`detector_imgsz`.
        base: folder holding ``dice_det.pt`` / ``dice_cls.pt`` to fine-tune (ignored with ``from_scratch``).
        batch_det / batch_cls: batch sizes; ``fraction``: fraction of the training images used (tests).
        crops_per_die: classifier crops cut per labelled die.
        lr_finetune: initial learning rate when fine-tuning (AdamW, no warm-up); ``lr_cls`` the classifier's
            own when set (``kosti train`` fine-tunes the classifier gentler: 0.0005, see docs/retraining.md).
        freeze_det: the detector's first N layers stay as they are (Ultralytics ``freeze``; 0 = train all).
        int8: write each trained model's ONNX file as INT8 (:mod:`kosti.datasets.quantize`, calibrated on the
            prepared training photos), as the shipped reader's are since v1.1; False keeps the float export.
        turned: the sources of ``train`` seen from above (the replayed shared photos, ``--base-data``), whose
            classifier crops are turned at random even for a classifier read upright (:func:`base_views`), as in
            the shipped classifier's own recipe; the table's own photos are cut upright.
        cls_share: a fine-tuned classifier is mixed with its base (:mod:`kosti.datasets.weight_mix`, so it keeps
            reading other tables' dice): ``"auto"`` = the smallest share of the fine-tuned weights that reads the
            validation crops as well as the fine-tune (:func:`~kosti.datasets.weight_mix.choose_share`), a number
            0–1 = that share, ``None`` = the fine-tune alone (building the shipped models).
    """

    train: list[tuple[Path, str]]
    val: list[tuple[Path, str]]
    work: Path
    epochs_det: int = 30
    epochs_cls: int = 15
    imgsz: int | None = None
    base: Path | None = MODELS_DIR
    from_scratch: bool = False
    batch_det: int = 16
    batch_cls: int = 128
    fraction: float = 1.0
    crops_per_die: int = 3
    seed: int = 1
    lr_finetune: float = 0.002
    lr_cls: float | None = None
    freeze_det: int = 0
    int8: bool = True
    extra: dict = field(default_factory=dict)
    turned: list[tuple[Path, str]] = field(default_factory=list)
    cls_share: float | str | None = None


def detector_imgsz(plan: TrainPlan) -> int:
    """Detector training size: ``plan.imgsz`` if set; else the size the base ``dice_det.pt`` was trained
    at (its Ultralytics ``train_args``), so fine-tuning never shrinks the input a model was made for; else
    (from scratch, or a base without that record) :data:`DEFAULT_IMGSZ`."""
    if plan.imgsz is not None:
        return int(plan.imgsz)
    pt = plan.base / "dice_det.pt" if plan.base is not None and not plan.from_scratch else None
    if pt is None or not pt.is_file():
        return DEFAULT_IMGSZ
    return trained_imgsz(pt)


def trained_imgsz(pt: Path, default: int = DEFAULT_IMGSZ) -> int:
    """Input size in pixels (the longest side) the Ultralytics checkpoint ``pt`` was trained at, from its
    ``train_args``; ``default`` when the checkpoint does not record it. Raises what ``torch.load`` raises for
    an unreadable file."""
    import torch

    args = torch.load(pt, map_location="cpu", weights_only=False).get("train_args") or {}
    size = args.get("imgsz", default)
    return int(max(size) if isinstance(size, (list, tuple)) else size)


def stripped_copy(src: Path, dst: Path) -> Path:
    """Copy the Ultralytics checkpoint ``src`` to ``dst`` without its training state (optimizer, EMA; weights
    float16), as the shipped ``.pt`` files are: Ultralytics' ``strip_optimizer``, imported offline. Returns ``dst``.
    Raises what ``shutil.copy2`` and ``torch.load`` raise for a missing or unreadable file."""
    from kosti.common.ultralytics_env import import_ultralytics

    import_ultralytics()
    from ultralytics.utils.torch_utils import strip_optimizer

    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    strip_optimizer(str(dst))
    return dst


def _yolo_class():
    """Ultralytics' ``YOLO``, imported offline (:func:`kosti.common.ultralytics_env.import_ultralytics`)."""
    from kosti.common.ultralytics_env import import_ultralytics

    return import_ultralytics().YOLO


def base_views(base: Path | None) -> str:
    """The test-time views (``reader.json``'s ``views``: ``turns`` or ``upright``) of the classifier in folder
    ``base`` that training starts from; ``turns`` without one. A classifier read ``upright`` (v1.3) learnt that
    the top face of a die seen from the side is at the top of its crop, so its fine-tuning keeps crops upright
    (turned at most ±10°) and never flips them upside down (:func:`prepare`, :func:`_fit`).

    Raises:
        TrainingError: the base's ``reader.json`` is not a JSON object.
    """
    import json

    cfg = Path(base) / "reader.json" if base is not None else None
    if cfg is None or not cfg.is_file():
        return "turns"
    try:
        return str(json.loads(cfg.read_text()).get("views", "turns"))
    except (ValueError, AttributeError) as exc:
        raise TrainingError(f"{cfg}: malformed reader settings ({exc})") from exc


def prepare(plan: TrainPlan) -> tuple[Path, Path]:
    """Build the detector set and the classifier crops under ``plan.work``.

    Returns:
        ``(detector data.yaml, classifier ImageFolder root)``.

    Raises:
        TrainingError: no training images were found.
    """
    det, cls = plan.work / "data" / "det", plan.work / "data" / "cls"
    for d in (det, cls):
        if d.exists():
            shutil.rmtree(d)
    n_train = prepare_detection(plan.train, det, "train")
    if n_train == 0:
        raise TrainingError("no training images found in " + ", ".join(str(d) for d, _ in plan.train))
    n_val = prepare_detection(plan.val or plan.train, det, "val")
    (det / "data.yaml").write_text(
        f"path: {det.resolve()}\ntrain: images/train\nval: images/val\nnames: {{0: die}}\n"
    )
    turn = 10.0 if _views(plan) == "upright" else 180.0
    own = [src for src in plan.train if src not in plan.turned]
    turned = [src for src in plan.train if src in plan.turned]
    for sources, angle, seed in ((own, turn, plan.seed), (turned, 180.0, plan.seed + 2)):
        if sources:
            prepare_classification(sources, cls, "train", per_die=plan.crops_per_die, seed=seed, max_angle=angle)
    prepare_classification(plan.val or plan.train, cls, "val", per_die=1, seed=plan.seed + 1, max_angle=turn)
    print(f"prepared {n_train} training and {n_val} validation images in {plan.work}")
    return det / "data.yaml", cls


def _views(plan: TrainPlan) -> str:
    """The views the classifier being trained will be read in: its base's (:func:`base_views`); ``turns`` from
    scratch."""
    return "turns" if plan.from_scratch else base_views(plan.base)


def _start_model(yaml: str, base_pt: Path | None, from_scratch: bool):
    YOLO = _yolo_class()

    if not from_scratch and base_pt is not None and base_pt.exists():
        return YOLO(str(base_pt)), True
    if not from_scratch:
        raise TrainingError(f"no base weights at {base_pt} to fine-tune; pass --from-scratch to train anew")
    return YOLO(yaml), False


def _fit(plan: TrainPlan, role: str, yaml: str, settings: dict) -> Path:
    """Train one model under ``plan.work/runs/<role>``; returns the path of its best ``.pt``.

    An unfinished run there (``last.pt`` without the ``done`` marker) is resumed from its last epoch,
    so an interrupted ``kosti train`` continues where it stopped. A new run starts from the base
    ``dice_<role>.pt`` (fine-tune, lower learning rate, no warm-up) or from ``yaml`` (``from_scratch``).
    """
    YOLO = _yolo_class()
    run = plan.work / "runs" / role
    last, done = run / "weights" / "last.pt", run / "weights" / "done"
    if last.exists() and not done.exists():
        YOLO(str(last)).train(resume=True)
    else:
        model, finetune = _start_model(yaml, plan.base and plan.base / f"dice_{role}.pt", plan.from_scratch)
        model.train(
            device="cpu", amp=False, plots=False, project=str(run.parent.resolve()), name=role, exist_ok=True,
            cache=True, seed=plan.seed, deterministic=False, fraction=plan.fraction, fliplr=0.5,
            flipud=0.0 if role == "cls" and _views(plan) == "upright" else 0.5,
            **settings,
            **({"lr0": plan.lr_cls if role == "cls" and plan.lr_cls is not None else plan.lr_finetune,
                "optimizer": "AdamW", "warmup_epochs": 0} if finetune else {}),
            **plan.extra.get(role, {}),
        )
    done.write_text("finished\n")
    best = run / "weights" / "best.pt"
    return best if best.exists() else last


def train_detector(plan: TrainPlan, data_yaml: Path) -> Path:
    """Train (or fine-tune) the one-class YOLO11n detector; returns the path of its best ``.pt``.

    Dice are square and look alike under flips; rotation augmentation is off because Ultralytics
    enlarges the axis-aligned box of a rotated die (up to 41 % at 45°), which would teach loose boxes.
    """
    return _fit(plan, "det", DETECTOR_YAML, dict(
        data=str(data_yaml), imgsz=detector_imgsz(plan), epochs=plan.epochs_det, batch=plan.batch_det, workers=2,
        single_cls=True, degrees=0.0, scale=0.5, mosaic=1.0, close_mosaic=min(5, plan.epochs_det // 3), val=True,
        **({"freeze": plan.freeze_det} if plan.freeze_det else {}),
    ))


def train_classifier(plan: TrainPlan, cls_root: Path) -> Path:
    """Train (or fine-tune) the face classifier on 64×64 crops; returns the path of its best ``.pt``.

    ``scale=0.1`` keeps Ultralytics' RandomResizedCrop to 90–100 % of the crop (its default would cut
    pips away), and random erasing is off for the same reason.
    """
    return _fit(plan, "cls", CLASSIFIER_YAML, dict(
        data=str(cls_root.resolve()), imgsz=CLS_IMGSZ, epochs=plan.epochs_cls, batch=plan.batch_cls, workers=1,
        scale=0.1, erasing=0.0, hsv_h=0.05, hsv_s=0.6, hsv_v=0.4,
    ))


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its finished children (Ultralytics' data loaders)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _keep_base(plan: TrainPlan, tuned: Path, cls_root: Path) -> Path:
    """The classifier checkpoint to export: ``tuned`` mixed with the base's weights by ``plan.cls_share``
    (:mod:`kosti.datasets.weight_mix`; the choice is recorded in ``runs/cls/mix.json``), or ``tuned`` itself when
    there is no share, no base (from scratch) or the share is 1."""
    from kosti.datasets.weight_mix import CHOICE_JSON, choose_share, mix_weights

    base = plan.base / "dice_cls.pt" if plan.base is not None and not plan.from_scratch else None
    if plan.cls_share is None or base is None or not base.is_file():
        return tuned
    out = plan.work / "runs" / "cls" / "mix"
    if plan.cls_share == "auto":
        pt, record = choose_share(base, tuned, cls_root, out)
    else:
        share = float(plan.cls_share)
        pt = tuned if share >= 1.0 else mix_weights(base, tuned, share, out / f"mix_{share:.2f}.pt")
        out.mkdir(parents=True, exist_ok=True)
        (out / CHOICE_JSON).write_text(f'{{"share": {share}}}\n')
        record = {"share": share}
    print(f"classifier: {record['share']:.2f} of the fine-tuned weights, the rest the base's "
          f"(validation crops read right by share: {record.get('accuracy', '-')})")
    return pt


def export_onnx(pt: Path, imgsz: int, out_onnx: Path) -> Path:
    """Export an Ultralytics ``.pt`` to ONNX (simplified, no NMS inside) at ``out_onnx``; the ``.pt`` is
    copied beside it (fine-tuning starts from it).

    The export has dynamic batch, height and width: the reader letterboxes a 16:9 camera frame to the
    smallest stride rectangle (416×256 instead of 416×416, ~40 % less work) and classifies all dice of
    a frame in one batch; ``imgsz`` in the metadata is the largest side it was trained for.
    """
    YOLO = _yolo_class()
    tmp = YOLO(str(pt)).export(format="onnx", imgsz=imgsz, simplify=True, dynamic=True, nms=False, device="cpu")
    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(tmp), out_onnx)
    last_axis_dfl(out_onnx)
    compact_onnx(out_onnx)
    shutil.copy2(pt, out_onnx.with_suffix(".pt"))
    return out_onnx


def last_axis_dfl(path: Path) -> bool:
    """Rewrite a YOLO detector export's DFL so its softmax runs over the last axis: same outputs, faster.

    Ultralytics' DFL (``ultralytics/nn/modules/block.py``: ``DFL.forward``) exports as
    ``Reshape (1, 4, 16, A)`` → ``Transpose (0, 2, 1, 3)`` → ``Softmax(axis=1)`` → ``Conv`` 1×1 with the
    fixed weights ``0 … 15`` (the expected bin) → ``(1, 1, 4, A)``. ONNX Runtime's CPU softmax over a
    non-last axis transposes internally and costs 1.9 ms of the detector's 21 ms on a 640×384 input
    (one core, this machine; ``onnxruntime`` profiling). The rewrite:
    ``Transpose (0, 1, 3, 2)`` → ``Softmax(axis=-1)`` over ``(1, 4, A, 16)`` → ``MatMul`` with the same
    weights as a ``(16, 1)`` column → ``(1, 4, A, 1)``. The following ``Reshape`` to ``(1, 4, A)`` takes
    either layout, so the graph's output is unchanged (bit-identical on the shipped detector); the
    detector runs ~1.7 ms faster.

    Rewrites ``path`` in place (dropping the recorded shapes of the three tensors it changes); a graph
    without that pattern (a classifier, an end-to-end export, one already rewritten, a Transpose that
    feeds anything else) is left as it is.

    Returns:
        ``True`` when the DFL was rewritten.

    Raises:
        onnx.checker.ValidationError: the rewritten model is not valid ONNX (the file is left as it was).
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    users: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    inits = {i.name: i for i in graph.initializer}

    def attr(node, name):
        return next((a for a in node.attribute if a.name == name), None)

    for softmax in graph.node:
        axis = attr(softmax, "axis")
        if softmax.op_type != "Softmax" or axis is None or axis.i != 1:
            continue
        transpose = producer.get(softmax.input[0])
        perm = attr(transpose, "perm") if transpose is not None and transpose.op_type == "Transpose" else None
        after = users.get(softmax.output[0], [])
        if (transpose is None or perm is None or list(perm.ints) != [0, 2, 1, 3] or len(users.get(transpose.output[0], [])) != 1
                or len(after) != 1 or after[0].op_type != "Conv"):
            continue
        conv = after[0]
        weight = inits.get(conv.input[1]) if len(conv.input) == 2 else None
        if weight is None or list(weight.dims)[0] != 1 or list(weight.dims)[2:] != [1, 1]:
            continue
        w = numpy_helper.to_array(weight).astype("float32")
        perm.ints[:] = [0, 1, 3, 2]
        axis.i = -1
        column = numpy_helper.from_array(w.reshape(1, -1).T.copy(), conv.input[1] + "_column")
        matmul = helper.make_node("MatMul", [softmax.output[0], column.name], list(conv.output),
                                  name=conv.name + "_as_matmul")
        nodes = [matmul if n is conv else n for n in graph.node]
        del graph.node[:]
        graph.node.extend(nodes)
        if len(users.get(weight.name, [])) == 1:
            graph.initializer.remove(weight)
        graph.initializer.append(column)
        changed = {transpose.output[0], softmax.output[0], *conv.output}  # their recorded shapes are stale now
        kept = [v for v in graph.value_info if v.name not in changed]
        del graph.value_info[:]
        graph.value_info.extend(kept)
        _save_checked(model, path)
        return True
    return False


def compact_onnx(path: Path, min_elements: int = 64) -> tuple[int, int]:
    """Halve an ONNX file on disk without changing what ONNX Runtime computes: rewrite it in place.

    Every float32 weight (initializer) with at least ``min_elements`` values is stored as float16 and
    followed by a ``Cast`` back to float32; ONNX Runtime's constant folding (graph optimisation level
    ``ORT_ENABLE_BASIC`` and up, the reader uses ``ORT_ENABLE_ALL``) replaces each ``Cast`` by a float32
    weight when the session is created, so inference runs the same float32 kernels at the same speed.
    Shape annotations (``value_info``, recomputed by ONNX Runtime) are dropped as well. The only change
    to the numbers is the rounding of each weight to float16 (relative error ≤ 2⁻¹¹ ≈ 0.05 %; the
    stripped ``.pt`` files are float16 already).

    Why: the shipped weights must stay under 20 MB in all (issue 3) while ``.pt`` files ship beside the
    ONNX files for fine-tuning; this frees about half of the ONNX bytes.

    Returns:
        ``(bytes_before, bytes_after)``.

    Raises:
        onnx.checker.ValidationError: the rewritten model is not valid ONNX (the file is left as it was).
    """
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    before = path.stat().st_size
    model = onnx.load(str(path))
    graph = model.graph
    casts, keep = [], []
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT and int(np.prod(init.dims)) >= min_elements:
            half = numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name + FP16_SUFFIX)
            keep.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT,
                                          name=init.name + "__cast"))
        else:
            keep.append(init)
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.value_info[:]
    _save_checked(model, path)
    return before, path.stat().st_size


def _save_checked(model, path: Path) -> None:
    """Validate an ONNX model and write it over ``path`` through a temporary file (``path`` is left as it
    was when ``onnx.checker.ValidationError`` is raised or the write fails)."""
    import onnx

    onnx.checker.check_model(model)
    tmp = path.with_suffix(".tmp.onnx")
    onnx.save(model, str(tmp))
    tmp.replace(path)


def export_ncnn(pt: Path, imgsz: int | None = None, out_dir: Path | None = None) -> Path:
    """Export an Ultralytics ``.pt`` to an NCNN model folder for the Raspberry Pi (the repeatable step that
    makes ``models/dice_det_ncnn_model`` and ``models/dice_cls_ncnn_model`` from the shipped ``.pt``).

    Float16 weights (:func:`kosti.vision.ultralytics_backend.export_model`); read by
    :mod:`kosti.vision.ncnn_backend` with the ``ncnn`` package alone.

    Args:
        pt: trained Ultralytics weights.
        imgsz: export input size in pixels (default: the training size). The NCNN detector reads any
            stride-multiple size (it decodes the head's maps itself); this only fixes the graph's own tail.
        out_dir: destination folder (replaced); default ``<pt stem>_ncnn_model`` beside ``pt``.

    Returns:
        The folder (``model.ncnn.param``, ``model.ncnn.bin``, ``metadata.yaml``).

    Raises:
        kosti.vision.onnx_backend.ModelLoadError: weights unusable or the export failed (no ``pnnx``).
    """
    from kosti.vision.ultralytics_backend import export_model

    tmp = export_model(pt, "ncnn", imgsz)
    if out_dir is None or tmp.resolve() == Path(out_dir).resolve():
        return tmp
    if out_dir.exists():
        shutil.rmtree(out_dir)
    shutil.move(str(tmp), out_dir)
    return out_dir


def run_training(plan: TrainPlan, out: Path, ncnn: bool = False) -> dict[str, Path]:
    """Prepare data, train both models (skipping any with 0 epochs), export ONNX (and NCNN) into ``out``.

    A model with 0 epochs is copied from ``plan.base`` unchanged, so ``out`` always holds a complete
    reader (``dice_det.onnx``, ``dice_cls.onnx`` and their ``.pt``). With ``plan.int8`` a trained model's
    ONNX file is its INT8 version (:func:`quantize_onnx`), and its NCNN folder (float16) holds that file's weights
    (:func:`kosti.datasets.ncnn_weights.int8_weights_into_ncnn`: the Pi's NCNN reader reads as the INT8 one).

    Returns:
        paths of the written files by role (``det``, ``cls``, optionally ``det_ncnn``, ``cls_ncnn``).

    Raises:
        TrainingError: the ``train`` extra is missing (:func:`require_train_extra`), or no data to train on.
    """
    require_train_extra()
    t0 = time.monotonic()
    data_yaml, cls_root = prepare(plan)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for role, epochs, trainer, data, imgsz in (
        ("det", plan.epochs_det, train_detector, data_yaml, detector_imgsz(plan)),
        ("cls", plan.epochs_cls, train_classifier, cls_root, CLS_IMGSZ),
    ):
        name = f"dice_{role}"
        if epochs > 0:
            t_role, cpu_role = time.monotonic(), cpu_seconds()
            pt = trainer(plan, data)
            if role == "cls":
                pt = _keep_base(plan, pt, cls_root)
            files[role] = export_onnx(pt, imgsz, out / f"{name}.onnx")
            if plan.int8:
                quantize_onnx(role, files[role], data_yaml, views=_views(plan))
            if ncnn:
                files[f"{role}_ncnn"] = export_ncnn(pt, imgsz, out / f"{name}_ncnn_model")
                if plan.int8:  # the NCNN reader reads as the INT8 one (kosti.datasets.ncnn_weights, issue 44)
                    from kosti.datasets.ncnn_weights import int8_weights_into_ncnn

                    int8_weights_into_ncnn(files[role], files[f"{role}_ncnn"])
            cost = {"minutes": round((time.monotonic() - t_role) / 60, 2),
                    "cpu_minutes": round((cpu_seconds() - cpu_role) / 60, 2)}
            (plan.work / "runs" / role / COST_JSON).write_text(json.dumps(cost) + "\n")
        else:
            if plan.base is None or not (plan.base / f"{name}.onnx").exists():
                raise TrainingError(f"{name}: 0 epochs asked and no base model to keep")
            for suffix in (".onnx", ".pt"):
                src = plan.base / f"{name}{suffix}"
                if src.exists() and src.resolve() != (out / src.name).resolve():
                    shutil.copy2(src, out / src.name)
            files[role] = out / f"{name}.onnx"
    print(f"training finished in {(time.monotonic() - t0) / 60:.1f} min → {out}")
    return files


def quantize_onnx(role: str, onnx_file: Path, data: Path, views: str = "turns") -> Path:
    """Replace a float ONNX export (``role`` ``"det"`` or ``"cls"``) by its INT8 version, in place, calibrated
    on the ``train`` photos of the prepared detector set ``data`` (its ``data.yaml``, :func:`prepare`; the
    classifier's crops are cut from their labels, in the test-time ``views`` it will be read in) with the shipped
    reader's recipe (:mod:`kosti.datasets.quantize`). About a minute for the detector on this 2-core CPU.

    Raises:
        TrainingError: no photo there could calibrate it (the float file is left as it was).
    """
    from kosti.datasets.quantize import quantize_classifier, quantize_detector
    from kosti.vision.evaluate import DatasetError

    photos = split_images(data, "train")
    tmp = onnx_file.with_suffix(".int8.onnx")
    try:
        if role == "det":
            quantize_detector(onnx_file, tmp, photos)
        else:
            quantize_classifier(onnx_file, tmp, photos, views=views)
    except DatasetError as exc:
        tmp.unlink(missing_ok=True)
        raise TrainingError(f"{onnx_file.name}: INT8 calibration failed: {exc}") from exc
    tmp.replace(onnx_file)
    return onnx_file


def split_holdout(images: list[Path], fraction: float, seed: int) -> tuple[list[Path], list[Path]]:
    """Split image paths into ``(train, held_back)``; ``fraction`` of them (at least 1 when any) held back."""
    rng = random.Random(seed)
    items = sorted(images)
    rng.shuffle(items)
    k = max(1, round(len(items) * fraction)) if items and fraction > 0 else 0
    return sorted(items[k:]), sorted(items[:k])
