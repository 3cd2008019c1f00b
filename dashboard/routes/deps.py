"""The application objects the routes depend on, as FastAPI dependencies (``Annotated[..., Depends(...)]``).

A route names what it works with — the game (:class:`~kosti.dashboard.session.GameSession`), the camera
(:class:`~kosti.dashboard.wiring.LiveTable`), the settings (:class:`~kosti.dashboard.live_settings.LiveSettings`),
the database (:class:`~kosti.dashboard.store.Store`) or the table that publishes the snapshot
(:class:`~kosti.dashboard.table.TableService`) — and gets the one the app was built around
(``app.state.table``, :func:`kosti.dashboard.app.create_app`). An HTTP request and a WebSocket both resolve them
(:class:`starlette.requests.HTTPConnection`). These dependencies add nothing to the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from kosti.dashboard.live_settings import LiveSettings
from kosti.dashboard.session import GameSession
from kosti.dashboard.store import Store
from kosti.dashboard.table import TableService
from kosti.dashboard.wiring import LiveTable


def table_of(conn: HTTPConnection) -> TableService:
    """The app's table (``app.state.table``)."""
    table: TableService = conn.app.state.table
    return table


def session_of(conn: HTTPConnection) -> GameSession:
    """The game on the app's table."""
    return table_of(conn).session


def live_of(conn: HTTPConnection) -> LiveTable:
    """The camera wiring of the app's table."""
    return table_of(conn).live


def settings_of(conn: HTTPConnection) -> LiveSettings:
    """The settings of the app's table."""
    return table_of(conn).settings


def store_of(conn: HTTPConnection) -> Store:
    """The app's games database."""
    return table_of(conn).store


Table = Annotated[TableService, Depends(table_of)]
Session = Annotated[GameSession, Depends(session_of)]
Live = Annotated[LiveTable, Depends(live_of)]
Settings = Annotated[LiveSettings, Depends(settings_of)]
Db = Annotated[Store, Depends(store_of)]
