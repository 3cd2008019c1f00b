"""Hands in the roll area, and dice whose own appearance still changes (spinning, tipping).

Two cheap checks the live pipeline makes on a settle event, before it trusts a rest:

* :func:`find_hand` — a hand (or forearm) in the roll area: a large skin-coloured region that reaches
  the frame's edge (an arm comes from outside the picture) and overlaps the roll area. Dice lying on a
  palm or held still over the tray must never be read, and a small hand's palm must never be boxed as
  a die; the pipeline waits until the hand has left and the table has been still again.
* :func:`find_new_hand` — the same hand found without its colour (a warm lamp, a grey picture, a glove): a
  large region new on the table since before the motion, that reaches the frame's edge and stands out from
  the table around it.
* :func:`appearance_change` — how much one die's crop changed between two frames after aligning them
  (the camera's motion from the settle detector, then the best shift within ±2 px). A die turning
  slowly on a corner moves its box hardly at all and changes almost no pixels of the whole frame, but
  its own crop changes: a die is at rest only when its crop is stable.

Skin colour: YCrCb with Y ≥ 70, Cr 135–180 and Cb 80–130 (the usual skin cluster, Chai & Ngan 1999, widened a
little for warm indoor light), after a 4× downscale. A table top of the same colour (light wood,
cork) would be one huge skin region: a region covering more than ``max_fraction`` of the frame is
taken for the table, not a hand (the skin check is then blind — a limit of colour, documented in
``docs/live-pipeline.md``; :func:`find_new_hand` still sees a hand that came in).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from kosti.vision.exposure import brightened

#: YCrCb skin box (Cr, Cb ranges), see the module docstring.
SKIN_CR = (135, 180)
SKIN_CB = (80, 130)
#: Darkest skin luma (Y) counted: darker red felt or a shadow falls in the same Cr/Cb box.
SKIN_Y_MIN = 70


@dataclass(frozen=True)
class HandBlob:
    """A hand found in the frame.

    Attributes:
        box: ``(x1, y1, x2, y2)`` in frame pixels.
        area_fraction: share of the frame it covers, 0–1.
        roll_fraction: share of the roll area it covers, 0–1.
    """

    box: tuple[float, float, float, float]
    area_fraction: float
    roll_fraction: float


def skin_mask(image: np.ndarray, scale: int = 4, gain: float = 1.0) -> np.ndarray:
    """``(H, W, 3)`` uint8 BGR → ``(H // scale, W // scale)`` uint8 mask, 255 where the colour is skin once the
    frame is brightened by ``gain`` (a dim table: :attr:`kosti.vision.settle.SettleDetector.gain`; both the luma
    and the chroma offsets from grey shrink with the light)."""
    h, w = image.shape[:2]
    small = cv2.resize(image, (max(1, w // scale), max(1, h // scale)), interpolation=cv2.INTER_AREA)
    if gain != 1.0:
        small = brightened(small, gain)
    ycc = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
    mask = cv2.inRange(ycc, (SKIN_Y_MIN, SKIN_CR[0], SKIN_CB[0]), (250, SKIN_CR[1], SKIN_CB[1]))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def find_hand(
    image: np.ndarray,
    roll_mask: np.ndarray | None = None,
    die_px: float | None = None,
    min_dice_areas: float = 4.0,
    max_fraction: float = 0.6,
    scale: int = 4,
    moved: np.ndarray | None = None,
    min_moved: float = 0.3,
    gain: float = 1.0,
    dice_at: np.ndarray | None = None,
    reach: float = 1.0,
) -> HandBlob | None:
    """The largest hand-like skin region overlapping the roll area, or None.

    A region counts as a hand when it covers at least ``min_dice_areas`` dice (``die_px``² each; default
    die side 7 % of the frame height), touches the frame's border (the arm), overlaps the roll area,
    and covers at most ``max_fraction`` of the frame (more is the table's own colour), and — when
    ``moved`` is given — at least ``min_moved`` of it moved on the way to this rest (a hand comes in; a
    wooden table edge or a skin-toned carpet beside the tray never moved: on the shared photos of
    epanemu-dice and rune55 such static regions were 30 of 425 false hands without this test).

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame.
        roll_mask: ``(H, W)`` uint8 mask of the roll area (non-zero inside); None = the whole frame.
        die_px: side of a die in frame pixels (from the dice boxes when known).
        scale: downscale factor of the colour analysis.
        moved: bool mask, any size with the frame's aspect (the settle detector's
            :attr:`~kosti.vision.settle.SettleDetector.motion_mask`), of what changed during the motion
            before this rest; None = do not require motion.
        gain: the frame's colours are judged brightened by this gain (a dim table; :func:`skin_mask`).
        dice_at: ``(N, 2)`` centres (frame pixels) of the dice read at this rest: a region counts only when it covers
            or touches one of them — lies within ``reach`` die sides of its centre (issue 40: an arm at the edge of
            the view, away from the dice, does not hold a throw back; a palm holding dice or a hand over them does).
            None = no such condition.
        reach: how near a die's centre the region must come, in die sides (1.0: the hand's edge within half a side
            of the die's edge).

    Returns:
        A :class:`HandBlob` in frame pixels, or None.
    """
    h, w = image.shape[:2]
    mask = skin_mask(image, scale, gain)
    side = float(die_px) if die_px else 0.07 * h
    holds = None if dice_at is None else np.asarray(dice_at, np.float64).reshape(-1, 2) / scale
    return _hand_blob(mask > 0, float(scale), min_dice_areas * (side / scale) ** 2, max_fraction, roll_mask, moved,
                      min_moved, holds=holds, reach=reach * side / scale)


def find_new_hand(
    before: np.ndarray,
    now: np.ndarray,
    frame_width: int,
    roll_mask: np.ndarray | None = None,
    die_px: float | None = None,
    moved: np.ndarray | None = None,
    diff_threshold: float = 28.0,
    min_dice_areas: float = 8.0,
    max_fraction: float = 0.6,
    min_moved: float = 0.3,
    max_changed: float = 0.3,
    dice_at: np.ndarray | None = None,
) -> HandBlob | None:
    """A hand found without its colour: a large region that is new on the table since ``before`` and still there.

    The skin box of :func:`find_hand` misses a hand under a warm or cool lamp, in a grey or infrared picture, in a
    glove or a sleeve: on the clip suite under a warm lamp, cool light, grey or turned hues the dice held on a palm
    were scored as a throw (``benchmarks/robustness_clips.py``). This rule looks at what changed instead: pixels of
    ``now`` that differ from ``before`` (the table as it was before the motion, registered onto ``now``) by more
    than ``diff_threshold`` grey levels form regions; a region is a hand when it covers at least
    ``min_dice_areas`` dice (twice the skin rule's 4: dice landing side by side are new too), reaches the frame's
    border (the arm), overlaps the roll area, covers at most ``max_fraction`` of the frame, at least ``min_moved``
    of it moved on the way to this rest (``moved``), and it *stands out* from the table around it now more than
    that place did before — a hand appeared there; the cloth a hand uncovered by leaving matches its surroundings
    now and stood out before. When more than ``max_changed`` of the whole picture changed, the scene changed — a
    camera moved beyond registration, the light changed, another table — and nothing is taken for a hand (a
    hand with its forearm covers 10–17 % of the clip suite's frames). Limit: a person's shadow falling over the tray changes its place as a hand does and
    is taken for one; the rest is then read once it moves away.

    Args:
        before, now: ``(h, w)`` uint8 grey settle images of one size, as the camera exposed them (``before``:
            :attr:`SettleDetector.before_motion` registered onto ``now``: :attr:`SettleDetector.last_small`).
        frame_width: width in pixels of the frame they were shrunk from (boxes are returned in its pixels).
        roll_mask: ``(H, W)`` uint8 mask of the roll area in frame pixels; None = the whole frame.
        die_px: side of a die in frame pixels (default 7 % of the frame height).
        moved: bool mask of what changed during the motion before this rest (any size with the frame's aspect).
        dice_at: ``(N, 2)`` float centres (frame pixels) of the dice read at this rest: a region counts only when
            one of them lies on it (a hand holding dice, the case that must never be scored; a bag or a chair
            leg moved at the frame's edge holds none). None = no such condition.
        diff_threshold: grey-level change of a new pixel, at the images' exposure (the throw detector passes
            28 / the settle gain: 28 levels of a normally lit frame).
        min_dice_areas, max_fraction, min_moved: as :func:`find_hand` (8, 0.6, 0.3).
        max_changed: share of the picture above which it changed as a whole and nothing is a hand (0.3; a forearm
            close to the camera that covers more is then seen by :func:`find_hand`'s colour only).

    Returns:
        A :class:`HandBlob` in frame pixels, or None (also for images of different sizes).
    """
    if before.shape != now.shape:
        return None
    scale = frame_width / float(now.shape[1])
    changed = cv2.absdiff(now, before) > diff_threshold
    if np.count_nonzero(changed) > max_changed * changed.size:
        return None
    changed = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) > 0
    side = float(die_px) if die_px else 0.07 * now.shape[0] * scale
    if dice_at is not None:
        dice_at = np.asarray(dice_at, np.float64).reshape(-1, 2) / scale
    return _hand_blob(changed, scale, min_dice_areas * (side / scale) ** 2, max_fraction, roll_mask, moved,
                      min_moved, stands_out=(before, now), holds=dice_at)


def _stands_out_more(region: np.ndarray, before: np.ndarray, now: np.ndarray) -> bool:
    """Whether ``region`` (bool mask) differs from the ring of table around it more in ``now`` than in ``before``."""
    ring = cv2.dilate(region.astype(np.uint8), np.ones((7, 7), np.uint8)) > 0
    ring &= ~region
    if not ring.any():
        return True  # the region fills everything near it: nothing to compare with

    def contrast(img: np.ndarray) -> float:
        return abs(float(img[region].mean()) - float(img[ring].mean()))

    return contrast(now) > contrast(before)


def _holds_any(region: np.ndarray, points: np.ndarray, reach: float = 1.0) -> bool:
    """Whether any ``(N, 2)`` point (x, y in ``region``'s pixels) lies on the bool ``region`` grown by ``reach`` pixels
    (at least one)."""
    if len(points) == 0:
        return False
    k = 2 * max(1, int(round(reach))) + 1
    grown = cv2.dilate(region.astype(np.uint8), np.ones((k, k), np.uint8)) > 0
    h, w = grown.shape
    xs = np.clip(np.round(points[:, 0]).astype(int), 0, w - 1)
    ys = np.clip(np.round(points[:, 1]).astype(int), 0, h - 1)
    return bool(grown[ys, xs].any())


def _hand_blob(mask: np.ndarray, scale: float, min_area: float, max_fraction: float, roll_mask: np.ndarray | None,
               moved: np.ndarray | None, min_moved: float,
               stands_out: tuple[np.ndarray, np.ndarray] | None = None,
               holds: np.ndarray | None = None, reach: float = 1.0) -> HandBlob | None:
    """The largest region of ``mask`` (bool, ``scale`` frame px per px) that passes the hand tests of
    :func:`find_hand` (and :func:`_stands_out_more` on the ``(before, now)`` images, and holding one of the
    ``(N, 2)`` points ``holds`` in ``mask`` pixels, within ``reach`` mask pixels, when given), as frame pixels."""
    sh, sw = mask.shape
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    roll = None
    if roll_mask is not None:
        roll = cv2.resize(roll_mask, (sw, sh), interpolation=cv2.INTER_NEAREST) > 0
    mv = None
    if moved is not None:
        mv = cv2.resize(moved.astype(np.uint8), (sw, sh), interpolation=cv2.INTER_NEAREST) > 0
    best: HandBlob | None = None
    for k in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[k])
        if area < min_area or area > max_fraction * sw * sh:
            continue
        if not (x == 0 or y == 0 or x + bw >= sw or y + bh >= sh):
            continue
        region = labels[y:y + bh, x:x + bw] == k
        inside = int(np.count_nonzero(region & roll[y:y + bh, x:x + bw])) if roll is not None else area
        if inside < 0.5 * min_area:
            continue
        if mv is not None and np.count_nonzero(region & mv[y:y + bh, x:x + bw]) < min_moved * area:
            continue
        if holds is not None or stands_out is not None:
            whole = labels == k
            if holds is not None and not _holds_any(whole, holds, reach):
                continue
            if stands_out is not None and not _stands_out_more(whole, *stands_out):
                continue
        roll_area = int(np.count_nonzero(roll)) if roll is not None else sw * sh
        blob = HandBlob((x * scale, y * scale, (x + bw) * scale, (y + bh) * scale), area / (sw * sh),
                        inside / max(1, roll_area))
        if best is None or blob.area_fraction > best.area_fraction:
            best = blob
    return best


def appearance_change(
    before: np.ndarray,
    after: np.ndarray,
    box: tuple[float, float, float, float] | np.ndarray,
    before_to_after: np.ndarray | None = None,
    search_px: int = 2,
    diff_threshold: int = 30,
    gain: float = 1.0,
) -> float:
    """Share (0–1) of one die's pixels that changed from ``before`` to ``after``.

    The crop around ``box`` (in ``after``'s pixels, grown by 25 %) is compared with the same table area
    in ``before`` — mapped through ``before_to_after`` (the camera's motion, a ``(2, 3)`` affine on frame
    pixels; None = a fixed camera), then aligned by the best whole-pixel shift within ±``search_px``
    (what is left of the camera's motion) — after a light blur and a gain match (exposure flicker).
    A pixel changed when its gray level, brightened by ``gain`` (a dim table:
    :attr:`kosti.vision.settle.SettleDetector.gain`), differs by more than ``diff_threshold``. A die at rest gives
    ~0; a die turned by 10° on the spot changes its corners and pips (≈ 0.1 of its crop).

    Args:
        before, after: ``(H, W, 3)`` uint8 BGR frames of one size.
        box: ``(x1, y1, x2, y2)`` of the die in ``after``, pixels.
        before_to_after: ``(2, 3)`` camera motion on frame pixels, or None.
        search_px: largest whole-pixel shift searched.
        diff_threshold: grey levels of a normally lit frame.
        gain: the frames' brightening (> 0; :attr:`kosti.vision.settle.SettleDetector.gain`): the threshold is
            ``diff_threshold / gain`` on the frames as they came.

    Returns:
        The changed fraction of the die's box area (0 when the box is empty or off-frame).

    Raises:
        ValueError: ``gain`` ≤ 0.
    """
    if gain <= 0:
        raise ValueError(f"gain must be > 0, got {gain}")
    h, w = after.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    gx, gy = 0.25 * (x2 - x1), 0.25 * (y2 - y1)
    cx0, cy0 = max(0, int(x1 - gx)), max(0, int(y1 - gy))
    cx1, cy1 = min(w, int(np.ceil(x2 + gx))), min(h, int(np.ceil(y2 + gy)))
    cw, ch = cx1 - cx0, cy1 - cy0
    if cw <= 2 * search_px + 4 or ch <= 2 * search_px + 4:
        return 0.0
    a = cv2.cvtColor(after[cy0:cy1, cx0:cx1], cv2.COLOR_BGR2GRAY)
    # The area of ``before`` that shows the same table, grown by the search margin.
    inv = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]) if before_to_after is None else \
        cv2.invertAffineTransform(np.asarray(before_to_after, dtype=np.float64))
    s = search_px
    shift = np.array([[1.0, 0.0, cx0 - s], [0.0, 1.0, cy0 - s], [0.0, 0.0, 1.0]])
    m = np.vstack([inv, [0.0, 0.0, 1.0]]) @ shift  # crop pixel → before pixel
    # Only the part of ``before`` that the crop maps onto is converted to gray.
    corners = m[:2] @ np.array([[0, cw + 2 * s, 0, cw + 2 * s], [0, 0, ch + 2 * s, ch + 2 * s], [1, 1, 1, 1]])
    bh, bw = before.shape[:2]
    rx0, ry0 = max(0, int(corners[0].min()) - 2), max(0, int(corners[1].min()) - 2)
    rx1, ry1 = min(bw, int(np.ceil(corners[0].max())) + 3), min(bh, int(np.ceil(corners[1].max())) + 3)
    if rx1 - rx0 < 2 or ry1 - ry0 < 2:
        return 0.0
    region = before[ry0:ry1, rx0:rx1]
    region = cv2.cvtColor(region, cv2.COLOR_BGR2GRAY) if region.ndim == 3 else region
    m = np.array([[1.0, 0.0, -rx0], [0.0, 1.0, -ry0], [0.0, 0.0, 1.0]]) @ m
    b = cv2.warpAffine(region, m[:2], (cw + 2 * s, ch + 2 * s), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                       borderMode=cv2.BORDER_REPLICATE)
    a = cv2.GaussianBlur(a, (0, 0), 1.0)
    b = cv2.GaussianBlur(b, (0, 0), 1.0)
    res = cv2.matchTemplate(b, a, cv2.TM_SQDIFF_NORMED)
    _, _, (dx, dy), _ = cv2.minMaxLoc(res)
    bb = b[dy:dy + ch, dx:dx + cw]
    ma, mb = float(a.mean()), float(bb.mean())
    if mb > 1.0:
        bb = cv2.convertScaleAbs(bb, alpha=ma / mb)
    changed = cv2.absdiff(a, bb) > diff_threshold / gain
    bx0, by0 = max(0, int(x1) - cx0), max(0, int(y1) - cy0)
    bx1, by1 = min(cw, int(np.ceil(x2)) - cx0), min(ch, int(np.ceil(y2)) - cy0)
    area = max(1, (bx1 - bx0) * (by1 - by0))
    return float(np.count_nonzero(changed) / area)
