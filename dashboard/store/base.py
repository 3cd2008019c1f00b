"""The database under every table of the store: the connection (WAL, ``synchronous=FULL``), the checks when the
file is opened, the migrations, one transaction per write (:meth:`Database._tx`) and the consistent read; the
errors and the row types of :mod:`kosti.dashboard.store`."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
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


class Database:
    """The dashboard's SQLite database: the connection, its checks and its transactions (see :mod:`kosti.dashboard.store`).

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

    @staticmethod
    def _start_turn(c: sqlite3.Connection, game_id: int, turn_no: int, player: str, score_before: int | None, now: float) -> None:
        c.execute(
            "INSERT INTO turns(game_id, turn_no, player, started_at, score_before) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(game_id, turn_no) DO UPDATE SET player = excluded.player, started_at = excluded.started_at,"
            " score_before = excluded.score_before, ended_at = NULL, score_after = NULL, outcome = NULL",
            (game_id, turn_no, player, now, score_before),
        )

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
