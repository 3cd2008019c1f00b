"""SQLite persistence for the live table: games, turns, throws, corrections, the action log, settings.

One file (stdlib :mod:`sqlite3`) in WAL mode with ``synchronous=FULL``: every public write method is one
transaction, committed before it returns, so killing the process at any moment loses nothing that a
caller was told had been stored, and a restart resumes the game in progress from its last stored engine
state (``games.state_json``).

Tables (all timestamps are UNIX seconds, float):

* ``games`` — one row per game: the rules spec (``{"preset": name, "overrides": {...}}``), the player
  names, the engine state JSON after the latest action (``GameState.to_json()``), ``status``
  (``active`` / ``finished`` / ``abandoned``), the winner.
* ``actions`` — the action log: every state-changing action (``roll``, ``keep``, ``bank``, ``fix``) with
  the engine state before and after it and the engine's events. Undo marks the latest live action
  ``undone`` and restores its ``state_before`` — nothing is ever deleted.
* ``turns`` — one row per turn: player, turn number, score before / after, outcome.
* ``throws`` — every throw the table saw for a game: faces, per-die confidences and boxes (pixels of
  the settled frame), status (``ok`` / ``uncertain``), reasons, what became of it (``resolution``) and
  the settled frame as JPEG (``throw_images``; a thumbnail beside it).
* ``corrections`` — who changed which die of which throw from what to what.
* ``settings`` — key → JSON value (source, zones, thresholds).

The schema and its numbered migrations, run in order when the file is opened (``meta.schema_version``),
live in :mod:`kosti.dashboard.migrations`.

Thread safety: one connection guarded by a re-entrant lock; every method may be called from any thread.

Faults: opening checks the file (SQLite header, ``PRAGMA quick_check``, the schema version, every game's
JSON) and raises :class:`StoreError` (exit code 2: the CLI prints one line and systemd does not restart)
naming the file and what to do. A write that fails at run time (disk full, read-only file, I/O error)
raises :class:`StoreWriteError` (HTTP 507 / 503) and is kept in :attr:`Store.write_error` until a write
succeeds again, so the dashboard can say so; a JSON column that does not decode raises :class:`StoreError`
naming the table, row and column.
"""

from __future__ import annotations

from kosti.dashboard.store.actions import ActionsTable
from kosti.dashboard.store.base import (
    SETUP_OUTCOME,
    ActionRow,
    Database,
    GameRow,
    ImportedAction,
    StoreError,
    StoreWriteError,
    ThrowRow,
    _write_error,
)
from kosti.dashboard.store.games import GamesTable
from kosti.dashboard.store.settings import SettingsTable
from kosti.dashboard.store.throws import ThrowsTable

__all__ = ["SETUP_OUTCOME", "ActionRow", "Database", "GameRow", "ImportedAction", "Store", "StoreError", "StoreWriteError",
           "ThrowRow", "_write_error"]


class Store(GamesTable, ActionsTable, ThrowsTable, SettingsTable):
    """The dashboard's SQLite database (see the module docstring for the schema).

    Args:
        path: database file; parent folders are created. ``":memory:"`` gives a private in-memory
            database (tests only: nothing survives the object).

    Raises:
        sqlite3.DatabaseError: the file exists but is not a SQLite database.

    One class per table (games, actions, throws, settings: :mod:`.games`, :mod:`.actions`, :mod:`.throws`,
    :mod:`.settings`) over one :class:`~.base.Database` — one connection, one lock, one transaction per write.
    """
