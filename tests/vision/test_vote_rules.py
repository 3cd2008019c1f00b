"""The vote's decisions at their edges (issue 45: mutation testing of ``vision/vote.py``): which boxes are one die,
which die counts, which face wins and when it is uncertain, what a throw is refused for, and which weak box is
recovered. Each test states what a table would see: a die counted or not, the face it shows, a throw held with its
reason in both languages. Boxes are chosen so each IoU, share and mean probability lands exactly on its threshold
(float64 arithmetic on small integers and binary fractions: 30/150 is the double nearest 0.2)."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_helpers import dets

from kosti.vision.detections import Detections, box_iou
from kosti.vision.pipeline import Die, check_throw, recover_dice, vote

A = (0.0, 0.0, 10.0, 10.0)
#: IoU with A exactly 0.5 (50 / 100)
HALF_A = (0.0, 0.0, 10.0, 5.0)
#: IoU with A exactly 0.2 (30 / 150), neither centre inside the other box
FIFTH_A = (7.0, 0.0, 15.0, 10.0)
FAR = (100.0, 0.0, 110.0, 10.0)


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """IoU of two boxes ``(x1, y1, x2, y2)``."""
    return float(box_iou(np.array([a]), np.array([b]))[0, 0])


def test_the_boxes_sit_exactly_on_the_thresholds():
    assert _iou(A, HALF_A) == 0.5 and _iou(A, FIFTH_A) == 0.2


def test_no_frames_no_dice_and_empty_frames_do_not_count_as_sightings():
    assert vote([]) == []
    # a die in 2 of 3 frames counts (a majority); the empty frame is still a frame read
    [die] = vote([dets([(*A, 4, 0.9)]), Detections.empty(), dets([(*A, 4, 0.9)])])
    assert (die.value, die.uncertain, die.votes) == (4, False, (2, 2, 3))


def test_a_die_counts_only_when_seen_in_a_majority_of_the_frames():
    # 2 frames: seen once is no majority
    assert vote([dets([(*A, 4, 0.9)]), dets([(*FAR, 4, 0.9)])]) == []
    # 3 frames: seen twice is a majority
    got = vote([dets([(*A, 4, 0.9)]), dets([(*A, 4, 0.9), (*FAR, 2, 0.9)]), dets([(*FAR, 2, 0.9)])])
    assert [(d.value, d.votes) for d in got] == [(4, (2, 2, 3)), (2, (2, 2, 3))]
    # a box seen once before a die seen twice does not end the count
    [die] = vote([dets([(*FAR, 2, 0.9)]), dets([(*A, 4, 0.9)]), dets([(*A, 4, 0.9)])])
    assert (die.value, die.votes) == (4, (2, 2, 3))
    # 4 frames: seen twice is not (3 needed)
    four = [dets([(*A, 4, 0.9)])] * 2 + [dets([(*FAR, 2, 0.9)])] * 2
    assert vote(four) == []


def test_boxes_at_exactly_the_match_iou_are_one_die():
    """IoU 0.5 = ``iou``: the same die (two frames, seen in both); just below it, two dice seen once each."""
    [die] = vote([dets([(*A, 3, 0.9)]), dets([(*HALF_A, 3, 0.9)])], iou=0.5, dedupe_iou=None)
    assert die.votes == (2, 2, 2) and die.value == 3
    assert vote([dets([(*A, 3, 0.9)]), dets([(*HALF_A, 3, 0.9)])], iou=0.51, dedupe_iou=None) == []


def test_one_box_joins_one_die_and_one_die_takes_one_box_per_frame():
    """Two dice side by side in frame 1 (overlapping, duplicates kept: ``dedupe_iou=None``); frame 2 sees one box
    over the first: it adds to that die only, so the second, seen once of two frames, is not a die."""
    b = (2.0, 0.0, 12.0, 10.0)  # IoU with A 80/120
    [die] = vote([dets([(*A, 5, 0.9), (*b, 6, 0.9)]), dets([(*A, 5, 0.9)])], dedupe_iou=None)
    assert (die.value, die.votes, die.box) == (5, (2, 2, 2), A)
    # frame 2 with two boxes over the one die of frame 1: the die takes one of them, the other starts its own
    [die] = vote([dets([(*A, 5, 0.9)]), dets([(*A, 5, 0.9), (*b, 5, 0.8)])], dedupe_iou=None)
    assert die.votes == (2, 2, 2) and die.box == A


def test_a_drifting_die_is_matched_on_its_latest_box():
    """A die nudged 3 px a frame: each box overlaps the one before (IoU 70/130), the third not the first (40/160):
    still one die, seen in all three frames."""
    frames = [dets([(x, 0.0, x + 10.0, 10.0, 4, 0.9)]) for x in (0.0, 3.0, 6.0)]
    [die] = vote(frames)
    assert (die.value, die.votes, die.box) == (4, (3, 3, 3), (3.0, 0.0, 13.0, 10.0))


def test_a_box_claimed_by_a_closer_one_does_not_stop_the_other_dice_matching():
    """Frame 2 boxes the first die twice (IoU 1 and 95/105) and the second die shifted (IoU 80/120): the second
    box of the first die finds its die taken, and the second die still joins its own track."""
    far2 = (102.0, 0.0, 112.0, 10.0)
    frames = [dets([(*A, 4, 0.9), (*FAR, 2, 0.9)]), dets([(*A, 4, 0.9), (0.5, 0.0, 10.5, 10.0, 4, 0.9), (*far2, 2, 0.9)])]
    got = vote(frames, dedupe_iou=None)
    assert [(d.value, d.votes) for d in got] == [(4, (2, 2, 2)), (2, (2, 2, 2))]


def test_duplicates_in_a_frame_are_merged_unless_dedupe_is_off():
    b = (1.0, 0.0, 11.0, 10.0)  # IoU with A 90/110: the same die boxed twice
    frames = [dets([(*A, 2, 0.9), (*b, 2, 0.8)])] * 3
    assert [d.votes for d in vote(frames)] == [(3, 3, 3)]
    assert [d.votes for d in vote(frames, dedupe_iou=None)] == [(3, 3, 3), (3, 3, 3)]


def test_a_face_needs_a_majority_of_the_frames_that_saw_the_die():
    # 2 of 3 agree: read, confidence = agreement x mean probability of the winning face
    [die] = vote([dets([(*A, 4, 0.75)]), dets([(*A, 4, 0.75)]), dets([(*A, 3, 1.0)])])
    assert (die.value, die.uncertain, die.votes) == (4, False, (2, 3, 3))
    assert die.confidence == pytest.approx(2 / 3 * 0.75)
    # 1 of 2 agree: no majority, uncertain with its guess
    [die] = vote([dets([(*A, 4, 0.9)]), dets([(*A, 3, 0.8)])])
    assert (die.value, die.guess, die.uncertain, die.votes) == (0, 4, True, (1, 2, 2))
    # check_throw says why, in both languages
    assert check_throw([die], 1) == [("disagree", "die 1 reads differently across frames / "
                                                  "кость 1 читается по-разному на разных кадрах")]


def test_a_mean_probability_exactly_at_the_bar_is_read():
    """``min_value_confidence`` is the least mean probability accepted: 0.5 exactly reads, just below does not."""
    frames = [dets([(*A, 6, 0.5)]), dets([(*A, 6, 0.5)])]
    [die] = vote(frames, min_value_confidence=0.5)
    assert (die.value, die.uncertain) == (6, False) and die.confidence == pytest.approx(0.5)
    # the default bar is 0.5: read at 0.4 the face is only a guess
    [die] = vote([dets([(*A, 6, 0.4)]), dets([(*A, 6, 0.4)])])
    assert (die.value, die.guess, die.uncertain) == (0, 6, True)
    [die] = vote(frames, min_value_confidence=0.5000001)
    assert (die.value, die.guess, die.uncertain) == (0, 6, True)
    assert check_throw([die], 1) == [("low_confidence", "die 1 read with low confidence (0.50) / "
                                                        "кость 1 прочитана неуверенно (0.50)")]


def test_a_face_from_labels_with_no_probability_counts_as_read():
    """Labels read from a file carry no probability (NaN, :class:`Detections`): one frame of them is its faces."""
    labels = Detections(np.array([A, FAR]), np.array([np.nan, np.nan]), np.array([3, 5]), np.array([np.nan, np.nan]))
    assert [(d.value, d.uncertain, d.votes) for d in vote([labels])] == [(3, False, (1, 1, 1)), (5, False, (1, 1, 1))]


def test_a_face_read_at_probability_zero_is_still_the_guess():
    """A reading with a face but probability 0 (a face typed without one) votes for that face: the die is unsure
    (low confidence, its guess shown), not unreadable."""
    [die] = vote([dets([(*A, 3, 0.0)])])
    assert (die.value, die.guess, die.uncertain) == (0, 3, True)
    assert [c for c, _ in check_throw([die], 1)] == ["low_confidence"]


def test_ties_go_to_the_surer_face_then_to_the_smaller_face():
    # one reading each: the surer one is the guess
    [die] = vote([dets([(*A, 2, 0.6)]), dets([(*A, 5, 0.9)])])
    assert (die.guess, die.likely, die.uncertain) == (5, 5, True)
    [die] = vote([dets([(*A, 5, 0.6)]), dets([(*A, 2, 0.9)])])
    assert die.guess == 2
    # equally sure: the smaller face
    [die] = vote([dets([(*A, 5, 0.75)]), dets([(*A, 2, 0.75)])])
    assert die.guess == 2
    # every face 1..6 can win
    for face in range(1, 7):
        [die] = vote([dets([(*A, face, 0.9)])] * 2)
        assert (die.value, die.votes) == (face, (2, 2, 2))


def test_unread_readings_vote_for_no_face_and_a_die_never_read_has_no_guess():
    # one reading of 5 among two unread ones: 5 is the guess, 1 of 3 frames agree
    [die] = vote([dets([(*A, 0, 0.3)]), dets([(*A, 0, 0.3)]), dets([(*A, 5, 0.9)])])
    assert (die.value, die.guess, die.uncertain, die.votes) == (0, 5, True, (1, 3, 3))
    assert die.confidence == pytest.approx(1 / 3 * 0.9)
    # never read: no guess, no confidence; the reader's guess column is what it most likely shows
    unread = [Detections(np.array([A]), np.array([0.9]), np.array([0]), np.array([0.4]), {"guess": [g]})
              for g in (3, 3, 2)]
    [die] = vote(unread)
    assert (die.value, die.guess, die.likely, die.confidence, die.votes) == (0, 0, 3, 0.0, (0, 3, 3))
    assert die.to_dict()["value"] == 3 and die.to_dict()["uncertain"] is True
    assert check_throw([die], 1) == [("unreadable", "die 1 is unreadable (cocked, hidden or blurred) / "
                                                    "кость 1 не читается (на ребре, закрыта или смазана)")]


def test_a_die_read_has_its_face_as_the_likely_one_and_the_median_box():
    boxes = [(0.0, 0.0, 10.0, 10.0), (2.0, 0.0, 12.0, 10.0), (1.0, 1.0, 11.0, 11.0)]
    [die] = vote([dets([(*b, 3, 0.9)]) for b in boxes])
    assert die.box == (1.0, 0.0, 11.0, 10.0) and die.likely == 3 and die.det_confidence == pytest.approx(0.9)


def test_dice_come_left_to_right_then_top_to_bottom():
    left_low, right_high = (0.0, 50.0, 10.0, 60.0), (50.0, 0.0, 60.0, 10.0)
    top, bottom = (100.0, 0.0, 110.0, 10.0), (100.0, 50.0, 110.0, 60.0)
    frame = dets([(*bottom, 4, 0.9), (*right_high, 2, 0.9), (*top, 3, 0.9), (*left_low, 1, 0.9)])
    assert [d.value for d in vote([frame])] == [1, 2, 3, 4]


# ------------------------------------------------------------------------------------------------- check_throw
def _die(box: tuple[float, float, float, float], value: int = 4, uncertain: bool = False, guess: int | None = None,
         votes: tuple[int, int, int] = (1, 1, 1), recovered: bool = False) -> Die:
    """A voted die at ``box`` (confidence 0.9); ``guess`` defaults to ``value``."""
    return Die(value=value, confidence=0.9, box=box, uncertain=uncertain, guess=value if guess is None else guess,
               votes=votes, recovered=recovered)


def test_the_count_of_dice_against_the_expected_count():
    dice = [_die(A), _die(FAR)]
    assert check_throw(dice, 2) == []
    assert check_throw(dice, 3) == [("wrong_count", "expected 3 dice in the roll area, saw 2 / "
                                                    "ожидалось костей в зоне броска: 3, видно: 2")]
    assert check_throw(dice, None) == []
    assert check_throw([], None) == [("wrong_count", "no dice in the roll area / в зоне броска нет костей")]
    assert [code for code, _ in check_throw([], 1)] == ["wrong_count"]


def test_each_unsure_die_is_named_by_its_place_and_its_kind_of_doubt():
    dice = [_die(A), _die(FAR, 0, uncertain=True, guess=0, votes=(0, 3, 3)),
            _die((200.0, 0.0, 210.0, 10.0), 0, uncertain=True, guess=3, votes=(2, 3, 3)),
            _die((300.0, 0.0, 310.0, 10.0), 0, uncertain=True, guess=3, votes=(1, 3, 3)),
            _die((400.0, 0.0, 410.0, 10.0), 0, uncertain=True, guess=6, votes=(2, 2, 2), recovered=True)]
    assert check_throw(dice, 5) == [
        ("unreadable", "die 2 is unreadable (cocked, hidden or blurred) / кость 2 не читается (на ребре, закрыта или "
                       "смазана)"),
        ("low_confidence", "die 3 read with low confidence (0.90) / кость 3 прочитана неуверенно (0.90)"),
        ("disagree", "die 4 reads differently across frames / кость 4 читается по-разному на разных кадрах"),
        ("low_confidence", "die 5 looks like a 6: confirm it / кость 5, похоже, 6: подтвердите"),
        ("recovered", "die 5 found only on a second look at the expected count: check it / кость 5 найдена только "
                      "при повторном поиске до ожидаемого числа: проверьте"),
    ]
    # agreement is judged among the frames that saw the die (2 of 3), not all frames read (5)
    seen_in_three = _die(A, 0, uncertain=True, guess=3, votes=(2, 3, 5))
    assert [c for c, _ in check_throw([seen_in_three], 1)] == ["low_confidence"]
    # a recovered die that was read is only a warning
    assert [c for c, _ in check_throw([_die(A, recovered=True), _die(FAR)], 2)] == ["recovered"]


def test_overlap_is_an_iou_above_the_bar_or_a_centre_inside_the_other_box():
    overlap = ("overlap", "dice 1 and 2 overlap or are stacked / кости 1 и 2 перекрываются или стоят друг на друге")
    assert check_throw([_die(A), _die(FIFTH_A)], 2, overlap_iou=0.2) == []  # IoU 0.2 exactly: not above
    assert check_throw([_die(A), _die(FIFTH_A)], 2, overlap_iou=0.19) == [overlap]
    big, small = (0.0, 0.0, 100.0, 100.0), (10.0, 10.0, 20.0, 20.0)  # IoU 0.01, small's centre inside big
    assert check_throw([_die(big), _die(small)], 2) == [overlap]
    assert check_throw([_die(small), _die(big)], 2) == [overlap]
    third = ("overlap", "dice 2 and 3 overlap or are stacked / кости 2 и 3 перекрываются или стоят друг на друге")
    assert check_throw([_die(FAR), _die(big), _die(small)], 3) == [third]


def test_set_aside_dice_against_the_games_keep():
    aside = [_die(FAR, 5), _die((200.0, 0.0, 210.0, 10.0), 0, uncertain=True, guess=1)]
    assert check_throw([_die(A)], 1, set_aside=aside, expected_set_aside=[5]) == []
    assert check_throw([_die(A)], 1, set_aside=aside, expected_set_aside=[1, 5]) == [
        ("set_aside_mismatch", "set-aside dice show [5], the game kept [1, 5] / в отложенных костях [5], а по игре "
                               "отложено [1, 5]")]
    # nothing to compare with: no check either way
    assert check_throw([_die(A)], 1, expected_set_aside=[1, 5]) == []
    assert check_throw([_die(A)], 1, set_aside=aside) == []


# ------------------------------------------------------------------------------------------------ recover_dice
def _weak(rows: list[tuple[float, float, float, float, int, float]], **columns: list) -> Detections:
    """Candidates the detector was unsure of (confidence 0.1), ``(x1, y1, x2, y2, value, value_confidence)``."""
    a = np.array(rows, dtype=np.float64)
    return Detections(a[:, :4], np.full(len(a), 0.1), a[:, 4].astype(int), a[:, 5], columns)


def test_a_weak_box_read_the_same_in_every_frame_is_recovered_read_at_the_bar():
    frames = [_weak([(*FAR, 2, 0.75)])] * 3
    [die] = recover_dice([], frames, min_confidence=0.75)
    assert (die.value, die.uncertain, die.recovered, die.votes) == (2, False, True, (3, 3, 3))
    [die] = recover_dice([], frames, min_confidence=0.7500001)
    assert (die.value, die.guess, die.uncertain, die.recovered) == (0, 2, True, True)
    # seen in 2 of 3 frames: held for the table however sure
    [die] = recover_dice([], [*frames[:2], Detections.empty()], min_confidence=0.5)
    assert (die.value, die.guess, die.uncertain) == (0, 2, True)
    # read below the default mean probability (0.5) in every frame: nothing, however low min_confidence is
    assert recover_dice([], [_weak([(*FAR, 2, 0.4)])] * 3, min_confidence=0.1) == []
    # seen in every frame and read 2 in two of three: read, at 2/3 x 0.9
    [die] = recover_dice([], [_weak([(*FAR, 2, 0.9)])] * 2 + [_weak([(*FAR, 3, 0.9)])], min_confidence=0.5)
    assert (die.value, die.uncertain, die.votes) == (2, False, (2, 3, 3))
    # a weak box far from where the others were is another box (default match IoU 0.5), not the same die
    [die] = recover_dice([], [_weak([(*FAR, 2, 0.9)])] * 2 + [_weak([(*A, 2, 0.9)])], min_confidence=0.5)
    assert (die.value, die.guess, die.uncertain, die.votes, die.box) == (0, 2, True, (2, 2, 3), FAR)
    # one weak die boxed twice in each frame is recovered once (default in-frame dedupe at IoU 0.5)
    twice = _weak([(*FAR, 2, 0.95), (101.0, 0.0, 111.0, 10.0, 2, 0.9)])
    assert [d.value for d in recover_dice([], [twice] * 3, min_confidence=0.5)] == [2]
    # a die no vote can settle, left of a clear one, does not stop the clear one being recovered
    frames = [_weak([(*A, 2 + k, 0.9), (*FAR, 5, 0.95)]) for k in range(2)]
    assert [(d.value, d.box) for d in recover_dice([], frames, min_confidence=0.5)] == [(5, FAR)]
    # read by no majority and no agreed guess: nothing
    assert recover_dice([], [_weak([(*FAR, 2, 0.9)]), _weak([(*FAR, 3, 0.9)])]) == []


def test_recovered_dice_come_surest_first():
    frames = [_weak([(*FAR, 2, 0.8), (*A, 5, 0.95)])] * 3
    assert [d.value for d in recover_dice([], frames, min_confidence=0.5)] == [5, 2]
    frames = [_weak([(*FAR, 2, 0.95), (*A, 5, 0.8)])] * 3
    assert [d.value for d in recover_dice([], frames, min_confidence=0.5)] == [2, 5]


def test_a_candidate_on_a_found_die_is_that_die_again():
    found = [_die(A)]

    def recovered(box: tuple[float, float, float, float], **kw: float) -> list[int]:
        """Faces recovered from a candidate at ``box`` read 3 at 0.95 in three frames, ``A`` found."""
        return [d.value for d in recover_dice(found, [_weak([(*box, 3, 0.95)])] * 3, min_confidence=0.5, **kw)]

    assert recovered(FAR) == [3]
    # IoU exactly at overlap_iou is not above it; its share on the die (3/8) is under the default share
    assert recovered(FIFTH_A, overlap_iou=0.2, overlap_share=0.5) == [3]
    assert recovered(FIFTH_A, overlap_iou=0.19, overlap_share=0.5) == []
    # share exactly at overlap_share is that die; IoU 0.2 kept out of it by a higher overlap_iou
    assert recovered(FIFTH_A, overlap_iou=0.5, overlap_share=0.375) == []
    assert recovered(FIFTH_A, overlap_iou=0.5, overlap_share=0.38) == [3]
    # a centre inside the other box, either way round
    assert recovered((4.0, 4.0, 30.0, 30.0), overlap_iou=0.9, overlap_share=2.0) == []
    assert recovered((6.0, 6.0, 12.0, 12.0), overlap_iou=0.9, overlap_share=2.0) == []
    # at the defaults (overlap IoU 0.2, share 0.4): IoU 45/205 with the die, a share of 0.3, no centre inside
    assert recovered((5.5, 0.0, 20.5, 10.0)) == []
    assert recovered((5.5, 0.0, 20.5, 10.0), overlap_iou=0.23) == [3]
    # a found die elsewhere does not hide it
    assert [d.value for d in recover_dice([_die(FAR)], [_weak([(*A, 3, 0.95)])] * 3, min_confidence=0.5)] == [3]


def test_a_candidate_flagged_not_a_die_is_never_recovered():
    frames = [_weak([(*FAR, 2, 0.95), (*A, 5, 0.95)], not_die=[True, False])] * 3
    assert [d.value for d in recover_dice([], frames, min_confidence=0.5)] == [5]
