"""Request and response models of the label review API (:mod:`kosti.dashboard.routes.review`)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Most dice one image may carry (a tray photo holds at most a few dozen dice).
MAX_DICE = 64


class ReviewDie(BaseModel):
    """One die of a label set: face ``value`` 1–6 and ``box`` ``[x1, y1, x2, y2]`` in image pixels."""

    model_config = ConfigDict(extra="ignore")
    value: int = Field(ge=1, le=6, description="face showing up, 1–6")
    box: list[float] = Field(min_length=4, max_length=4, description="x1, y1, x2, y2 in image pixels")

    @field_validator("box")
    @classmethod
    def _box(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(x) for x in v):
            raise ValueError("box coordinates must be finite numbers")
        if not (v[2] > v[0] and v[3] > v[1]):
            raise ValueError(f"box {v} is empty: need x1 < x2 and y1 < y2")
        return v


class LabelsBody(BaseModel):
    """New labels of one image; ``reviewed`` (default true) marks the image checked."""

    model_config = ConfigDict(extra="forbid")
    dice: list[ReviewDie] = Field(max_length=MAX_DICE)
    reviewed: bool = True


class ReviewedBody(BaseModel):
    """Set or clear the reviewed flag."""

    model_config = ConfigDict(extra="forbid")
    reviewed: bool = True


# -- answers (the JSON of :mod:`kosti.datasets.capture`, field for field) ------------------------------
class ReviewStats(BaseModel):
    """Counts of a capture folder (:func:`kosti.datasets.capture.stats`); ``folder`` (the folder's name) on
    ``/api/review/stats`` and in the image list, absent inside one image's view."""

    images: int
    reviewed: int
    unreviewed: int
    dice: int = Field(description="label lines (dice) in every image")
    reviewed_dice: int = Field(description="dice in the reviewed images")
    corrections: int = Field(description="images from play (confirmed or corrected throws)")
    faces: dict[str, int] = Field(description="dice per face, keys \"1\"–\"6\"")
    folder: str | None = Field(default=None, description="the capture folder's name")


class ImageItem(BaseModel):
    """One image of the list (:func:`kosti.datasets.capture.list_images`)."""

    id: str
    reviewed: bool
    source: str = Field(description="capture, correction or import")
    dice: int = Field(description="label lines")
    time: str | None = Field(description="UTC capture time (ISO 8601), None for an imported image")
    width: int | None
    height: int | None
    uncertain: int = Field(description="dice the model could not read, while the labels are its own")


class ImageList(BaseModel):
    """``GET /api/review/images``: the images (filtered by ``status``) and the folder's counts."""

    images: list[ImageItem]
    stats: ReviewStats


class LabelledDie(BaseModel):
    """One die of an image's labels (:func:`kosti.datasets.capture_dice.dice_json`)."""

    value: int = Field(description="the label face 1–6 (an unread die's guess, uncertain then)")
    box: list[float] = Field(description="x1, y1, x2, y2 in image pixels (0.01 px)")
    confidence: float | None = Field(description="the model's value confidence, None when unknown")
    uncertain: bool


class SuggestedBox(BaseModel):
    """A box the reader saw but did not take as a die (:func:`kosti.datasets.suggest.uncertain_boxes`): shown
    on the review page as an uncertain box that one tap turns into a die."""

    box: list[float] = Field(description="x1, y1, x2, y2 in image pixels")
    guess: int = Field(ge=1, le=6, description="the classifier's most likely face")
    confidence: float = Field(description="the detector's score, 0–1")
    reason: str = Field(description="not_die (taken for something else), weak (scored below the box threshold) "
                                    "or unlabelled (read, but not in the labels)")


class ImageView(BaseModel):
    """One image: :meth:`kosti.datasets.capture.CaptureRecord.to_dict` plus its URL, its place in the
    folder (``index``, ``prev``, ``next``, ``next_unreviewed``: ids or None) and the folder's counts."""

    id: str
    file: str
    width: int
    height: int
    reviewed: bool
    source: str
    model: str | None = Field(description="model version that proposed the labels")
    time: str | None
    reviewed_at: str | None
    edited: bool = Field(description="a person changed the labels")
    note: str | None
    dice: list[LabelledDie]
    image_url: str
    index: int = Field(description="position in the folder, -1 when not listed")
    prev: str | None
    next: str | None
    next_unreviewed: str | None
    stats: ReviewStats
    suggested: list[SuggestedBox] = Field(default_factory=list, description=(
        "an unreviewed image's boxes to confirm: what the reader saw but did not take as dice"))


__all__ = ["MAX_DICE", "ImageItem", "ImageList", "ImageView", "LabelledDie", "LabelsBody", "ReviewDie", "ReviewStats",
           "ReviewedBody", "SuggestedBox"]
