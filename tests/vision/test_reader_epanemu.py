"""The shipped reader on real oblique photos it never trained on (epanemu-dice val): a number token of a board
game is not a die, a die is found once (no side face or nested box beside it), the count is right, no face is
read wrong and at most one die per photo is left for the table to confirm.

epanemu-dice val shares no source photo with its train split (``../shared/datasets/epanemu-dice/SOURCE.md``);
reader v1.0 chose its operating point on it (a selection split, never a test split), so these photos pin
behaviour, they do not measure accuracy (``kosti eval`` does, ``models/README.md``). Reader v0.3 boxed the
Catan number tokens of these board photos as dice (precision 0.37 on epanemu val).
"""

from __future__ import annotations

import numpy as np
import pytest
from reader_models import SHARED_DATASETS, require_dataset

EPANEMU = SHARED_DATASETS / "epanemu-dice"
#: Photo (file name in val) → labelled dice. Three Catan boards with numbered tokens and two small dice
#: each; two felt tables with 15 dice of several colours seen from the side.
PHOTOS = {
    "dice_231_jpg.rf.52bc2cedccb38e8cca31cc0a1eb5001a.jpg": "catan board",
    "dice_276_jpg.rf.ed822582aeb77887d0802e8056d09a3b.jpg": "catan board",
    "dice_315_jpg.rf.2ad691bbd013cd61f0599f45b918c551.jpg": "catan board",
    "dice_395_jpg.rf.60b3117994968d601869c1cc6e45f803.jpg": "felt, 15 dice, oblique",
    "dice_428_jpg.rf.53252b038c0c10b632f9de5e5a7ebc5e.jpg": "felt, 15 dice, oblique",
}


@pytest.fixture(scope="module")
def reader():
    require_dataset(EPANEMU / "data.yaml")
    from kosti.vision.reader import DiceReader

    return DiceReader()


@pytest.mark.parametrize("name", sorted(PHOTOS))
def test_each_die_once_and_no_token_boxed(reader, name):
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import load_image

    ds = load_dataset(EPANEMU, "val")
    item = next(i for i in ds.items if i.image.name == name)
    img = load_image(item.image)
    h, w = img.shape[:2]
    truth, values = read_labels(item.label, w, h, ds.class_values)
    dice = reader.read(img)
    iou = box_iou(truth, dice.xyxy)
    assert len(dice) == len(truth), f"{PHOTOS[name]}: {len(dice)} dice found, {len(truth)} there"
    assert (iou.max(axis=0) >= 0.5).all(), f"{PHOTOS[name]}: a box that is no labelled die (a token, a side face)"
    assert (iou.max(axis=1) >= 0.5).all(), f"{PHOTOS[name]}: a labelled die not found"
    read = dice.value[iou.argmax(axis=1)]
    sure = read > 0  # 0 = uncertain: the table is asked to confirm it, never a silently wrong face
    assert np.array_equal(read[sure], values[sure]), f"{PHOTOS[name]}: read {read.tolist()}, labelled {values.tolist()}"
    assert (~sure).sum() <= 1, f"{PHOTOS[name]}: {(~sure).sum()} dice left uncertain: {read.tolist()}"


#: Catan photos where the second look confirms number tokens as a lone pip ("1") without ``verify_one_conf``,
#: each token's detector score below the shipped ``verify_one_conf``. v1.1's detector did so in ``dice_235``,
#: ``dice_305``, ``dice_324`` and ``dice_363`` (19 of the 30 second-look 1s on the selection splits were false, most
#: of them Catan tokens); v1.2's detector scores those tokens below the second look's 0.05 but proposes two tokens
#: in ``dice_351`` (found by reading every epanemu val photo with the rule on and off). Tokens the detector scores
#: higher still pass (the model card lists them).
TOKEN_ONES = {
    "dice_351_jpg.rf.348d4ed3ed2d44d13a0f5d88ed9cffb9.jpg": 2,
}


@pytest.mark.parametrize("name", sorted(TOKEN_ONES))
def test_a_number_token_read_as_a_one_is_not_a_die(reader, name):
    """With the rule off the same reader boxes the board's number tokens as 1s; with the shipped rule no box
    is left that is not a labelled die."""
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import load_dataset, read_labels
    from kosti.vision.reader import DiceReader, load_image

    ds = load_dataset(EPANEMU, "val")
    item = next(i for i in ds.items if i.image.name == name)
    img = load_image(item.image)
    truth, _ = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)

    def extra(dice):
        iou = box_iou(truth, dice.xyxy)
        return dice.value[iou.max(axis=0) < 0.5] if len(dice) else dice.value

    without = DiceReader(verify_one_conf=0.0).read(img)
    assert extra(without).tolist() == [1] * TOKEN_ONES[name], f"rule off: extra boxes read {extra(without).tolist()}"
    assert len(extra(reader.read(img))) == 0, "a token is still boxed as a die"
