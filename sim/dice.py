"""Procedural six-sided pip dice and table tops — synthetic images with exact ground truth.

Everything here is OpenCV + numpy, deterministic for a given seed / ``numpy.random.Generator``, and
fast enough for the live "virtual table" (a 1280×720 frame with six dice in a few milliseconds once
the table top is cached) and for bulk training-data generation (:mod:`kosti.datasets.synth`).

Geometry of a rendered die (:func:`render_die`): the top face is a square of side ``size_px`` pixels
with rounded corners, rotated by ``rotation_deg`` (counter-clockwise as seen in the image). A slight
camera tilt (``tilt``) shifts the top face against the die's base, so one or two side faces show as a
darker band (with the pips of the adjacent faces once it is tall enough to show them) and the top
face is foreshortened by ``sqrt(1 - |tilt|²)`` along the tilt direction.
Pips follow the standard Western d6 layout (1 centre; 2 and 3 on a diagonal; 4 corners; 5 corners +
centre; 6 two rows of three) — rotating the face by 90° gives the other diagonal for 2 and 3 and
turns the 6's columns into rows, so every orientation a real die shows is reachable.

Colours are BGR ``uint8`` triples, as everywhere in OpenCV.

This module draws one die (styles, textures, :func:`render_die`, :func:`render_styled`); the table tops
and whole frames are :mod:`kosti.sim.table_top`, the compositing helpers :mod:`kosti.sim.compose`, and
:mod:`kosti.sim.render` gathers the public names of all three.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, NamedTuple, Sequence

import cv2
import numpy as np

from kosti.sim.compose import smooth_noise

Color = tuple[int, int, int]

#: Pip centres of each face in face units (the face spans ``[-1, 1]²``; x right, y down before
#: rotation). ``A`` = 0.52 puts corner pips at 24 % / 76 % of the side, as on common 16 mm dice.
_A = 0.52
PIP_LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    0: (),  # blank face: dice-like cube without pips (a negative / distractor)
    1: ((0.0, 0.0),),
    2: ((-_A, -_A), (_A, _A)),
    3: ((-_A, -_A), (0.0, 0.0), (_A, _A)),
    4: ((-_A, -_A), (_A, -_A), (-_A, _A), (_A, _A)),
    5: ((-_A, -_A), (_A, -_A), (0.0, 0.0), (-_A, _A), (_A, _A)),
    6: ((-_A, -_A), (-_A, 0.0), (-_A, _A), (_A, -_A), (_A, 0.0), (_A, _A)),
}


@dataclass(frozen=True)
class DieStyle:
    """Look of a die.

    Attributes:
        name: short identifier (``STYLES`` key for the named styles).
        body_color: BGR body colour.
        pip_color: BGR pip colour.
        size_px: default side of the top face in pixels (callers usually override it).
        corner_radius: corner rounding as a fraction of the side (0 = sharp cube, 0.5 = disc).
        pip_radius: pip radius as a fraction of the side (0.06–0.11 on real dice).
        translucency: 0 = opaque body, 1 = fully see-through body (pips stay opaque). Real
            translucent dice look right at 0.3–0.6.
        texture: ``""`` (plain body), ``"marble"`` (swirled second colour, as marbled RPG dice) or
            ``"wood"`` (grain across the body, as wooden dice); applied by the scene generator
            (:func:`texture_body`).
        second_color: BGR second colour of a marbled body (ignored otherwise).
        marks: ``(value, mark)`` pairs: faces that carry a mark (:data:`FACE_MARKS`) instead of pips, as custom
            dice do (a skull for 1 and an emblem for 6; numeral dice: ``"numeral"`` on every face).
    """

    name: str
    body_color: Color
    pip_color: Color
    size_px: int = 64
    corner_radius: float = 0.18
    pip_radius: float = 0.09
    translucency: float = 0.0
    texture: str = ""
    second_color: Color = (0, 0, 0)
    marks: tuple[tuple[int, str], ...] = ()


#: Named styles: common dice seen on real tables (colours picked from the shared photos and from
#: ordinary dice sets).
STYLES: dict[str, DieStyle] = {
    s.name: s
    for s in (
        DieStyle("ivory", (200, 228, 240), (30, 30, 30), corner_radius=0.20),
        DieStyle("white_black", (240, 242, 242), (25, 25, 25)),
        DieStyle("white_red", (238, 240, 244), (40, 30, 190), pip_radius=0.085),
        DieStyle("red_white", (40, 35, 190), (235, 238, 240)),
        DieStyle("black_white", (32, 30, 30), (235, 235, 235)),
        DieStyle("blue_white", (160, 70, 25), (235, 235, 235)),
        DieStyle("green_white", (60, 140, 30), (235, 240, 235)),
        DieStyle("yellow_black", (40, 200, 235), (25, 25, 25)),
        DieStyle("cream_red", (170, 215, 235), (45, 40, 170), corner_radius=0.22),
        DieStyle("translucent_green", (80, 190, 40), (245, 245, 245), translucency=0.45),
        DieStyle("translucent_blue", (200, 110, 30), (245, 245, 245), translucency=0.45),
        DieStyle("casino_red", (35, 20, 175), (245, 245, 245), corner_radius=0.04, pip_radius=0.075,
                 translucency=0.3),
    )
}


def random_style(rng: np.random.Generator) -> DieStyle:
    """Draw a die style: a named style (half the time, with jittered colours) or random colours.

    Random colours keep a luminance difference of at least 70 (of 255) between body and pips, since
    real pips are always painted to contrast with the body.
    """
    if rng.random() < 0.5:
        base = STYLES[list(STYLES)[int(rng.integers(len(STYLES)))]]
        jit = lambda c: _rgb(int(np.clip(v + rng.normal(0, 12), 0, 255)) for v in c)  # noqa: E731
        return replace(
            base,
            body_color=jit(base.body_color),
            pip_color=jit(base.pip_color),
            corner_radius=float(np.clip(base.corner_radius + rng.normal(0, 0.03), 0.02, 0.35)),
            pip_radius=float(np.clip(base.pip_radius + rng.normal(0, 0.008), 0.06, 0.11)),
        )
    while True:
        body = _rgb(int(v) for v in rng.integers(0, 256, 3))
        light_pips = _luma(body) < 128
        if rng.random() < 0.8:  # pips near black or near white, as on most dice
            v = int(rng.integers(200, 256)) if light_pips else int(rng.integers(0, 50))
            pip = (v, v, v)
        else:
            pip = _rgb(int(v) for v in rng.integers(0, 256, 3))
        if abs(_luma(body) - _luma(pip)) >= 70:
            break
    return DieStyle(
        "random",
        body,
        pip,
        corner_radius=float(rng.uniform(0.03, 0.3)),
        pip_radius=float(rng.uniform(0.065, 0.105)),
        translucency=float(rng.uniform(0.2, 0.6)) if rng.random() < 0.15 else 0.0,
    )


#: Pip paints of real dice other than black and white (BGR): red, gold, blue, white, silver.
PIP_PAINTS: tuple[Color, ...] = ((40, 35, 200), (40, 175, 215), (190, 90, 30), (245, 245, 245), (190, 190, 185))


def wide_style(rng: np.random.Generator) -> DieStyle:
    """Draw a die style from the wide palette, so that no body/pip pair, material or shape is rare.

    Kinds, equally likely: a body anywhere on the hue circle (any saturation and brightness) with
    contrasting black or white pips; a light body with coloured pips (red, gold, blue, silver); a dark
    or black body with light or coloured pips; a translucent coloured body; a marbled body (two colours
    swirled); a wooden die (wood colour, grain, dark engraved pips). Corners from sharp (casino) to
    round, pips 6–11 % of the side. Body and pips keep a luminance difference of at least 45 (of 255):
    pips are painted to be seen, but gold on ivory or red on orange is less than 70.

    Source: issue 11 (what real tables show: coloured, translucent, marbled and wooden dice; light pips
    on dark bodies; coloured pips on light ones).
    """
    kind = int(rng.integers(6))

    def hsv(h: float, sat: float, val: float) -> Color:
        px = np.array([[[int(h) % 180, int(sat * 255), int(val * 255)]]], np.uint8)
        b, g, r = cv2.cvtColor(px, cv2.COLOR_HSV2BGR)[0, 0]
        return int(b), int(g), int(r)

    texture, second = "", (0, 0, 0)
    translucency = 0.0
    for _ in range(50):
        if kind == 0:  # the hue circle
            body = hsv(rng.uniform(0, 180), rng.uniform(0.3, 1.0), rng.uniform(0.25, 0.95))
            pip = (245, 245, 245) if _luma(body) < 128 else (25, 25, 25)
        elif kind == 1:  # light body, coloured pips
            v = rng.uniform(0.8, 1.0)
            body = hsv(rng.uniform(0, 180), rng.uniform(0.0, 0.25), v)
            pip = PIP_PAINTS[int(rng.integers(len(PIP_PAINTS)))]
        elif kind == 2:  # dark body, light or coloured pips
            body = hsv(rng.uniform(0, 180), rng.uniform(0.0, 0.9), rng.uniform(0.05, 0.35))
            pip = PIP_PAINTS[int(rng.integers(len(PIP_PAINTS)))] if rng.random() < 0.5 else (240, 240, 240)
        elif kind == 3:  # translucent
            body = hsv(rng.uniform(0, 180), rng.uniform(0.5, 1.0), rng.uniform(0.4, 0.9))
            pip = (245, 245, 245) if rng.random() < 0.8 else (25, 25, 25)
            translucency = float(rng.uniform(0.3, 0.6))
        elif kind == 4:  # marbled
            body = hsv(rng.uniform(0, 180), rng.uniform(0.2, 1.0), rng.uniform(0.15, 0.9))
            second = hsv(rng.uniform(0, 180), rng.uniform(0.0, 1.0), rng.uniform(0.1, 1.0))
            pip = (240, 240, 240) if _luma(body) < 128 else (25, 25, 25)
            if rng.random() < 0.4:
                pip = PIP_PAINTS[int(rng.integers(3))]  # gold/red/blue pips are common on RPG dice
            texture = "marble"
        else:  # wooden
            body = hsv(rng.uniform(8, 22), rng.uniform(0.35, 0.7), rng.uniform(0.45, 0.9))
            pip = (int(rng.integers(10, 50)),) * 3
            texture = "wood"
        if abs(_luma(body) - _luma(pip)) >= 45:
            break
        kind = int(rng.integers(6))
    return DieStyle(
        "wide",
        body,
        pip,
        corner_radius=float(rng.uniform(0.02, 0.35)),
        pip_radius=float(rng.uniform(0.06, 0.11)),
        translucency=translucency,
        texture=texture,
        second_color=second,
    )


def texture_body(bgra: np.ndarray, style: DieStyle, rng: np.random.Generator) -> np.ndarray:
    """Apply ``style.texture`` to a rendered die sprite; returns a new ``(h, w, 4)`` uint8 BGRA array.

    Pixels are textured in proportion to how close their colour is to the body colour (pips, being the
    other colour, keep theirs). ``marble``: the second colour swirled in along warped noise bands;
    ``wood``: darker grain lines across the body. A plain style returns the input unchanged.
    """
    if not style.texture:
        return bgra
    h, w = bgra.shape[:2]
    col = bgra[..., :3].astype(np.float32)
    body, pip = np.array(style.body_color, np.float32), np.array(style.pip_color, np.float32)
    span = max(float(np.linalg.norm(body - pip)), 1.0)
    bodiness = np.clip(np.linalg.norm(col - pip, axis=2) / span, 0, 1) ** 2
    scale = max(4.0, min(h, w) / 3)
    if style.texture == "marble":
        n = smooth_noise(rng, h, w, scale) * 3.0 + smooth_noise(rng, h, w, scale / 3)
        band = (0.5 + 0.5 * np.sin(n * rng.uniform(2.0, 4.0))) ** 2
        shade = col / np.maximum(body, 1.0)  # the renderer's lighting, kept
        swirl = np.array(style.second_color, np.float32) * np.clip(shade, 0, 1.5)
        mix = (band * bodiness * rng.uniform(0.5, 0.9))[..., None]
        col = col * (1 - mix) + swirl * mix
    else:  # wood
        ang = rng.uniform(0, np.pi)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        across = xs * math.cos(ang) + ys * math.sin(ang) + smooth_noise(rng, h, w, scale) * 4.0
        grain = (0.5 + 0.5 * np.sin(across * (2 * np.pi / rng.uniform(3, 8)))) ** 3
        col = col * (1 - (0.3 * grain * bodiness)[..., None])
    out = bgra.copy()
    out[..., :3] = np.clip(col, 0, 255).astype(np.uint8)
    return out


def _rgb(c: Iterable[int]) -> tuple[int, int, int]:
    """Three channel values as a colour tuple (raises ValueError for any other count)."""
    r, g, b = c
    return (r, g, b)


def _luma(c: Sequence[float]) -> float:
    b, g, r = c
    return 0.114 * b + 0.587 * g + 0.299 * r


class RenderedDie(NamedTuple):
    """A die rendered on a transparent canvas (all coordinates in canvas pixels, float).

    Attributes:
        image: ``(h, w, 4)`` uint8 BGRA, straight (not premultiplied) alpha.
        anchor: ``(x, y)`` of the top face's centre — place this point where the die should be.
        box: ``(x1, y1, x2, y2)`` tight box of the whole silhouette (top face + visible sides).
        pips: ``(value, 2)`` float32 pip centres.
        face: ``(4, 2)`` float32 corners of the (unrounded) top face.
        value: the face value drawn (0 = blank face).
    """

    image: np.ndarray
    anchor: tuple[float, float]
    box: tuple[float, float, float, float]
    pips: np.ndarray
    face: np.ndarray
    value: int


def _rounded_square(radius: float, n_arc: int = 8) -> np.ndarray:
    """Outline of ``[-1, 1]²`` with corner radius ``radius`` (face units) → ``(4 * n_arc, 2)``."""
    r = float(np.clip(radius, 1e-3, 1.0))
    pts = []
    for cx, cy, a0 in ((1, 1, 0.0), (-1, 1, 90.0), (-1, -1, 180.0), (1, -1, 270.0)):
        ang = np.deg2rad(a0 + np.linspace(0.0, 90.0, n_arc))
        pts.append(np.stack([cx * (1 - r) + r * np.cos(ang), cy * (1 - r) + r * np.sin(ang)], 1))
    return np.concatenate(pts).astype(np.float64)


_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 20, endpoint=False)),
                    np.sin(np.linspace(0, 2 * np.pi, 20, endpoint=False))], 1)


def _mask(shape: tuple[int, int], polys: Sequence[np.ndarray]) -> np.ndarray:
    """Anti-aliased float32 mask in ``[0, 1]`` of filled polygons (float pixel coordinates)."""
    m = np.zeros(shape, np.uint8)
    cv2.fillPoly(m, [np.round(p * 16).astype(np.int32) for p in polys], 255, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) * (1.0 / 255.0)


def _blend(dst: np.ndarray, color: np.ndarray | Sequence[float], m: np.ndarray) -> None:
    """``dst = dst * (1 - m) + color * m`` in place (``dst`` (h, w, 3) float32, ``m`` (h, w))."""
    m3 = m[..., None]
    dst *= 1.0 - m3
    dst += np.asarray(color, np.float32) * m3


#: What a die's top face can show: pips, or a mark custom dice carry instead (issue 41: a skull for 1 and an
#: emblem for 6 on marbled dice; numeral dice).
FACE_MARKS = ("pips", "numeral", "skull", "emblem")
_MARK_SIDE = 128  # the mark is drawn on a square of this many pixels spanning the face, then warped


def _mark_mask(mark: str, value: int) -> np.ndarray:
    """``(128, 128)`` float32 0–1 mask of ``mark`` on a face spanning the square (face units ``[-1, 1]²``)."""
    m = np.zeros((_MARK_SIDE, _MARK_SIDE), np.uint8)
    if mark == "numeral":
        text = str(value)
        font, scale, thick = cv2.FONT_HERSHEY_DUPLEX, 3.0, 9
        (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
        cv2.putText(m, text, ((_MARK_SIDE - tw) // 2, (_MARK_SIDE + th) // 2), font, scale, 255, thick, cv2.LINE_AA)
    elif mark == "skull":
        cv2.circle(m, (64, 54), 34, 255, -1, cv2.LINE_AA)  # cranium
        cv2.rectangle(m, (44, 70), (84, 98), 255, -1)  # jaw
        for x in (50, 78):  # eye sockets
            cv2.circle(m, (x, 56), 10, 0, -1, cv2.LINE_AA)
        cv2.fillPoly(m, [np.array([[64, 66], [58, 78], [70, 78]], np.int32)], 0, cv2.LINE_AA)  # nose
        for x in (52, 60, 68, 76):  # teeth
            cv2.line(m, (x, 86), (x, 98), 0, 2)
    elif mark == "emblem":
        ang = np.deg2rad(np.arange(10) * 36.0 - 90.0)
        rad = np.where(np.arange(10) % 2 == 0, 50.0, 21.0)
        star = np.stack([64 + rad * np.cos(ang), 66 + rad * np.sin(ang)], 1).astype(np.int32)
        cv2.fillPoly(m, [star], 255, cv2.LINE_AA)
        cv2.circle(m, (64, 66), 56, 255, 4, cv2.LINE_AA)  # a ring around the star
    return m.astype(np.float32) / 255.0


def _warp_mark(mask: np.ndarray, lin: np.ndarray, c: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The face-space ``mask`` in canvas pixels: face units ``f = (p - 64) / 64`` go to ``lin @ f + c``."""
    half = _MARK_SIDE / 2.0
    m = np.hstack([lin / half, (np.asarray(c, np.float64) - lin @ np.array([1.0, 1.0]))[:, None]])
    out: np.ndarray = cv2.warpAffine(mask, m.astype(np.float64), (shape[1], shape[0]), flags=cv2.INTER_LINEAR)
    return out


def render_die(
    value: int,
    size_px: float = 64,
    body_color: Sequence[int] = (236, 240, 244),
    pip_color: Sequence[int] = (28, 28, 28),
    corner_radius: float = 0.18,
    rotation_deg: float = 0.0,
    rng: np.random.Generator | None = None,
    *,
    pip_radius: float = 0.09,
    translucency: float = 0.0,
    tilt: tuple[float, float] = (0.0, 0.0),
    light_deg: float = 225.0,
    shading: float = 0.3,
    glare: float = 0.0,
    bevel: float = 0.1,
    side_pips: bool = True,
    face_mark: str = "pips",
) -> RenderedDie:
    """Render one d6 seen from above (optionally slightly from the side) on a transparent canvas.

    Args:
        value: face value on top, 1–6 (0 draws a blank face — a dice-like cube without pips).
        size_px: side of the top face in pixels (≥ 4; dice are 16–250 px in real photos).
        body_color: BGR body colour.
        pip_color: BGR pip colour.
        corner_radius: corner rounding as a fraction of the side, 0–0.5.
        rotation_deg: in-plane rotation of the face, degrees counter-clockwise in the image.
        rng: source of the small random details (glare position, slight pip jitter); ``None`` =
            fixed details.
        pip_radius: pip radius as a fraction of the side.
        translucency: 0 = opaque body; up to 1 = see-through body (pips always opaque).
        tilt: ``(dx, dy)`` shift of the top face against the base, as a fraction of the side
            (0 = straight top-down view; 0.1–0.3 = a camera looking slightly from the side; the side
            faces show on the opposite side). ``|tilt|`` must be < 0.9.
        light_deg: direction the light comes *from*, degrees in image coordinates (0 = from the right,
            90 = from below, 225 = from the upper left).
        shading: strength of the light gradient across the faces, 0–1.
        glare: strength of a specular highlight on the top face, 0–1 (0 = none).
        bevel: width of the darker rounded edge of the top face, as a fraction of the half-side.
        side_pips: draw the pips of side faces that show at least 15 % of the side in height (with
            strong tilt, e.g. a cocked die). Side faces carry the four values other than ``value`` and
            ``7 - value`` (opposite faces of a d6 sum to 7), chosen with ``rng``.
        face_mark: what the top face shows (:data:`FACE_MARKS`): ``"pips"``; ``"numeral"`` (the value as a
            digit); ``"skull"`` or ``"emblem"`` (a symbol, as custom dice carry for 1 or 6). Drawn in
            ``pip_color`` in the face's own perspective; ``RenderedDie.pips`` is then empty.

    Returns:
        :class:`RenderedDie` with a BGRA image whose canvas is just large enough for the die.

    Raises:
        ValueError: ``value`` not in 0–6, ``size_px`` < 4, or ``|tilt|`` ≥ 0.9.
    """
    if value not in PIP_LAYOUTS:
        raise ValueError(f"die value must be 0-6, got {value!r}")
    if face_mark not in FACE_MARKS:
        raise ValueError(f"face_mark must be one of {', '.join(FACE_MARKS)}, got {face_mark!r}")
    s = float(size_px)
    if not s >= 4.0:
        raise ValueError(f"size_px must be >= 4, got {size_px!r}")
    tv = np.asarray(tilt, np.float64)
    tau = float(np.hypot(*tv))
    if tau >= 0.9:
        raise ValueError(f"|tilt| must be < 0.9, got {tau:.3f}")
    rng = rng if rng is not None else np.random.default_rng(0)
    h = s / 2.0
    th = math.radians(rotation_deg)
    # Face units → canvas pixels: rotate (counter-clockwise on screen = negative angle with y down),
    # scale to half-side, foreshorten along the tilt direction.
    rot = np.array([[math.cos(th), math.sin(th)], [-math.sin(th), math.cos(th)]])
    lin = rot * h
    if tau > 1e-6:
        u = tv / tau
        squash = np.eye(2) - (1.0 - math.sqrt(1.0 - tau * tau)) * np.outer(u, u)
        lin = squash @ lin
    else:
        u = np.zeros(2)
    shift = tv * s  # top face relative to the base

    outline = _rounded_square(2.0 * corner_radius)
    top = outline @ lin.T
    base = top - shift
    allp = np.concatenate([top, base])
    margin = 2.0
    lo = np.floor(allp.min(0) - margin)
    hi = np.ceil(allp.max(0) + margin)
    w_c, h_c = int(hi[0] - lo[0]), int(hi[1] - lo[1])
    c = -lo  # canvas position of the top face centre
    top += c
    base += c
    shape = (h_c, w_c)

    body = np.asarray(body_color, np.float32)
    pipc = np.asarray(pip_color, np.float32)
    la = math.radians(light_deg)
    ldir = np.array([math.cos(la), math.sin(la)])  # towards the light
    xs = np.arange(w_c, dtype=np.float32)[None, :]  # broadcast row / column: no full grids
    ys = np.arange(h_c, dtype=np.float32)[:, None]
    grad = ((xs - np.float32(c[0])) * np.float32(ldir[0] / h)
            + (ys - np.float32(c[1])) * np.float32(ldir[1] / h))  # ≈ -1.4 … 1.4 across the face

    sil = _mask(shape, [cv2.convexHull(allp.astype(np.float32)).reshape(-1, 2) - lo]) if tau > 1e-6 \
        else _mask(shape, [top])
    topm = _mask(shape, [top])

    # Side faces: darker than the top, darker still when they face away from the light.
    side_k = float(np.clip(0.62 + 0.25 * float(np.dot(-u, ldir)), 0.35, 0.9))
    side_col = body * np.float32(side_k)
    # Top face with a gentle light gradient (brighter towards the light).
    g = np.clip(1.0 + np.float32(shading * 0.18) * grad, 0.0, 2.0)[..., None]
    col = np.empty((h_c, w_c, 3), np.float32)
    col[:] = side_col
    pr = 2.0 * float(pip_radius)  # pip radius in face units
    if side_pips and tau > 0.15:
        _draw_side_pips(col, shape, value, lin, shift, c, s, pr, pipc * np.float32(side_k), rng)
    col += (body * g - col) * topm[..., None]
    # Rounded edge (bevel): a darker rim inside the top face outline.
    if bevel > 0:
        inner = _mask(shape, [(outline * (1.0 - bevel)) @ lin.T + c])
        k = max(1, int(round(s * 0.03))) * 2 + 1
        inner = cv2.GaussianBlur(inner, (k, k), 0)
        rim = topm * (1.0 - inner)
        edge_col = body * (g * np.float32(0.8))
        _blend(col, edge_col, rim * 0.8)

    # Pips: an ellipse (a circle in face units), with a darker ring on the side towards the light to
    # suggest the drilled hollow.
    jitter = 0.015
    pips_face = np.array(PIP_LAYOUTS[value] if face_mark == "pips" else (), np.float64).reshape(-1, 2)
    if face_mark != "pips" and value > 0:
        mark = _warp_mark(_mark_mask(face_mark, value), lin, c, shape)
        _blend(col, pipc, mark * topm)
        pip_total = mark * topm
    if len(pips_face):
        pips_face = pips_face + rng.normal(0.0, jitter, pips_face.shape)
    pips_img = pips_face @ lin.T + c
    if face_mark == "pips" or value == 0:
        pip_total = np.zeros(shape, np.float32)
    if len(pips_face):
        outer_polys = [(p + _CIRCLE * pr) @ lin.T + c for p in pips_face]
        pm = _mask(shape, outer_polys)
        _blend(col, pipc * 0.72 + body * 0.06, pm)
        off = np.linalg.inv(lin) @ ldir  # image direction of the light, in face units
        off *= pr * 0.2 / max(float(np.linalg.norm(off)), 1e-9)
        inner_polys = [(p - off + _CIRCLE * pr * 0.8) @ lin.T + c for p in pips_face]
        _blend(col, pipc, _mask(shape, inner_polys) * pm)
        pip_total = pm

    if glare > 0:
        gp = rng.uniform(-0.6, 0.6, 2) @ lin.T + c
        sig = h * rng.uniform(0.15, 0.35)
        # Separable Gaussian (elongated along x): an outer product of two 1-D profiles.
        bx = np.exp(-((xs - np.float32(gp[0])) ** 2) / np.float32(4 * sig * sig))
        by = np.exp(-((ys - np.float32(gp[1])) ** 2) / np.float32(2 * sig * sig))
        gk = ((np.float32(glare) * by) * bx * topm)[..., None]
        col += (255.0 - col) * gk

    body_alpha = 1.0 - 0.85 * float(np.clip(translucency, 0.0, 1.0))
    alpha = sil * body_alpha
    alpha = alpha + (1.0 - alpha) * pip_total * topm
    out = np.empty((h_c, w_c, 4), np.uint8)
    out[..., :3] = cv2.convertScaleAbs(col)  # rounds and saturates to 0–255
    out[..., 3] = cv2.convertScaleAbs(alpha, alpha=255.0)

    sq = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) @ lin.T + c
    ax = np.concatenate([top, base])
    box = (float(ax[:, 0].min()), float(ax[:, 1].min()), float(ax[:, 0].max()), float(ax[:, 1].max()))
    return RenderedDie(out, (float(c[0]), float(c[1])), box, pips_img.astype(np.float32),
                       sq.astype(np.float32), int(value))


_EDGES = (((1, 0), (0, 1)), ((0, 1), (-1, 0)), ((-1, 0), (0, -1)), ((0, -1), (1, 0)))  # (normal, tangent)


def _side_values(value: int, rng: np.random.Generator) -> list[int]:
    """Values of the four side faces around ``value`` in order (opposite faces sum to 7)."""
    if value == 0:
        return [0, 0, 0, 0]
    ring = [v for v in range(1, 7) if v not in (value, 7 - value)]
    a = ring[int(rng.integers(4))]
    b = [v for v in ring if v not in (a, 7 - a)][int(rng.integers(2))]
    return [a, b, 7 - a, 7 - b]


def _draw_side_pips(col: np.ndarray, shape: tuple[int, int], value: int, lin: np.ndarray, shift: np.ndarray,
                    c: np.ndarray, s: float, pr: float, color: np.ndarray, rng: np.random.Generator) -> None:
    """Blend the pips of the visible side faces into ``col`` (the top face is drawn over them later)."""
    values = _side_values(value, rng)
    for (n_face, t_face), v in zip(_EDGES, values):
        n_img = lin @ np.asarray(n_face, np.float64)
        height = float(np.dot(-shift, n_img / max(np.linalg.norm(n_img), 1e-9)))
        if height < 0.15 * s or v == 0:
            continue
        # Side-face units (a along the edge, b from the top edge down to the base) → canvas pixels.
        m = np.column_stack([lin @ np.asarray(t_face, np.float64), -shift / 2.0])
        origin = n_img + c - shift / 2.0
        k = int(rng.integers(4))
        rot = np.array([[0, -1], [1, 0]], np.float64)
        layout = np.array(PIP_LAYOUTS[v], np.float64).reshape(-1, 2) @ np.linalg.matrix_power(rot, k).T
        polys = [origin + (p + _CIRCLE * pr) @ m.T for p in layout]
        _blend(col, color, _mask(shape, polys))


def render_styled(
    value: int,
    style: DieStyle | str,
    rotation_deg: float = 0.0,
    rng: np.random.Generator | None = None,
    size_px: float | None = None,
    **kwargs,
) -> RenderedDie:
    """:func:`render_die` with colours and shape taken from a :class:`DieStyle` (or a ``STYLES`` name).

    ``size_px`` defaults to ``style.size_px``; other keyword arguments go to :func:`render_die`.

    Raises:
        KeyError: unknown style name.
    """
    st = STYLES[style] if isinstance(style, str) else style
    return render_die(
        value,
        st.size_px if size_px is None else size_px,
        st.body_color,
        st.pip_color,
        st.corner_radius,
        rotation_deg,
        rng,
        pip_radius=st.pip_radius,
        translucency=st.translucency,
        **({"face_mark": dict(st.marks).get(value, "pips")} | kwargs),
    )
