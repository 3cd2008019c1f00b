"""A stored game as a file: ``GET /api/games/{id}/export?format=json|csv|zip`` (the recorded-game JSON of ``cli.md``
that ``kosti replay`` and ``kosti advise`` read, the CSV score sheet, or a zip of both with the throws' photos;
:mod:`kosti.dashboard.export`). A read like the game's history: anyone who may watch may export."""

from __future__ import annotations

import json
from typing import Literal

from fastapi import APIRouter, Query, Response

from kosti.dashboard.errors import NotFound
from kosti.dashboard.export import game_csv, game_record, game_zip
from kosti.dashboard.routes.games import GameId
from kosti.dashboard.schemas import RecordedGameFile
from kosti.dashboard.store import Store

#: Media type and file extension of each export format.
FORMATS: dict[str, tuple[str, str]] = {
    "json": ("application/json", "json"),
    "csv": ("text/csv; charset=utf-8", "csv"),
    "zip": ("application/zip", "zip"),
}


def create_export_router(store: Store) -> APIRouter:
    """The export route over ``store``."""
    router = APIRouter()

    @router.get("/api/games/{game_id}/export", summary="A game as a file: recorded-game JSON (kosti replay), "
                "CSV score sheet, or a zip of both with the throws' photos", response_class=Response,
                responses={200: {"model": RecordedGameFile, "content": {t: {} for t, _ in FORMATS.values()},
                                 "description": "the file, as an attachment"}})
    def export_game(game_id: GameId, format: Literal["json", "csv", "zip"] = Query(  # noqa: A002 - the API's word
            "json", description="json: the recorded game of cli.md; csv: a row per turn, a column per player; "
                                "zip: both and photos/throw-<id>.jpg")) -> Response:
        if store.get_game(game_id) is None:
            raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
        if format == "csv":
            body: bytes = game_csv(store, game_id).encode("utf-8")
        elif format == "zip":
            body = game_zip(store, game_id)
        else:
            body = json.dumps(game_record(store, game_id), ensure_ascii=False, indent=1).encode("utf-8")
        media, ext = FORMATS[format]
        return Response(body, media_type=media, headers={
            "Content-Disposition": f'attachment; filename="kosti-game-{game_id}.{ext}"',
            "Cache-Control": "no-store"})

    return router
