"""Numbered SQLite migrations: a database of the first schema (as every database before numbered migrations
was created) upgrades in place, and the old-default-threshold cleanup is migration 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kosti.dashboard import migrations
from kosti.dashboard.store import Store, StoreError
from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF


def _version(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def _v1_database(db: Path, thresholds: dict | None) -> None:
    """A database as the code before numbered migrations wrote it: the first schema's CREATE statements,
    ``schema_version`` 1, one game in progress and the stored ``thresholds`` setting."""
    c = sqlite3.connect(db)
    c.executescript(migrations.SCHEMA_V1)
    c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
    c.execute("INSERT INTO games(created_at, updated_at, rules_json, players_json, state_json, status)"
              " VALUES (1.0, 2.0, ?, ?, '{}', 'active')", (json.dumps({"preset": "classic"}), json.dumps(["Ann", "Bo"])))
    c.execute("INSERT INTO settings(key, value_json) VALUES ('live_width', '640')")
    if thresholds is not None:
        c.execute("INSERT INTO settings(key, value_json) VALUES ('thresholds', ?)", (json.dumps(thresholds),))
    c.commit()
    c.close()


def test_numbering_is_consecutive() -> None:
    assert [m.version for m in migrations.MIGRATIONS] == list(range(2, len(migrations.MIGRATIONS) + 2))
    assert migrations.latest_version(migrations.MIGRATIONS) == len(migrations.MIGRATIONS) + 1 >= 2


@pytest.mark.parametrize("old", migrations.OLD_DEFAULT_THRESHOLDS)
def test_a_first_schema_database_upgrades_in_place_dropping_an_old_default(tmp_path: Path, old: dict) -> None:
    db = tmp_path / "kosti.db"
    _v1_database(db, {**old, "still_s": 0.7})
    store = Store(db)
    try:
        assert _version(db) == migrations.latest_version(migrations.MIGRATIONS)
        game = store.get_game(1)
        assert game is not None and game.players == ["Ann", "Bo"] and game.status == "active"
        settings = store.get_settings()
        if (old["conf"], old["value_conf"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF):
            assert settings["thresholds"] == {**old, "still_s": 0.7}  # today's defaults are a value, kept
        else:
            assert settings["thresholds"] == {"still_s": 0.7}  # the old default pair is gone, the rest stays
        assert settings["live_width"] == 640
    finally:
        store.close()


@pytest.mark.parametrize("thresholds", [
    {"conf": 0.3, "value_conf": 0.6},  # a choice: only one of the pair equals an old default
    {"conf": 0.25},
    None,
])
def test_a_chosen_threshold_survives_the_upgrade(tmp_path: Path, thresholds: dict | None) -> None:
    db = tmp_path / "kosti.db"
    _v1_database(db, thresholds)
    Store(db).close()
    store = Store(db)  # opening again runs nothing more
    try:
        assert store.get_settings().get("thresholds") == thresholds
        assert _version(db) == migrations.latest_version(migrations.MIGRATIONS)
    finally:
        store.close()


def test_migration_2_runs_once(tmp_path: Path) -> None:
    """After the upgrade the pair is an ordinary value: choosing it again in Settings keeps it."""
    db = tmp_path / "kosti.db"
    _v1_database(db, {"conf": 0.25, "value_conf": 0.6})
    Store(db).close()
    store = Store(db)
    store.put_settings({"thresholds": {"conf": 0.25, "value_conf": 0.6}})
    store.close()
    store = Store(db)
    try:
        assert store.get_settings()["thresholds"] == {"conf": 0.25, "value_conf": 0.6}
    finally:
        store.close()


def test_a_broken_thresholds_setting_does_not_stop_the_upgrade(tmp_path: Path) -> None:
    db = tmp_path / "kosti.db"
    _v1_database(db, None)
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO settings(key, value_json) VALUES ('thresholds', 'not json')")
    Store(db).close()
    assert _version(db) == migrations.latest_version(migrations.MIGRATIONS)


def test_a_gap_in_the_migrations_is_refused(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "kosti.db"
    _v1_database(db, None)
    monkeypatch.setattr(migrations, "MIGRATIONS", (migrations.Migration(3, "skips 2", "SELECT 1;"),))
    with pytest.raises(StoreError, match="no migration from schema 1"):
        Store(db)
    assert _version(db) == 1


def test_a_deliberately_saved_old_pair_survives_a_table_restart(tmp_path: Path) -> None:
    """Migration 2 is the one place the old defaults go: the table's start reads what is stored. A first-schema
    database holding reader v0.3's pair (kosti.models.EARLIER_OPERATING_POINTS) starts at today's operating
    point; the same pair saved again in Settings is a choice and is still there after a restart."""
    from kosti.dashboard.table import TableService
    from kosti.models import EARLIER_OPERATING_POINTS

    pair = {"conf": EARLIER_OPERATING_POINTS[0]["conf"], "value_conf": EARLIER_OPERATING_POINTS[0]["value_conf"]}
    assert (pair["conf"], pair["value_conf"]) != (DEFAULT_CONF, DEFAULT_VALUE_CONF)
    db = tmp_path / "kosti.db"
    _v1_database(db, {**pair, "still_s": 0.7})

    def start() -> tuple[Store, TableService]:
        store = Store(db)
        return store, TableService(store)

    store, table = start()  # the upgrade drops the old default, once
    try:
        th = table.settings.current()["thresholds"]
        assert (th["conf"], th["value_conf"], th["still_s"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF, 0.7)
        table.settings.update({"thresholds": pair})  # the table chooses the old pair again
    finally:
        table.live.stop()
        store.close()
    for _ in range(2):  # each restart keeps it
        store, table = start()
        try:
            th = table.settings.current()["thresholds"]
            assert (th["conf"], th["value_conf"]) == (pair["conf"], pair["value_conf"])
            stored = store.get_settings()["thresholds"]
            assert isinstance(stored, dict) and (stored["conf"], stored["value_conf"]) == (pair["conf"], pair["value_conf"])
        finally:
            table.live.stop()
            store.close()


def test_reader_v11s_stored_default_pair_gives_way_to_todays(tmp_path: Path) -> None:
    """A table that ran reader v1.1 stored the conf 0.45 / value_conf 0.7 its kosti.toml set (written by v1.1's
    ``kosti config init``); migration 3 drops that pair, so the table reads at today's operating point, and
    keeps the other thresholds. A pair other than v1.1's stays."""
    from kosti.dashboard.table import TableService

    assert (0.45, 0.7) != (DEFAULT_CONF, DEFAULT_VALUE_CONF)
    for stored, kept in (({"conf": 0.45, "value_conf": 0.7, "still_s": 0.7}, False),
                         ({"conf": 0.45, "value_conf": 0.75, "still_s": 0.7}, True)):
        db = tmp_path / f"kosti-{kept}.db"
        _v1_database(db, stored)
        store = Store(db)
        table = TableService(store)
        try:
            th = table.settings.current()["thresholds"]
            want = (stored["conf"], stored["value_conf"]) if kept else (DEFAULT_CONF, DEFAULT_VALUE_CONF)
            assert (th["conf"], th["value_conf"], th["still_s"]) == (*want, 0.7)
            assert store.get_settings()["thresholds"] == (stored if kept else {"still_s": 0.7})
            assert _version(db) == migrations.latest_version(migrations.MIGRATIONS) >= 3
        finally:
            table.live.stop()
            store.close()
