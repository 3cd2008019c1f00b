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

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pydantic import JsonValue

from kosti.dashboard import migrations as schema

#: ``turns.outcome`` of the order or set-up throws that begin some games (Pig's and Aces' order throw, Buck
#: dice's set-up): stored like a turn so that undo and restart work, counted by no one as a turn.
SETUP_OUTCOME = "setup"


class StoreError(RuntimeError):
    """The database cannot be used: ``exit_code`` 2 (one line on stderr; the systemd unit does not restart on
    it), ``status`` the HTTP status when it happens while serving (503). The message names the file and what to do."""

    exit_code = 2
    status = 503

    def __init__(self, en: str, ru: str | None = None) -> None:
        super().__init__(en)
        self.en, self.ru = en, ru or en

    def to_json(self) -> dict[str, JsonValue]:
        """``{"error": English, "error_ru": Russian, "status": HTTP status}``."""
        return {"error": self.en, "error_ru": self.ru, "status": self.status}


class StoreWriteError(StoreError):
    """A write failed (disk full → HTTP 507, read-only file or I/O error → 503); nothing of it was stored."""


def _write_error(path: str, exc: sqlite3.Error) -> StoreWriteError:
    text = str(exc)
    if "full" in text.lower():
        err = StoreWriteError(f"the disk is full: nothing more can be stored in {path}; free space on the disk "
                              "(old frames in the frames folder can go) — the game continues once it is stored again",
                              f"диск заполнен: в {path} больше ничего не записывается; освободите место на диске "
                              "(можно удалить старые снимки) — игра продолжится, как только запись снова пойдёт")
        err.status = 507
        return err
    if _is_read_only(text.lower()):
        return StoreWriteError(f"the database {path} is read-only: make it writable by the user kosti runs as "
                               f"(chown kosti {path}*) — nothing is stored until then",
                               f"база {path} только для чтения: дайте пользователю kosti право записи "
                               f"(chown kosti {path}*) — до тех пор ничего не сохраняется")
    return StoreWriteError(f"cannot write the database {path}: {text}",
                           f"не удаётся записать базу {path}: {text}")


def _is_read_only(message: str) -> bool:
    """SQLite's read-only answers: "attempt to write a readonly database", "read-only file system"."""
    return "readonly" in message.replace("-", "").replace(" ", "")


def _loads(text: str | bytes, where: str) -> JsonValue:
    """``json.loads`` that names the database row when the stored text is not JSON (:class:`StoreError`)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StoreError(f"the database holds broken data in {where} ({_first_line(exc)}); "
                         "move the database file aside and start again (see docs/setup.md)",
                         f"в базе повреждены данные: {where} ({_first_line(exc)}); "
                         "отложите файл базы и запустите снова (см. docs/setup.md)") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]



@dataclass(frozen=True)
class GameRow:
    """One stored game (``games`` row) with its JSON columns decoded.

    ``rules`` is the rules spec ``{"preset": str, "overrides": dict}``; ``state_json`` is the engine
    state exactly as ``GameState.to_json()`` wrote it (decoded by the caller, which owns the engine).
    """

    id: int
    created_at: float
    updated_at: float
    rules: dict[str, JsonValue]
    players: list[str]
    state_json: str
    status: str
    winner: str | None


@dataclass(frozen=True)
class ActionRow:
    """One entry of the action log (``actions`` row)."""

    id: int
    game_id: int
    created_at: float
    kind: str
    payload: dict[str, JsonValue]
    player: str | None
    turn_no: int
    actor: str | None
    state_before_json: str
    state_after_json: str
    events: list[dict[str, JsonValue]]
    throw_id: int | None
    undone: bool


@dataclass(frozen=True)
class ThrowRow:
    """One stored throw (``throws`` row): faces 1–6, confidences 0–1, boxes ``[x1, y1, x2, y2]`` px."""

    id: int
    game_id: int | None
    created_at: float
    turn_no: int | None
    player: str | None
    frame_index: int | None
    time_s: float | None
    faces: list[int]
    confidences: list[float]
    boxes: list[list[float]]
    status: str
    reasons: list[str]
    resolution: str
    source: str | None
    has_image: bool


@dataclass(frozen=True)
class ImportedAction:
    """One action of a game put back from a recorded game (:meth:`Store.import_game`): the fields of
    :meth:`Store.record_action` that a replay gives (``kind`` ``roll`` / ``keep`` / ``bank`` / ``choose``)."""

    kind: str
    payload: dict[str, JsonValue]
    player: str | None
    turn_no: int
    state_before_json: str
    state_after_json: str
    events: list[dict[str, JsonValue]]
    turn_end: dict[str, JsonValue] | None = None
    next_turn: dict[str, JsonValue] | None = None


class Store:
    """The dashboard's SQLite database (see the module docstring for the schema).

    Args:
        path: database file; parent folders are created. ``":memory:"`` gives a private in-memory
            database (tests only: nothing survives the object).

    Raises:
        sqlite3.DatabaseError: the file exists but is not a SQLite database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        #: The latest failed write (disk full, read-only), ``None`` once a write succeeds again.
        self.write_error: StoreWriteError | None = None
        self._lock = threading.RLock()
        try:
            if self.path != ":memory:":
                p = Path(self.path).expanduser()
                self.path = str(p)
                if p.is_dir():
                    raise StoreError(f"database {p} is a folder, not a file: point [storage] db at a file")
                p.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
        except OSError as exc:
            raise StoreError(f"cannot create the database {self.path}: {exc.strerror or exc}; "
                             "check [storage] dir and the folder's owner",
                             f"не удаётся создать базу {self.path}: {exc.strerror or exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database {self.path}: {_first_line(exc)}; check that the file and "
                             "its folder are writable by the user kosti runs as",
                             f"не удаётся открыть базу {self.path}: {_first_line(exc)}") from None
        self._conn.row_factory = sqlite3.Row
        try:
            with self._lock:
                self._open_checked()
        except StoreError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._open_error(exc) from None

    def _open_error(self, exc: sqlite3.Error) -> StoreError:
        """The :class:`StoreError` for a database that fails while opening: corrupt, not SQLite, read-only."""
        text = _first_line(exc)
        low = text.lower()
        if _is_read_only(low) or "unable to open" in low:
            return StoreError(f"the database {self.path} cannot be written ({text}): make the file and its folder "
                              f"writable by the user kosti runs as (chown -R kosti {Path(self.path).parent})",
                              f"в базу {self.path} нельзя писать ({text}): дайте пользователю kosti право записи "
                              f"(chown -R kosti {Path(self.path).parent})")
        return StoreError(f"the database {self.path} is damaged ({text}): move it aside "
                          f"(mv {self.path} {self.path}.broken) and start again with a new one",
                          f"база {self.path} повреждена ({text}): переименуйте её "
                          f"(mv {self.path} {self.path}.broken) и запустите снова с новой базой")

    def _open_checked(self) -> None:
        """Pragmas, schema, integrity check, migrations, and every game's JSON (raises on any fault)."""
        c = self._conn
        c.execute("PRAGMA journal_mode=WAL")
        # FULL: a committed transaction survives power loss too, not only a killed process.
        c.execute("PRAGMA synchronous=FULL")
        c.execute("PRAGMA foreign_keys=ON")
        problems = [r[0] for r in c.execute("PRAGMA quick_check(3)").fetchall()]
        if problems != ["ok"]:
            raise self._open_error(sqlite3.DatabaseError("; ".join(map(str, problems))))
        c.executescript(schema.SCHEMA_V1)
        c.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1')")  # a new file: version 1
        self._migrate(schema.MIGRATIONS)
        for r in c.execute("SELECT id, rules_json, players_json, state_json FROM games WHERE status = 'active'"):
            for col in ("rules_json", "players_json", "state_json"):
                _loads(r[col], f"games row {r['id']} column {col}")

    def _migrate(self, migrations: tuple[schema.Migration, ...]) -> None:
        """Read ``meta.schema_version`` and run each later migration in order, each in one transaction with
        its version update (:mod:`kosti.dashboard.migrations`); a newer database than this code knows, or a
        failed migration, raises :class:`StoreError` (the failed step changed nothing)."""
        raw = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        try:
            version = int(raw)
        except (TypeError, ValueError):
            raise self._open_error(sqlite3.DatabaseError(f"schema version {raw!r} is not a number")) from None
        latest = schema.latest_version(migrations)
        if version > latest:
            raise StoreError(f"the database {self.path} was written by a newer kosti (schema {version}, this one "
                             f"knows {latest}): update kosti, or move the file aside",
                             f"база {self.path} записана более новой версией kosti (схема {version}): обновите kosti")
        for step in migrations:
            if step.version <= version:
                continue
            if step.version != version + 1:
                raise self._open_error(sqlite3.DatabaseError(f"no migration from schema {version}"))
            try:
                with self._tx() as tx:
                    step.run(tx)
                    tx.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(step.version),))
            except (StoreError, sqlite3.Error) as exc:
                raise StoreError(f"updating the database {self.path} from schema {version} ({step.name}) failed "
                                 f"({_first_line(exc)}); the file is unchanged: keep it, and move it aside to start "
                                 "with a new one",
                                 f"не удалось обновить базу {self.path} со схемы {version} ({_first_line(exc)}); "
                                 "файл не изменён: сохраните его и отложите, чтобы начать с новой базой") from None
            version = step.version

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE … COMMIT, ROLLBACK on any exception). A failed write
        (disk full, read-only, I/O) raises :class:`StoreWriteError` and is kept in :attr:`write_error`."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
                if isinstance(exc, sqlite3.IntegrityError):
                    raise
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                self.write_error = _write_error(self.path, exc)
                raise self.write_error from exc
            self.write_error = None

    @contextmanager
    def consistent(self) -> Iterator[None]:
        """Several reads as one view: no write lands between them (every write takes the same lock). Without it a
        view that reads the throws, then the actions, could show a throw pending beside the roll that applied it."""
        with self._lock:
            yield

    def close(self) -> None:
        """Close the connection (idempotent). Committed data is already on disk."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.ProgrammingError:
                pass

    # ------------------------------------------------------------------ games
    def create_game(
        self,
        rules: dict[str, JsonValue],
        players: list[str],
        state_json: str,
        first_turn: tuple[str, int] | None = None,
        abandon: int | None = None,
    ) -> int:
        """Store a new active game; returns its id. One transaction that also opens turn 1 for
        ``first_turn = (player, score_before)`` and marks game ``abandon`` (the unfinished previous one)."""
        now = time.time()
        with self._tx() as c:
            if abandon is not None:
                c.execute("UPDATE games SET status = 'abandoned', updated_at = ? WHERE id = ? AND status = 'active'",
                          (now, abandon))
            cur = c.execute(
                "INSERT INTO games(created_at, updated_at, rules_json, players_json, state_json, status)"
                " VALUES (?, ?, ?, ?, ?, 'active')",
                (now, now, json.dumps(rules, ensure_ascii=False), json.dumps(players, ensure_ascii=False), state_json),
            )
            gid = _rowid(cur)
            if first_turn is not None:
                self._start_turn(c, gid, 1, first_turn[0], first_turn[1], now)
            return gid

    def get_game(self, game_id: int) -> GameRow | None:
        """The game with this id, or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        return _game(row) if row else None

    def latest_active_game(self) -> GameRow | None:
        """The most recently updated game whose status is ``active`` (the one to resume), or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM games WHERE status = 'active' ORDER BY updated_at DESC, id DESC LIMIT 1"
            ).fetchone()
        return _game(row) if row else None

    def list_games(self, limit: int = 50) -> list[GameRow]:
        """The latest ``limit`` games, newest first."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM games ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [_game(r) for r in rows]

    def activate_game(self, game_id: int) -> None:
        """Make game ``game_id`` the one on the table: it becomes ``active`` and every other active game
        ``abandoned`` (put aside, resumable) — one transaction."""
        now = time.time()
        with self._tx() as c:
            c.execute("UPDATE games SET status = 'abandoned', updated_at = ? WHERE status = 'active' AND id != ?",
                      (now, game_id))
            c.execute("UPDATE games SET status = 'active', updated_at = ? WHERE id = ?", (now, game_id))

    def turn_count(self, game_id: int) -> int:
        """How many turns game ``game_id`` has begun (its order or set-up throws, outcome
        :data:`SETUP_OUTCOME`, are no one's turn)."""
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM turns WHERE game_id = ? AND outcome IS NOT ?",
                                     (game_id, SETUP_OUTCOME)).fetchone()
        return int(row[0])

    def action_for_throw(self, throw_id: int) -> ActionRow | None:
        """The live (not undone) action that applied throw ``throw_id``, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM actions WHERE throw_id = ? AND undone = 0 ORDER BY id DESC LIMIT 1", (throw_id,)
            ).fetchone()
        return _action(row) if row else None

    def set_throw_dice(self, throw_id: int, faces: list[int], boxes: list[list[float]], confidences: list[float]) -> None:
        """Replace a throw's dice (faces, boxes, confidences together: a die added or removed by hand)."""
        with self._tx() as c:
            c.execute("UPDATE throws SET faces_json = ?, boxes_json = ?, confidences_json = ? WHERE id = ?",
                      (json.dumps(faces), json.dumps(boxes), json.dumps(confidences), throw_id))

    # ------------------------------------------------------------------ actions
    def record_action(
        self,
        game_id: int,
        kind: str,
        payload: dict[str, JsonValue],
        *,
        player: str | None,
        turn_no: int,
        state_before_json: str,
        state_after_json: str,
        events: list[dict[str, JsonValue]],
        actor: str | None = None,
        throw_id: int | None = None,
        throw_resolution: str | None = None,
        turn_end: dict[str, JsonValue] | None = None,
        next_turn: dict[str, JsonValue] | None = None,
        status: str = "active",
        winner: str | None = None,
        supersedes: int | None = None,
    ) -> int:
        """Append one action and move the game to ``state_after_json`` — all in one transaction.

        Args:
            turn_end: when the action ended the turn ``turn_no``: ``{"score_after": int, "outcome": str}``.
            next_turn: when a new turn starts: ``{"turn_no": int, "player": str, "score_before": int}``.
            throw_resolution: new ``resolution`` of ``throw_id`` (e.g. ``applied``).
            status, winner: the game's status after the action (``finished`` when someone won).
            supersedes: id of an action this one replaces (a corrected roll): it is marked undone in the
                same transaction.

        Returns:
            The action id.
        """
        now = time.time()
        with self._tx() as c:
            if supersedes is not None:
                c.execute("UPDATE actions SET undone = 1 WHERE id = ?", (supersedes,))
                # The replaced action's turn bookkeeping goes too: later turns, and the end of this one.
                c.execute("DELETE FROM turns WHERE game_id = ? AND turn_no > ?", (game_id, turn_no))
                c.execute(
                    "UPDATE turns SET ended_at = NULL, score_after = NULL, outcome = NULL"
                    " WHERE game_id = ? AND turn_no = ?",
                    (game_id, turn_no),
                )
            cur = c.execute(
                "INSERT INTO actions(game_id, created_at, kind, payload_json, player, turn_no, actor,"
                " state_before_json, state_after_json, events_json, throw_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    game_id, now, kind, json.dumps(payload, ensure_ascii=False), player, turn_no, actor,
                    state_before_json, state_after_json, json.dumps(events, ensure_ascii=False), throw_id,
                ),
            )
            action_id = _rowid(cur)
            c.execute(
                "UPDATE games SET state_json = ?, updated_at = ?, status = ?, winner = ? WHERE id = ?",
                (state_after_json, now, status, winner, game_id),
            )
            if throw_id is not None and throw_resolution is not None:
                c.execute("UPDATE throws SET resolution = ? WHERE id = ?", (throw_resolution, throw_id))
            if turn_end is not None:
                c.execute(
                    "UPDATE turns SET ended_at = ?, score_after = ?, outcome = ? WHERE game_id = ? AND turn_no = ?",
                    (now, turn_end.get("score_after"), turn_end.get("outcome"), game_id, turn_no),
                )
            if next_turn is not None:
                self._start_turn(c, game_id, cast(int, next_turn["turn_no"]), cast(str, next_turn["player"]),
                                 cast("int | None", next_turn.get("score_before")), now)
            return action_id

    @staticmethod
    def _start_turn(c: sqlite3.Connection, game_id: int, turn_no: int, player: str, score_before: int | None, now: float) -> None:
        c.execute(
            "INSERT INTO turns(game_id, turn_no, player, started_at, score_before) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(game_id, turn_no) DO UPDATE SET player = excluded.player, started_at = excluded.started_at,"
            " score_before = excluded.score_before, ended_at = NULL, score_after = NULL, outcome = NULL",
            (game_id, turn_no, player, now, score_before),
        )

    def last_live_action(self, game_id: int) -> ActionRow | None:
        """The latest action of the game that has not been undone, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM actions WHERE game_id = ? AND undone = 0 ORDER BY id DESC LIMIT 1", (game_id,)
            ).fetchone()
        return _action(row) if row else None

    def undo_last(self, game_id: int) -> ActionRow | None:
        """Undo the latest live action: mark it undone and restore its ``state_before`` as the game's state.

        Turns that the action opened are removed, the turn it ended is re-opened, and a throw it applied
        goes back to ``undone`` resolution. Returns the undone action (``None`` if there is nothing to
        undo). One transaction.
        """
        with self._tx() as c:
            row = c.execute(
                "SELECT * FROM actions WHERE game_id = ? AND undone = 0 ORDER BY id DESC LIMIT 1", (game_id,)
            ).fetchone()
            if row is None:
                return None
            act = _action(row)
            c.execute("UPDATE actions SET undone = 1 WHERE id = ?", (act.id,))
            c.execute(
                "UPDATE games SET state_json = ?, updated_at = ?, status = 'active', winner = NULL WHERE id = ?",
                (act.state_before_json, time.time(), game_id),
            )
            c.execute("DELETE FROM turns WHERE game_id = ? AND turn_no > ?", (game_id, act.turn_no))
            c.execute(
                "UPDATE turns SET ended_at = NULL, score_after = NULL, outcome = NULL WHERE game_id = ? AND turn_no = ?",
                (game_id, act.turn_no),
            )
            if act.throw_id is not None:
                c.execute("UPDATE throws SET resolution = 'undone' WHERE id = ?", (act.throw_id,))
            return act

    def actions(self, game_id: int, include_undone: bool = False) -> list[ActionRow]:
        """The game's action log, oldest first."""
        q = "SELECT * FROM actions WHERE game_id = ?" + ("" if include_undone else " AND undone = 0") + " ORDER BY id"
        with self._lock:
            rows = self._conn.execute(q, (game_id,)).fetchall()
        return [_action(r) for r in rows]

    def turns(self, game_id: int) -> list[dict[str, JsonValue]]:
        """The game's turns, oldest first, as plain dicts (columns of ``turns``)."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM turns WHERE game_id = ? ORDER BY turn_no", (game_id,)).fetchall()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------------ throws
    def add_throw(
        self,
        *,
        game_id: int | None,
        turn_no: int | None,
        player: str | None,
        faces: list[int],
        confidences: list[float],
        boxes: list[list[float]],
        status: str,
        reasons: list[str],
        frame_index: int | None = None,
        time_s: float | None = None,
        resolution: str = "pending",
        source: str | None = None,
        jpeg: bytes | None = None,
        thumb: bytes | None = None,
    ) -> int:
        """Store a throw (and its settled frame as JPEG + thumbnail when given); returns its id."""
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO throws(game_id, created_at, turn_no, player, frame_index, time_s, faces_json,"
                " confidences_json, boxes_json, status, reasons_json, resolution, source)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    game_id, time.time(), turn_no, player, frame_index, time_s, json.dumps(faces),
                    json.dumps(confidences), json.dumps(boxes), status, json.dumps(reasons, ensure_ascii=False),
                    resolution, source,
                ),
            )
            tid = _rowid(cur)
            if jpeg is not None:
                c.execute(
                    "INSERT INTO throw_images(throw_id, jpeg, thumb) VALUES (?, ?, ?)",
                    (tid, sqlite3.Binary(jpeg), sqlite3.Binary(thumb if thumb is not None else jpeg)),
                )
            return tid

    def get_throw(self, throw_id: int) -> ThrowRow | None:
        """The throw with this id, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM throw_images i WHERE i.throw_id = t.id) AS has_image"
                " FROM throws t WHERE t.id = ?",
                (throw_id,),
            ).fetchone()
        return _throw(row) if row else None

    def throws(self, game_id: int) -> list[ThrowRow]:
        """The game's throws, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM throw_images i WHERE i.throw_id = t.id) AS has_image"
                " FROM throws t WHERE t.game_id = ? ORDER BY t.id",
                (game_id,),
            ).fetchall()
        return [_throw(r) for r in rows]

    def pending_throw(self, game_id: int) -> ThrowRow | None:
        """The game's latest throw still awaiting confirmation (``resolution = 'pending'``), or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM throw_images i WHERE i.throw_id = t.id) AS has_image"
                " FROM throws t WHERE t.game_id = ? AND t.resolution = 'pending' ORDER BY t.id DESC LIMIT 1",
                (game_id,),
            ).fetchone()
        return _throw(row) if row else None

    def set_throw_resolution(self, throw_id: int, resolution: str) -> None:
        """Set what became of a throw: ``pending`` / ``applied`` / ``corrected`` / ``superseded`` / ``discarded`` / ``undone`` / ``rejected``."""
        with self._tx() as c:
            c.execute("UPDATE throws SET resolution = ? WHERE id = ?", (resolution, throw_id))

    def resolve_pending(self, game_id: int, resolution: str) -> int:
        """Give every pending throw of the game a final ``resolution``; returns how many changed."""
        with self._tx() as c:
            cur = c.execute(
                "UPDATE throws SET resolution = ? WHERE game_id = ? AND resolution = 'pending'", (resolution, game_id)
            )
            return cur.rowcount

    def update_throw_faces(self, throw_id: int, faces: list[int]) -> None:
        """Replace a throw's faces (after a correction; the old values stay in ``corrections``)."""
        with self._tx() as c:
            c.execute("UPDATE throws SET faces_json = ? WHERE id = ?", (json.dumps(faces), throw_id))

    def throw_image(self, throw_id: int, thumbnail: bool = False) -> bytes | None:
        """The settled frame of a throw as JPEG bytes (or its thumbnail), or ``None``."""
        col = "thumb" if thumbnail else "jpeg"
        with self._lock:
            row = self._conn.execute(f"SELECT {col} FROM throw_images WHERE throw_id = ?", (throw_id,)).fetchone()
        return bytes(row[0]) if row else None

    # ------------------------------------------------------------------ corrections
    def add_correction(
        self, throw_id: int, game_id: int | None, die_index: int, old_value: int | None, new_value: int, actor: str | None
    ) -> int:
        """Record that ``actor`` changed die ``die_index`` of a throw from ``old_value`` to ``new_value``."""
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO corrections(throw_id, game_id, created_at, die_index, old_value, new_value, actor)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (throw_id, game_id, time.time(), die_index, old_value, new_value, actor),
            )
            return _rowid(cur)

    def corrections(self, game_id: int) -> list[dict[str, JsonValue]]:
        """The game's corrections, oldest first, as plain dicts."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM corrections WHERE game_id = ? ORDER BY id", (game_id,)).fetchall()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------------ settings
    def get_settings(self) -> dict[str, JsonValue]:
        """Every stored setting, decoded."""
        with self._lock:
            rows = self._conn.execute("SELECT key, value_json FROM settings").fetchall()
        out = {}
        for r in rows:  # a broken row is skipped (settings have defaults), never a crash at start
            try:
                out[r["key"]] = json.loads(r["value_json"])
            except (TypeError, ValueError, RecursionError):
                import logging

                logging.getLogger(__name__).warning("stored setting %r is not JSON; ignored", r["key"])
        return out

    def put_settings(self, values: dict[str, JsonValue]) -> None:
        """Store (insert or replace) the given settings in one transaction."""
        with self._tx() as c:
            for k, v in values.items():
                c.execute(
                    "INSERT INTO settings(key, value_json) VALUES (?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json",
                    (k, json.dumps(v, ensure_ascii=False)),
                )

    # ------------------------------------------------------------------ import
    def import_game(self, rules: dict[str, JsonValue], players: list[str], state_json: str,
                    first_turn: tuple[str, int], actions: list[ImportedAction], status: str,
                    winner: str | None) -> int:
        """Store a whole recorded game in one transaction (``kosti games import``,
        :func:`kosti.dashboard.export.import_game`): the games row with its initial state ``state_json``, turn 1
        for ``first_turn = (player, score_before)``, every action in order with its turn bookkeeping (as
        :meth:`record_action` does it), then ``status`` (``finished`` / ``abandoned``) and ``winner``. A failure
        leaves the database as it was. Returns the new game's id."""
        if status not in ("finished", "abandoned", "active"):
            raise ValueError(f"status {status!r}")
        now = time.time()
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO games(created_at, updated_at, rules_json, players_json, state_json, status, winner)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (now, now, json.dumps(rules, ensure_ascii=False), json.dumps(players, ensure_ascii=False),
                 actions[-1].state_after_json if actions else state_json, status, winner),
            )
            gid = _rowid(cur)
            self._start_turn(c, gid, 1, first_turn[0], first_turn[1], now)
            for a in actions:
                c.execute(
                    "INSERT INTO actions(game_id, created_at, kind, payload_json, player, turn_no, actor,"
                    " state_before_json, state_after_json, events_json, throw_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, 'import', ?, ?, ?, NULL)",
                    (gid, now, a.kind, json.dumps(a.payload, ensure_ascii=False), a.player, a.turn_no,
                     a.state_before_json, a.state_after_json, json.dumps(a.events, ensure_ascii=False)),
                )
                if a.turn_end is not None:
                    c.execute("UPDATE turns SET ended_at = ?, score_after = ?, outcome = ? WHERE game_id = ? AND turn_no = ?",
                              (now, a.turn_end.get("score_after"), a.turn_end.get("outcome"), gid, a.turn_no))
                if a.next_turn is not None:
                    self._start_turn(c, gid, cast(int, a.next_turn["turn_no"]), cast(str, a.next_turn["player"]),
                                     cast("int | None", a.next_turn.get("score_before")), now)
            return gid



def _rowid(cur: sqlite3.Cursor) -> int:
    """The id of the row ``cur`` just inserted."""
    assert cur.lastrowid is not None, "INSERT without a row id"
    return cur.lastrowid


def _json(r: sqlite3.Row, table: str, column: str) -> JsonValue:
    """Column ``column`` of row ``r`` of ``table`` decoded (:func:`_loads`: a broken one names the row)."""
    return _loads(r[column], f"{table} row {r['id']} column {column}")


def _game(r: sqlite3.Row) -> GameRow:
    # The JSON columns hold what this module wrote (cast: checked when written, not again on every read).
    return GameRow(
        id=r["id"], created_at=r["created_at"], updated_at=r["updated_at"],
        rules=cast("dict[str, JsonValue]", _json(r, "games", "rules_json")),
        players=cast("list[str]", _json(r, "games", "players_json")), state_json=r["state_json"],
        status=r["status"], winner=r["winner"],
    )


def _action(r: sqlite3.Row) -> ActionRow:
    return ActionRow(
        id=r["id"], game_id=r["game_id"], created_at=r["created_at"], kind=r["kind"],
        payload=cast("dict[str, JsonValue]", _json(r, "actions", "payload_json")), player=r["player"],
        turn_no=r["turn_no"], actor=r["actor"], state_before_json=r["state_before_json"],
        state_after_json=r["state_after_json"], events=cast("list[dict[str, JsonValue]]", _json(r, "actions", "events_json")),
        throw_id=r["throw_id"], undone=bool(r["undone"]),
    )


def _throw(r: sqlite3.Row) -> ThrowRow:
    return ThrowRow(
        id=r["id"], game_id=r["game_id"], created_at=r["created_at"], turn_no=r["turn_no"], player=r["player"],
        frame_index=r["frame_index"], time_s=r["time_s"], faces=cast("list[int]", _json(r, "throws", "faces_json")),
        confidences=cast("list[float]", _json(r, "throws", "confidences_json")),
        boxes=cast("list[list[float]]", _json(r, "throws", "boxes_json")), status=r["status"],
        reasons=cast("list[str]", _json(r, "throws", "reasons_json")), resolution=r["resolution"],
        source=r["source"], has_image=bool(r["has_image"]),
    )
