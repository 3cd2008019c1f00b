"""Real material for synthetic scenes: die crops with soft alpha and dice-free table tops, cut from the
*training* splits of the shared photos only (:data:`~kosti.datasets.synth_config.REAL_SOURCES`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from kosti.datasets.prepare import read_labels
from kosti.datasets.synth_config import (
    _IMAGE_SUFFIXES,
    DEFAULT_REAL_ROOT,
    REAL_SOURCES,
    SynthError,
)
from kosti.vision.evaluate import DatasetError

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
        assert self._sides is not None and self._order is not None  # built just above
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
        lb = (lb[0] * k, lb[1] * k, lb[2] * k, lb[3] * k)
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
