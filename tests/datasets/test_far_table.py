"""``kosti.datasets.far_table.tiled_frame``: labelled photos laid out n × n, labels moved with them."""

from __future__ import annotations

import numpy as np
import pytest

from kosti.datasets.far_table import tiled_frame


def _photo(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    img = np.full((40, 60, 3), 10 * k, np.uint8)
    return img, np.array([[5, 6, 15, 16]], np.float32), np.array([k % 6 + 1], np.int8)


def test_photos_go_row_by_row_and_their_boxes_with_them():
    frame, boxes, faces = tiled_frame([_photo(k) for k in range(4)], 2)
    assert frame.shape == (80, 120, 3) and frame.dtype == np.uint8
    assert (frame[0, 0] == 0).all() and (frame[0, 60] == 10).all() and (frame[40, 0] == 20).all()
    assert (frame[79, 119] == 30).all()
    assert boxes.tolist() == [[5, 6, 15, 16], [65, 6, 75, 16], [5, 46, 15, 56], [65, 46, 75, 56]]
    assert faces.tolist() == [1, 2, 3, 4] and boxes.dtype == np.float32 and faces.dtype == np.int8


def test_a_wrong_count_or_mixed_sizes_are_refused():
    with pytest.raises(ValueError, match="3 photos for a 2x2 frame"):
        tiled_frame([_photo(k) for k in range(3)], 2)
    odd = [_photo(k) for k in range(4)]
    odd[3] = (np.zeros((41, 60, 3), np.uint8), odd[3][1], odd[3][2])
    with pytest.raises(ValueError, match="differ in size"):
        tiled_frame(odd, 2)
