"""Procedural die renderer and virtual-table frames (kosti.sim.render)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from kosti.sim.render import (
    BACKGROUNDS,
    STYLES,
    WIDE_BACKGROUNDS,
    make_background,
    paste,
    random_style,
    render_die,
    render_styled,
    render_table,
    texture_body,
    wide_style,
)


def _pip_blobs(die, pip_color, body_color) -> list[tuple[float, float]]:
    """Centroids of pip-coloured blobs inside a rendered die, found from the pixels alone."""
    img = die.image[..., :3].astype(np.float32)
    d_pip = np.linalg.norm(img - np.float32(pip_color), axis=2)
    d_body = np.linalg.norm(img - np.float32(body_color), axis=2)
    # Search the top face only (its corner quad, shrunk 15 % towards the centre): side faces are shaded
    # body colour and may sit closer to a coloured pip than to the lit body.
    face = np.zeros(die.image.shape[:2], np.uint8)
    centre = die.face.mean(axis=0)
    cv2.fillConvexPoly(face, np.round(centre + (die.face - centre) * 0.85).astype(np.int32), 1)
    inside = face & (die.image[..., 3] > 0)
    mask = ((d_pip < d_body) & (inside > 0)).astype(np.uint8)
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
    return [tuple(cents[i]) for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 3]


@pytest.mark.parametrize("style", ["ivory", "black_white", "red_white", "translucent_green", "casino_red", "white_red"])
@pytest.mark.parametrize("rotation", [0.0, 23.0, 45.0, 90.0, 137.0, 270.0])
def test_every_face_shows_its_number_of_pips(style: str, rotation: float) -> None:
    st = STYLES[style]
    for value in range(0, 7):
        for size, tilt in ((40, (0.0, 0.0)), (90, (0.12, -0.18))):
            die = render_styled(value, st, rotation, np.random.default_rng(value), size_px=size, tilt=tilt)
            blobs = _pip_blobs(die, st.pip_color, st.body_color)
            assert len(blobs) == value, f"{style} value {value} rot {rotation} size {size}: {len(blobs)} blobs"
            # The reported pip centres are where the pips really are (within a pip radius).
            assert die.pips.shape == (value, 2)
            for bx, by in blobs:
                dist = np.hypot(die.pips[:, 0] - bx, die.pips[:, 1] - by).min()
                assert dist < st.pip_radius * size, (style, value, rotation, dist)


def test_two_three_and_six_turn_with_the_face() -> None:
    def layout(value: int, rotation: float) -> np.ndarray:
        die = render_die(value, 80, rotation_deg=rotation)
        return die.pips - np.float32(die.anchor)

    for value in (2, 3):
        p0, p90 = layout(value, 0.0), layout(value, 90.0)
        corner0 = p0[np.abs(p0).sum(1) > 5]
        corner90 = p90[np.abs(p90).sum(1) > 5]
        assert np.all(corner0[:, 0] * corner0[:, 1] > 0)  # top-left to bottom-right diagonal
        assert np.all(corner90[:, 0] * corner90[:, 1] < 0)  # the other diagonal
    p0, p90 = layout(6, 0.0), layout(6, 90.0)
    assert len(np.unique(np.round(p0[:, 0] / 10))) == 2 and len(np.unique(np.round(p0[:, 1] / 10))) == 3  # columns
    assert len(np.unique(np.round(p90[:, 0] / 10))) == 3 and len(np.unique(np.round(p90[:, 1] / 10))) == 2  # rows


def test_tilt_shows_side_faces_and_box_covers_silhouette() -> None:
    flat = render_die(5, 60)
    tilted = render_die(5, 60, tilt=(0.0, 0.25))
    assert tilted.box[3] - tilted.box[1] > flat.box[3] - flat.box[1] + 10  # side band below the face
    for d in (flat, tilted):
        ys, xs = np.nonzero(d.image[..., 3] > 127)
        x1, y1, x2, y2 = d.box
        assert xs.min() >= x1 - 1 and xs.max() <= x2 + 1 and ys.min() >= y1 - 1 and ys.max() <= y2 + 1
        assert xs.min() <= x1 + 2 and xs.max() >= x2 - 2  # tight, not loose


def test_translucent_body_lets_the_table_through_but_pips_stay_opaque() -> None:
    st = STYLES["translucent_green"]
    d = render_styled(1, st, 0.0, size_px=60)
    cx, cy = (int(round(v)) for v in d.pips[0])
    assert d.image[cy, cx, 3] == 255
    ax, ay = int(d.anchor[0] + 15), int(d.anchor[1] + 15)
    assert 40 < d.image[ay, ax, 3] < 200


def test_random_styles_keep_pips_in_contrast_and_are_seeded() -> None:
    a = [random_style(np.random.default_rng(i)) for i in range(50)]
    b = [random_style(np.random.default_rng(i)) for i in range(50)]
    assert a == b
    luma = lambda c: 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]  # noqa: E731
    assert all(abs(luma(s.body_color) - luma(s.pip_color)) >= 30 for s in a)


def test_render_die_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        render_die(7, 40)
    with pytest.raises(ValueError):
        render_die(3, 2)
    with pytest.raises(ValueError):
        render_die(3, 40, tilt=(0.9, 0.2))


def test_wide_styles_cover_every_kind_of_die_and_keep_pips_visible() -> None:
    styles = [wide_style(np.random.default_rng(i)) for i in range(300)]
    assert styles == [wide_style(np.random.default_rng(i)) for i in range(300)]
    luma = lambda c: 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]  # noqa: E731
    assert all(abs(luma(s.body_color) - luma(s.pip_color)) >= 45 for s in styles)
    assert {s.texture for s in styles} == {"", "marble", "wood"}
    assert sum(s.translucency > 0 for s in styles) > 20
    dark_light = [s for s in styles if luma(s.body_color) < 90 and luma(s.pip_color) > 150]
    assert len(dark_light) > 40  # light pips on dark bodies are common, not rare
    coloured_pips = [s for s in styles if max(s.pip_color) - min(s.pip_color) > 80]
    assert len(coloured_pips) > 30
    hues = {int(cv2.cvtColor(np.uint8([[s.body_color]]), cv2.COLOR_BGR2HSV)[0, 0, 0]) // 30
            for s in styles if max(s.body_color) - min(s.body_color) > 60}
    assert hues == set(range(6))  # every sixth of the hue circle


def test_texture_changes_the_body_and_keeps_the_pips() -> None:
    st = wide_style(np.random.default_rng(0))
    for texture in ("marble", "wood"):
        s = replace(st, body_color=(60, 60, 180), pip_color=(240, 240, 240), texture=texture,
                    second_color=(200, 180, 20), translucency=0.0)
        d = render_styled(6, s, 0.0, np.random.default_rng(1), size_px=80)
        out = texture_body(d.image, s, np.random.default_rng(2))
        assert out.shape == d.image.shape and np.array_equal(out[..., 3], d.image[..., 3])
        pips = np.round(d.pips).astype(int)
        body = (d.image[..., 3] > 250) & (np.abs(d.image[..., :3].astype(int) - (60, 60, 180)).sum(2) < 60)
        changed = np.abs(out[..., :3].astype(int) - d.image[..., :3].astype(int)).sum(2)
        assert changed[body].mean() > 8, texture
        assert all(changed[y, x] < 40 for x, y in pips), texture
    plain = replace(st, texture="")
    d = render_styled(3, plain, 0.0, np.random.default_rng(1), size_px=40)
    assert texture_body(d.image, plain, np.random.default_rng(2)) is d.image


@pytest.mark.parametrize("kind", WIDE_BACKGROUNDS)
def test_backgrounds_are_seeded_images(kind: str) -> None:
    a = make_background(kind, 160, 120, 5)
    assert a.shape == (120, 160, 3) and a.dtype == np.uint8
    assert np.array_equal(a, make_background(kind, 160, 120, 5))
    assert not np.array_equal(a, make_background(kind, 160, 120, 6))
    assert a.std() > 0.5  # textured, not a flat fill


def test_unknown_background_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown background"):
        make_background("marble", 10, 10)
    assert set(BACKGROUNDS) < set(WIDE_BACKGROUNDS)


def test_render_table_boxes_frame_the_dice() -> None:
    dice = [(1, 200.0, 150.0, 0.0), (4, 420.0, 300.0, 30.0), (6, 600.0, 500.0, 75.0)]
    size = (800, 600)
    frame, boxes = render_table(dice, "felt", "white_black", size=size, die_px=50, seed=3)
    empty, none = render_table([], "felt", "white_black", size=size, die_px=50, seed=3)
    assert frame.shape == (600, 800, 3) and frame.dtype == np.uint8 and none.shape == (0, 4)
    assert boxes.shape == (3, 4)
    changed = np.abs(frame.astype(int) - empty.astype(int)).max(axis=2) > 40
    for (_value, x, y, _), (x1, y1, x2, y2) in zip(dice, boxes):
        assert x1 < x < x2 and y1 < y < y2
        assert 45 <= x2 - x1 <= 85 and 45 <= y2 - y1 <= 85
        inside = changed[int(y1):int(y2), int(x1):int(x2)]
        assert inside.mean() > 0.5  # the die is really drawn there
    # Outside the boxes (and away from the soft shadows) the table is untouched.
    far = np.ones_like(changed)
    for x1, y1, x2, y2 in boxes:
        far[max(0, int(y1) - 20):int(y2) + 20, max(0, int(x1) - 20):int(x2) + 20] = False
    assert not changed[far].any()


def test_render_table_is_deterministic_and_clips_boxes() -> None:
    dice = [(3, 4.0, 4.0, 20.0), (5, 300.0, 200.0, 0.0)]
    a, ba = render_table(dice, "wood", "ivory", 6.0, size=(320, 240), seed=9)
    b, bb = render_table(dice, "wood", "ivory", 6.0, size=(320, 240), seed=9)
    assert np.array_equal(a, b) and np.array_equal(ba, bb)
    assert (ba >= 0).all() and (ba[:, [0, 2]] <= 320).all() and (ba[:, [1, 3]] <= 240).all()
    assert ba[0, 0] == 0 and ba[0, 1] == 0  # the die at the corner is cut by the frame


def test_paste_reports_coverage_and_clips() -> None:
    dst = np.zeros((50, 50, 3), np.float32)
    die = render_die(2, 30)
    assert paste(dst.copy(), die.image, 35, 35) is None
    cover = paste(dst, die.image, 35, 35, coverage=True)
    assert cover.shape == (50, 50)
    assert cover[:35, :].max() == 0 and cover[40:, 40:].max() > 0.99
    assert dst[:35, :].max() == 0 and dst[45, 45].max() > 0


@pytest.mark.parametrize("mark", ["numeral", "skull", "emblem"])
def test_a_custom_face_carries_its_mark_instead_of_pips(mark: str) -> None:
    """Issue 41: custom dice (a skull for 1, an emblem for 6, numeral dice) — the mark is drawn in the pip
    colour inside the top face, no pip is placed, and each mark looks different from the others and from pips."""
    from kosti.sim.dice import FACE_MARKS, DieStyle, render_die, render_styled

    body, ink = (170, 90, 40), (235, 235, 235)
    die = render_die(6, 96, body, ink, face_mark=mark)
    pips = render_die(6, 96, body, ink)
    assert len(die.pips) == 0 and len(pips.pips) == 6
    rgb, alpha = die.image[..., :3].astype(int), die.image[..., 3]
    inked = (np.abs(rgb - np.array(ink)).sum(-1) < 60) & (alpha > 0)
    share = inked.sum() / (alpha > 0).sum()
    assert 0.05 < share < 0.6, f"{mark}: {share:.2f} of the die in the mark's colour"
    ys, xs = np.nonzero(inked)
    x1, y1, x2, y2 = die.box
    assert xs.min() > x1 and xs.max() < x2 and ys.min() > y1 and ys.max() < y2
    others = [render_die(6, 96, body, ink, face_mark=m).image for m in FACE_MARKS if m != mark]
    assert all(np.abs(die.image.astype(int) - o.astype(int)).mean() > 3 for o in others if o.shape == die.image.shape)
    # a style's marks apply to their own faces only
    st = DieStyle("custom", body, ink, marks=((6, mark),))
    assert len(render_styled(6, st).pips) == 0 and len(render_styled(5, st).pips) == 5
    with pytest.raises(ValueError, match="face_mark"):
        render_die(6, 96, body, ink, face_mark="logo")
