"""ONNX Runtime inference for the dice detector and face classifier (the lean, torch-free runtime).

Both models are Ultralytics ONNX exports (``model.export(format="onnx", nms=False)``). Their metadata
props give ``imgsz``, ``stride``, ``names`` and ``task``; nothing here is hard-coded to one model size.

* Detector raw output ``(1, 4 + nc, N)``: ``cx, cy, w, h`` in letterbox input pixels, then ``nc`` class
  scores (already sigmoid). Decoding follows ``ultralytics.utils.nms.non_max_suppression``: keep anchors
  whose best class score is ``> conf``, convert to ``xyxy``, cap at ``max_nms`` candidates, greedy NMS at
  ``iou`` (class offsets unless agnostic), keep at most ``max_det``. End-to-end exports (``end2end``
  metadata, output ``(1, K, 6)`` = ``x1, y1, x2, y2, score, class``) are read as they are.
* Classifier output ``(B, nc)``: softmax probabilities. Preprocessing equals Ultralytics' classify
  predictor for crops that already have the model's size (``classify_transforms``: resize shortest side
  + centre crop, both identities then; BGR→RGB; ``/255``; mean 0, std 1 — ``DEFAULT_MEAN``/``DEFAULT_STD``
  in ``ultralytics/data/augment.py``).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

import cv2
import numpy as np

from kosti.models import DEFAULT_IOU
from kosti.vision.letterbox import LetterboxParams, boxes_to_image, letterbox, rect_shape

#: Ultralytics NMS constants (``ultralytics/utils/nms.py``): class offset for batched NMS, candidate cap.
MAX_WH = 7680
MAX_NMS = 30000


class ModelLoadError(RuntimeError):
    """A model file is missing or is not a usable Ultralytics export (CLI exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class ModelInfo:
    """What an Ultralytics export says about itself.

    Attributes:
        path: model file.
        task: ``"detect"`` or ``"classify"``.
        imgsz: ``(H, W)`` input size in pixels.
        stride: largest detector stride in pixels (1 for classifiers).
        names: class index → class name.
        batch: fixed batch size of the graph input, or ``None`` when dynamic.
        end2end: detector output already has NMS applied (``(1, K, 6)`` rows).
        dynamic_hw: the graph takes any input height and width (``export(dynamic=True)``); frames are
            then letterboxed to the smallest stride-multiple rectangle around ``imgsz`` (Ultralytics'
            ``LetterBox(auto=True)``, as its own predict does), so a 16:9 camera frame costs ~40 % less
            than a square input.
    """

    path: Path
    task: str
    imgsz: tuple[int, int]
    stride: int
    names: dict[int, str]
    batch: int | None
    end2end: bool = False
    dynamic_hw: bool = False


def _session(path: Path, threads: int) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU (typed ``Any``: onnxruntime ships no types)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = max(int(threads), 1)
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # No CPU arena and no memory pattern: the arena keeps the largest working set each session ever needed (frame
    # sizes vary: the detector, the zoom, the classifier's batches); without them a kosti run peaks 5-25 MB lower
    # with the same results and CPU time (issue 44, benchmarks/bench_memory.py).
    opts.enable_cpu_mem_arena = False
    opts.enable_mem_pattern = False
    try:
        return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for bad files
        raise ModelLoadError(f"{path}: not a readable ONNX model ({str(exc).splitlines()[0]})") from exc


def model_info(session: Any, path: Path) -> ModelInfo:
    """Read an Ultralytics export's metadata props from an ``onnxruntime.InferenceSession``.

    Falls back to the graph's input shape when ``imgsz`` is absent; class names default to ``"0"…``.

    Raises:
        ModelLoadError: the input shape is dynamic and no ``imgsz`` metadata says what to feed.
    """
    meta = session.get_modelmeta().custom_metadata_map or {}
    inp = session.get_inputs()[0]
    shape = list(inp.shape)
    if "imgsz" in meta:
        imgsz = ast.literal_eval(meta["imgsz"])
        imgsz = (int(imgsz), int(imgsz)) if isinstance(imgsz, int) else (int(imgsz[0]), int(imgsz[1]))
    elif len(shape) == 4 and all(isinstance(s, int) for s in shape[2:]):
        imgsz = (int(shape[2]), int(shape[3]))
    else:
        raise ModelLoadError(f"{path}: no imgsz metadata and a dynamic input shape {shape}")
    names = ast.literal_eval(meta["names"]) if "names" in meta else None
    out = session.get_outputs()[0].shape
    task = meta.get("task") or ("classify" if len(out) == 2 else "detect")
    if names is None:
        nc = out[1] if task == "classify" else out[1] - 4
        names = {i: str(i) for i in range(int(nc))}
    batch = shape[0] if isinstance(shape[0], int) else None
    return ModelInfo(
        path=Path(path),
        task=task,
        imgsz=imgsz,
        stride=int(meta.get("stride", 32 if task == "detect" else 1)),
        names={int(k): str(v) for k, v in names.items()},
        batch=batch,
        end2end=str(meta.get("end2end", "False")) == "True",
        dynamic_hw=len(shape) == 4 and not all(isinstance(s, int) for s in shape[2:]),
    )


def _open(path: str | Path, threads: int, task: str) -> tuple[Any, ModelInfo]:
    path = Path(path)
    if not path.is_file():
        raise ModelLoadError(f"model not found: {path}")
    session = _session(path, threads)
    info = model_info(session, path)
    if info.task != task:
        raise ModelLoadError(f"{path}: expected a {task} model, got task={info.task!r}")
    return session, info


def nms(boxes: np.ndarray, scores: np.ndarray, iou_thres: float) -> np.ndarray:
    """Greedy non-maximum suppression (as ``torchvision.ops.nms``).

    Args:
        boxes: ``(N, 4)`` ``[x1, y1, x2, y2]`` pixels; scores: ``(N,)``.
        iou_thres: a box is dropped when its IoU with a kept, higher-scoring box is ``> iou_thres``.

    Returns:
        ``(K,)`` int64 indices of kept boxes, highest score first.
    """
    boxes = np.asarray(boxes, dtype=np.float32)
    order = np.argsort(-np.asarray(scores), kind="stable")
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    keep: list[int] = []
    while order.size:
        i = order[0]
        keep.append(int(i))
        rest = order[1:]
        w = np.maximum(0.0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        h = np.maximum(0.0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)
        order = rest[~(iou > iou_thres)]  # NaN (empty boxes) counts as "no overlap"
    return np.asarray(keep, dtype=np.int64)


def decode_detections(
    raw: np.ndarray,
    conf: float = 0.25,
    iou: float = 0.7,
    max_det: int = 300,
    agnostic: bool = False,
    end2end: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn one image's raw detector output into NMS-filtered boxes (letterbox pixels).

    Args:
        raw: ``(4 + nc, N)`` (or ``(1, 4 + nc, N)``) float output; ``end2end``: ``(K, 6)`` rows instead.
        conf: keep boxes whose best class score is ``> conf``.
        iou: NMS IoU threshold (Ultralytics default 0.7).
        max_det: keep at most this many boxes.
        agnostic: one NMS over all classes (always the case for one class).

    Returns:
        ``xyxy (K, 4)`` float32, ``scores (K,)`` float32 and ``classes (K,)`` int64, best score first.
    """
    raw = np.asarray(raw, dtype=np.float32)
    if raw.ndim == 3:
        raw = raw[0]
    if end2end:
        rows = raw[raw[:, 4] > conf][:max_det]
        return rows[:, :4].copy(), rows[:, 4].copy(), rows[:, 5].astype(np.int64)
    pred = raw.T  # (N, 4 + nc)
    cls_scores = pred[:, 4:]
    classes = cls_scores.argmax(1)
    scores = cls_scores[np.arange(len(pred)), classes]
    keep = scores > conf
    pred, scores, classes = pred[keep], scores[keep], classes[keep]
    if len(pred) > MAX_NMS:
        top = np.argsort(-scores, kind="stable")[:MAX_NMS]
        pred, scores, classes = pred[top], scores[top], classes[top]
    xy, wh = pred[:, :2], pred[:, 2:4]
    xyxy = np.concatenate([xy - wh / 2, xy + wh / 2], axis=1)
    offsets = 0.0 if agnostic else classes[:, None].astype(np.float32) * MAX_WH
    idx = nms(xyxy + offsets, scores, iou)[:max_det]
    return xyxy[idx], scores[idx], classes[idx]


def detector_input(image: np.ndarray, info: ModelInfo) -> tuple[np.ndarray, LetterboxParams]:
    """The detector's input for one frame, as Ultralytics' predict makes it (shared by every lean backend).

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame.
        info: the model's :class:`ModelInfo`; with ``dynamic_hw`` the frame is letterboxed to the smallest
            stride-multiple rectangle around ``imgsz`` (:func:`kosti.vision.letterbox.rect_shape`), else to
            ``imgsz`` exactly.

    Returns:
        ``(1, 3, H_in, W_in)`` float32 RGB in 0–1, and the letterbox geometry (to map boxes back).
    """
    shape = rect_shape(image.shape[:2], info.imgsz, info.stride) if info.dynamic_hw else info.imgsz
    lb, params = letterbox(image, shape)
    return cv2.dnn.blobFromImage(lb, scalefactor=1 / 255.0, swapRB=True), params  # NCHW float32 RGB


def classifier_input(crops: np.ndarray, imgsz: tuple[int, int]) -> np.ndarray:
    """``(N, h, w, 3)`` (or one ``(h, w, 3)``) uint8 BGR crops → ``(N, 3, H_in, W_in)`` float32 RGB 0–1.

    Crops of another size than ``imgsz`` ``(H_in, W_in)`` are resized (shortest side, bilinear) and
    centre-cropped, as Ultralytics' ``classify_transforms``.
    """
    h_in, w_in = imgsz
    crops = np.asarray(crops)
    if crops.ndim == 3:
        crops = crops[None]
    if crops.shape[1:3] != (h_in, w_in):
        crops = np.stack([_resize_center_crop(c, (h_in, w_in)) for c in crops])
    return crops[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) / 255.0


def frame_detections(
    raw: np.ndarray, params: LetterboxParams, conf: float, iou: float, max_det: int, agnostic: bool, end2end: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`decode_detections` of one frame's raw output, boxes mapped back to the frame (every lean
    backend's last step).

    Returns:
        ``xyxy (K, 4)`` float32 in frame pixels (clipped to the frame), ``scores (K,)`` float32,
        ``classes (K,)`` int64 — best score first.
    """
    xyxy, scores, classes = decode_detections(raw, conf, iou, max_det, agnostic, end2end)
    return boxes_to_image(xyxy, params), scores, classes


class ResizableDetector:
    """The input-size part of a lean detector runtime (:class:`OnnxDetector`, ``NcnnDetector``): both letterbox
    frames by their :class:`ModelInfo`, so another input side is another ``info`` on the same network."""

    info: ModelInfo

    @property
    def input_side(self) -> int:
        """Longest side of the network input in pixels (the letterbox bound, ``max(imgsz)``)."""
        return max(self.info.imgsz)

    def resized(self, side: int) -> Self | None:
        """This detector letterboxing frames to ``side`` px instead (same session or network, no copy of the
        weights), or ``None`` when the export takes only its own input size (not ``dynamic_hw``: a static ONNX,
        Ultralytics' own NCNN export). ``side`` is rounded up to a multiple of the model's stride. Used by the
        reader's zoom (:class:`kosti.vision.reader.DiceReader`, ``zoom_imgsz``)."""
        if not self.info.dynamic_hw:
            return None
        stride = max(int(self.info.stride), 1)
        side = -(-int(side) // stride) * stride  # the network's concats need stride multiples (as check_imgsz)
        other = copy.copy(self)
        other.info = replace(self.info, imgsz=(side, side))
        return other


class OnnxDetector(ResizableDetector):
    """YOLO detector through ONNX Runtime on the CPU.

    Args:
        path: Ultralytics ONNX export (task ``detect``).
        threads: ONNX Runtime intra-op threads (1 = one core, the Raspberry Pi budget).
        iou: NMS IoU threshold; max_det: most boxes per frame; agnostic: class-agnostic NMS.

    Raises:
        ModelLoadError: missing file, not ONNX, or not a detector.
    """

    def __init__(
        self, path: str | Path, threads: int = 1, iou: float = DEFAULT_IOU, max_det: int = 300, agnostic: bool = True
    ) -> None:
        self.session, self.info = _open(path, threads, "detect")
        self.input_name = self.session.get_inputs()[0].name
        self.fp16 = "float16" in self.session.get_inputs()[0].type
        self.iou, self.max_det, self.agnostic = iou, max_det, agnostic

    @property
    def names(self) -> dict[int, str]:
        """Class index → name (``{0: "die"}`` for the shipped detector)."""
        return self.info.names

    def preprocess(self, image: np.ndarray) -> tuple[np.ndarray, LetterboxParams]:
        """Letterbox a ``(H, W, 3)`` uint8 BGR frame into a ``(1, 3, H_in, W_in)`` float RGB 0–1 tensor."""
        x, params = detector_input(image, self.info)
        return (x.astype(np.float16) if self.fp16 else x), params

    def raw(self, image: np.ndarray) -> tuple[np.ndarray, LetterboxParams]:
        """Run the network on one BGR frame; returns its raw output and the letterbox geometry."""
        x, params = self.preprocess(image)
        return self.session.run(None, {self.input_name: x})[0], params

    def detect(self, image: np.ndarray, conf: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Find objects in one frame.

        Args:
            image: ``(H, W, 3)`` uint8 BGR frame.
            conf: detector confidence threshold (boxes with score ``> conf`` are kept).

        Returns:
            ``xyxy (K, 4)`` float32 in frame pixels (clipped to the frame), ``scores (K,)`` float32,
            ``classes (K,)`` int64 — best score first.
        """
        out, params = self.raw(image)
        return frame_detections(out, params, conf, self.iou, self.max_det, self.agnostic, self.info.end2end)


class OnnxClassifier:
    """YOLO classifier through ONNX Runtime on the CPU (the die face reader).

    Args:
        path: Ultralytics ONNX export (task ``classify``).
        threads: ONNX Runtime intra-op threads.

    Raises:
        ModelLoadError: missing file, not ONNX, or not a classifier.
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        self.session, self.info = _open(path, threads, "classify")
        self.input_name = self.session.get_inputs()[0].name
        self.fp16 = "float16" in self.session.get_inputs()[0].type

    @property
    def names(self) -> dict[int, str]:
        """Class index → name (``{0: "1", …, 5: "6", 6: "x"}`` for the shipped classifier)."""
        return self.info.names

    def preprocess(self, crops: np.ndarray) -> np.ndarray:
        """``(N, h, w, 3)`` uint8 BGR crops → ``(N, 3, H_in, W_in)`` float RGB 0–1.

        Crops of another size are resized with bilinear interpolation (shortest side, then centre crop,
        as Ultralytics' ``classify_transforms``; OpenCV's bilinear is not PIL's bit for bit, so feed crops
        of the model's size — :func:`kosti.vision.crops.square_crop` with ``size=imgsz`` — for exactness).
        """
        x = classifier_input(crops, self.info.imgsz)
        return x.astype(np.float16) if self.fp16 else x

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """Class probabilities for a batch of BGR crops.

        Args:
            crops: ``(N, h, w, 3)`` uint8 BGR (``N`` may be 0).

        Returns:
            ``(N, nc)`` float32 softmax probabilities (rows sum to 1).
        """
        nc = len(self.names)
        if len(crops) == 0:
            return np.zeros((0, nc), np.float32)
        x = self.preprocess(crops)
        b = self.info.batch
        if b is None:
            probs: np.ndarray = self.session.run(None, {self.input_name: x})[0].astype(np.float32)
            return probs
        out = []
        for s in range(0, len(x), b):  # fixed-batch graph: feed chunks of b, zero-padded
            chunk = x[s : s + b]
            n = len(chunk)
            if n < b:
                chunk = np.concatenate([chunk, np.zeros((b - n, *chunk.shape[1:]), chunk.dtype)])
            out.append(self.session.run(None, {self.input_name: chunk})[0][:n])
        return np.concatenate(out).astype(np.float32)


def _resize_center_crop(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    h_in, w_in = size
    h, w = img.shape[:2]
    if h_in == w_in:  # torchvision Resize(int): shortest side → size
        s = h_in / min(h, w)
        nh, nw = max(round(h * s), h_in), max(round(w * s), w_in)
    else:
        nh, nw = h_in, w_in
    img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    top, left = (nh - h_in) // 2, (nw - w_in) // 2
    return img[top : top + h_in, left : left + w_in]
