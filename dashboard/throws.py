"""A settled throw as the table sees it: :class:`TableThrow` of :class:`TableDie` s, from the camera
(:func:`throw_from_pipeline`, a :class:`kosti.vision.throws.Throw`) or injected by a test or the teach page."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kosti.dashboard.views import JsonObject
from kosti.vision.overlay import encode_jpeg
from kosti.vision.throws import Throw

#: JPEG quality of a settled throw's photo and of its thumbnail, and the thumbnail's width (px): the history's
#: photo must show the pips at a glance (85), the thumbnail only which throw it was (70, 240 px).
PHOTO_QUALITY, THUMB_QUALITY, THUMB_WIDTH = 85, 70, 240


@dataclass
class TableDie:
    """One die of a settled throw: ``value`` 1–6 (0 = unread), ``confidence`` 0–1, ``box`` x1 y1 x2 y2 (px)."""

    value: int
    confidence: float
    box: list[float]
    uncertain: bool = False


@dataclass
class TableThrow:
    """A settled throw as the table service sees it (from the pipeline, or injected by a test).

    Attributes:
        dice: the dice read on the settled frame.
        status: ``"ok"`` or ``"uncertain"`` (the pipeline's verdict).
        reasons: why the throw is uncertain (English, free text).
        frame_index, time_s: the settled frame's number and time (seconds, the source's clock).
        image: the settled frame, ``(H, W, 3)`` uint8 BGR, or ``None``.
        settled_at: ``time.time()`` when the settled frame was read (for latency measurements).
        corrects: ``frame_index`` of the earlier camera throw this one replaces (a die tipped over after
            the throw was read: the same physical throw, :attr:`kosti.vision.pipeline.Throw.corrects`).
        jpeg, thumb: the settled frame as JPEG bytes (quality :data:`PHOTO_QUALITY`) and its thumbnail
            (:data:`THUMB_WIDTH` px wide), encoded where a frame becomes a table throw (:meth:`photos`) — for the
            camera on the runner's thread, not under the game's lock; ``None`` without an image.
    """

    dice: list[TableDie]
    status: str = "ok"
    reasons: list[str] = field(default_factory=list)
    frame_index: int | None = None
    time_s: float | None = None
    image: np.ndarray | None = None
    settled_at: float | None = None
    corrects: int | None = None
    jpeg: bytes | None = None
    thumb: bytes | None = None

    def photos(self) -> tuple[bytes | None, bytes | None]:
        """``(jpeg, thumb)``: the settled frame's photo and thumbnail, encoded from ``image`` once (``None, None``
        without an image). :func:`throw_from_pipeline` encodes them as the camera's throw is made, on the runner's
        thread; a throw made by hand (a test, the teach page) is encoded at the first call."""
        if self.image is not None and self.jpeg is None:
            self.jpeg = encode_jpeg(self.image, PHOTO_QUALITY)
            self.thumb = encode_jpeg(self.image, THUMB_QUALITY, THUMB_WIDTH)
        return self.jpeg, self.thumb

    @property
    def faces(self) -> list[int]:
        """Faces of the dice in the order read (0 = unread)."""
        return [int(d.value) for d in self.dice]


def unstored_view(thr: TableThrow, resolution: str) -> JsonObject:
    """The snapshot's view of a settled throw that has no database row (``ignored``: no game; ``not stored``:
    the write failed) — the same keys as a stored throw's view, ``id`` None."""
    return {"id": None, "faces": list(thr.faces), "confidences": [d.confidence for d in thr.dice],
            "boxes": [list(d.box) for d in thr.dice], "status": thr.status, "reasons": list(thr.reasons),
            "resolution": resolution, "player": None, "image_url": None, "settled_at": thr.settled_at}



def throw_from_pipeline(t: Throw, settled_at: float | None = None) -> TableThrow:
    """The vision layer's :class:`kosti.vision.throws.Throw` as a :class:`TableThrow` (roll-area dice in the
    order read; ``settled_at`` defaults to the throw's own, set by the runner)."""
    dice = [TableDie(int(d.value), float(d.confidence), [float(v) for v in d.box], bool(d.uncertain)) for d in t.dice]
    thr = TableThrow(
        dice=dice, status=t.status, reasons=[str(r) for r in t.reasons], frame_index=t.frame_index,
        time_s=t.time_s, image=t.image, settled_at=settled_at if settled_at is not None else t.settled_at,
        corrects=t.corrects,
    )
    thr.photos()  # the photo is encoded here, on the runner's thread, not under the game's lock
    return thr
