"""Reader selection for the table: the shipped models, or the virtual table's ground truth.

``kosti demo --reader truth`` (and ``auto`` when the shipped ONNX models are missing) reads a virtual table's
ground truth with :class:`VirtualTruthReader`, so the dashboard can be shown before the models exist; the
snapshot's ``reader`` says which reader reads.
"""

from __future__ import annotations

import logging
from typing import Literal

import numpy as np

from kosti.sim.virtual import VirtualTableSource
from kosti.vision.detections import Detections
from kosti.vision.sources import FrameSource
from kosti.vision.throws import Reader

log = logging.getLogger(__name__)

#: How the table chooses its reader (``kosti run --reader``).
ReaderKind = Literal["auto", "models", "truth"]


class VirtualTruthReader:
    """A stand-in dice reader that reports the virtual table's ground truth instead of reading pixels.

    It has :class:`kosti.vision.reader.DiceReader`'s ``read(image) -> Detections`` shape.
    """

    name = "virtual table ground truth (no models)"

    def __init__(self, source: VirtualTableSource) -> None:
        self.source = source

    def read(self, image: np.ndarray) -> Detections:
        """:class:`Detections` (pixels) of the last virtual throw, empty before the first throw has come to
        rest (``image`` is not looked at)."""
        last = self.source.last_throw
        if last is None or last.boxes is None:
            return Detections.empty()
        boxes = np.asarray(last.boxes, np.float32).reshape(-1, 4)
        n = len(last.dice)
        return Detections(boxes, np.ones(n, np.float32), np.array([d.face for d in last.dice], np.int8),
                          np.ones(n, np.float32))


def describe_reader(reader: Reader) -> str:
    """The reader in words for the snapshot: a :class:`kosti.vision.reader.DiceReader`'s ``describe()``, a
    :class:`VirtualTruthReader`'s name, else its class name."""
    from kosti.vision.reader import DiceReader

    if isinstance(reader, DiceReader):
        return reader.describe()
    if isinstance(reader, VirtualTruthReader):
        return reader.name
    return type(reader).__name__


def default_reader(source: FrameSource | None, kind: ReaderKind | str = "auto") -> tuple[Reader, str]:
    """Choose the dice reader: ``models`` (the shipped ONNX models), ``truth`` (virtual ground truth) or ``auto``.

    Returns ``(reader, description)``. ``auto`` uses the models when they load, else the ground truth of a
    virtual source. Raises whatever :class:`DiceReader` raises for ``models`` when they are missing, and
    RuntimeError when ``auto`` finds neither.
    """
    virtual = source if isinstance(source, VirtualTableSource) else None
    if kind in ("auto", "models"):
        try:
            from kosti.vision.reader import DiceReader

            r = DiceReader()
            return r, r.describe()
        except Exception as exc:  # noqa: BLE001 - auto falls back below
            if kind == "models":
                raise
            log.warning("dice models not available (%s)%s", exc,
                        "; reading the virtual table's ground truth instead" if virtual is not None else "")
    if virtual is not None:
        truth = VirtualTruthReader(virtual)
        return truth, truth.name
    raise RuntimeError("no dice reader: the ONNX models are missing and the source is not the virtual table")
