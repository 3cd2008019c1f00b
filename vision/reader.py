"""The dice reader: find every die in a frame and read the face it shows.

Two-stage design (``models/README.md``):

1. a YOLO detector with one class ``die`` finds boxes on the letterboxed frame
   (:mod:`kosti.vision.letterbox`);
2. a YOLO classifier reads each die's face from a square crop of the *full-resolution* frame
   (:func:`kosti.vision.crops.square_crop`, the same crop its training data was cut with), classes
   ``1 2 3 4 5 6 x`` where ``x`` = unreadable (cocked, blurred, hidden or not a die).

The classifier reads each crop in several views and averages the probabilities (test-time augmentation,
``tta=True``; :func:`kosti.vision.crops.reader_views`): up to v1.2 its four 90° rotations — a die's value does not
change when it is turned, so the four views are four votes on one face; since v1.3 (``reader.json``: ``"views":
"upright"``) the crop and its mirror image, because the v1.3 classifier reads a die seen from the side by the face
at the top of its crop. On the v0.1 models this moved matched-die accuracy (forced choice)
on rune55 val from 0.956 to 0.961 and on byler-d6 test from 0.967 to 0.980, for ~4 crops' classifier time
per die (one batched call). Mirrored views as well (8 in all) were measured for v1.1 and did not pay at the
shipped ``value_conf`` (``models/README.md``).

The classifier also takes a second look at the detector's weak boxes (score in ``(verify_conf, conf]``):
such a box is kept as a die only when the classifier reads a face on it with calibrated probability
``≥ verify_prob`` (a detector → verifier cascade). Dice the detector has rarely seen (a red die on a
wooden floor scores 0.1–0.2) are found this way without lowering ``conf`` for everything else.

A die whose best class is ``x`` or whose face probability is below ``value_conf`` is reported as
*uncertain* (value 0) — never silently guessed. The single-model design is supported too: with no
classifier and a detector of six classes, each box's class is its face.

The ONNX backend (default, :mod:`kosti.vision.onnx_backend`) needs only NumPy, OpenCV and ONNX Runtime —
it never imports torch. ``backend="ncnn"`` (:mod:`kosti.vision.ncnn_backend`, the Raspberry Pi's runtime)
reads NCNN export folders with the ``ncnn`` package alone, again without torch. ``backend="ultralytics"``
runs ``.pt`` (or NCNN) models through Ultralytics (:mod:`kosti.vision.ultralytics_backend`), imported only
then.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from kosti.models import (
    CLASSIFIER_NCNN,
    CLASSIFIER_ONNX,
    DEFAULT_CONF,
    DEFAULT_IOU,
    DEFAULT_VALUE_CONF,
    DETECTOR_NCNN,
    DETECTOR_ONNX,
)
from kosti.vision.backends import (
    BACKENDS,
    DetectorBackend,
    make_classifier,
    make_detector,
)
from kosti.vision.crops import CROP_SIZE, VIEW_COUNTS, reader_views, square_crop
from kosti.vision.detections import (
    UNKNOWN_VALUE,
    Detections,
    containers,
    nested_in_stronger,
)
from kosti.vision.exposure import MAX_EXPOSURE_GAIN, brightened, exposure_gain
from kosti.vision.inner_look import look_inside
from kosti.vision.onnx_backend import ModelLoadError
from kosti.vision.params import ReaderParams
from kosti.vision.reader_zoom import ZOOM_SAME_DIE_IOU, ReaderSettingsError, ZoomedReads

#: Reader settings file next to the classifier (optional): ``{"temperature": T}`` from calibration.
READER_JSON = "reader.json"
# DEFAULT_CONF, DEFAULT_IOU, DEFAULT_VALUE_CONF: the shipped operating point (kosti.models).

__all__ = [
    "DEFAULT_CONF",
    "DEFAULT_IOU",
    "DEFAULT_VALUE_CONF",
    "DiceReader",
    "ImageReadError",
    "ModelLoadError",
    "ReaderSettingsError",
    "ZOOM_SAME_DIE_IOU",
    "load_image",
    "face_values",
]


class ImageReadError(ValueError):
    """An image file is missing, empty, corrupt or not an image (CLI exit code 2).

    The message starts with the file name.
    """

    exit_code = 2


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as an ``(H, W, 3)`` uint8 BGR array.

    Decoding is ``cv2.imdecode`` over the file's bytes (as Ultralytics' ``imread``), so non-ASCII paths
    work and EXIF orientation is applied the same way as in training. Grey or 16-bit images are
    converted to 8-bit BGR. Bounded by :func:`kosti.vision.image_files.read_image_file`: regular files only,
    at most 128 MB and 50 MP, checked from the header before decoding.

    Raises:
        ImageReadError: the file does not exist, is a folder, a pipe or a device, is empty, too large, or
            cannot be decoded.
    """
    from kosti.vision.image_files import ImageFileError, read_image_file

    try:
        return read_image_file(path)
    except ImageFileError as exc:
        raise ImageReadError(str(exc)) from None


def face_values(names: dict[int, str]) -> np.ndarray:
    """Map class indices to die values: ``(nc,)`` int8, names ``"1"``–``"6"`` → 1–6, anything else → 0.

    If the names are not the faces (e.g. a model built from YAML with names ``"0"…"5"``), classes
    ``0…5`` are taken as faces ``1…6`` (the YOLO dice-dataset convention: class k = face k+1).
    """
    nc = max(names) + 1 if names else 0
    by_name = np.zeros(nc, np.int8)
    for i, n in names.items():
        s = str(n).strip()
        by_name[i] = int(s) if s in {"1", "2", "3", "4", "5", "6"} else UNKNOWN_VALUE
    if sorted(v for v in by_name.tolist() if v) == [1, 2, 3, 4, 5, 6]:
        return by_name
    by_index = np.zeros(nc, np.int8)
    by_index[: min(nc, 6)] = np.arange(1, min(nc, 6) + 1)
    return by_index


def _check_thresholds(p: ReaderParams) -> None:
    """Refuse thresholds a reader cannot work with (the bounds declared in :class:`ReaderParams`).

    Raises:
        ReaderSettingsError: naming the setting(s) and the value(s).
    """
    conf, value_conf, iou = p.conf, p.value_conf, p.iou
    if not 0.0 <= conf <= 1.0 or not 0.0 <= value_conf <= 1.0 or not 0.0 < iou <= 1.0:
        raise ReaderSettingsError(f"thresholds out of range: conf={conf}, value_conf={value_conf}, iou={iou}")
    if (not 0.0 <= p.verify_conf <= 1.0 or not 0.0 <= p.verify_prob <= 1.0 or not 0.0 <= p.verify_one_conf <= 1.0
            or p.max_verify < 0):
        raise ReaderSettingsError(f"verification settings out of range: verify_conf={p.verify_conf}, "
                                  f"verify_prob={p.verify_prob}, verify_one_conf={p.verify_one_conf}, "
                                  f"max_verify={p.max_verify}")
    if not 0.0 < p.not_die_prob <= 1.0:
        raise ReaderSettingsError(f"not_die_prob must be in (0, 1], got {p.not_die_prob}")
    if not (p.dim_gain == 0.0 or 1.0 <= p.dim_gain < MAX_EXPOSURE_GAIN):
        raise ReaderSettingsError(f"dim_gain must be 0 (off) or from 1 to below {MAX_EXPOSURE_GAIN:g} (the most "
                                  f"gain applied), got {p.dim_gain}")
    if p.backend not in BACKENDS:
        raise ReaderSettingsError(f"unknown backend {p.backend!r} ({', '.join(BACKENDS)})")
    if not 0.0 < p.nested_frac <= 1.0:
        raise ReaderSettingsError(f"nested_frac must be in (0, 1], got {p.nested_frac}")
    if not 0.0 < p.weak_nested_frac <= 1.0:
        raise ReaderSettingsError(f"weak_nested_frac must be in (0, 1], got {p.weak_nested_frac}")


class DiceReader(ZoomedReads):
    """Reads dice in frames: detector + face classifier (or one six-class detector).

    Args:
        det_path: detector weights (``.onnx``; an NCNN export folder; ``.pt`` with the Ultralytics backend).
            Default: the shipped ``models/dice_det.onnx`` (``models/dice_det_ncnn_model`` with ``ncnn``).
        cls_path: face classifier weights. Default: the shipped ``models/dice_cls.onnx``
            (``models/dice_cls_ncnn_model`` with ``ncnn``), unless the detector has six classes (then faces
            come from the detector and no classifier is used).
        params: the settings (:class:`kosti.vision.params.ReaderParams`, where each is declared once with its
            default, unit and bounds); default ``ReaderParams()``, the shipped operating point.
        settings: any field of :class:`~kosti.vision.params.ReaderParams` by name, replacing ``params``' value.

    What each setting does, and why (the declaration in :class:`~kosti.vision.params.ReaderParams` holds its
    default and bounds):
        conf: detector confidence threshold, 0–1 (boxes scoring ``> conf`` are dice; weaker ones only
            through the second look, see ``verify_conf``).
        value_conf: minimum (calibrated) face probability, 0–1; below it the die is uncertain.
        backend: ``"onnx"`` (ONNX Runtime), ``"ncnn"`` (the ``ncnn`` package; both torch-free),
            ``"ultralytics"``, or ``"auto"`` (by each path: ``.onnx`` → onnx, an NCNN export folder → ncnn,
            anything else → ultralytics).
        iou: NMS IoU threshold (default :data:`kosti.models.DEFAULT_IOU`); max_det: most dice per frame.
        threads: CPU threads for inference (ONNX Runtime intra-op; 1 = the Pi's budget per model).
        temperature: softmax temperature for the classifier (``p ∝ p_raw^(1/T)``); default from
            ``reader.json`` beside the classifier (``{"temperature": T}``) or 1.0.
        tta: read each crop in several views (``views``) and average the class probabilities (default True;
            False = one view, 2–4× less classifier time).
        views: the test-time views, a key of :data:`kosti.vision.crops.VIEW_COUNTS`: ``"turns"`` (the four 90°
            rotations) or ``"upright"`` (the crop and its mirror image, for a classifier trained on upright crops
            of dice seen from the side); default from ``reader.json`` beside the classifier (``{"views": …}``),
            else ``"turns"``.
        verify_conf: detector score floor for the classifier's second look (0–1); boxes scoring in
            ``(verify_conf, conf]`` are kept only if the classifier reads a face with probability
            ``≥ verify_prob``. ``verify_conf ≥ conf`` (or no classifier) turns the second look off.
        verify_prob: calibrated face probability that confirms a weak box (0–1).
        verify_one_conf: the second look confirms a box whose best face is a **1** only when the detector
            scored it above this (0–1; ``≤ verify_conf`` = no extra rule). A single round mark — a board
            game's number token, a coin, a button — reads as a "1" to the classifier as surely as a real
            one-pip face (18 of the 27 second-look 1s on epanemu-dice val were false, most of them Catan number
            tokens read at probability 0.96–0.999), while the detector scores most of those marks lower (0.05–0.16; real 1s 0.07–0.43).
        not_die_prob: a box the classifier reads as ``x`` (not a readable die) with calibrated probability at
            least this (0–1] is not a die, whatever the detector scored it; it stays a candidate
            (:meth:`read_candidates`). A noisy webcam's dark frame corner boxed at 0.5–0.78 is read as ``x`` at
            ≥ 0.99 (``benchmarks/robustness.py``). 1 turns the rule off. Default
            :data:`kosti.models.DEFAULT_NOT_DIE_PROB`.
        dim_gain: a frame so dim that it takes a gain above this to bring its bright end to a normal level
            (:func:`kosti.vision.exposure.exposure_gain`) is read brightened by that gain, at most 2.5 — a table
            under a dim lamp (:meth:`exposed`). 0 turns it off; otherwise from 1 to below 2.5. Default
            :data:`kosti.models.DEFAULT_DIM_GAIN` (1.5: no photo of the four measured splits as shipped needs more
            than 1.36).
        max_verify: most weak boxes given a second look per frame (the best-scoring ones; bounds the
            classifier's time on cluttered frames).
        nested_frac: a die box covered this much (share of its own area, 0–1] by a stronger die box is the
            same die again — a face or side face boxed inside the whole die — and is dropped
            (:func:`kosti.vision.detections.nested_in_stronger`; 1 turns it off).
        weak_nested_frac: the same for a weak box (score at or below ``conf``, confirmed by the second look):
            covered this much by a stronger die box, it is that die's side face or a box shifted onto it
            (0–1]. A value above ``nested_frac`` is capped at it (1 = weak boxes as strong ones);
            ``nested_frac`` 1 turns the rule off for every box.
        zoom_imgsz: detector input side (px) of the zoomed second read; see ``zoom_below``. ``None``:
            :data:`kosti.models.DEFAULT_ZOOM_IMGSZ` (800).
        zoom_below: when the dice found are small — median side (root of the box area; lower quartile on a frame
            above ``zoom_imgsz``) under this many px of the detector's input — or only weak candidates, it is read
            again at ``zoom_imgsz`` or larger (``zoom_max``); the result is that read's dice plus any first-read
            die it missed (:meth:`needs_zoom`, :meth:`merge_zoomed`). Costs a second, larger detector pass on such
            frames only. 0 turns it off. Left at the defaults (all three zoom settings), :data:`kosti.models.DEFAULT_ZOOM_BELOW` (20),
            and off for a model that cannot zoom (one fixed input size, or an input side not below
            ``zoom_imgsz``) instead of an error. ``zoom_imgsz`` is rounded up to a multiple of the detector's
            stride; mAP in :func:`kosti.vision.evaluate.evaluate` is computed without the zoom.
        zoom_max: the largest input side (px) of the zoomed read, which takes the side that makes the dice
            :data:`kosti.models.ZOOM_DIE_SIDE` px, up to the frame's own (:meth:`zoom_side`). Default
            :data:`kosti.models.DEFAULT_ZOOM_MAX` (1280), raised to ``zoom_imgsz`` when that is larger.

    Raises:
        ModelLoadError: a model file is missing or unusable (exit code 2).
        ReaderSettingsError: (a ``ValueError``) bad thresholds or backend name, a name that is no setting; a zoom
            asked (``zoom_below``, ``zoom_imgsz`` or ``zoom_max`` other than its default) of a model that cannot take a larger input (one
            fixed input size, or
            ``zoom_imgsz`` not above its own); ``zoom_max`` below ``zoom_imgsz``.
    """

    def __init__(
        self,
        det_path: str | Path | None = None,
        cls_path: str | Path | None = None,
        params: ReaderParams | None = None,
        **settings: Any,
    ) -> None:
        try:
            p = dataclasses.replace(params or ReaderParams(), **settings)
        except TypeError as exc:  # a name that is no reader setting
            raise ReaderSettingsError(f"unknown reader setting: {exc}") from None
        _check_thresholds(p)
        #: The settings this reader was built with (:class:`kosti.vision.params.ReaderParams`).
        self.params = p
        self.not_die_prob = float(p.not_die_prob)
        self.dim_gain = float(p.dim_gain)
        backend = p.backend
        det = Path(det_path) if det_path is not None else (DETECTOR_NCNN if backend == "ncnn" else DETECTOR_ONNX)
        self.conf, self.value_conf = float(p.conf), float(p.value_conf)
        self.tta = bool(p.tta)
        self.verify_conf, self.verify_prob, self.max_verify = float(p.verify_conf), float(p.verify_prob), int(p.max_verify)
        self.verify_one_conf = float(p.verify_one_conf)
        self.nested_frac, self.weak_nested_frac = float(p.nested_frac), float(p.weak_nested_frac)
        self.det_path = det
        if p.zoom_below < 0 or p.zoom_imgsz <= 0:
            raise ReaderSettingsError(f"zoom settings out of range: zoom_imgsz={p.zoom_imgsz}, zoom_below={p.zoom_below}")
        self.detector = make_detector(det, backend, p.threads, p.iou, p.max_det)
        self._set_up_zoom(p)
        det_values = face_values(self.detector.names)
        self.cls_path: Path | None
        if cls_path is None and len(self.detector.names) == 6:
            self.cls_path, self.classifier = None, None
            self._det_values = det_values
        else:
            default_cls = CLASSIFIER_NCNN if backend == "ncnn" else CLASSIFIER_ONNX
            self.cls_path = Path(cls_path) if cls_path is not None else default_cls
            self.classifier = make_classifier(self.cls_path, backend, p.threads)
            self._cls_values = face_values(self.classifier.names)
        self.temperature = float(p.temperature) if p.temperature is not None else self._stored_temperature()
        if not self.temperature > 0:
            raise ReaderSettingsError(f"temperature must be > 0, got {self.temperature}")
        #: The classifier's test-time views (:func:`kosti.vision.crops.reader_views`).
        stored = self._stored_setting("views", "turns") if p.views is None else p.views
        self.views = "turns" if stored is None else str(stored)  # "views": null in reader.json = the default
        if self.views not in VIEW_COUNTS:
            where = f"{self.cls_path.parent / READER_JSON}: " if p.views is None and self.cls_path is not None else ""
            raise ReaderSettingsError(f"{where}unknown test-time views {self.views!r} ({', '.join(VIEW_COUNTS)})")
        #: Milliseconds spent in the last :meth:`read`: ``{"detect": …, "classify": …, "total": …}`` (both
        #: reads when it zoomed).
        self.last_timing: dict[str, float] = {}
        #: The input side the last :meth:`read` read the frame again at (0: it was not zoomed; :attr:`last_zoomed`).
        self.last_zoom_side = 0
        #: The gain the last :meth:`read` brightened its frame by (1.0: read as it came; ``dim_gain``).
        self.last_gain = 1.0

    def _stored_temperature(self) -> float:
        try:
            return float(self._stored_setting("temperature", 1.0))
        except (ValueError, TypeError) as exc:
            raise ModelLoadError(f"{self.cls_path}: malformed reader settings ({exc})") from exc

    def _stored_setting(self, key: str, default: Any) -> Any:
        """``key`` of the ``reader.json`` beside the classifier, or ``default`` (no classifier or no file)."""
        if self.cls_path is None:
            return default
        cfg = self.cls_path.parent / READER_JSON
        if not cfg.is_file():
            return default
        try:
            return json.loads(cfg.read_text()).get(key, default)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ModelLoadError(f"{cfg}: malformed reader settings ({exc})") from exc

    @property
    def class_values(self) -> np.ndarray:
        """``(nc,)`` int8 face of each class of the model that reads faces (classifier, or the
        six-class detector); 0 = not a face (``x``)."""
        return self._cls_values if self.classifier is not None else self._det_values

    @property
    def two_stage(self) -> bool:
        """True for detector + classifier, False for a six-class detector alone."""
        return self.classifier is not None

    @property
    def verifies(self) -> bool:
        """True when weak boxes get the classifier's second look (see ``verify_conf``)."""
        return self.classifier is not None and self.verify_conf < self.conf and self.max_verify > 0

    def detect(self, image: np.ndarray, conf: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Detector stage only: ``xyxy (K, 4)`` float32 frame pixels, ``scores (K,)``, ``classes (K,)``.

        ``conf`` overrides the reader's threshold (evaluation uses 0.001 for mAP, as Ultralytics val).
        """
        return self.detector.detect(image, self.conf if conf is None else conf)

    def crops(self, image: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
        """``(K, 64, 64, 3)`` uint8 BGR classifier crops of ``image`` around boxes ``xyxy`` (frame px)."""
        if len(xyxy) == 0:
            return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8)
        return np.stack([square_crop(image, b) for b in xyxy])

    def face_probs(self, crops: np.ndarray) -> np.ndarray:
        """Raw classifier probabilities ``(K, nc)`` float32 for ``(K, h, w, 3)`` uint8 BGR crops.

        With :attr:`tta`, each crop is read in :attr:`views` (:func:`kosti.vision.crops.reader_views`: rotated by
        90°, 180° and 270°, or mirrored; one batched call) and the probability vectors are averaged.
        """
        if not self.tta or len(crops) == 0:
            return self.classifier.classify(crops)  # type: ignore[union-attr]
        k = len(crops)
        probs = self.classifier.classify(reader_views(crops, self.views))  # type: ignore[union-attr]
        mean: np.ndarray = probs.reshape(VIEW_COUNTS[self.views], k, -1).mean(0).astype(np.float32)
        return mean

    def calibrate(self, probs: np.ndarray) -> np.ndarray:
        """Apply the temperature: ``(K, nc)`` probabilities → ``softmax(log(p) / T)``."""
        if self.temperature == 1.0 or len(probs) == 0:
            return probs
        logits = np.log(np.clip(probs, 1e-12, 1.0)) / self.temperature
        logits -= logits.max(1, keepdims=True)
        e = np.exp(logits)
        calibrated: np.ndarray = (e / e.sum(1, keepdims=True)).astype(np.float32)
        return calibrated

    def decide(self, probs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pick each die's value from class probabilities ``(K, nc)`` with class→value map ``values``.

        The best class wins if it is a face and its probability is ``≥ value_conf``; otherwise the die
        is uncertain (0) and its confidence is the best face's probability.
        """
        k = len(probs)
        if k == 0:
            return np.zeros(0, np.int8), np.zeros(0, np.float32)
        top = probs.argmax(1)
        top_p = probs[np.arange(k), top]
        ok = (values[top] > 0) & (top_p >= self.value_conf)
        vals = np.where(ok, values[top], UNKNOWN_VALUE).astype(np.int8)
        vconf = np.where(ok, top_p, best_face_prob(probs, values)).astype(np.float32)
        return vals, vconf

    def second_look(self, scores: np.ndarray) -> np.ndarray:
        """``(K,)`` bool: the weak boxes the classifier looks at — score in ``(verify_conf, conf]``, at most
        :attr:`max_verify` of them, best first (``scores`` sorted descending, as the detector returns
        them). All False when the second look is off."""
        scores = np.asarray(scores)
        if not self.verifies:
            return np.zeros(scores.shape, bool)
        weak = (scores <= self.conf) & (scores > self.verify_conf)
        return weak & (np.cumsum(weak) <= self.max_verify)

    def dice_mask(self, scores: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``(K,)`` bool: which detector boxes are dice, given their scores ``(K,)`` (sorted descending) and
        calibrated class probabilities ``(K, nc)``: a score above ``conf``, or a second look
        (:meth:`second_look`) that reads a face with probability ``≥ verify_prob`` (a face 1 only above
        ``verify_one_conf``); never a box read as ``x`` with probability ``≥ not_die_prob``. The one rule used by
        :meth:`read` and by ``benchmarks/select_operating_point.py``."""
        scores = np.asarray(scores)
        keep = scores > self.conf
        if self.verifies and len(probs):
            confirmed = best_face_prob(probs, self._cls_values) >= self.verify_prob
            keep |= self.second_look(scores) & confirmed & ~self.lone_ones(scores, probs)
        return keep & ~self.not_die(probs) if len(probs) else keep

    def not_die(self, probs: np.ndarray) -> np.ndarray:
        """``(K,)`` bool: boxes whose calibrated class probabilities ``(K, nc)`` give the non-face class ``x`` at least
        ``not_die_prob`` — never dice, whatever the detector scored them (all False with no classifier, or with
        ``not_die_prob`` 1)."""
        probs = np.asarray(probs)
        if self.classifier is None or self.not_die_prob >= 1.0 or len(probs) == 0:
            return np.zeros(len(probs), bool)
        sure_x: np.ndarray = np.where(self._cls_values[None, :] == 0, probs, 0.0).sum(1) >= self.not_die_prob
        return sure_x

    def lone_ones(self, scores: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``(K,)`` bool: weak boxes (``scores`` ``(K,)``, calibrated ``probs`` ``(K, nc)``) whose best face is
        a 1 and whose detector score is not above ``verify_one_conf`` — what a number token or a coin looks
        like to the second look, which therefore does not confirm them (all False when the rule is off)."""
        scores = np.asarray(scores)
        if self.classifier is None or self.verify_one_conf <= self.verify_conf or len(probs) == 0:
            return np.zeros(len(scores), bool)
        lone: np.ndarray = (best_face(probs, self._cls_values) == 1) & (scores <= self.verify_one_conf)
        return lone

    def one_box_per_die(self, xyxy: np.ndarray, keep: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """``keep`` ``(K,)`` bool without the boxes nested in a stronger kept box: covered ``≥ nested_frac`` of
        their area, or ``≥ min(weak_nested_frac, nested_frac)`` for a weak box (``scores`` ``(K,)`` float at or
        below ``conf``; :func:`kosti.vision.detections.nested_in_stronger`). ``nested_frac`` 1 keeps every box.
        First, a box that holds two or more separate, much smaller dice boxes is a container (a tray, a ring, a
        box lid; :func:`kosti.vision.detections.containers`) and is dropped, so the dice inside it stay.

        Raises:
            ValueError: ``xyxy`` ``(K, 4)``, ``keep`` and ``scores`` differ in length.
        """
        scores = np.asarray(scores)
        if not len(scores) == len(keep) == len(xyxy):
            raise ValueError(f"one_box_per_die: {len(xyxy)} boxes, {len(keep)} keep flags, {len(scores)} scores")
        fracs = self.cover_fracs(scores)
        keep = np.asarray(keep, bool) & ~containers(xyxy, keep, fracs)  # inner boxes win (issue 38)
        single: np.ndarray = keep & ~nested_in_stronger(xyxy, keep, fracs)
        return single

    def cover_fracs(self, scores: np.ndarray) -> np.ndarray:
        """``(K,)`` float: the share of its own area from which each box (detector ``scores`` ``(K,)``) inside a
        die's box is that die again: ``nested_frac``, or ``min(weak_nested_frac, nested_frac)`` for a weak box
        (score at or below ``conf``); 1 for every box when ``nested_frac`` is 1 (the rule off). Used by
        :meth:`one_box_per_die` and :meth:`merge_zoomed`."""
        weak = 1.0 if self.nested_frac >= 1.0 else min(self.weak_nested_frac, self.nested_frac)
        fracs: np.ndarray = np.where(np.asarray(scores) > self.conf, self.nested_frac, weak).astype(np.float64)
        return fracs

    def read(self, image: np.ndarray) -> Detections:
        """Find and read every die in one frame.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame, any size.

        Returns:
            :class:`Detections` in frame pixels, highest detector confidence first.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array.
        """
        return self.read_candidates(image)[0]

    def read_candidates(self, image: np.ndarray) -> tuple[Detections, Detections]:
        """:meth:`read`, plus the boxes it did not take as dice: the weak boxes the second look did not
        confirm, the boxes the one-box-per-die rule dropped (:meth:`one_box_per_die`, any score), and the
        boxes read surely as not a die (:meth:`not_die`, any score).

        The live table knows how many dice were thrown (the engine's dice to throw); when fewer are found,
        it may take the best of these candidates (:func:`kosti.vision.vote.recover_dice`). Each
        candidate carries its detector score (``confidence``; above ``verify_conf``, and at most ``conf``
        unless the one-box or the not-a-die rule dropped it) and its face read
        as for a die (:meth:`decide`: value 0 when no face reaches ``value_conf``, and for a lone 1 the
        second look turned down, :meth:`lone_ones`). Dice and candidates both carry a ``guess`` column:
        the most probable face, even where the value is 0 (its probability is then ``value_confidence``);
        candidates also carry ``not_die`` (True for the boxes :meth:`not_die` turned down).

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame, any size.

        Returns:
            ``(dice, candidates)``: two :class:`Detections` in frame pixels, each highest detector
            confidence first; with the second look off, ``candidates`` holds only boxes the one-box and
            the not-a-die rules dropped.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array.
        """
        if not (isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3
                and image.dtype == np.uint8 and image.shape[0] > 0 and image.shape[1] > 0):
            shape = getattr(image, "shape", None)
            raise ValueError(f"expected an (H, W, 3) uint8 BGR image, got {shape} {getattr(image, 'dtype', '')}")
        image, self.last_gain = self.exposed(image)
        dice, candidates = self._read_with(self.detector, image)
        self.last_zoom_side = 0
        if self.needs_zoom(dice, candidates, image.shape[:2]) and self.zoom_detector is not None:
            first = self.last_timing
            zoom_detector = self._zoom_detector_at(self.zoom_side(dice if len(dice) else candidates, image.shape[:2]))
            self.last_zoom_side = zoom_detector.input_side
            zoomed = self._read_with(zoom_detector, image)
            dice, candidates = self.merge_zoomed((dice, candidates), zoomed)
            self.last_timing = {k: v + first[k] for k, v in self.last_timing.items()}
        # Issue 38: a box much larger than a die is read again on its own; the dice inside a container win.
        dice, candidates = look_inside(image, dice, candidates, self._read_region, self.cover_fracs)
        return dice, candidates

    def _read_region(self, region: np.ndarray) -> tuple[Detections, Detections]:
        """:meth:`_read_with` the reader's own detector on a region of the frame (a look inside a large box,
        :func:`kosti.vision.inner_look.look_inside`), its time added to :attr:`last_timing`."""
        before = self.last_timing
        read = self._read_with(self.detector, region)
        self.last_timing = {k: v + before[k] for k, v in self.last_timing.items()}
        return read

    def exposed(self, image: np.ndarray) -> tuple[np.ndarray, float]:
        """The frame as the reader reads it, and the gain applied: ``image`` ``(H, W, 3)`` uint8 brightened by
        :func:`kosti.vision.exposure.exposure_gain` when that gain is above ``dim_gain`` (a dim table), else
        ``image`` itself and 1.0. :meth:`read_candidates` reads through it; so do the other callers of
        :meth:`detect` and :meth:`crops` on whole frames (evaluation, the retraining gate, capture guesses)."""
        if self.dim_gain > 0:
            gain = exposure_gain(image)
            if gain > self.dim_gain:
                return brightened(image, gain), gain
        return image, 1.0

    def _read_with(self, detector: DetectorBackend, image: np.ndarray) -> tuple[Detections, Detections]:
        """:meth:`read_candidates` with one detector (the reader's own or its zoomed copy), no zoom."""
        t0 = time.perf_counter()
        # NMS is greedy by score, so boxes above ``conf`` are the same with or without the weak ones.
        xyxy, scores, classes = detector.detect(image, self.verify_conf if self.verifies else self.conf)
        # Drop degenerate boxes (zero width/height after clipping): nothing to read there.
        good = ((xyxy[:, 2] - xyxy[:, 0]) >= 1.0) & ((xyxy[:, 3] - xyxy[:, 1]) >= 1.0)
        if self.verifies:  # classify only the weak boxes that get a second look
            good &= (scores > self.conf) | self.second_look(scores)
        xyxy, scores, classes = xyxy[good], scores[good], classes[good]
        t1 = time.perf_counter()
        if self.classifier is not None:
            probs = self.calibrate(self.face_probs(self.crops(image, xyxy)))
            keep = self.one_box_per_die(xyxy, self.dice_mask(scores, probs), scores)
            values, vconf = self.decide(probs, self._cls_values)
            # A candidate the lone-1 rule turned down stays uncertain: the live table's recovery of a short
            # throw (kosti.vision.vote.recover_dice) must not take a token back as a sure 1.
            values = np.where(~keep & self.lone_ones(scores, probs), UNKNOWN_VALUE, values).astype(np.int8)
            guess = best_face(probs, self._cls_values)
            not_die = self.not_die(probs)
        else:
            keep = self.one_box_per_die(xyxy, np.ones(len(scores), bool), scores)
            values = self._det_values[classes] if len(classes) else np.zeros(0, np.int8)
            vconf = scores.astype(np.float32)
            low = (values == 0) | (vconf < self.value_conf)
            guess = values.copy()
            values = np.where(low, UNKNOWN_VALUE, values).astype(np.int8)
            not_die = np.zeros(len(scores), bool)
        t2 = time.perf_counter()
        self.last_timing = {
            "detect": (t1 - t0) * 1e3,
            "classify": (t2 - t1) * 1e3,
            "total": (t2 - t0) * 1e3,
        }
        dice = Detections(xyxy[keep], scores[keep], values[keep], vconf[keep], {"guess": guess[keep]})
        return dice, Detections(xyxy[~keep], scores[~keep], values[~keep], vconf[~keep],
                                {"guess": guess[~keep], "not_die": not_die[~keep]})

    def read_path(self, path: str | Path) -> Detections:
        """:meth:`read` an image file. Raises :class:`ImageReadError` naming the file if unreadable."""
        return self.read(load_image(path))

    def describe(self) -> str:
        """One line naming the models and thresholds (for logs and ``kosti eval``)."""
        cls = self.cls_path.name if self.cls_path is not None else "(six-class detector)"
        t = "" if math.isclose(self.temperature, 1.0) else f" T={self.temperature:g}"
        v = f" verify>{self.verify_conf:g}@{self.verify_prob:g}" if self.verifies else ""
        if self.verifies and self.verify_one_conf > self.verify_conf:
            v += f" ones>{self.verify_one_conf:g}"
        if self.classifier is not None and self.not_die_prob < 1.0:
            v += f" not-die x>={self.not_die_prob:g}"
        if self.dim_gain > 0:
            v += f" dim>{self.dim_gain:g}x"
        if self.zoom_detector is not None:
            top = f"-{self.zoom_max}" if self.zoom_max > self.zoom_imgsz else ""
            v += f" zoom<{self.zoom_below:g}px@{self.zoom_detector.input_side}{top}"
        return (f"det={self.det_path.name} cls={cls} conf={self.conf:g} iou={self.detector.iou:g} "
                f"value_conf={self.value_conf:g}{t}{f' tta={self.views}' if self.tta and self.classifier is not None else ''}{v}")




def best_face_prob(probs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``(K,)`` highest probability among the face classes of ``probs`` ``(K, nc)``, ignoring classes whose
    ``values`` entry is 0 (``x``, unreadable)."""
    best: np.ndarray = np.where(values[None, :] > 0, probs, 0.0).max(1)
    return best


def best_face(probs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``(K,)`` int8 face 1–6 of the most probable face class of ``probs`` ``(K, nc)`` (class → value map
    ``values``, ``x`` left out), whatever its probability: the ``guess`` of an uncertain die."""
    if len(probs) == 0:
        return np.zeros(0, np.int8)
    faces: np.ndarray = values[np.where(values[None, :] > 0, probs, -1.0).argmax(1)].astype(np.int8)
    return faces
