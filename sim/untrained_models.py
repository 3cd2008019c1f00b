"""Untrained YOLO11n detector and classifier built from their YAML, for tests and benchmarks.

Nothing here is used at run time; :func:`build_untrained_models` imports Ultralytics (and torch) when
called and downloads nothing.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from kosti.sim.synthetic import synthetic_frame


def build_untrained_models(
    out_dir: str | Path,
    det_imgsz: int | tuple[int, int] = 320,
    cls_imgsz: int = 64,
    det_classes: tuple[str, ...] = ("die",),
    cls_classes: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "x"),
    seed: int = 0,
    dynamic: bool = False,
) -> dict[str, Path]:
    """Build a YOLO11n detector and a YOLO11n-cls classifier from their YAML (random weights, nothing
    downloaded), save them as ``.pt`` and export them to ONNX the way the shipped models are exported.

    For development, tests and benchmarks before trained weights exist: the networks have the shipped
    architecture and go through the same export, so shapes, metadata, decoding and speed are real —
    only the answers are meaningless. An untrained YOLO's activations all but vanish, so both networks
    are re-initialised (Kaiming-normal) and their class logits are scaled on synthetic dice to a spread
    around 0: a frame yields many boxes with distinct scores (NMS has work to do) and crops get
    distinct, non-uniform class probabilities.
    The ``.onnx`` files are exported from the saved ``.pt`` (which Ultralytics stores in FP16), so both
    formats hold the very same weights.

    Args:
        out_dir: folder for ``det.pt``, ``det.onnx``, ``cls.pt``, ``cls.onnx`` (created).
        det_imgsz, cls_imgsz: input sizes in pixels (``det_imgsz`` may be ``(H, W)``, e.g. ``(256, 416)``
            for 16:9 camera frames).
        det_classes, cls_classes: class names embedded in the models.
        seed: torch RNG seed (reproducible weights).
        dynamic: export with dynamic input height/width (the shipped detector's form; see
            :class:`kosti.vision.onnx_backend.ModelInfo`).

    Returns:
        ``{"det_pt", "det_onnx", "cls_pt", "cls_onnx"}`` → paths.
    """
    from kosti.common.ultralytics_env import import_ultralytics

    YOLO = import_ultralytics().YOLO
    import torch
    from ultralytics.nn.tasks import ClassificationModel, DetectionModel

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for kind, cfg, model_cls, names, imgsz in (
        ("det", "yolo11n.yaml", DetectionModel, det_classes, det_imgsz),
        ("cls", "yolo11n-cls.yaml", ClassificationModel, cls_classes, cls_imgsz),
    ):
        torch.manual_seed(seed)
        y = YOLO(cfg)
        y.model = model_cls(cfg, nc=len(names), verbose=False)
        y.model.names = dict(enumerate(names))
        train_sz = max(imgsz) if isinstance(imgsz, tuple) else imgsz
        y.model.args = {"imgsz": train_sz, "task": y.task}
        y.ckpt = {"train_args": {"imgsz": train_sz, "task": y.task}}  # where YOLO(pt) reads the task from
        if kind == "det":
            _spread_detector_scores(y.model, imgsz)
        else:
            _spread_classifier_logits(y.model, train_sz)  # the classifier's size is one int (cls_imgsz)
        pt = out / f"{kind}.pt"
        y.save(pt)
        onnx = YOLO(str(pt), task=y.task).export(
            format="onnx", imgsz=list(imgsz) if isinstance(imgsz, tuple) else imgsz, simplify=True, dynamic=dynamic,
            nms=False,
        )
        paths[f"{kind}_pt"], paths[f"{kind}_onnx"] = pt, Path(onnx)
    return paths


def _spread_detector_scores(model, imgsz: int | tuple[int, int], logit_std: float = 1.0) -> None:
    import torch

    with torch.no_grad():
        head = model.model[-1]
        dfl = getattr(head, "dfl", None)
        for mod in model.modules():
            if isinstance(mod, torch.nn.Conv2d) and (dfl is None or mod is not getattr(dfl, "conv", None)):
                torch.nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
        model.eval()
        h, w = imgsz if isinstance(imgsz, tuple) else (imgsz, imgsz)
        frame, _, _ = synthetic_frame(w, h, n_dice=3, side=max(min(h, w) // 8, 12), seed=1)
        x = torch.from_numpy(frame[..., ::-1].copy()).permute(2, 0, 1)[None].float() / 255
        logits: list[torch.Tensor] = []
        hooks = [seq[-1].register_forward_hook(lambda m, i, o: logits.append(o)) for seq in head.cv3]
        model(x)
        for h in hooks:
            h.remove()
        for seq, o in zip(head.cv3, logits):
            mean, std = float(o.mean()), float(o.std())
            seq[-1].weight.mul_(logit_std / max(std, 1e-12))
            seq[-1].bias.sub_(mean).mul_(logit_std / max(std, 1e-12))


def _spread_classifier_logits(model, imgsz: int, logit_std: float = 2.0) -> None:
    import torch

    from kosti.vision.crops import square_crop

    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
        model.eval()
        frame, boxes, _ = synthetic_frame(640, 480, n_dice=6, side=60, seed=2)
        crops = np.stack([cv2.resize(square_crop(frame, b), (imgsz, imgsz)) for b in boxes])
        x = torch.from_numpy(crops[..., ::-1].copy()).permute(0, 3, 1, 2).float() / 255
        linear = model.model[-1].linear
        seen: list[torch.Tensor] = []
        hook = linear.register_forward_hook(lambda m, i, o: seen.append(o))
        model(x)
        hook.remove()
        o = seen[0]
        scale = logit_std / max(float((o - o.mean(0)).std()), 1e-12)
        linear.weight.mul_(scale)
        linear.bias.sub_(o.mean(0)).mul_(scale)
