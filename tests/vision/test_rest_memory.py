"""Issue 44: a long rest does not keep every frame's pixels (kosti run peaked at 357 MB with ONNX, 374 MB with NCNN,
most of it 64 buffered 1280×720 frames of a 10 s rest; ≤ 300 MB is the Pi's target). The throw detector frees the
pixels of the frames no later read can use (:meth:`ThrowDetector._drop_old_pixels`) and reads exactly the same
throws as when it kept them all."""

from __future__ import annotations

import math

import cv2
import pytest
from pipeline_helpers import WhiteSquares, cloth_frame

from kosti.vision.frame_source import Frame
from kosti.vision.throw_detector import ThrowDetector

FPS = 30


def _with_pixels(det: ThrowDetector) -> tuple[int, int]:
    """Frames of the rest and of the recent buffer that still hold pixels."""
    return (sum(f.image.size > 0 for f, _ in det._rest), sum(f.image.size > 0 for f in det._recent))


def _play(det: ThrowDetector, n: int = 420) -> tuple[list[tuple[int, list[int]]], int]:
    """The per-die scene of test_per_die.py (an arm that never stops, a fourth die landing at 5 s), then 4 s of a still
    table: the throws ``(frame, faces)`` and the most frames that held pixels at once in either buffer."""
    throws, most = [], 0
    for k in range(n):
        img = cloth_frame(100 + 3 * (k % 60) if k < 300 else None, seed=k if k < 300 else 0)
        if k >= 150:
            cv2.rectangle(img, (505, 65), (535, 95), (235, 235, 235), -1)
        r = det.process(Frame(img, k / FPS, k))
        if r.throw is not None:
            throws.append((k, sorted(d.value for d in r.throw.dice)))
        most = max(most, *_with_pixels(det))
    return throws, most


@pytest.fixture(scope="module")
def played() -> tuple[ThrowDetector, list[tuple[int, list[int]]], int]:
    """The scene played once with the pixels freed: the detector, its throws, the most frames with pixels."""
    det = ThrowDetector(WhiteSquares(), expected_dice=None)
    throws, most = _play(det)
    return det, throws, most


def test_a_long_rest_keeps_the_pixels_of_a_few_frames_only(played):
    det, throws, most = played
    assert len(det._rest) == 64 and det._rest[-1][0].image.size > 0  # 4 s still: the rest's frames are all there
    bound = 2 * det.vote_frames + math.ceil(det.turn_lag_s * FPS) + 1
    assert most <= bound, f"{most} frames held pixels at once (at most {bound} can be read again)"
    assert throws, "the scene must give throws"


def test_the_same_throws_as_when_every_frame_kept_its_pixels(played, monkeypatch):
    freed = played[1]
    monkeypatch.setattr(ThrowDetector, "_drop_old_pixels", lambda *a: None)
    kept, most = _play(ThrowDetector(WhiteSquares(), expected_dice=None))
    assert most > 60  # without the freeing, the buffers fill with pixels
    assert freed == kept and len(kept) == 2, (freed, kept)


def test_a_frame_read_after_its_pixels_were_freed_fails_loudly(played):
    det = played[0]
    old = det._rest[0][0]
    assert old.image.size == 0
    with pytest.raises(RuntimeError, match="pixels were freed"):
        det._read(old, False)
