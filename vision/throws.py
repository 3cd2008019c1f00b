"""What the live pipeline reports: a voted :class:`Die`, a settled :class:`Throw`, and the :class:`Reader`
it reads them with (the types of :mod:`kosti.vision.pipeline`, no logic beyond their JSON forms)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kosti.vision.detections import Detections


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
        guess: the most voted face even when uncertain (0 if no frame read a face) — for display only;
            for a recovered die, unread readings vote with the reader's best face (:func:`recover_dice`).
        det_confidence: mean detector confidence, 0–1.
        votes: ``(frames agreeing on the value, frames that saw the die, frames read)`` (for a recovered
            guess, agreeing on the guess).
        likely: the face the reader found most likely over the frames even where it read none (``guess``, else the
            reader's best face of the unread readings; 0 when unknown) — the ``value`` of an uncertain die in
            ``kosti watch --json`` (cli.md: a face 1–6), never scored.
        recovered: found by :func:`recover_dice` — the detector was unsure of this box, and it was taken
            because the roll area held fewer dice than expected (every die of a throw in which the
            detector was sure of none is recovered, and uncertain).
    """

    value: int
    confidence: float
    box: tuple[float, float, float, float]
    uncertain: bool = False
    guess: int = 0
    det_confidence: float = 1.0
    votes: tuple[int, int, int] = (1, 1, 1)
    recovered: bool = False
    likely: int = 0

    @property
    def center(self) -> tuple[float, float]:
        """Box centre in pixels."""
        return ((self.box[0] + self.box[2]) / 2.0, (self.box[1] + self.box[3]) / 2.0)

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "confidence", "box"}`` as in ``kosti watch --json``; an uncertain die gives its most likely face
        (:attr:`guess`, else :attr:`likely`; 0 only when no frame guessed any face) and ``"uncertain": true``."""
        d: dict[str, Any] = {
            "value": int(self.value if not self.uncertain else self.guess or self.likely),
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
        settled_at: ``time.time()`` (wall seconds) when the settle frame was read, set by the runner
            (:class:`kosti.vision.runner.LivePipeline`) for latency measurements; None from a bare detector.
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
    settled_at: float | None = None

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
        plus ``"corrects": frame`` when it replaces an earlier throw and ``"correction"``, why it was taken for the
        same throw (``"English / Русский"``, the ``corrected`` reason)."""
        d: dict[str, Any] = {
            "frame": int(self.frame_index),
            "time_s": round(float(self.time_s), 3),
            "dice": [d.to_dict() for d in self.dice],
            "status": self.status,
        }
        if self.corrects is not None:
            d["corrects"] = int(self.corrects)
            if "corrected" in self.reason_codes:
                d["correction"] = self.reasons[self.reason_codes.index("corrected")]
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



@runtime_checkable
class TunableReader(Reader, Protocol):
    """A reader with the two thresholds the table tunes (:class:`kosti.vision.reader.DiceReader`): ``conf``,
    the detector's box confidence 0–1, and ``value_conf``, the face probability 0–1 a die needs."""

    conf: float
    value_conf: float
