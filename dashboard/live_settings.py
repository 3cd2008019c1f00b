"""The table's settings as the table lives them: stored in the database, applied to the camera wiring.

:class:`LiveSettings` keeps the merged settings (defaults < stored choices < this start's config file), stores
only what was chosen, applies every change to :class:`kosti.dashboard.wiring.LiveTable` (zones, thresholds, the
live view, the frames' turn, recording) and switches the camera source. The values and their checks are
:mod:`kosti.dashboard.table_settings`; the routes are :mod:`kosti.dashboard.routes.settings`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from threading import RLock

from kosti.dashboard.errors import Invalid
from kosti.dashboard.store import Store
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
from kosti.dashboard.wiring import LiveTable
from kosti.vision.sources import redact_url


class LiveSettings:
    """The settings of one table (see the module's text).

    Args:
        store: the database the choices are kept in (a damaged stored row is left out, as at start).
        live: the camera wiring the settings are applied to (at once, here).
        lock: the game's lock (:attr:`kosti.dashboard.session.GameSession.lock`): a change is applied whole.
        changed: called after a change so that every screen shows it (the table's snapshot).

    Attributes:
        values: the merged settings in force (:data:`kosti.dashboard.table_settings.DEFAULT_SETTINGS`' keys).
    """

    def __init__(self, store: Store, live: LiveTable, lock: RLock, changed: Callable[[], object]) -> None:
        self.store, self.live, self.lock, self.changed = store, live, lock, changed
        # earlier versions' default thresholds were dropped once, by migrations 2 and 3 (kosti.dashboard.migrations):
        # a pair stored since is a choice and is read as it is
        stored = valid_stored_settings(store.get_settings())
        stored.pop(FROM_FILE, None)  # what the config file set at the last start: not a setting
        self.values: Settings = merged(copy.deepcopy(DEFAULT_SETTINGS), stored)
        live.apply_settings(self.values)

    def current(self) -> Settings:
        """The settings in force, with the source spec (credentials hidden), the frames' turn (None: no camera to
        turn) and the recording switch, its size cap (MB) and folder."""
        d = dict(self.values)
        d["source"] = redact_url(self.live.source_spec)
        d["rotate"] = self.live.rotation if self.live.turnable else None
        recorder = self.live.recorder
        d["record"] = recorder is not None
        d["record_mb"] = recorder.max_mb if recorder is not None else float(d.get("record_mb", 500.0))  # type: ignore[arg-type]
        if self.live.record_dir is not None:
            d["record_dir"] = str(self.live.record_dir)
        return d

    def update(self, values: Settings) -> Settings:
        """Store and apply ``values`` (zones, thresholds, live view size, the frames' turn — the marked zones turn
        with it, :func:`~kosti.dashboard.table_settings.with_turned_zones`; ``source`` switches the camera) and
        return :meth:`current`. Raises :class:`Invalid` for a settle time the thresholds refuse, a turn of the
        virtual table, or a source that names nothing usable."""
        with self.lock:
            new_source = values.pop("source", None)
            check_settle(self.values, values)
            if "rotate" in values and not self.live.turnable:
                if values["rotate"]:
                    raise Invalid("only a camera's picture can be turned, not the virtual table's",
                                  "повернуть можно только изображение камеры, а не виртуального стола")
                values = {k: v for k, v in values.items() if k != "rotate"}  # 0 where nothing turns: nothing to do
            values = with_turned_zones(self.values, values, self.live.rotation)
            self.values = merged(self.values, values)
            # store what was chosen, never the defaults, nor a stored value today's ranges refuse
            chosen = merged(valid_stored_settings(self.store.get_settings()), values)
            self.store.put_settings({k: chosen[k] for k in values})
            self.live.apply_settings(self.values)
        spec = self.live.source_spec
        if new_source is not None and new_source not in (spec, redact_url(spec)):
            self.switch_source(str(new_source))
        self.changed()
        return self.current()

    def apply_file(self, values: Settings) -> None:
        """Apply at start the table settings the config file (or a flag) sets, ``values`` (:meth:`update`), and
        remember them: a setting the file set at the last start and sets no longer goes back to its default unless
        the page changed it since (:func:`~kosti.dashboard.table_settings.file_settings_gone`), so taking a value
        out of ``kosti.toml`` undoes it and the page's own choices stay."""
        stored = valid_stored_settings(self.store.get_settings())  # a damaged row is left out, as at start
        before = stored.get(FROM_FILE)
        undo, forget = file_settings_gone(before if isinstance(before, dict) else {}, values, stored)
        if "rotate" in undo and not self.live.turnable:
            undo.pop("rotate")
        if undo:
            self.update(undo)
        if forget:
            with self.lock:
                kept = {k: v for k, v in thresholds_of(self.store.get_settings()).items() if k not in forget}
                self.store.put_settings({"thresholds": kept})
                self.values["thresholds"] = {**thresholds_of(DEFAULT_SETTINGS), **kept}
                self.live.apply_settings(self.values)
        if values:
            self.update(dict(values))
        if before != values:
            with self.lock:
                self.store.put_settings({FROM_FILE: dict(values)})

    def record(self, folder: str | Path, max_mb: float | None = None, on: bool = True) -> None:
        """Keep the table's throws as clips in ``folder`` (issue 40) — from now on when ``on`` (``kosti run --record
        DIR``; the oldest clips go first above ``max_mb`` megabytes, the ``record_mb`` setting when None); the
        Settings switch ``record`` turns it on and off. Raises OSError when the folder cannot be made."""
        self.live.record_dir = Path(folder)
        if on:
            values: Settings = {"record": True}
            if max_mb is not None:
                values["record_mb"] = float(max_mb)
            self.values = merged(self.values, values)
        self.live.apply_settings(self.values)

    def switch_source(self, spec: str) -> None:
        """Close the current source and open ``spec`` instead, and keep the choice (Invalid if it names nothing
        usable)."""
        src = self.live.open(spec)
        self.live.switch_source(src, spec)
        self.store.put_settings({"source": spec})
