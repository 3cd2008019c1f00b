"""Low-contrast and glint copies of classifier crops (kosti.datasets.prepare: low_contrast, specular_glint, add_copies)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kosti.datasets.prepare import add_copies, add_glint_copies, add_low_contrast_copies, low_contrast, specular_glint


def _die(body: int, pip: int) -> np.ndarray:
    crop = np.full((64, 64, 3), 200, np.uint8)  # the table
    cv2.rectangle(crop, (12, 12), (52, 52), (body,) * 3, -1)
    for c in ((22, 22), (42, 42), (32, 32)):  # a 3
        cv2.circle(crop, c, 4, (pip,) * 3, -1)
    return crop


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
    counts = add_low_contrast_copies(tmp_path, "train", share=0.5, prefixes=(), seed=1)
    assert set(counts) == {"3", "x"} and all(8 <= n <= 32 for n in counts.values()), counts
    made = sorted(p.name for p in (tmp_path / "train").rglob("lc_*.png"))
    assert len(made) == sum(counts.values())
    before = {p: p.read_bytes() for p in (tmp_path / "train").rglob("*.png")}
    assert add_low_contrast_copies(tmp_path, "train", share=0.5, prefixes=(), seed=1) == counts  # copies not copied
    assert {p: p.read_bytes() for p in (tmp_path / "train").rglob("*.png")} == before
    only_det = add_low_contrast_copies(tmp_path, "train", share=1.0, prefixes=("det_",), seed=2)
    assert only_det == {"3": 20, "x": 20}
    with pytest.raises(FileNotFoundError):
        add_low_contrast_copies(tmp_path, "val", share=0.5, prefixes=(), seed=1)
    with pytest.raises(ValueError, match="share"):
        add_low_contrast_copies(tmp_path, "train", share=1.5, prefixes=(), seed=1)


def test_glint_adds_a_soft_bright_spot_and_takes_no_light_away():
    crop = _die(body=30, pip=230)  # a black die with white pips, as byler-d6's
    for seed in range(20):
        out = specular_glint(crop, np.random.default_rng(seed))
        assert out.shape == crop.shape and out.dtype == np.uint8
        assert (out >= crop).all(), "a glint only adds light"
        brighter = out.astype(int).sum(2) - crop.astype(int).sum(2)
        assert brighter.max() > 100, "no visible spot"
        ys, xs = np.nonzero(brighter > 30)
        assert 0 < len(ys) < 0.2 * crop.shape[0] * crop.shape[1], "a spot, not a wash"
        assert 0.1 * 64 < ys.mean() < 0.9 * 64 and 0.1 * 64 < xs.mean() < 0.9 * 64, "on the die, not the corner"
        # the pips stay at least as bright as they were
        assert out[22, 22].mean() >= crop[22, 22].mean() and out[42, 42].mean() >= crop[42, 42].mean()
    same = specular_glint(crop, np.random.default_rng(3)), specular_glint(crop, np.random.default_rng(3))
    assert np.array_equal(*same)
    with pytest.raises(ValueError, match="uint8"):
        specular_glint(crop[..., 0], np.random.default_rng(0))


def test_glint_and_low_contrast_copies_are_made_from_originals_only(tmp_path):
    d = tmp_path / "train" / "4"
    d.mkdir(parents=True)
    for i in range(30):
        cv2.imwrite(str(d / f"s_{i}.png"), _die(30, 230))
    assert add_low_contrast_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1) == {"4": 30}
    assert add_glint_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1) == {"4": 30}
    names = sorted(p.name for p in d.iterdir())
    assert len(names) == 90 and not any(n.startswith(("gl_lc_", "lc_gl_", "gl_gl_", "lc_lc_")) for n in names)
    glint = cv2.imread(str(d / "gl_s_0.png"))
    assert (glint >= _die(30, 230)).all() and not np.array_equal(glint, _die(30, 230))
    with pytest.raises(ValueError, match="tag"):
        add_copies(tmp_path, "train", share=1.0, prefixes=(), seed=1, transform=specular_glint, tag="zz_")
