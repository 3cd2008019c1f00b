"""The "teach my dice" page and API (issue 14) over a capture folder: the job and the throws it saves are
:mod:`kosti.dashboard.teach`, the models :mod:`kosti.dashboard.schemas.teach`.

``create_teach_router(capture_dir, table, pin_check) -> APIRouter`` serves:

* ``GET /teach`` — the guided page (``static/teach.html`` + ``teach.js``; English and Russian);
* ``POST /api/teach/capture`` — save the table's latest settled throw (frame + the dice as read) into the
  capture folder, unreviewed, for the review page (``/review``) to confirm or fix;
* ``GET /api/teach/status`` — photos captured / reviewed, and the training job (:class:`TeachStatus`);
* ``POST /api/teach/train`` — start the training job (409 while one runs or before enough photos are confirmed).

Refusals are the dashboard's typed errors, answered as ``{"error", "error_ru", "status"}`` by the review
router's route class (:class:`kosti.dashboard.routes.review.RefusalRoute`) in any app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse

from kosti.dashboard.errors import Conflict, Invalid
from kosti.dashboard.routes.review import STATIC_DIR, RefusalRoute
from kosti.dashboard.schemas.teach import CaptureAnswer, TeachStatus
from kosti.dashboard.teach import MIN_REVIEWED, SUGGESTED_THROWS, SettledThrows, TeachJob
from kosti.datasets import capture as cap


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


__all__ = ["create_teach_router"]
