"""Sprites for synthetic scenes: rendered and real dice and distractor objects (hands, cups, coins, pens,
cards, pipless cubes; the wide generator's tokens, buttons, dominoes, meeples, keys, cables, pencils),
each a BGRA image with its silhouette, ready to paste (:class:`kosti.datasets.synth_scene.SceneGenerator`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from kosti.datasets.synth_real import RealCrop
from kosti.sim.render import (
    DieStyle,
    random_style,
    render_styled,
    soft_blur,
)

#: Distractor kinds of every scene (``cube``: a pipless die-like cube).
_CLUTTER_KINDS = ("hand", "cup", "coin", "pen", "card", "cube")
#: Hard negatives of the wide generator (``--wide``): things a detector took for dice on real tables
#: (issue 11) — board-game number tokens (a printed number with dots under it), sewing buttons (holes
#: like pips), dominoes (pips on a tile), meeples, keyboard keys, cables with a plug, pencils with a
#: metal ferrule.
_WIDE_CLUTTER_KINDS = ("token", "button", "domino", "meeple", "keys", "cable", "pencil")
#: Distractors drawn near a die's size (the others are drawn 25–80 % of the image).
_DIE_SIZED = ("cube", "token", "button", "domino", "meeple")


# ---------------------------------------------------------------------------------------------------
# Sprites: dice and distractors ready to paste
# ---------------------------------------------------------------------------------------------------


@dataclass
class _Sprite:
    bgra: np.ndarray  # (h, w, 4) uint8
    sil: np.ndarray  # (h, w) bool silhouette
    anchor: tuple[float, float]  # centre in sprite pixels
    value: int  # 1–6 die, 0 pipless cube, -1 other distractor
    size: float  # die side in pixels (distractors: rough size)
    pips: np.ndarray | None = None  # (k, 2) pip centres in sprite pixels; None = unknown (real crop)
    cocked: bool = False
    kind: str = "render"  # render | real | clutter
    face: np.ndarray | None = None  # (4, 2) top-face corners in sprite pixels (rendered dice)


def _warp_sprite(bgra: np.ndarray, sil: np.ndarray, box: Sequence[float], scale: float, angle: float,
                 flip: bool) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """Scale/rotate (and mirror) a BGRA sprite about its box centre onto a canvas that fits it."""
    if flip:
        w = bgra.shape[1]
        bgra, sil = bgra[:, ::-1], sil[:, ::-1]
        box = (w - box[2], box[1], w - box[0], box[3])
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    h, w = bgra.shape[:2]
    m = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64) @ m.T
    lo, hi = np.floor(corners.min(0)), np.ceil(corners.max(0))
    m[:, 2] -= lo
    size = (int(hi[0] - lo[0]) + 1, int(hi[1] - lo[1]) + 1)
    out = cv2.warpAffine(np.ascontiguousarray(bgra), m, size, flags=cv2.INTER_LINEAR, borderValue=0)
    s = cv2.warpAffine(np.ascontiguousarray(sil).astype(np.uint8) * 255, m, size, flags=cv2.INTER_LINEAR)
    anchor = m @ np.array([cx, cy, 1.0])
    return out, s >= 128, (float(anchor[0]), float(anchor[1]))


def _real_sprite(crop: RealCrop, size: float, rng: np.random.Generator) -> _Sprite:
    bx = crop.box
    side = max(bx[2] - bx[0], bx[3] - bx[1])
    # Quarter turns and mirrors keep the axis-aligned label box tight; ±6° more looks natural.
    angle = 90.0 * int(rng.integers(4)) + rng.uniform(-6, 6)
    bgra, sil, anchor = _warp_sprite(crop.bgra, crop.sil, bx, size / side, angle, bool(rng.random() < 0.5))
    if rng.random() < 0.5:  # brightness/contrast of this die only
        a, b = rng.uniform(0.75, 1.25), rng.uniform(-25, 25)
        bgra[..., :3] = np.clip(bgra[..., :3].astype(np.float32) * a + b, 0, 255).astype(np.uint8)
    return _Sprite(bgra, sil, anchor, crop.value, size, None, False, "real")


def _render_sprite(value: int, size: float, style: DieStyle, rng: np.random.Generator, light_deg: float,
                   tilt_dir: float, cocked: bool, glare: bool = True, oblique: bool = False) -> _Sprite:
    if cocked:
        tau = rng.uniform(0.5, 0.75)
    elif oblique:  # a camera looking from the side: a clear lean, the same direction for the whole scene
        tau = rng.uniform(0.2, 0.45)
    else:
        tau = abs(rng.normal(0, 0.12)) if rng.random() < 0.7 else 0.0
    tau = min(tau, 0.8)
    td = math.radians(tilt_dir + rng.normal(0, 15))
    d = render_styled(value, style, rng.uniform(0, 360), rng, size_px=size,
                      tilt=(tau * math.cos(td), tau * math.sin(td)), light_deg=light_deg,
                      shading=rng.uniform(0.1, 0.5), glare=rng.uniform(0.2, 0.8) if glare and rng.random() < 0.35 else 0.0,
                      bevel=rng.uniform(0.04, 0.14))
    body_alpha = 1.0 - 0.85 * style.translucency
    sil = d.image[..., 3] >= 0.5 * body_alpha * 255
    return _Sprite(d.image, sil, d.anchor, value, size, d.pips.astype(np.float64), cocked, "render",
                   d.face.astype(np.float64))


def _sprite_canvas(size: float) -> tuple[int, int, int, np.ndarray, np.ndarray, float]:
    """An empty distractor canvas: ``(s, pad, n, col (n, n, 3) float32, alpha (n, n) float32, centre)`` for a
    sprite about ``size`` px across (``s`` = its side rounded up, ``n = s + 2·pad``)."""
    s = int(math.ceil(size))
    pad = 4
    n = s + 2 * pad
    return s, pad, n, np.zeros((n, n, 3), np.float32), np.zeros((n, n), np.float32), n / 2.0


def _clutter_sprite(kind: str, size: float, rng: np.random.Generator, light_deg: float) -> _Sprite:
    """A distractor: ``hand``, ``cup``, ``coin``, ``pen``, ``card`` or ``cube`` (pipless die); with the wide
    generator also the hard negatives of :data:`_WIDE_CLUTTER_KINDS` (:func:`_wide_clutter`)."""
    if kind in _WIDE_CLUTTER_KINDS:
        return _wide_clutter(kind, size, rng, light_deg)
    if kind == "cube":
        st = random_style(rng)
        sp = _render_sprite(0, size, st, rng, light_deg, rng.uniform(0, 360), False)
        sp.kind = "clutter"
        return sp
    s, pad, n, col, alpha, c = _sprite_canvas(size)
    if kind == "hand":
        skin = np.array([rng.uniform(90, 170), rng.uniform(120, 190), rng.uniform(160, 235)], np.float32)
        palm_r = (s * rng.uniform(0.2, 0.26), s * rng.uniform(0.16, 0.22))
        ang = rng.uniform(0, 360)
        cv2.ellipse(alpha, (int(c), int(c)), (int(palm_r[0]), int(palm_r[1])), ang, 0, 360, 1.0, -1, cv2.LINE_AA)
        a = math.radians(ang)
        for k in range(int(rng.integers(3, 6))):
            fa = a + math.radians(-50 + k * 25 + rng.normal(0, 6))
            length = s * rng.uniform(0.22, 0.32)
            p0 = (c + math.cos(fa) * palm_r[0] * 0.6, c + math.sin(fa) * palm_r[0] * 0.6)
            p1 = (p0[0] + math.cos(fa) * length, p0[1] + math.sin(fa) * length)
            cv2.line(alpha, (int(p0[0]), int(p0[1])), (int(p1[0]), int(p1[1])), 1.0,
                     max(2, int(s * rng.uniform(0.07, 0.09))), cv2.LINE_AA)
        col[:] = skin
        shade = soft_blur(alpha, s * 0.05)
        col *= (0.75 + 0.25 * shade)[..., None]
        alpha = cv2.GaussianBlur(alpha, (0, 0), max(1.0, s * 0.01))
    elif kind == "cup":
        body = rng.uniform(30, 240, 3).astype(np.float32)
        ro = s * 0.48
        ri = ro * rng.uniform(0.82, 0.92)
        cv2.circle(alpha, (int(c), int(c)), int(ro), 1.0, -1, cv2.LINE_AA)
        col[:] = body
        inner = np.zeros((n, n), np.float32)
        cv2.circle(inner, (int(c), int(c)), int(ri), 1.0, -1, cv2.LINE_AA)
        inside = body * rng.uniform(0.25, 0.6)
        col = col * (1 - inner[..., None]) + inside * inner[..., None]
        cv2.circle(col, (int(c), int(c)), int((ro + ri) / 2), (body * 1.2).clip(0, 255).tolist(),
                   max(1, int((ro - ri) * 0.3)), cv2.LINE_AA)
    elif kind == "coin":
        metal = np.array([[60, 140, 190], [170, 170, 170], [50, 110, 170]][int(rng.integers(3))], np.float32)
        r = s * 0.48
        cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
        la = math.radians(light_deg)
        g = ((xs - c) * math.cos(la) + (ys - c) * math.sin(la)) / max(r, 1)
        col[:] = metal
        col *= (1.0 + 0.3 * g)[..., None]
        cv2.circle(col, (int(c), int(c)), int(r * 0.85), (metal * 0.7).tolist(), max(1, int(r * 0.05)), cv2.LINE_AA)
        col += rng.normal(0, 10, (n, n, 1)).astype(np.float32) * cv2.GaussianBlur(alpha, (0, 0), 1)[..., None]
    elif kind == "pen":
        body = rng.uniform(20, 240, 3).astype(np.float32)
        a = rng.uniform(0, np.pi)
        half = s * 0.47
        p0 = (int(c - math.cos(a) * half), int(c - math.sin(a) * half))
        p1 = (int(c + math.cos(a) * half), int(c + math.sin(a) * half))
        cv2.line(alpha, p0, p1, 1.0, max(3, int(s * rng.uniform(0.04, 0.07))), cv2.LINE_AA)
        col[:] = body
    else:  # card: a sheet of paper / score card with lines of "writing"
        paper = np.array([rng.uniform(200, 250)] * 3, np.float32)
        w2, h2 = s * rng.uniform(0.25, 0.48), s * rng.uniform(0.18, 0.35)
        rect = ((c, c), (2 * w2, 2 * h2), rng.uniform(0, 180))
        cv2.fillConvexPoly(alpha, np.round(cv2.boxPoints(rect)).astype(np.int32), 1.0, cv2.LINE_AA)
        col[:] = paper
        ink = np.array([rng.uniform(60, 160), rng.uniform(20, 80), rng.uniform(10, 60)], np.float32)
        for y in np.arange(c - h2 * 0.7, c + h2 * 0.7, max(4.0, s * 0.04)):
            xs0 = c - w2 * 0.8
            xs1 = xs0 + rng.uniform(0.2, 1.6) * w2
            cv2.line(col, (int(xs0), int(y)), (int(xs1), int(y)), ink.tolist(), 1, cv2.LINE_AA)
        m = cv2.getRotationMatrix2D((c, c), rect[2], 1.0)
        col = cv2.warpAffine(col, m, (n, n), borderMode=cv2.BORDER_REPLICATE)
    bgra = np.dstack([np.clip(col, 0, 255), np.clip(alpha * 255, 0, 255)]).astype(np.uint8)
    return _Sprite(bgra, alpha >= 0.5, (c, c), -1, size, None, False, "clutter")


def _put_text(col: np.ndarray, text: str, org: tuple[int, int], scale: float, colour: list[float],
              thickness: int) -> None:
    """``cv2.putText`` on a float32 ``(h, w, 3)`` canvas (OpenCV draws text on 8-bit images only)."""
    u8 = np.clip(col, 0, 255).astype(np.uint8)
    cv2.putText(u8, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thickness, cv2.LINE_AA)
    col[:] = u8


def _wide_clutter(kind: str, size: float, rng: np.random.Generator, light_deg: float) -> _Sprite:
    """One hard negative of :data:`_WIDE_CLUTTER_KINDS`, as a sprite about ``size`` pixels across."""
    s, pad, n, col, alpha, c = _sprite_canvas(size)
    ink = [float(rng.uniform(0, 50))] * 3 if rng.random() < 0.7 else [40.0, 40.0, 190.0]
    if kind == "token":  # a round board-game number token: a number with probability dots under it
        r = s * 0.48
        cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        col[:] = np.array([rng.uniform(150, 215), rng.uniform(190, 235), rng.uniform(215, 250)], np.float32)
        text = str(int(rng.choice([2, 3, 4, 5, 6, 8, 9, 10, 11, 12])))
        scale = r / 22.0
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, max(1, int(scale * 2)))
        _put_text(col, text, (int(c - tw / 2), int(c + th / 3)), scale, ink, max(1, int(scale * 2)))
        k = int(rng.integers(1, 6))
        for i in range(k):
            cv2.circle(col, (int(c + (i - (k - 1) / 2) * r * 0.16), int(c + r * 0.55)), max(1, int(r * 0.05)), ink,
                       -1, cv2.LINE_AA)
    elif kind == "button":  # a sewing button: a disc with 2 or 4 holes, a rim
        r = s * 0.45
        cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        body = rng.uniform(20, 240, 3).astype(np.float32)
        col[:] = body
        cv2.circle(col, (int(c), int(c)), int(r * 0.8), (body * 0.8).tolist(), max(1, int(r * 0.06)), cv2.LINE_AA)
        holes = 2 if rng.random() < 0.4 else 4
        ang = rng.uniform(0, np.pi)
        for i in range(holes):
            a = ang + 2 * np.pi * i / holes
            cv2.circle(col, (int(c + math.cos(a) * r * 0.25), int(c + math.sin(a) * r * 0.25)),
                       max(1, int(r * 0.1)), (body * 0.3).tolist(), -1, cv2.LINE_AA)
    elif kind == "domino":  # a tile with two pip fields
        light = rng.random() < 0.6
        body = np.array([rng.uniform(200, 245)] * 3, np.float32) if light else np.array([rng.uniform(10, 50)] * 3, np.float32)
        pip = [20.0] * 3 if light else [235.0] * 3
        half = s * 0.24
        tile = np.zeros((n, n), np.float32)
        cv2.rectangle(tile, (int(c - half), int(c - 2 * half)), (int(c + half), int(c + 2 * half)), 1.0, -1)
        colt = np.zeros((n, n, 3), np.float32)
        colt[:] = body
        cv2.line(colt, (int(c - half * 0.8), int(c)), (int(c + half * 0.8), int(c)), pip, max(1, int(s * 0.015)))
        offs = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
                4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
                6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}
        for centre_y in (c - half, c + half):
            for ox, oy in offs[int(rng.integers(1, 7))]:
                cv2.circle(colt, (int(c + ox * half * 0.5), int(centre_y + oy * half * 0.5)),
                           max(1, int(half * 0.14)), pip, -1, cv2.LINE_AA)
        m = cv2.getRotationMatrix2D((c, c), rng.uniform(0, 180), 1.0)
        alpha = cv2.warpAffine(tile, m, (n, n))
        col = cv2.warpAffine(colt, m, (n, n), borderMode=cv2.BORDER_REPLICATE)
    elif kind == "meeple":  # a board-game figure seen from above or the side
        pts = np.array([[0, -0.45], [0.12, -0.3], [0.42, -0.12], [0.4, 0.0], [0.15, 0.02], [0.35, 0.45],
                        [0.08, 0.45], [0, 0.25], [-0.08, 0.45], [-0.35, 0.45], [-0.15, 0.02], [-0.4, 0.0],
                        [-0.42, -0.12], [-0.12, -0.3]]) * s
        a = rng.uniform(0, 2 * np.pi)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        poly = np.round(pts @ rot.T + c).astype(np.int32)
        cv2.fillPoly(alpha, [poly], 1.0, cv2.LINE_AA)
        col[:] = rng.uniform(20, 240, 3).astype(np.float32)
    elif kind == "keys":  # a piece of keyboard: a grid of keycaps with letters
        caps = np.array([rng.uniform(20, 60)] * 3, np.float32) if rng.random() < 0.6 else np.array([rng.uniform(200, 240)] * 3, np.float32)
        letters = [240.0] * 3 if caps[0] < 128 else [30.0] * 3
        key_w = s / rng.uniform(3, 6)
        col[:] = caps * 0.6
        alpha[pad:n - pad, pad:n - pad] = 1.0
        for y in np.arange(pad, n - pad - key_w * 0.5, key_w):
            for x in np.arange(pad + (key_w * 0.3 if int(y) % 2 else 0), n - pad - key_w * 0.5, key_w):
                cv2.rectangle(col, (int(x + key_w * 0.08), int(y + key_w * 0.08)), (int(x + key_w * 0.92), int(y + key_w * 0.92)),
                              caps.tolist(), -1)
                ch = chr(int(rng.integers(65, 91)))
                _put_text(col, ch, (int(x + key_w * 0.25), int(y + key_w * 0.7)), key_w / 40, letters, max(1, int(key_w / 25)))
    elif kind == "cable":  # a curved cable ending in a plug
        body = np.array([rng.uniform(10, 240)] * 3, np.float32)
        p0 = rng.uniform(pad, n - pad, 2)
        p1, p2 = rng.uniform(pad, n - pad, 2), rng.uniform(pad, n - pad, 2)
        t = np.linspace(0, 1, 40)[:, None]
        curve = ((1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t ** 2 * p2).astype(np.int32)
        width = max(2, int(s * rng.uniform(0.02, 0.04)))
        cv2.polylines(alpha, [curve], False, 1.0, width, cv2.LINE_AA)
        cv2.polylines(col, [curve], False, body.tolist(), width, cv2.LINE_AA)
        end = curve[-1]
        plug = max(4, int(s * rng.uniform(0.06, 0.12)))
        metal = [170.0, 170.0, 175.0]
        cv2.rectangle(alpha, (int(end[0] - plug / 2), int(end[1] - plug / 3)), (int(end[0] + plug / 2), int(end[1] + plug / 3)), 1.0, -1)
        cv2.rectangle(col, (int(end[0] - plug / 2), int(end[1] - plug / 3)), (int(end[0] + plug / 2), int(end[1] + plug / 3)), metal, -1)
    else:  # pencil: a hexagonal body, a metal ferrule and an eraser at one end, a sharpened tip at the other
        body = rng.uniform(20, 240, 3).astype(np.float32)
        a = rng.uniform(0, np.pi)
        half = s * 0.46
        d = np.array([math.cos(a), math.sin(a)])
        width = max(3, int(s * rng.uniform(0.035, 0.06)))
        segs = [(-1.0, 0.75, body.tolist()), (0.75, 0.85, [175.0, 180.0, 185.0]), (0.85, 0.95, [150.0, 140.0, 220.0])]
        for t0, t1, colr in segs:
            q0, q1 = c + d * half * t0, c + d * half * t1
            cv2.line(alpha, tuple(int(v) for v in q0), tuple(int(v) for v in q1), 1.0, width, cv2.LINE_AA)
            cv2.line(col, tuple(int(v) for v in q0), tuple(int(v) for v in q1), colr, width, cv2.LINE_AA)
    la = math.radians(light_deg)
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    col *= (1.0 + 0.12 * ((xs - c) * math.cos(la) + (ys - c) * math.sin(la)) / max(c, 1))[..., None]
    bgra = np.dstack([np.clip(col, 0, 255), np.clip(alpha * 255, 0, 255)]).astype(np.uint8)
    return _Sprite(bgra, alpha >= 0.5, (c, c), -1, size, None, False, "clutter")
