"""``kosti demo`` / ``kosti run`` argument handling, the default database path, resuming a named game."""

from __future__ import annotations

from pathlib import Path

import pytest

from kosti.cli import main
from kosti.dashboard.app import DashboardConfig, create_app, default_db_path


def test_default_db_path_respects_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "kosti" / "kosti.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_db_path() == Path.home() / ".local" / "share" / "kosti" / "kosti.db"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--source", "/no/such/video.mp4"], "unknown source"),
        (["run", "--source", "virtual", "--rules", "no_such_rules"], "unknown preset"),
        (["run", "--source", "virtual", "--players", " , "], "--players"),
        (["demo", "--pin", "12"], "--pin must be 4–6 digits"),
        (["demo", "--auto-throw", "0"], "--auto-throw"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys, tmp_path):
    code = main(argv + ["--db", str(tmp_path / "x.db")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x.db").exists()  # nothing was started


def test_run_resumes_the_same_game_and_starts_a_new_one_for_other_players(tmp_path):
    db = tmp_path / "k.db"
    a = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], preset="classic"))
    gid = a.state.table.game_id
    a.state.store.close()
    b = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], preset="classic"))
    assert b.state.table.game_id == gid  # same players and rules: resumed
    b.state.store.close()
    c = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris", "Vera"], preset="classic"))
    assert c.state.table.game_id != gid
    assert c.state.store.get_game(gid).status == "abandoned"
    c.state.store.close()
    with pytest.raises(ValueError, match="no_such"):
        create_app(DashboardConfig(db_path=db, players=["A"], preset="no_such"))
