"""The live table: one game on one table, fed by the camera, shown on every phone.

:class:`TableService` joins the application objects the web layer depends on (each a FastAPI dependency of the
routes, :mod:`kosti.dashboard.routes.deps`) and publishes what the table shows:

* :class:`kosti.dashboard.session.GameSession` (``table.session``) — the game, its store and the pending-throw
  policy (the one place where a throw is accepted, held for confirmation or refused); every change it makes is
  announced (:attr:`GameSession.change_listeners`), and the table publishes a new snapshot;
* :class:`kosti.dashboard.wiring.LiveTable` (``table.live``) — the source feeding vision's one camera runner
  (:class:`kosti.vision.runner.LivePipeline`), whose throws come here (:meth:`TableService.submit_throw`), and
  the live view;
* :class:`kosti.dashboard.live_settings.LiveSettings` (``table.settings``) — the stored settings applied to the
  camera;
* :mod:`kosti.dashboard.views` (the game view-model) and :mod:`kosti.dashboard.broadcast` (fan-out to viewers
  and WebSockets).

The controls are the session's methods; each raises a typed :class:`~kosti.dashboard.errors.TableError` with an
English and a Russian reason, and on success the snapshot (:meth:`TableService.snapshot`) goes to every
subscriber. :meth:`TableService.act` runs one and answers that snapshot (the routes and the WebSocket).

The names other modules import from here (``TableError``, ``TableDie``, ``encode_jpeg`` …) are re-exported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kosti.dashboard.broadcast import Broadcaster
from kosti.dashboard.errors import TableError
from kosti.dashboard.frames import FrameHub, encode_jpeg, placeholder_frame
from kosti.dashboard.live_settings import LiveSettings
from kosti.dashboard.readers import ReaderKind, VirtualTruthReader, default_reader
from kosti.dashboard.session import GameSession
from kosti.dashboard.store import Store, StoreError
from kosti.dashboard.table_settings import DEFAULT_SETTINGS
from kosti.dashboard.throws import TableDie, TableThrow, throw_from_pipeline
from kosti.dashboard.views import (
    _BARREL_KIND_WORDS,
    BANNER_KINDS,
    BUST_KINDS,
    MAX_RULE_NUMBER,
    GameState,
    JsonObject,
    JsonValue,
    bank_preview,
    banner,
    event_json,
    list_presets,
    make_game,
    roll_sizes,
    rules_reason_ru,
    rules_summary,
    score_of,
    state_from_json,
    state_to_json,
    throw_view,
    view_state,
)
from kosti.dashboard.wiring import LiveTable
from kosti.vision.sources import FrameSource
from kosti.vision.throws import Reader

if TYPE_CHECKING:
    from kosti.dashboard.advisor_api import TurnPresolver

log = logging.getLogger(__name__)

__all__ = [
    "BANNER_KINDS", "BUST_KINDS", "DEFAULT_SETTINGS", "MAX_RULE_NUMBER", "Broadcaster",
    "FrameHub", "GameState", "TableDie", "TableError", "TableService", "TableThrow", "VirtualTruthReader",
    "_BARREL_KIND_WORDS", "default_reader", "encode_jpeg", "event_json", "list_presets", "make_game",
    "placeholder_frame", "roll_sizes", "rules_reason_ru", "rules_summary", "score_of", "state_from_json",
    "state_to_json", "throw_from_pipeline", "view_state",
]


class TableService:
    """One table: the game in progress (``session``), the camera (``live``), the settings (``settings``), and the
    snapshot every screen shows (``version``, ``broadcaster``).

    Args:
        store: the database; the latest active game in it is resumed.
        source: a :class:`kosti.vision.sources.FrameSource` (``None`` = no camera: throws come only through
            :meth:`submit_throw`).
        reader: dice reader with ``read(image) -> Detections`` (``None`` with a source: chosen by
            :func:`default_reader`).
        reader_kind: ``auto`` / ``models`` / ``truth`` for :func:`default_reader`.
        source_spec: the string the source came from (shown in settings).

    Thread safety: every public method may be called from any thread; game changes are serialised by the
    session's lock.
    """

    def __init__(self, store: Store, source: FrameSource | None = None, reader: Reader | None = None,
                 reader_kind: ReaderKind | str = "auto", source_spec: str | None = None) -> None:
        self.store = store
        self.session = GameSession(store)
        self.broadcaster = Broadcaster()
        self.version = 0
        #: The snapshot published last (:meth:`changed`).
        self.published: JsonObject = {}
        self.live = LiveTable(source, reader, reader_kind, source_spec, on_throw=self._camera_throw,
                              changed=self.changed, broadcaster=self.broadcaster)
        self.session.frames_are_real = lambda: not self.live.virtual
        self.settings = LiveSettings(store, self.live, self.session.lock, self.changed)
        #: Shown to the UI: control actions need the PIN (set by the app for non-loopback binds).
        self.pin_required = False
        #: Link to the label review page when the app serves one (``None`` otherwise).
        self.review_url: str | None = None
        #: The advisor's table-building thread for the game on the table (:mod:`kosti.dashboard.advice`).
        self.advisor_warmup: threading.Thread | None = None
        #: Solves each new turn in the background once a page shows advice (:mod:`kosti.dashboard.advice`).
        self.advisor_presolver: TurnPresolver | None = None
        self.session.state_listeners.append(self.live.on_state)
        self.session.change_listeners.append(self.changed)
        self.session.model_name = lambda: self.live.reader_desc
        self.session.resume_latest()

    def record(self, folder: str | Path, max_mb: float | None = None, on: bool = True) -> None:
        """Where the table keeps its throws as clips (issue 40), and — ``on`` (``kosti run --record DIR``) — keep
        them from now on (:meth:`LiveSettings.record`), each labelled with the throw as the game finally records
        it. Raises OSError when the folder cannot be made."""
        if self._label_recorded not in self.session.state_listeners:
            self.session.state_listeners.append(self._label_recorded)
        self.settings.record(folder, max_mb, on)

    def _label_recorded(self, state: object) -> None:
        """After each change of the game: each recorded throw gets the faces the game keeps for it — those of the live
        roll that applied it (after a fix or a confirmation) — or none when no live roll did (refused, undone); a
        throw still pending waits."""
        recorder, game_id = self.live.recorder, self.session.game_id
        if recorder is None or game_id is None:
            return
        wanted = set(recorder.frames)
        for row in self.store.throws(game_id):
            if row.frame_index not in wanted or row.resolution == "pending":
                continue
            action = self.store.action_for_throw(row.id)  # a fix re-applies the roll with the corrected faces
            faces = action.payload.get("faces") if action is not None and action.kind == "roll" else None
            recorder.label(row.frame_index, [int(f) for f in faces] if isinstance(faces, list) else None)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ snapshot / broadcast
    def snapshot(self) -> JsonObject:
        """Everything the dashboard shows, as JSON-ready dict (``type: "state"``)."""
        with self.session.lock:
            s = self.session
            game: JsonObject | None = None
            pending: JsonObject | None = None
            if s.game_id is not None:
                g = self.store.get_game(s.game_id)
                game = {"id": s.game_id, "rules": s.rules_spec, "players": list(g.players) if g else [],
                        "status": g.status if g else "active", "created_at": g.created_at if g else None}
                p = self.store.pending_throw(s.game_id)
                pending = throw_view(self.store, p) if p else None
            return {
                "type": "state",
                "version": self.version,
                "game": game,
                "state": view_state(s.state) if s.state is not None else None,
                "turn_no": s.turn_no,
                "last_throw": None if s.last_throw is None else {**s.last_throw,
                                                                  "fixable": s.last_throw.get("id") is not None
                                                                  and s.last_throw.get("id") == s.fixable_throw_id()},
                "pending": pending,
                "events": list[JsonValue](s.events)[-12:],
                "error": s.last_error,
                "source": self.live.source_info(),
                "reader": self.live.reader_desc,
                "pin_required": self.pin_required,
                "review_url": self.review_url,
                "storage": self.storage_info(),
                "banner": banner(self.store, s.game_id),
                "bank_preview": bank_preview(s.state),
                "server_time": time.time(),
            }

    def storage_info(self) -> JsonObject:
        """``{"ok": true}``, or ``{"ok": false, "error", "error_ru", "status"}`` while the database cannot be
        written (disk full, read-only): what the table sees on every screen until a write succeeds again."""
        err = self.store.write_error
        return {"ok": True} if err is None else {"ok": False, **err.to_json()}

    def changed(self) -> JsonObject:
        """What the table shows changed (a control, a throw, a write that failed or worked again): a new version
        of the snapshot to every subscriber; returns it."""
        with self.session.lock:
            self.version += 1
            snap = self.snapshot()
            self.published = snap
        self.broadcaster.publish(snap)
        return snap

    def act(self, control: Callable[[], object]) -> JsonObject:
        """Run one control (a call of the session or the wiring) under the game's lock and answer what the table
        shows after it: the snapshot it published, or — when it changed nothing (a game already on the table) —
        the current one; a control with an answer of its own (a mapping: what the virtual table was asked to
        throw) answers that. The control's :class:`TableError` propagates, nothing published."""
        with self.session.lock:
            before = self.version
            out = control()
            if isinstance(out, dict):
                return out
            return self.published if self.version != before else self.snapshot()

    # ------------------------------------------------------------------ throws
    def submit_throw(self, thr: TableThrow, actor: str = "camera") -> JsonObject:
        """Take a settled throw: applied when ``ok`` and it matches the state, else held pending
        (:meth:`GameSession.submit_throw`, which publishes the change); the virtual table may be asked to throw
        again at once. Returns ``{"applied", "throw_id", "reasons"}``."""
        with self.session.lock:
            self.live.throw_requested_at = 0.0
            return self.session.submit_throw(thr, actor)

    def _camera_throw(self, thr: TableThrow) -> None:
        """A throw the runner settled (its thread): submitted; a write failure is shown on every screen."""
        try:
            self.submit_throw(thr)
        except StoreError as exc:  # disk full / read-only: the banner says so on every screen
            log.error("throw not stored: %s", exc)
            self.session.show_unstored(thr)
        except Exception:  # noqa: BLE001 - the camera goes on
            log.exception("could not apply throw")
