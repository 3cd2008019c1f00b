"""``[source] rotate``: every frame turned before anything reads it, and zones turned with the picture."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kosti.vision.sources import SourceError, check_rotation, open_source, rotate_frame
from kosti.vision.zones import Zones

W, H = 160, 90


def _marked() -> np.ndarray:
    """A ``(H, W, 3)`` frame, grey, with a white pixel at ``(x 3, y 1)``."""
    img = np.full((H, W, 3), 50, np.uint8)
    img[1, 3] = 255
    return img


@pytest.mark.parametrize("degrees, shape, at", [(0, (H, W, 3), (1, 3)), (90, (W, H, 3), (3, H - 2)),
                                                (180, (H, W, 3), (H - 2, W - 4)), (270, (W, H, 3), (W - 4, 1))])
def test_a_frame_is_turned_clockwise(degrees, shape, at):
    out = rotate_frame(_marked(), degrees)
    assert out.shape == shape
    assert tuple(int(v) for v in np.argwhere(out[:, :, 0] == 255)[0]) == at


@pytest.mark.parametrize("bad", [45, -90, 360, "90", True, None, 90.0])
def test_any_other_turn_is_one_clear_error(bad):
    with pytest.raises(SourceError, match="rotate must be 0, 90, 180 or 270"):
        check_rotation(bad)
    with pytest.raises(SourceError, match="rotate must be 0, 90, 180 or 270"):
        open_source("virtual", rotate=bad)


def test_the_virtual_table_is_never_turned():
    """Its ground truth knows where the dice lie in its own frames: a turn would misplace every box."""
    with pytest.raises(SourceError, match="virtual table is never turned"):
        open_source("virtual", rotate=90)
    assert open_source("virtual", rotate=0).rotation == 0


def test_turned_boxes_and_points_are_where_the_turned_frame_shows_them():
    from kosti.vision.sources import turn_boxes, turn_points

    box = np.array([[3.0, 1.0, 4.0, 2.0]])  # the marked pixel's square, (x 3, y 1)
    for degrees, (r, c) in ((90, (3, H - 2)), (180, (H - 2, W - 4)), (270, (W - 4, 1))):
        turned = rotate_frame(_marked(), degrees)
        x1, y1, x2, y2 = turn_boxes(box, W, H, degrees)[0]
        assert (int(y1), int(x1), int(y2 - y1), int(x2 - x1)) == (r, c, 1, 1) and turned[r, c, 0] == 255
    assert np.allclose(turn_points(turn_points([[0.2, 0.7]], 1, 1, 90), 1, 1, 270), [[0.2, 0.7]])
    with pytest.raises(SourceError):
        turn_points([[0, 0]], 1, 1, 45)


def test_open_source_turns_every_frame_it_delivers(tmp_path: Path):
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"f{i}.png"), _marked())
    with open_source(str(folder), realtime=False, rotate=90) as src:
        frames = [src.read() for _ in range(3)]
        assert src.info()["rotate"] == 90
    assert all(f.image.shape == (W, H, 3) and f.image[3, H - 2, 0] == 255 for f in frames)
    with open_source(str(folder), realtime=False) as src:  # the default: as the camera gives them
        assert src.read().image.shape == (H, W, 3) and "rotate" not in src.info()


def test_a_live_camera_is_turned_by_its_reconnecting_wrapper_once(monkeypatch):
    """A camera behind :class:`ReconnectingSource` is turned once (by the wrapper), not twice."""
    import kosti.vision.sources as sources
    from kosti.vision.frame_source import FrameSource

    class Cam(FrameSource):
        kind = "opencv"

        def __init__(self, *a, **k) -> None:
            super().__init__()

        def _open(self) -> None: ...
        def _close(self) -> None: ...

        def _read(self, timeout):
            return _marked(), 0.0

    monkeypatch.setattr(sources, "OpenCVSource", Cam)
    with open_source("rtsp://cam.local/stream", rotate=270) as src:
        img = src.read(timeout=2.0).image
        assert src.info()["rotate"] == 270
    assert img.shape == (W, H, 3) and img[W - 4, 1, 0] == 255


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([0, 90, 180, 270]), st.lists(st.tuples(st.integers(0, W - 1), st.integers(0, H - 1)),
                                                    min_size=1, max_size=12))
def test_zones_turned_with_the_picture_hold_the_same_boxes(degrees, centres):
    zones = Zones([(0.1, 0.15), (0.7, 0.1), (0.8, 0.8), (0.2, 0.9)], [(0.82, 0.05), (0.98, 0.05), (0.98, 0.4)])
    turned = zones.turned(degrees)
    xy = np.array(centres, np.float32) + 0.5  # pixel centres
    boxes = np.concatenate([xy - 1, xy + 1], 1)
    # The same pixels after cv2.rotate: (x, y) → (H - y, x) for 90, (W - x, H - y) for 180, (y, W - x) for 270.
    x, y = xy[:, 0], xy[:, 1]
    t = {0: (x, y), 90: (H - y, x), 180: (W - x, H - y), 270: (y, W - x)}[degrees]
    tw, th = (W, H) if degrees in (0, 180) else (H, W)
    tboxes = np.concatenate([np.stack(t, 1) - 1, np.stack(t, 1) + 1], 1)
    before, after = zones.classify(boxes, W, H), turned.classify(tboxes, tw, th)
    # A centre within half a pixel of a zone's edge may fall either way after rounding; the rest agree.
    near_edge = np.zeros(len(xy), bool)
    for poly in (zones.roll_area, zones.set_aside):
        contour = (np.array(poly, np.float32) * np.float32([W, H])).astype(np.float32).reshape(-1, 1, 2)
        near_edge |= np.array([abs(cv2.pointPolygonTest(contour, (float(a), float(b)), True)) < 1.0 for a, b in xy])
    assert (before == after)[~near_edge].all()
    back = turned.turned((360 - degrees) % 360)
    assert np.allclose(np.array(back.roll_area), np.array(zones.roll_area))
    assert np.allclose(np.array(back.set_aside), np.array(zones.set_aside))


def test_zones_refuse_another_turn():
    with pytest.raises(ValueError, match="0, 90, 180 or 270"):
        Zones().turned(45)


def test_the_config_takes_a_turn_from_the_file_or_the_environment(monkeypatch, tmp_path):
    from kosti.config import ConfigError, SourceSettings, load_config

    assert SourceSettings().rotate == 0
    f = tmp_path / "kosti.toml"
    f.write_text('[source]\nspec = "virtual"\nrotate = 90\n')
    assert load_config(f).source.rotate == 90
    monkeypatch.setenv("KOSTI_SOURCE__ROTATE", "180")
    assert load_config(f).source.rotate == 180
    monkeypatch.setenv("KOSTI_SOURCE__ROTATE", "45")
    with pytest.raises(ConfigError, match="source.rotate"):
        load_config(f)
