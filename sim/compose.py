"""Compositing, blur and noise helpers of the procedural renderer (:mod:`kosti.sim.render`).

Images are OpenCV BGR(A); float32 working images hold values 0–255. Deterministic for a given generator.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

# ---------------------------------------------------------------------------------------------------
# Compositing
# ---------------------------------------------------------------------------------------------------


def paste(
    dst: np.ndarray,
    src_bgra: np.ndarray,
    x0: int,
    y0: int,
    shadow: float = 0.0,
    shadow_offset: tuple[float, float] = (0.0, 0.0),
    shadow_blur: float = 0.0,
    coverage: bool = False,
) -> np.ndarray | None:
    """Alpha-composite a BGRA sprite onto a float32 BGR image in place, clipping at the borders.

    Args:
        dst: ``(H, W, 3)`` float32 BGR image (values 0–255), modified in place.
        src_bgra: ``(h, w, 4)`` uint8 sprite with straight alpha.
        x0, y0: integer position of the sprite's top-left corner in ``dst`` (may be negative).
        shadow: darkening of the soft drop shadow under the sprite, 0 (none) to 1 (black).
        shadow_offset: ``(dx, dy)`` shadow shift in pixels.
        shadow_blur: Gaussian sigma of the shadow edge in pixels.

        coverage: also return the sprite's alpha coverage.

    Returns:
        With ``coverage``: ``(H, W)`` float32 alpha coverage of the sprite in ``dst`` coordinates (0
        outside it), for visibility/occlusion bookkeeping; otherwise ``None``.
    """
    H, W = dst.shape[:2]
    cover = np.zeros((H, W), np.float32) if coverage else None
    h, w = src_bgra.shape[:2]
    a = src_bgra[..., 3].astype(np.float32) * (1.0 / 255.0)
    if shadow > 0:
        sb = max(shadow_blur, 0.5)
        pad = int(math.ceil(3 * sb + max(abs(shadow_offset[0]), abs(shadow_offset[1])))) + 1
        sm = np.zeros((h + 2 * pad, w + 2 * pad), np.float32)
        # The shadow of a translucent die is still fairly dark: use the silhouette, not the alpha.
        sm[pad:pad + h, pad:pad + w] = np.minimum(a * 2.0, 1.0)
        m = np.array([[1, 0, shadow_offset[0]], [0, 1, shadow_offset[1]]], np.float32)
        sm = cv2.warpAffine(sm, m, (sm.shape[1], sm.shape[0]))
        sm = soft_blur(sm, sb)
        _mul_region(dst, 1.0 - shadow * sm, x0 - pad, y0 - pad)
    xa, ya = max(x0, 0), max(y0, 0)
    xb, yb = min(x0 + w, W), min(y0 + h, H)
    if xa >= xb or ya >= yb:
        return cover
    sa = a[ya - y0:yb - y0, xa - x0:xb - x0]
    sc = src_bgra[ya - y0:yb - y0, xa - x0:xb - x0, :3].astype(np.float32)
    region = dst[ya:yb, xa:xb]
    region += (sc - region) * sa[..., None]
    if cover is not None:
        cover[ya:yb, xa:xb] = sa
    return cover


def soft_blur(m: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a float32 mask; wide blurs run at reduced resolution (same look, much faster)."""
    if sigma <= 3.0:
        return cv2.GaussianBlur(m, (0, 0), sigma)
    k = sigma / 2.0
    h, w = m.shape[:2]
    small = cv2.resize(m, (max(1, int(round(w / k))), max(1, int(round(h / k)))), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 2.0)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _mul_region(dst: np.ndarray, factor: np.ndarray, x0: int, y0: int) -> None:
    H, W = dst.shape[:2]
    h, w = factor.shape[:2]
    xa, ya = max(x0, 0), max(y0, 0)
    xb, yb = min(x0 + w, W), min(y0 + h, H)
    if xa < xb and ya < yb:
        dst[ya:yb, xa:xb] *= factor[ya - y0:yb - y0, xa - x0:xb - x0, None]


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """Normalised line kernel for linear motion blur of ``length`` pixels at ``angle_deg``."""
    n = max(1, int(math.ceil(length)))
    k = n | 1
    ker = np.zeros((k, k), np.float32)
    cxy = (k - 1) / 2.0
    dx, dy = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    half = (length - 1) / 2.0
    p1 = (int(round((cxy - dx * half) * 16)), int(round((cxy - dy * half) * 16)))
    p2 = (int(round((cxy + dx * half) * 16)), int(round((cxy + dy * half) * 16)))
    cv2.line(ker, p1, p2, 1.0, 1, cv2.LINE_AA, shift=4)
    return ker / max(float(ker.sum()), 1e-6)


def blur_sprite(src_bgra: np.ndarray, length: float, angle_deg: float) -> np.ndarray:
    """Motion-blur a BGRA sprite (premultiplied internally so edges fade correctly); grows the canvas."""
    if length < 1.5:
        return src_bgra
    pad = int(math.ceil(length / 2)) + 1
    a = src_bgra[..., 3:4].astype(np.float32) / 255.0
    pm = np.concatenate([src_bgra[..., :3].astype(np.float32) * a, a * 255.0], axis=2)
    pm = cv2.copyMakeBorder(pm, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    pm = cv2.filter2D(pm, -1, motion_kernel(length, angle_deg), borderType=cv2.BORDER_CONSTANT)
    a2 = pm[..., 3:4] / 255.0
    rgb = pm[..., :3] / np.maximum(a2, 1e-4)
    return np.concatenate([np.clip(rgb, 0, 255), np.clip(pm[..., 3:4], 0, 255)], 2).astype(np.uint8)


def smooth_noise(rng: np.random.Generator, h: int, w: int, scale_px: float) -> np.ndarray:
    """Smooth random field ``(h, w)`` float32, roughly zero mean and unit variance, with blobs of about
    ``scale_px`` pixels (bicubic upsampling of a coarse Gaussian grid)."""
    gh, gw = max(2, int(math.ceil(h / scale_px)) + 2), max(2, int(math.ceil(w / scale_px)) + 2)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    big = cv2.resize(g, (int(gw * scale_px), int(gh * scale_px)), interpolation=cv2.INTER_CUBIC)
    oy, ox = int(scale_px), int(scale_px)
    out = big[oy:oy + h, ox:ox + w]
    sd = float(out.std()) or 1.0
    return (out - float(out.mean())) / sd
