"""Measure the dice reader on a labelled YOLO dataset (``kosti eval``; metrics in ``../shared/docs/cli.md``).

Definitions (all over the "die" class — a box is a die whatever face it shows):

* a prediction *matches* a label at IoU ≥ 0.5; matching is greedy in descending confidence, each label
  taken by the unclaimed one it overlaps most (COCO, and Ultralytics' ``match_predictions``);
* ``precision`` = matched / predicted dice, ``recall`` = matched / labelled dice, at the reader's
  confidence threshold;
* ``die_accuracy`` = matched dice whose value is right / matched dice (an uncertain die is wrong);
* ``image_exact`` = share of images where every die was found, nothing extra was found and every value
  is right;
* ``mAP50`` and ``mAP50_95``: detector average precision at IoU 0.5 and averaged over IoU 0.50:0.05:0.95,
  from detections at confidence 0.001 (as ``yolo val``), with the 101-point interpolated precision
  envelope of COCO / ``ultralytics.utils.metrics.compute_ap``;
* ``ms_per_image_median``: median wall time of :meth:`DiceReader.read` per image (decoded frame in,
  dice out; file decoding excluded), after one warm-up read;
* ``confusion``: 6×6 counts, row = true face 1–6, column = read face 1–6, over matched dice whose value
  was read (:attr:`EvalReport.confusion_full` adds "uncertain"/"missed" columns and an "extra" row).

Labels are YOLO txt files (``class cx cy w h``, normalised); class ``k`` is face ``k + 1`` unless the
dataset's ``names`` say otherwise (:func:`kosti.vision.reader.face_values`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kosti.vision import yolo_labels
from kosti.vision.detections import Detections, box_iou
from kosti.vision.image_files import IMAGE_SUFFIXES, is_image_name
from kosti.vision.reader import DiceReader, face_values, load_image
from kosti.vision.yolo_labels import label_path

#: IoU at which a prediction matches a label (cli.md).
MATCH_IOU = 0.5
#: IoU thresholds of mAP50-95 (COCO): 0.50, 0.55, …, 0.95.
IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
#: Detector confidence for mAP (Ultralytics val default).
MAP_CONF = 0.001


class DatasetError(ValueError):
    """The dataset path, its data.yaml or a label file is unusable (CLI exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class LabelledImage:
    """One dataset image and its YOLO label file (``label`` may not exist: no dice)."""

    image: Path
    label: Path


@dataclass
class Dataset:
    """Images of one split and the class → face map (``(nc,)`` int8, 0 = not a face)."""

    items: list[LabelledImage]
    class_values: np.ndarray
    root: Path
    split: str


#: Dataset split names (``kosti eval --split``).
SPLITS = ("train", "val", "test")


def _split_list(have: list[str]) -> str:
    return "its splits: " + ", ".join(have) if have else "no train/val/test split"


def _images_in(entry: Path) -> list[Path]:
    if entry.is_dir():
        return sorted(p for p in entry.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if entry.is_file() and entry.suffix == ".txt":  # a list of image paths, relative to its folder
        lines = [ln.strip() for ln in entry.read_text().splitlines() if ln.strip()]
        return [(entry.parent / ln).resolve() if not Path(ln).is_absolute() else Path(ln) for ln in lines]
    raise DatasetError(f"{entry}: no such image folder or list")


def load_dataset(path: str | Path, split: str = "test") -> Dataset:
    """Find the images and labels of one split.

    Args:
        path: a ``data.yaml`` (paths in it relative to its folder, or to its ``path:`` key) or a folder
            with ``images/`` and ``labels/`` (``images/<split>/`` if present, else ``images/`` itself).
        split: ``test``, ``val`` or ``train``: the data.yaml key or ``images/<split>/`` folder of that name
            (never another split in its place; a folder with a flat ``images/`` is one split, any name).

    Raises:
        DatasetError: missing files, a split the dataset does not have (the message names the ones it
            has), no labels folder beside the images, or no images.
    """
    import yaml

    p = Path(path)
    names: dict[int, str] | None = None
    if p.is_file():
        if is_image_name(p):
            raise DatasetError(f"{p}: a photo, not a dataset; give a data.yaml or a folder with images/ and labels/ "
                               "(kosti read reads one photo)")
        if p.stat().st_size > 1024 * 1024:
            raise DatasetError(f"{p}: larger than 1 MB; not a data.yaml")
        try:
            cfg = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise DatasetError(f"{p}: malformed YAML ({str(exc).splitlines()[0]})") from None
        except (UnicodeDecodeError, RecursionError):
            raise DatasetError(f"{p}: not a data.yaml (not YAML text)") from None
        except OSError as exc:
            raise DatasetError(f"{p}: cannot read ({exc.strerror or exc})") from None
        if not isinstance(cfg, dict):
            raise DatasetError(f"{p}: not a dataset YAML")
        root = p.parent / (cfg.get("path") or ".")
        if not cfg.get(split):
            have = [s for s in SPLITS if cfg.get(s)]
            raise DatasetError(f"{p}: no '{split}' split ({_split_list(have)})")
        entries = cfg[split] if isinstance(cfg[split], list) else [cfg[split]]
        images = [img for e in entries for img in _images_in(root / str(e))]
        raw_names = cfg.get("names")
        if isinstance(raw_names, list):
            names = dict(enumerate(map(str, raw_names)))
        elif isinstance(raw_names, dict):
            names = {int(k): str(v) for k, v in raw_names.items()}
    elif p.is_dir():
        root = p
        img_dir = p / "images" / split if (p / "images" / split).is_dir() else p / "images"
        if not img_dir.is_dir():
            raise DatasetError(f"{p}: no images/ folder")
        if img_dir == p / "images" and any((img_dir / s).is_dir() for s in SPLITS):
            have = [s for s in SPLITS if (img_dir / s).is_dir()]
            raise DatasetError(f"{p}: no '{split}' split (images/{split}/ missing; {_split_list(have)})")
        if not (p / "labels").is_dir():
            raise DatasetError(f"{p}: no labels/ folder (a dataset folder needs images/ and labels/)")
        images = _images_in(img_dir)
        yml = p / "data.yaml"
        if yml.is_file():
            raw = (yaml.safe_load(yml.read_text()) or {}).get("names")
            if isinstance(raw, dict):
                names = {int(k): str(v) for k, v in raw.items()}
            elif isinstance(raw, list):
                names = dict(enumerate(map(str, raw)))
    else:
        raise DatasetError(f"{p}: no such dataset (a data.yaml or a folder with images/ and labels/)")
    if not images:
        raise DatasetError(f"{p}: no images in split '{split}'")
    label_dirs = {label_path(i).parent for i in images}
    if not any(d.is_dir() for d in label_dirs):  # a photo without a label file has no dice; no folder at all is an error
        missing = min(label_dirs)
        raise DatasetError(f"{p}: no labels folder for split '{split}' ({missing} missing; "
                           "a dataset needs images/ and labels/)")
    class_values = face_values(names) if names else face_values({i: str(i + 1) for i in range(6)})
    return Dataset([LabelledImage(i, label_path(i)) for i in images], class_values, root.resolve(), split)


def read_labels(label: Path, width: int, height: int, class_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Read a YOLO label file into pixel boxes and faces (:func:`kosti.vision.yolo_labels.read_labels`).

    Args:
        label: ``class cx cy w h`` lines, normalised 0–1 (a missing file means no dice); a line with a
            segment polygon ``class x1 y1 x2 y2 …`` counts as its bounding box, as in Ultralytics.
        width, height: image size in pixels.
        class_values: class → face map.

    Returns:
        ``xyxy (M, 4)`` float32 pixels and ``values (M,)`` int8 (0 for classes that are not faces).

    Raises:
        DatasetError: a line that is not 5 numbers or a class outside ``class_values`` (``file:line: …``).
    """
    try:
        xyxy, values = yolo_labels.read_labels(label, width, height, class_values)
    except yolo_labels.LabelError as exc:
        raise DatasetError(str(exc)) from None
    return xyxy.astype(np.float32), values


def match_greedy(iou: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Which predictions are true positives at each IoU threshold.

    Same algorithm as Ultralytics' ``BaseValidator.match_predictions`` (non-SciPy path): predictions
    in descending confidence each claim the unclaimed label they overlap most; a claim counts if that
    IoU ≥ the threshold.

    Args:
        iou: ``(M_labels, N_predictions)`` IoU, predictions sorted by descending confidence.
        thresholds: ``(T,)`` IoU thresholds.

    Returns:
        ``(N, T)`` bool: prediction ``j`` is a true positive at threshold ``t``.
    """
    m, n = iou.shape
    t = len(thresholds)
    correct = np.zeros((n, t), bool)
    if m == 0 or n == 0:
        return correct
    matched = np.zeros((m, t), bool)
    for j in np.flatnonzero((iou >= thresholds.min()).any(0)):
        available = np.where(matched, 0.0, iou[:, j, None])
        k = available.argmax(0)
        correct[j] = available[k, np.arange(t)] >= thresholds
        matched[k, np.arange(t)] |= correct[j]
    return correct


def match_pairs(iou: np.ndarray, thr: float = MATCH_IOU) -> list[tuple[int, int]]:
    """Label–prediction pairs at IoU ≥ ``thr`` (greedy by confidence, predictions sorted by it).

    Returns:
        ``[(label_index, prediction_index), …]``.
    """
    m, n = iou.shape
    pairs: list[tuple[int, int]] = []
    taken = np.zeros(m, bool)
    for j in range(n):
        if m == 0:
            break
        avail = np.where(taken, -1.0, iou[:, j])
        k = int(avail.argmax())
        if avail[k] >= thr:
            taken[k] = True
            pairs.append((k, j))
    return pairs


def compute_ap(recall: np.ndarray, precision: np.ndarray) -> float:
    """Average precision from a recall/precision curve (``ultralytics.utils.metrics.compute_ap``).

    Sentinels ``(0, 1)`` before and ``(r_last, 0), (1, 0)`` after, monotone precision envelope, then the
    trapezoid integral over 101 recall points 0, 0.01, …, 1 (COCO's 101-point interpolation).
    """
    mrec = np.concatenate(([0.0], recall, [recall[-1] if len(recall) else 1.0], [1.0]))
    mpre = np.concatenate(([1.0], precision, [0.0], [0.0]))
    mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))
    x = np.linspace(0, 1, 101)
    y = np.interp(x, mrec, mpre)
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)))


def average_precision(tp: np.ndarray, conf: np.ndarray, n_labels: int, eps: float = 1e-16) -> np.ndarray:
    """AP of one class at each IoU threshold (``ap_per_class`` for one class).

    Args:
        tp: ``(N, T)`` bool true positives of all predictions in the dataset.
        conf: ``(N,)`` their confidences.
        n_labels: number of labelled objects.

    Returns:
        ``(T,)`` AP per threshold (zeros when there are no labels or no predictions).
    """
    t = tp.shape[1] if tp.ndim == 2 else len(IOU_THRESHOLDS)
    if n_labels == 0 or len(conf) == 0:
        return np.zeros(t)
    order = np.argsort(-conf)
    tp = tp[order].astype(np.float64)
    tpc, fpc = tp.cumsum(0), (1 - tp).cumsum(0)
    recall = tpc / (n_labels + eps)
    precision = tpc / (tpc + fpc)
    return np.array([compute_ap(recall[:, j], precision[:, j]) for j in range(t)])


@dataclass
class ImageRecord:
    """One evaluated image: labels, reader output and the label ↔ prediction matches (IoU ≥ 0.5)."""

    image: Path
    true_xyxy: np.ndarray
    true_values: np.ndarray
    pred: Detections
    pairs: list[tuple[int, int]]
    ms: float

    @property
    def missed(self) -> list[int]:
        """Indices of labels no prediction matched."""
        got = {k for k, _ in self.pairs}
        return [i for i in range(len(self.true_values)) if i not in got]

    @property
    def extra(self) -> list[int]:
        """Indices of predictions that matched no label."""
        got = {j for _, j in self.pairs}
        return [j for j in range(len(self.pred)) if j not in got]

    @property
    def wrong(self) -> list[tuple[int, int]]:
        """Matched pairs whose read value differs from the label (uncertain counts as wrong)."""
        return [(k, j) for k, j in self.pairs if self.pred.value[j] != self.true_values[k]]

    @property
    def exact(self) -> bool:
        """Every die found, nothing extra, every value right."""
        return not self.missed and not self.extra and not self.wrong


@dataclass
class EvalReport:
    """Result of :func:`evaluate`; :meth:`to_json` is the ``kosti eval --json`` document."""

    records: list[ImageRecord] = field(default_factory=list)
    ap: np.ndarray = field(default_factory=lambda: np.zeros(len(IOU_THRESHOLDS)))

    @property
    def n_images(self) -> int:
        return len(self.records)

    @property
    def n_dice(self) -> int:
        return int(sum(len(r.true_values) for r in self.records))

    @property
    def n_pred(self) -> int:
        return int(sum(len(r.pred) for r in self.records))

    @property
    def n_matched(self) -> int:
        return int(sum(len(r.pairs) for r in self.records))

    @property
    def n_right(self) -> int:
        return int(sum(len(r.pairs) - len(r.wrong) for r in self.records))

    @property
    def precision(self) -> float:
        return self.n_matched / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        return self.n_matched / self.n_dice if self.n_dice else 0.0

    @property
    def die_accuracy(self) -> float:
        return self.n_right / self.n_matched if self.n_matched else 0.0

    @property
    def image_exact(self) -> float:
        return sum(r.exact for r in self.records) / self.n_images if self.n_images else 0.0

    @property
    def ms_median(self) -> float:
        return statistics.median(r.ms for r in self.records) if self.records else 0.0

    @property
    def confusion_full(self) -> np.ndarray:
        """``(7, 8)`` int64: rows true face 1–6 then "extra" (no label); columns read face 1–6, then
        "uncertain" (value 0), then "missed" (no prediction)."""
        cm = np.zeros((7, 8), np.int64)
        for r in self.records:
            for k, j in r.pairs:
                t, p = int(r.true_values[k]), int(r.pred.value[j])
                if 1 <= t <= 6:
                    cm[t - 1, p - 1 if p else 6] += 1
            for k in r.missed:
                t = int(r.true_values[k])
                if 1 <= t <= 6:
                    cm[t - 1, 7] += 1
            for j in r.extra:
                p = int(r.pred.value[j])
                cm[6, p - 1 if p else 6] += 1
        return cm

    @property
    def confusion(self) -> np.ndarray:
        """``(6, 6)`` int64: row = true face, column = read face, matched dice with a read value."""
        return self.confusion_full[:6, :6].copy()

    @property
    def n_wrong(self) -> int:
        """Matched dice read as a face other than the label's (uncertain ones are not wrong reads)."""
        cm = self.confusion_full[:6, :6]
        return int(cm.sum() - np.trace(cm))

    @property
    def n_unsure(self) -> int:
        """Matched dice the reader left uncertain (value 0)."""
        return int(self.confusion_full[:6, 6].sum())

    @property
    def uncertain(self) -> int:
        """Dice (matched or extra) the reader reported as uncertain."""
        return int(sum(int(r.pred.uncertain.sum()) for r in self.records))

    def to_json(self) -> dict[str, Any]:
        """The ``kosti eval --json`` document: the keys of ``../shared/docs/cli.md``, then ``uncertain`` (dice reported
        uncertain, matched or extra: the ones the table is asked about), ``wrong`` (matched dice read as another face
        without the flag) and ``confusion_full`` (``(7, 8)``: :attr:`confusion_full` — columns read 1–6, uncertain,
        missed; rows true 1–6, then extra boxes), so that a swap such as 6 → 5 or a die left uncertain shows."""
        return {
            "images": self.n_images,
            "dice": self.n_dice,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "die_accuracy": round(self.die_accuracy, 4),
            "image_exact": round(self.image_exact, 4),
            "mAP50": round(float(self.ap[0]), 4),
            "mAP50_95": round(float(self.ap.mean()), 4),
            "ms_per_image_median": round(self.ms_median, 2),
            "confusion": self.confusion.tolist(),
            "uncertain": self.uncertain,
            "wrong": self.n_wrong,
            "confusion_full": self.confusion_full.tolist(),
        }


def evaluate_predictions(
    truths: Iterable[tuple[Path, np.ndarray, np.ndarray]],
    preds: Iterable[Detections],
    raw: Iterable[tuple[np.ndarray, np.ndarray]] | None = None,
    ms: Iterable[float] | None = None,
) -> EvalReport:
    """Score given predictions against labels (the pure part of :func:`evaluate`; used by tests).

    Args:
        truths: per image ``(path, true_xyxy (M, 4), true_values (M,))``.
        preds: per image the reader's :class:`Detections` (at its working threshold).
        raw: per image low-threshold detector output ``(xyxy (K, 4), scores (K,))`` for mAP; default:
            the boxes and confidences of ``preds``.
        ms: per image reader time in milliseconds (default 0).
    """
    report = EvalReport()
    tps, confs = [], []
    raw_list = list(raw) if raw is not None else None
    ms_list = list(ms) if ms is not None else None
    for i, ((path, txyxy, tvals), det) in enumerate(zip(truths, preds)):
        order = np.argsort(-det.confidence, kind="stable")
        det = det[order]
        iou = box_iou(txyxy, det.xyxy)
        pairs = match_pairs(iou)
        report.records.append(ImageRecord(Path(path), txyxy, tvals, det, pairs, ms_list[i] if ms_list else 0.0))
        rxyxy, rconf = raw_list[i] if raw_list is not None else (det.xyxy, det.confidence)
        ro = np.argsort(-np.asarray(rconf), kind="stable")
        rxyxy, rconf = np.asarray(rxyxy)[ro], np.asarray(rconf)[ro]
        tps.append(match_greedy(box_iou(txyxy, rxyxy), IOU_THRESHOLDS))
        confs.append(rconf)
    if tps:
        report.ap = average_precision(np.concatenate(tps), np.concatenate(confs), report.n_dice)
    return report


def evaluate(
    reader: DiceReader | str | Path,
    dataset: Dataset | None = None,
    compute_map: bool = True,
    progress: Callable[[Iterable[LabelledImage]], Iterable[LabelledImage]] | None = None,
    **data_kwargs: Any,
) -> EvalReport:
    """Run the reader over a dataset split and score it (see the module docstring for definitions).

    Script form: ``evaluate(path, split=…, detector=…, classifier=…)`` — a dataset path instead of a
    reader — is :func:`evaluate_data` and returns its JSON dict (used by ``kosti train``).

    Args:
        reader: the reader under test (its ``conf`` and ``value_conf`` are the working thresholds).
        dataset: from :func:`load_dataset`.
        compute_map: also run the detector at confidence 0.001 for mAP50 / mAP50-95 (doubles
            detector time; without it mAP is computed from the working-threshold boxes, which
            underestimates it).
        progress: wraps the image iterable (e.g. ``tqdm``).

    Raises:
        ImageReadError: an image cannot be read (names the file); DatasetError: a bad label file.
    """
    if not isinstance(reader, DiceReader) and isinstance(reader, (str, Path)):
        return evaluate_data(reader, compute_map=compute_map, **data_kwargs)  # type: ignore[return-value]
    if dataset is None or data_kwargs:
        raise TypeError("evaluate(reader, dataset, …) or evaluate(path, split=…, detector=…, classifier=…)")
    truths, preds, raws, times = [], [], [], []
    items: Iterable[LabelledImage] = dataset.items
    if progress is not None:
        items = progress(items)
    warmed = False
    for item in items:
        img = load_image(item.image)
        h, w = img.shape[:2]
        txyxy, tvals = read_labels(item.label, w, h, dataset.class_values)
        if not warmed:  # first call pays for ONNX Runtime's lazy initialisation
            reader.read(img)
            warmed = True
        t0 = time.perf_counter()
        det = reader.read(img)
        times.append((time.perf_counter() - t0) * 1e3)
        truths.append((item.image, txyxy, tvals))
        preds.append(det)
        if compute_map:
            xyxy, scores, _ = reader.detect(reader.exposed(img)[0], conf=MAP_CONF)
            raws.append((xyxy, scores))
    return evaluate_predictions(truths, preds, raws if compute_map else None, times)


def evaluate_data(
    data: str | Path,
    split: str = "test",
    detector: str | Path | None = None,
    classifier: str | Path | None = None,
    compute_map: bool = True,
    progress: Callable[[Iterable[LabelledImage]], Iterable[LabelledImage]] | None = None,
    **reader_kwargs: Any,
) -> dict[str, Any]:
    """One-call evaluation for scripts (training, model registry): the ``kosti eval --json`` document.

    Args:
        data: a ``data.yaml`` or a folder with ``images/`` and ``labels/`` (see :func:`load_dataset`).
        split: dataset split.
        detector, classifier: model paths (defaults as :class:`DiceReader`).
        compute_map: run the low-threshold pass for mAP.
        progress: wraps the image iterable, as :func:`evaluate`'s (``kosti models list`` counts the photos).
        reader_kwargs: more :class:`DiceReader` arguments (``conf``, ``value_conf``, ``threads`` …).

    Returns:
        The cli.md metrics dict plus ``"data"`` (the dataset path) and ``"split"``.

    Raises:
        DatasetError, ImageReadError, ModelLoadError: as the parts they come from (all exit code 2).
    """
    dataset = load_dataset(data, split)
    reader = DiceReader(det_path=detector, cls_path=classifier, **reader_kwargs)
    doc = evaluate(reader, dataset, compute_map=compute_map, progress=progress).to_json()
    doc.update(data=str(data), split=dataset.split)
    return doc


def collect_face_probs(
    reader: DiceReader,
    dataset: Dataset,
    progress: Callable[[Iterable[LabelledImage]], Iterable[LabelledImage]] | None = None,
    on_labels: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Raw classifier probabilities of dice with a known face, and the true class.

    By default the dice are the reader's own detections at its working threshold that match a label
    at IoU ≥ 0.5 (what the classifier sees at run time); with ``on_labels`` the labelled boxes
    themselves. Crops come from ``square_crop`` either way.

    Returns:
        ``probs (K, nc)`` float32 un-calibrated softmax and ``target (K,)`` int64 true class index.

    Raises:
        ValueError: the reader has no face classifier (six-class detector).
    """
    if reader.classifier is None:
        raise ValueError("temperature calibration needs a face classifier (this reader has none)")
    class_of_value = {int(v): i for i, v in enumerate(reader.class_values) if v > 0}
    probs: list[np.ndarray] = []
    target: list[int] = []
    items: Iterable[LabelledImage] = dataset.items if progress is None else progress(dataset.items)
    for item in items:
        img = load_image(item.image)
        txyxy, tvals = read_labels(item.label, img.shape[1], img.shape[0], dataset.class_values)
        img = reader.exposed(img)[0]  # as read() sees the frame
        if on_labels:
            xyxy, pairs = txyxy, [(k, k) for k in range(len(tvals))]
        else:
            xyxy, _, _ = reader.detect(img)
            pairs = match_pairs(box_iou(txyxy, xyxy))
        pairs = [(k, j) for k, j in pairs if int(tvals[k]) in class_of_value]
        if not pairs:
            continue
        boxes = xyxy[[j for _, j in pairs]]
        probs.append(reader.face_probs(reader.crops(img, boxes)))
        target.extend(class_of_value[int(tvals[k])] for k, _ in pairs)
    nc = len(reader.class_values)
    return (np.concatenate(probs) if probs else np.zeros((0, nc), np.float32)), np.asarray(target, np.int64)


def _tempered(probs: np.ndarray, t: float) -> np.ndarray:
    z = np.log(np.clip(probs, 1e-12, 1.0)) / t
    z -= z.max(1, keepdims=True)
    e = np.exp(z)
    tempered: np.ndarray = e / e.sum(1, keepdims=True)
    return tempered


def nll(probs: np.ndarray, target: np.ndarray, t: float = 1.0) -> float:
    """Mean negative log-likelihood of the true class after temperature ``t``."""
    p = _tempered(probs, t)[np.arange(len(target)), target]
    return float(-np.log(np.clip(p, 1e-12, 1.0)).mean())


def expected_calibration_error(probs: np.ndarray, target: np.ndarray, t: float = 1.0, bins: int = 15) -> float:
    """ECE (Guo et al. 2017): bin dice by top probability into ``bins`` equal-width bins; the mean,
    weighted by bin size, of |accuracy − mean confidence|."""
    p = _tempered(probs, t)
    conf, correct = p.max(1), p.argmax(1) == target
    edges = np.linspace(0, 1, bins + 1)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(ece)


def fit_temperature(probs: np.ndarray, target: np.ndarray, lo: float = 0.05, hi: float = 20.0) -> float:
    """Temperature scaling (Guo et al. 2017): the ``T`` minimising :func:`nll` of
    ``softmax(log p / T)``, by golden-section search over ``log T`` in ``[lo, hi]`` (NLL is convex in
    ``1/T``, so the search finds the global minimum). Returns 1.0 for no data.
    """
    if len(target) == 0:
        return 1.0
    a, b = np.log(lo), np.log(hi)
    g = (np.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = nll(probs, target, np.exp(c)), nll(probs, target, np.exp(d))
    for _ in range(60):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = nll(probs, target, np.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = nll(probs, target, np.exp(d))
    return float(np.exp((a + b) / 2))
