"""The one die type (kosti.vision.detections.Detections): per-die data columns, record constructors."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from kosti.vision.detections import COLUMNS, Detections


@dataclass
class _VotedDie:  # the shape of kosti.vision.pipeline.Die
    value: int
    confidence: float
    box: tuple[float, float, float, float]
    uncertain: bool = False
    guess: int = 0
    det_confidence: float = 1.0
    votes: tuple[int, int, int] = (1, 1, 1)
    recovered: bool = False


def _voted() -> list[_VotedDie]:
    return [_VotedDie(5, 0.9, (10, 10, 50, 50), votes=(4, 5, 5), det_confidence=0.8),
            _VotedDie(0, 0.3, (60, 10, 100, 50), uncertain=True, guess=3, votes=(2, 5, 5), recovered=True)]


def test_from_dice_takes_voted_dice_with_their_columns():
    d = Detections.from_dice(_voted())
    assert d.value.tolist() == [5, 0] and d.uncertain.tolist() == [False, True]
    assert d.value_confidence.tolist() == pytest.approx([0.9, 0.3])
    assert d.confidence.tolist() == pytest.approx([0.8, 1.0])
    assert d.data["guess"].tolist() == [0, 3] and d.data["guess"].dtype == np.int8
    assert d.data["votes"].tolist() == [[4, 5, 5], [2, 5, 5]] and d.data["votes"].shape == (2, 3)
    assert d.data["recovered"].tolist() == [False, True]
    assert d.best_faces.tolist() == [5, 3]
    np.testing.assert_allclose(d.centers, [[30, 30], [80, 30]])


def test_columns_follow_every_selection():
    d = Detections.from_dice(_voted())
    one = d[d.uncertain]
    assert len(one) == 1 and one.data["guess"].tolist() == [3] and one.data["votes"].tolist() == [[2, 5, 5]]
    assert d.sorted_by_position()[::-1].data["recovered"].tolist() == [True, False]
    assert d.filter(np.array([True, False])).data["votes"].shape == (1, 3)


def test_concat_fills_known_columns_and_drops_partial_unknown_ones():
    a = Detections.from_dice(_voted()).with_data(track=np.array([7, 8]))
    b = Detections(np.array([[0, 0, 5, 5]]), [0.5], [6], [0.99])
    both = Detections.concat([a, b])
    assert both.value.tolist() == [5, 0, 6]
    assert both.data["guess"].tolist() == [0, 3, COLUMNS["guess"][2]]
    assert both.data["votes"][2].tolist() == [1, 1, 1]
    assert "track" not in both.data
    assert Detections.concat([a, a]).data["track"].tolist() == [7, 8, 7, 8]


def test_column_default_and_errors():
    d = Detections(np.zeros((2, 4)), [0.5, 0.5], [1, 2], [0.9, 0.9])
    assert d.column("zone").tolist() == [1, 1] and d.column("recovered").dtype == np.bool_
    with pytest.raises(KeyError):
        d.column("nope")
    with pytest.raises(ValueError, match="column 'guess' has 3 rows, expected 2"):
        d.with_data(guess=[1, 2, 3])
    with pytest.raises(ValueError, match="box must be 4 numbers"):
        Detections.from_dice([{"value": 1, "box": None}])


def test_records_round_trip_and_json():
    d = Detections.from_dice(_voted())
    recs = d.to_records()
    assert recs[1] == {"value": 0, "confidence": pytest.approx(0.3), "det_confidence": 1.0,
                       "box": (60.0, 10.0, 100.0, 50.0), "uncertain": True, "guess": 3, "votes": (2, 5, 5),
                       "recovered": True}
    json.dumps(recs)
    assert Detections.from_dice(recs).equals(d)
    assert not Detections.from_dice(recs[:1]).equals(d)


def test_unknown_confidences_are_nan_and_tuples_are_accepted():
    d = Detections.from_dice([(4, (0, 0, 10, 10)), (0, [5, 5, 20, 20], 0.4, 2)])
    assert np.isnan(d.confidence).all() and np.isnan(d.value_confidence[0])
    assert d.value.tolist() == [4, 0] and d.best_faces.tolist() == [4, 2]
    assert d.to_records()[0]["confidence"] is None
    # a face that stands in for an unread one (uncertain with a value) is kept as the guess
    marked = Detections.from_dice([{"value": 6, "box": (0, 0, 9, 9), "uncertain": True}])
    assert marked.value.tolist() == [0] and marked.data["guess"].tolist() == [6]


def test_voted_dice_give_the_same_arrays_and_json_as_the_pipeline():
    """What the pipeline's Die records become: the arrays ThrowDetector builds today and the same
    ``kosti watch --json`` dice (the migration of ``Throw.dice`` to Detections changes no output)."""
    from kosti.vision import throws

    dice = [throws.Die(5, 0.9, (1, 2, 30, 40), det_confidence=0.7, votes=(3, 4, 4)),
            throws.Die(0, 0.2, (50, 2, 80, 40), uncertain=True, guess=2, recovered=True)]
    d = Detections.from_dice(dice)
    assert d.to_dicts() == [x.to_dict() for x in dice]
    assert d.value.tolist() == [5, 0] and d.confidence.tolist() == pytest.approx([0.7, 1.0])
    assert d.value_confidence.tolist() == pytest.approx([0.9, 0.2])
    assert d.data["guess"].tolist() == [0, 2] and d.data["recovered"].tolist() == [False, True]
    assert d.faces == sorted(x.value for x in dice if not x.uncertain)


def test_box_cover_is_the_share_of_each_box_inside_the_other():
    from kosti.vision.detections import box_cover

    a = np.array([[0, 0, 10, 10], [5, 5, 7, 7], [20, 20, 20, 30]], np.float32)  # a box, a pip, an empty box
    b = np.array([[5, 0, 15, 10], [0, 0, 10, 10]], np.float32)
    cover = box_cover(a, b)
    assert cover.shape == (3, 2) and cover.dtype == np.float64
    np.testing.assert_allclose(cover, [[0.5, 1.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(box_cover(b, a)[:, 1], [0.04, 0.04])  # the pip covers 4 % of each box
    assert box_cover(np.zeros((0, 4)), b).shape == (0, 2)
