"""One synthetic scene: dice and distractors placed on a table top and degraded like a camera frame
(:class:`SceneGenerator`), its labels (:meth:`Scene.detector_labels`) and classifier crops
(:func:`scene_crops`). The rules are in :mod:`kosti.datasets.synth`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from kosti.datasets.synth_config import SynthConfig, SynthError
from kosti.datasets.synth_real import RealBank, _dihedral, real_background
from kosti.datasets.synth_sprites import (
    _CLUTTER_KINDS,
    _DIE_SIZED,
    _WIDE_CLUTTER_KINDS,
    _clutter_sprite,
    _real_sprite,
    _render_sprite,
    _Sprite,
)
from kosti.sim.render import (
    BACKGROUNDS,
    STYLES,
    WIDE_BACKGROUNDS,
    DieStyle,
    blur_sprite,
    make_background,
    motion_kernel,
    paste,
    random_style,
    texture_body,
    wide_style,
)
from kosti.vision.crops import square_crop

# ---------------------------------------------------------------------------------------------------
# Scenes
# ---------------------------------------------------------------------------------------------------


@dataclass
class SceneDie:
    """One die placed in a scene (pixels of the final image).

    Attributes:
        value: face value 1–6.
        box: ``(x1, y1, x2, y2)`` tight box of the die's visible pixels (float, inside the image).
        visible: visible fraction of the die's silhouette, 0–1 (occlusion and frame edge).
        readable: whether the face value can be read (see module docstring).
        kind: ``render`` or ``real``.
        face: ``(4, 2)`` float64 corners of the top face (unrounded square) in image pixels for
            rendered dice; ``None`` for real crops.
    """

    value: int
    box: tuple[float, float, float, float]
    visible: float
    readable: bool
    kind: str
    face: np.ndarray | None = None


@dataclass
class Scene:
    """A generated image with its dice and distractor boxes.

    Attributes:
        image: ``(imgsz, imgsz, 3)`` uint8 BGR (after every degradation except the final JPEG save).
        dice: every die with any visible pixel, in drawing order.
        distractors: visible boxes of distractor objects (negatives for the classifier).
        jpeg_quality: quality the scene is saved with (its JPEG artefacts are part of the scene).
    """

    image: np.ndarray
    dice: list[SceneDie]
    distractors: list[tuple[float, float, float, float]]
    jpeg_quality: int

    def detector_labels(self, classes: str = "die", min_visible: float = 0.6) -> list[tuple[int, tuple]]:
        """``(class, box)`` pairs for the detector set (see module docstring for the rules)."""
        out = []
        for d in self.dice:
            if d.visible < min_visible:
                continue
            if classes == "die":
                out.append((0, d.box))
            elif d.readable:
                out.append((d.value - 1, d.box))
        return out




class SceneGenerator:
    """Makes scene ``i`` of a seeded series: ``SceneGenerator(cfg, bank, seed).scene(i)``.

    Args:
        cfg: :class:`SynthConfig` (checked here).
        bank: real crops/backgrounds, or ``None`` (then ``cfg.real_frac`` and ``cfg.real_bg_frac``
            must be 0).
        seed: series seed.

    Raises:
        SynthError: invalid settings, or real material requested without a bank.
    """

    #: Procedural table tops cached per series (each scene takes a random crop of one of them).
    N_TABLES = 48

    def __init__(self, cfg: SynthConfig, bank: RealBank | None, seed: int) -> None:
        cfg.check()
        if bank is None and (cfg.real_frac > 0 or cfg.real_bg_frac > 0):
            raise SynthError("real dice/backgrounds requested but no real photos were loaded")
        self.cfg, self.bank, self.seed = cfg, bank, int(seed)
        self._tables: dict[int, np.ndarray] = {}
        self._noise_field: np.ndarray | None = None

    # -- table top -----------------------------------------------------------------------------
    def warm_tables(self) -> None:
        """Generate every cached procedural table top now (otherwise each is made on first use)."""
        for j in range(self._n_tables()):
            self._big_table(j)

    def _n_tables(self) -> int:
        side = int(self.cfg.imgsz * 1.25)
        # At most ~120 MB of cached table tops (48 at 640 px, fewer for big images).
        return int(min(self.N_TABLES, max(8, 120e6 // (side * side * 3))))

    def _big_table(self, j: int) -> np.ndarray:
        big = self._tables.get(j)
        if big is None:
            side = int(self.cfg.imgsz * 1.25)
            kinds = self.cfg.backgrounds or (WIDE_BACKGROUNDS if self.cfg.wide else BACKGROUNDS)
            big = make_background(kinds[j % len(kinds)], side, side, np.random.default_rng([self.seed, 1_000_003, j]))
            self._tables[j] = big
        return big

    def _table(self, rng: np.random.Generator) -> np.ndarray:
        cfg = self.cfg
        if self.bank is not None and self.bank.backgrounds and rng.random() < cfg.real_bg_frac:
            path, boxes = self.bank.backgrounds[int(rng.integers(len(self.bank.backgrounds)))]
            return real_background(path, boxes, cfg.imgsz, rng)
        side = int(cfg.imgsz * 1.25)
        big = self._big_table(int(rng.integers(self._n_tables())))
        s = int(cfg.imgsz * rng.uniform(0.6, 1.0) * 1.25)
        x0, y0 = int(rng.integers(0, side - s + 1)), int(rng.integers(0, side - s + 1))
        crop = big[y0:y0 + s, x0:x0 + s]
        out = cv2.resize(crop, (cfg.imgsz, cfg.imgsz), interpolation=cv2.INTER_LINEAR)
        out = _dihedral(out, int(rng.integers(8))).astype(np.float32)
        out = out * rng.uniform(0.85, 1.15, 3).astype(np.float32)  # colour variation per use
        return np.clip(out, 0, 255).astype(np.uint8)

    def _style(self, rng: np.random.Generator) -> DieStyle:
        if self.cfg.styles:
            return STYLES[self.cfg.styles[int(rng.integers(len(self.cfg.styles)))]]
        if self.cfg.wide and rng.random() < 0.6:
            return wide_style(rng)
        return random_style(rng)

    # -- the scene -----------------------------------------------------------------------------
    def scene(self, index: int) -> Scene:
        """Build scene ``index`` (deterministic for this generator's seed and settings)."""
        cfg = self.cfg
        S = cfg.imgsz
        rng = np.random.default_rng([self.seed, int(index)])
        img = self._table(rng).astype(np.float32)
        light_deg = rng.uniform(0, 360)
        tilt_dir = rng.uniform(0, 360)
        oblique = cfg.oblique_frac > 0 and rng.random() < cfg.oblique_frac
        ldir = np.array([math.cos(math.radians(light_deg)), math.sin(math.radians(light_deg))])
        shadow_k = rng.uniform(0.2, 0.6)

        negative = rng.random() < cfg.neg_frac
        n_dice = 0 if negative else int(rng.choice(np.arange(1, cfg.max_dice + 1)))
        # Die size for the scene (log-uniform), capped so that n dice fit without piling up.
        cap = S * 0.75 / math.sqrt(max(n_dice, 1) * 1.6)
        hi = max(cfg.min_die, min(cfg.max_die, cap))
        base = math.exp(rng.uniform(math.log(cfg.min_die), math.log(hi)))
        per_scene_style = self._style(rng) if rng.random() < 0.4 else None
        use_real_scene = self.bank is not None and rng.random() < cfg.real_frac

        # Each die uses real crops or rendering per scene *mostly*, mixed sometimes.
        sprites: list[tuple[_Sprite, float, float, float]] = []  # sprite, x, y, rolling blur px
        centres: list[tuple[float, float, float]] = []
        for _ in range(n_dice):
            size = float(np.clip(base * rng.uniform(0.88, 1.12), cfg.min_die, cfg.max_die))
            real = use_real_scene if rng.random() < 0.85 else (self.bank is not None and rng.random() < cfg.real_frac)
            if real:
                assert self.bank is not None  # real dice are drawn only with a bank
                sp = _real_sprite(self.bank.pick(size, rng), size, rng)
            else:
                style = per_scene_style or self._style(rng)
                sp = _render_sprite(int(rng.integers(1, 7)), size, style, rng, light_deg, tilt_dir,
                                    cocked=rng.random() < 0.04, glare=cfg.degrade, oblique=oblique)
                if style.texture:
                    sp.bgra = texture_body(sp.bgra, style, rng)
            pos = self._place(rng, size, centres, S)
            if pos is None:
                continue
            centres.append((pos[0], pos[1], size))
            # A die still rolling: motion blur of 15–45 % of its size on this die only.
            roll = rng.uniform(0.15, 0.45) * size if cfg.degrade and rng.random() < 0.08 else 0.0
            sprites.append((sp, pos[0], pos[1], roll))

        # Distractors: alone in negatives, sometimes among dice; some drawn over the dice.
        among = 0.6 if cfg.wide else 0.3
        n_clutter = int(rng.integers(1, 5)) if negative else (int(rng.integers(1, 3)) if rng.random() < among else 0)
        clutter_kinds = _CLUTTER_KINDS + _WIDE_CLUTTER_KINDS if cfg.wide else _CLUTTER_KINDS
        under: list[tuple[_Sprite, float, float]] = []
        over: list[tuple[_Sprite, float, float]] = []
        for _ in range(n_clutter):
            kind = clutter_kinds[int(rng.integers(len(clutter_kinds)))]
            if kind in _DIE_SIZED:
                csize = float(np.clip(base * rng.uniform(0.8, 1.2), cfg.min_die, cfg.max_die))
            elif kind == "coin":
                csize = float(np.clip(base * rng.uniform(0.7, 1.4), 12, S * 0.3))
            else:
                csize = S * rng.uniform(0.25, 0.8)
            sp = _clutter_sprite(kind, csize, rng, light_deg)
            x, y = rng.uniform(0, S), rng.uniform(0, S)
            on_top = kind in ("hand", "pen", "card") and rng.random() < 0.5
            (over if on_top else under).append((sp, x, y))

        # Composite in z-order: distractors below, dice, distractors above. Track silhouettes.
        layers: list[tuple[_Sprite, np.ndarray, int, int]] = []  # sprite, frame mask, x0, y0
        for sp, x, y in under:
            layers.append(self._put(img, sp, x, y, ldir, shadow_k, rng, 0.0))
        die_layers = []
        for sp, x, y, mblur in sprites:
            die_layers.append(len(layers))
            layers.append(self._put(img, sp, x, y, ldir, shadow_k, rng, mblur))
        for sp, x, y in over:
            layers.append(self._put(img, sp, x, y, ldir, shadow_k, rng, 0.0))

        # Visible part of each layer = its mask minus everything drawn later.
        above = np.zeros((S, S), bool)
        visible_masks: list[np.ndarray] = [None] * len(layers)  # type: ignore[list-item]
        for i in range(len(layers) - 1, -1, -1):
            m = layers[i][1]
            visible_masks[i] = m & ~above
            above |= m

        # Global perspective warp (a camera not quite square to the table).
        H = None
        if cfg.degrade and rng.random() < 0.35:
            H = _random_homography(rng, S)
            img = np.asarray(cv2.warpPerspective(img, H, (S, S), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT),
                             np.float32)
            visible_masks = _warp_masks(visible_masks, H, S)

        # Whole-image blur: camera shake or defocus.
        blur_px = 0.0
        r = rng.random() if cfg.degrade else 1.0
        if r < 0.12:
            length = rng.uniform(3, 3 + min(0.25 * base, 22.0))
            img = np.asarray(cv2.filter2D(img, -1, motion_kernel(length, rng.uniform(0, 180)),
                                          borderType=cv2.BORDER_REFLECT), np.float32)
            blur_px = length
        elif r < 0.27:
            sigma = rng.uniform(0.6, 0.8 + 0.06 * base)
            img = np.asarray(cv2.GaussianBlur(img, (0, 0), sigma), np.float32)
            blur_px = 2.5 * sigma

        if cfg.degrade:
            img = self._photometric(img, rng)
        if cfg.wide and rng.random() < 0.2:
            img = _recolour(img, rng)
        quality = int(rng.integers(35, 96)) if cfg.degrade else 95

        dice: list[SceneDie] = []
        for li, (sp, x, y, mblur) in zip(die_layers, sprites):
            sil_area = float(layers[li][0].sil.sum())
            vm = visible_masks[li]
            x0, y0 = layers[li][2], layers[li][3]
            area_scale = 1.0
            if H is not None:
                area_scale = _area_scale(H, x, y)
            vis_area = float(np.count_nonzero(vm))
            if vis_area < 4:
                continue
            visible = float(min(1.0, vis_area / max(sil_area * area_scale, 1.0)))
            bx, by, bw, bh = cv2.boundingRect(vm.astype(np.uint8))
            box = (float(bx), float(by), float(bx + bw), float(by + bh))
            # Pips of a d6 are ~18 % of its side across: blur beyond a quarter of the side merges them.
            eff_blur = math.hypot(blur_px, mblur)
            readable = (not sp.cocked) and eff_blur < 0.25 * sp.size
            face = None
            if sp.pips is not None and sp.face is not None:  # rendered dice carry both
                pts = sp.pips + np.array([x0, y0], np.float64)
                face = sp.face + np.array([x0, y0], np.float64)
                if H is not None:
                    pts = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), H).reshape(-1, 2)
                    face = cv2.perspectiveTransform(face.reshape(-1, 1, 2), H).reshape(-1, 2)
                for px, py in pts:
                    ix, iy = int(round(px)), int(round(py))
                    if not (0 <= ix < S and 0 <= iy < S and vm[iy, ix]):
                        readable = False
                        break
                readable = readable and visible >= 0.7
            else:
                readable = readable and visible >= 0.92
            if readable:  # glare, exposure or a dark table may leave no contrast between pips and body
                g = img[by:by + bh, bx:bx + bw].mean(axis=2)[vm[by:by + bh, bx:bx + bw]]
                lo, hi = np.percentile(g, [1, 99])
                readable = bool(hi - lo >= 20.0)
            dice.append(SceneDie(sp.value, box, visible, readable, sp.kind, face))
        distractors = []
        for li, (sp, *_rest) in enumerate(layers):
            if sp.kind == "clutter" and np.count_nonzero(visible_masks[li]) > 16:
                bx, by, bw, bh = cv2.boundingRect(visible_masks[li].astype(np.uint8))
                distractors.append((float(bx), float(by), float(bx + bw), float(by + bh)))
        return Scene(np.clip(img + 0.5, 0, 255).astype(np.uint8), dice, distractors, quality)

    def _place(self, rng: np.random.Generator, size: float, centres: list, S: int) -> tuple[float, float] | None:
        """Centre for a new die: apart, touching a previous die, overlapping one, or cut by the edge."""
        mode = rng.random()
        if centres and mode < 0.2:  # touching a previous die
            px, py, ps = centres[int(rng.integers(len(centres)))]
            a = rng.uniform(0, 2 * np.pi)
            d = (ps + size) / 2 * rng.uniform(1.1, 1.35)
            return (px + d * math.cos(a), py + d * math.sin(a)) if self._inside(px + d * math.cos(a),
                                                                                  py + d * math.sin(a), size, S) else None
        if centres and mode < 0.27:  # lying on / in front of a previous die: hides part of it
            px, py, ps = centres[int(rng.integers(len(centres)))]
            a = rng.uniform(0, 2 * np.pi)
            d = (ps + size) / 2 * rng.uniform(0.6, 0.9)
            return (px + d * math.cos(a), py + d * math.sin(a))
        if mode > 0.94:  # cut by the frame edge
            side = int(rng.integers(4))
            t = rng.uniform(size, S - size)
            e = rng.uniform(-0.3, 0.3) * size
            return [(e, t), (S - e, t), (t, e), (t, S - e)][side]
        for _ in range(30):
            x, y = rng.uniform(0.6 * size, S - 0.6 * size), rng.uniform(0.6 * size, S - 0.6 * size)
            if all(math.hypot(x - cx, y - cy) >= 0.75 * (size + cs) for cx, cy, cs in centres):
                return x, y
        return None

    @staticmethod
    def _inside(x: float, y: float, size: float, S: int) -> bool:
        return 0.5 * size <= x <= S - 0.5 * size and 0.5 * size <= y <= S - 0.5 * size

    @staticmethod
    def _put(img: np.ndarray, sp: _Sprite, x: float, y: float, ldir: np.ndarray, shadow_k: float,
             rng: np.random.Generator, mblur: float) -> tuple[_Sprite, np.ndarray, int, int]:
        S = img.shape[0]
        x0, y0 = int(round(x - sp.anchor[0])), int(round(y - sp.anchor[1]))
        bgra, pad = sp.bgra, 0
        if mblur >= 1.5:  # a die still rolling
            bgra = blur_sprite(bgra, mblur, rng.uniform(0, 180))
            pad = (bgra.shape[0] - sp.bgra.shape[0]) // 2
        off = -ldir * sp.size * rng.uniform(0.05, 0.15)
        paste(img, bgra, x0 - pad, y0 - pad, shadow=shadow_k, shadow_offset=(off[0], off[1]),
              shadow_blur=max(1.0, sp.size * 0.07))
        m = np.zeros((S, S), bool)
        h, w = sp.sil.shape
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + w, S), min(y0 + h, S)
        if xa < xb and ya < yb:
            m[ya:yb, xa:xb] = sp.sil[ya - y0:yb - y0, xa - x0:xb - x0]
        return sp, m, x0, y0

    def _noise(self, rng: np.random.Generator, S: int) -> np.ndarray:
        """``(S, S, 3)`` unit Gaussian sensor noise: a random window (and flip) of one big field made
        once per series — per-pixel noise at a fraction of the cost of drawing it for every scene."""
        if self._noise_field is None or self._noise_field.shape[0] < S + 64:
            n = S + 256
            self._noise_field = np.random.default_rng([self.seed, 2_000_003]).standard_normal(
                (n, n, 3), dtype=np.float32)
        field_ = self._noise_field
        y0, x0 = (int(v) for v in rng.integers(0, field_.shape[0] - S + 1, 2))
        win = field_[y0:y0 + S, x0:x0 + S]
        return win[::-1] if rng.random() < 0.5 else win

    def _photometric(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        S = img.shape[0]
        if rng.random() < 0.12:  # glare: a bright soft patch (lamp reflected by a glossy table)
            q = 8  # drawn and blurred at 1/8 scale: it is smooth anyway
            g = np.zeros((S // q, S // q), np.float32)
            cv2.ellipse(g, (int(rng.uniform(0, S / q)), int(rng.uniform(0, S / q))),
                        (int(rng.uniform(0.05, 0.25) * S / q), int(rng.uniform(0.03, 0.15) * S / q)),
                        rng.uniform(0, 180), 0, 360, 1.0, -1)
            g = cv2.GaussianBlur(g, (0, 0), S * 0.04 / q) * rng.uniform(0.3, 0.8)
            g = cv2.resize(g, (S, S), interpolation=cv2.INTER_LINEAR)
            img = img + (255.0 - img) * g[..., None]
        if rng.random() < 0.7:
            img = img * rng.uniform(0.6, 1.3) + rng.uniform(-30, 30)
        if rng.random() < 0.3:
            img = img * rng.uniform(0.85, 1.15, 3).astype(np.float32)
        img = np.clip(img, 0, 255)
        if rng.random() < 0.3:
            img = 255.0 * (img / 255.0) ** rng.uniform(0.7, 1.4)
        if rng.random() < 0.25:  # grayscale camera / most rune55 photos
            gray = cv2.cvtColor(img.astype(np.float32), cv2.COLOR_BGR2GRAY)
            img = np.repeat(gray[..., None], 3, axis=2)
        if rng.random() < 0.5:
            img = img + self._noise(rng, S) * np.float32(rng.uniform(2, 10))
        return img.astype(np.float32)


def _recolour(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A colour change a die survives: swap the colour channels, or rotate every hue by the same angle
    (a red die becomes a blue one; pips and faces are unchanged). ``(S, S, 3)`` float32 BGR in and out."""
    if rng.random() < 0.5:
        return np.ascontiguousarray(img[..., rng.permutation(3)])
    hsv = cv2.cvtColor(np.clip(img, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
    hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + int(rng.integers(20, 160))) % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)


def _random_homography(rng: np.random.Generator, S: int) -> np.ndarray:
    """Homography output←scene that samples a random quadrilateral inside the scene (no borders)."""
    j = 0.12 * S
    src = np.array([[0, 0], [S, 0], [S, S], [0, S]], np.float32) + np.array(
        [[rng.uniform(0, j), rng.uniform(0, j)], [-rng.uniform(0, j), rng.uniform(0, j)],
         [-rng.uniform(0, j), -rng.uniform(0, j)], [rng.uniform(0, j), -rng.uniform(0, j)]], np.float32)
    dst = np.array([[0, 0], [S, 0], [S, S], [0, S]], np.float32)
    homography: np.ndarray = cv2.getPerspectiveTransform(src, dst)
    return homography


def _warp_masks(masks: list[np.ndarray], H: np.ndarray, S: int) -> list[np.ndarray]:
    """Warp boolean masks with nearest-neighbour sampling, eight at a time packed as bits of a uint8."""
    out: list[np.ndarray] = []
    for k in range(0, len(masks), 8):
        group = masks[k:k + 8]
        packed = np.zeros((S, S), np.uint8)
        for bit, m in enumerate(group):
            packed |= m.astype(np.uint8) << bit
        warped = np.asarray(cv2.warpPerspective(packed, H, (S, S), flags=cv2.INTER_NEAREST), np.uint8)
        out.extend(((warped >> bit) & 1).astype(bool) for bit in range(len(group)))
    return out


def _area_scale(H: np.ndarray, x: float, y: float) -> float:
    """Local area magnification of homography ``H`` at ``(x, y)`` (Jacobian determinant)."""
    p = np.array([[[x, y]], [[x + 1, y]], [[x, y + 1]]], np.float64)
    q = cv2.perspectiveTransform(p, H).reshape(3, 2)
    (ax, ay), (bx, by) = q[1] - q[0], q[2] - q[0]
    return abs(float(ax * by - ay * bx))


# ---------------------------------------------------------------------------------------------------
# Classifier crops
# ---------------------------------------------------------------------------------------------------


def _jitter_box(box: Sequence[float], rng: np.random.Generator, frac: float = 0.1) -> tuple[float, ...]:
    x1, y1, x2, y2 = box
    w, h = max(x2 - x1, 1.0), max(y2 - y1, 1.0)
    j = rng.uniform(-frac, frac, 4)
    return (x1 + j[0] * w, y1 + j[1] * h, x2 + j[2] * w, y2 + j[3] * h)


def scene_crops(scene: Scene, rng: np.random.Generator, min_visible: float = 0.6) -> list[tuple[str, np.ndarray]]:
    """Classifier crops of one scene: ``(class folder, (64, 64, 3) uint8 crop)`` pairs.

    Readable dice → their face value; dice that are hidden, blurred, cocked or cut by the frame
    (but show at least a quarter of themselves) → ``x``; plus ``x`` crops of distractors and, in
    a quarter of the scenes, one bare patch of table away from every die. Boxes are jittered ±10 %
    per side (a detector's box error) before :func:`kosti.vision.crops.square_crop`.
    """
    img = scene.image
    S = img.shape[0]
    out: list[tuple[str, np.ndarray]] = []
    for d in scene.dice:
        if d.visible < 0.25:
            continue
        if d.readable and d.visible >= min_visible:
            label = str(d.value)
        else:
            label = "x"
        out.append((label, square_crop(img, _jitter_box(d.box, rng))))
    for box in scene.distractors:
        if rng.random() < 0.25:
            x1, y1, x2, y2 = box
            side = rng.uniform(16, max(17.0, min(200.0, max(x2 - x1, y2 - y1))))
            cx, cy = rng.uniform(x1, x2), rng.uniform(y1, y2)
            out.append(("x", square_crop(img, (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2))))
    if rng.random() < 0.25:
        sizes = [max(b.box[2] - b.box[0], b.box[3] - b.box[1]) for b in scene.dice] or [rng.uniform(16, 120)]
        side = float(np.median(sizes)) * rng.uniform(0.8, 1.25)
        for _ in range(10):
            cx, cy = rng.uniform(side / 2, S - side / 2), rng.uniform(side / 2, S - side / 2)
            box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
            if all(_overlap(box, d.box) < 0.05 for d in scene.dice):
                out.append(("x", square_crop(img, box)))
                break
    return out


def _overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection area over the smaller box's area."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return iw * ih / max(small, 1e-6)
