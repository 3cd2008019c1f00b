"""Exposure of a dim frame (kosti.vision.exposure) and the reader's brightening of it (``DiceReader(dim_gain=…)``).

Real photos from ``../shared/datasets`` (byler-d6 test), darkened as ``benchmarks/robustness.py``'s "dark-0.45".
"""

from __future__ import annotations

import numpy as np
import pytest
from reader_models import BYLER, EPANEMU, require_dataset

from kosti.vision.exposure import EXPOSURE_TARGET, MAX_EXPOSURE_GAIN, brightened, exposure_gain


def test_gain_brings_the_bright_end_to_the_target_and_is_capped():
    frame = np.full((90, 160, 3), 60, np.uint8)
    frame[40:50, 70:90] = 200  # a white die's face, well over 1 % of the frame
    assert exposure_gain(frame) == pytest.approx(EXPOSURE_TARGET / 200, rel=0.02)
    assert exposure_gain((frame * 0.5).astype(np.uint8)) == pytest.approx(EXPOSURE_TARGET / 100, rel=0.02)
    assert exposure_gain(np.zeros((90, 160, 3), np.uint8)) == MAX_EXPOSURE_GAIN  # black: capped, no division by 0
    # a saturated colour is not dim: red dice on blue felt (grey level 52 and 87; brightest channel 200 and 220)
    felt = np.zeros((90, 160, 3), np.uint8)
    felt[...] = (200, 40, 20)
    felt[30:60, 60:100] = (30, 30, 220)
    assert exposure_gain(felt) < 1.2
    # a dark felt under a normal lamp with one white die on it is not dim either (the die is the bright end)
    table = np.full((720, 1280, 3), 50, np.uint8)
    table[300:335, 600:635] = 235  # a 35 px die
    assert exposure_gain(table) < 1.2  # far from 1.5: read as it comes
    # a frame narrower than the probe is measured as it is, never enlarged
    tall = np.full((100_000, 1, 3), 100, np.uint8)
    assert exposure_gain(tall) == pytest.approx(EXPOSURE_TARGET / 100, rel=0.02)
    out = brightened(frame, 2.0)
    assert out.dtype == np.uint8 and out.shape == frame.shape
    assert out[0, 0].tolist() == [120] * 3 and out[45, 80].tolist() == [255] * 3  # clipped, never wrapped


def test_a_dim_table_is_read_brightened_and_a_normal_one_as_it_came():
    require_dataset(BYLER / "data.yaml")
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import DiceReader, load_image

    ds = load_dataset(BYLER, "test")
    reader, off = DiceReader(), DiceReader(dim_gain=0)
    assert reader.dim_gain == 1.5 and "dim>1.5x" in reader.describe() and "dim" not in off.describe()
    right_on = right_off = total = 0
    for item in ds.items[:12]:
        img = load_image(item.image)
        _, values = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
        normal = reader.read(img)
        assert reader.last_gain == 1.0, "a photo as shipped is read as it came"
        assert np.array_equal(normal.value, off.read(img).value)
        dark = (img * 0.45).astype(np.uint8)
        on = reader.read(dark)
        assert reader.last_gain > 1.5
        right_on += sorted(on.value.tolist()) == sorted(values.tolist())
        right_off += sorted(off.read(dark).value.tolist()) == sorted(values.tolist())
        total += 1
    # brightened, the dark photos read (nearly) as the originals; without it, fewer are read exactly
    assert right_on >= total - 2 and right_on > right_off, (right_on, right_off, total)
    for bad in (0.5, 2.5, 3.0):  # between off and a gain; at or above the most gain applied (never brightens)
        with pytest.raises(ValueError, match="dim_gain"):
            DiceReader(dim_gain=bad)


def test_the_first_and_the_zoomed_read_both_see_the_brightened_frame(monkeypatch):
    """A dim frame of small dice: brightened once, and the zoomed second read gets the same brightened frame."""
    require_dataset(EPANEMU / "data.yaml")
    from kosti.vision.reader import DiceReader, load_image

    img = load_image(next((EPANEMU / "images" / "val").glob("dice_441_jpg*")))  # 19 small dice, 15-23 px
    dark = (img * 0.45).astype(np.uint8)
    reader = DiceReader(zoom_below=40)  # zoomed for sure (at the shipped 20 px the dark copy's median is 20)
    seen: list[float] = []
    read_with = reader._read_with
    monkeypatch.setattr(reader, "_read_with", lambda det, im: (seen.append(float(im.mean())), read_with(det, im))[1])
    reader.read(dark)
    assert reader.last_zoomed and reader.last_gain > 1.5 and len(seen) == 2
    assert seen[0] == seen[1] > 1.4 * float(dark.mean())


def test_a_stream_is_brightened_only_when_dim_and_the_gain_is_held_steady():
    from kosti.vision.exposure import GAIN_HOLD, GAIN_HYSTERESIS, held_gain

    assert held_gain(2.2, 1.0, 0.0) == 1.0  # off
    assert held_gain(1.3, 1.0, 1.5) == 1.0  # a normally lit frame: as it came
    assert held_gain(2.2, 1.0, 1.5) == 2.2  # dim: brightened by what it measures
    # jitter of the bright end by a level or two keeps the gain (no flicker of the whole image) ...
    assert held_gain(2.2 * (1 + 0.8 * GAIN_HOLD), 2.2, 1.5) == 2.2
    assert held_gain(2.2 * (1 - 0.8 * GAIN_HOLD), 2.2, 1.5) == 2.2
    # ... a real change of light follows
    assert held_gain(1.8, 2.2, 1.5) == 1.8
    # hysteresis at the limit: once on, it stays on down to dim_gain / GAIN_HYSTERESIS
    assert held_gain(1.45, 1.0, 1.5) == 1.0
    assert held_gain(1.45, 1.6, 1.5) == 1.45
    assert held_gain(1.5 / GAIN_HYSTERESIS - 0.01, 1.45, 1.5) == 1.0
