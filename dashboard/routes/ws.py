"""The WebSocket ``/ws``: the table snapshot pushed on every change, and the game controls as messages
``{"cmd": name, "game_id": id, "pin": …, ...fields}`` answered ``{"type": "ack", "cmd"}`` or ``{"type":
"error", "cmd", "error", "error_ru", "status"}`` — the same command table, body models, handlers and error
bodies as REST (:mod:`.commands`, :mod:`.errors`). A socket opened as ``/ws?view=tv`` is the spectator view's:
it gets every push and answers every command 403 (:func:`kosti.dashboard.access.spectator_refused`)."""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from pydantic import JsonValue

from kosti.dashboard.access import AccessError, PinGuard, spectator_refused
from kosti.dashboard.errors import TableError
from kosti.dashboard.routes.commands import MAX_WS_MESSAGE, parse_ws_command
from kosti.dashboard.routes.deps import Table
from kosti.dashboard.routes.errors import BUG, error_body
from kosti.dashboard.store import StoreError
from kosti.dashboard.table import TableService

log = logging.getLogger("kosti.dashboard.app")


def create_ws_router(guard: PinGuard, pin_required: bool) -> APIRouter:
    """The WebSocket route of the app's table; commands need the PIN (``guard``) when ``pin_required``."""
    router = APIRouter()

    async def run_command(table: TableService, text: str, who: str, conn_pin: str | None,
                          spectator: bool = False) -> dict[str, JsonValue]:
        """One message → its answer (``ack`` or ``error``); a bug is answered like REST's 500, the socket stays.
        On the spectator view's socket (``spectator``) every command is refused (403)."""
        cmd = None
        try:
            if spectator:  # refused before it is even parsed: nothing a spectator sends reaches a command
                raise spectator_refused()
            env, command, body = parse_ws_command(text)
            cmd = env.cmd
            if pin_required:
                guard.check(who, env.pin or conn_pin)
            actor = f"{'pin' if pin_required else 'local'}:{who}"
            await run_in_threadpool(table.act, lambda: command.handler(table.session, table.live, actor, env.game_id,
                                                                       body))
        except (TableError, AccessError, StoreError) as exc:
            if isinstance(exc, StoreError):
                await run_in_threadpool(table.changed)
            return {"type": "error", "cmd": cmd, **error_body(exc)}
        except Exception as exc:  # noqa: BLE001 - a bug: answered like REST's 500, the socket stays open
            log.error("internal error on websocket command %s: %s: %s", cmd, type(exc).__name__, str(exc)[:200])
            return {"type": "error", "cmd": cmd, "error": BUG[0], "error_ru": BUG[1], "status": 500}
        return {"type": "ack", "cmd": cmd}

    @router.websocket("/ws")
    async def ws(websocket: WebSocket, table: Table) -> None:
        await websocket.accept()
        q = table.broadcaster.subscribe()
        conn_pin = websocket.query_params.get("pin")
        spectator = websocket.query_params.get("view") == "tv"
        who = websocket.client.host if websocket.client else "?"
        try:
            await websocket.send_json(table.snapshot())

            async def sender() -> None:
                while True:
                    msg = await q.get()
                    await websocket.send_json(msg)

            async def receiver() -> None:
                while True:
                    msg = await websocket.receive()
                    if msg["type"] == "websocket.disconnect":
                        raise WebSocketDisconnect(msg.get("code", 1000))
                    text = msg.get("text")
                    if text is None:
                        text = (msg.get("bytes") or b"")[: MAX_WS_MESSAGE + 1].decode("utf-8", "replace")
                    await websocket.send_json(await run_command(table, text, who, conn_pin, spectator))

            tasks = [asyncio.create_task(sender()), asyncio.create_task(receiver())]
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for t in pending:
                t.cancel()
            for t in done:
                exc = t.exception()
                if exc is not None and not isinstance(exc, (WebSocketDisconnect, RuntimeError, KeyError)):
                    log.warning("websocket ended: %r", exc)
        except WebSocketDisconnect:
            pass
        finally:
            table.broadcaster.unsubscribe(q)

    return router
