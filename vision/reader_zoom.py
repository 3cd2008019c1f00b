"""The dice reader's zoom for small dice (:class:`ZoomedReads`, mixed into :class:`kosti.vision.reader.DiceReader`):
when the dice a frame's first read found are small, or only weak candidates, the frame is read again with the same
detector at a larger input side and the two reads are merged (``zoom_below``, ``zoom_imgsz``, ``zoom_max`` of
:class:`kosti.vision.params.ReaderParams`; the defaults and their measurements in :mod:`kosti.models`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from kosti.models import ZOOM_DIE_SIDE, ZOOM_LARGE_FRAME_QUANTILE, ZOOM_STEP
from kosti.vision.backends import DetectorBackend
from kosti.vision.detections import Detections, box_sides, unseen_in
from kosti.vision.params import ReaderParams


class ReaderSettingsError(ValueError):
    """Reader settings that cannot work: a threshold out of range, an unknown backend, a zoom the model cannot
    do (CLI exit code 2). The message says which setting and why."""

    exit_code = 2


#: A die of the first read and one of the zoomed read are the same die from this IoU on
#: (:meth:`ZoomedReads.merge_zoomed`); the same die read at 640 and 800 px is boxed at IoU 0.6–0.9, two touching dice
#: below 0.2.
ZOOM_SAME_DIE_IOU = 0.3


class ZoomedReads:
    """The zoomed second read of :class:`kosti.vision.reader.DiceReader` (which sets the attributes below)."""

    detector: DetectorBackend
    det_path: Path
    nested_frac: float
    zoom_below: float
    zoom_imgsz: int
    zoom_max: int
    zoom_detector: DetectorBackend | None
    last_zoom_side: int
    _zoomed_at: dict[int, DetectorBackend]

    cover_fracs: Callable[[np.ndarray], np.ndarray]  # DiceReader.cover_fracs

    def _set_up_zoom(self, p: ReaderParams) -> None:
        """The zoomed read's detector and sides from ``p`` (:attr:`zoom_detector`, :attr:`zoom_below`,
        :attr:`zoom_imgsz`, :attr:`zoom_max`): a zoom asked (:meth:`ReaderParams.zoom_asked`) of a model that
        cannot take it is refused; the default zoom on such a model is off."""
        asked = p.zoom_asked()
        zoom_imgsz = p.zoom_imgsz
        self.zoom_below = float(p.zoom_below)
        zoom_max = p.effective_zoom_max()
        if zoom_max < zoom_imgsz and self.zoom_below > 0:
            raise ReaderSettingsError(f"zoom_max {zoom_max} is below zoom_imgsz {zoom_imgsz}: the zoomed read's "
                                      "largest input cannot be smaller than its smallest")
        self.zoom_max = zoom_max
        #: The detector at ``zoom_imgsz`` (same weights), or ``None`` when the zoom is off.
        self.zoom_detector: DetectorBackend | None = None
        if self.zoom_below > 0:
            if zoom_imgsz <= self.detector.input_side:
                if asked:
                    raise ReaderSettingsError(f"zoom_imgsz {zoom_imgsz} is not above the detector's own input side "
                                              f"{self.detector.input_side}: the zoom would read nothing new")
            else:
                self.zoom_detector = self.detector.resized(int(zoom_imgsz))
                if self.zoom_detector is None and asked:
                    raise ReaderSettingsError(f"{self.det_path}: this export reads one input size only, so it cannot "
                                              "zoom (set zoom_below = 0, or use kosti's own ONNX/NCNN export)")
            if self.zoom_detector is None:
                self.zoom_below = 0.0  # the default zoom, on a model that cannot take it: off
        #: The zoomed read's smallest input side (px, ``zoom_imgsz`` rounded up to the stride).
        self.zoom_imgsz = self.zoom_detector.input_side if self.zoom_detector is not None else int(zoom_imgsz)
        self._zoomed_at = {self.zoom_imgsz: self.zoom_detector} if self.zoom_detector is not None else {}  # by side

    @property
    def last_zoomed(self) -> bool:
        """Whether the last :meth:`read` read the frame again zoomed (at :attr:`last_zoom_side`)."""
        return self.last_zoom_side > 0

    def zoom_side(self, found: Detections, frame_hw: tuple[int, int]) -> int:
        """Detector input side (px) of the zoomed read of a frame of ``frame_hw`` ``(H, W)`` px whose first read
        found the boxes ``found`` (its dice, or its candidates when it found none): the side that brings their
        median side (square root of the area) to :data:`kosti.models.ZOOM_DIE_SIDE` px at the input, rounded up to
        :data:`kosti.models.ZOOM_STEP`, at least ``zoom_imgsz``, at most the frame's longer side and ``zoom_max``
        (rounded down): a 640 px photo zooms to 800, a 1920 px frame of 40 px dice to ``zoom_max`` (far_dice.py)."""
        native = max(frame_hw)
        want = float(self.zoom_imgsz)
        if len(found):
            side = float(np.median(np.maximum(box_sides(found.xyxy), 1.0)))
            if np.isfinite(side):  # the input side at which the median box is ZOOM_DIE_SIDE px
                want = native * ZOOM_DIE_SIDE / side
        top = max(self.zoom_imgsz, min(native, self.zoom_max) // ZOOM_STEP * ZOOM_STEP)  # rounded down: never past
        return int(min(max(-(-np.ceil(want) // ZOOM_STEP) * ZOOM_STEP, self.zoom_imgsz), top))

    def _zoom_detector_at(self, side: int) -> DetectorBackend:
        """The zoom detector letterboxing to ``side`` px (made once per side, sharing the weights)."""
        if side not in self._zoomed_at:
            resized = self.detector.resized(side)  # not None: zoom_imgsz's resized() was not
            assert resized is not None, "a detector that resized once resizes to any side"
            self._zoomed_at[side] = resized
        return self._zoomed_at[side]

    def merge_zoomed(self, first: tuple[Detections, Detections],
                     zoomed: tuple[Detections, Detections]) -> tuple[Detections, Detections]:
        """One frame's ``(dice, candidates)`` from its first read and its zoomed read (:meth:`read_candidates`).

        The dice: the zoomed read's, plus each die of the first read that lies on none of them
        (:func:`kosti.vision.detections.unseen_in`: IoU below :data:`ZOOM_SAME_DIE_IOU`, and neither box covering
        ``nested_frac`` of the other — less when either die is weak, :meth:`cover_fracs`, as
        :meth:`one_box_per_die` asks of a weak box within one read). The candidates: the zoomed read's, plus the
        first read's that lie on no zoomed die or candidate. A die that the larger input loses (a red die on a
        wooden floor, skovy-webcam) is kept, and a die both reads found counts once, as the zoomed read saw it
        (its box, value and confidences), even where the first read's box scored higher: the zoomed read boxes
        small dice more closely (keeping the stronger box of each pair instead found 12 of the 19 dice of epanemu
        val ``dice_441`` at IoU 0.5, not 13). Both results highest detector confidence first.

        Args:
            first, zoomed: ``(dice, candidates)`` of each read, in the same frame's pixels.

        Returns:
            ``(dice, candidates)``.
        """
        dice0, cand0 = first
        dice1, cand1 = zoomed
        new = unseen_in(dice0.xyxy, dice1.xyxy, ZOOM_SAME_DIE_IOU, self.cover_fracs(dice0.confidence),
                        self.cover_fracs(dice1.confidence))
        dice = Detections.concat([dice1, dice0[new]])
        seen = np.concatenate([dice1.xyxy, cand1.xyxy])
        cands = Detections.concat([cand1, cand0[unseen_in(cand0.xyxy, seen, ZOOM_SAME_DIE_IOU, self.nested_frac)]])
        return dice[np.argsort(-dice.confidence, kind="stable")], cands[np.argsort(-cands.confidence, kind="stable")]

    def needs_zoom(self, dice: Detections, candidates: Detections, frame_hw: tuple[int, int]) -> bool:
        """Whether a frame of ``frame_hw`` ``(H, W)`` px read as ``dice`` (with the unconfirmed ``candidates``)
        is read again zoomed (:meth:`zoom_side`): no die but some candidate (even one surely no die: epanemu val
        ``dice_282``'s weak red die is found by the larger read only), or the dice's median side (root of the box
        area) under ``zoom_below`` px at the detector's input (× ``input_side / max(H, W)``); for a frame larger than
        ``zoom_imgsz`` their lower quartile (:data:`kosti.models.ZOOM_LARGE_FRAME_QUANTILE`). False when off."""
        if self.zoom_detector is None:
            return False
        if len(dice) == 0:  # any candidate, even one surely not a die: the larger read may find a die beside it
            return len(candidates) > 0
        q = ZOOM_LARGE_FRAME_QUANTILE if max(frame_hw) > self.zoom_imgsz else 0.5
        side = float(np.quantile(box_sides(dice.xyxy), q))
        return side * self.detector.input_side / max(frame_hw) < self.zoom_below
