"""The frame-by-frame core of the live pipeline: :class:`ThrowDetector` turns a frame sequence into settled
throws (no threads, no I/O; :class:`kosti.vision.runner.LivePipeline` runs it on a live source).

It feeds each frame to a :class:`~kosti.vision.settle.SettleDetector`, keeps the last few still frames, and on
the settle event reads ``vote_frames`` of them with the dice reader, votes (:mod:`kosti.vision.vote`), sorts
the dice into table zones and checks the throw. Every rest period yields at most one throw; a rest whose
roll-area dice are the previous throw's, unmoved, is not reported again, and neither is an empty tray.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from kosti.models import DEFAULT_DIM_GAIN, DEFAULT_VALUE_CONF
from kosti.vision.continuity import (
    Continuity,
    FollowsThrows,
    changed_since,
    dice_boxes,
    die_side,
    matched,
    move_boxes,
    registered_rest,
    rest_motion,
    to_detections,
    unmoved,
)
from kosti.vision.detections import UNKNOWN_VALUE, Detections
from kosti.vision.hands import HandBlob, appearance_change, find_hand, find_new_hand
from kosti.vision.settle import (
    IDENTITY,
    SettleDetector,
    SettleState,
    SettleUpdate,
    compose,
    invert,
    scale_transform,
)
from kosti.vision.sources import Frame
from kosti.vision.throws import Die, Reader, Throw
from kosti.vision.vote import BLOCKING_REASONS, check_throw, reason_pair, recover_dice, vote
from kosti.vision.zones import ROLL, SET_ASIDE, Zones

#: Seconds for which the table before a hand came stays the reference of the colour-blind hand check while rests
#: keep finding a hand (a hand holding dice still over the tray); after that the last rest is (a new object at the
#: table's edge, taken once for a hand, must not hold the reader off for good), and a throw whose dice still lie on
#: a region new since then asks the table (reason ``hand``).
HAND_HOLD_S = 5.0
#: A rest of the whole view that broke off after lasting this long (seconds) starts the per-die probes
#: (:class:`ThrowDetector` ``per_die``): a shadow creeping over the cloth breaks rests of 0.1–0.3 s on the real clips;
#: a die's bounce pauses the view for a single frame.
BROKE_OFF_S = 0.1
#: The pixels of a rest frame no later read can use (:meth:`ThrowDetector._drop_old_pixels`): an empty image, so a
#: read of it by mistake fails loudly instead of reading nothing.
_NO_PIXELS = np.zeros((0, 0, 3), np.uint8)


@dataclass(frozen=True)
class FrameResult:
    """What :meth:`ThrowDetector.process` saw in one frame.

    Attributes:
        update: the settle detector's update.
        throw: the throw completed at this frame, or None. A throw with :attr:`Throw.corrects` set
            replaces the earlier throw it names (the same physical throw, a die moved on).
        skipped: why a settle event (or a re-check) gave no throw: ``"empty"`` tray, ``"same"`` dice as the
            last throw, ``"hand"`` in the roll area, ``"turning"`` — a die's own crop still changes
            (spinning or rocking); or None.
    """

    update: SettleUpdate
    throw: Throw | None = None
    skipped: str | None = None


def reader_dim_gain(reader: object) -> float:
    """The ``dim_gain`` of ``reader`` (:class:`kosti.vision.reader.DiceReader`: the gain above which a dim frame is
    read brightened; ``[reader] dim_gain``), which the settle detector measures motion by too, so that one setting
    governs both; :data:`kosti.models.DEFAULT_DIM_GAIN` for a reader without one (a stub, a recorded reader)."""
    gain = getattr(reader, "dim_gain", DEFAULT_DIM_GAIN)
    return float(gain) if isinstance(gain, (int, float)) else DEFAULT_DIM_GAIN


class ThrowDetector(FollowsThrows):
    """Turns a frame sequence into settled throws (single-threaded; see :class:`LivePipeline` for threads).

    On a settle event (the table still for the settle detector's still time, the camera's own motion
    taken out) the detector

    1. looks for a hand in the roll area (:func:`kosti.vision.hands.find_hand`): while one is there,
       nothing is read — the rest ends only when the table moves again (the hand leaves) and settles;
    2. reads ``vote_frames`` still frames (their boxes mapped into the newest frame through the camera's
       motion) and votes;
    3. checks every die's own appearance (:func:`kosti.vision.hands.appearance_change`) against the
       first frame of the rest, ``turn_lag_s`` earlier at most: a die still turning on the spot is not
       at rest. It then re-checks those dice on every frame (cheap crops, no reader) until each has kept
       its look for ``turn_lag_s``, and reads again then;
    4. compares with the last throw in *table* coordinates (the two settle frames registered with
       :func:`kosti.vision.settle.estimate_camera_motion`): the same dice unmoved are no new throw; when
       only one or two dice moved a little (≤ 1.5 die sides), the count is the same, and the motion in
       between was small (no hand, no throw: :attr:`SettleDetector.motion_peak` ≤ ``quiet_dice`` dice
       areas) within ``continue_s`` of the last throw, it is the same physical throw continuing — a die
       that tipped over or was nudged: reported as a correction (:attr:`Throw.corrects`) when a face
       changed, silently followed when none did.

    Args:
        reader: object with ``read(image) -> Detections`` (:class:`kosti.vision.reader.DiceReader`).
        zones: roll / set-aside areas (default: the whole frame is the roll area).
        settle: the settle detector (default :class:`SettleDetector` with 0.4 s still time and the reader's
            ``dim_gain``, :func:`reader_dim_gain`).
        expected_dice: dice expected in the roll area (the engine's dice to throw) or None = any.
        vote_frames: still frames read per throw (≥ 1; odd numbers avoid ties).
        min_value_confidence: mean face probability over the voted frames needed to accept a die's face
            (default the shipped reader's per-frame ``value_conf``, :data:`kosti.models.DEFAULT_VALUE_CONF`;
            the dashboard sets both from its ``value_conf`` threshold).
        overlap_iou: box IoU above which two dice count as overlapping/stacked.
        dedupe_iou: IoU at which two boxes of one frame are one die found twice (:func:`dedupe`; None = off).
        suppress_repeats: do not report a rest whose dice are the previous throw's dice, unmoved.
        keep_image: attach the settle frame to each :class:`Throw`.
        recover: when the roll area holds fewer than ``expected_dice`` dice, take the best of the reader's
            unconfirmed weak boxes (:func:`recover_dice`; needs a reader with ``read_candidates``, as
            :class:`~kosti.vision.reader.DiceReader`). With no die found at all, only boxes where the table
            changed since the last rest (a die that landed there, not a token that lay there before).
        recover_confidence: confidence, 0–1, at which a recovered die counts as read (below: uncertain,
            the table confirms its face).
        hands: look for hands before reading (step 1).
        turn_threshold: changed share of a die's box (:func:`~kosti.vision.hands.appearance_change`) above
            which it still turns. 0.03: on the test clips a die at rest gives ≤ 0.006 (camera shaking
            3 px/frame, flicker, MJPG), one spinning at 60°/s gives 0.13 over 0.2 s.
        turn_lag_s: how far back (seconds) a die's look is compared (0.2 s: 12° at 60°/s).
        continue_s: seconds after a throw within which a small, hand-less motion continues it (step 4).
        quiet_dice: peak motion, in dice areas, up to which the motion between two rests was "quiet".
        preread: read the voted frames that come before the settle frame as they arrive (the last
            ``2·(vote_frames − 1)`` frames of the still time, every other one), so the settle event has
            only its own frame to read: the settle-to-throw latency is one read, not ``vote_frames``. A
            rest that breaks off in those last frames costs reads that are not used.
        per_die: decide the rest per die (issue 40) when the whole view does not come to rest — an arm at the
            edge, a shadow crossing the cloth: once a rest of the whole view broke off (:data:`BROKE_OFF_S`), or
            the view has moved for ``probe_after_s`` seconds, every ``probe_s`` seconds a frame whose motion is at
            most ``probe_motion`` of the picture is read (a *probe*), and when it holds the expected count of dice
            (with none expected, as many as the probe before) the settle detector judges the rest on their boxes
            alone from then on (:meth:`SettleDetector.set_focus`), from the frame since which none of them
            changed. An ordinary throw that comes to rest as a whole costs no probe. False: only the whole view's
            rest counts (the detector before issue 40).
        probe_s: seconds between two probes (0.2: a rest of 0.5 s is found with 0.3 s to spare).
        probe_motion: changed share of the picture above which no probe is read (0.05: a hand sweeping
            the table or dice flying change more, an arm or a shadow at the edge less).
        probe_after_s: seconds of motion without a rest after which probes start even though no rest broke off
            (1.2: longer than a throw's tumble, 0.8–1 s on the clip suite).
    """

    def __init__(
        self,
        reader: Reader,
        zones: Zones | None = None,
        settle: SettleDetector | None = None,
        expected_dice: int | None = None,
        vote_frames: int = 3,
        min_value_confidence: float = DEFAULT_VALUE_CONF,
        overlap_iou: float = 0.2,
        suppress_repeats: bool = True,
        keep_image: bool = True,
        dedupe_iou: float | None = 0.5,
        recover: bool = True,
        recover_confidence: float = 0.9,
        hands: bool = True,
        turn_threshold: float = 0.03,
        turn_lag_s: float = 0.2,
        continue_s: float = 6.0,
        quiet_dice: float = 4.0,
        preread: bool = True,
        per_die: bool = True,
        probe_s: float = 0.2,
        probe_motion: float = 0.05,
        probe_after_s: float = 1.2,
    ) -> None:
        if vote_frames < 1:
            raise ValueError("vote_frames must be >= 1")
        if not 0.0 <= recover_confidence <= 1.0:
            raise ValueError(f"recover_confidence must be in [0, 1], got {recover_confidence}")
        if turn_lag_s <= 0 or turn_threshold <= 0:
            raise ValueError("turn_lag_s and turn_threshold must be > 0")
        self.reader = reader
        self.zones = zones or Zones()
        self.settle = settle or SettleDetector(dim_gain=reader_dim_gain(reader))
        self.expected_dice: int | None = expected_dice
        self.expected_set_aside: list[int] | None = None
        self.vote_frames = vote_frames
        self.min_value_confidence = min_value_confidence
        self.overlap_iou = overlap_iou
        self.dedupe_iou = dedupe_iou
        self.suppress_repeats = suppress_repeats
        self.keep_image = keep_image
        self.recover, self.recover_confidence = bool(recover), float(recover_confidence)
        self.hands = hands
        self.turn_threshold, self.turn_lag_s = float(turn_threshold), float(turn_lag_s)
        self.continue_s, self.quiet_dice = float(continue_s), float(quiet_dice)
        # Frames of the current rest period with their camera pose (ref small px → frame small px).
        self._rest: deque[tuple[Frame, np.ndarray]] = deque(maxlen=64)
        self._turning: np.ndarray | None = None  # boxes of dice still turning (re-checked every frame)
        self._done = False  # this rest period has been decided (read, or a hand in it)
        self._reads: dict[tuple[int, bool], Any] = {}  # reader results of this rest's frames
        self.preread = bool(preread)
        self.per_die, self.probe_s, self.probe_motion = bool(per_die), float(probe_s), float(probe_motion)
        self._recent: deque[Frame] = deque(maxlen=64)  # the last frames, to seed a per-die rest found late
        self.probe_after_s = float(probe_after_s)
        self._last_probe = -1e9
        self._probe_count: tuple[int, float] = (-1, -1e9)  # dice found by the last probe, and when
        self._moving_since: float | None = None  # when the view started moving (frame time)
        self._broke_off = False  # a rest of the whole view broke off since then
        self.probes = 0  # probes read so far (benchmarks count the reads per-die rest costs)
        self.last_throw: Throw | None = None
        self._last_small: np.ndarray | None = None  # settle image of the last throw (table coordinates)
        self._rest_small: np.ndarray | None = None  # settle image of the last rest read (any outcome)
        self._last_peak = 0.0
        self.last_detections: Detections | None = None  # roll+aside dice of the last read, for overlays
        self.last_hand: HandBlob | None = None
        self._hand_moved: np.ndarray | None = None  # where things moved before the rests a hand held
        self._hand_before: np.ndarray | None = None  # the table before the hand of the last rest came
        self._hand_since = 0.0  # when that hand was first seen (seconds, frame time)
        self.throws_reported = 0
        self._new_throw = False  # a throw was announced (expect_new_throw): the next rest is not a correction
        self.continuity: Continuity | None = None  # the last throw's dice followed until the next rest (per_die)

    def expect_new_throw(self) -> None:
        """The next throw reported is a new throw, never a correction of the last one.

        For a source that knows when the dice are thrown (the virtual table's Throw button): a frame rate
        that misses the throw's motion would otherwise make a die landing near the old one look like that
        die nudged (:attr:`Throw.corrects`), and on a plain cloth, where the die is the only thing that
        moved, the two rests can even register as a camera shift that lays the new die on the old one
        (an unmoved repeat). Cleared when the next throw is reported."""
        self._new_throw = True

    def reset(self) -> None:
        """Forget motion history and the last throw (a new game, a moved camera)."""
        self.settle.reset()
        self._rest.clear()
        self._reads.clear()
        self._turning = None
        self._done = False
        self.last_throw = None
        self._last_small = None
        self._rest_small = None
        self._new_throw = False
        self.last_detections = None
        self.last_hand = None
        self._hand_moved = None
        self._hand_before = None
        self._recent.clear()
        self._last_probe = -1e9
        self._moving_since, self._broke_off = None, False
        self.continuity = None

    def process(self, frame: Frame) -> FrameResult:
        """Feed one frame; returns the settle update and, on a settle event, the throw (or why none).

        Raises whatever the reader raises (the caller decides; :class:`LivePipeline` logs and goes on).
        """
        t_arrive = time.monotonic()
        update = self.settle.update(frame.image, frame.t)
        if self.per_die:
            self._recent.append(frame)
            while self._recent and self._recent[0].t < frame.t - self.settle.still_s - 0.4:
                self._recent.popleft()
            self._drop_old_pixels(self._recent, lambda e: e, lambda e, f: f)
            self._follow(frame, update)
        if update.state is SettleState.MOVING:
            if self._moving_since is None or self._done:  # a new motion (after a decided rest)
                self._moving_since, self._broke_off = frame.t, False
            elif self._rest and self._rest[-1][0].t - self._rest[0][0].t >= BROKE_OFF_S - 1e-6:
                self._broke_off = True  # a rest of the whole view broke off before it was decided
            self._rest.clear()
            self._reads.clear()
            self._turning = None
            self._done = False
            self.last_detections = None
            self.last_hand = None
            if (self.per_die and frame.t - self._last_probe >= self.probe_s - 1e-6
                    and update.motion <= self.probe_motion
                    and (self._broke_off or frame.t - self._moving_since >= self.probe_after_s - 1e-6)):
                self._probe(frame)
            return FrameResult(update)
        self._rest.append((frame, update.camera if update.camera is not None else IDENTITY))
        self._drop_old_pixels(self._rest, lambda e: e[0], lambda e, f: (f, e[1]))
        if self._done:
            return FrameResult(update)
        if self._turning is not None:
            if self._still_turning(self._turning) is not None:
                return FrameResult(update)
            self._turning = None
            return self._decided(frame, update, t_arrive)
        if not update.settled_now:
            if self.preread and update.state is SettleState.SETTLING:
                self._preread(frame, update)
            return FrameResult(update)
        return self._decided(frame, update, t_arrive)

    def _decided(self, frame: Frame, update: SettleUpdate, t_arrive: float) -> FrameResult:
        """:meth:`_decide` this rest; once it is read (a throw, or the same dice, or none), judge the whole view again:
        the per-die focus served this rest only. Kept on, it would hold the table "at rest" on those boxes while new
        dice land elsewhere (a die thrown beside dice set aside, a probe that counted the set-aside ones) and the next
        throw would never be read; a tip-over of the read dice is :class:`Continuity`'s to see. A rest left unread
        for a hand or a turning die keeps its focus: it is read again."""
        result = self._decide(frame, update, t_arrive)
        if result.throw is not None or result.skipped in ("same", "empty"):  # a hand or a turning die: read again
            self.settle.set_focus(None)
        return result

    def finish(self) -> FrameResult | None:
        """The source has ended: read a rest that lasted at least half the still time but had not settled
        (flagged ``short_rest``). Returns None when there is nothing to read."""
        update = self.settle.last
        if (update is None or update.state is not SettleState.SETTLING or self._done or self._turning is not None
                or not self._rest or update.still_for_s < 0.5 * self.settle.still_s - 1e-6):
            return None
        frame = self._rest[-1][0]
        return self._decide(frame, update, time.monotonic(), short_rest=True)

    def _probe(self, frame: Frame) -> None:
        """Read ``frame`` while the view still moves; when it holds the expected dice (with none expected: as many as the
        probe before it), judge the rest on their boxes alone (:meth:`SettleDetector.set_focus`) and take the frames
        since they stopped as this rest's frames."""
        self._last_probe = frame.t
        self.probes += 1
        previous = self._probe_count
        candidates = self._use_candidates(self.expected_dice)
        read = self._read(frame, candidates)
        dice: Detections = read[0] if candidates else read
        h, w = frame.image.shape[:2]
        # With no count expected (a keep phase), two probes in a row must find as many dice: a die still flying
        # is often missed by one probe, and the dice found would rest without it.
        count, self._probe_count = len(dice), (len(dice), frame.t)
        if self.expected_dice is None:
            before, when = previous
            steady = before == count and frame.t - when <= 2.5 * self.probe_s
        else:
            steady = count >= self.expected_dice
        if count == 0 or not steady:
            self._reads.clear()
            return
        poses = self.settle.set_focus(np.asarray(dice.xyxy, np.float64) * (self.settle.width / float(w)))
        if not poses:
            self._reads.clear()
            return
        by_t = {f.t: f for f in self._recent}
        self._rest.clear()
        for t, pose in poses:
            if t in by_t:
                self._rest.append((by_t[t], pose))

    # -- one rest period ----------------------------------------------------------------------------
    def _pose(self, k: int, width: int) -> np.ndarray:
        """Camera motion from rest frame ``k`` to the newest one, on frame pixels of width ``width``."""
        cam_k, cam_now = self._rest[k][1], self._rest[-1][1]
        return scale_transform(compose(invert(cam_k), cam_now), width / self.settle.width)

    def _still_turning(self, boxes: np.ndarray) -> np.ndarray | None:
        """Boxes (newest frame pixels) whose crop changed over the last ``turn_lag_s``, or None."""
        newest = self._rest[-1][0]
        lag_t = newest.t - self.turn_lag_s
        k = max((i for i, (f, _) in enumerate(self._rest) if f.t <= lag_t + 1e-6), default=None)
        if k is None:  # the rest is younger than the lag: compare with its first frame
            k = 0
        if len(self._rest) < 2:
            return None
        then = self._rest[k][0]
        m = self._pose(k, newest.image.shape[1])
        changes = np.array([appearance_change(then.image, newest.image, b, m, gain=self.settle.gain) for b in boxes])
        moving = changes > self.turn_threshold
        return boxes[moving] if moving.any() else None

    def _hand_held(self, hand: HandBlob, moved: np.ndarray | None, t: float, update: SettleUpdate) -> FrameResult:
        """A hand is in the roll area at this rest: nothing is read. Remember where things moved and, for
        :meth:`_hand_without_colour`, the table as it was before the hand came (kept while hands are found, never
        replaced by a rest the hand was in)."""
        self.last_hand = hand
        self._hand_moved = moved
        if self._hand_before is None:
            self._hand_before, self._hand_since = self.settle.before_motion, t
        self._done = True
        return FrameResult(update, skipped="hand")

    def _hand_without_colour(self, dice: list[Die], roll_mask: np.ndarray | None, moved: np.ndarray | None,
                             die_px: float | None, width: int, t: float) -> tuple[HandBlob | None, bool]:
        """A hand holding the dice just read (:func:`kosti.vision.hands.find_new_hand`), and whether the dice may
        still lie in a hand seen more than :data:`HAND_HOLD_S` ago.

        The reference is the table before the motion — before the hand came while rests keep finding a hand, for
        :data:`HAND_HOLD_S`. After that the last rest is: a new object at the table's edge taken for a hand must
        not hold the reader off for good. The dice are then read, but while they still lie on a region new since
        before the hand came, each throw asks the table (``(None, True)``); the reference is dropped at the first
        rest without such a region.
        Only a new region with a die on it counts: a bag or chair leg moved at the frame's edge holds no die. The
        dice's own size (or the last throw's) sizes the region test.
        """
        now = self.settle.last_small
        if not dice or now is None:
            return None, False
        centres = np.array([d.center for d in dice], np.float64).reshape(-1, 2)
        side = die_px or die_side(dice) or None

        def against(before: np.ndarray | None) -> HandBlob | None:
            registered = registered_rest(before, now)
            if registered is None or now is None:
                return None
            return find_new_hand(registered, now, width, roll_mask, side, moved, dice_at=centres,
                                 diff_threshold=2 * self.settle.diff_threshold / self.settle.gain)

        if self._hand_before is not None and t - self._hand_since <= HAND_HOLD_S:
            return against(self._hand_before), False
        hand = against(self.settle.before_motion)
        if hand is None and self._hand_before is not None:
            return None, against(self._hand_before) is not None
        return hand, False

    def _decide(self, frame: Frame, update: SettleUpdate, t_arrive: float, short_rest: bool = False) -> FrameResult:
        """Read the rest that just settled: hands first, then the voted dice, sorted into zones, recovered, set
        against the last throw (the same dice, a correction), and reported as a throw or skipped."""
        h, w = frame.image.shape[:2]
        expected = self.expected_dice  # set between frames by the runner (LivePipeline.expect)
        die_px = self.last_throw and die_side(self.last_throw.dice)
        roll_mask, moved = None, None
        if self.hands:
            roll_mask = np.zeros((h, w), np.uint8)
            cv2.fillPoly(roll_mask, [self.zones.pixel_polygons(w, h)["roll_area"]], 255)
            moved = self.settle.motion_mask
            if self._hand_moved is not None and moved is not None and self._hand_moved.shape == moved.shape:
                moved = moved | self._hand_moved  # a hand seen at the last rest and not gone since
            if not self.per_die:
                hand = find_hand(frame.image, roll_mask, die_px or None, moved=moved, gain=self.settle.gain)
                if hand is not None:
                    return self._hand_held(hand, moved, frame.t, update)
        t0 = time.perf_counter()
        dice_all, pairs, n_frames = self._vote_rest(expected)
        held_long = False
        if self.hands:
            held, held_long = self._hands_after_read(frame, update, dice_all, roll_mask, moved, die_px or None)
            if held is not None:
                return held
        # A die whose own look still changes is not at rest (spinning on a corner, rocking).
        if dice_all and len(self._rest) >= 2:
            turning = self._still_turning(dice_boxes(dice_all))
            if turning is not None and not short_rest:
                self._turning = turning
                return FrameResult(update, skipped="turning")
        self._done = True
        small = self.settle.last_small
        before_rest, self._rest_small = self._rest_small, small
        codes = self.zones.classify(dice_boxes(dice_all), w, h)
        roll = [d for d, c in zip(dice_all, codes) if c == ROLL]
        aside = [d for d, c in zip(dice_all, codes) if c == SET_ASIDE]
        self.last_detections = to_detections(roll + aside)
        read_ms = (time.perf_counter() - t0) * 1000.0
        recovered_all = False
        if not roll:
            recovered = self._recover_all(dice_all, pairs, expected, before_rest, small, w, h)
            if recovered is None:
                return FrameResult(update, skipped="empty")
            roll, recovered_all = recovered, True
            self.last_detections = to_detections(roll + aside)
        last = self.last_throw
        corrects: int | None = None
        correction = reason_pair(
            "corrected", "a die moved on after the throw was read: the throw is corrected",
            "кость сдвинулась после того, как бросок был прочитан: бросок исправлен")
        if self.suppress_repeats and last is not None and not self._new_throw:
            before = self._in_table(last.dice, small, w)
            against = self._against_last(last, roll, before, small, frame)
            if against == "same":
                return FrameResult(update, skipped="same")
            if against == "corrects":
                corrects = last.frame_index
                correction = self._correction_reason(last, roll, before)
        if corrects is None and not recovered_all and expected is not None and len(roll) < expected:
            extra = self._recover(dice_all, pairs, expected, w, h)
            roll = sorted(roll + extra[: expected - len(roll)], key=lambda d: (d.center[0], d.center[1]))
            self.last_detections = to_detections(roll + aside)
            read_ms = (time.perf_counter() - t0) * 1000.0
        if corrects is not None and last is not None:
            expected = last.expected_dice
        reasons = check_throw(roll, expected, self.overlap_iou, aside, self.expected_set_aside)
        if short_rest:
            reasons.append(reason_pair(
                "short_rest",
                f"the video ended {update.still_for_s:.2f} s into the rest (under the still time): check it",
                f"видео закончилось через {update.still_for_s:.2f} с покоя (меньше времени покоя): проверьте"))
        if held_long:
            reasons.append(reason_pair(
                "hand", "the dice may still lie in a hand: check them",
                "кости, возможно, ещё в руке: проверьте"))
        if corrects is not None:
            reasons.append(correction)
        return self._report(frame, update, t_arrive, roll, aside, expected, reasons, read_ms, n_frames, corrects)

    def _vote_rest(self, expected: int | None) -> tuple[list[Die], list[tuple[Detections, Detections]] | None, int]:
        """Read up to ``vote_frames`` frames of the rest (newest first, every other frame) and vote: ``(dice,
        per-frame (dice, candidates) pairs or None when no candidates are used, frames read)``."""
        rest = list(self._rest)
        picks = list(range(len(rest) - 1, -1, -2))[: self.vote_frames]  # newest first, every other frame
        frames = [rest[k][0] for k in picks]
        if self._use_candidates(expected):
            pairs = [self._read(f, True) for f in frames]
            pairs = [(self._to_newest(d, k), self._to_newest(c, k)) for (d, c), k in zip(pairs, picks)]
            reads = [dice for dice, _ in pairs]
        else:
            pairs = None
            reads = [self._to_newest(self._read(f, False), k) for f, k in zip(frames, picks)]
        return vote(reads, min_value_confidence=self.min_value_confidence, dedupe_iou=self.dedupe_iou), pairs, len(frames)

    def _hands_after_read(self, frame: Frame, update: SettleUpdate, dice_all: list[Die], roll_mask: np.ndarray | None,
                          moved: np.ndarray | None, die_px: float | None) -> tuple[FrameResult | None, bool]:
        """The hand checks once the dice are read: ``(the held result, or None; whether the dice may still lie in a
        hand held too long to wait for)``."""
        w = frame.image.shape[1]
        if self.per_die:
            # A hand holds a throw back only when it covers or touches a die (issue 40): an arm resting at the edge
            # of the view does not. With no die read, any hand in the roll area does (dice may lie on it unseen).
            centres = np.array([d.center for d in dice_all], np.float64).reshape(-1, 2) if dice_all else None
            hand = find_hand(frame.image, roll_mask, die_px or die_side(dice_all) or None, moved=moved,
                             gain=self.settle.gain, dice_at=centres)
            if hand is not None:
                return self._hand_held(hand, moved, frame.t, update), False
        hand, held_long = self._hand_without_colour(dice_all, roll_mask, moved, die_px or None, w, frame.t)
        if hand is not None:
            return self._hand_held(hand, moved, frame.t, update), held_long
        if not held_long:  # (while the dice may lie in a hand, every throw asks)
            self._hand_moved = self._hand_before = None
        return None, held_long

    def _recover_all(self, dice_all: list[Die], pairs: list[tuple[Detections, Detections]] | None,
                     expected: int | None, before_rest: np.ndarray | None, small: np.ndarray | None, w: int,
                     h: int) -> list[Die] | None:
        """The throw's dice when no die was sure enough, held for the table to confirm, or None (nothing new)."""
        # No die sure enough: a throw of dice the detector is unsure of (one die of Pig showing a lone 1),
        # or a table cleared of dice. Only candidates where the table changed since the last rest can
        # be the throw's dice; clutter that lay there before (a token, a coin) cannot. The two rests are
        # registered through the camera's motion, except after an announced throw: on a plain cloth
        # the landed die may be all the registration sees, and it would lay the old die onto it.
        extra = self._recover(dice_all, pairs, expected, w, h)
        if extra and not self._new_throw:
            before_rest = registered_rest(before_rest, small)
        thr = self.settle.diff_threshold / self.settle.gain  # (grey levels of a normally lit frame)
        extra = [d for d in extra if changed_since(d.box, before_rest, small, w, thr)]
        if not extra:
            return None
        assert expected is not None  # _recover returns nothing without an expected count
        # A throw with no die the detector was sure of is never scored unconfirmed, however clear the
        # faces: a coin or token knocked into a new place reads as a face too. Each keeps its face as
        # the guess, for the table to confirm.
        held = [replace(d, uncertain=True, value=UNKNOWN_VALUE, guess=d.value or d.guess) for d in extra[:expected]]
        return sorted(held, key=lambda d: (d.center[0], d.center[1]))

    def _against_last(self, last: Throw, roll: list[Die], before: list[Die], small: np.ndarray | None,
                      frame: Frame) -> str | None:
        """This rest against the last throw: ``"same"`` when it shows that throw again (not reported: the same dice
        unmoved, or nudged on with no face changed, followed silently), ``"corrects"`` when it continues and
        corrects it (:meth:`_continues`), else None (a new throw)."""
        if unmoved(roll, before):
            # The same dice at the same places: not a new throw. A re-read of an uncertain throw that
            # now gives other values is reported again (it may be the readable version the game waits
            # for). Judged on the dice found before any recovery of a short throw (when a player picks
            # up the dice to throw and leaves the kept ones lying, a weak box must not turn that into a
            # new throw); with no die found, on the recovered ones (a token a picked-up die had hidden).
            same_values = sorted(d.value for d in roll) == sorted(d.value for d in before if matched(d, roll))
            return "same" if last.ok or same_values else None
        if not self._continues(last, roll, before, frame.t):
            return None
        if sorted(d.value for d in roll) == sorted(d.value for d in last.dice) and last.ok:
            last.dice = roll  # a die nudged, no face changed: follow it silently
            self._last_small = small
            if self.per_die:
                self._watch_from(last, frame.image)
            return "same"
        return "corrects"

    def _report(self, frame: Frame, update: SettleUpdate, t_arrive: float, roll: list[Die], aside: list[Die],
                expected: int | None, reasons: list[tuple[str, str]], read_ms: float, n_frames: int,
                corrects: int | None) -> FrameResult:
        """The throw of this rest, remembered as the last one and reported."""
        blocking = any(code in BLOCKING_REASONS for code, _ in reasons)
        throw = Throw(
            frame_index=frame.index,
            time_s=frame.t,
            dice=roll,
            set_aside=aside,
            status="uncertain" if blocking else "ok",
            reasons=[r for _, r in reasons],
            reason_codes=[c for c, _ in reasons],
            image=frame.image if self.keep_image else None,
            expected_dice=expected,
            read_ms=read_ms,
            latency_s=time.monotonic() - t_arrive,
            frames_read=n_frames,
            corrects=corrects,
        )
        self.last_throw = throw
        self._last_small = self.settle.last_small
        self._last_peak = self.settle.motion_peak
        if self.per_die:
            self._watch_from(throw, frame.image)
        self.throws_reported += 1
        self._new_throw = False
        return FrameResult(update, throw=throw)

    def _recover(self, found: list[Die], pairs: list[tuple[Detections, Detections]] | None, expected: int | None,
                 w: int, h: int) -> list[Die]:
        """:func:`recover_dice` over this rest's reads (``pairs``: per voted frame, dice and candidates) for
        the ``found`` dice, keeping those in the roll area; ``[]`` when no count is expected or the reader
        gives no candidates."""
        if pairs is None or expected is None or expected < 1:
            return []
        extra = recover_dice(found, [Detections.concat(p) for p in pairs],
                             min_value_confidence=self.min_value_confidence,
                             min_confidence=self.recover_confidence, dedupe_iou=self.dedupe_iou,
                             overlap_iou=self.overlap_iou)
        return [d for d, c in zip(extra, self.zones.classify(dice_boxes(extra), w, h)) if c == ROLL]

    def _use_candidates(self, expected: int | None) -> bool:
        return self.recover and expected is not None and hasattr(self.reader, "read_candidates")

    def _drop_old_pixels(self, frames: deque[Any], frame_of: Any, with_frame: Any) -> None:
        """Free the pixels of the frames of ``frames`` (oldest first) that no later read can use; their times, indices
        and poses stay. The vote reads every other one of the last ``2·vote_frames − 1`` (:meth:`_vote_rest`), the
        turning check the newest at least ``turn_lag_s`` old, a point that only moves forward (a rest younger than
        the lag keeps all). Issue 44: 64 buffered 1280×720 frames of a 10 s rest made ``kosti run`` peak at 357 MB
        (ONNX); now about 12 frames at 30 fps keep pixels. ``frame_of(entry)`` is the entry's :class:`Frame`,
        ``with_frame(entry, frame)`` the entry with another."""
        n = len(frames)
        if n == 0:
            return
        lag_t = frame_of(frames[-1]).t - self.turn_lag_s + 1e-6  # newest first: stops at the lag's frame
        k = next((i for i in range(n - 1, -1, -1) if frame_of(frames[i]).t <= lag_t), None)
        first = 0 if k is None else max(0, min(k, n - 2 * self.vote_frames))
        for i in range(first - 1, -1, -1):  # newest first: the older ones were emptied before
            f = frame_of(frames[i])
            if f.image.size == 0:
                break
            frames[i] = with_frame(frames[i], Frame(_NO_PIXELS, f.t, f.index))

    def _read(self, frame: Frame, candidates: bool) -> Any:
        """The reader's result for ``frame`` (``read_candidates`` pair or ``read``), read once per rest.

        Raises:
            RuntimeError: the frame's pixels were freed (:meth:`_drop_old_pixels`) and it was not read before.
        """
        key = (frame.index, candidates)
        hit = self._reads.get(key)
        if hit is None:
            if frame.image.size == 0:
                raise RuntimeError(f"frame {frame.index} (t={frame.t:.3f} s) was read after its pixels were freed")
            read = self.reader.read_candidates if candidates else self.reader.read  # type: ignore[attr-defined]
            hit = read(frame.image)
            self._reads[key] = hit
        return hit

    def _preread(self, frame: Frame, update: SettleUpdate) -> None:
        """Read now a frame that will be one of the voted frames of this rest's settle event (every other
        frame of the last ``2·(vote_frames − 1)`` before it), so the settle event reads only its own."""
        if len(self._rest) < 2 or self.vote_frames < 2:
            return
        dt = frame.t - self._rest[-2][0].t
        ahead = (frame.t - update.still_for_s + self.settle.still_s) - frame.t
        if dt <= 0 or ahead <= 1e-6:
            return
        k = int(np.ceil((ahead - 1e-6) / dt))  # frames until the settle frame, at this frame rate
        if k % 2 == 0 and 2 <= k <= 2 * (self.vote_frames - 1):
            self._read(frame, self._use_candidates(self.expected_dice))

    def _to_newest(self, det: Detections, k: int) -> Detections:
        """Boxes read in rest frame ``k`` moved into the newest frame's pixels (the camera's motion)."""
        if k == len(self._rest) - 1 or len(det) == 0:
            return det
        m = self._pose(k, self._rest[-1][0].image.shape[1])
        if np.allclose(m, IDENTITY, atol=1e-3):
            return det
        return replace(det, xyxy=move_boxes(det.xyxy, m))

    def _in_table(self, dice: list[Die], small: np.ndarray | None, width: int) -> list[Die]:
        """The last throw's dice moved into this frame's pixels: the two settle images registered (a
        camera that drifted between the rests), or unchanged when they cannot be."""
        m = rest_motion(self._last_small, small)
        if m is None:
            return dice
        m = scale_transform(m, width / self.settle.width)
        moved = move_boxes(dice_boxes(dice), m)
        return [replace(d, box=(float(b[0]), float(b[1]), float(b[2]), float(b[3]))) for d, b in zip(dice, moved)]
