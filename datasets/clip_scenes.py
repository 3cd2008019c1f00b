"""The drawing kit of the seeded test clips (:mod:`kosti.datasets.clips`): dice poses, hands and shadows drawn over the
virtual table (:func:`kosti.sim.render.render_table`), a moving camera, and a clip as a function of time. The
scenarios themselves, and writing them, are in :mod:`kosti.datasets.clips`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import cv2
import numpy as np

from kosti.sim import render

#: Frame rate and size of the virtual-table clips.
FPS = 30.0
SIZE = (640, 360)

#: Skin tone of the rendered hands (BGR), inside the YCrCb skin range of :mod:`kosti.vision.hands`.
SKIN = (118, 148, 205)


class Pose(NamedTuple):
    """Where the script puts a simulated die: face up (1–6), centre in table pixels, in-plane angle in
    degrees. It is the ``(value, x, y, angle_deg)`` entry :func:`kosti.sim.render.render_table` draws
    (ground truth of a clip, not an observed die: observed dice are
    :class:`~kosti.vision.detections.Detections`)."""

    face: int
    x: float
    y: float
    angle: float


@dataclass
class Hand:
    """A hand seen from above: palm centre (table px), direction the fingers point (degrees, 0 = +x),
    size (palm width in px); ``open`` spreads the fingers (a palm holding dice)."""

    x: float
    y: float
    angle: float
    size: float
    open: bool = False


class Shadow(NamedTuple):
    """A soft shadow on the table (an arm's, a person's): an ellipse centred at ``(x, y)`` table px with radii
    ``(rx, ry)``, darkening by ``strength`` (0–1) at its core, its edge blurred over ``soft`` px."""

    x: float
    y: float
    rx: float
    ry: float
    strength: float = 0.35
    soft: float = 20.0


def draw_shadow(img: np.ndarray, shadow: Shadow) -> None:
    """Darken ``img`` (``(H, W, 3)`` uint8, in place) under a soft :class:`Shadow`."""
    h, w = img.shape[:2]
    mask: np.ndarray = np.zeros((h, w), np.float32)
    cv2.ellipse(mask, (int(shadow.x), int(shadow.y)), (max(1, int(shadow.rx)), max(1, int(shadow.ry))), 0.0, 0, 360,
                1.0, -1, cv2.LINE_AA)
    if shadow.soft > 0:
        mask = cv2.GaussianBlur(mask, (0, 0), shadow.soft / 2)
    img[:] = np.clip(img.astype(np.float32) * (1.0 - shadow.strength * mask)[..., None], 0, 255).astype(np.uint8)


@dataclass
class Scene:
    """What the camera sees at one instant (before the camera's own motion)."""

    dice: list[Pose]
    blur: float = 0.0
    hand: Hand | None = None
    on_palm: list[Pose] = field(default_factory=list)
    photo: np.ndarray | None = None  # a real photo as the whole table
    shadows: list[Shadow] = field(default_factory=list)


@dataclass
class Clip:
    """A scripted clip: ``scene(t)`` for each frame, the camera model, the expected throws."""

    name: str
    duration_s: float
    scene: Callable[[float], Scene]
    expected: list[dict[str, Any]]
    dice: int | None = 5
    shake: float = 0.0  # px per frame, upper end (0 = fixed camera)
    drift: list[tuple[float, float, float]] = field(default_factory=list)  # (t0, t1, px) camera drifts
    size: tuple[int, int] = SIZE
    background: str = "felt"
    style: str = "white_black"
    description: str = ""


# ---------------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------------
def draw_hand(img: np.ndarray, hand: Hand, seed: int = 0, shade: np.ndarray | None = None) -> None:
    """Draw a skin-toned hand with its forearm reaching the frame edge onto ``img`` (in place).

    ``shade``: ``(H, W)`` float32 unit-variance field for the skin's shading (default: made from ``seed``)."""
    h, w = img.shape[:2]
    s = hand.size
    a = math.radians(hand.angle)
    ux, uy = math.cos(a), math.sin(a)  # towards the fingers
    vx, vy = -uy, ux
    mask = np.zeros((h, w), np.uint8)
    c = (int(hand.x), int(hand.y))
    cv2.ellipse(mask, c, (int(0.55 * s), int(0.5 * s)), hand.angle, 0, 360, 255, -1, cv2.LINE_AA)
    # Forearm: from the wrist backwards far past the frame edge.
    wx, wy = hand.x - ux * 0.45 * s, hand.y - uy * 0.45 * s
    ex, ey = hand.x - ux * 3 * max(w, h), hand.y - uy * 3 * max(w, h)
    cv2.line(mask, (int(wx), int(wy)), (int(ex), int(ey)), 255, int(0.8 * s), cv2.LINE_AA)
    spread = 0.16 if hand.open else 0.05
    for k, off in enumerate((-0.33, -0.11, 0.11, 0.33)):
        fa = a + spread * (k - 1.5)
        bx, by = hand.x + ux * 0.4 * s + vx * off * s, hand.y + uy * 0.4 * s + vy * off * s
        ln = (0.55, 0.65, 0.62, 0.5)[k] * s
        cv2.line(mask, (int(bx), int(by)), (int(bx + math.cos(fa) * ln), int(by + math.sin(fa) * ln)), 255,
                 max(2, int(0.17 * s)), cv2.LINE_AA)
    tb = (hand.x + vx * 0.45 * s, hand.y + vy * 0.45 * s)
    ta = a + (1.0 if hand.open else 0.6)
    cv2.line(mask, (int(tb[0]), int(tb[1])), (int(tb[0] + math.cos(ta) * 0.5 * s), int(tb[1] + math.sin(ta) * 0.5 * s)),
             255, max(2, int(0.2 * s)), cv2.LINE_AA)
    m = (mask.astype(np.float32) / 255.0)[..., None]
    if shade is None:
        shade = render.smooth_noise(np.random.default_rng(seed), h, w, max(8.0, s / 3))
    shade = shade[..., None] * 8.0
    # A soft shadow first, then the skin.
    sh = cv2.GaussianBlur(np.roll(np.roll(mask, 6, 0), 6, 1), (0, 0), 5).astype(np.float32)[..., None] / 255.0
    out = img.astype(np.float32) * (1.0 - 0.35 * sh)
    skin = np.array(SKIN, np.float32) + shade
    out = out * (1.0 - m) + skin * m
    img[:] = np.clip(out, 0, 255).astype(np.uint8)


class Renderer:
    """Renders :class:`Scene` s of one clip on a fixed table top, caching still scenes."""

    def __init__(self, clip: Clip, seed: int) -> None:
        self.clip = clip
        w, h = clip.size
        self.bg = render.make_background(clip.background, w, h, seed)
        self.seed = seed
        self.die_px = 0.07 * h
        self.shade = render.smooth_noise(np.random.default_rng(seed), h, w, 25.0)
        self._cache: tuple[Any, np.ndarray] | None = None

    def __call__(self, sc: Scene) -> np.ndarray:
        hand = None if sc.hand is None else tuple(vars(sc.hand).values())
        key = (tuple(sc.dice), sc.blur, hand, tuple(sc.on_palm), id(sc.photo), tuple(sc.shadows))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        w, h = self.clip.size
        if sc.photo is not None:
            img = sc.photo.copy()
        else:
            img, _ = render.render_table(sc.dice, self.bg, self.clip.style, sc.blur, size=(w, h),
                                         die_px=self.die_px, seed=self.seed, blur_angle_deg=30.0)
        for shadow in sc.shadows:
            draw_shadow(img, shadow)
        if sc.hand is not None:
            draw_hand(img, sc.hand, self.seed, self.shade)
            if sc.on_palm:
                img, _ = render.render_table(sc.on_palm, img, self.clip.style, 0.0, size=(w, h),
                                             die_px=self.die_px * 1.08, seed=self.seed + 1)
        self._cache = (key, img)
        return img


class Camera:
    """The camera's own motion and exposure: a bounded random walk of shift and rotation, flicker."""

    def __init__(self, clip: Clip, rng: np.random.Generator) -> None:
        self.clip, self.rng = clip, rng
        self.pos = np.zeros(2)
        self.angle = 0.0
        self.heading = rng.uniform(0, 2 * math.pi)

    def step(self, t: float) -> tuple[np.ndarray, float]:
        """Advance one frame; returns the ``(2, 3)`` warp for this frame and the exposure gain."""
        c = self.clip
        gain = 1.0
        if c.shake > 0:
            mag = self.rng.uniform(0.5, c.shake)
            self.heading += self.rng.normal(0, 1.2)
            step = mag * np.array([math.cos(self.heading), math.sin(self.heading)])
            if np.linalg.norm(self.pos + step) > 6.0:  # stay within ±6 px of the mount: turn back
                step = -step
                self.heading += math.pi
            self.pos = self.pos + step
            self.angle = float(np.clip(self.angle + self.rng.normal(0, 0.08), -0.6, 0.6))
            gain = 1.0 + 0.03 * math.sin(2 * math.pi * 7.3 * t + self.rng.uniform(-0.3, 0.3))
        off = np.zeros(2)
        for t0, t1, px in c.drift:
            off[0] += px * min(1.0, max(0.0, (t - t0) / max(1e-6, t1 - t0)))
        w, h = c.size
        m = np.asarray(cv2.getRotationMatrix2D((w / 2, h / 2), self.angle, 1.0), np.float64)
        m[:, 2] += self.pos + off
        return m, gain


def frames(clip: Clip, seed: int) -> Iterator[np.ndarray]:
    """The clip's frames, ``(H, W, 3)`` uint8 BGR, in order (pure function of ``clip`` and ``seed``)."""
    rng = np.random.default_rng([seed, 101])
    ren = Renderer(clip, seed)
    cam = Camera(clip, np.random.default_rng([seed, 202]))
    w, h = clip.size
    # Sensor noise (σ = 2 gray levels): a bank of 7 frames, cycled (cheap, and no two neighbours alike).
    bank = [np.round(rng.normal(0, 2.0, (h, w, 3))).astype(np.int16) for _ in range(7)]
    for k in range(int(round(clip.duration_s * FPS))):
        t = k / FPS
        img = ren(clip.scene(t))
        m, gain = cam.step(t)
        if clip.shake > 0 or clip.drift:
            img = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101)
        if gain != 1.0:
            img = cv2.convertScaleAbs(img, alpha=gain)
        yield np.clip(img.astype(np.int16) + bank[k % len(bank)], 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------------
# Motion helpers
# ---------------------------------------------------------------------------------------------------
def place(rng: np.random.Generator, n: int, size: tuple[int, int] = SIZE, faces: list[int] | None = None,
          avoid: list[Pose] | None = None) -> list[Pose]:
    """``n`` non-overlapping resting dice inside the tray (8 % margin), random faces unless given."""
    w, h = size
    side = 0.07 * h
    out: list[Pose] = []
    others = list(avoid or [])
    for i in range(n):
        for _ in range(500):
            x, y = rng.uniform(0.12 * w, 0.88 * w), rng.uniform(0.18 * h, 0.82 * h)
            if all(math.hypot(x - d.x, y - d.y) > 2.2 * side for d in out + others):
                break
        face = int(faces[i]) if faces is not None else int(rng.integers(1, 7))
        out.append(Pose(face, float(x), float(y), float(rng.uniform(0, 90))))
    return out


def tumble(final: list[Pose], t0: float, dur: float, rng: np.random.Generator, size: tuple[int, int] = SIZE,
           stop: list[float] | None = None) -> Callable[[float], tuple[list[Pose], float]]:
    """Dice flying in from the right edge and tumbling to ``final``: ``f(t) -> (dice, motion blur px)``.

    Each die stops at ``t0 + stop[i]`` (default ``dur`` for all); after that it lies still."""
    w, h = size
    starts = [(w * rng.uniform(1.02, 1.12), h * rng.uniform(0.25, 0.75), rng.uniform(0, 90)) for _ in final]
    stops = stop or [dur] * len(final)
    faces_seed = int(rng.integers(0, 2**31))

    def at(t: float) -> tuple[list[Pose], float]:
        out, blur = [], 0.0
        for i, (d, (sx, sy, _sa)) in enumerate(zip(final, starts)):
            p = (t - t0) / stops[i]
            if p >= 1.0:
                out.append(d)
                continue
            p = max(0.0, p)
            e = 1.0 - (1.0 - p) ** 3
            bounce = abs(math.sin(3 * math.pi * p)) * (1 - p) * 0.08 * h
            r = np.random.default_rng([faces_seed, i, int(t * FPS)])
            face = int(r.integers(1, 7)) if p < 0.85 else d.face
            spin = (1 - e) * 540.0 * (1 if i % 2 else -1)
            out.append(Pose(face, sx + (d.x - sx) * e, sy + (d.y - sy) * e - bounce, d.angle + spin))
            blur = max(blur, 3.0 * (1 - p) ** 2 * abs(sx - d.x) / max(1.0, FPS * stops[i]))
        return out, min(40.0, blur)

    return at


def expect(dice: list[Pose], rest_s: float, status: str = "ok", **extra: Any) -> dict[str, Any]:
    """One expected throw: faces ascending, true rest time, status."""
    return {"faces": sorted(d.face for d in dice), "rest_s": round(rest_s, 3), "status": status, **extra}
