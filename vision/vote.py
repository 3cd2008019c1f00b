"""One throw from several frames: drop duplicate boxes (:func:`dedupe`), match the dice across frames and take
each face by majority (:func:`vote`), find dice the detector was unsure of (:func:`recover_dice`), and say why a
throw cannot be trusted (:func:`check_throw`). Pure functions on :class:`~kosti.vision.detections.Detections`
and :class:`~kosti.vision.throws.Die` lists (no state, no threads)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from kosti.models import DEFAULT_WEAK_NESTED_FRAC
from kosti.vision.detections import UNKNOWN_VALUE, Detections, box_cover, box_iou
from kosti.vision.throws import Die


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
    tracks: list[dict[str, list[Any]]] = []
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
                tr: dict[str, list[Any]] = {"box": [], "value": [], "vconf": [], "dconf": [], "guess": []}
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
        x1, y1, x2, y2 = (float(v) for v in np.median(np.array(tr["box"]), axis=0))
        dice.append(Die(
            value=UNKNOWN_VALUE if uncertain else best,
            confidence=confidence,
            box=(x1, y1, x2, y2),
            uncertain=uncertain,
            guess=best,
            likely=best or _most_guessed(tr["guess"]),
            det_confidence=float(np.mean(tr["dconf"])),
            votes=(agree, seen, n),
        ))
    dice.sort(key=lambda d: (d.center[0], d.center[1]))
    return dice


def _guesses_filled(det: Detections) -> Detections:
    """``det`` with each unread die (value 0) given its ``guess`` column's face, where there is one."""
    guess = det.data.get("guess")
    if guess is None or not len(det):
        return det
    return Detections(det.xyxy, det.confidence, np.where(det.value > 0, det.value, guess), det.value_confidence,
                      det.data)


def _most_guessed(guesses: list[int]) -> int:
    """The face 1–6 guessed in most readings (ties: the smaller face), 0 when none was guessed."""
    faces = [g for g in guesses if 1 <= g <= 6]
    return max(set(faces), key=lambda f: (faces.count(f), -f)) if faces else 0


def _add(tr: dict[str, list[Any]], det: Detections, i: int) -> None:
    tr["box"].append(det.xyxy[i].astype(np.float64))
    tr["value"].append(int(det.value[i]))
    tr["vconf"].append(float(det.value_confidence[i]))
    tr["dconf"].append(float(det.confidence[i]))
    guess = det.data.get("guess")
    tr["guess"].append(int(det.value[i]) or (int(guess[i]) if guess is not None else 0))


def recover_dice(
    found: list[Die],
    reads: list[Detections],
    iou: float = 0.5,
    min_value_confidence: float = 0.5,
    min_confidence: float = 0.9,
    dedupe_iou: float | None = 0.5,
    overlap_iou: float = 0.2,
    overlap_share: float = DEFAULT_WEAK_NESTED_FRAC,
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
    (IoU ``> overlap_iou``, a centre inside the other box, or ``≥ overlap_share`` of its own area on it) a
    found die. One whose confidence
    (agreement × mean face probability) is below ``min_confidence``, or that some frame did not see, is
    returned *uncertain*, its face kept as ``guess``, so the table confirms it instead of the game scoring
    a guess. So is one that the frames did not read by a majority, but whose readings agree once each
    unread reading (value 0) counts as its own best face (the reader's ``guess`` column) by the same
    majority and mean probability: a lone 1 that :meth:`~kosti.vision.reader.DiceReader.lone_ones` turned
    down (read at p 0.96–0.999 and kept unread because number tokens look like it) in some or all frames.
    The caller decides when to look (:class:`ThrowDetector` never does for a rest whose found dice all lie
    where the previous throw's lay: that is a player picking up dice, not a new throw).

    Args:
        found: the throw's voted dice (:func:`vote` over the same frames' dice alone).
        reads: per frame, its dice and candidates in one :class:`Detections` (``Detections.concat``).
        iou, min_value_confidence, dedupe_iou: as :func:`vote`.
        min_confidence: confidence, 0–1, at which a recovered die is taken as read.
        overlap_iou: IoU above which a candidate counts as a found die boxed differently.
        overlap_share: share of a candidate's own area, 0–1, lying on a found die at which it is that die
            again (a side face or a shifted box; the reader drops such a weak box from its dice by the same
            share at the defaults, :class:`kosti.vision.reader.DiceReader` ``weak_nested_frac``); above 1
            turns this rule off.

    Returns:
        Recovered dice (``recovered=True``), best confidence first.
    """
    boxes = np.array([d.box for d in found], dtype=np.float64).reshape(-1, 4)
    # a candidate the classifier read surely as not a die (the reader's not_die column) is never recovered
    reads = [r[~r.data["not_die"]] if "not_die" in r.data else r for r in reads]
    voted = vote(reads, iou=iou, min_value_confidence=min_value_confidence, dedupe_iou=dedupe_iou)
    # The same vote with each unread reading counted as its best guess: the same boxes, so the same dice.
    guessed = {d.box: d for d in vote([_guesses_filled(r) for r in reads], iou=iou,
                                      min_value_confidence=min_value_confidence, dedupe_iou=dedupe_iou)}
    out: list[Die] = []
    for d in voted:
        if d.uncertain:
            g = guessed.get(d.box)
            if g is None or g.uncertain:
                continue
            d = replace(g, uncertain=True, value=UNKNOWN_VALUE, guess=g.value)  # never taken as read
        if len(boxes):
            b = np.array([d.box], dtype=np.float64)
            if box_iou(b, boxes).max() > overlap_iou or box_cover(b, boxes).max() >= overlap_share or any(
                _contains(fb, d.center) or _contains(b[0], f.center) for fb, f in zip(boxes, found)
            ):
                continue
        # seen in every frame read, and read there (not a guess)
        sure = not d.uncertain and d.confidence >= min_confidence and d.votes[1] == d.votes[2]
        out.append(replace(d, recovered=True, uncertain=not sure,
                           value=d.value if sure else UNKNOWN_VALUE))
    out.sort(key=lambda d: -d.confidence)
    return out


# ---------------------------------------------------------------------------------------------------
# Throw checks
# ---------------------------------------------------------------------------------------------------
def reason_pair(code: str, en: str, ru: str) -> tuple[str, str]:
    """A throw's reason as ``(code, "English / Русский")`` (the form :attr:`Throw.reason_codes` and
    :attr:`Throw.reasons` are made from)."""
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
        out.append(reason_pair(
            "wrong_count",
            f"expected {expected_dice} dice in the roll area, saw {n}",
            f"ожидалось костей в зоне броска: {expected_dice}, видно: {n}",
        ))
    elif expected_dice is None and n == 0:
        out.append(reason_pair("wrong_count", "no dice in the roll area", "в зоне броска нет костей"))
    for k, d in enumerate(dice, 1):
        if d.uncertain and d.guess == 0:
            out.append(reason_pair("unreadable", f"die {k} is unreadable (cocked, hidden or blurred)",
                               f"кость {k} не читается (на ребре, закрыта или смазана)"))
        elif d.uncertain and d.votes[0] < d.votes[1] // 2 + 1:
            out.append(reason_pair("disagree", f"die {k} reads differently across frames",
                               f"кость {k} читается по-разному на разных кадрах"))
        elif d.uncertain and d.recovered:  # its confidence may be high: it is unconfirmed, not unsure
            out.append(reason_pair("low_confidence", f"die {k} looks like a {d.guess}: confirm it",
                                   f"кость {k}, похоже, {d.guess}: подтвердите"))
        elif d.uncertain:
            out.append(reason_pair("low_confidence", f"die {k} read with low confidence ({d.confidence:.2f})",
                               f"кость {k} прочитана неуверенно ({d.confidence:.2f})"))
    if n >= 2:
        boxes = np.array([d.box for d in dice], dtype=np.float64)
        m = box_iou(boxes, boxes)
        for i in range(n):
            for j in range(i + 1, n):
                ci, cj = dice[i].center, dice[j].center
                inside = _contains(boxes[i], cj) or _contains(boxes[j], ci)
                if m[i, j] > overlap_iou or inside:
                    out.append(reason_pair("overlap", f"dice {i + 1} and {j + 1} overlap or are stacked",
                                       f"кости {i + 1} и {j + 1} перекрываются или стоят друг на друге"))
    recovered = [k for k, d in enumerate(dice, 1) if d.recovered]
    if recovered:
        which = ", ".join(map(str, recovered))
        out.append(reason_pair("recovered", f"die {which} found only on a second look at the expected count: check it",
                           f"кость {which} найдена только при повторном поиске до ожидаемого числа: проверьте"))
    if expected_set_aside is not None and set_aside is not None:
        seen = sorted(d.value for d in set_aside if not d.uncertain)
        want = sorted(int(v) for v in expected_set_aside)
        if seen != want:
            out.append(reason_pair(
                "set_aside_mismatch",
                f"set-aside dice show {seen or '—'}, the game kept {want or '—'}",
                f"в отложенных костях {seen or '—'}, а по игре отложено {want or '—'}",
            ))
    return out


def _contains(box: np.ndarray, p: tuple[float, float]) -> bool:
    return bool(box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3])


#: Reason codes that make a throw uncertain (``set_aside_mismatch``, ``recovered``, ``short_rest`` and
#: ``corrected`` are only warnings).
BLOCKING_REASONS = frozenset({"wrong_count", "unreadable", "disagree", "low_confidence", "overlap", "hand"})
