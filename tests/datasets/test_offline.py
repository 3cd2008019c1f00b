"""No command reaches the network, and every ``--json`` command prints exactly one JSON document on stdout.

Each command runs in a subprocess under :mod:`net_guard` (every socket connection or host lookup fails and
is recorded), without ``YOLO_OFFLINE`` in its environment: kosti must switch Ultralytics offline itself
(:mod:`kosti.common.ultralytics_env`). Issue 16: ``kosti train`` resolved hosts on import (a 20 s stall without
DNS), asked PyPI for a newer Ultralytics, sent an analytics event and fetched a font; ``kosti train --json``
printed 85 lines of log before its JSON.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import ci_guard
import pytest
from net_guard import one_json_document, run_guarded

REPO = Path(__file__).resolve().parents[2]
BYLER = REPO.parent / "shared" / "datasets" / "byler-d6"
MODELS = REPO / "models"


def _require(path: Path) -> Path:
    if path.exists():
        return path
    msg = f"shared dataset not found: {path} (expected beside the repository, see README)"
    ci_guard.missing(msg)


@pytest.fixture()
def home(tmp_path: Path) -> dict[str, str]:
    """A fresh config, data and Ultralytics settings folder for the child (nothing of the user's is read)."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
            "YOLO_CONFIG_DIR": str(tmp_path / "ultralytics")}


def _check(args: list[str], env: dict[str, str], timeout: float = 600):
    proc, attempts = run_guarded(args, env=env, timeout=timeout)
    assert proc.returncode == 0, f"kosti {' '.join(args)}: rc {proc.returncode}\n{proc.stderr[-3000:]}"
    assert attempts == [], f"kosti {' '.join(args)} reached for the network:\n" + "\n".join(
        a["call"] + "\n" + a["stack"] for a in attempts[:3])
    return one_json_document(proc.stdout)  # anything besides the one document on stdout fails here


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> dict[str, Path]:
    """Three byler-d6 test photos as a frame folder, and the same as a labelled YOLO folder (test split)."""
    src = _require(BYLER) / "images" / "test"
    picked = sorted(src.glob("*.jpg"))[:3]
    root = tmp_path_factory.mktemp("photos")
    frames, data = root / "frames", root / "data"
    (data / "images" / "test").mkdir(parents=True)
    (data / "labels" / "test").mkdir(parents=True)
    frames.mkdir()
    for p in picked:
        shutil.copy2(p, frames / p.name)
        shutil.copy2(p, data / "images" / "test" / p.name)
        shutil.copy2(BYLER / "labels" / "test" / (p.stem + ".txt"), data / "labels" / "test" / (p.stem + ".txt"))
    return {"frames": frames, "data": data, "photo": picked[0]}


def _commands() -> set[str]:
    from kosti.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return set(sub.choices)


def test_engine_and_setup_json_commands_are_offline_and_print_one_document(tmp_path, home):
    game = tmp_path / "game.json"
    game.write_text(json.dumps({"rules": "classic", "players": ["Ann", "Boris"], "events": [{"roll": [1, 5, 3, 3, 4]}]}))
    assert _check(["rules", "--json"], home)["presets"]
    assert _check(["score", "--json", "1", "1", "1", "5", "2"], home)["points"] == 105
    assert _check(["replay", "--json", str(game)], home)["to_move"] == "Ann"
    assert "advise" in _commands()
    assert "advice" in _check(["advise", "--json", "--dice", "5"], home)
    assert isinstance(_check(["models", "list", "--json"], home), (list, dict))
    assert isinstance(_check(["config", "check", "--json"], home), dict)
    stats = _check(["stats", "--json", "--db", str(_stored_game(tmp_path))], home)
    assert stats["faces"] == [3, 1, 2, 1, 1, 2] and stats["throws"] == 2


def _stored_game(tmp_path: Path) -> Path:
    """A dashboard database holding one classic game with two camera throws (as tests/dashboard/test_stats_cli.py)."""
    from fastapi.testclient import TestClient

    from kosti.dashboard.app import DashboardConfig, create_app
    from kosti.dashboard.table import TableDie, TableThrow

    def throw(faces: list[int]) -> TableThrow:
        return TableThrow([TableDie(f, 0.99, [40.0 * i, 10.0, 40.0 * i + 30, 40.0]) for i, f in enumerate(faces)],
                          "ok", [], 7, 0.25, None)

    db = tmp_path / "stats.db"
    app = create_app(DashboardConfig(db_path=db))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # loopback: the Host guard lets it in
        r = client.post("/api/games", json={"players": ["Ann", "Boris"], "preset": "classic"})
        assert r.status_code == 201, r.text
        gid = r.json()["game"]["id"]
        app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))
        assert client.post(f"/api/games/{gid}/bank").status_code == 200
        app.state.table.submit_throw(throw([2, 3, 4, 6, 6]))
    app.state.store.close()
    return db


def test_models_use_add_and_rollback_json_are_offline_and_print_one_document(tmp_path, home):
    """``kosti models add / use / rollback --json`` on a temporary registry: one document each, no socket."""
    reg = ["--registry", str(tmp_path / "registry"), "--json"]
    assert _check(["models", "use", "shipped", *reg], home) == {
        "action": "use", "active": "shipped", "previous": "shipped"}
    added = _check(["models", "add", "--det", str(MODELS / "dice_det.onnx"), "--cls", str(MODELS / "dice_cls.onnx"),
                    "--name", "v1", *reg], home)
    assert added == {"version": "v1", "active": "shipped", "activated": False}
    assert _check(["models", "use", "v1", "--force", *reg], home) == {
        "action": "use", "active": "v1", "previous": "shipped"}
    assert _check(["models", "rollback", *reg], home) == {
        "action": "rollback", "active": "shipped", "previous": "v1"}


@pytest.mark.parametrize("backend", ["onnx", "ncnn"])
def test_reader_json_commands_are_offline_for_each_lean_backend(photos, home, backend):
    importlib.import_module({"onnx": "onnxruntime", "ncnn": "ncnn"}[backend])  # base dependencies: no skip
    doc = _check(["read", "--backend", backend, "--json", str(photos["photo"])], home)
    assert len(doc) == 1 and len(doc[0]["dice"]) >= 4
    report = _check(["eval", "--backend", backend, "--no-map", "--json", "--data", str(photos["data"])], home)
    assert report["images"] == 3 and report["dice"] > 0


def test_watch_and_capture_json_are_offline_and_one_document(photos, home, tmp_path):
    doc = _check(["watch", "--json", str(photos["frames"])], home)
    assert doc["frames"] >= 3
    doc = _check(["capture", "--source", str(photos["frames"]), "--out", str(tmp_path / "cap"), "--json"], home)
    assert isinstance(doc, dict)


@pytest.mark.slow
def test_ultralytics_backend_read_is_offline_and_one_document(photos, home):
    ci_guard.need_module("ultralytics", "the train extra (scripts/test installs it)")
    doc = _check(["read", "--backend", "ultralytics", "--model", str(MODELS / "dice_det.pt"), "--cls-model",
                  str(MODELS / "dice_cls.pt"), "--json", str(photos["photo"])], home)
    assert len(doc[0]["dice"]) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["onnx", "ncnn"])
def test_export_is_offline_and_one_document(tmp_path, home, fmt):
    ci_guard.need_module("ultralytics", "the train extra (scripts/test installs it)")
    if fmt == "ncnn":
        ci_guard.need_module("pnnx", "the train extra (scripts/test installs it)")
    pt = tmp_path / "dice_cls.pt"
    shutil.copy2(MODELS / "dice_cls.pt", pt)
    doc = _check(["export", "--format", fmt, "--json", str(pt)], home)
    assert Path(doc["output"]).exists()


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    """12 seeded synthetic scenes with face labels (procedural dice: no shared data needed)."""
    from kosti.cli import main

    out = tmp_path_factory.mktemp("synth") / "faces"
    assert main(["datasets", "synth", "--out", str(out), "--n", "12", "--seed", "3", "--classes", "faces",
                 "--imgsz", "192", "--real-frac", "0", "--real-bg-frac", "0", "--val-frac", "0.25",
                 "--no-progress"]) == 0
    return out


@pytest.mark.slow
@pytest.mark.parametrize("which", ["classifier-only", "detector"])
def test_tiny_training_is_offline_and_prints_one_document(synth, tmp_path, home, which):
    """``kosti train --json`` (fine-tuning the shipped models one epoch): no socket, one JSON line."""
    ci_guard.need_module("ultralytics", "the train extra (scripts/test installs it)")
    common = ["train", "--data", f"{synth}:train", "--val", f"{synth}:val", "--holdout", "0", "--json",
              "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"), "--imgsz", "96",
              "--batch-det", "4", "--batch-cls", "16", "--seed", "1"]
    extra = (["--classifier-only", "--epochs-cls", "1"] if which == "classifier-only"
             else ["--epochs-det", "1", "--epochs-cls", "0"])
    doc = _check(common + extra, home, timeout=900)
    assert Path(doc["files"]["cls" if which == "classifier-only" else "det"]).is_file()
