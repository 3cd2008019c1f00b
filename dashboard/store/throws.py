"""Tables ``throws`` and ``throw_images``: every throw the table saw, what became of it, its photo."""

from __future__ import annotations

import json
import sqlite3
import time

from kosti.dashboard.store.base import (
    Database,
    ThrowRow,
    _rowid,
    _throw,
)


class ThrowsTable(Database):
    """Tables ``throws`` and ``throw_images``: every throw the table saw, what became of it, its photo: a part of :class:`kosti.dashboard.store.Store`, each write one transaction."""

    def set_throw_dice(self, throw_id: int, faces: list[int], boxes: list[list[float]], confidences: list[float]) -> None:
        """Replace a throw's dice (faces, boxes, confidences together: a die added or removed by hand)."""
        with self._tx() as c:
            c.execute("UPDATE throws SET faces_json = ?, boxes_json = ?, confidences_json = ? WHERE id = ?",
                      (json.dumps(faces), json.dumps(boxes), json.dumps(confidences), throw_id))

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
