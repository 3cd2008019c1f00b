"""Seeded cut-and-paste scenes of d6 dice for training the detector and the face classifier.

Each scene is a square image (default 640 px) with 0–6 dice on a table top, built from

* **real dice** cut from the *training* splits of the shared photos (``byler-d6/train`` and
  ``rune55-dedup/train``; the test/val splits and ``skovy-webcam`` are never read) with a soft
  super-elliptic alpha around each labelled box;
* **procedural dice** from :func:`kosti.sim.render.render_die` (named or random styles, slight
  camera tilt, glare, translucency, the occasional *cocked* die leaning on something);
* **table tops**: procedural felt, cloth, wood, paper, trays, dark and light surfaces
  (:func:`kosti.sim.render.make_background`), plus random crops of real training photos with their
  dice painted out (inpainting at ¼ scale);
* **distractors**: hand-like blobs, cup rims, coins, pens, cards, pipless dice-like cubes —
  sometimes covering dice, and alone in empty "negative" scenes;

with drop shadows, touching and partly hidden dice, dice cut by the frame edge, a random perspective
warp, motion blur (rolling dice or camera shake), defocus, colour/brightness shifts, grayscale
(most rune55 photos are grayscale), sensor noise, glare and JPEG artefacts.

Labels follow what a camera can show: a die counts as *visible* when at least
``SynthConfig.min_visible`` (60 %) of its silhouette shows in the frame; less visible dice get no
detector label. Its face is *readable* when nothing hides a pip (procedural dice: every pip centre is
visible; real crops, whose pips are not known: ≥ 92 % visible), it is not cocked, blur is below a
quarter of its size, and its pixels still span ≥ 20 grey levels (glare and exposure can wash pips out). Outputs (see :func:`generate`):

* ``--classes die``: every visible die, class 0;
* ``--classes faces``: every visible *readable* die, class ``value - 1`` (visible but unreadable dice
  get no box, since no face class is right for them);
* ``--crops``: classifier crops made with :func:`kosti.vision.crops.square_crop` around the die's
  visible box jittered by ±10 % per side (the error of a detector's box); class ``1``–``6`` for
  readable dice, ``x`` for hidden/blurred/cocked/edge dice, distractors and bare table patches.

Every scene is a pure function of ``(seed, index, settings, source photos)``: scene ``i`` draws from
``numpy.random.default_rng([seed, i])`` only, so any worker count gives byte-identical files.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import cv2
import numpy as np

from kosti.vision.crops import square_crop
from kosti.datasets.prepare import read_labels
from kosti.vision.evaluate import DatasetError
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
    render_styled,
    soft_blur,
    texture_body,
    wide_style,
)

#: Default location of the shared photos: ``<repo>/../shared/datasets`` (valid in a source checkout).
DEFAULT_REAL_ROOT = Path(__file__).resolve().parents[2] / "shared" / "datasets"
#: The only (dataset, split) pairs whose photos may feed synthetic data. skovy-webcam is evaluation-only.
REAL_SOURCES: tuple[tuple[str, str], ...] = (("byler-d6", "train"), ("rune55-dedup", "train"))
#: Classifier class folders: faces 1–6 and ``x`` (unreadable / not a die).
CROP_CLASSES: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "x")
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")

ATTRIBUTION = """\
# Attribution

Synthetic images in this folder contain material derived from these photo collections:

* byler-d6 — nell-byler/dice_detection, BSD 3-Clause License.
  Copyright (c) 2019, Nell Byler. All rights reserved.
  Redistribution and use in source and binary forms, with or without modification, are permitted
  provided that the following conditions are met: (1) Redistributions of source code must retain the
  above copyright notice, this list of conditions and the following disclaimer. (2) Redistributions
  in binary form must reproduce the above copyright notice, this list of conditions and the
  following disclaimer in the documentation and/or other materials provided with the distribution.
  (3) Neither the name of the copyright holder nor the names of its contributors may be used to
  endorse or promote products derived from this software without specific prior written permission.
  THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
  IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
  FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
  CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
  DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
  DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
  IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF
  THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
* rune55 (Roboflow Universe, rune-zkmvl), CC BY 4.0 — https://universe.roboflow.com/rune-zkmvl/rune55,
  https://creativecommons.org/licenses/by/4.0/ . Changes: dice cut out, scaled, rotated and pasted
  onto other backgrounds; backgrounds cropped with dice painted out; recoloured, blurred, noised.
"""


class SynthError(ValueError):
    """Bad settings or missing inputs for the generator (CLI exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class SynthConfig:
    """Settings of the scene generator (all sizes in pixels of the square output image).

    Attributes:
        imgsz: side of each scene image.
        classes: ``"die"`` (one class) or ``"faces"`` (class k = face k+1) for detector labels.
        styles: restrict procedural dice to these :data:`kosti.sim.render.STYLES` names; empty =
            named styles and random colours.
        real_frac: probability that a die is a real crop (0 = procedural dice only; needs photos
            otherwise).
        real_bg_frac: probability that the table top is a crop of a real training photo.
        min_die, max_die: die size range (side of the top face), drawn log-uniformly per scene.
        max_dice: most dice in one scene.
        neg_frac: share of scenes without dice (negatives: table top and distractors only).
        min_visible: least visible fraction of a die's silhouette for a detector label.
        val_frac: share of scenes that go to the ``val`` split.
        backgrounds: restrict procedural table tops to these
            :data:`kosti.sim.render.BACKGROUNDS` names; empty = all.
        degrade: apply the camera degradations (perspective warp, blur, rolling dice, glare,
            colour/exposure shifts, grayscale, noise, JPEG quality 35–95). ``False`` gives clean
            scenes (JPEG quality 95) for inspection and tests.
        oblique_frac: share of scenes seen by a camera looking at the table from the side (a webcam on
            a shelf, a phone held at an angle): every rendered die of the scene leans the same way by
            ``|tilt|`` 0.2–0.45 of its side, so two side faces show (:func:`kosti.sim.render.render_die`).
            Other scenes keep the near-top-down view (``|tilt|`` ≈ 0.1). 0 (default) draws nothing extra
            from the scene's random stream, so earlier seeds give the same scenes.
        wide: the wide generator (issue 11): dice styles from the whole hue circle, light pips on dark
            bodies, coloured pips, translucent, marbled and wooden dice (:func:`kosti.sim.render.wide_style`,
            60 % of rendered dice), the table tops of :data:`kosti.sim.render.WIDE_BACKGROUNDS`, the
            hard negatives of :data:`_WIDE_CLUTTER_KINDS` beside the usual distractors, distractors
            among dice in 60 % of scenes (30 % otherwise), and colour changes a die survives (channel
            swaps and hue rotation of the whole scene, 20 %). ``False`` (default) draws nothing extra, so
            earlier seeds give the same scenes.
    """

    imgsz: int = 640
    classes: str = "die"
    styles: tuple[str, ...] = ()
    real_frac: float = 0.5
    real_bg_frac: float = 0.2
    min_die: float = 16.0
    max_die: float = 200.0
    max_dice: int = 6
    neg_frac: float = 0.08
    min_visible: float = 0.6
    val_frac: float = 0.1
    backgrounds: tuple[str, ...] = ()
    degrade: bool = True
    oblique_frac: float = 0.0
    wide: bool = False

    def check(self) -> None:
        """Raise :class:`SynthError` for out-of-range settings."""
        if self.classes not in ("die", "faces"):
            raise SynthError(f"classes must be 'die' or 'faces', got {self.classes!r}")
        if not 64 <= self.imgsz <= 4096:
            raise SynthError(f"imgsz must be 64-4096, got {self.imgsz}")
        allowed = WIDE_BACKGROUNDS if self.wide else BACKGROUNDS
        bad_bg = [b for b in self.backgrounds if b not in allowed]
        if bad_bg:
            raise SynthError(f"unknown background(s) {', '.join(bad_bg)}; choose from {', '.join(allowed)}")
        bad = [s for s in self.styles if s not in STYLES]
        if bad:
            raise SynthError(f"unknown style(s) {', '.join(bad)}; choose from {', '.join(STYLES)}")
        for name in ("real_frac", "real_bg_frac", "neg_frac", "val_frac", "min_visible", "oblique_frac"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise SynthError(f"{name} must be within 0-1, got {v}")
        if not 8 <= self.min_die <= self.max_die:
            raise SynthError(f"need 8 <= min_die <= max_die, got {self.min_die}, {self.max_die}")
        if not 1 <= self.max_dice <= 30:
            raise SynthError(f"max_dice must be 1-30, got {self.max_dice}")


# ---------------------------------------------------------------------------------------------------
# Real photos: die crops and backgrounds from the training splits
# ---------------------------------------------------------------------------------------------------


@dataclass
class RealCrop:
    """A die cut from a training photo: ``bgra`` (h, w, 4) uint8 with soft alpha, ``sil`` (h, w) bool
    silhouette (alpha ≥ ½), ``box`` the labelled box in crop pixels, ``value`` 1–6, ``source`` file."""

    bgra: np.ndarray
    sil: np.ndarray
    box: tuple[float, float, float, float]
    value: int
    source: str


@dataclass
class RealBank:
    """Die crops and background photos of :data:`REAL_SOURCES` (training splits only).

    Attributes:
        crops: all usable dice (box ≥ 12 px, not touching the image border), in sorted file order.
        backgrounds: ``(image path, (N, 4) float32 xyxy boxes of its dice)`` per photo.
    """

    crops: list[RealCrop] = field(default_factory=list)
    backgrounds: list[tuple[Path, np.ndarray]] = field(default_factory=list)
    _sides: np.ndarray | None = field(default=None, repr=False)
    _order: np.ndarray | None = field(default=None, repr=False)

    def pick(self, size: float, rng: np.random.Generator, max_upscale: float = 1.6) -> RealCrop:
        """A random crop that needs at most ``max_upscale`` enlargement to show a die of ``size`` px
        (upscaled photos lose their pips); one of the 20 largest dice if none is big enough."""
        if self._sides is None:
            self._sides = np.array([max(c.box[2] - c.box[0], c.box[3] - c.box[1]) for c in self.crops])
            self._order = np.argsort(self._sides, kind="stable")
        sides = self._sides[self._order]
        lo = int(np.searchsorted(sides, size / max_upscale))
        lo = min(lo, max(0, len(sides) - 20))
        return self.crops[int(self._order[int(rng.integers(lo, len(sides)))])]

    @classmethod
    def load(cls, root: Path | str = DEFAULT_REAL_ROOT, limit: int | None = None) -> "RealBank":
        """Read the training photos under ``root`` and cut every labelled die.

        Args:
            root: folder holding ``byler-d6`` and ``rune55-dedup``.
            limit: read at most this many photos per dataset (evenly spaced; for quick tests).

        Raises:
            SynthError: a source folder is missing or holds no labelled photos, or a label file is
                malformed (the message names the file and line).
        """
        root = Path(root)
        bank = cls()
        for name, split in REAL_SOURCES:
            img_dir = root / name / "images" / split
            lab_dir = root / name / "labels" / split
            if not img_dir.is_dir() or not lab_dir.is_dir():
                raise SynthError(f"real dice photos not found: {img_dir} (use --real-frac 0 to go without)")
            files = sorted(p for p in img_dir.iterdir() if p.suffix.lower() in _IMAGE_SUFFIXES)
            if limit is not None and len(files) > limit:
                files = [files[int(i)] for i in np.linspace(0, len(files) - 1, limit)]
            for path in files:
                img = cv2.imread(str(path), cv2.IMREAD_COLOR)
                if img is None:
                    continue
                try:  # the evaluator's parser: a malformed label stops the run, naming file and line
                    boxes, values = read_labels(path, img.shape[1], img.shape[0])  # labels/<split>/<stem>.txt
                except DatasetError as exc:
                    raise SynthError(f"bad label in a real training photo: {exc}") from None
                bank.backgrounds.append((path, boxes))
                for box, value in zip(boxes, values):
                    crop = _cut_die(img, box, int(value), path.name)
                    if crop is not None:
                        bank.crops.append(crop)
        if not bank.crops:
            raise SynthError(f"no labelled dice found under {root}")
        return bank


def _superellipse_mask(w: int, h: int, box: Sequence[float], power: float, feather: float) -> np.ndarray:
    """Float32 (h, w) mask of ``|x|^p + |y|^p <= 1`` inscribed in ``box``, Gaussian-feathered."""
    x1, y1, x2, y2 = box
    cx, cy, rx, ry = (x1 + x2) / 2, (y1 + y2) / 2, max((x2 - x1) / 2, 1), max((y2 - y1) / 2, 1)
    # Separable terms: powers on one row and one column, summed by broadcasting.
    tx = np.abs((np.arange(w, dtype=np.float32) + 0.5 - cx) / rx) ** power
    ty = np.abs((np.arange(h, dtype=np.float32) + 0.5 - cy) / ry) ** power
    d = ty[:, None] + tx[None, :]
    m = (d <= 1.0).astype(np.float32)
    if feather > 0.3:
        m = cv2.GaussianBlur(m, (0, 0), feather)
    return m


#: Largest die side kept in the real-crop bank (bigger dice are stored downscaled), pixels.
_MAX_CROP_SIDE = 160.0


def _cut_die(img: np.ndarray, box: np.ndarray, value: int, source: str) -> RealCrop | None:
    H, W = img.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1)
    if side < 12 or x1 < 2 or y1 < 2 or x2 > W - 2 or y2 > H - 2:
        return None
    pad = 0.2 * side
    cx1, cy1 = int(max(0, math.floor(x1 - pad))), int(max(0, math.floor(y1 - pad)))
    cx2, cy2 = int(min(W, math.ceil(x2 + pad))), int(min(H, math.ceil(y2 + pad)))
    patch = img[cy1:cy2, cx1:cx2]
    lb = (x1 - cx1, y1 - cy1, x2 - cx1, y2 - cy1)
    if side > _MAX_CROP_SIDE:  # keep the bank small: scenes never need more than 1.6x of this
        k = _MAX_CROP_SIDE / side
        patch = cv2.resize(patch, (max(1, round(patch.shape[1] * k)), max(1, round(patch.shape[0] * k))),
                           interpolation=cv2.INTER_AREA)
        lb = tuple(v * k for v in lb)
        side = _MAX_CROP_SIDE
    h, w = patch.shape[:2]
    # Boxes are axis-aligned around dice at any angle: a super-ellipse (power 3.5) between an ellipse
    # and the box keeps most of the die and little of its neighbours.
    shape_mask = _superellipse_mask(w, h, lb, 3.5, feather=0.025 * side)
    alpha = _refine_alpha(patch, shape_mask, lb)
    bgra = np.dstack([patch, np.clip(alpha * 255 + 0.5, 0, 255).astype(np.uint8)])
    # The silhouette (boxes, occlusion) keeps the super-ellipse, which matches the labelled box.
    return RealCrop(bgra, shape_mask >= 0.5, lb, value, source)


def _refine_alpha(patch: np.ndarray, shape_mask: np.ndarray, box: Sequence[float]) -> np.ndarray:
    """Drop the photo's table from the corners of the super-ellipse when that table is plain.

    The table colour is the median of the margin outside the labelled box; pixels within ~18 grey
    levels of it fade out, pixels 40+ levels away stay, and so does the die's photographed shadow
    (darker, same hue as the table). The inner 70 % of the die always stays opaque
    (a white die on a white table keeps its body). Busy margins (std > 22) leave the mask unchanged.
    """
    h, w = patch.shape[:2]
    x1, y1, x2, y2 = box
    outside = np.ones((h, w), bool)
    outside[max(0, int(y1)):int(math.ceil(y2)), max(0, int(x1)):int(math.ceil(x2))] = False
    ring = patch[outside].astype(np.float32)
    if len(ring) < 20 or float(ring.std(axis=0).mean()) > 22.0:
        return shape_mask
    bg = np.median(ring, axis=0)
    px = patch.astype(np.float32)
    dist = np.linalg.norm(px - bg, axis=2)
    colour = np.clip((dist - 18.0) / 22.0, 0.0, 1.0)
    # The die's own shadow in the photo (darker table of the same hue) is table too: the scene adds
    # its own shadow, and a grey photo shadow on another table reads as a halo.
    lum, lum_bg = px.mean(axis=2), float(bg.mean())
    chroma = np.linalg.norm(px / np.maximum(lum, 1.0)[..., None] - bg / max(lum_bg, 1.0), axis=2)
    shadow = (lum < lum_bg - 5.0) & (lum > 0.4 * lum_bg) & (chroma < 0.08)
    colour[shadow] = 0.0
    colour = cv2.morphologyEx(colour, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    cx, cy, hw, hh = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * 0.35, (y2 - y1) * 0.35
    core = _superellipse_mask(w, h, (cx - hw, cy - hh, cx + hw, cy + hh), 3.5, feather=0.0)
    side = max(x2 - x1, y2 - y1)
    soft = cv2.GaussianBlur(np.maximum(colour, core), (0, 0), max(0.5, 0.015 * side))
    return shape_mask * soft


def real_background(path: Path, boxes: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A random ``(size, size, 3)`` crop of a training photo with its labelled dice painted out.

    The dice (boxes grown by 30 %) are inpainted (Telea) at quarter scale — cheap, and blurry enough
    that no readable pips remain. Raises :class:`SynthError` if the photo cannot be read.
    """
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise SynthError(f"cannot read {path}")
    H, W = img.shape[:2]
    if len(boxes):
        q = 4
        small = cv2.resize(img, (W // q, H // q), interpolation=cv2.INTER_AREA)
        mask = np.zeros(small.shape[:2], np.uint8)
        for x1, y1, x2, y2 in boxes:
            gx, gy = 0.15 * (x2 - x1), 0.15 * (y2 - y1)
            cv2.rectangle(mask, (int((x1 - gx) / q), int((y1 - gy) / q)), (int(math.ceil((x2 + gx) / q)),
                          int(math.ceil((y2 + gy) / q))), 255, -1)
        filled = cv2.inpaint(small, mask, 3, cv2.INPAINT_TELEA)
        big = cv2.resize(filled, (W, H), interpolation=cv2.INTER_LINEAR)
        m = cv2.resize(mask, (W, H), interpolation=cv2.INTER_LINEAR)
        m = cv2.GaussianBlur(m, (0, 0), 3).astype(np.float32)[..., None] / 255.0
        img = (img * (1 - m) + big * m).astype(np.uint8)
    frac = rng.uniform(0.45, 1.0)
    cs = int(min(H, W) * frac)
    x0, y0 = int(rng.integers(0, W - cs + 1)), int(rng.integers(0, H - cs + 1))
    out = cv2.resize(img[y0:y0 + cs, x0:x0 + cs], (size, size), interpolation=cv2.INTER_LINEAR)
    return _dihedral(out, int(rng.integers(8)))


def _dihedral(img: np.ndarray, k: int) -> np.ndarray:
    """One of the 8 flips/quarter-turns of a square image."""
    out = np.rot90(img, k % 4)
    if k >= 4:
        out = out[:, ::-1]
    return np.ascontiguousarray(out)


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
        skin = np.float32([rng.uniform(90, 170), rng.uniform(120, 190), rng.uniform(160, 235)])
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
        metal = np.float32([[60, 140, 190], [170, 170, 170], [50, 110, 170]][int(rng.integers(3))])
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
        paper = np.float32([rng.uniform(200, 250)] * 3)
        w2, h2 = s * rng.uniform(0.25, 0.48), s * rng.uniform(0.18, 0.35)
        rect = ((c, c), (2 * w2, 2 * h2), rng.uniform(0, 180))
        cv2.fillConvexPoly(alpha, np.round(cv2.boxPoints(rect)).astype(np.int32), 1.0, cv2.LINE_AA)
        col[:] = paper
        ink = np.float32([rng.uniform(60, 160), rng.uniform(20, 80), rng.uniform(10, 60)])
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
        col[:] = np.float32([rng.uniform(150, 215), rng.uniform(190, 235), rng.uniform(215, 250)])
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
        body = np.float32([rng.uniform(200, 245)] * 3) if light else np.float32([rng.uniform(10, 50)] * 3)
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
        caps = np.float32([rng.uniform(20, 60)] * 3) if rng.random() < 0.6 else np.float32([rng.uniform(200, 240)] * 3)
        letters = [240.0] * 3 if caps[0] < 128 else [30.0] * 3
        k = s / rng.uniform(3, 6)
        col[:] = caps * 0.6
        alpha[pad:n - pad, pad:n - pad] = 1.0
        for y in np.arange(pad, n - pad - k * 0.5, k):
            for x in np.arange(pad + (k * 0.3 if int(y) % 2 else 0), n - pad - k * 0.5, k):
                cv2.rectangle(col, (int(x + k * 0.08), int(y + k * 0.08)), (int(x + k * 0.92), int(y + k * 0.92)),
                              caps.tolist(), -1)
                ch = chr(int(rng.integers(65, 91)))
                _put_text(col, ch, (int(x + k * 0.25), int(y + k * 0.7)), k / 40, letters, max(1, int(k / 25)))
    elif kind == "cable":  # a curved cable ending in a plug
        body = np.float32([rng.uniform(10, 240)] * 3)
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


_CLUTTER_KINDS = ("hand", "cup", "coin", "pen", "card", "cube")
#: Hard negatives of the wide generator (``--wide``): things a detector took for dice on real tables
#: (issue 11) — board-game number tokens (a printed number with dots under it), sewing buttons (holes
#: like pips), dominoes (pips on a tile), meeples, keyboard keys, cables with a plug, pencils with a
#: metal ferrule.
_WIDE_CLUTTER_KINDS = ("token", "button", "domino", "meeple", "keys", "cable", "pencil")
#: Distractors drawn near a die's size (the others are drawn 25–80 % of the image).
_DIE_SIZED = ("cube", "token", "button", "domino", "meeple")


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
            img = cv2.warpPerspective(img, H, (S, S), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
            visible_masks = _warp_masks(visible_masks, H, S)

        # Whole-image blur: camera shake or defocus.
        blur_px = 0.0
        r = rng.random() if cfg.degrade else 1.0
        if r < 0.12:
            length = rng.uniform(3, 3 + min(0.25 * base, 22.0))
            img = cv2.filter2D(img, -1, motion_kernel(length, rng.uniform(0, 180)), borderType=cv2.BORDER_REFLECT)
            blur_px = length
        elif r < 0.27:
            sigma = rng.uniform(0.6, 0.8 + 0.06 * base)
            img = cv2.GaussianBlur(img, (0, 0), sigma)
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
            if sp.pips is not None:
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
    src = np.float32([[0, 0], [S, 0], [S, S], [0, S]]) + np.float32(
        [[rng.uniform(0, j), rng.uniform(0, j)], [-rng.uniform(0, j), rng.uniform(0, j)],
         [-rng.uniform(0, j), -rng.uniform(0, j)], [rng.uniform(0, j), -rng.uniform(0, j)]])
    dst = np.float32([[0, 0], [S, 0], [S, S], [0, S]])
    return cv2.getPerspectiveTransform(src, dst)


def _warp_masks(masks: list[np.ndarray], H: np.ndarray, S: int) -> list[np.ndarray]:
    """Warp boolean masks with nearest-neighbour sampling, eight at a time packed as bits of a uint8."""
    out: list[np.ndarray] = []
    for k in range(0, len(masks), 8):
        group = masks[k:k + 8]
        packed = np.zeros((S, S), np.uint8)
        for bit, m in enumerate(group):
            packed |= m.astype(np.uint8) << bit
        warped = cv2.warpPerspective(packed, H, (S, S), flags=cv2.INTER_NEAREST)
        out.extend(((warped >> bit) & 1).astype(bool) for bit in range(len(group)))
    return out


def _area_scale(H: np.ndarray, x: float, y: float) -> float:
    """Local area magnification of homography ``H`` at ``(x, y)`` (Jacobian determinant)."""
    p = np.float64([[[x, y]], [[x + 1, y]], [[x, y + 1]]])
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


# ---------------------------------------------------------------------------------------------------
# Writing datasets
# ---------------------------------------------------------------------------------------------------


@dataclass
class SynthSummary:
    """What :func:`generate` wrote: ``scenes`` images (detector mode) or crops per class (crops mode),
    ``labels`` detector boxes written, ``per_split`` item counts."""

    out: Path
    scenes: int = 0
    labels: int = 0
    per_split: dict[str, int] = field(default_factory=lambda: {"train": 0, "val": 0})
    per_class: dict[str, int] = field(default_factory=dict)


def yolo_lines(labels: list[tuple[int, tuple]], imgsz: int) -> str:
    """``class cx cy w h`` lines (normalised to ``imgsz``, 6 decimals) for a YOLO label file."""
    lines = []
    for k, (x1, y1, x2, y2) in labels:
        cx, cy = (x1 + x2) / 2 / imgsz, (y1 + y2) / 2 / imgsz
        w, h = (x2 - x1) / imgsz, (y2 - y1) / imgsz
        lines.append(f"{k} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}")
    return "".join(line + "\n" for line in lines)


_WORKER: dict = {}


def _worker_init(cfg: SynthConfig, seed: int, real_root: str | None, real_limit: int | None, crops: bool) -> None:
    bank = RealBank.load(real_root, real_limit) if real_root is not None else None
    _WORKER["gen"] = SceneGenerator(cfg, bank, seed)
    _WORKER["crops"] = crops


def _work(index: int) -> tuple[int, str, list[tuple[str, bytes]]]:
    """Make scene ``index`` → ``(index, split, [(relative path, file bytes), ...])``."""
    gen: SceneGenerator = _WORKER["gen"]
    cfg = gen.cfg
    scene = gen.scene(index)
    split = "val" if np.random.default_rng([gen.seed, index, 7]).random() < cfg.val_frac else "train"
    name = f"s{gen.seed}_{index:07d}"
    ok, jpg = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    if not _WORKER["crops"]:
        labels = scene.detector_labels(cfg.classes, cfg.min_visible)
        return index, split, [(f"images/{split}/{name}.jpg", jpg.tobytes()),
                              (f"labels/{split}/{name}.txt", yolo_lines(labels, cfg.imgsz).encode())]
    # Crops are cut from the JPEG-degraded image, as the reader sees camera frames.
    decoded = cv2.imdecode(jpg, cv2.IMREAD_COLOR)
    scene.image = decoded
    files = []
    for k, (label, crop) in enumerate(scene_crops(scene, np.random.default_rng([gen.seed, index, 11]), cfg.min_visible)):
        ok, png = cv2.imencode(".png", crop)
        files.append((f"{split}/{label}/{name}_{k:02d}.png", png.tobytes()))
    return index, split, files


def generate(
    out: Path | str,
    n: int,
    seed: int = 1,
    *,
    cfg: SynthConfig | None = None,
    crops: bool = False,
    real_root: Path | str | None = DEFAULT_REAL_ROOT,
    real_limit: int | None = None,
    workers: int = 1,
    overwrite: bool = False,
    progress: bool = True,
) -> SynthSummary:
    """Write a synthetic data set to ``out``.

    Detector mode (default): ``n`` scenes as ``out/images/{train,val}/*.jpg`` with YOLO labels
    ``out/labels/{train,val}/*.txt`` (empty file = negative) and ``out/data.yaml`` (paths relative to
    the YAML's folder; Ultralytics resolves them that way when the YAML has no ``path:`` key).

    Crops mode (``crops=True``): ``n`` classifier crops (64×64 PNG) as ImageFolder
    ``out/{train,val}/{1,2,3,4,5,6,x}/*.png`` (all 14 folders are created).

    Both write ``out/synth.json`` (the settings) and, when real photos are used, ``out/ATTRIBUTION.md``.

    Args:
        out: output folder; must be empty or absent (or made by this tool, with ``overwrite``).
        n: number of scenes (detector mode) or crops (crops mode), ≥ 1.
        seed: series seed — same seed, settings and photos → byte-identical files.
        cfg: generator settings (default :class:`SynthConfig`).
        crops: write classifier crops instead of detector scenes.
        real_root: folder with the shared photos; ``None`` = no real material (``cfg.real_frac``
            and ``cfg.real_bg_frac`` are then forced to 0).
        real_limit: read at most this many photos per source (tests).
        workers: processes (1 = in this process). Output does not depend on it.
        overwrite: replace an earlier output of this tool in ``out``.
        progress: show a tqdm progress bar on stderr.

    Raises:
        SynthError: bad settings, ``out`` not empty, or photos missing.
    """
    cfg = cfg or SynthConfig()
    if real_root is None:
        cfg = SynthConfig(**{**asdict(cfg), "real_frac": 0.0, "real_bg_frac": 0.0, "styles": tuple(cfg.styles),
                               "backgrounds": tuple(cfg.backgrounds)})
    cfg.check()
    if n < 1:
        raise SynthError(f"n must be >= 1, got {n}")
    if workers < 1:
        raise SynthError(f"workers must be >= 1, got {workers}")
    use_real = cfg.real_frac > 0 or cfg.real_bg_frac > 0
    root = str(real_root) if (use_real and real_root is not None) else None
    if root is not None:
        missing = [f"{name}/images/{split}" for name, split in REAL_SOURCES
                   if not (Path(root) / name / "images" / split).is_dir()]
        if missing:
            raise SynthError(f"real dice photos not found under {root}: {', '.join(missing)} "
                             "(use --real-frac 0 --real-bg-frac 0 to go without)")
    out = Path(out)
    _prepare_out(out, overwrite)
    # Written first: it marks the folder as ours, so an interrupted run can be redone with --overwrite.
    meta = {"tool": "kosti datasets synth", "seed": int(seed), "n": int(n), "crops": bool(crops),
            "config": {**asdict(cfg), "styles": list(cfg.styles), "backgrounds": list(cfg.backgrounds)},
            "real_sources": [f"{a}/{b}" for a, b in REAL_SOURCES] if use_real else []}
    (out / "synth.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")

    if crops:
        for split in ("train", "val"):
            for c in CROP_CLASSES:
                (out / split / c).mkdir(parents=True, exist_ok=True)
    else:
        for sub in ("images/train", "images/val", "labels/train", "labels/val"):
            (out / sub).mkdir(parents=True, exist_ok=True)

    summary = SynthSummary(out)
    summary.per_class = {c: 0 for c in CROP_CLASSES} if crops else {}
    from tqdm import tqdm

    bar = tqdm(total=n, unit="crop" if crops else "scene", file=sys.stderr, disable=not progress,
               desc="synth crops" if crops else "synth scenes")
    init_args = (cfg, int(seed), root, real_limit, crops)
    written = 0
    try:
        for index, split, files in _run(init_args, workers, crops, n):
            if crops:
                files = files[: n - written]
            for rel, data in files:
                (out / rel).write_bytes(data)
                if crops:
                    summary.per_class[rel.split("/")[1]] += 1
                elif rel.endswith(".txt"):
                    summary.labels += data.count(b"\n")
            summary.scenes += 1
            step = len(files) if crops else 1
            summary.per_split[split] += step
            written += step
            bar.update(step)
            if written >= n:
                break
    finally:
        bar.close()

    if use_real:
        (out / "ATTRIBUTION.md").write_text(ATTRIBUTION)
    if not crops:
        names = {0: "die"} if cfg.classes == "die" else {k: str(k + 1) for k in range(6)}
        yaml_text = (
            f"# Synthetic dice scenes: kosti datasets synth --seed {seed} --n {n} --classes {cfg.classes}\n"
            "# Paths are relative to this file's folder (no 'path:' key, so Ultralytics resolves them here).\n"
            "train: images/train\nval: images/val\n"
            "names:\n" + "".join(f"  {k}: '{v}'\n" for k, v in names.items())
        )
        (out / "data.yaml").write_text(yaml_text)
    return summary


def _run(init_args: tuple, workers: int, crops: bool, n: int) -> Iterator[tuple[int, str, list]]:
    """Scenes in index order, from this process or a pool. In crops mode the caller stops early (every
    scene but an empty negative gives at least one crop, so 2n + 10 scenes are always enough)."""
    limit = 2 * n + 10 if crops else n
    indices = _count(limit)
    if workers == 1:
        _worker_init(*init_args)
        for i in indices:
            yield _work(i)
        return
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_worker_init, initargs=init_args) as pool:
        yield from pool.imap(_work, indices, chunksize=4)


def _count(limit: int | None) -> Iterator[int]:
    i = 0
    while limit is None or i < limit:
        yield i
        i += 1


def _prepare_out(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise SynthError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise SynthError(f"{out} is not empty (pass --overwrite to replace an earlier synth output)")
        if not (out / "synth.json").is_file():
            raise SynthError(f"{out} was not made by kosti datasets synth (no synth.json); refusing to delete it")
        for name in ("images", "labels", "train", "val"):
            if (out / name).is_dir():
                shutil.rmtree(out / name)
        for name in ("data.yaml", "synth.json", "ATTRIBUTION.md"):
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
