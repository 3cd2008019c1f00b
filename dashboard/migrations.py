"""Numbered migrations of the dashboard's SQLite database, run in order when the store opens.

A database records its schema version in ``meta.schema_version``. :data:`SCHEMA_V1` is the first schema
(the tables of :mod:`kosti.dashboard.store`, as every database before numbered migrations was created);
it never changes. Each :class:`Migration` brings a database from ``version - 1`` to ``version`` inside one
transaction (with the version update), so a failed migration leaves the file as it was before it. A new
database is created at version 1 and migrated like an old one: every database at a given version has the
same schema and data rules, however it got there. To change the schema or stored data, append a migration
— never edit one that has shipped.

Versions:

1. the schema :data:`SCHEMA_V1`;
2. the reader thresholds an earlier version stored as its defaults are dropped from the ``thresholds``
   setting (:data:`OLD_DEFAULT_THRESHOLDS`; was done by the table at every start), so the table reads at
   the shipped model's own operating point;
3. the same for reader v1.1's pair (:data:`V11_DEFAULT_THRESHOLDS`), which the table stored from a
   ``kosti.toml`` that v1.1's ``kosti config init`` wrote.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF

SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    rules_json TEXT NOT NULL,
    players_json TEXT NOT NULL,
    state_json TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'finished', 'abandoned')),
    winner TEXT
);
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL REFERENCES games(id),
    created_at REAL NOT NULL,
    kind TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    player TEXT,
    turn_no INTEGER NOT NULL,
    actor TEXT,
    state_before_json TEXT NOT NULL,
    state_after_json TEXT NOT NULL,
    events_json TEXT NOT NULL,
    throw_id INTEGER REFERENCES throws(id),
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS actions_game ON actions(game_id, id);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL REFERENCES games(id),
    turn_no INTEGER NOT NULL,
    player TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    score_before INTEGER,
    score_after INTEGER,
    outcome TEXT,
    UNIQUE (game_id, turn_no)
);
CREATE TABLE IF NOT EXISTS throws (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER REFERENCES games(id),
    created_at REAL NOT NULL,
    turn_no INTEGER,
    player TEXT,
    frame_index INTEGER,
    time_s REAL,
    faces_json TEXT NOT NULL,
    confidences_json TEXT NOT NULL,
    boxes_json TEXT NOT NULL,
    status TEXT NOT NULL,
    reasons_json TEXT NOT NULL,
    resolution TEXT NOT NULL DEFAULT 'pending',
    source TEXT
);
CREATE INDEX IF NOT EXISTS throws_game ON throws(game_id, id);
CREATE TABLE IF NOT EXISTS throw_images (
    throw_id INTEGER PRIMARY KEY REFERENCES throws(id),
    jpeg BLOB NOT NULL,
    thumb BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    throw_id INTEGER NOT NULL REFERENCES throws(id),
    game_id INTEGER,
    created_at REAL NOT NULL,
    die_index INTEGER NOT NULL,
    old_value INTEGER,
    new_value INTEGER NOT NULL,
    actor TEXT
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value_json TEXT NOT NULL);
"""

#: Reader thresholds that were the defaults of earlier versions: the dashboard's own before it took the
#: shipped operating point (conf 0.25, value_conf 0.6), and reader v0.3's shipped operating point (0.5 / 0.4),
#: which the settings form sent back with every Save (since reader v1.0 it sends only what was changed; the
#: thresholds a ``kosti.toml`` sets are stored too, see :data:`V11_DEFAULT_THRESHOLDS`). A database holding exactly one of these pairs holds an old
#: default, not a choice. Written out, not derived from :data:`kosti.models.EARLIER_OPERATING_POINTS`
#: (which grew with v1.1): migration 2 has shipped and must not change.
OLD_DEFAULT_THRESHOLDS: tuple[dict[str, float], ...] = (
    {"conf": 0.25, "value_conf": 0.6},
    {"conf": 0.5, "value_conf": 0.4},
)
#: Reader v1.1's operating point (conf 0.45, value_conf 0.7). The settings form sends only what was changed,
#: but the table stores the thresholds its ``kosti.toml`` sets at every start, and v1.1's ``kosti config init``
#: wrote them there; so a table that ran v1.1 holds them unchosen. Written out like the pairs above
#: (migration 3, reader v1.2).
V11_DEFAULT_THRESHOLDS: tuple[dict[str, float], ...] = ({"conf": 0.45, "value_conf": 0.7},)


def statements(script: str) -> list[str]:
    """A migration script split into complete SQL statements (run one by one inside one transaction:
    ``executescript`` would commit on its own)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return [st for st in out if st.rstrip(";").strip()]


@dataclass(frozen=True)
class Migration:
    """One step: brings a database from schema ``version - 1`` to ``version``, by the SQL script ``sql``
    (statements run in order) and then ``apply(connection)`` (a data change SQL cannot say), both inside the
    store's transaction. ``name`` says what it does (shown when it fails)."""

    version: int
    name: str
    sql: str = ""
    apply: Callable[[sqlite3.Connection], None] | None = None

    def run(self, c: sqlite3.Connection) -> None:
        """Run the step on ``c`` (inside a transaction the caller opened); raises ``sqlite3.Error``."""
        for statement in statements(self.sql):
            c.execute(statement)
        if self.apply is not None:
            self.apply(c)


def without_old_default_thresholds(thresholds: dict[str, float],
                                   olds: tuple[dict[str, float], ...] = OLD_DEFAULT_THRESHOLDS) -> dict[str, float]:
    """``thresholds`` without an earlier version's default ``conf``/``value_conf`` pair (both equal to one
    pair of ``olds`` other than today's defaults); other keys (``still_s`` …) stay."""
    for old in olds:
        if (old["conf"], old["value_conf"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF):
            continue  # today's defaults
        if all(thresholds.get(k) == v for k, v in old.items()):
            return {k: v for k, v in thresholds.items() if k not in old}
    return thresholds


def _drop_old_default_thresholds(c: sqlite3.Connection, olds: tuple[dict[str, float], ...] = OLD_DEFAULT_THRESHOLDS) -> None:
    row = c.execute("SELECT value_json FROM settings WHERE key = 'thresholds'").fetchone()
    if row is None:
        return
    try:
        stored = json.loads(row[0])
    except (TypeError, ValueError, RecursionError):
        return  # a broken setting is skipped when read (settings have defaults); nothing to clean
    if not isinstance(stored, dict):
        return
    cleaned = without_old_default_thresholds(stored, olds)
    if cleaned != stored:
        c.execute("UPDATE settings SET value_json = ? WHERE key = 'thresholds'", (json.dumps(cleaned),))


#: Every migration, in order; ``MIGRATIONS[i].version == i + 2`` (version 1 is :data:`SCHEMA_V1`).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "drop the earlier default reader thresholds", apply=_drop_old_default_thresholds),
    Migration(3, "drop reader v1.1's default thresholds",
              apply=lambda c: _drop_old_default_thresholds(c, V11_DEFAULT_THRESHOLDS)),
)


def latest_version(migrations: tuple[Migration, ...]) -> int:
    """The schema version a database has after ``migrations`` (1 without any)."""
    return migrations[-1].version if migrations else 1
