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


#: Photos whose dice v1.3 boxes a few pixels off the label: the IoU a box must reach there. dice_231: its 20 px die
#: on the board is found by the zoomed read's second look 6 px off (IoU 0.46); a number token lies off every die.
LOOSE_BOX = {"dice_231_jpg.rf.52bc2cedccb38e8cca31cc0a1eb5001a.jpg": 0.4}


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
    match = LOOSE_BOX.get(name, 0.5)
    assert (iou.max(axis=0) >= match).all(), f"{PHOTOS[name]}: a box that is no labelled die (a token, a side face)"
    assert (iou.max(axis=1) >= match).all(), f"{PHOTOS[name]}: a labelled die not found"
    read = dice.value[iou.argmax(axis=1)]
    sure = read > 0  # 0 = uncertain: the table is asked to confirm it, never a silently wrong face
    assert np.array_equal(read[sure], values[sure]), f"{PHOTOS[name]}: read {read.tolist()}, labelled {values.tolist()}"
    assert (~sure).sum() <= 1, f"{PHOTOS[name]}: {(~sure).sum()} dice left uncertain: {read.tolist()}"


#: Catan photos where the second look confirms number tokens as a lone pip ("1") without ``verify_one_conf``,
#: each token's detector score below the shipped ``verify_one_conf``. v1.1's detector did so in ``dice_235``,
#: ``dice_305``, ``dice_324`` and ``dice_363`` (19 of the 30 second-look 1s on the selection splits were false, most
#: of them Catan tokens); v1.2's detector scores those tokens below the second look's 0.05 but proposes two tokens
#: in ``dice_351`` (found by reading every epanemu val photo with the rule on and off). Tokens the detector scores
#: higher still pass (the model card lists them). v1.3's classifier, read upright, confirms neither of those
#: (its second look asks p 0.98); on epanemu val the rule now stops a round headphone cup on a desk (``dice_431``)
#: and a printed letter on a mask's package (``dice_434``), each read as a 1 at p ≥ 0.99 and scored ≤ 0.085 by the
#: detector (found the same way).
TOKEN_ONES = {
    "dice_431_jpg.rf.63931f27416b989f181459f50c517e1e.jpg": 1,
    "dice_434_jpg.rf.f1b4981d9ff9af2123e7d52895d320ea.jpg": 1,
}


@pytest.mark.parametrize("name", sorted(TOKEN_ONES))
def test_a_number_token_read_as_a_one_is_not_a_die(reader, name):
    """With the rule off the same reader boxes a round mark on no die as a 1; with the shipped rule no box that
    is not a labelled die is read as a 1 (these cluttered photos keep other false boxes, uncertain or not 1s)."""
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
    assert (extra(without) == 1).sum() == TOKEN_ONES[name], f"rule off: extra boxes read {extra(without).tolist()}"
    assert (extra(reader.read(img)) == 1).sum() == 0, "a round mark is still boxed as a die showing 1"


#: Photos of dice photographed from a seat (side faces showing): file name in val → what they show.
SIDE_ON = {
    "dice_163_jpg.rf.2114546371b06b48a0999edfa4246555.jpg": "40 dice of many colours spread on a table",
    "dice_405_jpg.rf.71e1eaa4af8d2c9c305a5f874a07f8b9.jpg": "15 dice on felt",
    "dice_409_jpg.rf.5b67590c3423f331e1b5b5d03cb3fe48.jpg": "15 dice on felt",
    "dice_411_jpg.rf.40f180374f16a44316436ef9318671a0.jpg": "15 dice on felt",
}


@pytest.mark.parametrize("name", sorted(SIDE_ON))
def test_a_die_seen_from_the_side_is_read_by_its_top_face(reader, name):
    """v1.3's classifier is read upright (``reader.json``: ``views``): the top face is the one at the top of the
    crop. Reader v1.2, trained on turned crops and read in four turns, read such dice by the face towards the camera:
    on these photos 59 of 78 found dice right, 4 wrong, 15 uncertain; v1.3: 75 right, none wrong, 4 uncertain."""
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import load_dataset, match_pairs, read_labels
    from kosti.vision.reader import load_image

    assert reader.views == "upright"
    ds = load_dataset(EPANEMU, "val")
    item = next(i for i in ds.items if i.image.name == name)
    img = load_image(item.image)
    truth, values = read_labels(item.label, img.shape[1], img.shape[0], ds.class_values)
    dice = reader.read(img)
    pairs = match_pairs(box_iou(truth, dice.xyxy))
    read = np.array([dice.value[j] for _, j in pairs])
    want = np.array([values[k] for k, _ in pairs])
    assert len(pairs) >= 0.85 * len(truth), f"{SIDE_ON[name]}: {len(pairs)} of {len(truth)} dice found"
    assert np.array_equal(read[read > 0], want[read > 0]), f"{SIDE_ON[name]}: read {read.tolist()}, labelled {want.tolist()}"
    assert (read == 0).sum() <= 2, f"{SIDE_ON[name]}: {(read == 0).sum()} dice left uncertain"
