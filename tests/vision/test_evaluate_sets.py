"""The shared-set table (``kosti.vision.evaluate_sets``): what a reader made of the dice that are no pip die, on
hand-made labels and predictions with known answers; a set the table does not know is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kosti.vision.detections import Detections
from kosti.vision.evaluate import evaluate_predictions
from kosti.vision.evaluate_sets import distractor_reads, load_distractors, main


def _det(rows):
    """Detections from ``(x1, y1, x2, y2, value)`` rows (detector score 0.9, value confidence 0.9)."""
    a = np.asarray(rows, np.float64).reshape(-1, 5)
    return Detections(a[:, :4], np.full(len(a), 0.9), a[:, 4].astype(int), np.full(len(a), 0.9))


def test_confident_reads_are_split_into_pip_dice_and_distractors(tmp_path: Path):
    listed = tmp_path / "distractors.csv"
    listed.write_text("file,split,class,x1,y1,x2,y2\n"
                      "a.jpg,test,d10-4,100,0,120,20\n"
                      "a.jpg,test,d6p-5,200,0,220,20\n"
                      "b.jpg,test,d8p-3,0,0,30,30\n")
    truths = [(Path("/x/a.jpg"), np.array([[0, 0, 20, 20], [40, 0, 60, 20]], np.float32), np.array([3, 5], np.int8)),
              (Path("/x/b.jpg"), np.zeros((0, 4), np.float32), np.zeros(0, np.int8))]
    preds = [
        # a pip 3 read 3, a pip 5 left uncertain, the d10 read as a 6, the numeral d6 uncertain, a box on nothing
        _det([[0, 0, 20, 20, 3], [40, 0, 60, 20, 0], [101, 0, 121, 20, 6], [200, 0, 220, 20, 0], [300, 0, 320, 20, 2]]),
        _det([[1, 1, 30, 30, 1]]),  # the d8 read as a 1
    ]
    reads = distractor_reads(evaluate_predictions(truths, preds), load_distractors(listed))
    assert (reads.confident, reads.confident_on_pip, reads.confident_on_distractor,
            reads.uncertain_on_distractor, reads.distractors) == (4, 1, 2, 1, 3)
    assert reads.pip_share == pytest.approx(0.25)
    assert reads.to_json()["pip_share_of_confident"] == 0.25


def test_no_confident_read_is_a_full_share(tmp_path: Path):
    truths = [(Path("a.jpg"), np.array([[0, 0, 20, 20]], np.float32), np.array([3], np.int8))]
    reads = distractor_reads(evaluate_predictions(truths, [_det([[0, 0, 20, 20, 0]])]), {})
    assert (reads.confident, reads.pip_share) == (0, 1.0)


def test_a_bad_distractor_row_is_named(tmp_path: Path):
    listed = tmp_path / "distractors.csv"
    listed.write_text("file,split,class,x1,y1,x2,y2\na.jpg,test,d10-4,1,2,three,4\n")
    with pytest.raises(ValueError, match="bad row"):
        load_distractors(listed)


def test_an_unknown_set_is_refused(capsys):
    assert main(["--sets", "byler-d6,no-such-set"]) == 2
    err = capsys.readouterr().err
    assert "unknown set no-such-set" in err and err.count("\n") == 1
