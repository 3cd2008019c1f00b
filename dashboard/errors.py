"""Typed domain errors of the table (the game session, its views and controls).

The game session says *what kind* of refusal it is — the game does not exist (:class:`NotFound`), the rules
or the table's state forbid it now (:class:`Conflict`), the input is malformed (:class:`Invalid`), something
the table needs is not there (:class:`Unavailable`) — with an English and a Russian reason and, where the
page must react, a machine ``code`` (e.g. ``replace_needed``). The web layer maps each class to its HTTP
status in one exception handler (:data:`kosti.dashboard.routes.errors.HTTP_STATUS`); nothing below this
module needs to know HTTP.

:class:`TableError` keeps its earlier constructor ``TableError(status, en, ru=None, code=None)`` so code that
raises it with a status still works; ``status`` then is the status it asked for. A subclass takes no status:
its ``status`` is the class's conventional one (kept on the error for ``to_json()``, whose ``"status"`` field
the dashboard's pages and the WebSocket ``error`` message carry).
"""

from __future__ import annotations

from typing import ClassVar


class TableError(Exception):
    """A control the table cannot carry out: an English reason ``en``, a Russian one ``ru`` (``en`` when not
    given), an optional machine ``code`` and ``status``, the HTTP status it is answered with (404, 409, 422 …).

    Raise a subclass (:class:`NotFound`, :class:`Conflict`, :class:`Invalid`, :class:`Unavailable`) in new
    code; ``TableError(status, …)`` stays for compatibility.
    """

    #: The status a subclass is answered with (the base class takes it from its constructor).
    STATUS: ClassVar[int] = 400

    def __init__(self, status: int, en: str, ru: str | None = None, code: str | None = None) -> None:
        super().__init__(en)
        self.status = status
        self.en = en
        self.ru = ru if ru is not None else en
        self.code = code

    def to_json(self) -> dict[str, str | int]:
        """``{"error": English, "error_ru": Russian, "status": HTTP status}`` (plus ``"code"``, a machine
        name such as ``replace_needed``, when the page must react to this error)."""
        out: dict[str, str | int] = {"error": self.en, "error_ru": self.ru, "status": self.status}
        if self.code:
            out["code"] = self.code
        return out


class _KindError(TableError):
    """A :class:`TableError` whose status comes from its class: ``Kind(en, ru=None, code=None)``."""

    def __init__(self, en: str, ru: str | None = None, code: str | None = None) -> None:
        super().__init__(self.STATUS, en, ru, code)


class NotFound(_KindError):
    """The thing named does not exist: no such game, throw or die (HTTP 404)."""

    STATUS = 404


class Conflict(_KindError):
    """The request is well formed but the game or the table forbids it now: the rules refuse the action,
    a throw waits for confirmation, another game is running (``code="replace_needed"``) … (HTTP 409)."""

    STATUS = 409


class Invalid(_KindError):
    """The input is malformed or out of range: a face outside 1–6, duplicate player names, an unknown
    preset or rule parameter (HTTP 422)."""

    STATUS = 422


class Unavailable(_KindError):
    """Something the table needs is not there now: no camera frame, no reader model, the database cannot
    be used (HTTP 503)."""

    STATUS = 503


__all__ = ["Conflict", "Invalid", "NotFound", "TableError", "Unavailable"]
