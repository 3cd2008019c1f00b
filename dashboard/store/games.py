"""Table ``games`` (and a game's first turn): create, read, list, put back, import a whole game."""

from __future__ import annotations

import json
import time
from typing import cast

from pydantic import JsonValue

from kosti.dashboard.store.base import (
    SETUP_OUTCOME,
    Database,
    GameRow,
    ImportedAction,
    _game,
    _rowid,
)


class GamesTable(Database):
    """Table ``games`` (and a game's first turn): create, read, list, put back, import a whole game: a part of :class:`kosti.dashboard.store.Store`, each write one transaction."""

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

    def turns(self, game_id: int) -> list[dict[str, JsonValue]]:
        """The game's turns, oldest first, as plain dicts (columns of ``turns``)."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM turns WHERE game_id = ? ORDER BY turn_no", (game_id,)).fetchall()
        return [dict(r) for r in rows]

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
