"""Procedural table tops and whole virtual-table frames (:func:`render_table`) with exact die boxes.

Part of the procedural renderer (:mod:`kosti.sim.render`); the dice come from :mod:`kosti.sim.dice`.
Colours are BGR ``uint8`` triples, as everywhere in OpenCV.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import cv2
import numpy as np

from kosti.sim.compose import blur_sprite, paste, smooth_noise
from kosti.sim.dice import DieStyle, render_styled

# ---------------------------------------------------------------------------------------------------
# Table tops
# ---------------------------------------------------------------------------------------------------

#: Procedural table tops understood by :func:`make_background` and :func:`render_table`.
BACKGROUNDS: tuple[str, ...] = ("felt", "cloth", "wood", "paper", "tray", "dark", "light", "speckle")
#: The wide generator's table tops (``kosti datasets synth --wide``): :data:`BACKGROUNDS` plus ``carpet``
#: (dense fibres: grey, beige or coloured), ``quilt`` (a patchwork of printed fabrics with seams) and
#: ``board`` (a board-game board: coloured hexagonal tiles with printed numbers, as the Catan board that
#: v0.3 read number tokens on).
WIDE_BACKGROUNDS: tuple[str, ...] = BACKGROUNDS + ("carpet", "quilt", "board")


def _jitter_color(rng: np.random.Generator, c: Sequence[float], sd: float) -> np.ndarray:
    return np.clip(np.asarray(c, np.float32) + rng.normal(0, sd, 3), 0, 255).astype(np.float32)


def make_background(kind: str, width: int, height: int, rng: np.random.Generator | int = 0) -> np.ndarray:
    """Procedural table top.

    Args:
        kind: one of :data:`BACKGROUNDS` — ``felt`` (coloured baize), ``cloth`` (woven fabric),
            ``wood`` (planks with grain), ``paper`` (white/cream sheet, sometimes ruled), ``tray``
            (a dice tray with a raised rim on a table), ``dark`` / ``light`` (plain dark or light
            surface), ``speckle`` (stone-like speckled laminate); the wide kinds ``carpet``, ``quilt``
            and ``board`` (:data:`WIDE_BACKGROUNDS`).
        width, height: size in pixels.
        rng: generator or integer seed (same seed → same image).

    Returns:
        ``(height, width, 3)`` uint8 BGR image.

    Raises:
        ValueError: unknown ``kind`` or a non-positive size.
    """
    if kind not in WIDE_BACKGROUNDS:
        raise ValueError(f"unknown background {kind!r}; choose from {', '.join(WIDE_BACKGROUNDS)}")
    if width <= 0 or height <= 0:
        raise ValueError(f"background size must be positive, got {width}x{height}")
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    h, w = height, width
    diag = math.hypot(w, h)
    fine = lambda sd: rng.normal(0, sd, (h, w)).astype(np.float32)  # noqa: E731

    if kind == "felt":
        palette = [(40, 110, 30), (90, 60, 20), (30, 30, 130), (60, 60, 60), (110, 80, 40), (30, 80, 80)]
        base = _jitter_color(rng, palette[int(rng.integers(len(palette)))], 15)
        lum = 1.0 + 0.06 * smooth_noise(rng, h, w, diag / 6) + cv2.GaussianBlur(fine(0.05), (3, 3), 0)
        img = base * lum[..., None]
    elif kind == "cloth":
        base = rng.uniform(40, 220, 3).astype(np.float32)
        period = rng.uniform(3.0, 7.0)
        ang = rng.uniform(0, np.pi)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        xr = xs * math.cos(ang) + ys * math.sin(ang)
        yr = -xs * math.sin(ang) + ys * math.cos(ang)
        weave = np.sin(2 * np.pi * xr / period) * np.sin(2 * np.pi * yr / period)
        lum = 1.0 + 0.07 * weave + 0.05 * smooth_noise(rng, h, w, diag / 5) + fine(0.03)
        img = base * lum[..., None]
        if rng.random() < 0.3:  # checked / striped fabric
            stripe = (np.sin(2 * np.pi * xr / rng.uniform(30, 90)) > 0).astype(np.float32)
            img = img * (1.0 - 0.25 * stripe[..., None])
    elif kind == "wood":
        light = np.clip(np.array((95, 150, 195), np.float32) * rng.uniform(0.7, 1.2) + rng.normal(0, 8, 3), 0, 255)
        light = light.astype(np.float32)
        dark = light * rng.uniform(0.45, 0.7)
        vertical = rng.random() < 0.5
        L, S = (h, w) if vertical else (w, h)  # along / across the grain
        ys, xs = np.mgrid[0:S, 0:L].astype(np.float32)
        plank = rng.uniform(0.15, 0.35) * max(h, w)
        warp = smooth_noise(rng, S, L, 80) * 2.5 + smooth_noise(rng, S, L, 400) * 12.0
        idx = np.floor(ys / plank)
        offs = (idx * 7919.0) % 97.0
        rings = 0.5 + 0.5 * np.sin((ys + warp + offs * 3.0) * (2 * np.pi / rng.uniform(8, 30)))
        rings = rings ** 3
        # Fine grain: noise that changes fast across the grain and slowly along it (streaks).
        streak = cv2.resize(rng.standard_normal((S, max(2, L // 60))).astype(np.float32), (L, S),
                            interpolation=cv2.INTER_LINEAR)
        t = np.clip(0.3 + 0.45 * rings + 0.12 * streak + 0.06 * smooth_noise(rng, S, L, 40)
                    + rng.normal(0, 0.03, (S, L)).astype(np.float32), 0, 1)
        tint = 1.0 + 0.08 * np.sin(idx * 2.3 + rng.uniform(0, 6))
        img = (light * (1 - t[..., None]) + dark * t[..., None]) * tint[..., None]
        img[(ys % plank) < 1.5] *= 0.55  # seams between planks
        if vertical:
            img = np.ascontiguousarray(img.transpose(1, 0, 2))
    elif kind == "paper":
        v = rng.uniform(215, 250)
        base = np.array([v - rng.uniform(0, 20), v - rng.uniform(0, 8), v], np.float32)
        lum = 1.0 + 0.02 * smooth_noise(rng, h, w, diag / 4) + fine(0.012)
        img = base * lum[..., None]
        if rng.random() < 0.4:  # ruled / squared paper
            step = int(rng.integers(18, 40))
            line_col = np.array([200, 160, 140], np.float32)
            for y in range(int(rng.integers(0, step)), h, step):
                img[y] = img[y] * 0.7 + line_col * 0.3
            if rng.random() < 0.5:
                for x in range(int(rng.integers(0, step)), w, step):
                    img[:, x] = img[:, x] * 0.7 + line_col * 0.3
    elif kind == "tray":
        table = np.array([rng.uniform(200, 245)] * 3, np.float32) + rng.normal(0, 5, 3).astype(np.float32)
        floor = _jitter_color(rng, rng.choice([(190, 190, 185), (40, 100, 30), (120, 30, 30), (40, 40, 40),
                                               (60, 90, 150)]), 12)
        img = np.empty((h, w, 3), np.float32)
        img[:] = table
        mx, my = int(rng.uniform(0.02, 0.12) * w), int(rng.uniform(0.02, 0.12) * h)
        rim = max(4, int(rng.uniform(0.015, 0.04) * min(h, w)))
        rim_col = floor * 0.55
        cv2.rectangle(img, (mx, my), (w - mx, h - my), rim_col.tolist(), -1)
        inner = np.zeros((h, w), np.float32)
        cv2.rectangle(inner, (mx + rim, my + rim), (w - mx - rim, h - my - rim), 1.0, -1)
        wall = cv2.GaussianBlur(inner, (0, 0), rim * 1.5) * inner  # shadow of the wall on the floor
        lum = (0.75 + 0.25 * wall) * (1.0 + 0.04 * smooth_noise(rng, h, w, diag / 6) + fine(0.02))
        img = img * (1.0 - inner[..., None]) + (floor * lum[..., None]) * inner[..., None]
    elif kind in ("dark", "light"):
        v = rng.uniform(15, 60) if kind == "dark" else rng.uniform(170, 240)
        base = np.array([v, v, v], np.float32) + rng.normal(0, 8, 3).astype(np.float32)
        lum = 1.0 + 0.08 * smooth_noise(rng, h, w, diag / 3) + fine(0.02)
        img = base * lum[..., None]
    elif kind == "carpet":
        base = rng.uniform(50, 210, 3).astype(np.float32) if rng.random() < 0.5 else \
            np.array([rng.uniform(90, 190)] * 3, np.float32) + rng.normal(0, 10, 3).astype(np.float32)
        fibres = cv2.GaussianBlur(fine(1.0), (0, 0), 0.8) * 0.18 + cv2.GaussianBlur(fine(1.0), (0, 0), 2.5) * 0.25
        lum = 1.0 + fibres + 0.08 * smooth_noise(rng, h, w, diag / 8)
        img = base * lum[..., None]
    elif kind == "quilt":
        img = np.empty((h, w, 3), np.float32)
        step = int(rng.uniform(0.12, 0.3) * min(h, w)) + 8
        for y0 in range(0, h, step):
            for x0 in range(0, w, step):
                patch = rng.uniform(40, 235, 3).astype(np.float32)
                img[y0:y0 + step, x0:x0 + step] = patch
                if rng.random() < 0.5:  # a printed pattern: dots or stripes
                    ink = (patch * rng.uniform(0.4, 0.8)).tolist()
                    r = int(rng.integers(2, 6))
                    for yy in range(y0 + r, min(h, y0 + step), 3 * r + 2):
                        for xx in range(x0 + r, min(w, x0 + step), 3 * r + 2):
                            cv2.circle(img, (xx, yy), r, ink, -1, cv2.LINE_AA)
                cv2.rectangle(img, (x0, y0), (x0 + step, y0 + step), (patch * 0.6).tolist(), 2)
        img *= (1.0 + 0.05 * smooth_noise(rng, h, w, diag / 5) + cv2.GaussianBlur(fine(0.05), (3, 3), 0))[..., None]
    elif kind == "board":
        sea = np.array([rng.uniform(150, 200), rng.uniform(110, 150), rng.uniform(40, 80)], np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = sea
        tiles = [(40, 120, 40), (60, 170, 200), (50, 80, 150), (130, 130, 130), (80, 200, 220), (30, 90, 60)]
        tile_r = rng.uniform(0.07, 0.16) * min(h, w)
        dx, dy = tile_r * math.sqrt(3), tile_r * 1.5
        for j, cy in enumerate(np.arange(-tile_r, h + tile_r, dy)):
            for cx in np.arange(-tile_r + (dx / 2 if j % 2 else 0), w + tile_r, dx):
                hexagon = np.array([[cx + tile_r * math.cos(math.radians(60 * k + 30)),
                                     cy + tile_r * math.sin(math.radians(60 * k + 30))] for k in range(6)], np.int32)
                colr = _jitter_color(rng, tiles[int(rng.integers(len(tiles)))], 12)
                cv2.fillConvexPoly(img, hexagon, colr.tolist(), cv2.LINE_AA)
                cv2.polylines(img, [hexagon], True, (200, 220, 230), max(1, int(tile_r * 0.06)), cv2.LINE_AA)
                for _ in range(int(rng.integers(0, 4))):  # printed trees, hills, sheep
                    px, py = cx + rng.uniform(-0.5, 0.5) * tile_r, cy + rng.uniform(-0.5, 0.5) * tile_r
                    cv2.circle(img, (int(px), int(py)), max(1, int(tile_r * rng.uniform(0.05, 0.12))),
                               (colr * rng.uniform(0.5, 1.3)).tolist(), -1, cv2.LINE_AA)
        img *= (1.0 + 0.04 * smooth_noise(rng, h, w, diag / 5))[..., None]
    else:  # speckle
        base = rng.uniform(60, 220, 3).astype(np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = base
        img *= (1.0 + 0.04 * smooth_noise(rng, h, w, diag / 5))[..., None]
        n = int(h * w / rng.uniform(150, 600))
        pts = np.stack([rng.integers(0, w, n), rng.integers(0, h, n)], 1)
        vals = rng.uniform(0.5, 1.4, n)
        for (x, y), v in zip(pts, vals):
            cv2.circle(img, (int(x), int(y)), int(rng.integers(1, 3)), (base * v).tolist(), -1, cv2.LINE_AA)

    # Uneven lighting: a soft vignette with a random centre, present on every table.
    ys, xs = np.ogrid[0:h, 0:w]
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    r2 = ((xs - cx) ** 2 + (ys - cy) ** 2) / (diag * diag)
    vig = (1.0 - rng.uniform(0.1, 0.45) * r2).astype(np.float32)
    img = img * vig[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


@functools.lru_cache(maxsize=8)
def _cached_background(kind: str, width: int, height: int, seed: int) -> np.ndarray:
    bg = make_background(kind, width, height, seed)
    bg.setflags(write=False)
    return bg


def render_table(
    dice: Sequence[tuple[int, float, float, float]],
    background: str | np.ndarray = "felt",
    style: DieStyle | str | Sequence[DieStyle | str] = "ivory",
    motion_blur: float = 0.0,
    *,
    size: tuple[int, int] = (1280, 720),
    die_px: float | None = None,
    seed: int = 0,
    tilt: tuple[float, float] = (0.0, 0.12),
    shadow: float = 0.45,
    blur_angle_deg: float = 0.0,
    glare: float = 0.25,
) -> tuple[np.ndarray, np.ndarray]:
    """Composite dice on a table top: one camera frame of a "virtual table" with exact boxes.

    Args:
        dice: ``(value, x, y, angle_deg)`` per die — face value 1–6 (0 = blank), centre of the top
            face in pixels, in-plane rotation in degrees. Drawn in order (later dice on top).
        background: a :data:`BACKGROUNDS` name (generated from ``seed`` and cached) or a BGR uint8
            image (resized to ``size`` if needed; pass a cached array for speed).
        style: one :class:`DieStyle` / ``STYLES`` name for every die, or one per die.
        motion_blur: blur length in pixels applied to the dice only (rolling dice, still table);
            0 = none.
        size: ``(width, height)`` of the frame in pixels.
        die_px: side of a die's top face in pixels; default 7 % of the frame height (50 px at 720p,
            like a webcam 60–80 cm above the table).
        seed: seeds the table texture and the small per-die details (same seed → same frame).
        tilt: camera tilt as in :func:`render_die` (default: looking slightly from below).
        shadow: shadow darkness, 0–1.
        blur_angle_deg: direction of the motion blur.
        glare: strength of the specular highlight on each die's top face.

    Returns:
        ``(frame, boxes)``: ``(height, width, 3)`` uint8 BGR frame and ``(N, 4)`` float32 boxes
        ``x1, y1, x2, y2`` in pixels, one per entry of ``dice`` (same order), tight around the whole
        unblurred silhouette and clipped to the frame. A die entirely off-frame gets a zero-area box.

    Raises:
        ValueError: bad face value, unknown background/style, or a background of the wrong type.
    """
    width, height = size
    if isinstance(background, str):
        frame = _cached_background(background, width, height, seed).copy()
    else:
        bg = np.asarray(background)
        if bg.ndim != 3 or bg.shape[2] != 3 or bg.dtype != np.uint8:
            raise ValueError(f"background must be an (H, W, 3) uint8 BGR image, got {bg.shape} {bg.dtype}")
        if bg.shape[:2] != (height, width):
            bg = cv2.resize(bg, (width, height), interpolation=cv2.INTER_AREA)
        frame = bg.copy()
    styles = [style] * len(dice) if isinstance(style, (str, DieStyle)) else list(style)
    if len(styles) != len(dice):
        raise ValueError(f"got {len(styles)} styles for {len(dice)} dice")
    side = float(die_px) if die_px is not None else 0.07 * height
    boxes = np.zeros((len(dice), 4), np.float32)
    light_deg = 225.0
    ldir = np.array([math.cos(math.radians(light_deg)), math.sin(math.radians(light_deg))])
    for i, ((value, x, y, angle), st) in enumerate(zip(dice, styles)):
        rng = np.random.default_rng([seed, i])
        d = render_styled(int(value), st, float(angle), rng, size_px=side, tilt=tilt,
                          light_deg=light_deg, glare=glare)
        # Integer placement keeps the sprite sharp; the box follows the same rounded origin.
        x0, y0 = int(round(x - d.anchor[0])), int(round(y - d.anchor[1]))
        img, pad = d.image, 0
        if motion_blur >= 1.5:
            img = blur_sprite(img, motion_blur, blur_angle_deg)
            pad = (img.shape[0] - d.image.shape[0]) // 2
        off = -ldir * side * 0.12  # the shadow falls away from the light
        sb = side * 0.08
        # Composite in float only inside the window this die and its shadow can touch.
        reach = int(math.ceil(3 * max(sb, 0.5) + abs(off).max())) + 2
        sx, sy = x0 - pad, y0 - pad
        wx0, wy0 = max(sx - reach, 0), max(sy - reach, 0)
        wx1, wy1 = min(sx + img.shape[1] + reach, width), min(sy + img.shape[0] + reach, height)
        if wx0 < wx1 and wy0 < wy1:
            window = frame[wy0:wy1, wx0:wx1].astype(np.float32)
            paste(window, img, sx - wx0, sy - wy0, shadow=shadow, shadow_offset=(off[0], off[1]), shadow_blur=sb)
            frame[wy0:wy1, wx0:wx1] = cv2.convertScaleAbs(window)
        bx1, by1, bx2, by2 = d.box
        boxes[i] = np.clip([bx1 + x0, by1 + y0, bx2 + x0, by2 + y0], 0, [width, height, width, height])
    return frame, boxes
