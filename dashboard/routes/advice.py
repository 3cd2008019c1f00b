"""Advice and dice statistics: ``GET /api/advice`` (throw or stop, for the player to move: the table's
:class:`~kosti.dashboard.advisor_api.TableAdvisor`), ``GET /api/stats`` (``?game=ID`` repeatable:
:func:`kosti.dashboard.stats.collect`; an unknown game is a 404) and ``GET /api/stats/faces.png`` (the face
frequencies with their expected band). Models: :mod:`kosti.dashboard.schemas.advice`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from starlette.requests import HTTPConnection

from kosti.dashboard.advisor_api import TableAdvisor
from kosti.dashboard.errors import NotFound
from kosti.dashboard.routes.deps import Db
from kosti.dashboard.schemas.advice import AdviceAnswer, GameIds
from kosti.dashboard.stats import StatsDocument, collect, faces_png
from kosti.dashboard.store import Store


def advisor_of(conn: HTTPConnection) -> TableAdvisor:
    """The app's table advisor (``app.state.advisor``)."""
    advisor: TableAdvisor = conn.app.state.advisor
    return advisor


Advisor = Annotated[TableAdvisor, Depends(advisor_of)]


def _stats(store: Store, game: list[int] | None) -> StatsDocument:
    try:
        return collect(store, game or None)
    except KeyError as exc:
        raise NotFound(f"no game {exc.args[0]}", f"игры {exc.args[0]} нет") from None


def create_advice_router() -> APIRouter:
    """The advice and statistics routes of the app's table."""
    router = APIRouter()

    @router.get("/api/advice", summary="Throw or stop: advice for the player to move",
                response_model=AdviceAnswer, response_model_exclude_unset=True)
    def get_advice(advisor: Advisor) -> AdviceAnswer:
        return advisor.answer()

    @router.get("/api/stats", summary="Dice statistics of the stored games", response_model=StatsDocument)
    def get_stats(store: Db, game: GameIds = Query(None, description="game id (1 … 2^63−1), repeatable")) -> StatsDocument:
        return _stats(store, game)

    @router.get("/api/stats/faces.png", summary="Face frequencies with the expected band (PNG)",
                response_class=Response, responses={200: {"content": {"image/png": {}}}})
    def get_faces_png(store: Db, game: GameIds = Query(None, description="game id (1 … 2^63−1), repeatable")) -> Response:
        return Response(faces_png(_stats(store, game)), media_type="image/png", headers={"Cache-Control": "no-store"})

    return router
