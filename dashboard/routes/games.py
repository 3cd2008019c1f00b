"""Games: rule presets, stored games and their history, throw images, starting and resuming games, and one
control route per command of the command table (:data:`kosti.dashboard.routes.commands.COMMANDS`).

Each route depends on the application objects it uses (:mod:`kosti.dashboard.routes.deps`): the game
(``Session``), the database (``Db``), the table that answers the snapshot (``Table``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, Request, Response
from fastapi import Path as PathParam
from pydantic import BaseModel

from kosti.dashboard.errors import NotFound
from kosti.dashboard.history import games, history
from kosti.dashboard.routes.commands import COMMANDS, Command, Result
from kosti.dashboard.routes.deps import Db, Session, Table
from kosti.dashboard.schemas import (
    MAX_ID,
    Games,
    History,
    NewGame,
    Presets,
    ReplaceBody,
    Snapshot,
)
from kosti.dashboard.table import TableService
from kosti.dashboard.views import list_presets

GameId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="game id (1 … 2^63−1)")]
ThrowId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="throw id (1 … 2^63−1)")]
#: The control-route dependency: the actor's name (``local:…`` / ``pin:…``); 403/429 without the right PIN.
PinCheck = Callable[[Request], str]
JPEG: dict[int | str, dict[str, object]] = {200: {"content": {"image/jpeg": {}}, "description": "a JPEG image"}}


def create_games_router(check_pin: PinCheck) -> APIRouter:
    """The games routes; control routes depend on ``check_pin``."""
    router = APIRouter()

    @router.get("/api/state", summary="The table snapshot", response_model=Snapshot, response_model_exclude_unset=True)
    def get_state(table: Table) -> Result:
        return table.snapshot()

    @router.get("/api/presets", summary="Rule presets", response_model=Presets, response_model_exclude_unset=True)
    def get_presets() -> Result:
        return {"presets": list_presets()}

    @router.get("/api/games", summary="Stored games, newest first (scores, turns, status)", response_model=Games,
                response_model_exclude_unset=True)
    def get_games(session: Session, store: Db, limit: int = Query(50, ge=1, le=500)) -> Result:
        return {"games": games(store, session.game_id, limit), "current": session.game_id}

    @router.get("/api/games/{game_id}/history", summary="Turns, throws, actions and corrections of a game",
                response_model=History, response_model_exclude_unset=True)
    def get_history(game_id: GameId, store: Db) -> Result:
        return history(store, game_id)

    @router.get("/api/throws/{throw_id}/image.jpg", summary="Settled frame of a throw (JPEG)",
                response_class=Response, responses=JPEG)
    def throw_image(throw_id: ThrowId, store: Db, thumb: bool = False) -> Response:
        data = store.throw_image(throw_id, thumbnail=thumb)
        if data is None:
            raise NotFound(f"no image for throw {throw_id}", f"нет снимка броска {throw_id}")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "max-age=86400"})

    @router.post("/api/games", summary="Start a new game (409 replace_needed while another is being played)",
                 status_code=201, response_model=Snapshot, response_model_exclude_unset=True)
    def post_game(body: NewGame, table: Table, session: Session, actor: str = Depends(check_pin)) -> Result:
        return table.act(lambda: session.new_game(body.players, body.preset, body.overrides, actor=actor,
                                                  replace=body.replace))

    @router.post("/api/games/{game_id}/resume", summary="Put a stored unfinished game back on the table",
                 response_model=Snapshot, response_model_exclude_unset=True)
    def post_resume(game_id: GameId, table: Table, session: Session, body: ReplaceBody | None = None,
                    actor: str = Depends(check_pin)) -> Result:
        return table.act(lambda: session.resume(game_id, actor=actor, replace=bool(body and body.replace)))

    @router.post("/api/games/{game_id}/rematch", summary="New game with the same players and rules",
                 status_code=201, response_model=Snapshot, response_model_exclude_unset=True)
    def post_rematch(game_id: GameId, table: Table, session: Session, body: ReplaceBody | None = None,
                     actor: str = Depends(check_pin)) -> Result:
        return table.act(lambda: session.rematch(game_id, actor=actor, replace=bool(body and body.replace)))

    for command in COMMANDS.values():
        router.add_api_route(f"/api/games/{{game_id}}/{command.name}", control_endpoint(command, check_pin),
                             methods=["POST"], summary=command.summary, response_model=command.response,
                             name=f"post_{command.name}", response_model_exclude_unset=True)
    return router


def control_endpoint(command: Command, check_pin: PinCheck) -> Callable[..., Result]:
    """The REST endpoint of ``command``: ``game_id`` from the path, the body validated with the command's model
    (left out when the command has none; optional with ``body_optional``), the actor from ``check_pin``; the
    handler runs on the table's game and camera (:meth:`TableService.act`)."""

    def endpoint(game_id: int, actor: str, table: TableService, body: BaseModel | None = None) -> Result:
        return table.act(lambda: command.handler(table.session, table.live, actor, game_id, body))

    params = [inspect.Parameter("game_id", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=GameId),
              inspect.Parameter("table", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Table)]
    if command.body is not None:
        params.append(inspect.Parameter(
            "body", inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=command.body | None if command.body_optional else command.body,
            default=None if command.body_optional else Body()))
    params.append(inspect.Parameter("actor", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str,
                                    default=Depends(check_pin)))
    endpoint.__signature__ = inspect.Signature(params, return_annotation=command.response)  # type: ignore[attr-defined]
    endpoint.__name__ = f"post_{command.name}"
    return endpoint
