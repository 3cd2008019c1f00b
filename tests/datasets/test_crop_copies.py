"""Low-contrast, glint and worse-camera copies of classifier crops (kosti.datasets.prepare: low_contrast,
specular_glint, camera_degraded, add_copies)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kosti.datasets.prepare import add_copies, camera_degraded, low_contrast, specular_glint


def _die(body: int, pip: int) -> np.ndarray:
    crop = np.full((64, 64, 3), 200, np.uint8)  # the table
    cv2.rectangle(crop, (12, 12), (52, 52), (body,) * 3, -1)
    for c in ((22, 22), (42, 42), (32, 32)):  # a 3
        cv2.circle(crop, c, 4, (pip,) * 3, -1)
    return crop


def _low_contrast_copies(root, split, share, prefixes, seed):
    return add_copies(root, split, share, prefixes, seed, transform=low_contrast, tag="lc_")


def test_low_contrast_is_dimmer_and_flatter_and_keeps_the_pips():
    crop = _die(body=60, pip=230)
    for seed in range(20):
        out = low_contrast(crop, np.random.default_rng(seed))
        assert out.shape == crop.shape and out.dtype == np.uint8
        assert out.std() < 0.75 * crop.std() and out.mean() < crop.mean()
        # pips stay brighter than the body, at the same places
        assert out[32, 32].mean() > out[16, 30].mean() and out[22, 22].mean() > out[16, 30].mean()
    same = low_contrast(crop, np.random.default_rng(3)), low_contrast(crop, np.random.default_rng(3))
    assert np.array_equal(*same)
    with pytest.raises(ValueError, match="uint8"):
        low_contrast(crop.astype(np.float32), np.random.default_rng(0))


def test_copies_of_a_share_in_every_class_named_apart_and_written_once(tmp_path):
    for cls in ("3", "x"):
        (tmp_path / "train" / cls).mkdir(parents=True)
        for i in range(40):
            cv2.imwrite(str(tmp_path / "train" / cls / f"{'det' if i % 2 else 's'}_{i}.png"), _die(60, 230))
    counts = _low_contrast_copies(tmp_path, "train", share=0.5, prefixes=(), seed=1)
    assert set(counts) == {"3", "x"} and all(8 <= n <= 32 for n in counts.values()), counts
    made = sorted(p.name for p in (tmp_path / "train").rglob("lc_*.png"))
    assert len(made) == sum(counts.values())
    before = {p: p.read_bytes() for p in (tmp_path / "train").rglob("*.png")}
    assert _low_contrast_copies(tmp_path, "train", share=0.5, prefixes=(), seed=1) == counts  # copies not copied
    assert {p: p.read_bytes() for p in (tmp_path / "train").rglob("*.png")} == before
    only_det = _low_contrast_copies(tmp_path, "train", share=1.0, prefixes=("det_",), seed=2)
    assert only_det == {"3": 20, "x": 20}
    with pytest.raises(FileNotFoundError):
        _low_contrast_copies(tmp_path, "val", share=0.5, prefixes=(), seed=1)
    with pytest.raises(ValueError, match="share"):
        _low_contrast_copies(tmp_path, "train", share=1.5, prefixes=(), seed=1)


def test_glint_adds_a_soft_bright_spot_and_takes_no_light_away():
    crop = _die(body=30, pip=230)  # a black die with white pips, as byler-d6's
    flat = np.full((64, 64, 3), 30, np.uint8)  # the same draws on a flat dark crop show the spot alone
    for seed in range(40):
        out = specular_glint(crop, np.random.default_rng(seed))
        assert out.shape == crop.shape and out.dtype == np.uint8
        assert (out >= crop).all(), "a glint only adds light"
        gain = specular_glint(flat, np.random.default_rng(seed)).astype(int).sum(2) - 3 * 30
        assert 0.7 * 3 * (235 - 30) - 3 <= gain.max() <= 3 * (255 - 30), "peak weight 0.7-1 toward white"
        y, x = np.unravel_index(gain.argmax(), gain.shape)
        assert 0.2 * 64 - 1 <= x <= 0.8 * 64 + 1 and 0.2 * 64 - 1 <= y <= 0.8 * 64 + 1, "centre in the middle 60 %"
        half = (gain >= gain.max() / 2).sum()  # a Gaussian's half-max area: pi * a * b * 2 ln 2
        assert 3 <= half <= np.pi * 6.4 * 6.4 * 2 * np.log(2) + 8, f"a spot of the stated size, not a wash: {half}"
    same = specular_glint(crop, np.random.default_rng(3)), specular_glint(crop, np.random.default_rng(3))
    assert np.array_equal(*same)
    with pytest.raises(ValueError, match="uint8"):
        specular_glint(crop[..., 0], np.random.default_rng(0))


def test_glint_and_low_contrast_copies_are_made_from_originals_only(tmp_path):
    d = tmp_path / "train" / "4"
    d.mkdir(parents=True)
    for i in range(30):
        cv2.imwrite(str(d / f"s_{i}.png"), _die(30, 230))
    assert _low_contrast_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1) == {"4": 30}
    assert add_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1, transform=specular_glint, tag="gl_") == {"4": 30}
    assert len(list(d.iterdir())) == 90  # 30 originals, one copy of each per kind, no copy of a copy
    glint = cv2.imread(str(d / "gl_s_0.png"))
    assert (glint >= _die(30, 230)).all() and not np.array_equal(glint, _die(30, 230))
    with pytest.raises(ValueError, match="tag"):
        add_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1, transform=specular_glint, tag="zz_")


def test_a_worse_camera_changes_the_crop_but_not_the_face():
    crop = _die(body=0, pip=255)
    crop[12:53, 12:53] = np.where(crop[12:53, 12:53] == 0, np.array([40, 40, 200], np.uint8), crop[12:53, 12:53])
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    assert grey[32, 32] > 200 and grey[16, 30] < 100  # a red die with white pips
    changed = 0
    for seed in range(200):
        out = camera_degraded(crop, np.random.default_rng(seed))
        assert out.shape == crop.shape and out.dtype == np.uint8
        changed += not np.array_equal(out, crop)
        g = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY).astype(int)
        body = g[14:19, 26:34].mean()
        for y, x in ((22, 22), (42, 42), (32, 32)):  # each pip still lighter than the body: the face is kept
            assert g[y, x] > body + 25, (seed, (y, x), g[y, x], body)
    assert changed >= 197
    same = camera_degraded(crop, np.random.default_rng(5)), camera_degraded(crop, np.random.default_rng(5))
    assert np.array_equal(*same)
    with pytest.raises(ValueError, match="uint8"):
        camera_degraded(crop.astype(np.float32), np.random.default_rng(0))
