"""kosti.config: TOML file + KOSTI_* environment, validation errors that name source, field and reason."""

from __future__ import annotations

import dataclasses
import os
import stat
import tomllib
from pathlib import Path

import pytest

from kosti import config as C
from kosti.config import ConfigError, KostiConfig, load_config, render_config, write_default_config
from kosti.config.cli import main as config_main
from kosti.models import DEFAULT_CONF

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No KOSTI_* variables from the caller; XDG folders and the system path inside tmp_path."""
    for k in list(os.environ):
        if k.upper().startswith("KOSTI_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    system = tmp_path / "etc" / "kosti" / "kosti.toml"
    monkeypatch.setattr(C, "SYSTEM_CONFIG", system)
    monkeypatch.setattr(C.load, "SYSTEM_CONFIG", system)  # where default_config_path reads it


def write(tmp_path: Path, text: str, name: str = "kosti.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_no_file_gives_defaults_under_xdg(tmp_path: Path) -> None:
    cfg = load_config()
    assert cfg == KostiConfig()
    assert cfg.source.spec == "picamera" and cfg.source.kind == "picamera"
    assert cfg.settle.still_s == 0.4
    assert (cfg.server.host, cfg.server.port, cfg.server.pin) == ("127.0.0.1", 8000, None)
    assert cfg.storage.db_path == tmp_path / "xdg-data" / "kosti" / "kosti.db"
    assert C.default_config_path() == tmp_path / "xdg-config" / "kosti" / "kosti.toml"


def test_system_config_wins_over_xdg(tmp_path: Path) -> None:
    system = C.SYSTEM_CONFIG
    system.parent.mkdir(parents=True)
    system.write_text("[server]\nport = 8123\n")
    user = tmp_path / "xdg-config" / "kosti" / "kosti.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[server]\nport = 9999\n")
    assert C.default_config_path() == system
    assert load_config().server.port == 8123


def test_kosti_config_env_names_the_file_and_hides_the_system_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$KOSTI_CONFIG stands for --config: it wins over /etc/kosti (a test run, a second table), must exist,
    and --config still wins over it."""
    system = C.SYSTEM_CONFIG
    system.parent.mkdir(parents=True)
    system.write_text("[server]\nport = 8123\n")
    own = write(tmp_path, "[server]\nport = 8555\n", "own.toml")
    monkeypatch.setenv("KOSTI_CONFIG", str(own))
    assert C.default_config_path() == own
    assert load_config().server.port == 8555
    assert load_config(write(tmp_path, "[server]\nport = 8666\n", "flag.toml")).server.port == 8666
    monkeypatch.setenv("KOSTI_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="missing.toml: no such file"):
        load_config()


def test_an_earlier_readers_operating_point_written_by_init_gives_way(tmp_path: Path) -> None:
    """A kosti.toml written by ``kosti config init`` of an earlier reader holds its whole operating point as plain
    values (a Pi install never rewrites it): v0.3's or v1.0's three thresholds, v1.1's four. It reads at today's
    defaults, and the keys count as unset (the dashboard does not store them as a choice). A threshold the user did
    change stays, and so do the old values in a file that holds a threshold the old version did not write."""
    from kosti.models import EARLIER_OPERATING_POINTS

    defaults = C.ReaderSettings()
    assert {"conf": 0.45, "value_conf": 0.7, "verify_prob": 0.95, "verify_one_conf": 0.2} in EARLIER_OPERATING_POINTS
    for old in EARLIER_OPERATING_POINTS:
        text = "[reader]\n" + "".join(f"{k} = {v}\n" for k, v in old.items())
        r = load_config(write(tmp_path, text)).reader
        assert all(getattr(r, k) == getattr(defaults, k) for k in old)
        assert not set(old) & r.model_fields_set  # (v1.0's three equal v1.2's: unset all the same)
        chosen = load_config(write(tmp_path, text.replace(f"value_conf = {old['value_conf']}", "value_conf = 0.45"),
                                   "chosen.toml")).reader
        assert (chosen.value_conf, chosen.verify_prob) == (0.45, old["verify_prob"])
        assert "value_conf" in chosen.model_fields_set
        if "verify_one_conf" not in old:
            # A later file (it holds verify_one_conf, which init writes since v1.1): the same values are a choice.
            later = load_config(write(tmp_path, text + "verify_one_conf = 0.15\n", "later.toml")).reader
            assert (later.conf, later.value_conf, later.verify_prob) == (old["conf"], old["value_conf"],
                                                                          old["verify_prob"])
            assert {"conf", "value_conf", "verify_prob"} <= later.model_fields_set
    # a file that sets only part of an old point holds the user's values, even where the rest equals today's
    part = load_config(write(tmp_path, "[reader]\nvalue_conf = 0.4\nverify_prob = 0.98\n", "part.toml")).reader
    assert (part.value_conf, part.verify_prob) == (0.4, 0.98) and {"value_conf", "verify_prob"} <= part.model_fields_set
    alone = load_config(write(tmp_path, "[reader]\nconf = 0.5\n", "alone.toml")).reader
    assert "conf" in alone.model_fields_set
    # v1.1's thresholds with its verify_one_conf changed are the user's choice
    v11 = load_config(write(tmp_path, "[reader]\nconf = 0.45\nvalue_conf = 0.7\nverify_prob = 0.95\n"
                                      "verify_one_conf = 0.15\n", "v11.toml")).reader
    assert (v11.conf, v11.verify_one_conf) == (0.45, 0.15) and "conf" in v11.model_fields_set


def test_the_zoom_that_init_wrote_before_it_was_on_gives_way(tmp_path: Path) -> None:
    """``kosti config init`` of v1.0–v1.2 wrote the zoom off (``zoom_below = 0.0``, ``zoom_imgsz = 960``): such a file
    zooms as today and the keys count as unset. Off with any other side, or ``zoom_below = 0`` alone, stays off; own
    model files keep what the file says."""
    from kosti.models import DEFAULT_ZOOM_BELOW, DEFAULT_ZOOM_IMGSZ, EARLIER_ZOOM

    assert EARLIER_ZOOM == {"zoom_below": 0.0, "zoom_imgsz": 960} and DEFAULT_ZOOM_BELOW > 0
    old_file = ("[reader]\nconf = 0.45\nvalue_conf = 0.7\nverify_prob = 0.95\nverify_one_conf = 0.2\n"
                "zoom_below = 0.0\nzoom_imgsz = 960\n")
    r = load_config(write(tmp_path, old_file)).reader
    assert (r.zoom_below, r.zoom_imgsz) == (DEFAULT_ZOOM_BELOW, DEFAULT_ZOOM_IMGSZ)
    assert not {"zoom_below", "zoom_imgsz"} & r.model_fields_set
    assert r.conf == C.ReaderSettings().conf  # v1.1's operating point gives way beside it, as before
    for text in ("[reader]\nzoom_below = 0.0\nzoom_imgsz = 800\n", "[reader]\nzoom_below = 0\n",
                 "[reader]\nzoom_below = 28.0\nzoom_imgsz = 960\n"):
        kept = load_config(write(tmp_path, text, "kept.toml")).reader
        assert "zoom_below" in kept.model_fields_set and kept.zoom_below == float(text.split("= ")[1].split("\n")[0])
    own = REPO / "models" / "dice_det.onnx"
    mine = load_config(write(tmp_path, f"[reader]\ndetector = '{own}'\nclassifier = '{own.with_name('dice_cls.onnx')}'\n"
                                       "zoom_below = 0.0\nzoom_imgsz = 960\n", "own.toml")).reader
    assert (mine.zoom_below, mine.zoom_imgsz) == (0.0, 960)


def test_zoom_max_reaches_the_reader_and_is_never_below_zoom_imgsz(tmp_path: Path) -> None:
    from kosti.models import DEFAULT_ZOOM_MAX

    default = load_config(write(tmp_path, "[reader]\n", "d.toml")).reader
    assert default.zoom_max == DEFAULT_ZOOM_MAX and default.reader_params().zoom_max == DEFAULT_ZOOM_MAX
    assert not default.reader_params().zoom_asked()  # the default zoom: off for a model that cannot zoom
    mine = load_config(write(tmp_path, "[reader]\nzoom_max = 1920\n", "m.toml")).reader
    assert mine.reader_params().zoom_max == 1920 and mine.reader_params().zoom_asked()
    with pytest.raises(ConfigError, match=r"reader: zoom_max \(960\) must be at least zoom_imgsz \(1024\)"):
        load_config(write(tmp_path, "[reader]\nzoom_imgsz = 1024\nzoom_max = 960\n", "bad.toml"))
    with pytest.raises(ConfigError, match="zoom_max"):
        load_config(write(tmp_path, "[reader]\nzoom_max = 1000\n", "odd.toml"))  # not a multiple of 32
    # a larger zoom_imgsz alone is fine: zoom_max follows it up in the reader
    up = load_config(write(tmp_path, "[reader]\nzoom_imgsz = 1600\n", "up.toml")).reader.reader_params()
    assert (up.zoom_imgsz, up.zoom_max) == (1600, DEFAULT_ZOOM_MAX)
    from kosti.vision.reader import DiceReader

    assert DiceReader(params=up).zoom_max == 1600
    # with the zoom off, a zoom_max below zoom_imgsz is harmless
    off = load_config(write(tmp_path, "[reader]\nzoom_below = 0\nzoom_max = 704\n", "off.toml")).reader
    assert off.zoom_max == 704


def test_shipped_example_is_the_rendered_default_and_documents_every_key() -> None:
    example = REPO / "deploy" / "kosti.toml"
    text = example.read_text(encoding="utf-8")
    assert text == render_config(), "deploy/kosti.toml is stale: regenerate it with render_config()"
    assert load_config(example) == KostiConfig()
    lines = text.splitlines()
    # every key (set or commented-out example) is preceded by a comment line
    for i, line in enumerate(lines):
        s = line.lstrip("# ")
        if " = " in s and not line.startswith("#   ") and s.split(" = ")[0].isidentifier():
            key = s.split(" = ")[0]
            if line.startswith("# ") and not lines[i - 1].startswith("#"):
                pytest.fail(f"commented example {key} has no explanation")
            assert lines[i - 1].startswith("#"), f"{key} has no comment above it"
    data = tomllib.loads(text)
    for section, info in KostiConfig.model_fields.items():
        for key in info.annotation.model_fields:  # type: ignore[union-attr]
            shown = f"[{section}.{key}" if key == "overrides" else f"{key} = "
            assert shown in text, f"{section}.{key} missing from the example"
        assert section in data


def test_full_file_round_trips(tmp_path: Path) -> None:
    folder = tmp_path / "frames-src"
    folder.mkdir()
    values = {
        "source": {"spec": str(folder), "width": 1640, "height": 1232, "fps": 15.0},
        "zones": {"roll_area": [[0.05, 0.1], [0.7, 0.1], [0.7, 0.9], [0.05, 0.9]],
                  "set_aside": [[0.75, 0.1], [0.95, 0.1], [0.95, 0.9], [0.75, 0.9]]},
        "settle": {"still_s": 0.6, "motion_fraction": 0.01, "still_fraction": 0.002},
        "reader": {"conf": 0.3, "value_conf": 0.7, "backend": "onnx", "threads": 2, "model": "shipped"},
        "game": {"preset": "classic", "players": ["Аня", "Boris"]},
        "server": {"host": "0.0.0.0", "port": 8080, "pin": "048213"},
        "storage": {"dir": str(tmp_path / "data"), "db": "games.sqlite", "frames_dir": "saved"},
    }
    p = write(tmp_path, render_config(values))
    cfg = load_config(p)
    assert cfg.source.kind == "folder" and cfg.source.width == 1640 and cfg.source.fps == 15.0
    assert cfg.zones.set_aside[0] == (0.75, 0.1)
    assert cfg.settle.motion_fraction == 0.01
    assert cfg.reader.model == "shipped" and cfg.reader.threads == 2
    assert cfg.game.players == ["Аня", "Boris"]
    assert cfg.server.pin == "048213" and not cfg.server.is_loopback
    assert cfg.storage.db_path == tmp_path / "data" / "games.sqlite"
    assert cfg.storage.frames_path == tmp_path / "data" / "saved"
    cfg.storage.ensure_dirs()
    assert cfg.storage.frames_path.is_dir()


def test_environment_overrides_file_and_keeps_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path, '[server]\nhost = "0.0.0.0"\nport = 9000\npin = "1234"\n[reader]\nconf = 0.4\n')
    monkeypatch.setenv("KOSTI_SERVER__PORT", "8080")
    monkeypatch.setenv("kosti_reader__threads", "3")  # names are case-insensitive
    monkeypatch.setenv("KOSTI_GAME__PLAYERS", "Ann, Boris ,Вера")
    monkeypatch.setenv("KOSTI_ZONES__ROLL_AREA", "[[0,0],[0.5,0],[0.5,1]]")
    cfg = load_config(p)
    assert cfg.server.port == 8080
    assert (cfg.server.host, cfg.server.pin) == ("0.0.0.0", "1234")
    assert cfg.reader.conf == 0.4 and cfg.reader.threads == 3
    assert cfg.game.players == ["Ann", "Boris", "Вера"]
    assert cfg.zones.roll_area == [(0, 0), (0.5, 0), (0.5, 1)]


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    conf_dir = tmp_path / "conf"
    (conf_dir / "m").mkdir(parents=True)
    (conf_dir / "m" / "det.onnx").write_bytes(b"x")
    (conf_dir / "m" / "cls.onnx").write_bytes(b"x")
    p = write(conf_dir, '[reader]\ndetector = "m/det.onnx"\nclassifier = "m/cls.onnx"\n'
                        '[storage]\ndir = "state"\n')
    cfg = load_config(p)
    assert cfg.reader.detector == conf_dir / "m" / "det.onnx"
    assert cfg.reader.model_paths() == (conf_dir / "m" / "det.onnx", conf_dir / "m" / "cls.onnx", "custom")
    assert cfg.storage.db_path == conf_dir / "state" / "kosti.db"


INVALID = [
    # (file text, field, reason fragment)
    ("[server]\nport = 70000\n", "server.port", "must be 1–65535, got 70000"),
    ("[server]\nport = 0\n", "server.port", "must be 1–65535, got 0"),
    ('[server]\nport = "http"\n', "server.port", "must be an integer, got 'http'"),
    ("[server]\nprot = 8000\n", "server.prot", "unknown key (did you mean 'port'?)"),
    ("[sever]\nport = 8000\n", "sever", "unknown key (did you mean 'server'?)"),
    ('[server]\npin = "12ab"\n', "server.pin", "must be 4–6 digits"),
    ('[server]\npin = "1234567"\n', "server.pin", "must be 4–6 digits"),
    ('[server]\nhost = "bad host!"\n', "server.host", "not an IP address or host name"),
    ('[source]\nspec = "/no/such/video.mp4"\n', "source.spec", "unknown source '/no/such/video.mp4': no such file or folder"),
    ('[source]\nspec = "/dev/video99"\n', "source.spec", "no such device '/dev/video99'"),
    ('[source]\nspec = "virtual:many"\n', "source.spec", "bad virtual source 'virtual:many'"),
    ("[source]\nfps = 0\n", "source.fps", "must be > 0 and ≤ 120, got 0"),
    ("[source]\nwidth = 100\n", "source.width", "must be 160–4096, got 100"),
    ("[zones]\nroll_area = [[0, 0], [1, 1]]\n", "zones.roll_area", "needs at least 3 points, got 2"),
    ("[zones]\nroll_area = [[0, 0], [1.5, 0], [1, 1]]\n", "zones.roll_area[1][0]", "must be 0–1, got 1.5"),
    ("[zones]\nroll_area = [[0, 0], [1, 0.8], [1, 0], [0, 1]]\n", "zones.roll_area", "self-intersecting"),
    ("[zones]\nroll_area = [[0, 0], [0.5, 0.5], [1, 1]]\n", "zones.roll_area", "encloses no area"),
    ("[zones]\nroll_area = [[0, 0], [1, 0]]\nset_aside = []\n", "zones.roll_area", "at least 3 points"),
    ("[settle]\nstill_s = -1\n", "settle.still_s", "must be > 0 and ≤ 10, got -1"),
    ("[settle]\nstill_time_s = -1\n", "settle.still_time_s", "must be > 0 and ≤ 10, got -1"),  # the older name
    ("[settle]\nmotion_fraction = 0.001\nstill_fraction = 0.01\n", "settle.still_fraction",
     "must not exceed settle.motion_fraction"),
    ("[settle]\nstill_sec = 1\n", "settle.still_sec", "unknown key (did you mean 'still_s'?)"),
    ("[reader]\nconf = 1.5\n", "reader.conf", "must be > 0 and < 1, got 1.5"),
    ('[reader]\nbackend = "tflite"\n', "reader.backend",
     "must be one of 'onnx', 'ncnn' or 'ultralytics', got 'tflite'"),
    ("[reader]\nthreads = 0\n", "reader.threads", "must be 1–16, got 0"),
    ('[reader]\nmodel = "v9"\n', "reader.model", "unknown model version 'v9'"),
    ('[reader]\ndetector = "missing.onnx"\n', "reader.detector", "no such model file"),
    ('[game]\nplayers = ["Ann", "ann"]\n', "game.players", "two players have the same name: ann; names must be unique"),
    ('[game]\nplayers = ["' + "x" * 41 + '"]\n', "game.players", "player name longer than 40 characters"),
    ('[game]\nplayers = ["Ann", " "]\n', "game.players", "must not be blank"),
    ('[game]\npreset = "Classic!"\n', "game.preset", "not a preset name"),
    ('[storage]\ndir = "."\ndb = "."\n', "storage.db", "is a folder"),
]


@pytest.mark.parametrize(("text", "field", "reason"), INVALID, ids=[f for _, f, _ in INVALID])
def test_invalid_values_name_the_field_and_reason(tmp_path: Path, text: str, field: str, reason: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    err = ei.value
    assert err.exit_code == 2
    assert "\n" not in str(err)
    src, got_field, got_reason = err.errors[0]
    assert (src, got_field) == (str(p), field), str(err)
    assert reason in got_reason, str(err)
    assert str(err).startswith(f"{p}: {field}: ")


def test_every_error_is_reported_on_one_line(tmp_path: Path) -> None:
    p = write(tmp_path, "[server]\nport = 70000\n[reader]\nconf = 2\nthreads = 99\n")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    assert {f for _, f, _ in ei.value.errors} == {"server.port", "reader.conf", "reader.threads"}
    assert str(ei.value).count("; ") == 2


def test_unknown_preset_and_override_are_checked_by_the_engine(tmp_path: Path) -> None:
    from kosti.engine import presets

    assert "classic" in presets.PRESET_NAMES
    ok = write(tmp_path, '[game]\npreset = "classic"\n[game.overrides.opening]\nthreshold = 75\n')
    assert load_config(ok).game.overrides == {"opening": {"threshold": 75}}
    bad_preset = write(tmp_path, '[game]\npreset = "nosuch"\n', "a.toml")
    with pytest.raises(ConfigError) as ei:
        load_config(bad_preset)
    assert ei.value.errors[0][1] == "game.preset" and "nosuch" in ei.value.errors[0][2]
    bad_override = write(tmp_path, '[game.overrides]\nno_such_parameter = 1\n', "b.toml")
    with pytest.raises(ConfigError) as ei:
        load_config(bad_override)
    assert ei.value.errors[0][1] == "game.overrides" and "no_such_parameter" in str(ei.value)


def test_bad_environment_value_is_blamed_on_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path, "[server]\nport = 8000\n")
    monkeypatch.setenv("KOSTI_SERVER__PORT", "70000")
    with pytest.raises(ConfigError, match=r"^\$KOSTI_SERVER__PORT: server\.port: must be 1–65535, got 70000$"):
        load_config(p)
    monkeypatch.setenv("KOSTI_SERVER__PORT", "8000")
    monkeypatch.setenv("KOSTI_ZONES__SET_ASIDE", "[[0,0],[1,0")
    with pytest.raises(ConfigError, match=r"^\$KOSTI_ZONES__SET_ASIDE: zones: not valid JSON"):
        load_config(p)


def test_toml_syntax_and_missing_files(tmp_path: Path) -> None:
    p = write(tmp_path, "[server]\nport = = 1\n")
    with pytest.raises(ConfigError, match=r"invalid TOML: .*line 2"):
        load_config(p)
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(tmp_path)


def test_write_default_config_never_clobbers(tmp_path: Path) -> None:
    target = tmp_path / "etc" / "kosti.toml"
    write_default_config(target, {"server": {"host": "0.0.0.0", "pin": "4821"}, "reader": {"backend": "onnx"}})
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    cfg = load_config(target)
    assert (cfg.server.host, cfg.server.pin) == ("0.0.0.0", "4821")
    before = target.read_text()
    with pytest.raises(ConfigError, match="already exists"):
        write_default_config(target)
    assert target.read_text() == before
    write_default_config(target, overwrite=True)
    assert load_config(target).server.pin is None
    with pytest.raises(ConfigError, match="server.port: must be 1–65535"):
        write_default_config(tmp_path / "x.toml", {"server": {"port": 70000}})
    assert not (tmp_path / "x.toml").exists()
    assert [p.name for p in target.parent.iterdir()] == ["kosti.toml"]  # no temp files left


def test_overrides_render_as_tables(tmp_path: Path) -> None:
    text = render_config({"game": {"overrides": {"opening": {"threshold": 75}, "target": 2000}}})
    data = tomllib.loads(text)
    assert data["game"]["overrides"] == {"opening": {"threshold": 75}, "target": 2000}
    assert data["server"]["port"] == 8000  # sections after the override tables are intact


def test_cli_init_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "k.toml"
    rc = config_main(["init", "--path", str(target), "--set", "server.host=0.0.0.0",
                      "--set", "server.pin=012345", "--set", "server.port=8081"])
    assert rc == 0
    cfg = load_config(target)
    assert (cfg.server.host, cfg.server.pin, cfg.server.port) == ("0.0.0.0", "012345", 8081)
    assert config_main(["init", "--path", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert config_main(["check", "--config", str(target)]) == 0
    assert "ok" in capsys.readouterr().out
    bad = write(tmp_path, "[reader]\nbackend = 'tflite'\n", "bad.toml")
    assert config_main(["check", "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}: reader.backend: must be one of" in err[0]
    assert config_main(["init", "--path", str(tmp_path / "y.toml"), "--set", "portless"]) == 2
    assert "section.key=value" in capsys.readouterr().err


def test_parse_assignment_types() -> None:
    assert C.parse_assignment("server.port=8080") == ("server", "port", 8080)
    assert C.parse_assignment("server.host=0.0.0.0") == ("server", "host", "0.0.0.0")
    assert C.parse_assignment("server.pin=012345") == ("server", "pin", "012345")
    assert C.parse_assignment("zones.roll_area=[[0,0],[1,0],[1,1]]")[2] == [[0, 0], [1, 0], [1, 1]]


def test_section_kwargs_match_the_vision_signatures(tmp_path: Path) -> None:
    """The mappings onto the reader, settle detector and sources use parameter names those accept."""
    import inspect

    from kosti.vision import reader as reader_mod
    from kosti.vision import settle as settle_mod
    from kosti.vision import sources

    def params(fn: object) -> set[str]:
        return set(inspect.signature(fn).parameters)  # type: ignore[arg-type]

    cfg = KostiConfig()
    kw = cfg.reader.reader_kwargs()
    assert set(kw) == {"det_path", "cls_path", "params"} <= params(reader_mod.DiceReader.__init__)
    rp = kw["params"]
    assert rp.backend == "onnx" and rp.conf == DEFAULT_CONF and rp.threads == 1
    # every reader setting reaches the reader (a field left out of reader_params would be silently ignored)
    settings = set(C.ReaderSettings.model_fields) - {"model", "detector", "classifier"}
    assert settings <= {f.name for f in dataclasses.fields(rp)}
    assert load_config(write(tmp_path, "[reader]\nnot_die_prob = 0.9\n")).reader.reader_params().not_die_prob == 0.9
    assert load_config(write(tmp_path, "[reader]\ndim_gain = 0\n", "off.toml")).reader.reader_params().dim_gain == 0
    with pytest.raises(ConfigError, match="dim_gain"):
        load_config(write(tmp_path, "[reader]\ndim_gain = 0.5\n", "bad.toml"))
    settle = cfg.settle.detector_kwargs()
    assert set(settle) <= {f.name for f in dataclasses.fields(settle_mod.SettleParams)}
    settle_mod.SettleDetector(**settle)  # the defaults are consistent with its own checks
    pi = C.SourceSettings(spec="picamera", width=640, height=480, fps=15).source_kwargs()
    assert pi == {"size": (640, 480), "fps": 15} and set(pi) <= params(sources.PicameraSource.__init__)
    usb = C.SourceSettings(spec="0").source_kwargs()
    assert set(usb) == {"width", "height", "fps"} and set(usb) <= params(sources.OpenCVSource.__init__)
    assert C.SourceSettings(spec="virtual").source_kwargs() == {}


def test_ncnn_backend_maps_onto_the_lean_ncnn_reader(tmp_path: Path) -> None:
    import ncnn  # noqa: F401  (a base dependency: a broken wheel fails here, it is not skipped)
    det, cls = tmp_path / "det_ncnn_model", tmp_path / "cls_ncnn_model"
    det.mkdir()
    cls.mkdir()
    p = write(tmp_path, f'[reader]\nbackend = "ncnn"\ndetector = "{det}"\nclassifier = "{cls}"\n')
    kw = load_config(p).reader.reader_kwargs()
    assert (kw["det_path"], kw["cls_path"], kw["params"].backend) == (det, cls, "ncnn")
    bad = write(tmp_path, f'[reader]\nbackend = "ncnn"\ndetector = "{tmp_path / "k.toml"}"\n', "bad.toml")
    with pytest.raises(ConfigError, match="reader.detector: .* is not an NCNN export folder"):
        load_config(bad)


@pytest.mark.parametrize("backend,package", [("ncnn", "ncnn"), ("ultralytics", "ultralytics")])
def test_a_backend_whose_runtime_is_missing_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           backend: str, package: str) -> None:
    """``kosti config check`` refuses what ``kosti run`` could not start (issue 16: the check said fine, run
    exited 2 with only the pi extra installed)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a))
    p = write(tmp_path, f'[reader]\nbackend = "{backend}"\n')
    with pytest.raises(ConfigError, match=f"reader.backend: '{backend}' needs the '{package}' package"):
        load_config(p)


def test_writing_a_file_ignores_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stray KOSTI_* variable neither leaks into nor blocks the file the installer writes."""
    monkeypatch.setenv("KOSTI_SERVER__PORT", "70000")
    target = write_default_config(tmp_path / "k.toml", {"server": {"port": 8123}})
    assert tomllib.loads(target.read_text())["server"]["port"] == 8123
    with pytest.raises(ConfigError, match=r"^\$KOSTI_SERVER__PORT: server\.port"):
        load_config(target)  # but it does apply when the configuration is loaded


def test_ncnn_backend_needs_an_ncnn_export_of_the_active_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``model = "active"`` with ``backend = "ncnn"``: fine while the active version has an NCNN export
    (the shipped one has), refused by the check when it has none."""
    import ncnn  # noqa: F401  (a base dependency: a broken wheel fails here, it is not skipped)

    from kosti.registry import Registry

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    p = write(tmp_path, '[reader]\nbackend = "ncnn"\n')
    assert load_config(p).reader.reader_kwargs()["det_path"].name == "dice_det_ncnn_model"
    shipped = Registry().paths("shipped")
    reg = Registry()
    version = reg.add_version({"det": shipped.detector, "cls": shipped.classifier}, {}, activate=False)
    reg.use(version, force=True)
    with pytest.raises(ConfigError, match="has no NCNN export"):
        load_config(p)


def test_the_template_is_generated_from_the_field_descriptions() -> None:
    """Every key's comment in the file is its Field(description=...); changing a description changes the file."""
    from kosti.config.sections import SECTIONS

    assert {name: info.annotation for name, info in KostiConfig.model_fields.items()} == SECTIONS
    text = render_config()
    for name, model in SECTIONS.items():
        assert f"\n[{name}]\n" in text
        for key, info in model.model_fields.items():
            assert info.description, f"{name}.{key} has no description"
            comment = "".join(f"# {line}".rstrip() + "\n" for line in info.description.splitlines())
            assert comment in text, f"{name}.{key}: its description is not the comment in the file"
    info = SECTIONS["settle"].model_fields["still_s"]
    old = info.description
    try:
        info.description = "A changed description."
        assert "# A changed description.\nstill_s = 0.4\n" in render_config()
    finally:
        info.description = old


def test_settle_keys_are_the_detector_arguments_and_older_names_still_load(tmp_path: Path) -> None:
    """[settle] still_s / motion_fraction / still_fraction are SettleDetector's own keyword names; a file
    written with the older still_time_s / motion_threshold / still_threshold reads the same values."""
    from kosti.vision.params import SettleParams
    from kosti.vision.settle import SettleDetector

    old = load_config(write(tmp_path, "[settle]\nstill_time_s = 0.6\nmotion_threshold = 0.01\nstill_threshold = 0.003\n"))
    new = load_config(write(tmp_path, "[settle]\nstill_s = 0.6\nmotion_fraction = 0.01\nstill_fraction = 0.003\n",
                            "new.toml"))
    assert old.settle == new.settle
    assert old.settle.model_fields_set == {"still_s", "motion_fraction", "still_fraction"}
    kw = new.settle.detector_kwargs()
    assert kw == {"still_s": 0.6, "motion_fraction": 0.01, "still_fraction": 0.003}
    assert set(kw) == set(type(new.settle).model_fields) <= {f.name for f in dataclasses.fields(SettleParams)}
    assert SettleDetector(new.settle.settle_params()).still_s == SettleDetector(**kw).still_s == 0.6


def test_a_set_aside_zone_may_lie_inside_the_roll_area(tmp_path):
    """The set-aside area is tested first (kosti.vision.zones.Zones, and the dashboard's calibration page lets
    one draw it inside the roll area), so the config file takes it too — with the default whole-frame roll
    area every set-aside zone lies inside it; an earlier overlap rule refused them all."""
    import numpy as np

    from kosti.config import load_config
    from kosti.vision.zones import ROLL, SET_ASIDE, Zones

    f = tmp_path / "kosti.toml"
    f.write_text("[zones]\nset_aside = [[0.7, 0.0], [1.0, 0.0], [1.0, 0.3], [0.7, 0.3]]\n")
    cfg = load_config(f)
    assert len(cfg.zones.roll_area) == 4  # the default: the whole frame
    zones = Zones.from_dict({"roll_area": cfg.zones.roll_area, "set_aside": cfg.zones.set_aside})
    codes = zones.classify(np.array([[1200, 50, 1260, 110], [300, 400, 360, 460]]), 1280, 720)
    assert codes.tolist() == [SET_ASIDE, ROLL]
