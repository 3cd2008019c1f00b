"""Rendered classifier crops of reader v2 (``kosti.datasets.rendered_crops``): faces that are no pip face go half to
``x`` and half to random faces (outlier exposure), plain overhead dice to their face's folder, every crop the
classifier's 64 × 64, seeded."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from kosti.datasets.rendered_crops import overhead_plain_crops, unknown_face_crops


def _crops(folder: Path) -> list[np.ndarray]:
    return [cv2.imread(str(p)) for p in sorted(folder.glob("*.png"))]


def test_unknown_faces_all_in_x(tmp_path: Path):
    n = unknown_face_crops(tmp_path, "train", 24, seed=3, x_share=1.0)
    crops = _crops(tmp_path / "train" / "x")
    assert n == len(crops) >= 24
    assert all(c.shape == (64, 64, 3) for c in crops)
    assert any("poly" in p.name for p in (tmp_path / "train" / "x").glob("*.png"))  # d8 / d10 faces too
    assert not any(list((tmp_path / "train" / str(v)).glob("*.png")) for v in range(1, 7))  # no pip face written
    # a crop shows something: not a flat patch of table
    assert min(float(c.std()) for c in crops) > 5.0


def test_unknown_faces_half_x_the_rest_spread_over_the_faces(tmp_path: Path):
    n = unknown_face_crops(tmp_path, "train", 240, seed=5)
    per = {c: len(list((tmp_path / "train" / c).glob("*.png"))) for c in ["1", "2", "3", "4", "5", "6", "x"]}
    assert sum(per.values()) == n >= 240
    assert 0.4 < per["x"] / n < 0.6
    assert all(per[str(v)] > 0 for v in range(1, 7))  # outlier exposure: every face gets some
    with pytest.raises(ValueError, match="x_share"):
        unknown_face_crops(tmp_path, "train", 1, x_share=1.5)


def test_overhead_plain_dice_go_to_their_face(tmp_path: Path):
    counts = overhead_plain_crops(tmp_path, "train", 6, seed=4)
    for face, n in counts.items():
        assert len(list((tmp_path / "train" / face).glob("*.png"))) == n
    assert sum(counts.values()) >= 18 and sum(n > 0 for n in counts.values()) >= 4
    again = overhead_plain_crops(tmp_path / "again", "train", 6, seed=4)
    assert again == counts
    first = _crops(tmp_path / "train" / "6") or _crops(tmp_path / "train" / "5")
    second = _crops(tmp_path / "again" / "train" / "6") or _crops(tmp_path / "again" / "train" / "5")
    assert np.array_equal(first[0], second[0])  # seeded: the same crops again
