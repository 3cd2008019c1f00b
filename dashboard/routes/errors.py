"""Errors at the edge: each typed domain error mapped to its HTTP status, every answer in one shape.

The table raises :mod:`kosti.dashboard.errors` classes (:class:`NotFound`, :class:`Conflict`, :class:`Invalid`,
:class:`Unavailable`); the door raises :class:`AccessError` (403/413/429); the store :class:`StoreError`
(503, 507 disk full). :func:`install_error_handlers` answers each, and every other failure — a malformed
request (422 with a plain one-line reason in both languages, :func:`plain_reason`), an unknown route (404),
a database that cannot be read (503), a bug (500, logged once, no traceback) — as JSON
``{"error": English, "error_ru": Russian, "status": code}`` (plus ``code`` where the page reacts, such as
``replace_needed``, and ``detail`` on a 422). The WebSocket answers its errors with the same body
(:func:`error_body`, :func:`validation_error`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeAlias

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import JsonValue
from pydantic_core import ErrorDetails
from starlette.exceptions import HTTPException as StarletteHTTPException

from kosti.dashboard.access import AccessError
from kosti.dashboard.errors import Conflict, Invalid, NotFound, TableError, Unavailable
from kosti.dashboard.store import StoreError

log = logging.getLogger("kosti.dashboard.app")

#: The HTTP status of each kind of domain error (a :class:`TableError` raised with an explicit status and
#: not of these kinds keeps that status).
HTTP_STATUS: dict[type[TableError], int] = {NotFound: 404, Conflict: 409, Invalid: 422, Unavailable: 503}
#: Every error the web layer can be handed by the table, the door or the store.
Refusal: TypeAlias = TableError | AccessError | StoreError
ErrorJson: TypeAlias = dict[str, JsonValue]


def status_of(exc: Refusal) -> int:
    """The HTTP status ``exc`` is answered with: its class's in :data:`HTTP_STATUS`, else its own ``status``."""
    if isinstance(exc, TableError):
        for cls in type(exc).__mro__:
            if cls in HTTP_STATUS:
                return HTTP_STATUS[cls]
    return exc.status


def error_body(exc: Refusal) -> ErrorJson:
    """``{"error", "error_ru", "status"}`` (plus ``code``) for a refusal, with the status of :func:`status_of`."""
    out: ErrorJson = {"error": exc.en, "error_ru": exc.ru, "status": status_of(exc)}
    if isinstance(exc, TableError) and exc.code:
        out["code"] = exc.code
    return out


def error_response(status: int, en: str, ru: str, **extra: JsonValue) -> JSONResponse:
    """The one error answer: ``{"error": English, "error_ru": Russian, "status": status}``."""
    return JSONResponse({"error": en, "error_ru": ru, "status": status, **extra}, status_code=status)


def validation_error(errors: Sequence[ErrorDetails]) -> Invalid:
    """A request's validation errors as the :class:`Invalid` error REST and the WebSocket both answer (422):
    the first error in plain words (:func:`plain_reason`)."""
    en, ru = plain_reason(errors)
    return Invalid(en, ru)


def install_error_handlers(app: FastAPI, on_storage_error: Callable[[], object]) -> None:
    """Answer every error of ``app`` in the one documented shape; ``on_storage_error`` is called (in a worker
    thread) when the database cannot be written, so every screen shows it."""

    async def _refused(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, TableError | AccessError)
        body = error_body(exc)
        return JSONResponse(body, status_code=status_of(exc))

    for refusal in (TableError, AccessError):  # a control the table or the door refuses: its status and reasons
        app.add_exception_handler(refusal, _refused)

    @app.exception_handler(StoreError)
    async def _store_error(request: Request, exc: StoreError) -> JSONResponse:
        log.error("storage: %s", exc.en)
        await run_in_threadpool(on_storage_error)
        return error_response(exc.status, exc.en, exc.ru)

    @app.exception_handler(sqlite3.Error)
    async def _database_error(request: Request, exc: sqlite3.Error) -> JSONResponse:
        """A read that fails while serving (the file damaged or removed under the running table)."""
        reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        log.error("database error on %s %s: %s", request.method, request.url.path, reason)
        return error_response(503, f"the database cannot be read ({reason}); see docs/setup.md §8",
                              f"базу не удаётся прочитать ({reason}); см. docs/setup.md §8")

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors: Sequence[ErrorDetails] = exc.errors()
        en, ru = plain_reason(errors)  # a sentence for the players; the validator's text stays in detail
        return error_response(422, en, ru, detail=plain_errors(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        ru = {404: "не найдено", 405: "метод не разрешён", 400: "неверный запрос"}.get(exc.status_code, "ошибка запроса")
        en = str(exc.detail) if isinstance(exc.detail, str) else "request error"
        return error_response(exc.status_code, en[:300], ru)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error on %s %s: %s: %s", request.method, request.url.path, type(exc).__name__,
                  str(exc)[:200])
        return error_response(500, *BUG)


#: The answer to a bug, ``(English, Russian)``.
BUG = ("internal error (a bug in kosti; see the log)", "внутренняя ошибка (ошибка kosti; см. журнал)")

#: Request fields in words, ``(English, Russian)``, for the one-line reason of a malformed request.
_FIELDS = {
    "players": ("player names", "имена игроков"), "preset": ("rules", "правила"),
    "overrides": ("rule changes (JSON)", "изменения правил (JSON)"), "faces": ("faces of the dice", "грани костей"),
    "die_index": ("die number", "номер кости"), "value": ("die value", "значение кости"),
    "replace": ("replace", "замена игры"), "thresholds": ("thresholds", "пороги"), "zones": ("zones", "зоны"),
    "source": ("source", "источник"), "live_width": ("live view width", "ширина видео"),
    "jpeg_quality": ("JPEG quality", "качество JPEG"), "limit": ("limit", "предел"), "pin": ("PIN", "PIN"),
    "conf": ("detector confidence", "порог детектора"), "value_conf": ("face confidence", "порог грани"),
    "still_s": ("settle time", "время успокоения"), "dice": ("dice", "кости"), "box": ("box", "рамка"),
    "game": ("game id", "номер игры"),
}


def plain_reason(errors: Sequence[ErrorDetails]) -> tuple[str, str]:
    """The first validation error as a sentence for the players, ``(English, Russian)``: which field and
    what it should be — never the validator's own wording."""
    if not errors:
        return "request: not valid", "запрос: неверное значение"
    e = errors[0]
    loc = [str(x) for x in e["loc"] if x not in ("body", "query", "path")]
    name = next((x for x in reversed(loc) if x in _FIELDS), next((x for x in reversed(loc) if not x.isdecimal()), ""))
    en_f, ru_f = _FIELDS.get(name, (name or "request", name or "запрос"))
    idx = next((int(x) for x in loc if x.isdecimal()), None)
    if idx is not None and name != "game":  # an item of a list (a player of a game, a die of a throw): which one
        en_i, ru_i = ("player", "игрок") if name == "players" else ("die", "кость")
        en_f, ru_f = f"{en_f} ({en_i} {idx + 1})", f"{ru_f} ({ru_i} {idx + 1})"
    typ = e["type"]
    ctx = e.get("ctx") or {}
    if typ == "missing":
        return f"{en_f}: missing", f"{ru_f}: не указано"
    if typ == "extra_forbidden":
        return f"unknown field {name!r}", f"неизвестное поле {name!r}"
    if typ == "too_short" and ctx.get("min_length") == 1 and name in ("players", "faces"):  # an empty list
        return {"players": ("player names: name at least one player", "имена игроков: нужен хотя бы один игрок"),
                "faces": ("faces of the dice: enter at least one die", "грани костей: нужна хотя бы одна кость")}[name]
    if typ.endswith(("too_short", "too_long")):  # a list's length, or a text's (string_too_long)
        short = typ.endswith("too_short")
        n = ctx.get("min_length" if short else "max_length")
        what = ("characters", "символов") if typ.startswith("string") else ("", "")
        return (f"{en_f}: {'at least' if short else 'at most'} {n} {what[0]}".rstrip(),
                f"{ru_f}: {'не меньше' if short else 'не больше'} {n} {what[1]}".rstrip())
    for k, en_w, ru_w in (("ge", "at least", "не меньше"), ("gt", "more than", "больше"),
                          ("le", "at most", "не больше"), ("lt", "less than", "меньше")):
        if k in ctx:
            return f"{en_f}: must be {en_w} {ctx[k]}", f"{ru_f}: должно быть {ru_w} {ctx[k]}"
    if typ == "value_error":  # our own validators (zones): their reason is already a sentence
        msg = str(e["msg"]).removeprefix("Value error, ")
        return f"{en_f}: {msg}", f"{ru_f}: неверно задано ({msg})"
    if typ == "json_invalid":
        return "the request is not valid JSON", "запрос — не JSON"
    if typ.startswith(("int", "float", "bool", "list", "dict", "string", "model")):
        kind = {"int": ("a whole number", "целым числом"), "float": ("a number", "числом"),
                "bool": ("true or false", "true или false"), "list": ("a list", "списком"),
                "dict": ("an object", "объектом JSON {…}"), "string": ("text", "текстом"),
                "model": ("an object", "объектом JSON {…}")}
        en_k, ru_k = kind[next(k for k in kind if typ.startswith(k))]
        return f"{en_f}: must be {en_k}", f"{ru_f}: должно быть {ru_k}"
    return f"{en_f}: not valid", f"{ru_f}: неверное значение"


def plain_errors(errors: Sequence[ErrorDetails]) -> list[JsonValue]:
    """The validator's errors as JSON (``loc``, ``msg``, ``type``), the ``detail`` of a 422."""
    return [{"loc": [str(x) for x in e["loc"]], "msg": str(e["msg"]), "type": str(e["type"])} for e in errors]


__all__ = ["BUG", "HTTP_STATUS", "error_body", "error_response", "install_error_handlers",
           "plain_reason", "status_of", "validation_error"]
