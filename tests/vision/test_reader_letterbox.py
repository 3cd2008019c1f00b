"""Letterbox and box mapping: identical to Ultralytics' LetterBox / scale_boxes, and invertible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kosti.vision.letterbox import boxes_to_image, boxes_to_letterbox, letterbox, letterbox_params

shapes = st.tuples(st.integers(1, 1400), st.integers(1, 1400))
sizes = st.sampled_from([64, 320, 480, 640, (384, 640)])


@settings(max_examples=40, deadline=None)
@given(shape=shapes, size=sizes, seed=st.integers(0, 2**31 - 1))
def test_letterbox_equals_ultralytics(shape, size, seed):
    from ultralytics.data.augment import LetterBox

    img = np.random.default_rng(seed).integers(0, 256, (*shape, 3), dtype=np.uint8)
    ours, params = letterbox(img, size)
    theirs = LetterBox(size, auto=False, center=True, padding_value=114)(image=img)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)
    assert params.new_shape == ours.shape[:2]


@settings(max_examples=60, deadline=None)
@given(shape=shapes, size=sizes, seed=st.integers(0, 2**31 - 1))
def test_boxes_to_image_equals_scale_boxes(shape, size, seed):
    from ultralytics.utils.ops import scale_boxes

    rng = np.random.default_rng(seed)
    p = letterbox_params(shape, size)
    nh, nw = p.new_shape
    xy = rng.uniform(0, [nw, nh, nw, nh], (8, 4)).astype(np.float32)
    boxes = np.concatenate([np.minimum(xy[:, :2], xy[:, 2:]), np.maximum(xy[:, :2], xy[:, 2:])], 1)
    ours = boxes_to_image(boxes, p)
    theirs = scale_boxes((nh, nw), boxes.copy(), shape)
    np.testing.assert_allclose(ours, theirs, atol=1e-3)


@settings(max_examples=60, deadline=None)
@given(shape=st.tuples(st.integers(16, 1400), st.integers(16, 1400)), size=sizes, seed=st.integers(0, 2**31 - 1))
def test_round_trip(shape, size, seed):
    """Frame → letterbox → frame returns the same boxes (to float precision)."""
    rng = np.random.default_rng(seed)
    h, w = shape
    xy = rng.uniform(0, [w, h, w, h], (10, 4))
    boxes = np.concatenate([np.minimum(xy[:, :2], xy[:, 2:]), np.maximum(xy[:, :2], xy[:, 2:])], 1)
    p = letterbox_params(shape, size)
    back = boxes_to_image(boxes_to_letterbox(boxes, p), p)
    np.testing.assert_allclose(back, boxes, atol=1e-3 * max(shape))


def test_known_geometry_1280x720_to_640():
    """1280×720 → 640×360 content, 140 px of grey above and below."""
    img = np.full((720, 1280, 3), 255, np.uint8)
    out, p = letterbox(img, 640)
    assert out.shape == (640, 640, 3)
    assert (p.pad_left, p.pad_top) == (0, 140)
    assert p.gain_x == p.gain_y == 0.5
    assert (out[:140] == 114).all() and (out[500:] == 114).all() and (out[140:500] == 255).all()
    np.testing.assert_allclose(boxes_to_image([[0, 140, 640, 500]], p), [[0, 0, 1280, 720]])


def test_letterbox_rejects_empty_image():
    with pytest.raises(ValueError):
        letterbox(np.zeros((0, 10, 3), np.uint8), 640)
