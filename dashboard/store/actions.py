"""Tables ``actions``, ``turns`` and ``corrections``: the action log with undo, the turns it starts and ends, the corrections."""

from __future__ import annotations

import json
import time
from typing import cast

from pydantic import JsonValue

from kosti.dashboard.store.base import (
    ActionRow,
    Database,
    _action,
    _rowid,
)


class ActionsTable(Database):
    """Tables ``actions``, ``turns`` and ``corrections``: the action log with undo, the turns it starts and ends, the corrections: a part of :class:`kosti.dashboard.store.Store`, each write one transaction."""

    def action_for_throw(self, throw_id: int) -> ActionRow | None:
        """The live (not undone) action that applied throw ``throw_id``, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM actions WHERE throw_id = ? AND undone = 0 ORDER BY id DESC LIMIT 1", (throw_id,)
            ).fetchone()
        return _action(row) if row else None

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
