"""Table ``settings``: key → JSON value (source, zones, thresholds)."""

from __future__ import annotations

import json

from pydantic import JsonValue

from kosti.dashboard.store.base import (
    Database,
)


class SettingsTable(Database):
    """Table ``settings``: key → JSON value (source, zones, thresholds): a part of :class:`kosti.dashboard.store.Store`, each write one transaction."""

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
