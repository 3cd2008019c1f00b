"""Ultralytics backend for the dice reader: ``.pt`` (PyTorch) or NCNN models, and model export.

Imports ``ultralytics`` (and so torch) lazily, only when one of these classes is built — the default
ONNX runtime never loads this module. Same interface as :mod:`kosti.vision.onnx_backend`:
``detect(image, conf) -> (xyxy, scores, classes)`` and ``classify(crops) -> probs``.

NCNN is the fast runtime on a Raspberry Pi's ARM cores; :func:`export_model` makes an
``*_ncnn_model`` folder with ``yolo export format=ncnn`` (needs the ``ncnn`` and ``pnnx`` packages of the
``train`` extra). The Pi reads those folders with :mod:`kosti.vision.ncnn_backend`, without Ultralytics.

Ultralytics is imported through :func:`kosti.common.ultralytics_env.import_ultralytics` (offline by construction),
and what it prints goes to stderr (:func:`kosti.common.ultralytics_env.stdout_to_stderr`): a ``--json`` command's
stdout holds only its JSON document, whatever the backend.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from kosti.common.ultralytics_env import import_ultralytics, stdout_to_stderr
from kosti.models import DEFAULT_IOU
from kosti.vision.onnx_backend import ModelLoadError

_SUFFIXES = {".pt", ".onnx", ".torchscript", ".engine", ".mlpackage", ".tflite"}


def is_ncnn_dir(path: Path) -> bool:
    """True for a folder holding an NCNN export (``*.ncnn.param`` + ``*.ncnn.bin``)."""
    return path.is_dir() and any(path.glob("*.ncnn.param")) and any(path.glob("*.ncnn.bin"))


def ultralytics_model_path(path: Path) -> Path:
    """The path to hand to ``YOLO()``: Ultralytics recognises NCNN exports only by a folder name
    containing ``_ncnn_model``, so any other NCNN folder (e.g. the model registry's ``det_ncnn/``) is
    reached through a symlink ``<tmp>/<name>_ncnn_model`` (removed at exit).
    """
    if is_ncnn_dir(path) and "_ncnn_model" not in path.name.lower():
        import atexit
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="kosti-ncnn-"))
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        link = tmp / f"{path.name}_ncnn_model"
        link.symlink_to(path.resolve(), target_is_directory=True)
        return link
    return path


def _yolo(path: Path, task: str) -> Any:
    if not (path.is_file() or is_ncnn_dir(path)):
        raise ModelLoadError(f"model not found: {path}")
    if is_ncnn_dir(path) and "outputs: head_maps" in _text(path / "metadata.yaml"):
        raise ModelLoadError(f"{path}: kosti's NCNN detector export (head maps, any input size) is read by the "
                             "ncnn backend, not Ultralytics (use --backend ncnn)")
    path = ultralytics_model_path(path)
    try:
        YOLO = import_ultralytics().YOLO
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelLoadError(
            f"{path}: the Ultralytics backend needs the 'train' extra (bash scripts/setup --train, or pip install 'kosti[train]')"
        ) from exc
    try:
        with stdout_to_stderr():
            model = YOLO(str(path), task=task)
    except Exception as exc:  # noqa: BLE001 - Ultralytics raises many types for bad files
        raise ModelLoadError(f"{path}: cannot load model ({str(exc).splitlines()[0]})") from exc
    if model.task != task:
        raise ModelLoadError(f"{path}: expected a {task} model, got task={model.task!r}")
    return model


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(int(threads), 1))


class UltralyticsDetector:
    """YOLO detector run by Ultralytics' own ``predict`` (PyTorch ``.pt`` or NCNN folder).

    Uses the same square letterbox as the ONNX runtime (``rect=False``), so both backends see the same
    input and give the same boxes on the same weights.

    Args:
        path: weights; threads: torch CPU threads; iou, max_det: NMS settings (as ``predict``);
        imgsz: input size override (default: the model's training size).

    Raises:
        ModelLoadError: missing or unusable weights.
    """

    def __init__(
        self, path: str | Path, threads: int = 1, iou: float = DEFAULT_IOU, max_det: int = 300, imgsz: int | None = None
    ) -> None:
        self.path = Path(path)
        self.model = _yolo(self.path, "detect")
        _set_threads(threads)
        self.iou, self.max_det, self.imgsz = iou, max_det, imgsz

    @property
    def names(self) -> dict[int, str]:
        """Class index → name (an exported model is loaded for it, which Ultralytics logs)."""
        with stdout_to_stderr():
            return {int(k): str(v) for k, v in self.model.names.items()}

    @property
    def input_side(self) -> int:
        """Longest side of the network input in pixels: ``imgsz``, or the size the model was trained at."""
        if self.imgsz:
            return int(self.imgsz)
        trained = getattr(self.model, "overrides", {}).get("imgsz", 640)
        return int(max(trained) if isinstance(trained, (list, tuple)) else trained)

    def resized(self, side: int) -> UltralyticsDetector | None:
        """This detector predicting at ``side`` px instead (same model object), or ``None`` unless the weights
        are a PyTorch ``.pt``: Ultralytics runs an exported model (NCNN, a static ONNX) at its export size
        whatever ``imgsz`` asks."""
        if self.path.suffix.lower() != ".pt":
            return None
        other = copy.copy(self)
        other.imgsz = int(side)
        return other

    def detect(self, image: np.ndarray, conf: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``xyxy (K, 4)`` float32 frame pixels, ``scores (K,)`` float32, ``classes (K,)`` int64."""
        kw = {"imgsz": self.imgsz} if self.imgsz else {}
        with stdout_to_stderr():  # NCNN folders print "Loading … for NCNN inference" on first use
            r = self.model.predict(  # rect=False: the full square letterbox, as the ONNX runtime
                image, conf=conf, iou=self.iou, max_det=self.max_det, agnostic_nms=True, rect=False, verbose=False,
                **kw,
            )[0]
        b = r.boxes
        return (
            b.xyxy.cpu().numpy().astype(np.float32),
            b.conf.cpu().numpy().astype(np.float32),
            b.cls.cpu().numpy().astype(np.int64),
        )


class UltralyticsClassifier:
    """YOLO classifier run by Ultralytics' own ``predict`` (PyTorch ``.pt`` or NCNN folder).

    Raises:
        ModelLoadError: missing or unusable weights.
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        self.model = _yolo(Path(path), "classify")
        _set_threads(threads)

    @property
    def names(self) -> dict[int, str]:
        """Class index → name (an exported model is loaded for it, which Ultralytics logs)."""
        with stdout_to_stderr():
            return {int(k): str(v) for k, v in self.model.names.items()}

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """``(N, h, w, 3)`` uint8 BGR crops → ``(N, nc)`` float32 probabilities."""
        if len(crops) == 0:
            return np.zeros((0, len(self.names)), np.float32)
        with stdout_to_stderr():
            res = self.model.predict(list(crops), imgsz=crops.shape[1], verbose=False)
        return np.stack([r.probs.data.cpu().numpy() for r in res]).astype(np.float32)


def export_model(weights: str | Path, fmt: str = "onnx", imgsz: int | None = None, half: bool | None = None) -> Path:
    """Export Ultralytics ``.pt`` weights for the runtime (offline; Ultralytics' log goes to stderr).

    Args:
        weights: a trained ``.pt`` (detector or classifier).
        fmt: ``"onnx"`` (static shape, no NMS in the graph, simplified — what :mod:`onnx_backend`
            reads) or ``"ncnn"`` (an ``*_ncnn_model`` folder for :mod:`kosti.vision.ncnn_backend`).
        imgsz: input size in pixels (default: the size the model was trained at).
        half: float16 weights; default True for NCNN (half the bytes; NCNN converts them to float32 when it
            loads them on an x86 CPU and computes in float16 on ARM CPUs that have it, as it would anyway),
            False for ONNX (ONNX stays float32 for CPU speed and exactness).

    A YOLO detector (plain ``Detect`` head) goes to NCNN as its per-level head maps with dynamic input
    height and width (:func:`_export_ncnn_detector_maps`); classifiers (and other heads) through Ultralytics'
    own NCNN export.

    Returns:
        Path of the exported file (``.onnx``) or folder (``<stem>_ncnn_model``: ``model.ncnn.param``,
        ``model.ncnn.bin``, ``metadata.yaml``), next to the weights.

    Raises:
        ModelLoadError: weights missing/unusable, or the export failed (e.g. ``pnnx`` not installed).
        ValueError: unknown format.
    """
    fmt = fmt.lower()
    if fmt not in {"onnx", "ncnn"}:
        raise ValueError(f"unknown export format {fmt!r} (onnx or ncnn)")
    weights = Path(weights)
    if weights.suffix.lower() != ".pt":
        raise ModelLoadError(f"{weights}: export needs Ultralytics .pt weights")
    if not weights.is_file():
        raise ModelLoadError(f"model not found: {weights}")
    try:
        YOLO = import_ultralytics().YOLO
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelLoadError(f"{weights}: export needs the 'train' extra (bash scripts/setup --train, or pip install 'kosti[train]')") from exc
    kw: dict[str, Any] = {"format": fmt, "device": "cpu", "half": fmt == "ncnn" if half is None else bool(half)}
    if imgsz:
        kw["imgsz"] = int(imgsz)
    if fmt == "onnx":
        kw.update(simplify=True, dynamic=False, nms=False)
    try:
        with stdout_to_stderr():  # Ultralytics (and pnnx) log to stdout; keep stdout for the command's answer
            model = YOLO(str(weights))
            if fmt == "ncnn" and _plain_detect_head(model) is not None:
                out = _export_ncnn_detector_maps(model, weights, imgsz, kw["half"])
            else:
                out = model.export(**kw)
    except Exception as exc:  # noqa: BLE001
        hint = ""
        if fmt == "ncnn" and ("ncnn" in str(exc) or "pnnx" in str(exc)):
            hint = "; install the train extra (bash scripts/setup --train, or pip install 'kosti[train]': ncnn and pnnx), then retry"
        raise ModelLoadError(f"{weights}: {fmt} export failed ({str(exc).splitlines()[0]}){hint}") from exc
    if not out:
        raise ModelLoadError(f"{weights}: {fmt} export produced nothing")
    out = Path(out)
    if fmt == "ncnn":  # Ultralytics' example script imports torch: not for the lean runtime, not shipped
        (out / "model_ncnn.py").unlink(missing_ok=True)
        shutil.rmtree(out / "__pycache__", ignore_errors=True)
    return out


def _plain_detect_head(yolo: Any) -> Any:
    """The model's last layer when it is a YOLO ``Detect`` head with ``cv2``/``cv3`` branches and no
    end-to-end (NMS-free) branch, else ``None``."""
    inner = getattr(yolo, "model", None)
    layers = getattr(inner, "model", None)
    if getattr(yolo, "task", None) != "detect" or layers is None:
        return None
    head = layers[-1]
    if type(head).__name__ != "Detect" or not hasattr(head, "cv2") or not hasattr(head, "cv3"):
        return None
    if getattr(head, "end2end", False) or getattr(head, "one2one_cv2", None) is not None:
        return None
    return head


def _detector_maps_module(model: Any) -> Any:
    """A ``torch.nn.Module`` running a fused ``DetectionModel`` up to its head's last convolutions: outputs
    ``nl`` box maps ``(1, 4·reg_max, h, w)`` then ``nl`` class-logit maps ``(1, nc, h, w)``, finest first
    (``Detect.forward_head`` without the ``view``/``cat``/decode, which fix the input size)."""
    import torch

    class DetectorMaps(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, x: Any) -> tuple[Any, ...]:
            saved: list[Any] = []
            layers = self.m.model
            for layer in layers[:-1]:  # DetectionModel._predict_once
                if layer.f != -1:
                    x = saved[layer.f] if isinstance(layer.f, int) else [x if j == -1 else saved[j] for j in layer.f]
                x = layer(x)
                saved.append(x if layer.i in self.m.save else None)
            head = layers[-1]
            feats = [x if j == -1 else saved[j] for j in head.f]
            return (*(head.cv2[i](feats[i]) for i in range(head.nl)), *(head.cv3[i](feats[i]) for i in range(head.nl)))

    return DetectorMaps(model).eval()


def _export_ncnn_detector_maps(yolo: Any, weights: Path, imgsz: int | None, half: bool) -> Path:
    """NCNN export of a YOLO detector whose input may have any stride-multiple height and width.

    Ultralytics' NCNN export traces one input shape, so the graph's reshapes (the C2PSA attention block's
    and the head's) and its anchors are constants of that shape: only a square ``imgsz`` input is right.
    Here pnnx traces the network up to the head's last convolutions at two shapes (``imgsz²`` and a smaller
    rectangle), which makes every reshape an expression of the input size; the outputs are the per-level
    maps that :mod:`kosti.vision.ncnn_backend` decodes as ``Detect`` does. A 1280×720 frame then runs at
    640×384, as the ONNX export's dynamic shape, instead of 640×640.

    Writes ``<stem>_ncnn_model/`` beside ``weights`` (``model.ncnn.param``, ``model.ncnn.bin`` — float16
    weights when ``half`` — and ``metadata.yaml`` with Ultralytics' keys plus ``outputs: head_maps``).
    """
    import datetime
    import tempfile

    import pnnx
    import torch
    import yaml

    head = _plain_detect_head(yolo)
    stride = int(max(int(s) for s in head.stride))
    args = getattr(yolo.model, "args", None)
    trained = args.get("imgsz", 640) if isinstance(args, dict) else 640
    size = int(imgsz or (max(trained) if isinstance(trained, (list, tuple)) else trained))
    size = max(stride, size // stride * stride)
    second = (max(stride, size // 2 // stride * stride), max(stride, size * 3 // 4 // stride * stride))
    model = yolo.model.float().fuse(verbose=False).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    wrapper = _detector_maps_module(model)
    out = weights.with_name(f"{weights.stem}_ncnn_model")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="kosti-pnnx-") as tmp:
        t = Path(tmp)
        pnnx.export(
            wrapper, str(t / "model.pt"), inputs=torch.zeros(1, 3, size, size), inputs2=torch.zeros(1, 3, *second),
            pnnxparam=str(t / "model.pnnx.param"), pnnxbin=str(t / "model.pnnx.bin"), pnnxpy=str(t / "model_pnnx.py"),
            pnnxonnx=str(t / "model.pnnx.onnx"), ncnnparam=str(out / "model.ncnn.param"),
            ncnnbin=str(out / "model.ncnn.bin"), ncnnpy=str(t / "model_ncnn.py"), fp16=bool(half), device="cpu",
        )
    meta = {
        "description": f"kosti NCNN export of {weights.name}: YOLO detection head maps (box DFL, class logits)",
        "author": "kosti (pnnx)", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "stride": stride, "task": "detect", "batch": 1, "imgsz": [size, size],
        "names": {int(k): str(v) for k, v in yolo.names.items()}, "reg_max": int(head.reg_max),
        "outputs": "head_maps", "half": bool(half), "channels": 3, "end2end": False,
    }
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return out
