"""Label review page and API: check and fix the dice labels of captured throws (``kosti capture``).

``create_review_router(capture_dir, pin_check=None) -> APIRouter`` serves, over one capture folder
(:mod:`kosti.datasets.capture`):

* ``GET /review`` — the review page (``dashboard/static/review.html``; its script and styles at
  ``/review/review.js`` and ``/review/review.css``, so the page works on any app that includes the router);
* ``GET /api/review/images[?status=all|reviewed|unreviewed]`` — every image with its reviewed flag and
  dice count, plus the folder's counts (``stats``);
* ``GET /api/review/images/{id}`` — one image's labels (``dice``: value 1–6, box x1 y1 x2 y2 in image
  pixels, model confidence, uncertain) and its neighbours (``prev``, ``next``, ``next_unreviewed``); with a
  ``suggest`` function, an unreviewed image also gets ``suggested``: the boxes the reader saw but did not take
  as dice (vetoed as "not a die" or scored below its box threshold, :mod:`kosti.datasets.suggest`), which the
  page shows as uncertain boxes to confirm with one tap;
* ``GET /api/review/images/{id}/image.jpg`` — the image itself;
* ``PUT /api/review/images/{id}/labels`` — replace the labels ``{"dice": [{"value", "box"}], "reviewed": true}``;
* ``POST /api/review/images/{id}/reviewed`` — mark reviewed (or not) without changing the labels;
* ``GET /api/review/stats`` — ``{"images", "reviewed", "unreviewed", "dice", "reviewed_dice", "corrections", "faces"}``.

Each answer has its response model (:class:`ReviewStats`, :class:`ImageList`, :class:`ImageView`, in
:mod:`kosti.dashboard.schemas.review`), so
``/openapi.json`` documents it. Errors are the dashboard's typed errors (:mod:`kosti.dashboard.errors`:
:class:`NotFound` 404, :class:`Invalid` 422, the door's :class:`AccessError` 403), answered by the router's
own route class as JSON ``{"error", "error_ru", "status"}`` as everywhere in the dashboard, whichever app
includes the router; bad label bodies are refused with 422 and say which die and why (value not 1–6, box
empty or outside the image; body-shape errors are FastAPI's validation answer, which the dashboard app
formats the same way). The two writing routes depend on ``pin_check`` — pass the dashboard's PIN dependency (or
:func:`pin_dependency`) so that, bound to a non-loopback address, only players with the PIN edit labels.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.routing import APIRoute

from kosti.dashboard.access import AccessError
from kosti.dashboard.errors import Invalid, NotFound, TableError
from kosti.dashboard.schemas.review import (
    MAX_DICE,
    ImageItem,
    ImageList,
    ImageView,
    LabelledDie,
    LabelsBody,
    ReviewDie,
    ReviewedBody,
    ReviewStats,
)
from kosti.datasets import capture as cap

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
#: Unreviewed images whose suggested boxes are kept in memory (a few hundred bytes each).
SUGGESTION_CACHE = 512
_log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_T = TypeVar("_T")


def refusal_response(exc: TableError | AccessError) -> JSONResponse:
    """A typed refusal as the dashboard's error answer ``{"error", "error_ru", "status"}`` (plus ``code``)."""
    return JSONResponse(exc.to_json(), status_code=exc.status)


class RefusalRoute(APIRoute):
    """Route class answering a typed refusal (:class:`TableError`, :class:`AccessError`) raised by a route
    or a dependency with its JSON (:func:`refusal_response`), in any app that includes the router (the
    dashboard's handlers give the same answer)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[object, object, Response]]:
        handler = super().get_route_handler()

        async def route_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except (TableError, AccessError) as exc:
                return refusal_response(exc)

        return route_handler


def pin_dependency(pin: str | None) -> Callable[[Request], str]:
    """A FastAPI dependency equivalent to the dashboard's PIN check, for apps that do not have one.

    With ``pin`` None every client may write (loopback binding); otherwise the request must carry the PIN
    in the ``X-Kosti-Pin`` header or the ``?pin=`` query, else :class:`AccessError` 403. Returns the actor.
    """

    def check(request: Request) -> str:
        who = request.client.host if request.client else "?"
        if pin is None:
            return f"local:{who}"
        given = request.headers.get("x-kosti-pin") or request.query_params.get("pin")
        if not given or not secrets.compare_digest(str(given), str(pin)):
            raise AccessError(403, "editing labels needs the PIN shown when the dashboard started",
                              "для правки разметки нужен PIN, показанный при запуске")
        return f"pin:{who}"

    return check


class ReviewFolder:
    """The capture folder ``root`` as the review routes read it: each image's view with its neighbours and the
    folder's counts, the boxes ``suggest`` offers for an unreviewed image (kept for the latest
    :data:`SUGGESTION_CACHE` label sets), and the refusals (:class:`NotFound` for an unknown image, :class:`Invalid`
    for labels the folder refuses)."""

    def __init__(self, root: Path, suggest: Callable[[Any, Any], list[dict[str, Any]]] | None) -> None:
        self.root, self.suggest = root, suggest
        self.cache: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def suggested(self, rec: cap.CaptureRecord) -> list[dict[str, Any]] | None:
        """The boxes to confirm on an unreviewed image (None when reviewed, without a suggester, or when it failed)."""
        if self.suggest is None or rec.reviewed:
            return None
        key = (rec.id, f"{rec.meta.get('time')}|{rec.meta.get('labels')}")
        if key not in self.cache:
            try:
                image = cap.load(self.root, rec.id).image
                self.cache[key] = self.suggest(image, rec.dice.xyxy) if image is not None else []
            except Exception as exc:  # a reader that cannot load must not stop the review
                _log.warning("no suggested boxes for %s: %s", rec.id, exc)
                return None
            while len(self.cache) > SUGGESTION_CACHE:
                self.cache.pop(next(iter(self.cache)))
        return self.cache[key]

    def known(self, image_id: str) -> None:
        """NotFound unless ``image_id`` names an image of the folder."""
        try:
            cap.image_path(self.root, image_id)
        except cap.CaptureError:
            raise NotFound(f"no image {image_id!r} in the capture folder",
                           f"нет снимка {image_id!r} в папке снимков") from None

    def call(self, fn: Callable[_P, _T], *args: _P.args, **kw: _P.kwargs) -> _T:
        """``fn(*args, **kw)`` with the folder's refusal (:class:`kosti.datasets.capture.CaptureError`) as Invalid."""
        try:
            return fn(*args, **kw)
        except cap.CaptureError as exc:
            raise Invalid(str(exc), f"неверная разметка: {exc}") from None

    def view(self, rec: cap.CaptureRecord, boxes: list[dict[str, Any]] | None = None) -> ImageView:
        """Image ``rec`` with its URL, its place among the folder's images and the folder's counts (``boxes``: the
        suggested boxes to confirm, when any)."""
        items = cap.list_images(self.root)
        ids = [it["id"] for it in items]
        i = ids.index(rec.id) if rec.id in ids else -1
        unreviewed = [it["id"] for it in items if not it["reviewed"] and it["id"] != rec.id]
        after = [x for x in unreviewed if x > rec.id]
        nxt_unrev = after[0] if after else (unreviewed[0] if unreviewed else None)
        return ImageView.model_validate({
            **rec.to_dict(),
            "image_url": f"/api/review/images/{rec.id}/image.jpg",
            "index": i,
            "prev": ids[i - 1] if i > 0 else None,
            "next": ids[i + 1] if 0 <= i < len(ids) - 1 else None,
            "next_unreviewed": nxt_unrev,
            "stats": cap.stats(self.root, items),
            **({"suggested": boxes} if boxes is not None else {}),
        })


def _add_page_routes(router: APIRouter) -> None:
    """The review page, its script and its styles (``no-cache``: a new version is seen at once)."""
    @router.get("/review", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "review.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

    @router.get("/review/review.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(STATIC_DIR / "review.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @router.get("/review/review.css", include_in_schema=False)
    def styles() -> FileResponse:
        return FileResponse(STATIC_DIR / "review.css", media_type="text/css", headers={"Cache-Control": "no-cache"})


def create_review_router(capture_dir: str | Path, pin_check: Callable[..., str] | None = None,
                         suggest: Callable[[Any, Any], list[dict[str, Any]]] | None = None) -> APIRouter:
    """Build the review page and API over the capture folder ``capture_dir`` (created if missing).

    Args:
        capture_dir: the folder ``kosti capture`` writes (``images/``, ``labels/``, ``review.json``).
        pin_check: FastAPI dependency run before every write (the dashboard's ``check_pin``), returning the
            actor name; ``None`` = writes are open (use only on a loopback binding).
        suggest: ``(image (H, W, 3) uint8 BGR, labelled boxes (N, 4) pixels) -> boxes to confirm``
            (:class:`kosti.datasets.suggest.ReaderSuggester`); asked once per unreviewed image and its
            labels; an error there is logged and the image shown without suggestions.

    Mount with ``app.include_router(create_review_router(dir, pin_check=check_pin))``.
    """
    root = Path(capture_dir).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    guard = pin_check or pin_dependency(None)
    router = APIRouter(tags=["review"], route_class=RefusalRoute)
    folder = ReviewFolder(root, suggest)
    _known, _call, _suggested, _view = folder.known, folder.call, folder.suggested, folder.view
    _add_page_routes(router)

    # -- read ------------------------------------------------------------------------------------------
    @router.get("/api/review/stats", summary="Counts of the capture folder", response_model=ReviewStats)
    def get_stats() -> ReviewStats:
        return ReviewStats.model_validate({**_call(cap.stats, root), "folder": root.name})

    @router.get("/api/review/images", summary="Captured images with their reviewed status", response_model=ImageList)
    def get_images(status: str = Query("all", pattern="^(all|reviewed|unreviewed)$")) -> ImageList:
        items = _call(cap.list_images, root)
        counts = {**_call(cap.stats, root, items), "folder": root.name}
        if status != "all":
            items = [it for it in items if it["reviewed"] == (status == "reviewed")]
        return ImageList.model_validate({"images": items, "stats": counts})

    @router.get("/api/review/images/{image_id}", summary="One image's labels and its neighbours",
                response_model=ImageView, response_model_exclude_unset=True)
    def get_image(image_id: str) -> ImageView:
        _known(image_id)
        rec = _call(cap.load, root, image_id, with_image=False)
        return _view(rec, _suggested(rec))

    @router.get("/api/review/images/{image_id}/image.jpg", summary="The image (JPEG)", response_class=FileResponse,
                responses={200: {"content": {"image/jpeg": {}}}})
    def get_image_file(image_id: str) -> FileResponse:
        _known(image_id)
        path = cap.image_path(root, image_id)
        media = "image/jpeg" if path.suffix.lower() in (".jpg", ".jpeg") else f"image/{path.suffix.lower().lstrip('.')}"
        return FileResponse(path, media_type=media, headers={"Cache-Control": "no-cache"})

    # -- write -----------------------------------------------------------------------------------------
    @router.put("/api/review/images/{image_id}/labels", summary="Replace an image's labels (and mark it reviewed)",
                response_model=ImageView, response_model_exclude_unset=True)
    async def put_labels(image_id: str, body: LabelsBody, actor: str = Depends(guard)) -> ImageView:
        _known(image_id)
        rec = await run_in_threadpool(_call, cap.load, root, image_id, with_image=False)
        for i, d in enumerate(body.dice):
            x1, y1, x2, y2 = d.box
            tol = cap.BOX_TOLERANCE_PX
            if x1 < -tol or y1 < -tol or x2 > rec.width + tol or y2 > rec.height + tol:
                raise Invalid(f"die {i}: box [{x1:g}, {y1:g}, {x2:g}, {y2:g}] lies outside the "
                              f"{rec.width}×{rec.height} image",
                              f"кость {i}: рамка [{x1:g}, {y1:g}, {x2:g}, {y2:g}] выходит за снимок "
                              f"{rec.width}×{rec.height}")
        dice = [(d.value, tuple(d.box)) for d in body.dice]
        rec = await run_in_threadpool(_call, cap.save_labels, root, image_id, dice, reviewed=body.reviewed)
        return _view(rec)

    @router.post("/api/review/images/{image_id}/reviewed", summary="Mark an image reviewed (labels unchanged)",
                 response_model=ImageView, response_model_exclude_unset=True)
    async def post_reviewed(image_id: str, body: ReviewedBody | None = None, actor: str = Depends(guard)) -> ImageView:
        _known(image_id)
        rec = await run_in_threadpool(_call, cap.set_reviewed, root, image_id, True if body is None else body.reviewed)
        return _view(rec)

    return router


__all__ = ["MAX_DICE", "ImageItem", "ImageList", "ImageView", "LabelledDie", "LabelsBody", "RefusalRoute", "ReviewDie",
           "ReviewStats", "ReviewedBody", "create_review_router", "pin_dependency", "refusal_response"]
