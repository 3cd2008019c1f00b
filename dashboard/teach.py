"""The dashboard's "teach my dice" flow (issue 14): capture ~10 throws, confirm them, train, see before/after.

``create_teach_router(capture_dir, table, pin_check) -> APIRouter`` serves:

* ``GET /teach`` — the guided page (``static/teach.html`` + ``teach.js``; English and Russian);
* ``POST /api/teach/capture`` — save the table's latest settled throw (frame + the dice as read) into the
  capture folder, unreviewed, for the review page (``/review``) to confirm or fix;
* ``GET /api/teach/status`` — photos captured / reviewed, and the training job: ``state`` (``idle``,
  ``running``, ``done``, ``failed``), elapsed seconds, the stage and epoch, an estimate of the time left,
  and when done ``kosti train``'s JSON summary (before/after on the held-back photos, the gate's verdict,
  the version activated or refused with the reason);
* ``POST /api/teach/train`` — start ``kosti train --data CAPTURE_DIR --json`` (its defaults: reviewed photos,
  classifier first, the replay set, the forgetting gate) as a niced background process.

Each answer has its response model (:class:`TeachStatus`, :class:`CaptureAnswer`); refusals are the
dashboard's typed errors (:class:`~kosti.dashboard.errors.Conflict` 409, :class:`~kosti.dashboard.errors.Invalid`
422), answered as ``{"error", "error_ru", "status"}`` by the router's route class in any app. One job at a
time (409 while one runs). The job is a separate process, so the table keeps scoring while it
trains, and a new version reaches the running reader through the registry (``reader.model = "active"``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Literal, Protocol

import numpy as np
from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field, JsonValue
from typing_extensions import TypedDict

from kosti.dashboard.errors import Conflict, Invalid
from kosti.dashboard.review import RefusalRoute
from kosti.datasets import capture as cap

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Throws the page asks for (issue 14: "throw your dice ~10 times"); training needs at least 2 reviewed.
SUGGESTED_THROWS = 10
MIN_REVIEWED = 2
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


class SettledDie(Protocol):
    """What the teach page reads of a die of a settled throw (:class:`kosti.dashboard.throws.TableDie`)."""

    @property
    def value(self) -> int: ...  # 1–6, 0 = unread
    @property
    def confidence(self) -> float: ...
    @property
    def box(self) -> Sequence[float]: ...  # x1 y1 x2 y2, pixels


class SettledThrow(Protocol):
    """A settled throw with its frame (:class:`kosti.dashboard.throws.TableThrow`)."""

    @property
    def dice(self) -> Sequence[SettledDie]: ...
    @property
    def image(self) -> np.ndarray | None: ...


class SettledThrows(Protocol):
    """The table as the teach page sees it (:class:`kosti.dashboard.table.TableService`)."""

    @property
    def last_settled(self) -> SettledThrow | None: ...


class TeachJob:
    """One background ``kosti train`` process and what it has said so far.

    Args:
        capture_dir: the capture folder trained on. work_root: parent of each job's work folder.
        command: the command run (default ``python -m kosti train --data DIR --json --work WORK``); tests
            pass a stand-in.
    """

    def __init__(self, capture_dir: Path, work_root: Path | None = None,
                 command: Callable[[Path, Path], list[str]] | None = None) -> None:
        self.capture_dir = capture_dir
        self.work_root = work_root or Path(tempfile.gettempdir())
        self.command = command or (lambda data, work: [
            *(["nice", "-n", "10"] if os.name == "posix" else []), sys.executable, "-m", "kosti", "train",
            "--data", str(data), "--json", "--work", str(work)])
        self.state: JobState = "idle"
        self.started: float | None = None
        self.finished: float | None = None
        self.work: Path | None = None
        self.result: dict[str, JsonValue] | None = None
        self.error: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start training. Raises ``RuntimeError`` when a job is already running."""
        with self._lock:
            if self.state == "running":
                raise RuntimeError("already running")
            self.work = Path(tempfile.mkdtemp(prefix="kosti-teach-", dir=self.work_root))
            self.state, self.result, self.error = "running", None, None
            self.started, self.finished = time.time(), None
            log = open(self.work / "train.log", "w")  # noqa: SIM115 - closed by the waiter thread
            self._proc = subprocess.Popen(self.command(self.capture_dir, self.work), stdout=subprocess.PIPE,
                                          stderr=log, text=True, env={**os.environ, "YOLO_OFFLINE": "1",
                                                                      "MPLBACKEND": "Agg"})
            threading.Thread(target=self._wait, args=(self._proc, log), daemon=True).start()

    def _wait(self, proc: subprocess.Popen[str], log: IO[str]) -> None:
        out, _ = proc.communicate()
        log.close()
        with self._lock:
            self.finished = time.time()
            lines = [ln for ln in (out or "").splitlines() if ln.strip()]
            if proc.returncode == 0 and lines:
                try:
                    self.result, self.state = json.loads(lines[-1]), "done"
                    return
                except ValueError:
                    pass
            tail = self.work.joinpath("train.log").read_text(errors="replace").strip().splitlines() if self.work else []
            self.error = (tail[-1] if tail else f"kosti train exited with code {proc.returncode}")[:500]
            self.state = "failed"

    def progress(self) -> TrainProgress:
        """Stage, epoch and an estimate of the seconds left, read from Ultralytics' ``results.csv`` per run.

        The estimate is the mean time of the finished epochs of the running stage times the epochs left,
        plus 1.5 epochs for measuring the candidates (``None`` until one epoch has finished).
        """
        out: TrainProgress = {"stage": "preparing", "epoch": 0, "epochs": None, "eta_s": None}
        if self.work is None:
            return out
        for role, name in (("det", "detector"), ("cls", "classifier")):
            run = self.work / "runs" / role
            if not run.is_dir():
                continue
            epochs = None
            args = run / "args.yaml"
            if args.is_file():
                for line in args.read_text().splitlines():
                    if line.startswith("epochs:"):
                        epochs = int(line.split(":", 1)[1])
            rows = []
            res = run / "results.csv"
            if res.is_file():
                rows = [r for r in res.read_text().splitlines()[1:] if r.strip()]
            out["stage"], out["epoch"], out["epochs"] = name, len(rows), epochs
            if rows and epochs:
                per_epoch = float(rows[-1].split(",")[1]) / len(rows)  # column 2: seconds since the run began
                out["eta_s"] = round(per_epoch * (epochs - len(rows) + 1.5))
            if (run / "weights" / "done").exists() or (epochs and len(rows) >= epochs):
                out["stage"] = f"{name} trained; measuring"
        return out

    def to_json(self) -> JobJson:
        """``{"state", "elapsed_s", "progress", "result", "error"}``."""
        with self._lock:
            end = self.finished or time.time()
            return {"state": self.state, "elapsed_s": round(end - self.started) if self.started else 0,
                    "progress": self.progress() if self.state == "running" else None,
                    "result": self.result, "error": self.error}


def create_teach_router(capture_dir: str | Path, table: SettledThrows | None = None,
                        pin_check: Callable[..., str] | None = None, job: TeachJob | None = None) -> APIRouter:
    """Build the teach page and API over ``capture_dir`` (the review page's folder).

    Args:
        table: the dashboard's ``TableService`` (its ``last_settled`` throw is what ``capture`` saves);
            ``None`` = no live table (capture answers 409).
        pin_check: the dashboard's PIN dependency for the two writes.
        job: the training job (tests pass one with a stand-in command).
    """
    root = Path(capture_dir).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    training = job or TeachJob(root)
    router = APIRouter(tags=["teach"], route_class=RefusalRoute)
    guard = pin_check or (lambda: "local")

    @router.get("/teach", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "teach.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

    @router.get("/teach/teach.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(STATIC_DIR / "teach.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @router.get("/api/teach/status", summary="Teach flow: photos captured and reviewed, training progress and result",
                response_model=TeachStatus)
    def status() -> TeachStatus:
        st = cap.stats(root)
        return TeachStatus(images=st["images"], reviewed=st["reviewed"], suggested=SUGGESTED_THROWS,
                           min_reviewed=MIN_REVIEWED, job=training.to_json())

    @router.post("/api/teach/capture", summary="Save the latest settled throw for review", status_code=201,
                 response_model=CaptureAnswer)
    def capture(actor: str = Depends(guard)) -> CaptureAnswer:
        thr = table.last_settled if table is not None else None
        if thr is None or thr.image is None:
            raise Conflict("no settled throw yet: throw the dice and wait until they lie still",
                           "ещё нет броска: бросьте кости и дождитесь, пока они остановятся")
        dice = [(int(d.value), tuple(map(float, d.box)), float(d.confidence)) for d in thr.dice]
        kept = [d for d in dice if 1 <= d[0] <= 6]  # an unread die (value 0) is left for the reviewer to draw
        note = None if len(kept) == len(dice) else f"{len(dice) - len(kept)} unread dice: draw them"
        try:
            image_id = cap.CaptureWriter(root, model="teach").add(thr.image, kept, source="capture", note=note)
        except cap.CaptureError as exc:
            raise Invalid(str(exc), f"снимок не сохранён: {exc}") from None
        return CaptureAnswer(id=image_id, dice=len(kept), **status().model_dump())

    @router.post("/api/teach/train", summary="Start training on the reviewed photos", status_code=202,
                 response_model=TeachStatus)
    def train(actor: str = Depends(guard)) -> TeachStatus:
        if cap.stats(root)["reviewed"] < MIN_REVIEWED:
            raise Conflict(f"confirm at least {MIN_REVIEWED} photos on the review page first",
                           f"сначала подтвердите хотя бы {MIN_REVIEWED} снимка на странице проверки")
        try:
            training.start()
        except RuntimeError:
            raise Conflict("training is already running", "обучение уже идёт") from None
        return status()

    return router


__all__ = ["MIN_REVIEWED", "SUGGESTED_THROWS", "CaptureAnswer", "JobJson", "JobState", "SettledDie", "SettledThrow",
           "SettledThrows", "TeachJob", "TeachStatus", "TrainProgress", "create_teach_router"]
