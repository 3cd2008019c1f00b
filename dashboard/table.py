"""The live table service: one game on one table, fed by the camera, shown on every phone.

:class:`TableService` is a thin facade over the application layer, with the methods the web layer calls:

* :class:`kosti.dashboard.session.GameSession` — the game, its store and the pending-throw policy (the one
  place where a throw is accepted, held for confirmation or refused);
* :class:`kosti.dashboard.wiring.LiveTable` — the source feeding vision's one camera runner
  (:class:`kosti.vision.runner.LivePipeline`), whose throws go to the session, and the live view;
* :mod:`kosti.dashboard.views` (the game view-model), :mod:`kosti.dashboard.history` (games, history, score
  sheet), :mod:`kosti.dashboard.table_settings` (defaults and their validation), :mod:`kosti.dashboard.frames`
  and :mod:`kosti.dashboard.broadcast` (fan-out to viewers and WebSockets).

Each control (``bank`` "хватит", ``keep``, ``choose``, ``fix``, ``remove_die``, ``enter``, ``confirm``,
``discard``, ``undo``, ``new_game``, ``resume``, ``rematch``) runs under the session's lock, raises a typed
:class:`~kosti.dashboard.errors.TableError` with an English and a Russian reason, and on success broadcasts the
snapshot (:meth:`TableService.snapshot`) to every subscriber and returns it.

The names other modules import from here (``TableError``, ``TableDie``, ``encode_jpeg`` …) are re-exported.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kosti.dashboard.broadcast import Broadcaster
from kosti.dashboard.errors import Invalid, TableError
from kosti.dashboard.frames import FrameHub, encode_jpeg, placeholder_frame
from kosti.dashboard.history import games as _games
from kosti.dashboard.history import history as _history
from kosti.dashboard.history import score_sheet as _score_sheet
from kosti.dashboard.readers import ReaderKind, VirtualTruthReader, default_reader
from kosti.dashboard.session import GameSession
from kosti.dashboard.store import Store, StoreError
from kosti.dashboard.table_settings import (
    DEFAULT_SETTINGS,
    FROM_FILE,
    Settings,
    check_settle,
    file_settings_gone,
    merged,
    thresholds_of,
    valid_stored_settings,
    with_turned_zones,
)
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
from kosti.vision.runner import LivePipeline, ReaderReload
from kosti.vision.sources import FrameSource, redact_url
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
    """One table: the game in progress, its throws and controls, the live view.

    Args:
        store: the database; the latest active game in it is resumed.
        source: a :class:`kosti.vision.sources.FrameSource` (``None`` = no camera: throws come only through
            :meth:`submit_throw`).
        reader: dice reader with ``read(image) -> Detections`` (``None`` with a source: chosen by
            :func:`default_reader`).
        reader_kind: ``auto`` / ``models`` / ``truth`` for :func:`default_reader`.
        source_spec: the string the source came from (shown in settings).

    Thread safety: every public method may be called from any thread; game changes are serialised by one lock.
    """

    def __init__(self, store: Store, source: FrameSource | None = None, reader: Reader | None = None,
                 reader_kind: ReaderKind | str = "auto", source_spec: str | None = None) -> None:
        self.store = store
        self.session = GameSession(store)
        self._lock = self.session.lock
        self.broadcaster = Broadcaster()
        self.live = LiveTable(source, reader, reader_kind, source_spec, on_throw=self._camera_throw,
                              changed=self._changed, broadcaster=self.broadcaster)
        self.frames: FrameHub = self.live.frames
        self.session.frames_are_real = lambda: not self.live.virtual
        self.version = 0
        # earlier versions' default thresholds were dropped once, by migrations 2 and 3 (kosti.dashboard.migrations):
        # a pair stored since is a choice and is read as it is
        stored = valid_stored_settings(store.get_settings())
        stored.pop(FROM_FILE, None)  # what the config file set at the last start: not a setting
        self.settings: Settings = merged(copy.deepcopy(DEFAULT_SETTINGS), stored)
        self.live.apply_settings(self.settings)
        #: Shown to the UI: control actions need the PIN (set by the app for non-loopback binds).
        self.pin_required = False
        #: Link to the label review page when the app serves one (``None`` otherwise).
        self.review_url: str | None = None
        #: The advisor's table-building thread for the game on the table (:mod:`kosti.dashboard.advisor_api`).
        self.advisor_warmup: threading.Thread | None = None
        #: Solves each new turn in the background once a page shows advice (:mod:`kosti.dashboard.advisor_api`).
        self.advisor_presolver: TurnPresolver | None = None
        self.session.state_listeners.append(self.live.on_state)
        self.session.model_name = lambda: self.live.reader_desc
        self.session.resume_latest()

    def record(self, folder: str | Path, max_mb: float | None = None, on: bool = True) -> None:
        """Where the table keeps its throws as clips (issue 40), and — ``on`` (``kosti run --record DIR``) — keep
        them from now on: the camera stream around each throw as a short clip in ``folder`` with the throw as the
        game finally records it beside it (:class:`kosti.vision.recorder.ThrowRecorder`; the oldest clips go
        first above ``max_mb`` megabytes, the ``record_mb`` setting when None). The Settings switch ``record``
        turns it on and off. Raises OSError when the folder cannot be made."""
        self.live.record_dir = Path(folder)
        if self._label_recorded not in self.session.state_listeners:
            self.session.state_listeners.append(self._label_recorded)
        if on:
            values: Settings = {"record": True}
            if max_mb is not None:
                values["record_mb"] = float(max_mb)
            self.settings = merged(self.settings, values)
        self.live.apply_settings(self.settings)

    def _label_recorded(self, state: object) -> None:
        """After each change of the game: each recorded throw gets the faces the game keeps for it — those of the live
        roll that applied it (after a fix or a confirmation) — or none when no live roll did (refused, undone); a
        throw still pending waits."""
        recorder, game_id = self.live.recorder, self.game_id
        if recorder is None or game_id is None:
            return
        wanted = set(recorder.frames)
        for row in self.store.throws(game_id):
            if row.frame_index not in wanted or row.resolution == "pending":
                continue
            action = self.store.action_for_throw(row.id)  # a fix re-applies the roll with the corrected faces
            faces = action.payload.get("faces") if action is not None and action.kind == "roll" else None
            recorder.label(row.frame_index, [int(f) for f in faces] if isinstance(faces, list) else None)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the session's and the wiring's state
    @property
    def game_id(self) -> int | None:
        """The game on the table (None without one)."""
        return self.session.game_id

    @property
    def state(self) -> GameState | None:
        """The engine state of the game on the table; assigning one tells the camera runner what to expect."""
        return self.session.state

    @state.setter
    def state(self, state: GameState | None) -> None:
        self.session.set_state(state)

    @property
    def turn_no(self) -> int:
        """Number of the turn being played (1-based)."""
        return self.session.turn_no

    @property
    def rules_spec(self) -> JsonObject:
        """``{"preset", "overrides"}`` of the game on the table."""
        return self.session.rules_spec

    @property
    def events(self) -> deque[JsonObject]:
        """The latest events as JSON, newest last."""
        return self.session.events

    @property
    def last_throw(self) -> JsonObject | None:
        """The latest throw's view."""
        return self.session.last_throw

    @property
    def last_error(self) -> JsonObject | None:
        """The latest refusal of a camera throw (``TableError.to_json()``)."""
        return self.session.last_error

    @property
    def game_hooks(self) -> list[Callable[[GameState], None]]:
        """Called with the state whenever a game is put on the table (:attr:`GameSession.game_hooks`)."""
        return self.session.game_hooks

    @property
    def corrections_dir(self) -> Path | None:
        """Capture folder for confirmed or corrected throws (training data for the reader), or ``None``."""
        return self.session.corrections_dir

    @corrections_dir.setter
    def corrections_dir(self, path: Path | None) -> None:
        self.session.corrections_dir = path

    @property
    def reader_reload(self) -> ReaderReload | None:
        """``(factory, token)``: the runner's model hot-swap (``kosti models use``), or None."""
        return self.live.reader_reload

    @reader_reload.setter
    def reader_reload(self, reload: ReaderReload | None) -> None:
        self.live.reader_reload = reload

    @property
    def source(self) -> FrameSource | None:
        """The frame source (None = no camera)."""
        return self.live.source

    @property
    def source_spec(self) -> str | None:
        """The string the source came from."""
        return self.live.source_spec

    @source_spec.setter
    def source_spec(self, spec: str | None) -> None:
        self.live.source_spec = spec

    @property
    def reader_desc(self) -> str:
        """The reader in words (shown on every screen)."""
        return self.live.reader_desc

    @property
    def runner(self) -> LivePipeline | None:
        """The camera runner while the table reads a source."""
        return self.live.runner

    @property
    def last_settled(self) -> TableThrow | None:
        """The latest settled throw with its frame, game or not (the teach page saves it)."""
        return self.live.last_settled

    @property
    def fps(self) -> float:
        """Frames per second read from the source."""
        return self.live.fps

    def expected_dice(self) -> int:
        """Dice the next throw should show (0: no game, or several counts legal) — :meth:`GameSession.expected_dice`."""
        return self.session.expected_dice()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Open the source and start the camera runner (no-op without a source)."""
        self.live.start()

    def stop(self) -> None:
        """Stop the camera runner and close the source (idempotent)."""
        self.live.stop()

    # ------------------------------------------------------------------ snapshot / broadcast
    def snapshot(self) -> JsonObject:
        """Everything the dashboard shows, as JSON-ready dict (``type: "state"``)."""
        with self._lock:
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
                "source": self.source_info(),
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

    def source_info(self) -> JsonObject:
        """Source description for the dashboard: kind, spec (credentials hidden), fps, status, whether it can throw."""
        return self.live.source_info()

    def storage_changed(self) -> None:
        """A write failed (or worked again): push the snapshot so every screen shows the storage state."""
        self._changed()

    def _changed(self) -> JsonObject:
        """What the table shows changed: a new version of the snapshot to every subscriber; returns it."""
        with self._lock:
            self.version += 1
            snap = self.snapshot()
        self.broadcaster.publish(snap)
        return snap

    def banner(self) -> JsonObject | None:
        """What the latest action did that the whole table must see (:func:`kosti.dashboard.views.banner`)."""
        return banner(self.store, self.session.game_id)

    def bank_preview(self) -> JsonObject | None:
        """What Stop would do now (:func:`kosti.dashboard.views.bank_preview`)."""
        return bank_preview(self.session.state)

    # ------------------------------------------------------------------ games
    def running_game(self) -> JsonObject | None:
        """The unfinished game on the table as ``{"id", "players", "turns"}``, or ``None``."""
        return self.session.running_game()

    def new_game(self, players: list[str], preset: str = "classic", overrides: JsonObject | None = None,
                 actor: str | None = None, replace: bool = False) -> JsonObject:
        """Start a game (:meth:`GameSession.new_game`: Conflict ``replace_needed`` over an unfinished game unless
        ``replace``; Invalid for bad players, an unknown preset or parameter)."""
        with self._lock:
            self.session.new_game(players, preset, overrides, actor, replace)
            return self._changed()

    def resume(self, game_id: int, actor: str | None = None, replace: bool = False) -> JsonObject:
        """Put stored game ``game_id`` back on the table (:meth:`GameSession.resume`)."""
        with self._lock:
            if not self.session.resume(game_id, actor, replace):
                return self.snapshot()
            return self._changed()

    def rematch(self, game_id: int, actor: str | None = None, replace: bool = False) -> JsonObject:
        """A new game with the players and rules of game ``game_id`` (same seat order); see :meth:`new_game`."""
        with self._lock:
            self.session.rematch(game_id, actor, replace)
            return self._changed()

    def games(self, limit: int = 50) -> list[JsonObject]:
        """Stored games, newest first (:func:`kosti.dashboard.history.games`)."""
        return _games(self.store, self.session.game_id, limit)

    def history(self, game_id: int) -> JsonObject:
        """Turns, throws, actions and corrections of a game (NotFound if unknown)."""
        return _history(self.store, game_id)

    def score_sheet(self, game_id: int) -> JsonObject:
        """The paper score sheet of a game (:func:`kosti.dashboard.history.score_sheet`)."""
        return _score_sheet(self.store, game_id)

    # ------------------------------------------------------------------ throws and controls
    def submit_throw(self, thr: TableThrow, actor: str = "camera") -> JsonObject:
        """Take a settled throw: applied when ``ok`` and it matches the state, else held pending
        (:meth:`GameSession.submit_throw`). Returns ``{"applied", "throw_id", "reasons"}``."""
        with self._lock:
            self.live.throw_requested_at = 0.0
            out = self.session.submit_throw(thr, actor)
            self._changed()
            return out

    def _camera_throw(self, thr: TableThrow) -> None:
        """A throw the runner settled (its thread): submitted; a write failure is shown on every screen."""
        try:
            self.submit_throw(thr)
        except StoreError as exc:  # disk full / read-only: the banner says so on every screen
            log.error("throw not stored: %s", exc)
            self.session.show_unstored(thr)
            self._changed()
        except Exception:  # noqa: BLE001 - the camera goes on
            log.exception("could not apply throw")

    def bank(self, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Stop ("хватит") and record the turn points. Conflict with the engine's reason when forbidden."""
        with self._lock:
            self.session.bank(game_id, actor)
            return self._changed()

    def keep(self, faces: list[int], game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Set these scoring dice aside from the last throw (presets where the player chooses)."""
        with self._lock:
            self.session.keep(faces, game_id, actor)
            return self._changed()

    def choose(self, key: str, value: JsonValue, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """A game's own choice ``{key: value}`` (a claim, a bet, an operation)."""
        with self._lock:
            self.session.choose(key, value, game_id, actor)
            return self._changed()

    def fix(self, die_index: int, value: int, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Correct one die of the pending or the latest applied throw (:meth:`GameSession.fix`)."""
        with self._lock:
            self.session.fix(die_index, value, game_id, actor)
            return self._changed()

    def remove_die(self, die_index: int, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Take die ``die_index`` (0-based) out of the pending throw (:meth:`GameSession.remove_die`)."""
        with self._lock:
            self.session.remove_die(die_index, game_id, actor)
            return self._changed()

    def enter(self, faces: list[int], game_id: int | None = None, actor: str | None = "manual") -> JsonObject:
        """Score a throw typed in by hand (:meth:`GameSession.enter`)."""
        with self._lock:
            self.session.enter(faces, game_id, actor)
            return self._changed()

    def confirm(self, faces: list[int] | None = None, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Accept the pending throw, optionally with all its faces given (:meth:`GameSession.confirm`)."""
        with self._lock:
            self.session.confirm(faces, game_id, actor)
            return self._changed()

    def discard(self, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Drop the pending throw (the dice will be thrown again)."""
        with self._lock:
            self.session.discard(game_id, actor)
            return self._changed()

    def undo(self, game_id: int | None = None, actor: str | None = None) -> JsonObject:
        """Undo the latest step, one at a time (:meth:`GameSession.undo`)."""
        with self._lock:
            self.session.undo(game_id, actor)
            return self._changed()

    def request_throw(self, faces: list[int] | None = None, game_id: int | None = None) -> JsonObject:
        """Ask the virtual table to throw ``state.dice_to_throw`` dice (or exactly ``faces``)."""
        with self._lock:
            self.session.require(game_id)  # no game / game over first
            self.live.virtual_source()  # then: a real camera cannot be asked to throw
            st = self.session.throw_due(game_id, faces)
            self.live.throw_virtual(st.dice_to_throw, faces)
            return {"requested": st.dice_to_throw, "faces": list(faces) if faces is not None else None}

    # ------------------------------------------------------------------ settings
    def update_settings(self, values: Settings) -> Settings:
        """Store and apply settings (zones, thresholds, live view size, the frames' turn — the marked zones turn
        with it, :func:`~kosti.dashboard.table_settings.with_turned_zones`; ``source`` switches the camera)."""
        with self._lock:
            new_source = values.pop("source", None)
            check_settle(self.settings, values)
            if "rotate" in values and not self.live.turnable:
                if values["rotate"]:
                    raise Invalid("only a camera's picture can be turned, not the virtual table's",
                                  "повернуть можно только изображение камеры, а не виртуального стола")
                values = {k: v for k, v in values.items() if k != "rotate"}  # 0 where nothing turns: nothing to do
            values = with_turned_zones(self.settings, values, self.live.rotation)
            self.settings = merged(self.settings, values)
            chosen = merged(self.store.get_settings(), values)  # store what was chosen, never the defaults
            self.store.put_settings({k: chosen[k] for k in values})
            self.live.apply_settings(self.settings)
        if new_source is not None and new_source not in (self.source_spec, redact_url(self.source_spec)):
            self.switch_source(str(new_source))
        self._changed()
        return self.get_settings()

    def apply_file_settings(self, values: Settings) -> None:
        """Apply at start the table settings the config file (or a flag) sets, ``values`` (zones, thresholds,
        rotate; :meth:`update_settings`), and remember them: a setting the file set at the last start and sets no
        longer goes back to its default unless the page changed it since (:func:`file_settings_gone`), so taking
        a value out of ``kosti.toml`` undoes it and the page's own choices stay."""
        stored = valid_stored_settings(self.store.get_settings())  # a damaged row is left out, as at start
        before = stored.get(FROM_FILE)
        undo, forget = file_settings_gone(before if isinstance(before, dict) else {}, values, stored)
        if "rotate" in undo and not self.live.turnable:
            undo.pop("rotate")
        if undo:
            self.update_settings(undo)
        if forget:
            with self._lock:
                kept = {k: v for k, v in thresholds_of(self.store.get_settings()).items() if k not in forget}
                self.store.put_settings({"thresholds": kept})
                self.settings["thresholds"] = {**thresholds_of(DEFAULT_SETTINGS), **kept}
                self.live.apply_settings(self.settings)
        if values:
            self.update_settings(dict(values))
        if before != values:
            with self._lock:
                self.store.put_settings({FROM_FILE: dict(values)})

    def get_settings(self) -> Settings:
        """Current settings (with the source spec, credentials hidden)."""
        d = dict(self.settings)
        d["source"] = redact_url(self.source_spec)
        d["rotate"] = self.live.rotation if self.live.turnable else None  # None: no camera to turn
        recorder = self.live.recorder
        d["record"] = recorder is not None
        d["record_mb"] = recorder.max_mb if recorder is not None else float(d.get("record_mb", 500.0))  # type: ignore[arg-type]
        if self.live.record_dir is not None:
            d["record_dir"] = str(self.live.record_dir)
        return d

    def switch_source(self, spec: str) -> None:
        """Close the current source and open ``spec`` instead (Invalid if it names nothing usable)."""
        src = self.live.open(spec)
        self.live.switch_source(src, spec)
        self.store.put_settings({"source": spec})
