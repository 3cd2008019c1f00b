"""The not-a-die rule (``DiceReader(not_die_prob=…)``, on by default at 0.99 since 2026-12-03): a box the classifier
reads as ``x`` that surely is no die, whatever the detector scored it.

Real photos from ``../shared/datasets``: rune55-dedup val top-down trays seen through a vignetting lens, with the
sensor noise of a webcam in dim light added (σ 12 grey levels, seeded, as ``benchmarks/robustness.py``'s
"noise-12"). The detector then boxes the dark frame corner at 0.5–0.78. These pin behaviour; accuracy is ``kosti eval``'s
and the robustness benchmark's (``models/README.md``, "Robustness").
"""

from __future__ import annotations

import numpy as np
import pytest
from reader_models import SHARED_DATASETS, require_dataset

RUNE55 = SHARED_DATASETS / "rune55-dedup"
#: Photos where the noisy frame's dark corner is boxed (2 or 3 dice each, all labelled).
CORNER_BOXED = ("train_00015_jpg.rf.e982ad99008948203936e75e405efbcb.jpg",
                "train_00117_jpg.rf.74b9ae03ac67600d9b99ac9b872dd8bd.jpg")


def _noisy(name: str) -> tuple[np.ndarray, np.ndarray]:
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(RUNE55, "val")
    item = next(i for i in ds.items if i.image.name == name)
    img = load_image(item.image)
    truth, _ = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
    noise = np.random.default_rng(0).normal(0.0, 12.0, img.shape)  # benchmarks/robustness.py's "noise-12"
    return np.clip(img + noise, 0, 255).astype(np.uint8), truth


def _matched(truth: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
    """``(K,)`` bool: which of the boxes ``xyxy`` lie on a labelled die (IoU ≥ 0.5)."""
    from kosti.vision.detections import box_iou

    return box_iou(truth, xyxy).max(axis=0) >= 0.5 if len(truth) and len(xyxy) else np.zeros(len(xyxy), bool)


def _found(truth: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: which labelled dice ``truth`` some box of ``xyxy`` lies on (IoU ≥ 0.5)."""
    from kosti.vision.detections import box_iou

    return box_iou(truth, xyxy).max(axis=1) >= 0.5 if len(truth) and len(xyxy) else np.zeros(len(truth), bool)


def test_default_is_on():
    from kosti.models import DEFAULT_NOT_DIE_PROB
    from kosti.vision.reader import DiceReader

    reader = DiceReader()
    assert DEFAULT_NOT_DIE_PROB == 0.99 and reader.not_die_prob == DEFAULT_NOT_DIE_PROB  # on; the docs state 0.99
    assert f"not-die x>={DEFAULT_NOT_DIE_PROB:g}" in reader.describe()


@pytest.mark.parametrize("name", CORNER_BOXED)
def test_a_noisy_dark_corner_is_no_die_and_every_die_is_still_found(name):
    require_dataset(RUNE55 / "data.yaml")
    from kosti.vision.reader import DiceReader

    img, truth = _noisy(name)
    off = DiceReader(not_die_prob=1.0).read(img)
    extra = off[~_matched(truth, off.xyxy)]
    # the case exists: without the rule, a strong box on no die, in the frame's top-left quarter, read as no face
    assert len(extra) == 1 and extra.confidence[0] > 0.5 and extra.value[0] == 0
    x1, y1, x2, y2 = extra.xyxy[0]
    assert x2 < img.shape[1] / 2 and y2 < img.shape[0] / 2
    reader = DiceReader()
    dice, candidates = reader.read_candidates(img)
    assert _found(truth, off.xyxy).all() and _found(truth, dice.xyxy).all(), "the rule removed a die"
    assert _matched(truth, dice.xyxy).all() and len(dice) == len(truth), "a box on no die, or a die boxed twice"
    # the corner box is a candidate now, uncertain, not a die
    corner = np.all(np.isclose(candidates.xyxy, extra.xyxy[0], atol=1.0), axis=1)
    assert corner.sum() == 1 and candidates.value[corner][0] == 0 and candidates.data["not_die"][corner][0]


def test_a_box_surely_not_a_die_still_has_the_frame_read_again_larger():
    """The zoom reads a frame again when it found no die but some candidate. A candidate read surely as not a die
    counts too: on epanemu val ``dice_282`` the first read finds no die and only such a box, and the larger read
    finds the weak red die (scored 0.27, read 4) on the Catan board beside it."""
    require_dataset(SHARED_DATASETS / "epanemu-dice" / "data.yaml")
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import DiceReader, load_image

    ds = load_dataset(SHARED_DATASETS / "epanemu-dice", "val")
    item = next(i for i in ds.items if i.image.name.startswith("dice_282_jpg"))
    img = load_image(item.image)
    truth, values = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
    reader = DiceReader()
    first, first_candidates = reader._read_with(reader.detector, img)
    assert len(first) == 0 and first_candidates.data["not_die"].any()  # the case exists
    dice = reader.read(img)
    assert reader.last_zoomed and _found(truth, dice.xyxy).any() and 4 in dice.value.tolist()
