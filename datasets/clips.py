"""Seeded test clips of throws on a real table: a shaking camera, spinning and tipping dice, hands.

``kosti datasets clips --out DIR`` writes one short video per scenario (MJPG ``.avi``, 30 fps) and
``DIR/clips.json``, the truth: for every clip the dice count to expect (``--dice`` of ``kosti watch``)
and the throws it must give — faces, status, and ``rest_s``, the media time at which the last die
stopped (the watcher must read the throw at or after it, within 0.5 s). Every clip is a pure function
of ``(seed, clip name)``: same seed, same frames (MJPG encoding is deterministic for one OpenCV build).

Scenarios (issue 13), drawn with the virtual table renderer (:func:`kosti.sim.render.render_table`)
at 640×360 — 25 px dice, as a webcam 60–80 cm above a table at 720p shows them at half scale:

* ``shake`` — a camera that never stops moving: 0.5–3 px a frame, rotating up to ±0.6°, exposure
  flicker of ±3 %, and a 10 px drift of the camera while a hand passes over the settled dice;
* ``shake_real`` — the same camera over photos of real throws (``byler-d6`` test photos, their labels
  as truth) with a synthetic hand between them (needs ``../shared/datasets``);
* ``spin`` — a die keeps turning on one corner at 60°/s for 1.6 s after the others stopped;
* ``tip`` — a die tips onto another face 1.2 s after the throw settled and was read (one throw,
  corrected);
* ``palm`` — dice held still on an open palm over the tray for 1.5 s, then thrown;
* ``hand_rest`` — a hand rests over the tray beside the settled dice, then leaves;
* ``pickup`` — a hand picks up two dice and puts them back;
* ``push`` — a die slowly pushed across the felt after the throw was read;
* ``leave`` — one of five dice rolls out of the frame (4 dice read, the throw uncertain);
* ``rethrow`` — three throws in quick succession, 0.7 s of rest between them;
* ``end`` — the clip ends 0.3 s after the dice stopped (a rest shorter than the still time: read at
  the end, flagged);
* ``fixed`` — a fixed camera: two throws and a hand passing over settled dice (what already worked).

Issue 40, the motions of real tables (the measure is the real footage of ``../shared/clips/real-throws``; these are
its regression tests):

* ``pickup_rethrow`` — a die picked up (out of the picture for 0.4 s) and thrown again to another face near where
  it lay: two throws, no correction;
* ``short_rest_arm`` — the dice rest 0.5 s while the arm's shadow creeps over the cloth towards them, then the hand
  sweeps them away: read before the hand comes;
* ``arm_edge`` — an arm lies at the edge of the view, fidgeting, the whole time the dice roll and rest;
* ``shadow`` — a person's shadow crosses the cloth away from the dice during the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kosti.datasets.clip_scenes import (
    FPS,
    SIZE,
    SKIN,
    Camera,
    Clip,
    Hand,
    Pose,
    Renderer,
    Scene,
    Shadow,
    draw_hand,
    draw_shadow,
    expect,
    frames,
    place,
    tumble,
)
from kosti.vision.yolo_labels import read_labels

__all__ = ["DEFAULT_REAL_ROOT", "FPS", "REAL_PHOTOS", "SCENARIOS", "SIZE", "SKIN", "Camera", "Clip", "Hand", "Pose",
           "Renderer", "Scene", "Shadow", "build", "draw_hand", "draw_shadow", "expect", "frames", "place",
           "tip_clip", "tumble", "write"]

#: Default shared data folder (``../shared/datasets`` of the checkout).
DEFAULT_REAL_ROOT = Path(__file__).resolve().parents[2] / "shared" / "datasets"
#: Real photos replayed in ``shake_real``: byler-d6 test photos of 2–5 dice whose labels were checked
#: by eye (none of the label errors listed in tests/vision/test_pipeline.py).
REAL_PHOTOS = ("IMG_20191208_112014", "IMG_20191208_112431", "IMG_20191209_095625")


# ---------------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------------
def _shake(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 1])
    a = place(rng, 5)
    b = place(rng, 5)
    ta = tumble(a, 0.2, 0.8, rng)
    tb = tumble(b, 3.2, 0.8, rng)

    def scene(t: float) -> Scene:
        if t < 3.2:
            dice, blur = ta(t)
            hand = None
            if 2.0 <= t < 2.8:  # a hand passes over the settled dice while the camera drifts 10 px
                p = (t - 2.0) / 0.8
                hand = Hand(SIZE[0] * (1.1 - 1.2 * p), SIZE[1] * 0.55, 180.0, 70.0)
            return Scene(dice, blur, hand)
        dice, blur = tb(t)
        return Scene(dice, blur)

    return Clip("shake", 4.6, scene, [expect(a, 1.0), expect(b, 4.0)], shake=3.0, drift=[(2.0, 2.8, 10.0)],
                description="camera shaking 0.5-3 px/frame, rotating, exposure flicker; a hand passes while "
                            "the camera drifts 10 px")


def _spin(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 2])
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    spin_end = 2.6

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if 1.0 <= t:  # die 0 keeps turning on the spot at 60 deg/s until spin_end
            d0 = a[0]
            ang = d0.angle + 60.0 * (min(t, spin_end) - 1.0)
            dice = [Pose(d0.face, d0.x, d0.y, ang)] + dice[1:]
        return Scene(dice, blur)

    final = [Pose(a[0].face, a[0].x, a[0].y, a[0].angle + 60.0 * (spin_end - 1.0))] + a[1:]
    return Clip("spin", 3.6, scene, [expect(final, spin_end)], shake=1.0,
                description="one die spins in place at 60 deg/s for 1.6 s after the others stopped")


def _tip(seed: int, t_tip: float = 2.2) -> Clip:
    rng = np.random.default_rng([seed, 3])
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    d0 = a[0]
    new_face = {1: 2, 2: 3, 3: 5, 4: 5, 5: 4, 6: 2}[d0.face]  # a neighbour face, never the opposite one
    side = 0.07 * SIZE[1]
    tipped = Pose(new_face, d0.x + 0.7 * side, d0.y + 0.2 * side, d0.angle + 12.0)
    dur = 0.2

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if t >= t_tip:
            p = min(1.0, (t - t_tip) / dur)
            d = tipped if p >= 1.0 else Pose(d0.face if p < 0.5 else new_face, d0.x + (tipped.x - d0.x) * p,
                                             d0.y + (tipped.y - d0.y) * p, d0.angle + 40.0 * p)
            dice = [d] + dice[1:]
        return Scene(dice, blur)

    return Clip("tip", max(3.6, t_tip + 1.4), scene, [expect([tipped] + a[1:], t_tip + dur, corrects=True)],
                shake=1.0, description=f"a die tips onto another face {t_tip - 1.0:.1f} s after the throw settled: "
                                       "one throw, corrected")


def _palm(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 4])
    w, h = SIZE
    palm = Hand(0.45 * w, 0.5 * h, 200.0, 90.0, open=True)
    held = [Pose(int(rng.integers(1, 7)), palm.x + dx, palm.y + dy, float(rng.uniform(0, 90)))
            for dx, dy in ((-22, -14), (6, 16), (20, -18))]
    a = place(rng, 3)
    t_in = tumble(a, 2.2, 0.8, rng)

    def scene(t: float) -> Scene:
        if t < 0.5:  # the hand comes in from the right with the dice on its palm
            p = t / 0.5
            dx = (1.0 - p) * 0.7 * w
            hand = Hand(palm.x + dx, palm.y, palm.angle, palm.size, True)
            return Scene([], 0.0, hand, [Pose(d.face, d.x + dx, d.y, d.angle) for d in held])
        if t < 2.2:  # held still over the tray
            return Scene([], 0.0, palm, held)
        dice, blur = t_in(t)
        if t < 2.6:  # the hand withdraws while the dice tumble
            p = (t - 2.2) / 0.4
            return Scene(dice, blur, Hand(palm.x + p * 0.8 * w, palm.y, palm.angle, palm.size))
        return Scene(dice, blur)

    return Clip("palm", 4.0, scene, [expect(a, 3.0)], dice=3, shake=1.0,
                description="three dice held still on an open palm over the tray for 1.7 s, then thrown")


def _hand_rest(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 5])
    w, h = SIZE
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    rest = Hand(0.62 * w, 0.5 * h, 180.0, 80.0)

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if 1.8 <= t < 2.2:
            p = (t - 1.8) / 0.4
            return Scene(dice, blur, Hand(rest.x + (1 - p) * 0.6 * w, rest.y, 180.0, rest.size))
        if 2.2 <= t < 3.8:
            return Scene(dice, blur, rest)
        if 3.8 <= t < 4.2:
            p = (t - 3.8) / 0.4
            return Scene(dice, blur, Hand(rest.x + p * 0.6 * w, rest.y, 180.0, rest.size))
        return Scene(dice, blur)

    return Clip("hand_rest", 4.8, scene, [expect(a, 1.0)], shake=1.0,
                description="a hand rests over the tray (partly over the dice) for 1.6 s after the throw")


def _pickup(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 6])
    w, h = SIZE
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    picked = sorted(range(5), key=lambda i: -a[i].x)[:2]  # the two right-most dice

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if t < 1.8:
            return Scene(dice, blur)
        gone = 2.2 <= t < 3.6
        left = [d for i, d in enumerate(a) if not (gone and i in picked)]
        target = a[picked[0]]
        if 1.8 <= t < 2.6 or 3.2 <= t < 4.0:  # the hand reaches in, picks up / puts back, leaves
            p = ((t - 1.8) if t < 2.6 else (t - 3.2)) / 0.8
            x = target.x + abs(1 - 2 * p) * 0.6 * w
            return Scene(left, 0.0, Hand(x, target.y, 180.0, 75.0))
        return Scene(left, 0.0)

    return Clip("pickup", 4.6, scene, [expect(a, 1.0)], shake=1.0,
                description="a hand picks up two dice and puts them back where they lay")


def _push(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 7])
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    d0 = a[0]
    t0, t1, dist = 1.8, 2.8, 30.0

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if t >= t0:
            p = min(1.0, (t - t0) / (t1 - t0))
            dice = [Pose(d0.face, d0.x + dist * p, d0.y, d0.angle)] + dice[1:]
        return Scene(dice, blur)

    return Clip("push", 3.6, scene, [expect(a, 1.0)], shake=1.0,
                description="after the throw was read, a die slides 30 px over 1 s (same face): no new throw")


def _leave(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 8])
    w, h = SIZE
    a = place(rng, 4)
    gone = Pose(int(rng.integers(1, 7)), -0.1 * w, 0.5 * h, 0.0)  # rolls out over the left edge
    t_in = tumble(a + [gone], 0.2, 0.8, rng, stop=[0.8, 0.8, 0.8, 0.8, 0.7])
    return Clip("leave", 2.2, lambda t: Scene(*t_in(t)), [expect(a, 1.0, status="uncertain")], shake=1.0,
                description="one of five dice rolls out of the frame: four dice read, the throw uncertain")


def _rethrow(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 9])
    throws = [place(rng, 5) for _ in range(3)]
    starts = [0.2, 1.7, 3.2]
    tumbles = [tumble(d, s, 0.8, rng) for d, s in zip(throws, starts)]

    def scene(t: float) -> Scene:
        k = max(i for i, s in enumerate(starts) if t >= s or i == 0)
        dice, blur = tumbles[k](t)
        return Scene(dice, blur)

    return Clip("rethrow", 4.6, scene, [expect(d, s + 0.8) for d, s in zip(throws, starts)], shake=1.0,
                description="three throws in quick succession, 0.7 s of rest between them")


def _end(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 10])
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    return Clip("end", 1.35, lambda t: Scene(*t_in(t)), [expect(a, 1.0, short_rest=True)], shake=1.0,
                description="the clip ends 0.3 s after the dice stopped")


def _fixed(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 11])
    a, b = place(rng, 5), place(rng, 5)
    ta, tb = tumble(a, 0.2, 0.8, rng), tumble(b, 2.9, 0.8, rng)

    def scene(t: float) -> Scene:
        if t < 2.9:
            dice, blur = ta(t)
            hand = Hand(SIZE[0] * (1.1 - 1.2 * (t - 1.8) / 0.7), SIZE[1] * 0.5, 180.0, 75.0) if 1.8 <= t < 2.5 else None
            return Scene(dice, blur, hand)
        return Scene(*tb(t))

    return Clip("fixed", 4.2, scene, [expect(a, 1.0), expect(b, 3.7)],
                description="a fixed camera: two throws, a hand passing over the settled dice")


def _shake_real(seed: int, root: Path) -> Clip:
    """byler-d6 test photos as the table, a hand sweep between them, the shaking camera."""
    from kosti.sim.replay import transition_frame

    folder = root / "byler-d6"
    photos, truth = [], []
    for stem in REAL_PHOTOS:
        img = cv2.imread(str(folder / "images" / "test" / f"{stem}.jpg"))
        if img is None:
            raise FileNotFoundError(f"shared photo missing: {folder / 'images' / 'test' / stem}.jpg")
        photos.append(img)
        _, faces = read_labels(folder / "labels" / "test" / f"{stem}.txt", img.shape[1], img.shape[0])
        truth.append(sorted(faces.tolist()))
    hold, trans = 1.4, 0.5
    blank = np.full_like(photos[0], 90)
    cache: dict[tuple[int, int], np.ndarray] = {}

    def scene(t: float) -> Scene:
        k, r = int(t // (hold + trans)), t % (hold + trans)
        k = min(k, len(photos) - 1)
        if r < trans:
            key = (k, int(r * FPS))
            if key not in cache:
                cache[key] = transition_frame(photos[k - 1] if k else blank, photos[k], (r + 0.5 / FPS) / trans)
            return Scene([], photo=cache[key])
        return Scene([], photo=photos[k])

    h, w = photos[0].shape[:2]
    expected = [{"faces": f, "rest_s": round(k * (hold + trans) + trans, 3), "status": "ok"}
                for k, f in enumerate(truth)]
    return Clip("shake_real", len(photos) * (hold + trans), scene, expected, dice=None, shake=3.0, size=(w, h),
                description="real photos of throws (byler-d6 test) under the shaking camera")


def _place_away(rng: np.random.Generator, n: int, x: tuple[float, float], y: tuple[float, float]) -> list[Pose]:
    """``n`` resting dice at least 2.2 sides apart with centres in the ``x`` and ``y`` ranges (fractions of the
    frame), random faces and angles."""
    w, h = SIZE
    side = 0.07 * h
    out: list[Pose] = []
    for _ in range(n):
        for _ in range(500):
            px, py = rng.uniform(x[0] * w, x[1] * w), rng.uniform(y[0] * h, y[1] * h)
            if all(math.hypot(px - d.x, py - d.y) > 2.2 * side for d in out):
                break
        out.append(Pose(int(rng.integers(1, 7)), float(px), float(py), float(rng.uniform(0, 90))))
    return out


def _pickup_rethrow(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 12])
    a = place(rng, 5)
    t_in = tumble(a, 0.2, 0.8, rng)
    d0 = a[0]
    side = 0.07 * SIZE[1]
    new_face = {1: 3, 2: 6, 3: 1, 4: 6, 5: 6, 6: 4}[d0.face]
    landed = Pose(new_face, d0.x + 0.8 * side, d0.y + 0.3 * side, d0.angle + 25.0)
    t_up, t_drop, dur = 2.6, 3.0, 0.5  # picked up (out of the picture), dropped again, rolling for dur

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if t < t_up:
            return Scene(dice, blur)
        if t < t_drop:
            return Scene(dice[1:], 0.0)
        p = min(1.0, (t - t_drop) / dur)
        r = np.random.default_rng([seed, 13, int(t * FPS)])
        face = new_face if p >= 0.8 else int(r.integers(1, 7))
        hop = abs(math.sin(2 * math.pi * p)) * (1 - p) * 0.5 * side
        die = landed if p >= 1.0 else Pose(face, d0.x + (landed.x - d0.x) * p, d0.y + (landed.y - d0.y) * p - hop,
                                           d0.angle + 400.0 * p)
        return Scene([die] + dice[1:], 2.0 * (1 - p) if p < 1.0 else 0.0)

    return Clip("pickup_rethrow", 4.2, scene, [expect(a, 1.0), expect([landed] + a[1:], t_drop + dur)], shake=1.0,
                description="a die picked up (out of the picture for 0.4 s) and thrown again to another face near "
                            "where it lay: two throws, no correction")


def _short_rest_arm(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 14])
    w, h = SIZE
    a = _place_away(rng, 5, (0.45, 0.85), (0.25, 0.75))
    t_in = tumble(a, 0.2, 0.8, rng)
    left = min(d.x for d in a) - 0.07 * h  # the dice's left edge
    t_hand, t_gone = 1.5, 1.9  # the hand reaches the dice 0.5 s into the rest and sweeps them out of the picture

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        shadows: list[Shadow] = []
        if 0.9 <= t:  # the arm's shadow creeps in from the left edge, its soft edge reaching the dice at t_hand
            p = min(1.0, (t - 0.9) / (t_hand - 0.9))
            shadows = [Shadow(-0.25 * w + (left - 10.0) * p, 0.5 * h, 0.25 * w, 0.3 * h, 0.3, 30.0)]
        if t < t_hand:
            return Scene(dice, blur, shadows=shadows)
        p = min(1.0, (t - t_hand) / (t_gone - t_hand))
        x = -0.2 * w + (1.3 * w) * p
        swept = [d for d in dice if d.x > x + 75.0]  # the dice under the palm and fingers go with the hand
        hand = Hand(x, 0.5 * h, 0.0, 80.0) if p < 1.0 else None
        return Scene(swept if p < 1.0 else [], 0.0, hand, shadows=shadows if p < 1.0 else [])

    return Clip("short_rest_arm", 2.6, scene, [expect(a, 1.0)], shake=1.0,
                description="the dice rest 0.5 s while the arm's shadow creeps towards them, then the hand sweeps "
                            "them away: read before the hand comes")


def _arm_edge(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 15])
    w, h = SIZE
    a = _place_away(rng, 5, (0.12, 0.6), (0.2, 0.8))
    t_in = tumble(a, 0.2, 0.8, rng)

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        # an arm in from the right edge, its hand fidgeting 1.3 die sides from the nearest die at the closest
        dx = 18.0 * math.sin(2 * math.pi * 1.1 * t)
        dy = 10.0 * math.sin(2 * math.pi * 0.7 * t + 1.0)
        return Scene(dice, blur, Hand(0.9 * w + dx, 0.3 * h + dy, 200.0, 70.0))

    return Clip("arm_edge", 2.6, scene, [expect(a, 1.0)], shake=1.0,
                description="an arm lies at the edge of the view, fidgeting, the whole time the dice roll and rest")


def _shadow(seed: int) -> Clip:
    rng = np.random.default_rng([seed, 16])
    w, h = SIZE
    a = _place_away(rng, 5, (0.12, 0.88), (0.55, 0.85))
    t_in = tumble(a, 0.2, 0.8, rng)
    t0, t1 = 0.8, 2.6

    def scene(t: float) -> Scene:
        dice, blur = t_in(t)
        if not t0 <= t < t1:
            return Scene(dice, blur)
        p = (t - t0) / (t1 - t0)  # a person walks past: their shadow crosses the top of the cloth
        return Scene(dice, blur, shadows=[Shadow(-0.3 * w + 1.6 * w * p, 0.15 * h, 0.25 * w, 0.16 * h, 0.35, 25.0)])

    return Clip("shadow", 3.0, scene, [expect(a, 1.0)], shake=1.0,
                description="a person's shadow crosses the cloth away from the dice during the rest")


def tip_clip(seed: int = 1, t_tip: float = 2.2) -> Clip:
    """The ``tip`` clip with the die tipping at ``t_tip`` seconds (the dice stop at 1.0 s; the suite's clip: 2.2)."""
    return _tip(seed, t_tip)


#: Clip builders by name (virtual table); ``shake_real`` is added when the shared photos are there.
SCENARIOS: dict[str, Callable[[int], Clip]] = {
    "shake": _shake, "spin": _spin, "tip": _tip, "palm": _palm, "hand_rest": _hand_rest, "pickup": _pickup,
    "push": _push, "leave": _leave, "rethrow": _rethrow, "end": _end, "fixed": _fixed,
    "pickup_rethrow": _pickup_rethrow, "short_rest_arm": _short_rest_arm, "arm_edge": _arm_edge, "shadow": _shadow,
}


def build(seed: int = 1, real_root: Path | None = DEFAULT_REAL_ROOT, names: list[str] | None = None) -> list[Clip]:
    """The clips of the suite (``names`` restricts them). ``shake_real`` needs ``real_root/byler-d6``.

    Raises:
        ValueError: an unknown clip name.
        FileNotFoundError: ``shake_real`` asked for by name and the shared photos are missing.
    """
    wanted = list(names) if names else [*SCENARIOS, "shake_real"]
    unknown = [n for n in wanted if n not in SCENARIOS and n != "shake_real"]
    if unknown:
        raise ValueError(f"unknown clip {unknown[0]!r}; clips: {', '.join([*SCENARIOS, 'shake_real'])}")
    out = []
    for n in wanted:
        if n == "shake_real":
            if real_root is None or not (Path(real_root) / "byler-d6" / "images" / "test").is_dir():
                if names:
                    raise FileNotFoundError(f"shake_real needs {real_root}/byler-d6 (the shared photos)")
                continue
            out.append(_shake_real(seed, Path(real_root)))
        else:
            out.append(SCENARIOS[n](seed))
    return out


def write(out: Path | str, seed: int = 1, real_root: Path | None = DEFAULT_REAL_ROOT,
          names: list[str] | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Write the clips as ``OUT/<name>.avi`` (MJPG, 30 fps) and the truth ``OUT/clips.json``.

    ``clips.json``: ``{"seed", "fps", "clips": [{"name", "file", "frames", "size", "dice", "shake_px",
    "description", "throws": [{"faces", "rest_s", "status", ...}]}]}``.

    Raises:
        FileExistsError: ``out`` holds files and ``overwrite`` is False.
        OSError: the video cannot be written.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"{out} is not empty (use --overwrite)")
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"seed": seed, "fps": FPS, "clips": []}
    for clip in build(seed, real_root, names):
        path = out / f"{clip.name}.avi"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), FPS, clip.size)
        if not writer.isOpened():
            raise OSError(f"cannot write {path} (no MJPG encoder in this OpenCV build)")
        n = 0
        try:
            for img in frames(clip, seed):
                writer.write(img)
                n += 1
        finally:
            writer.release()
        manifest["clips"].append({
            "name": clip.name, "file": path.name, "frames": n, "size": list(clip.size), "dice": clip.dice,
            "shake_px": clip.shake, "description": clip.description, "throws": clip.expected,
        })
    (out / "clips.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
