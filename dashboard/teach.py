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

One job at a time (409 while one runs). The job is a separate process, so the table keeps scoring while it
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, JSONResponse

from kosti.datasets import capture as cap

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Throws the page asks for (issue 14: "throw your dice ~10 times"); training needs at least 2 reviewed.
SUGGESTED_THROWS = 10
MIN_REVIEWED = 2


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
        self.state = "idle"
        self.started: float | None = None
        self.finished: float | None = None
        self.work: Path | None = None
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self._proc: subprocess.Popen | None = None
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

    def _wait(self, proc: subprocess.Popen, log: Any) -> None:
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

    def progress(self) -> dict[str, Any]:
        """Stage, epoch and an estimate of the seconds left, read from Ultralytics' ``results.csv`` per run.

        The estimate is the mean time of the finished epochs of the running stage times the epochs left,
        plus 1.5 epochs for measuring the candidates (``None`` until one epoch has finished).
        """
        out: dict[str, Any] = {"stage": "preparing", "epoch": 0, "epochs": None, "eta_s": None}
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
            out.update(stage=name, epoch=len(rows), epochs=epochs)
            if rows and epochs:
                per_epoch = float(rows[-1].split(",")[1]) / len(rows)  # column 2: seconds since the run began
                out["eta_s"] = round(per_epoch * (epochs - len(rows) + 1.5))
            if (run / "weights" / "done").exists() or (epochs and len(rows) >= epochs):
                out["stage"] = f"{name} trained; measuring"
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"state", "elapsed_s", "progress", "result", "error"}``."""
        with self._lock:
            end = self.finished or time.time()
            return {"state": self.state, "elapsed_s": round(end - self.started) if self.started else 0,
                    "progress": self.progress() if self.state == "running" else None,
                    "result": self.result, "error": self.error}


def _err(status: int, en: str, ru: str) -> JSONResponse:
    return JSONResponse({"error": en, "error_ru": ru, "status": status}, status_code=status)


def create_teach_router(capture_dir: str | Path, table: Any = None, pin_check: Callable[..., Any] | None = None,
                        job: TeachJob | None = None) -> APIRouter:
    """Build the teach page and API over ``capture_dir`` (the review page's folder).

    Args:
        table: the dashboard's ``TableService`` (its ``last_settled`` throw is what ``capture`` saves);
            ``None`` = no live table (capture answers 409).
        pin_check: the dashboard's PIN dependency for the two writes.
        job: the training job (tests pass one with a stand-in command).
    """
    root = Path(capture_dir).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    job = job or TeachJob(root)
    router = APIRouter(tags=["teach"])
    guard = pin_check or (lambda: "local")

    @router.get("/teach", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "teach.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

    @router.get("/teach/teach.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(STATIC_DIR / "teach.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @router.get("/api/teach/status", summary="Teach flow: photos captured and reviewed, training progress and result")
    def status() -> dict[str, Any]:
        st = cap.stats(root)
        return {"images": st["images"], "reviewed": st["reviewed"], "suggested": SUGGESTED_THROWS,
                "min_reviewed": MIN_REVIEWED, "job": job.to_json()}

    @router.post("/api/teach/capture", summary="Save the latest settled throw for review", status_code=201)
    def capture(actor: Any = Depends(guard)) -> Any:
        thr = getattr(table, "last_settled", None) if table is not None else None
        if thr is None or getattr(thr, "image", None) is None:
            return _err(409, "no settled throw yet: throw the dice and wait until they lie still",
                        "ещё нет броска: бросьте кости и дождитесь, пока они остановятся")
        dice = [(int(d.value), tuple(map(float, d.box)), float(d.confidence), int(getattr(d, "guess", 0) or 0))
                for d in thr.dice]
        kept = [d for d in dice if 1 <= d[0] <= 6 or 1 <= d[3] <= 6]
        note = None if len(kept) == len(dice) else f"{len(dice) - len(kept)} unread dice: draw them"
        try:
            image_id = cap.CaptureWriter(root, model="teach").add(thr.image, kept, source="capture", note=note)
        except cap.CaptureError as exc:
            return _err(422, str(exc), f"снимок не сохранён: {exc}")
        return {"id": image_id, "dice": len(kept), **status()}

    @router.post("/api/teach/train", summary="Start training on the reviewed photos", status_code=202)
    def train(actor: Any = Depends(guard)) -> Any:
        if cap.stats(root)["reviewed"] < MIN_REVIEWED:
            return _err(409, f"confirm at least {MIN_REVIEWED} photos on the review page first",
                        f"сначала подтвердите хотя бы {MIN_REVIEWED} снимка на странице проверки")
        try:
            job.start()
        except RuntimeError:
            return _err(409, "training is already running", "обучение уже идёт")
        return status()

    return router


__all__ = ["MIN_REVIEWED", "SUGGESTED_THROWS", "TeachJob", "create_teach_router"]
