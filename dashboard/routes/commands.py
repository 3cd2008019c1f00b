"""The one command table: each game control's name, body model and handler, served by REST and the WebSocket.

``POST /api/games/{id}/<name>`` (:mod:`.games`) and the WebSocket message ``{"cmd": "<name>", "game_id": id,
...fields}`` (:mod:`.ws`) both validate the body with the command's model (:mod:`kosti.dashboard.schemas`)
and call the same handler on the game (:class:`~kosti.dashboard.session.GameSession`) and the camera
(:class:`~kosti.dashboard.wiring.LiveTable`), run by :meth:`kosti.dashboard.table.TableService.act`; a malformed WebSocket
message is refused with the same one-line reason REST gives (:func:`kosti.dashboard.routes.errors.plain_reason`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from kosti.dashboard.errors import Invalid, TableError
from kosti.dashboard.routes.errors import validation_error
from kosti.dashboard.schemas import (
    ChooseBody,
    ConfirmBody,
    DieBody,
    EnterBody,
    FixBody,
    KeepBody,
    Snapshot,
    ThrowBody,
    ThrowRequested,
    WsCommand,
)
from kosti.dashboard.session import GameSession
from kosti.dashboard.wiring import LiveTable

B = TypeVar("B", bound=BaseModel)
#: Largest WebSocket command (bytes of text).
MAX_WS_MESSAGE = 8 * 1024
#: What a route answers: the table's JSON view (a snapshot, or what the virtual table was asked), checked
#: against the command's response model by the route (read-only here, so any JSON-valued mapping fits).
Result = Mapping[str, object]
#: ``handler(session, live, actor, game_id, body)``: does the control (the session announces the change) and
#: returns ``None`` — the route answers the new snapshot — or an answer of its own; ``body`` is ``None`` for a
#: command without fields and, on REST, for an optional body that was not sent.
Handler = Callable[[GameSession, LiveTable, str, "int | None", "BaseModel | None"], "Result | None"]


@dataclass(frozen=True)
class Command:
    """A game control: ``name`` (the REST path's last part and the WebSocket ``cmd``), the ``body`` model of its
    fields (``None``: no fields), whether REST may leave the body out (``body_optional``), the OpenAPI
    ``summary``, the ``response`` model and the ``handler``."""

    name: str
    body: type[BaseModel] | None
    handler: Handler
    summary: str
    body_optional: bool = False
    response: type[BaseModel] = Snapshot


def _body(body: BaseModel | None, model: type[B]) -> B | None:
    """``body`` as ``model`` (``None`` when absent); the table guarantees the type, this makes it checked."""
    if body is None:
        return None
    if not isinstance(body, model):
        raise TypeError(f"{type(body).__name__} is not a {model.__name__}")
    return body


def _needed(body: BaseModel | None, model: type[B]) -> B:
    b = _body(body, model)
    if b is None:
        raise Invalid("body: missing", "тело запроса: не указано")
    return b


def _bank(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.bank(gid, actor=actor)


def _keep(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.keep(list(_needed(body, KeepBody).faces), gid, actor=actor)


def _choose(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    b = _needed(body, ChooseBody)
    s.choose(b.key, b.value, gid, actor=actor)


def _fix(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    b = _needed(body, FixBody)
    s.fix(b.die_index, b.value, gid, actor=actor)


def _confirm(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    b = _body(body, ConfirmBody)
    s.confirm(b.faces if b else None, gid, actor=actor)


def _discard(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.discard(gid, actor=actor)


def _enter(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.enter(list(_needed(body, EnterBody).faces), gid, actor=actor)


def _remove(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.remove_die(_needed(body, DieBody).die_index, gid, actor=actor)


def _undo(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> None:
    s.undo(gid, actor=actor)


def _throw(s: GameSession, live: LiveTable, actor: str, gid: int | None, body: BaseModel | None) -> Result:
    """Ask the virtual table to throw ``state.dice_to_throw`` dice (or exactly ``faces``): Conflict without a
    game or a throw due, or with a real camera (checked in that order); Invalid for faces the state refuses."""
    b = _body(body, ThrowBody)
    faces = b.faces if b else None
    s.require(gid)  # no game / game over first
    live.virtual_source()  # then: a real camera cannot be asked to throw
    st = s.throw_due(gid, faces)
    live.throw_virtual(st.dice_to_throw, faces)
    return {"requested": st.dice_to_throw, "faces": list(faces) if faces is not None else None}


#: Every game control, in the order the API reference lists them.
COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("enter", EnterBody, _enter, "Score a throw entered by hand (any source)"),
    Command("remove", DieBody, _remove, "Remove a die from the pending throw (not thrown)"),
    Command("bank", None, _bank, "Stop (хватит) and record the turn points"),
    Command("keep", KeepBody, _keep, "Set aside these scoring dice (presets with a choice)"),
    Command("choose", ChooseBody, _choose, "A game's own choice (claim, bet, operation …)"),
    Command("fix", FixBody, _fix, "Correct one die of the pending or latest throw"),
    Command("confirm", ConfirmBody, _confirm, "Confirm the pending (uncertain) throw", body_optional=True),
    Command("discard", None, _discard, "Drop the pending throw (throw again)"),
    Command("undo", None, _undo, "Undo the latest action"),
    Command("throw", ThrowBody, _throw, "Virtual table: throw the dice", body_optional=True,
            response=ThrowRequested),
)}


def parse_ws_command(text: str) -> tuple[WsCommand, Command, BaseModel | None]:
    """A WebSocket message → (envelope, command, body validated with the command's model).

    Raises :class:`TableError` 413 for a message over :data:`MAX_WS_MESSAGE` bytes and :class:`Invalid` (422)
    for malformed JSON, an unknown command or a body REST would refuse (the same one-line reason)."""
    if len(text) > MAX_WS_MESSAGE:
        raise TableError(413, f"command too large (limit {MAX_WS_MESSAGE} bytes)",
                         f"слишком большая команда (предел {MAX_WS_MESSAGE} байт)")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise Invalid("malformed JSON", "неверный JSON") from None
    if not isinstance(data, dict) or data.get("cmd") not in COMMANDS:
        raise Invalid(f"unknown command; use one of {sorted(COMMANDS)}",
                      f"неизвестная команда; допустимы: {', '.join(sorted(COMMANDS))}")
    try:
        env = WsCommand.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc.errors()) from None
    command = COMMANDS[env.cmd]
    fields = {k: v for k, v in data.items() if k not in ("cmd", "game_id", "pin")}
    if command.body is None:
        if fields:
            name = next(iter(fields))
            raise Invalid(f"unknown field {name!r}", f"неизвестное поле {name!r}")
        return env, command, None
    try:
        return env, command, command.body.model_validate(fields)
    except ValidationError as exc:
        raise validation_error(exc.errors()) from None
