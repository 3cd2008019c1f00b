"""What ``kosti train`` retrains, how many photos it holds back, and when a new version may replace the old.

Issue 14 (teach kosti your dice without forgetting every other table) measured that a classifier-only
retraining fixed misread symbol dice (die accuracy 0.85 → 1.00) with no loss elsewhere, while retraining
the detector too destroyed the reader on other tables (exact reads 0.68 → 0.04) and a 3-photo gate could
not see it. Hence:

* :func:`needs_detector` — retrain the detector only when the current one *misses* dice: a die counts as
  found when any detector box scoring above the reader's second-look floor (``verify_conf``) matches it,
  because the face classifier can confirm such a box once it knows the dice (:class:`DiceReader`).
* :func:`classifier_epochs` — ``kosti train --epochs-cls auto``: the long classifier pass only when the current
  reader reads the user's found dice wrong (faces it has no class for), measured in :func:`found_recall`'s pass.
* :func:`holdout_count` — at least :data:`MIN_HELD_BACK` photos held back (half when there are fewer than
  twice as many), never trained on.
* :func:`gate` — a candidate is activated only if it forgets nothing on the shipped reference photos of
  other tables (each of :data:`GATE_METRICS` within :data:`GATE_TOLERANCE`) *and* reads the user's held-back
  photos better as a whole: dice found and read right (F1) or exact throws up by :data:`IMPROVE_MARGIN`, with
  no more faces read confidently wrong (issue 41: a gate that compared precision there refused every reader
  that found the dice the shipped one half ignored).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: Metrics the gate checks on the reference photos (``kosti eval`` keys), each within the tolerance (issue 14).
GATE_METRICS = ("precision", "recall", "die_accuracy")
#: Largest allowed loss on any gate metric of the reference photos (issue 14: "each within 0.005"), and the
#: largest loss of dice-F1 or exact throws on the user's held-back photos that still counts as "no worse".
GATE_TOLERANCE = 0.005
#: Fewest held-back photos on which the gate judges an improvement (issue 41: "with a margin and a minimum
#: count of photos"): with fewer, one photo moves image_exact by more than 0.2 and nothing can be told apart.
MIN_GATE_PHOTOS = 5
#: Smallest gain, on the held-back photos, of dice-F1 or of exact throws that counts as an improvement
#: (issue 41). 0.02 is one photo in 50 or one die in 100: below it, a retraining's noise.
IMPROVE_MARGIN = 0.02
#: Dice-F1 on the held-back photos above which the current reader leaves nothing to improve: then a candidate
#: passes when it is no worse there (within :data:`GATE_TOLERANCE`) instead of better by the margin.
CEILING_F1 = 0.99
#: Fewest held-back photos (issue 14: at least 10; half of the photos when there are fewer than 20).
MIN_HELD_BACK = 10
#: Share of labelled dice the detector must find (at the second-look floor) before the detector is left
#: alone; below it ``kosti train --detector auto`` retrains it. 0.98 is the recall target of issue 14.
FOUND_TARGET = 0.98
#: ``--epochs-cls auto``: classifier epochs when the current reader reads the user's found dice wrong — faces it
#: has no class for. Measured 2026-12-07 (docs/retraining.md, issue 41): numeral dice need a fine-tune *sure* of
#: them before the mix; 5 epochs left 8 of 244 unseen numerals uncertain (die accuracy 0.967), 12 read 0.988.
EPOCHS_CLS_NEW_FACES = 12
#: ``--epochs-cls auto``: classifier epochs when the current reader already reads the dice it finds right and
#: only misses dice (the clear_ice proof: die accuracy 1.000 before): the classifier learns to confirm weak
#: boxes, not new faces, and 5 epochs did that (2026-12-02: activated) in 40 % of the 12 epochs' time.
EPOCHS_CLS_KNOWN_FACES = 5
#: Die accuracy of the current reader on the found training dice at or above which it "knows the faces"
#: (``--epochs-cls auto`` then trains :data:`EPOCHS_CLS_KNOWN_FACES`). Measured before training (2026-12-07; the
#: held-back throws' die accuracy, then this share on the proofs' 80 training photos): numerals 0.16–0.18 / 0.148,
#: a skull / an emblem 0.64 / 0.711, clear_ice pips 1.000 / 0.989. 0.95 sits in that gap near the top: it is
#: the shipped reader's own die accuracy on the reference photos of other tables (0.954) — a reader that reads
#: the user's dice at least as well as other tables' knows their faces; one die in 20 read wrong is already a
#: face to learn.
KNOWS_FACES = 0.95


def holdout_count(n: int, fraction: float, min_held: int = MIN_HELD_BACK) -> int:
    """Photos held back of ``n``: ``max(round(fraction·n), min(min_held, n // 2))``; 0 when ``fraction`` ≤ 0.

    With 24 photos 10 are held back (14 train); with 14, 7; a 20 % holdout of 14 photos (3) was too few to
    see a forgetting detector (issue 14).
    """
    if n <= 0 or fraction <= 0:
        return 0
    return min(n - 1, max(round(fraction * n), min(min_held, n // 2), 1)) if n > 1 else 0


def gate(candidate: Mapping[str, Mapping[str, Any]], before: Mapping[str, Mapping[str, Any]],
         tolerance: float = GATE_TOLERANCE, metrics: tuple[str, ...] = GATE_METRICS) -> tuple[bool, str]:
    """May ``candidate`` replace ``before``? :func:`gate_verdict` without the Russian reason.

    Returns:
        ``(passed, reason)`` with ``reason`` in English.

    Raises:
        KeyError: a set of ``before`` is missing from ``candidate``.
    """
    ok, en, _ru = gate_verdict(candidate, before, tolerance, metrics)
    return ok, en


#: Russian names of the gate metrics and measured sets, for the teach page's verdict.
_METRIC_RU = {"precision": "точность", "recall": "полнота", "die_accuracy": "доля верно прочитанных костей"}
_SET_RU = {"held_back": "на отложенных снимках", "reference": "на эталонных снимках"}


def face_counts(m: Mapping[str, Any]) -> dict[str, float]:
    """The dice counts behind one ``kosti eval`` document, for the held-back rule of :func:`gate_verdict`.

    Args:
        m: a ``kosti eval --json`` document: ``dice`` (labelled dice), ``precision``, ``recall``,
            ``die_accuracy``, ``image_exact``, ``images`` and, where present, ``confusion`` (6 × 6: row the
            labelled face, column the face read without the uncertain flag).

    Returns:
        ``{"dice", "boxes", "right", "wrong", "f1", "exact", "images"}``: labelled dice; boxes the reader gave
        (``matched / precision``); matched dice read with the right face (the confusion's diagonal, else
        ``die_accuracy × matched``); matched dice read *confidently* wrong (off the diagonal: an uncertain die
        is shown to the table, a wrong one is scored); ``f1 = 2·right / (boxes + dice)`` — the F1 of dice
        found *and* read right, which a reader that boxes only what it is sure of cannot win; ``image_exact``.
    """
    dice = int(m.get("dice") or 0)
    matched = float(m.get("recall") or 0.0) * dice
    precision = float(m.get("precision") or 0.0)
    boxes = matched / precision if precision > 0 else 0.0
    cm = m.get("confusion")
    if cm is not None and len(cm):
        a = np.asarray(cm, dtype=np.int64)
        right, wrong = float(np.trace(a)), float(a.sum() - np.trace(a))
    else:
        right, wrong = float(m.get("die_accuracy") or 0.0) * matched, 0.0
    f1 = 2.0 * right / (boxes + dice) if boxes + dice > 0 else 0.0
    return {"dice": dice, "boxes": round(boxes, 2), "right": round(right, 2), "wrong": wrong, "f1": f1,
            "exact": float(m.get("image_exact") or 0.0), "images": int(m.get("images") or 0)}


def _num(x: float, ru: bool = False) -> str:
    s = f"{x:.3f}"
    return s.replace(".", ",") if ru else s


def _held_back_verdict(cand: Mapping[str, Any], ref: Mapping[str, Any],
                       tolerance: float) -> tuple[bool, str, str]:
    """The user's own held-back photos: better as a whole, and not worse in a way the table feels (issue 41).

    Passes when (1) the candidate reads no more dice *confidently* wrong than the current reader, (2) neither
    dice-F1 nor exact throws fall by more than ``tolerance``, and (3) one of them rises by at least
    :data:`IMPROVE_MARGIN` on at least :data:`MIN_GATE_PHOTOS` photos — or the current reader is already at
    :data:`CEILING_F1`, where no improvement is left to show. Precision alone never refuses: on dice the
    current reader half ignores it is 1.000 *because* it boxes only what it is sure of.
    """
    c, b = face_counts(cand), face_counts(ref)
    numbers = (f"dice found and read right (F1) {_num(b['f1'])} → {_num(c['f1'])}, exact throws "
               f"{_num(b['exact'])} → {_num(c['exact'])}, faces read wrong without a doubt {int(b['wrong'])} → "
               f"{int(c['wrong'])}, on {c['images']} held-back photos")
    numbers_ru = (f"кости найдены и прочитаны верно (F1) {_num(b['f1'], True)} → {_num(c['f1'], True)}, "
                  f"броски прочитаны целиком {_num(b['exact'], True)} → {_num(c['exact'], True)}, уверенно "
                  f"неверных граней {int(b['wrong'])} → {int(c['wrong'])}, отложенных снимков: {c['images']}")
    if c["wrong"] > b["wrong"]:
        return False, f"more faces read wrong without a doubt on your held-back photos ({numbers})", (
            f"больше граней прочитано неверно без сомнения на ваших отложенных снимках ({numbers_ru})")
    for key, en, ru in (("f1", "dice found and read right (F1)", "доля найденных и верно прочитанных костей (F1)"),
                        ("exact", "exact throws", "доля бросков, прочитанных целиком")):
        if c[key] < b[key] - tolerance - 1e-9:
            return False, (f"{en} on the held-back photos fell from {_num(b[key])} to {_num(c[key])} (more than "
                           f"{tolerance}; {numbers})"), (
                f"{ru} на отложенных снимках упала с {_num(b[key], True)} до {_num(c[key], True)} (больше чем "
                f"на {_num(tolerance, True).rstrip('0')}; {numbers_ru})")
    if b["f1"] >= CEILING_F1:
        return True, f"the current reader already reads your dice; the candidate is no worse ({numbers})", (
            f"текущая модель уже читает ваши кости; новая не хуже ({numbers_ru})")
    if c["images"] < MIN_GATE_PHOTOS:
        return False, (f"too few held-back photos to tell an improvement ({c['images']}, at least "
                       f"{MIN_GATE_PHOTOS}): take more photos, or --force ({numbers})"), (
            f"слишком мало отложенных снимков, чтобы увидеть улучшение ({c['images']}, нужно не меньше "
            f"{MIN_GATE_PHOTOS}): сделайте больше снимков или используйте --force ({numbers_ru})")
    if c["f1"] - b["f1"] < IMPROVE_MARGIN - 1e-9 and c["exact"] - b["exact"] < IMPROVE_MARGIN - 1e-9:
        return False, f"no improvement on your held-back photos (less than {IMPROVE_MARGIN}: {numbers})", (
            f"нет улучшения на ваших отложенных снимках (меньше {_num(IMPROVE_MARGIN, True).rstrip('0')}: "
            f"{numbers_ru})")
    return True, f"better on your dice: {numbers}", f"лучше на ваших костях: {numbers_ru}"


def gate_verdict(candidate: Mapping[str, Mapping[str, Any]], before: Mapping[str, Mapping[str, Any]],
                 tolerance: float = GATE_TOLERANCE,
                 metrics: tuple[str, ...] = GATE_METRICS) -> tuple[bool, str, str]:
    """May ``candidate`` replace ``before``? ``(passed, reason_en, reason_ru)``, the reason naming the numbers.

    Two rules, each where it belongs (issue 41):

    * ``"reference"`` (photos of other tables, never trained on: forgetting): each of ``metrics`` may fall by
      at most ``tolerance`` — as strict as issue 14 asked;
    * ``"held_back"`` (the user's own photos, never trained on: the new dice): better as a whole and not worse
      in a way the table feels (:func:`_held_back_verdict`).

    Any other set name is held to the reference rule. The reference set is judged first: learning the new
    dice never excuses forgetting the others.

    Args:
        candidate, before: set name → ``kosti eval`` document. Every set of ``before`` must be in ``candidate``.
        tolerance: largest allowed drop of each reference metric (and of F1 / exact throws on held-back).

    Raises:
        KeyError: a set of ``before`` is missing from ``candidate``.
    """
    for name in sorted(before, key=lambda n: n == "held_back"):
        ref, got = before[name], candidate[name]
        if name == "held_back":
            ok, en, ru = _held_back_verdict(got, ref, tolerance)
            if not ok:
                return False, en, ru
            continue
        for m in metrics:
            if ref.get(m) is None:
                continue
            was, now = float(ref[m]), float(got[m])
            if now < was - tolerance - 1e-9:  # exactly at the tolerance passes
                return False, (f"{m} on the {name.replace('_', '-')} photos fell from {was:.3f} to {now:.3f} "
                               f"(more than {tolerance})"), (
                    f"{_METRIC_RU.get(m, m)} {_SET_RU.get(name, name)} упала с {was:.3f} до {now:.3f} "
                    f"(больше чем на {tolerance})").replace(".", ",")
    others = [n for n in before if n != "held_back"]
    names_ru = [_METRIC_RU.get(m, m) for m in metrics]
    listed_ru = ", ".join(names_ru[:-1]) + " и " + names_ru[-1] if len(names_ru) > 1 else names_ru[0]
    en_parts, ru_parts = [], []
    if "held_back" in before:
        _ok, en, ru = _held_back_verdict(candidate["held_back"], before["held_back"], tolerance)
        en_parts.append(en)
        ru_parts.append(ru)
    if others:
        en_parts.append("no worse on " + " and ".join(n.replace("_", "-") + " photos" for n in others)
                        + f" ({', '.join(metrics)} within {tolerance})")
        ru_parts.append("не хуже " + " и ".join(_SET_RU.get(n, n) for n in others)
                        + f" ({listed_ru} — в пределах {_num(tolerance, True)})")
    return True, "; ".join(en_parts), "; ".join(ru_parts)


def found_recall(reader: Any, dataset: Any, floor: float | None = None) -> dict[str, float]:
    """How many labelled dice the detector proposes at all: share matched (IoU ≥ 0.5) by a box scoring above
    ``floor`` (default the reader's ``verify_conf``), and how many of those found dice the reader's classifier
    reads right — in the same pass over the photos (each photo read and detected once).

    A found die is read right when :meth:`~kosti.vision.reader.DiceReader.decide` gives its labelled face
    (calibrated probabilities, the reader's ``value_conf``; an uncertain die is not right), as ``kosti eval``'s
    die accuracy counts it. Labelled dice that are not faces (``x``) are not counted there.

    Args:
        reader: a :class:`kosti.vision.reader.DiceReader`. dataset: :func:`kosti.vision.evaluate.load_dataset`.

    Returns:
        ``{"dice": N, "found": share found at the floor, "floor": floor, "read_dice": found face dice,
        "read_right": share of them read right}`` (``read_right`` 1.0 when no face die was found).
    """
    from kosti.vision.detections import box_iou
    from kosti.vision.evaluate import match_pairs, read_labels
    from kosti.vision.reader import load_image

    floor = float(reader.verify_conf if floor is None else floor)
    total = found = read = right = 0
    for item in dataset.items:
        img = load_image(item.image)
        txyxy, tvals = read_labels(item.label, img.shape[1], img.shape[0], dataset.class_values)
        if not len(txyxy):
            continue
        image = reader.exposed(img)[0]  # as read() sees the frame
        xyxy, scores, _ = reader.detect(image, conf=floor)
        order = np.argsort(-np.asarray(scores))
        total += len(txyxy)
        pairs = match_pairs(box_iou(txyxy, np.asarray(xyxy)[order])) if len(xyxy) else []
        found += len(pairs)
        faces = [(t, int(order[j])) for t, j in pairs if tvals[t] > 0]
        if faces and reader.classifier is not None:
            boxes = np.asarray(xyxy)[[j for _t, j in faces]]
            values, _ = reader.decide(reader.calibrate(reader.face_probs(reader.crops(image, boxes))),
                                      reader.class_values)
            read += len(faces)
            right += int((np.asarray(values) == np.asarray([tvals[t] for t, _j in faces])).sum())
    return {"dice": total, "found": round(found / total, 4) if total else 1.0, "floor": floor,
            "read_dice": read, "read_right": round(right / read, 4) if read else 1.0}


def classifier_epochs(found: Mapping[str, float], known: float = KNOWS_FACES) -> tuple[int, str, str]:
    """``kosti train --epochs-cls auto``: how many classifier epochs the user's dice need, and why.

    Args:
        found: :func:`found_recall`'s document of the current reader on the training photos (``read_right``:
            share of the found dice it reads right; ``read_dice``: how many).
        known: share read right at or above which the current reader knows the faces (:data:`KNOWS_FACES`).

    Returns:
        ``(epochs, reason_en, reason_ru)``: :data:`EPOCHS_CLS_KNOWN_FACES` when the reader reads at least
        ``known`` of the found dice right (it only misses dice), else :data:`EPOCHS_CLS_NEW_FACES` (faces it has
        no class for need a fine-tune sure of them) — also when no die was found to read.
    """
    n, share = int(found.get("read_dice", 0) or 0), found.get("read_right")
    if not n or share is None:
        return EPOCHS_CLS_NEW_FACES, (
            f"{EPOCHS_CLS_NEW_FACES} classifier epochs: the current reader found none of your dice to read"), (
            f"{EPOCHS_CLS_NEW_FACES} эпох классификатора: текущая модель не нашла ни одной вашей кости, "
            "чтобы прочитать её")
    share = float(share)
    if share >= known:
        return EPOCHS_CLS_KNOWN_FACES, (
            f"{EPOCHS_CLS_KNOWN_FACES} classifier epochs: the current reader reads {share:.3f} of the {n} dice it "
            f"finds right (at least {known}): it knows these faces"), (
            f"{EPOCHS_CLS_KNOWN_FACES} эпох классификатора: текущая модель верно читает {_num(share, True)} из "
            f"{n} найденных костей (не меньше {_num(known, True).rstrip('0')}): эти грани она знает")
    return EPOCHS_CLS_NEW_FACES, (
        f"{EPOCHS_CLS_NEW_FACES} classifier epochs: the current reader reads only {share:.3f} of the {n} dice it "
        f"finds right (below {known}): faces to learn"), (
        f"{EPOCHS_CLS_NEW_FACES} эпох классификатора: текущая модель верно читает лишь {_num(share, True)} из "
        f"{n} найденных костей (меньше {_num(known, True).rstrip('0')}): грани нужно выучить")


def needs_detector(found: Mapping[str, float], target: float = FOUND_TARGET) -> bool:
    """True when the detector misses dice (share found at the floor below ``target``): retrain it too."""
    return found["dice"] > 0 and found["found"] < target


__all__ = ["CEILING_F1", "EPOCHS_CLS_KNOWN_FACES", "EPOCHS_CLS_NEW_FACES", "FOUND_TARGET", "GATE_METRICS",
           "GATE_TOLERANCE", "IMPROVE_MARGIN", "KNOWS_FACES", "MIN_GATE_PHOTOS", "MIN_HELD_BACK", "classifier_epochs",
           "face_counts", "found_recall", "gate", "gate_verdict", "holdout_count", "needs_detector"]
