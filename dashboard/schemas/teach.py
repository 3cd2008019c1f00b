"""Response models of the "teach my dice" API (:mod:`kosti.dashboard.routes.teach`) and the training job's JSON
(:class:`kosti.dashboard.teach.TeachJob`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue
from typing_extensions import TypedDict

#: The states of a training job.
JobState = Literal["idle", "running", "done", "failed"]


class TrainProgress(TypedDict):
    """Where a running job is: ``stage`` (``preparing``, ``detector``, ``classifier``, ``… trained;
    measuring``), ``epoch`` finished of ``epochs`` (None until known), ``eta_s`` seconds left (None until
    one epoch has finished)."""

    stage: str
    epoch: int
    epochs: int | None
    eta_s: int | None


class JobJson(TypedDict):
    """:meth:`TeachJob.to_json`: ``state``, ``elapsed_s`` (whole seconds), ``progress`` while running,
    ``result`` (``kosti train --json``'s summary, cli.md) when done, ``error`` (its last log line) when failed."""

    state: JobState
    elapsed_s: int
    progress: TrainProgress | None
    result: dict[str, JsonValue] | None
    error: str | None


class TeachStatus(BaseModel):
    """``GET /api/teach/status`` (and the answer of ``POST /api/teach/train``)."""

    images: int = Field(description="photos in the capture folder")
    reviewed: int = Field(description="photos confirmed on the review page")
    suggested: int = Field(description="throws the page asks for")
    min_reviewed: int = Field(description="confirmed photos training needs")
    job: JobJson


class CaptureAnswer(BaseModel):
    """``POST /api/teach/capture``: the new photo's ``id``, the dice saved with it, then the status."""

    id: str
    dice: int = Field(description="dice saved (an unread die without a guess is left for the reviewer)")
    images: int
    reviewed: int
    suggested: int
    min_reviewed: int
    job: JobJson


__all__ = ["CaptureAnswer", "JobJson", "JobState", "TeachStatus", "TrainProgress"]
