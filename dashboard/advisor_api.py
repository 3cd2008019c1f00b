"""Dashboard routes of the turn advisor and the dice statistics (self-contained: one router).

* ``GET /api/advice`` — advice for the player to move in the live game
  (:func:`kosti.engine.advisor.advise`): ``{"available": true, "version": n, "game_id": id,
  "advice": {...kosti advise JSON...}, "objective": "...", "objective_kind": "turn"}``, or
  ``{"available": false, "reason", "reason_ru"}`` when there is no game, it is over, or the advisor
  has no model of it. A two-player Pig table gets the second objective, the win probability
  (:func:`kosti.engine.pig_advisor.advise_pig`): ``"objective_kind": "win"`` and the advice carries
  ``win_if_throw`` / ``win_if_stop``; the Pig table of the game's target is solved in the warm-up
  thread when the game is put on the table (seconds, once per target). ``version`` is the table snapshot's, so the
  page can tell which state the advice belongs to. The page (``static/advisor.js``) fetches it after
  every state push on ``/ws``; it can be hidden by the players, and is off in the spectator view
  (``/tv``, ``/?view=tv``).
* ``GET /api/stats`` (``?game=ID`` repeatable) — :func:`kosti.dashboard.stats.collect`.
* ``GET /api/stats/faces.png`` — the face-frequency plot with its expected band.

Advice is computed outside the table lock, one request at a time (the advisor's memo is shared).
The per-rules throw tables are built in a background thread as soon as a game is put on the table
(new, resumed, rematch, or restored at start-up: :func:`kosti.engine.advisor.prepare_tables`), so the
first advice does not build them; the first advice in a new turn solves that turn (tens of ms here, see
``benchmarks/bench_advisor.py``); later ones are lookups.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import Field
from fastapi.responses import Response

from kosti.engine.advise_cli import OBJECTIVE
from kosti.engine.advisor import advise, prepare_tables
from kosti.engine.game import GameState
from kosti.engine.pig_advisor import MAX_TARGET, OBJECTIVE_WIN, advise_pig, pig_refusal, solve

from .stats import collect, faces_png
from .table import TableError

log = logging.getLogger(__name__)
_ADVICE_LOCK = threading.Lock()
#: A stored game id as SQLite can hold it (a larger ``?game=`` is a 422, not an overflow inside the query).
GameIds = list[Annotated[int, Field(ge=1, le=2**63 - 1)]] | None


def create_advisor_router(table: Any) -> APIRouter:
    """The advisor / statistics router for a :class:`kosti.dashboard.table.TableService`.

    Registers a game hook on ``table`` that builds the game's throw tables in the background (the latest
    thread is ``table.advisor_warmup``), and starts one at once for a game already on the table."""
    router = APIRouter()

    def warm(state: Any) -> None:
        st = getattr(state, "state", state)  # the advisor knows the 1000 family and two-player Pig
        if getattr(st, "game", None) == "pig":
            if st.over or len(st.names) != 2 or not 2 <= st.params.target <= MAX_TARGET:
                return  # no win model for this table (the advice says why)

            def solve_pig() -> None:
                with _ADVICE_LOCK:
                    p = st.params
                    try:
                        sol = solve(p.target, p.equal_series)
                    except ValueError:
                        return
                    log.debug("Pig win table for target %d solved in %.1f s", p.target, sol.solve_time_s)

            th = threading.Thread(target=solve_pig, name="kosti-advisor-pig", daemon=True)
            table.advisor_warmup = th
            th.start()
            return
        if not isinstance(st, GameState):
            return

        def build() -> None:
            with _ADVICE_LOCK:  # an advice asked meanwhile waits for the tables instead of building them twice
                t0 = time.perf_counter()
                prepare_tables(st.rules)
                log.debug("advisor throw tables for %s ready in %.0f ms", st.rules.name, 1000 * (time.perf_counter() - t0))

        th = threading.Thread(target=build, name="kosti-advisor-tables", daemon=True)
        table.advisor_warmup = th
        th.start()

    table.game_hooks.append(warm)
    if table.state is not None:
        warm(table.state)

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
        if getattr(st, "game", None) == "pig":
            refused = pig_refusal(st)
            if refused is not None:
                return {"available": False, "version": version, "game_id": gid,
                        "reason": refused.text_en, "reason_ru": refused.text_ru}
            with _ADVICE_LOCK:
                pa = advise_pig(st)
            return {"available": True, "version": version, "game_id": gid, "advice": pa.to_json(),
                    "objective": OBJECTIVE_WIN, "objective_kind": "win"}
        if not isinstance(st, GameState):
            return {"available": False, "version": version, "game_id": gid,
                    "reason": "advice covers 1000, Farkle, 10000 and two-player Pig",
                    "reason_ru": "советы есть для 1000, фаркла, 10000 и «Свиньи» на двоих"}
        with _ADVICE_LOCK:
            a = advise(st)
        return {"available": True, "version": version, "game_id": gid, "advice": a.to_json(),
                "objective": OBJECTIVE, "objective_kind": "turn"}

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
