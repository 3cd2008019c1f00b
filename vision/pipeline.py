"""The live pipeline: frames → settle → read → one :class:`Throw` per rest period.

:class:`ThrowDetector` is the frame-by-frame core (no threads, no I/O): it feeds each frame to a
:class:`~kosti.vision.settle.SettleDetector`, keeps the last few still frames, and on the settle event
reads ``vote_frames`` of them with the dice reader, matches the dice across frames by box IoU, takes
each die's face by majority vote, sorts the dice into table zones and checks the throw:

* ``ok`` — the number of dice in the roll area equals ``expected_dice`` (the engine's dice to throw;
  ``None`` accepts any number ≥ 1), every die is read with confidence, and no two boxes overlap;
* ``uncertain`` — otherwise, with the reasons in English and Russian.

Every rest period yields at most one throw. A rest whose roll-area dice are all dice of the previous
throw, unmoved (a hand passed over the tray, a player took dice away, light changed), is not a new throw
and is not reported again; neither is an empty tray.

:class:`LivePipeline` runs a source through a ThrowDetector in a background thread for the dashboard:
subscribe a callback or iterate over throws, read :meth:`LivePipeline.status`, and fetch an annotated
frame (:func:`annotate`) for the MJPEG live view.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import cv2
import numpy as np

from kosti.models import DEFAULT_VALUE_CONF
from kosti.vision.detections import UNKNOWN_VALUE, Detections, box_iou
from kosti.vision.hands import HandBlob, appearance_change, find_hand
from kosti.vision.settle import (
    SettleDetector, SettleState, SettleUpdate, compose, estimate_camera_motion, invert, scale_transform,
)
from kosti.vision.sources import EndOfStream, Frame, FrameSource, ReconnectingSource, SourceError
from kosti.vision.zones import ROLL, SET_ASIDE, Zones

log = logging.getLogger(__name__)


class Reader(Protocol):
    """What the pipeline needs from a dice reader (:class:`kosti.vision.reader.DiceReader`)."""

    def read(self, image: np.ndarray) -> Detections:  # pragma: no cover - protocol
        """``(H, W, 3)`` uint8 BGR frame → :class:`Detections` in pixels of that frame."""
        ...


@dataclass(frozen=True)
class Die:
    """One die of a throw after voting.

    Attributes:
        value: face showing up 1–6; ``0`` when ``uncertain`` (never a silent guess).
        confidence: agreement × mean face probability of the winning value over the voted frames, 0–1.
        box: ``(x1, y1, x2, y2)`` in pixels of the frame (median over the frames that saw the die).
        uncertain: the face could not be read with confidence (see :class:`Throw` reasons).
        guess: the most voted face even when uncertain (0 if no frame read a face) — for display only.
        det_confidence: mean detector confidence, 0–1.
        votes: ``(frames agreeing on the value, frames that saw the die, frames read)``.
        recovered: found by :func:`recover_dice` — the detector was unsure of this box, and it was taken
            because the roll area held fewer dice than expected.
    """

    value: int
    confidence: float
    box: tuple[float, float, float, float]
    uncertain: bool = False
    guess: int = 0
    det_confidence: float = 1.0
    votes: tuple[int, int, int] = (1, 1, 1)
    recovered: bool = False

    @property
    def center(self) -> tuple[float, float]:
        """Box centre in pixels."""
        return ((self.box[0] + self.box[2]) / 2.0, (self.box[1] + self.box[3]) / 2.0)

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "confidence", "box"}`` as in ``kosti watch --json`` (``"uncertain": true`` added when so)."""
        d: dict[str, Any] = {
            "value": int(self.value),
            "confidence": round(float(self.confidence), 4),
            "box": [round(float(v), 1) for v in self.box],
        }
        if self.uncertain:
            d["uncertain"] = True
        return d


@dataclass
class Throw:
    """One settled throw as seen by the camera.

    Attributes:
        frame_index: index of the frame at which the table settled (the settle event).
        time_s: that frame's time in seconds (source clock: monotonic live, media time offline).
        dice: dice in the roll area, left to right.
        set_aside: dice in the set-aside area (kept earlier this turn).
        status: ``"ok"`` or ``"uncertain"``.
        reasons: why it is uncertain (and warnings), each ``"English / Русский"``.
        reason_codes: machine-readable codes of ``reasons`` (``wrong_count``, ``unreadable``,
            ``low_confidence``, ``disagree``, ``overlap``, ``recovered``, ``set_aside_mismatch``; the
            warnings ``short_rest`` — read when a video ended before the still time was up — and
            ``corrected`` — see ``corrects``).
        image: the settle frame, ``(H, W, 3)`` uint8 BGR (not copied; do not draw on it).
        expected_dice: the dice count the caller expected (None = any).
        read_ms: milliseconds spent reading and voting.
        latency_s: wall seconds from the settle frame's arrival to this throw.
        frames_read: frames that went into the vote.
        corrects: ``frame_index`` of the earlier throw this one replaces — the same physical throw,
            after a die tipped over or was nudged with no hand and no other die moving (None: a new throw).
    """

    frame_index: int
    time_s: float
    dice: list[Die]
    set_aside: list[Die] = field(default_factory=list)
    status: str = "ok"
    reasons: list[str] = field(default_factory=list)
    reason_codes: list[str] = field(default_factory=list)
    image: np.ndarray | None = field(default=None, repr=False)
    expected_dice: int | None = None
    read_ms: float = 0.0
    latency_s: float = 0.0
    frames_read: int = 1
    corrects: int | None = None

    @property
    def ok(self) -> bool:
        """True when ``status == "ok"``."""
        return self.status == "ok"

    @property
    def faces(self) -> list[int]:
        """Faces of the roll-area dice, ascending (the throw for the engine; only meaningful when ok)."""
        return sorted(d.value for d in self.dice if not d.uncertain)

    def to_dict(self) -> dict[str, Any]:
        """The ``kosti watch --json`` throw: ``{"frame", "time_s", "dice", "status"}`` (``../shared/docs/cli.md``),
        plus ``"corrects": frame`` when it replaces an earlier throw."""
        d: dict[str, Any] = {
            "frame": int(self.frame_index),
            "time_s": round(float(self.time_s), 3),
            "dice": [d.to_dict() for d in self.dice],
            "status": self.status,
        }
        if self.corrects is not None:
            d["corrects"] = int(self.corrects)
        return d

    def to_full_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` plus ``set_aside``, ``reasons``, ``reason_codes``, ``expected_dice``, ``faces``,
        ``read_ms`` (for the dashboard)."""
        d = self.to_dict()
        d.update(
            set_aside=[x.to_dict() for x in self.set_aside],
            reasons=list(self.reasons),
            reason_codes=list(self.reason_codes),
            expected_dice=self.expected_dice,
            faces=self.faces,
            read_ms=round(self.read_ms, 1),
        )
        return d


# ---------------------------------------------------------------------------------------------------
# Voting over several frames
# ---------------------------------------------------------------------------------------------------
def dedupe(det: Detections, iou: float = 0.5) -> Detections:
    """Drop boxes that cover another, more confident box of the same frame by IoU ≥ ``iou``.

    Seen from above, two dice never share half their box (a die on top of another hides it; a cocked die
    leaning on a neighbour overlaps it far less), so two such boxes are one die found twice — which a
    detector's own NMS lets through when its IoU threshold is higher (Ultralytics' default is 0.7).
    Smaller overlaps are kept and flagged by :func:`check_throw`.

    Args:
        det: one frame's detections.
        iou: IoU at or above which the less confident box is dropped.

    Returns:
        The kept detections, in their original order.
    """
    n = len(det)
    if n < 2:
        return det
    m = box_iou(det.xyxy, det.xyxy)
    keep = np.ones(n, dtype=bool)
    for i in np.argsort(-det.confidence, kind="stable"):
        if not keep[i]:
            continue
        later = (m[i] >= iou) & keep
        later[i] = False
        keep &= ~later
    return det.filter(keep)


def vote(
    reads: list[Detections], iou: float = 0.5, min_value_confidence: float = 0.5, dedupe_iou: float | None = 0.5
) -> list[Die]:
    """Merge the dice read in several frames of one rest period.

    Each frame is first cleaned of duplicate boxes (:func:`dedupe`, IoU ≥ ``dedupe_iou``; ``None`` = off).
    Dice are matched across frames greedily by box IoU (≥ ``iou``). A die counts when it is seen in a
    majority of the frames; its value is the majority face among its readings (unread readings, value 0,
    vote for "unknown"). The die is *uncertain* when no face has a majority of the frames that saw it, or
    the winning face's mean probability is below ``min_value_confidence``.

    Args:
        reads: one :class:`Detections` per frame (≥ 1), boxes in the same pixel frame.
        iou: IoU needed to call two boxes the same die.
        min_value_confidence: mean face probability needed to accept a face.
        dedupe_iou: in-frame duplicate suppression threshold (see :func:`dedupe`).

    Returns:
        Voted dice, left to right by box centre.
    """
    if not reads:
        return []
    tracks: list[dict[str, list]] = []
    for det in reads:
        if dedupe_iou is not None:
            det = dedupe(det, dedupe_iou)
        if not len(det):
            continue
        used_rows: set[int] = set()
        used_tracks: set[int] = set()
        if tracks:
            # Greedy matching on IoU with each track's latest box, best pairs first.
            m = box_iou(det.xyxy, np.array([tr["box"][-1] for tr in tracks]))
            for flat in np.argsort(-m, axis=None):
                i, j = (int(k) for k in np.unravel_index(flat, m.shape))
                if m[i, j] < iou:
                    break
                if i in used_rows or j in used_tracks:
                    continue
                _add(tracks[j], det, i)
                used_rows.add(i)
                used_tracks.add(j)
        for i in range(len(det)):
            if i not in used_rows:
                tr: dict[str, list] = {"box": [], "value": [], "vconf": [], "dconf": []}
                _add(tr, det, i)
                tracks.append(tr)
    n = len(reads)
    need_seen = n // 2 + 1
    dice: list[Die] = []
    for tr in tracks:
        seen = len(tr["value"])
        if seen < need_seen:
            continue
        values = np.array(tr["value"])
        vconf = np.array(tr["vconf"], dtype=np.float64)
        best, best_key = 0, (-1, -1.0)
        for v in range(1, 7):
            sel = values == v
            key = (int(sel.sum()), float(vconf[sel].sum()))
            if key[0] and key > best_key:
                best, best_key = v, key
        agree = best_key[0] if best else 0
        mean_p = float(vconf[values == best].mean()) if best else 0.0
        uncertain = best == 0 or agree < seen // 2 + 1 or mean_p < min_value_confidence
        confidence = (agree / seen) * mean_p if best else 0.0
        box = tuple(float(v) for v in np.median(np.array(tr["box"]), axis=0))
        dice.append(Die(
            value=UNKNOWN_VALUE if uncertain else best,
            confidence=confidence,
            box=box,  # type: ignore[arg-type]
            uncertain=uncertain,
            guess=best,
            det_confidence=float(np.mean(tr["dconf"])),
            votes=(agree, seen, n),
        ))
    dice.sort(key=lambda d: (d.center[0], d.center[1]))
    return dice


def _add(tr: dict, det: Detections, i: int) -> None:
    tr["box"].append(det.xyxy[i].astype(np.float64))
    tr["value"].append(int(det.value[i]))
    tr["vconf"].append(float(det.value_confidence[i]))
    tr["dconf"].append(float(det.confidence[i]))


def recover_dice(
    found: list[Die],
    reads: list[Detections],
    iou: float = 0.5,
    min_value_confidence: float = 0.5,
    min_confidence: float = 0.9,
    dedupe_iou: float | None = 0.5,
    overlap_iou: float = 0.2,
) -> list[Die]:
    """Dice the detector was unsure of, for a throw that came up short of the expected count.

    The live table knows how many dice were thrown. When the roll area holds fewer, the missing die is
    most often one the detector scored below its threshold (a die unlike the training data: a red die
    with gold pips on a wooden floor scores 0.08–0.24, ``models/README.md``) and whose face the
    classifier read, but not surely enough for the reader's second look
    (:meth:`kosti.vision.reader.DiceReader.read_candidates`). This votes over the frames' dice *and*
    candidates together (:func:`vote`) and returns the voted dice that are not already ``found``.

    A candidate is returned only when it was seen in a majority of the frames, a majority of them read
    the same face with mean probability ``≥ min_value_confidence``, and it neither matches nor overlaps
    (IoU ``> overlap_iou``, or a centre inside the other box) a found die. One whose confidence
    (agreement × mean face probability) is below ``min_confidence``, or that some frame did not see, is
    returned *uncertain*, its face kept as ``guess``, so the table confirms it instead of the game scoring
    a guess. The caller decides when to look (:class:`ThrowDetector` never does for a rest whose found
    dice all lie where the previous throw's lay: that is a player picking up dice, not a new throw).

    Args:
        found: the throw's voted dice (:func:`vote` over the same frames' dice alone).
        reads: per frame, its dice and candidates in one :class:`Detections` (``Detections.concat``).
        iou, min_value_confidence, dedupe_iou: as :func:`vote`.
        min_confidence: confidence, 0–1, at which a recovered die is taken as read.
        overlap_iou: IoU above which a candidate counts as a found die boxed differently.

    Returns:
        Recovered dice (``recovered=True``), best confidence first.
    """
    boxes = np.array([d.box for d in found], dtype=np.float64).reshape(-1, 4)
    out: list[Die] = []
    for d in vote(reads, iou=iou, min_value_confidence=min_value_confidence, dedupe_iou=dedupe_iou):
        if d.uncertain:
            continue
        if len(boxes):
            b = np.array([d.box], dtype=np.float64)
            if box_iou(b, boxes).max() > overlap_iou or any(
                _contains(fb, d.center) or _contains(b[0], f.center) for fb, f in zip(boxes, found)
            ):
                continue
        sure = d.confidence >= min_confidence and d.votes[1] == d.votes[2]  # seen in every frame read
        out.append(replace(d, recovered=True, uncertain=not sure,
                           value=d.value if sure else UNKNOWN_VALUE))
    out.sort(key=lambda d: -d.confidence)
    return out


# ---------------------------------------------------------------------------------------------------
# Throw checks
# ---------------------------------------------------------------------------------------------------
def _reason(code: str, en: str, ru: str) -> tuple[str, str]:
    return code, f"{en} / {ru}"


def check_throw(
    dice: list[Die],
    expected_dice: int | None,
    overlap_iou: float = 0.2,
    set_aside: list[Die] | None = None,
    expected_set_aside: list[int] | None = None,
) -> list[tuple[str, str]]:
    """Reasons why a throw cannot be trusted (empty list = ok).

    Checks, in order: dice count in the roll area against ``expected_dice``; unreadable / low-confidence
    dice; overlapping or stacked boxes (IoU > ``overlap_iou``, or one box's centre inside another); and,
    as warnings that do not by themselves make the throw uncertain, dice taken by :func:`recover_dice`
    (``recovered``) and set-aside faces against ``expected_set_aside`` (the engine's kept dice).

    Returns:
        ``(code, "English / Русский")`` pairs.
    """
    out: list[tuple[str, str]] = []
    n = len(dice)
    if expected_dice is not None and n != expected_dice:
        out.append(_reason(
            "wrong_count",
            f"expected {expected_dice} dice in the roll area, saw {n}",
            f"ожидалось костей в зоне броска: {expected_dice}, видно: {n}",
        ))
    elif expected_dice is None and n == 0:
        out.append(_reason("wrong_count", "no dice in the roll area", "в зоне броска нет костей"))
    for k, d in enumerate(dice, 1):
        if d.uncertain and d.guess == 0:
            out.append(_reason("unreadable", f"die {k} is unreadable (cocked, hidden or blurred)",
                               f"кость {k} не читается (на ребре, закрыта или смазана)"))
        elif d.uncertain and d.votes[0] < d.votes[1] // 2 + 1:
            out.append(_reason("disagree", f"die {k} reads differently across frames",
                               f"кость {k} читается по-разному на разных кадрах"))
        elif d.uncertain:
            out.append(_reason("low_confidence", f"die {k} read with low confidence ({d.confidence:.2f})",
                               f"кость {k} прочитана неуверенно ({d.confidence:.2f})"))
    if n >= 2:
        boxes = np.array([d.box for d in dice], dtype=np.float64)
        m = box_iou(boxes, boxes)
        for i in range(n):
            for j in range(i + 1, n):
                ci, cj = dice[i].center, dice[j].center
                inside = _contains(boxes[i], cj) or _contains(boxes[j], ci)
                if m[i, j] > overlap_iou or inside:
                    out.append(_reason("overlap", f"dice {i + 1} and {j + 1} overlap or are stacked",
                                       f"кости {i + 1} и {j + 1} перекрываются или стоят друг на друге"))
    recovered = [k for k, d in enumerate(dice, 1) if d.recovered]
    if recovered:
        which = ", ".join(map(str, recovered))
        out.append(_reason("recovered", f"die {which} found only on a second look at the expected count: check it",
                           f"кость {which} найдена только при повторном поиске до ожидаемого числа: проверьте"))
    if expected_set_aside is not None and set_aside is not None:
        seen = sorted(d.value for d in set_aside if not d.uncertain)
        want = sorted(int(v) for v in expected_set_aside)
        if seen != want:
            out.append(_reason(
                "set_aside_mismatch",
                f"set-aside dice show {seen or '—'}, the game kept {want or '—'}",
                f"в отложенных костях {seen or '—'}, а по игре отложено {want or '—'}",
            ))
    return out


def _contains(box: np.ndarray, p: tuple[float, float]) -> bool:
    return bool(box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3])


#: Reason codes that make a throw uncertain (``set_aside_mismatch``, ``recovered``, ``short_rest`` and
#: ``corrected`` are only warnings).
BLOCKING_REASONS = frozenset({"wrong_count", "unreadable", "disagree", "low_confidence", "overlap"})


# ---------------------------------------------------------------------------------------------------
# Frame-by-frame core
# ---------------------------------------------------------------------------------------------------
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


class ThrowDetector:
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
        settle: the settle detector (default :class:`SettleDetector` with 0.4 s still time).
        expected_dice: dice expected in the roll area (the engine's dice to throw) or None = any.
        vote_frames: still frames read per throw (≥ 1; odd numbers avoid ties).
        min_value_confidence: mean face probability over the voted frames needed to accept a die's face
            (default the shipped reader's per-frame ``value_conf``, :data:`kosti.models.DEFAULT_VALUE_CONF`;
            the dashboard sets both from its ``value_conf`` threshold).
        overlap_iou: box IoU above which two dice count as overlapping/stacked.
        dedupe_iou: IoU at which two boxes of one frame are one die found twice (:func:`dedupe`; None = off).
        suppress_repeats: do not report a rest whose dice are the previous throw's dice, unmoved.
        keep_image: attach the settle frame to each :class:`Throw`.
        recover: when the roll area holds at least one but fewer than ``expected_dice`` dice, take the
            best of the reader's unconfirmed weak boxes (:func:`recover_dice`; needs a reader with
            ``read_candidates``, as :class:`~kosti.vision.reader.DiceReader`).
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
    ) -> None:
        if vote_frames < 1:
            raise ValueError("vote_frames must be >= 1")
        if not 0.0 <= recover_confidence <= 1.0:
            raise ValueError(f"recover_confidence must be in [0, 1], got {recover_confidence}")
        if turn_lag_s <= 0 or turn_threshold <= 0:
            raise ValueError("turn_lag_s and turn_threshold must be > 0")
        self.reader = reader
        self.zones = zones or Zones()
        self.settle = settle or SettleDetector()
        self.expected_dice = expected_dice
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
        self.last_throw: Throw | None = None
        self._last_small: np.ndarray | None = None  # settle image of the last throw (table coordinates)
        self._last_peak = 0.0
        self.last_detections: Detections | None = None  # roll+aside dice of the last read, for overlays
        self.last_hand: HandBlob | None = None
        self._hand_moved: np.ndarray | None = None  # where things moved before the rests a hand held
        self.throws_reported = 0
        self._new_throw = False  # a throw was announced (expect_new_throw): the next rest is not a correction

    def expect_new_throw(self) -> None:
        """The next throw reported is a new throw, never a correction of the last one.

        For a source that knows when the dice are thrown (the virtual table's Throw button): a frame rate
        that misses the throw's motion would otherwise make a die landing near the old one look like that
        die nudged (:attr:`Throw.corrects`). Cleared when the next throw is reported."""
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
        self.last_detections = None
        self.last_hand = None
        self._hand_moved = None

    def process(self, frame: Frame) -> FrameResult:
        """Feed one frame; returns the settle update and, on a settle event, the throw (or why none).

        Raises whatever the reader raises (the caller decides; :class:`LivePipeline` logs and goes on).
        """
        t_arrive = time.monotonic()
        update = self.settle.update(frame.image, frame.t)
        if update.state is SettleState.MOVING:
            self._rest.clear()
            self._reads.clear()
            self._turning = None
            self._done = False
            self.last_detections = None
            self.last_hand = None
            return FrameResult(update)
        self._rest.append((frame, update.camera if update.camera is not None else _IDENTITY))
        if self._done:
            return FrameResult(update)
        if self._turning is not None:
            if self._still_turning(self._turning) is not None:
                return FrameResult(update)
            self._turning = None
            return self._decide(frame, update, t_arrive)
        if not update.settled_now:
            if self.preread and update.state is SettleState.SETTLING:
                self._preread(frame, update)
            return FrameResult(update)
        return self._decide(frame, update, t_arrive)

    def finish(self) -> FrameResult | None:
        """The source has ended: read a rest that lasted at least half the still time but had not settled
        (flagged ``short_rest``). Returns None when there is nothing to read."""
        update = self.settle.last
        if (update is None or update.state is not SettleState.SETTLING or self._done or self._turning is not None
                or not self._rest or update.still_for_s < 0.5 * self.settle.still_s - 1e-6):
            return None
        frame = self._rest[-1][0]
        return self._decide(frame, update, time.monotonic(), short_rest=True)

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
        changes = np.array([appearance_change(then.image, newest.image, b, m) for b in boxes])
        moving = changes > self.turn_threshold
        return boxes[moving] if moving.any() else None

    def _decide(self, frame: Frame, update: SettleUpdate, t_arrive: float, short_rest: bool = False) -> FrameResult:
        h, w = frame.image.shape[:2]
        expected = self.expected_dice  # read once: the caller may change it from another thread
        die_px = self.last_throw and _die_side(self.last_throw.dice)
        if self.hands:
            roll_mask = np.zeros((h, w), np.uint8)
            cv2.fillPoly(roll_mask, [self.zones.pixel_polygons(w, h)["roll_area"]], 255)
            moved = self.settle.motion_mask
            if self._hand_moved is not None and moved is not None and self._hand_moved.shape == moved.shape:
                moved = moved | self._hand_moved  # a hand seen at the last rest and not gone since
            hand = find_hand(frame.image, roll_mask, die_px or None, moved=moved)
            if hand is not None:
                self.last_hand = hand
                self._hand_moved = moved
                self._done = True
                return FrameResult(update, skipped="hand")
            self._hand_moved = None
        t0 = time.perf_counter()
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
        dice_all = vote(reads, min_value_confidence=self.min_value_confidence, dedupe_iou=self.dedupe_iou)
        # A die whose own look still changes is not at rest (spinning on a corner, rocking).
        if dice_all and len(rest) >= 2:
            turning = self._still_turning(_boxes(dice_all))
            if turning is not None and not short_rest:
                self._turning = turning
                return FrameResult(update, skipped="turning")
        self._done = True
        codes = self.zones.classify(_boxes(dice_all), w, h)
        roll = [d for d, c in zip(dice_all, codes) if c == ROLL]
        aside = [d for d, c in zip(dice_all, codes) if c == SET_ASIDE]
        self.last_detections = _to_detections(roll + aside)
        read_ms = (time.perf_counter() - t0) * 1000.0
        if not roll:
            return FrameResult(update, skipped="empty")
        last = self.last_throw
        small = self.settle.last_small
        corrects: int | None = None
        if self.suppress_repeats and last is not None:
            before = self._in_table(last.dice, small, w)
            if _unmoved(roll, before):
                # The same dice at the same places: not a new throw. A re-read of an uncertain throw that
                # now gives other values is reported again (it may be the readable version the game waits
                # for). Judged on the dice found before any recovery: when a player picks up the dice to
                # throw and leaves the kept ones lying, a weak box must not turn that into a new throw.
                same_values = sorted(d.value for d in roll) == sorted(d.value for d in before if _matched(d, roll))
                if last.ok or same_values:
                    return FrameResult(update, skipped="same")
            elif not self._new_throw and self._continues(last, roll, before, frame.t):
                if sorted(d.value for d in roll) == sorted(d.value for d in last.dice) and last.ok:
                    last.dice = roll  # a die nudged, no face changed: follow it silently
                    self._last_small = small
                    return FrameResult(update, skipped="same")
                corrects = last.frame_index
        if corrects is None and pairs is not None and expected is not None and len(roll) < expected:
            extra = recover_dice(dice_all, [Detections.concat(p) for p in pairs],
                                 min_value_confidence=self.min_value_confidence,
                                 min_confidence=self.recover_confidence, dedupe_iou=self.dedupe_iou,
                                 overlap_iou=self.overlap_iou)
            extra = [d for d, c in zip(extra, self.zones.classify(_boxes(extra), w, h)) if c == ROLL]
            roll = sorted(roll + extra[: expected - len(roll)], key=lambda d: (d.center[0], d.center[1]))
            self.last_detections = _to_detections(roll + aside)
            read_ms = (time.perf_counter() - t0) * 1000.0
        if corrects is not None and last is not None:
            expected = last.expected_dice
        reasons = check_throw(roll, expected, self.overlap_iou, aside, self.expected_set_aside)
        if short_rest:
            reasons.append(_reason(
                "short_rest",
                f"the video ended {update.still_for_s:.2f} s into the rest (under the still time): check it",
                f"видео закончилось через {update.still_for_s:.2f} с покоя (меньше времени покоя): проверьте"))
        if corrects is not None:
            reasons.append(_reason(
                "corrected", "a die moved on after the throw was read: the throw is corrected",
                "кость сдвинулась после того, как бросок был прочитан: бросок исправлен"))
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
            frames_read=len(frames),
            corrects=corrects,
        )
        self.last_throw = throw
        self._last_small = small
        self._last_peak = self.settle.motion_peak
        self.throws_reported += 1
        self._new_throw = False
        return FrameResult(update, throw=throw)

    def _use_candidates(self, expected: int | None) -> bool:
        return self.recover and expected is not None and hasattr(self.reader, "read_candidates")

    def _read(self, frame: Frame, candidates: bool) -> Any:
        """The reader's result for ``frame`` (``read_candidates`` pair or ``read``), read once per rest."""
        key = (frame.index, candidates)
        hit = self._reads.get(key)
        if hit is None:
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
        if np.allclose(m, _IDENTITY, atol=1e-3):
            return det
        return replace(det, xyxy=_move_boxes(det.xyxy, m))

    def _in_table(self, dice: list[Die], small: np.ndarray | None, width: int) -> list[Die]:
        """The last throw's dice moved into this frame's pixels: the two settle images registered (a
        camera that drifted between the rests), or unchanged when they cannot be."""
        if small is None or self._last_small is None or self._last_small.shape != small.shape:
            return dice
        m = estimate_camera_motion(self._last_small, small, max_shift=0.1 * small.shape[1], max_angle_deg=5.0)
        if m is None or np.allclose(m, _IDENTITY, atol=1e-3):
            return dice
        m = scale_transform(m, width / self.settle.width)
        moved = _move_boxes(_boxes(dice), m)
        return [replace(d, box=tuple(float(v) for v in b)) for d, b in zip(dice, moved)]

    def _continues(self, last: Throw, roll: list[Die], before: list[Die], t: float) -> bool:
        """True when this rest is the last throw continuing: same count, at most two dice moved, each by
        at most 1.5 die sides, soon after it, and the motion in between was quiet (no hand, no throw)."""
        if not last.dice or len(roll) != len(last.dice) or t - last.time_s > self.continue_s:
            return False
        side = _die_side(last.dice)
        if self.settle.last_small is None:
            return False
        area = self.settle.last_small.size
        scale = self.settle.width / float(self._rest[-1][0].image.shape[1])
        die_fraction = (side * scale) ** 2 / area
        if self.settle.motion_peak > max(0.004, self.quiet_dice * die_fraction):
            return False
        m = box_iou(_boxes(roll), _boxes(before))
        moved_now = [i for i in range(len(roll)) if m[i].max() < 0.7]
        if not moved_now or len(moved_now) > 2:
            return False
        free = [j for j in range(len(before)) if m[:, j].max() < 0.7]
        for i in moved_now:
            c = np.array(roll[i].center)
            if not any(np.hypot(*(c - np.array(before[j].center))) <= 1.5 * side for j in free):
                return False
        return True


_IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def _die_side(dice: list[Die]) -> float:
    """Median side (pixels) of the dice's boxes (0 when none)."""
    if not dice:
        return 0.0
    b = _boxes(dice)
    return float(np.median(np.sqrt(np.maximum(0.0, (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])))))


def _move_boxes(xyxy: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``(N, 4)`` boxes moved by the ``(2, 3)`` transform ``m`` (centres mapped, sizes kept), float32."""
    b = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    c = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, np.ones(len(b))], 1) @ np.asarray(m).T
    half = np.stack([(b[:, 2] - b[:, 0]) / 2, (b[:, 3] - b[:, 1]) / 2], 1)
    return np.concatenate([c - half, c + half], 1).astype(np.float32)


def _boxes(dice: list[Die]) -> np.ndarray:
    """``(N, 4)`` float32 boxes of ``dice``."""
    return np.array([d.box for d in dice], dtype=np.float32).reshape(-1, 4)


def _unmoved(now: list[Die], before: list[Die], iou: float = 0.7) -> bool:
    """True when every die now lies where one of ``before`` lay (box IoU ≥ ``iou``), whatever its face
    reads: nobody threw, dice were at most taken away."""
    if not now or not before:
        return False
    m = box_iou(np.array([d.box for d in now]), np.array([d.box for d in before]))
    used: set[int] = set()
    for i in range(len(now)):
        j = int(np.argmax(m[i]))
        if m[i, j] < iou or j in used:
            return False
        used.add(j)
    return True


def _matched(die: Die, others: list[Die], iou: float = 0.7) -> bool:
    """True when ``die``'s box matches one of ``others`` (IoU ≥ ``iou``)."""
    return bool(others) and float(box_iou(np.array([die.box]), np.array([d.box for d in others])).max()) >= iou


def _to_detections(dice: list[Die]) -> Detections:
    if not dice:
        return Detections.empty()
    return Detections(
        np.array([d.box for d in dice]), np.array([d.det_confidence for d in dice]),
        np.array([d.value for d in dice]), np.array([d.confidence for d in dice]),
    )


# ---------------------------------------------------------------------------------------------------
# Overlay for the live view
# ---------------------------------------------------------------------------------------------------
_STATE_COLORS = {"moving": (0, 140, 255), "settling": (0, 215, 255), "settled": (60, 200, 60)}


def annotate(
    image: np.ndarray,
    detections: Detections | list[Die] | None,
    state: SettleUpdate | SettleState | str | None,
    zones: Zones | None = None,
    status: str | None = None,
) -> np.ndarray:
    """Draw the live-view overlay on a copy of ``image``.

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame (not modified).
        detections: dice to draw (:class:`Detections` or :class:`Die` list); value 0 = uncertain (orange "?").
        state: settle state (an update also draws its motion bar).
        zones: draws the roll area (green) and set-aside area (blue) outlines.
        status: throw status text (``ok`` / ``uncertain``) added to the banner.

    Returns:
        A new ``(H, W, 3)`` uint8 BGR image. Text is ASCII (OpenCV's Hershey fonts have no Cyrillic);
        the dashboard shows the Russian labels in HTML.
    """
    out = image.copy()
    h, w = out.shape[:2]
    scale = max(0.5, min(w, h) / 720.0)
    thick = max(1, round(2 * scale))
    if zones is not None:
        polys = zones.pixel_polygons(w, h)
        cv2.polylines(out, [polys["roll_area"]], True, (80, 200, 80), thick, cv2.LINE_AA)
        if "set_aside" in polys:
            cv2.polylines(out, [polys["set_aside"]], True, (220, 160, 40), thick, cv2.LINE_AA)
    if isinstance(detections, Detections):
        items = [(tuple(b), int(v), float(c)) for b, v, c in zip(detections.xyxy, detections.value, detections.value_confidence)]
    else:
        items = [(d.box, int(d.value), float(d.confidence)) for d in (detections or [])]
    for (x1, y1, x2, y2), value, conf in items:
        color = (60, 220, 60) if value else (0, 140, 255)
        p1, p2 = (int(round(x1)), int(round(y1))), (int(round(x2)), int(round(y2)))
        cv2.rectangle(out, p1, p2, color, thick, cv2.LINE_AA)
        label = f"{value} {conf:.2f}" if value else "?"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, thick)
        ty = max(th + 4, p1[1] - 4)
        cv2.rectangle(out, (p1[0], ty - th - 4), (p1[0] + tw + 4, ty + 2), color, -1)
        cv2.putText(out, label, (p1[0] + 2, ty), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), thick, cv2.LINE_AA)
    if state is not None:
        name = state.state.value if isinstance(state, SettleUpdate) else SettleState(state).value
        text = name.upper() + (f"  {status}" if status else "")
        color = _STATE_COLORS.get(name, (255, 255, 255))
        cv2.rectangle(out, (0, 0), (int(260 * scale), int(34 * scale)), (0, 0, 0), -1)
        cv2.putText(out, text, (int(8 * scale), int(24 * scale)), cv2.FONT_HERSHEY_SIMPLEX, 0.7 * scale, color, thick, cv2.LINE_AA)
        if isinstance(state, SettleUpdate):
            bar = int(min(1.0, state.motion / 0.05) * 250 * scale)
            cv2.rectangle(out, (int(5 * scale), int(30 * scale)), (int(5 * scale) + bar, int(33 * scale)), color, -1)
    return out


# ---------------------------------------------------------------------------------------------------
# Threaded runner for the dashboard
# ---------------------------------------------------------------------------------------------------
class LivePipeline:
    """Runs ``source → ThrowDetector`` in a background thread and publishes throws.

    Usage::

        pipe = LivePipeline(open_source("0"), DiceReader(), expected_dice=5)
        pipe.subscribe(lambda throw: print(throw.faces, throw.status))
        pipe.start()
        ...
        pipe.expected_dice = 3          # after the engine says how many dice to throw next
        jpeg = pipe.live_jpeg()         # annotated frame for the MJPEG view
        pipe.stop()

    Callbacks run in the pipeline thread; a callback that raises is logged and does not stop the
    pipeline. :meth:`throws` iterates over throws from any thread. Source failures never end the
    thread: a :class:`SourceError` is reported in :meth:`status` and retried after ``retry_s`` seconds
    (wrap cameras in :class:`ReconnectingSource` for backoff). A finite source ends the thread at its end,
    after reading a rest it ended in (:meth:`ThrowDetector.finish`).

    Args:
        source: any :class:`FrameSource` (opened by the pipeline).
        reader: the dice reader; other arguments as :class:`ThrowDetector`.
        retry_s: pause after a source error before reading again.
    """

    def __init__(
        self,
        source: FrameSource,
        reader: Reader,
        zones: Zones | None = None,
        settle: SettleDetector | None = None,
        expected_dice: int | None = None,
        vote_frames: int = 3,
        retry_s: float = 1.0,
        **detector_kwargs: Any,
    ) -> None:
        self.source = source
        self.detector = ThrowDetector(reader, zones, settle, expected_dice, vote_frames, **detector_kwargs)
        self.retry_s = retry_s
        self._subscribers: list[Callable[[Throw], None]] = []
        self._queues: list[queue.Queue[Throw | None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._latest: Frame | None = None
        self._latest_update: SettleUpdate | None = None
        self._error: str | None = None
        self._frames = 0
        self._started_wall = 0.0
        self._finished = threading.Event()
        self.throws_log: deque[Throw] = deque(maxlen=50)

    # -- control -----------------------------------------------------------------------------------
    @property
    def expected_dice(self) -> int | None:
        """Dice expected in the roll area for the next throw (None = any); settable from any thread."""
        return self.detector.expected_dice

    @expected_dice.setter
    def expected_dice(self, n: int | None) -> None:
        if n is not None and int(n) < 0:
            raise ValueError("expected_dice must be >= 0 or None")
        self.detector.expected_dice = None if n is None else int(n)

    @property
    def expected_set_aside(self) -> list[int] | None:
        """Faces the engine says are set aside this turn (checked as a warning), settable."""
        return self.detector.expected_set_aside

    @expected_set_aside.setter
    def expected_set_aside(self, faces: list[int] | None) -> None:
        self.detector.expected_set_aside = None if faces is None else [int(f) for f in faces]

    @property
    def zones(self) -> Zones:
        """Current zones; assign a new :class:`Zones` to recalibrate (takes effect at the next throw)."""
        return self.detector.zones

    @zones.setter
    def zones(self, zones: Zones) -> None:
        self.detector.zones = zones

    def subscribe(self, callback: Callable[[Throw], None]) -> Callable[[], None]:
        """Call ``callback(throw)`` (in the pipeline thread) for every throw; returns an unsubscribe function."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def throws(self, timeout: float | None = None) -> Iterator[Throw]:
        """Iterate over throws from now on (any thread); ends when the pipeline stops or after ``timeout`` s idle."""
        q: queue.Queue[Throw | None] = queue.Queue()
        with self._lock:
            self._queues.append(q)
        try:
            while True:
                try:
                    item = q.get(timeout=timeout)
                except queue.Empty:
                    return
                if item is None:
                    return
                yield item
        finally:
            with self._lock:
                if q in self._queues:
                    self._queues.remove(q)

    def start(self) -> LivePipeline:
        """Start the background thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._finished.clear()
            self._thread = threading.Thread(target=self.run, name="kosti-live-pipeline", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close the source."""
        self._stop.set()
        self.source.cancel()  # wake a read blocked on a camera or a reconnect backoff
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.source.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the run loop has finished (finite source ended or stopped); True if it has."""
        return self._finished.wait(timeout)

    # -- loop ----------------------------------------------------------------------------------------
    def run(self, max_frames: int | None = None) -> None:
        """The loop (runs in the caller's thread when called directly): read, detect, publish."""
        self._started_wall = time.monotonic()
        try:
            while not self._stop.is_set() and (max_frames is None or self._frames < max_frames):
                try:
                    frame = self.source.read()
                except EndOfStream:
                    end = self.detector.finish()  # a rest the video ended in (flagged short_rest)
                    if end is not None and end.throw is not None:
                        self._publish(end.throw)
                    break
                except SourceError as exc:
                    self._error = str(exc)
                    log.warning("frame source error: %s", exc)
                    self._stop.wait(self.retry_s)
                    continue
                self._error = None
                self._frames += 1
                try:
                    result = self.detector.process(frame)
                except Exception as exc:  # noqa: BLE001 - a reader failure must not kill the live view
                    log.exception("reading the settled frame failed")
                    self._error = f"reader: {type(exc).__name__}: {exc}"
                    continue
                self._latest, self._latest_update = frame, result.update
                if result.throw is not None:
                    self._publish(result.throw)
        finally:
            with self._lock:
                for q in self._queues:
                    q.put(None)
            self._finished.set()

    def _publish(self, throw: Throw) -> None:
        self.throws_log.append(throw)
        with self._lock:
            subscribers = list(self._subscribers)
            queues = list(self._queues)
        for q in queues:
            q.put(throw)
        for cb in subscribers:
            try:
                cb(throw)
            except Exception:  # noqa: BLE001 - a subscriber bug must not stop the camera
                log.exception("throw subscriber failed")

    # -- views ---------------------------------------------------------------------------------------
    def annotated_frame(self) -> np.ndarray | None:
        """The newest frame with the overlay (zones, last throw's dice while settled, state), or None."""
        frame, update = self._latest, self._latest_update
        if frame is None:
            return None
        dets = self.detector.last_detections if update is not None and update.state is SettleState.SETTLED else None
        last = self.detector.last_throw
        status = last.status if last is not None and dets is not None else None
        return annotate(frame.image, dets, update, self.detector.zones, status)

    def live_jpeg(self, quality: int = 80, max_width: int | None = 960) -> bytes | None:
        """:meth:`annotated_frame` as JPEG bytes (downscaled to ``max_width`` px), or None before the first frame."""
        img = self.annotated_frame()
        if img is None:
            return None
        if max_width and img.shape[1] > max_width:
            s = max_width / img.shape[1]
            img = cv2.resize(img, (max_width, round(img.shape[0] * s)), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        return buf.tobytes() if ok else None

    def status(self) -> dict[str, Any]:
        """Snapshot for the dashboard: ``running``, ``source`` (info + status), ``state``, ``motion``,
        ``fps`` (measured), ``frames``, ``throws``, ``expected_dice``, ``error``, ``last_throw``."""
        src = self.source.status.to_dict() if isinstance(self.source, ReconnectingSource) else (
            {"state": "ok" if self._error is None else "reconnecting", "message": self._error or ""})
        update = self._latest_update
        last = self.detector.last_throw
        return {
            "running": self._thread is not None and self._thread.is_alive(),
            "source": {"info": self.source.info(), "status": src},
            "state": update.state.value if update else None,
            "motion": round(update.motion, 4) if update else None,
            "fps": round(self.source.fps, 1),
            "frames": self._frames,
            "throws": self.detector.throws_reported,
            "expected_dice": self.expected_dice,
            "error": self._error,
            "last_throw": last.to_full_dict() if last else None,
        }


def default_reader(**kwargs: Any) -> Reader:
    """The shipped :class:`kosti.vision.reader.DiceReader` (imports it lazily). Raises its ModelLoadError."""
    from kosti.vision.reader import DiceReader

    return DiceReader(**kwargs)
