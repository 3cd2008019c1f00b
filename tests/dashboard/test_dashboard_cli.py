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
        (["run", "--source", "virtual", "--rotate", "90"], "the virtual table is never turned"),
        (["demo", "--pin", "12"], "--pin must be 4–6 digits"),
        (["demo", "--auto-throw", "0"], "--auto-throw"),
        (["demo", "--players", " , "], "--players"),
        (["demo", "--rules", "no_such_rules"], "unknown preset"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys, tmp_path):
    code = main(argv + ["--db", str(tmp_path / "x.db")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert err.count(message) == 1, err  # said once ("unknown source 'X': unknown source 'X': …" was not)
    assert not (tmp_path / "x.db").exists()  # nothing was started


def test_run_resumes_the_same_game_and_starts_a_new_one_for_other_players(tmp_path):
    db = tmp_path / "k.db"
    a = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], preset="classic"))
    gid = a.state.table.session.game_id
    a.state.store.close()
    b = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris"], preset="classic"))
    assert b.state.table.session.game_id == gid  # same players and rules: resumed
    b.state.store.close()
    c = create_app(DashboardConfig(db_path=db, players=["Ann", "Boris", "Vera"], preset="classic"))
    assert c.state.table.session.game_id != gid
    assert c.state.store.get_game(gid).status == "abandoned"
    c.state.store.close()
    with pytest.raises(ValueError, match="no_such"):
        create_app(DashboardConfig(db_path=db, players=["A"], preset="no_such"))


def test_demo_starts_a_game_with_players(tmp_path, monkeypatch):
    """``kosti demo --players A,B [--rules P]`` starts a game on the virtual table (throws score at once)."""
    import kosti.dashboard.cli as dcli

    seen = {}
    monkeypatch.setattr(dcli, "_serve", lambda config, args: seen.setdefault("c", config) and 0)
    assert main(["demo", "--reader", "truth", "--players", "Ann, Boris", "--rules", "farkle",
                 "--db", str(tmp_path / "k.db")]) == 0
    c = seen.pop("c")
    assert c.players == ["Ann", "Boris"] and c.preset == "farkle" and c.source == "virtual"
    app = create_app(DashboardConfig(**{**c.__dict__, "start_capture": False}))
    assert app.state.table.session.state.players[0].name == "Ann" and app.state.table.session.state.rules.name == "farkle"
    app.state.store.close()


def test_run_reads_the_config_file_and_flags_override_it(tmp_path, monkeypatch):
    import kosti.dashboard.cli as dcli

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    conf = tmp_path / "kosti.toml"
    conf.write_text(
        '[source]\nspec = "virtual"\n'
        '[server]\nhost = "0.0.0.0"\nport = 8123\npin = "97531"\n'
        '[game]\npreset = "classic"\nplayers = ["Ann", "Boris"]\n[game.overrides.opening]\nthreshold = 75\n'
        '[zones]\nroll_area = [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9]]\n'
        '[settle]\nstill_time_s = 0.6\nmotion_threshold = 0.01\nstill_threshold = 0.003\n'
        f'[storage]\ndir = "{tmp_path / "data"}"\n'
    )
    seen = {}
    monkeypatch.setattr(dcli, "_serve", lambda config, args: seen.setdefault("c", config) and 0)
    assert main(["run", "--config", str(conf), "--reader", "truth"]) == 0
    c = seen.pop("c")
    assert (c.host, c.port, c.pin) == ("0.0.0.0", 8123, "97531")
    assert c.players == ["Ann", "Boris"] and c.preset == "classic" and c.overrides == {"opening": {"threshold": 75}}
    assert Path(c.db_path) == tmp_path / "data" / "kosti.db"
    assert c.settings["zones"]["roll_area"][0] == [0.1, 0.1]
    assert c.settings["thresholds"] == {"still_s": 0.6, "motion_fraction": 0.01, "still_fraction": 0.003}
    assert Path(c.corrections_dir) == tmp_path / "data" / "frames" == Path(c.review_dir)
    assert getattr(c.source_obj, "kind", "") == "virtual"
    # Flags win over the file; another preset drops the file's overrides.
    assert main(["run", "--config", str(conf), "--reader", "truth", "--port", "9000", "--rules", "farkle",
                 "--players", "Vera,Gleb"]) == 0
    c = seen.pop("c")
    assert c.port == 9000 and c.preset == "farkle" and c.overrides is None and c.players == ["Vera", "Gleb"]
    # The whole app starts from that configuration: the game, its overrides and the zones.
    app = create_app(DashboardConfig(**{**c.__dict__, "start_capture": False, "preset": "classic",
                                        "players": ["Ann", "Boris"], "overrides": {"opening": {"threshold": 75}}}))
    assert app.state.table.session.state.rules.opening.threshold == 75
    assert app.state.table.settings.current()["thresholds"]["still_s"] == 0.6
    # ... and the settle detector of the live pipeline takes the [settle] thresholds (they were ignored once).
    settle = app.state.table.live.make_runner().detector.settle
    assert (settle.still_s, settle.motion_fraction, settle.still_fraction) == (0.6, 0.01, 0.003)
    app.state.store.close()


def test_run_turns_a_sideways_camera_from_the_file_or_the_flag(tmp_path, monkeypatch):
    """``[source] rotate`` (or ``kosti run --rotate``) turns the frames the table reads; the tray it marked before
    turns with them (tests/dashboard/test_rotate.py); the virtual table of ``kosti demo`` is never turned."""
    import cv2
    import numpy as np

    import kosti.dashboard.cli as dcli

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f000.png"), np.zeros((90, 160, 3), np.uint8))
    conf = tmp_path / "kosti.toml"
    conf.write_text(f'[source]\nspec = "{frames}"\nrotate = 270\n[storage]\ndir = "{tmp_path / "data"}"\n')
    seen = {}
    monkeypatch.setattr(dcli, "_serve", lambda config, args: seen.setdefault("c", config) and 0)
    assert main(["run", "--config", str(conf)]) == 0
    c = seen.pop("c")
    assert c.settings["rotate"] == 270
    app = create_app(DashboardConfig(**{**c.__dict__, "start_capture": False}))
    assert app.state.table.settings.current()["rotate"] == 270
    assert app.state.table.live.source.read().image.shape == (160, 90, 3)
    app.state.store.close()
    assert main(["run", "--config", str(conf), "--rotate", "0"]) == 0
    assert seen.pop("c").settings["rotate"] == 0
    assert main(["demo", "--config", str(conf), "--reader", "truth"]) == 0
    assert "rotate" not in (seen.pop("c").settings or {})


def test_the_tray_thresholds_and_turn_chosen_on_the_page_survive_a_restart_under_the_shipped_config(tmp_path, monkeypatch):
    """deploy/kosti.toml (what the Raspberry Pi service runs, and what `kosti config init` writes) holds every key at
    its default: no choice, so a restart must not reset the tray, thresholds and turn the table chose on the page
    (before 2026-12-04 it put the whole frame, the default thresholds and no turn back at every start)."""
    import cv2
    import numpy as np

    import kosti.dashboard.cli as dcli

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f000.png"), np.zeros((90, 160, 3), np.uint8))
    db = tmp_path / "k.db"
    seen = {}
    monkeypatch.setattr(dcli, "_serve", lambda config, args: seen.setdefault("c", config) and 0)
    shipped = Path(__file__).resolve().parents[2] / "deploy" / "kosti.toml"
    argv = ["run", "--config", str(shipped), "--source", str(frames), "--db", str(db)]
    tray = [[0.2, 0.2], [0.8, 0.2], [0.8, 0.8], [0.2, 0.8]]
    for start in range(2):
        assert main(argv) == 0
        c = seen.pop("c")
        assert c.settings is None  # the file's defaults are not pushed over the page's choices
        app = create_app(DashboardConfig(**{**c.__dict__, "start_capture": False}))
        if start == 0:
            app.state.table.settings.update({"zones": {"roll_area": tray, "set_aside": None}, "rotate": 90,
                                             "thresholds": {"conf": 0.55}})
        else:
            got = app.state.table.settings.current()
            assert got["zones"]["roll_area"] == tray and got["rotate"] == 90 and got["thresholds"]["conf"] == 0.55
        app.state.store.close()
    # A value the file changes from its default is applied at each start ...
    changed = tmp_path / "mine.toml"
    changed.write_text(shipped.read_text().replace("rotate = 0", "rotate = 180").replace("conf = 0.5", "conf = 0.45")
                       .replace("still_s = 0.4", "still_s = 0.7"))

    def start(config: Path, *flags: str, page: dict | None = None) -> dict:
        assert main(["run", "--config", str(config), "--source", str(frames), "--db", str(db), *flags]) == 0
        app = create_app(DashboardConfig(**{**seen.pop("c").__dict__, "start_capture": False}))
        got = app.state.table.settings.current()
        if page:
            app.state.table.settings.update(page)  # chosen on the page
        app.state.store.close()
        assert "from_file" not in got  # what the file set is remembered, never shown
        return got

    got = start(changed)
    assert (got["rotate"], got["thresholds"]["conf"], got["thresholds"]["still_s"]) == (180, 0.45, 0.7)
    # The tray, marked with the picture at 90, turned a quarter more with it: (x, y) → (1 - y, x).
    assert _rounded(got["zones"]["roll_area"]) == [[0.8, 0.2], [0.8, 0.8], [0.2, 0.8], [0.2, 0.2]]
    got = start(changed, "--rotate", "270")  # a flag wins over the file
    assert got["rotate"] == 270
    # ... and taken out of the file (and the flag dropped), it is undone: back to the defaults, the tray turned back
    # with the picture; a value the page chose since (still_s 0.9, below) stays.
    start(changed, page={"thresholds": {"still_s": 0.9}})
    got = start(shipped)
    assert (got["rotate"], got["thresholds"]["conf"], got["thresholds"]["still_s"]) == (0, 0.5, 0.9)
    # The tray marked at 90, seen at 0: (x, y) → (y, 1 - x).
    assert _rounded(got["zones"]["roll_area"]) == [[0.2, 0.8], [0.2, 0.2], [0.8, 0.2], [0.8, 0.8]]


def _rounded(poly: list[list[float]]) -> list[list[float]]:
    return [[round(v, 6) for v in p] for p in poly]


def test_bad_config_file_exits_2(tmp_path, capsys):
    conf = tmp_path / "kosti.toml"
    conf.write_text("[server]\nport = 70000\n")
    assert main(["run", "--config", str(conf), "--source", "virtual"]) == 2
    assert "server.port" in capsys.readouterr().err
