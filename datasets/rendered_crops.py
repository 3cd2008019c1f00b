"""Rendered face-classifier crops for reader v2 (issue 38): faces that are not pip faces, and plain dice seen from
straight above under a hard shadow.

* :func:`unknown_face_crops` — faces that are no pip face: six-sided dice whose top face carries a numeral, a skull
  or an emblem (:data:`kosti.sim.dice.FACE_MARKS`), and the triangular and kite-shaped numbered faces of d8 and d10
  dice. A reader that knows only pips read such faces confidently as a pip value (a numeral die read as 1 in 47 of
  60 rendered throws, model card "Reader v2 groundwork"). They must become *uncertain* dice, boxed for the table to
  confirm, not confident faces and not "no die": the reader drops a box read as ``x`` with probability ≥ 0.99 (the
  not-a-die veto), so all-``x`` labels would teach it to drop them. Each crop is therefore labelled ``x`` half the
  time and a face 1–6 drawn at random otherwise (:data:`UNKNOWN_X_SHARE`): over the copies the target is half
  ``x``, the rest spread evenly over the faces — the uniform target of *outlier exposure* (Hendrycks, Mazeika and
  Dietterich, "Deep Anomaly Detection with Outlier Exposure", ICLR 2019) for inputs outside the known classes, with
  ``x`` weighted so that no face reaches ``value_conf`` and ``x`` stays below the veto.
* :func:`overhead_plain_crops` — faces 1–6 of plain white/ivory dice with black pips and black dice with white
  pips, 25–40 px, a camera looking almost straight down at 720×576 with a hard shadow (the issue's set-up in which
  v1.3 read clear 6s as 5).

Every crop is cut the way :func:`kosti.datasets.prepare.prepare_classification` cuts real dice (the box jittered
as a detector draws it, padded 1.25×, 64 × 64 px), so that the rendered and the real crops share one geometry.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from kosti.datasets.prepare import _class_folders, _jittered_box, rotated_crop
from kosti.sim.dice import STYLES, DieStyle, random_style
from kosti.sim.table_top import BACKGROUNDS, _cached_background, render_table

#: Marks drawn on the top face of the unknown-face d6 dice, each with its share of the d6 crops.
UNKNOWN_D6_MARKS = (("numeral", 0.5), ("skull", 0.25), ("emblem", 0.25))
#: Share of the unknown-face crops labelled ``x``; the others are labelled a face 1–6 drawn at random (outlier
#: exposure: the training target of such a face is this much ``x`` and the rest spread evenly over the faces).
UNKNOWN_X_SHARE = 0.5
#: Share of :func:`unknown_face_crops` that are d8 / d10 faces (the rest are d6 dice with a mark).
POLYHEDRAL_SHARE = 0.35
#: The plain dice of :func:`overhead_plain_crops`: white and ivory with black pips, black with white pips.
PLAIN_STYLES = ("white_black", "ivory", "black_white")
#: Frame size of the overhead scenes, ``(width, height)`` px: the issue's fixed camera above the table.
OVERHEAD_FRAME = (720, 576)


def scene_positions(rng: np.random.Generator, n: int, side: float, size: tuple[int, int],
                    tries: int = 200) -> list[tuple[float, float]]:
    """``n`` die centres (px) in a ``size`` = ``(width, height)`` frame, inside its middle 80 % × 76 %, at least
    ``1.9 × side`` apart (up to ``tries`` draws each; the last draw wins when none is apart)."""
    w, h = size
    out: list[tuple[float, float]] = []
    for _ in range(n):
        x = y = 0.0
        for _try in range(tries):
            x = float(rng.uniform(0.1 * w, 0.9 * w))
            y = float(rng.uniform(0.12 * h, 0.88 * h))
            if all(math.hypot(x - px, y - py) > 1.9 * side for px, py in out):
                break
        out.append((x, y))
    return out


def _write_crops(image: np.ndarray, box: np.ndarray, folder: Path | Callable[[], Path], stem: str, per_die: int,
                 rng: random.Random, max_angle: float) -> int:
    """Cut ``per_die`` jittered, turned crops of the die at ``box`` into ``folder`` (or the folder ``folder()``
    names for each crop); returns how many."""
    written = 0
    for k in range(per_die):
        centre, jb = _jittered_box(box, rng)
        crop = rotated_crop(image, centre, rng.uniform(-max_angle, max_angle), jb)
        where = folder if isinstance(folder, Path) else folder()
        cv2.imwrite(str(where / f"{stem}_{k}.png"), crop)
        written += 1
    return written


def _marked_style(rng: np.random.Generator, mark: str) -> DieStyle:
    """A random die style (:func:`kosti.sim.dice.random_style`) whose six faces all carry ``mark``."""
    base = random_style(rng)
    return replace(base, name=f"{base.name}_{mark}", marks=tuple((v, mark) for v in range(1, 7)))


def _polyhedral_face(rng: np.random.Generator, background: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draw one d8 (triangular face) or d10 (kite-shaped face) die seen from above on a copy of ``background``.

    The top face carries its number (1–10, a digit or two) in a contrasting colour; two darker neighbour facets
    show beside it, as on a real d8 / d10. Returns ``(image, box)``: the BGR image and the die's ``[x1, y1, x2, y2]``
    box in pixels.
    """
    img = background.copy()
    h, w = img.shape[:2]
    side = float(rng.uniform(0.18, 0.32) * min(h, w))
    cx, cy = w / 2 + rng.uniform(-0.05, 0.05) * w, h / 2 + rng.uniform(-0.05, 0.05) * h
    body = np.array([rng.integers(0, 256) for _ in range(3)], np.float64)
    ink = np.where(body.mean() > 110, rng.uniform(0, 50, 3), rng.uniform(200, 255, 3))
    turn = rng.uniform(0, 2 * math.pi)
    if rng.random() < 0.5:  # d8: an equilateral triangle, its neighbours folded out of each edge
        ang = turn + np.arange(3) * 2 * math.pi / 3
        top = np.stack([cx + side * 0.6 * np.cos(ang), cy + side * 0.6 * np.sin(ang)], 1)
    else:  # d10: a kite, long axis 1.5× its width
        ang = turn + np.array([0.0, math.pi / 2, math.pi, 3 * math.pi / 2])
        rad = side * np.array([0.75, 0.38, 0.45, 0.38])
        top = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1)
    centre = top.mean(0)
    outline = centre + (top - centre) * 1.45  # the silhouette: the top face and its neighbour facets
    shade = body * rng.uniform(0.45, 0.7)
    cv2.fillPoly(img, [np.round(outline).astype(np.int32)], tuple(float(c) for c in shade), cv2.LINE_AA)
    for i in range(len(top)):  # facet edges from the top face's corners to the silhouette's
        cv2.line(img, tuple(int(v) for v in top[i]), tuple(int(v) for v in outline[i]),
                 tuple(float(c) * 0.8 for c in shade), 1, cv2.LINE_AA)
    cv2.fillPoly(img, [np.round(top).astype(np.int32)], tuple(float(c) for c in body), cv2.LINE_AA)
    text = str(int(rng.integers(1, 11)))
    scale = side / 70.0
    thick = max(1, int(round(scale * 2)))
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    org = (int(centre[0] - tw / 2), int(centre[1] + th / 2))
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, tuple(float(c) for c in ink), thick, cv2.LINE_AA)
    x1, y1 = outline.min(0)
    x2, y2 = outline.max(0)
    return img, np.array([x1, y1, x2, y2], np.float64)


def unknown_face_crops(out: Path, split: str, n: int, seed: int = 0, x_share: float = UNKNOWN_X_SHARE) -> int:
    """Write about ``n`` crops of faces that are no pip face into ``out/<split>/<class>/`` (``uf_*.png``): each in
    ``x`` with probability ``x_share``, else in a face folder ``1``–``6`` drawn at random (module docstring: outlier
    exposure; ``x_share`` 1 puts every crop in ``x``).

    Two thirds (1 − :data:`POLYHEDRAL_SHARE`) are six-sided dice whose every face carries a mark
    (:data:`UNKNOWN_D6_MARKS`: numerals, skulls, emblems) in random styles, rendered four to six a scene on the
    renderer's table tops (:data:`kosti.sim.table_top.BACKGROUNDS`), 20–70 px, camera tilt up to 0.2, each die cut
    twice; the rest are single d8 / d10 dice (:func:`_polyhedral_face`) on a patch of a table top.

    Returns:
        the number of crops written.

    Raises:
        ValueError: ``x_share`` outside 0–1.
    """
    if not 0.0 <= x_share <= 1.0:
        raise ValueError(f"x_share must be in 0-1, got {x_share!r}")
    rng = np.random.default_rng([seed, 38])
    prng = random.Random(seed)
    _class_folders(out, split)

    def folder() -> Path:
        return out / split / ("x" if prng.random() < x_share else str(prng.randint(1, 6)))

    n_poly = int(round(n * POLYHEDRAL_SHARE))
    written = 0
    scene = 0
    while written < n - n_poly:
        mark = str(rng.choice([m for m, _ in UNKNOWN_D6_MARKS], p=[s for _, s in UNKNOWN_D6_MARKS]))
        style = _marked_style(rng, mark)
        side = float(rng.uniform(20, 70))
        size = (960, 720)
        centres = scene_positions(rng, int(rng.integers(4, 7)), side, size)
        dice = [(int(rng.integers(1, 7)), x, y, float(rng.uniform(0, 90))) for x, y in centres]
        kind = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
        frame, boxes = render_table(dice, kind, style, size=size, die_px=side, seed=seed * 100_000 + scene,
                                    tilt=(float(rng.normal(0, 0.05)), float(rng.uniform(0.0, 0.2))),
                                    glare=float(rng.uniform(0.0, 0.4)), shadow=float(rng.uniform(0.3, 0.7)))
        for i, box in enumerate(boxes):
            if box[2] - box[0] < 4:
                continue
            written += _write_crops(frame, box, folder, f"uf_{seed}_{scene}_{i}", 2, prng, 180.0)
        scene += 1
    for k in range(n_poly):
        kind = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
        patch = _cached_background(kind, 320, 320, int(rng.integers(0, 8)))
        image, box = _polyhedral_face(rng, patch)
        written += _write_crops(image, box, folder, f"uf_{seed}_poly{k}", 1, prng, 180.0)
    return written


def overhead_plain_crops(out: Path, split: str, n_scenes: int, seed: int = 0, per_die: int = 1) -> dict[str, int]:
    """Write crops of plain dice seen from above under a hard shadow into ``out/<split>/<face>/`` (``op_*.png``).

    Each scene: 720 × 576 px (:data:`OVERHEAD_FRAME`), three to six dice of one of :data:`PLAIN_STYLES` with side
    25–40 px, a camera almost straight above (tilt ≤ 0.08), shadow darkness 0.6–0.9, on a random table top; random faces, so each face 1–6 is about a sixth of the crops.

    Returns:
        crop counts per face name ``"1"``–``"6"``.
    """
    rng = np.random.default_rng([seed, 39])
    prng = random.Random(seed)
    _class_folders(out, split)
    counts = {str(v): 0 for v in range(1, 7)}
    for scene in range(n_scenes):
        style = STYLES[PLAIN_STYLES[int(rng.integers(len(PLAIN_STYLES)))]]
        side = float(rng.uniform(25, 40))
        centres = scene_positions(rng, int(rng.integers(3, 7)), side, OVERHEAD_FRAME)
        dice = [(int(rng.integers(1, 7)), x, y, float(rng.uniform(0, 90))) for x, y in centres]
        kind = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
        frame, boxes = render_table(dice, kind, style, size=OVERHEAD_FRAME, die_px=side,
                                    seed=seed * 100_000 + scene,
                                    tilt=(float(rng.normal(0, 0.04)), float(rng.uniform(-0.06, 0.06))),
                                    glare=float(rng.uniform(0.0, 0.3)), shadow=float(rng.uniform(0.6, 0.9)))
        for i, ((value, *_), box) in enumerate(zip(dice, boxes)):
            if box[2] - box[0] < 4:
                continue
            counts[str(value)] += _write_crops(frame, box, out / split / str(value), f"op_{seed}_{scene}_{i}",
                                               per_die, prng, 180.0)
    return counts
