"""The dashboard's "teach my dice" flow (issue 14): capture ~10 throws, confirm them, train, see before/after.

:class:`TeachJob` is the training job; the page and its routes are :mod:`kosti.dashboard.routes.teach`
(``create_teach_router(capture_dir, table, pin_check) -> APIRouter``), which serve:

* ``GET /teach`` — the guided page (``static/teach.html`` + ``teach.js``; English and Russian);
* ``POST /api/teach/capture`` — save the table's latest settled throw (frame + the dice as read) into the
  capture folder, unreviewed, for the review page (``/review``) to confirm or fix;
* ``GET /api/teach/status`` — photos captured / reviewed, and the training job: ``state`` (``idle``,
  ``running``, ``done``, ``failed``), elapsed seconds, the stage and epoch, an estimate of the time left,
  and when done ``kosti train``'s JSON summary (before/after on the held-back photos, the gate's verdict,
  the version activated or refused with the reason);
* ``POST /api/teach/train`` — start ``kosti train --data CAPTURE_DIR --json`` (its defaults: reviewed photos,
  classifier first, the replay set, the forgetting gate) as a niced background process.

Each answer has its response model (:mod:`kosti.dashboard.schemas.teach`); refusals are the
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
from typing import IO, Protocol

import numpy as np
from pydantic import JsonValue

from kosti.dashboard.schemas.teach import JobJson, JobState, TrainProgress

#: Throws the page asks for (issue 14: "throw your dice ~10 times"); training needs at least 2 reviewed.
SUGGESTED_THROWS = 10
MIN_REVIEWED = 2


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


__all__ = ["MIN_REVIEWED", "SUGGESTED_THROWS", "SettledDie", "SettledThrow", "SettledThrows", "TeachJob"]
