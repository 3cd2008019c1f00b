"""Dashboard routes of the turn advisor and the dice statistics (self-contained: one router).

* ``GET /api/advice`` — advice for the player to move in the live game
  (:func:`kosti.engine.advisor.advise`): ``{"available": true, "version": n, "game_id": id,
  "advice": {...kosti advise JSON...}, "objective": "..."}``, or ``{"available": false, "reason",
  "reason_ru"}`` when there is no game or it is over. ``version`` is the table snapshot's, so the
  page can tell which state the advice belongs to. The page (``static/advisor.js``) fetches it after
  every state push on ``/ws``; it can be hidden by the players, and is off in the spectator view
  (``/tv``, ``/?view=tv``).
* ``GET /api/stats`` (``?game=ID`` repeatable) — :func:`kosti.dashboard.stats.collect`.
* ``GET /api/stats/faces.png`` — the face-frequency plot with its expected band.

Advice is computed outside the table lock, one request at a time (the advisor's memo is shared).
The first advice in a new turn solves that turn (tens of ms here, see
``benchmarks/bench_advisor.py``); later ones are lookups.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import Field
from fastapi.responses import Response

from kosti.engine.advise_cli import OBJECTIVE
from kosti.engine.advisor import advise
from kosti.engine.game import GameState

from .stats import collect, faces_png
from .table import TableError

_ADVICE_LOCK = threading.Lock()
#: A stored game id as SQLite can hold it (a larger ``?game=`` is a 422, not an overflow inside the query).
GameIds = list[Annotated[int, Field(ge=1, le=2**63 - 1)]] | None


def create_advisor_router(table: Any) -> APIRouter:
    """The advisor / statistics router for a :class:`kosti.dashboard.table.TableService`."""
    router = APIRouter()

    @router.get("/api/advice", summary="Throw or stop: advice for the player to move")
    def get_advice() -> dict[str, Any]:
        with table._lock:
            st, version, gid = table.state, table.version, table.game_id
        if st is None:
            return {"available": False, "version": version, "game_id": gid,
                    "reason": "no game", "reason_ru": "игры нет"}
        if st.over:
            return {"available": False, "version": version, "game_id": gid,
                    "reason": "the game is over", "reason_ru": "игра окончена"}
        st = getattr(st, "state", st)  # the table hosts any game; the advisor knows the 1000 family
        if not isinstance(st, GameState):
            return {"available": False, "version": version, "game_id": gid,
                    "reason": "advice covers 1000, Farkle and 10000", "reason_ru": "советы есть для 1000, фаркла и 10000"}
        with _ADVICE_LOCK:
            a = advise(st)
        return {"available": True, "version": version, "game_id": gid, "advice": a.to_json(),
                "objective": OBJECTIVE}

    def _stats(game: list[int] | None) -> dict[str, Any]:
        try:
            return collect(table.store, game or None)
        except KeyError as exc:
            raise TableError(404, f"no game {exc.args[0]}", f"игры {exc.args[0]} нет") from None

    @router.get("/api/stats", summary="Dice statistics of the stored games")
    def get_stats(game: GameIds = Query(None, description="game id (1 … 2^63−1), repeatable")) -> dict[str, Any]:
        return _stats(game)

    @router.get("/api/stats/faces.png", summary="Face frequencies with the expected band (PNG)",
                response_class=Response, responses={200: {"content": {"image/png": {}}}})
    def get_faces_png(game: GameIds = Query(None, description="game id (1 … 2^63−1), repeatable")) -> Response:
        return Response(faces_png(_stats(game)), media_type="image/png",
                        headers={"Cache-Control": "no-store"})

    return router
