"""Letterbox a frame to the detector's input size, and map boxes back to frame pixels.

This reproduces Ultralytics' ``LetterBox(new_shape, auto=False, center=True, padding_value=114)``
(``ultralytics/data/augment.py``, the transform its predictor applies to static-shape ONNX models) and
its inverse ``ultralytics.utils.ops.scale_boxes`` bit for bit, so boxes from the ONNX runtime equal the
ones Ultralytics' own ``predict`` gives on the same weights:

* gain ``r = min(H_in / H, W_in / W)``; resized size ``(max(round(W r), 1), max(round(H r), 1))``;
* the resize uses ``cv2.INTER_LINEAR`` and is skipped when the size already matches;
* padding ``dw, dh`` is split in two, ``top = round(dh/2 - 0.1)``, ``left = round(dw/2 - 0.1)``,
  filled with grey 114;
* the inverse subtracts ``(left, top)`` and divides by the per-axis gain of the *rounded* size
  (``new_w / W``, ``new_h / H``), then clips to the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: Grey used for the padding (Ultralytics' ``LetterBox.padding_value``).
PAD_VALUE = 114


@dataclass(frozen=True)
class LetterboxParams:
    """How one frame was letterboxed.

    Attributes:
        orig_shape: ``(H, W)`` of the input frame in pixels.
        new_shape: ``(H_in, W_in)`` of the model input in pixels.
        gain_x, gain_y: resized size / original size per axis (≈ the common scale ``r``).
        pad_left, pad_top: grey pixels added on the left and at the top.
    """

    orig_shape: tuple[int, int]
    new_shape: tuple[int, int]
    gain_x: float
    gain_y: float
    pad_left: int
    pad_top: int


def letterbox_params(orig_shape: tuple[int, int], new_shape: int | tuple[int, int]) -> LetterboxParams:
    """Compute the letterbox geometry for a frame of ``orig_shape`` = ``(H, W)`` pixels.

    Args:
        orig_shape: ``(H, W)`` of the frame, both ≥ 1.
        new_shape: model input ``(H_in, W_in)`` or one int for a square input.

    Raises:
        ValueError: a side of ``orig_shape`` is below 1.
    """
    h, w = int(orig_shape[0]), int(orig_shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"empty image shape {orig_shape}")
    if isinstance(new_shape, int):
        new_shape = (new_shape, new_shape)
    nh, nw = int(new_shape[0]), int(new_shape[1])
    r = min(nh / h, nw / w)
    unpad_w, unpad_h = max(round(w * r), 1), max(round(h * r), 1)
    dw, dh = (nw - unpad_w) / 2, (nh - unpad_h) / 2
    return LetterboxParams(
        orig_shape=(h, w),
        new_shape=(nh, nw),
        gain_x=unpad_w / w,
        gain_y=unpad_h / h,
        pad_left=round(dw - 0.1),
        pad_top=round(dh - 0.1),
    )


def rect_shape(orig_shape: tuple[int, int], imgsz: int | tuple[int, int], stride: int = 32) -> tuple[int, int]:
    """Smallest stride-multiple input ``(H_in, W_in)`` holding a frame scaled to fit ``imgsz``.

    This is the shape Ultralytics' ``LetterBox(auto=True)`` gives (used by its predict with PyTorch
    models and by dynamic-shape exports): scale by ``min(H_max/H, W_max/W)``, then pad each side up to a
    multiple of ``stride`` only. A 1280×720 frame with ``imgsz=416`` gives ``(256, 416)``.

    Args:
        orig_shape: ``(H, W)`` of the frame in pixels, both ≥ 1.
        imgsz: largest input ``(H_max, W_max)`` or one int for a square bound.
        stride: the detector's largest stride in pixels.
    """
    h, w = int(orig_shape[0]), int(orig_shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"empty image shape {orig_shape}")
    hmax, wmax = (imgsz, imgsz) if isinstance(imgsz, int) else (int(imgsz[0]), int(imgsz[1]))
    r = min(hmax / h, wmax / w)
    unpad_w, unpad_h = max(round(w * r), 1), max(round(h * r), 1)
    return unpad_h + (hmax - unpad_h) % stride, unpad_w + (wmax - unpad_w) % stride


def letterbox(
    image: np.ndarray, new_shape: int | tuple[int, int], pad_value: int = PAD_VALUE
) -> tuple[np.ndarray, LetterboxParams]:
    """Resize ``image`` keeping its aspect ratio and pad it to ``new_shape`` (Ultralytics LetterBox).

    Args:
        image: ``(H, W, 3)`` uint8 frame (BGR or RGB; channels are not touched).
        new_shape: model input ``(H_in, W_in)`` in pixels, or one int for a square input.
        pad_value: grey level of the padding (114 as Ultralytics).

    Returns:
        ``(H_in, W_in, 3)`` uint8 letterboxed image and the :class:`LetterboxParams` to map boxes back.

    Raises:
        ValueError: ``image`` is not a non-empty ``(H, W, 3)`` array.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] < 1 or image.shape[1] < 1:
        raise ValueError(f"expected an (H, W, 3) image, got shape {image.shape}")
    p = letterbox_params(image.shape[:2], new_shape)
    h, w = p.orig_shape
    unpad_w, unpad_h = round(p.gain_x * w), round(p.gain_y * h)
    if (w, h) != (unpad_w, unpad_h):
        image = cv2.resize(image, (unpad_w, unpad_h), interpolation=cv2.INTER_LINEAR)
    nh, nw = p.new_shape
    bottom, right = nh - unpad_h - p.pad_top, nw - unpad_w - p.pad_left
    out = cv2.copyMakeBorder(
        image, p.pad_top, bottom, p.pad_left, right, cv2.BORDER_CONSTANT, value=(pad_value,) * 3
    )
    return out, p


def boxes_to_image(boxes: np.ndarray, params: LetterboxParams, clip: bool = True) -> np.ndarray:
    """Map ``(N, 4)`` ``[x1, y1, x2, y2]`` boxes from letterbox pixels to frame pixels.

    Same arithmetic as ``ultralytics.utils.ops.scale_boxes`` (then ``clip_boxes`` when ``clip``).

    Returns:
        A new ``(N, 4)`` float32 array in pixels of the original frame.
    """
    out = np.array(boxes, dtype=np.float32, copy=True).reshape(-1, 4)
    out[:, [0, 2]] -= params.pad_left
    out[:, [1, 3]] -= params.pad_top
    out[:, [0, 2]] /= params.gain_x
    out[:, [1, 3]] /= params.gain_y
    if clip:
        h, w = params.orig_shape
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, w)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, h)
    return out


def boxes_to_letterbox(boxes: np.ndarray, params: LetterboxParams) -> np.ndarray:
    """Map ``(N, 4)`` ``[x1, y1, x2, y2]`` boxes from frame pixels to letterbox pixels (inverse of
    :func:`boxes_to_image` without clipping). Returns a new ``(N, 4)`` float32 array."""
    out = np.array(boxes, dtype=np.float32, copy=True).reshape(-1, 4)
    out[:, [0, 2]] = out[:, [0, 2]] * params.gain_x + params.pad_left
    out[:, [1, 3]] = out[:, [1, 3]] * params.gain_y + params.pad_top
    return out

