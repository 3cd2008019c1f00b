"""Issue 42, item 1: every path kosti writes to — the games database (and its lock), ``eval --plots`` and
``--fit-temperature``, ``datasets synth / clips --out``, ``capture --out``, ``train --out / --work``, the model
registry, ``config init --path``, ``stats --plot``, ``play --save``, ``demo --review-dir`` — fails with one line
on stderr and exit 2 when it cannot be created or written, before any work is done; and a write that fails
later (a full disk) is one line too, never a traceback.

The failures are real, never mocked: a folder under a regular file (``ENOTDIR``), and a read-only file system —
a tmpfs mounted read-only by the fixture when the tests run as root (where ``chmod`` stops nothing), else a
folder with mode 0555 (which does stop a regular user).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from kosti.cli import main


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture(params=["read-only file system", "under a regular file"])
def unwritable(request, tmp_path: Path) -> Iterator[Path]:
    """A folder path kosti cannot create or write in (see the module docstring); subfolders of it fail too."""
    if request.param == "under a regular file":
        blocker = tmp_path / "blocker"
        blocker.write_text("a file, not a folder\n")
        yield blocker / "out"
        return
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:
        if not _mount("-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)):
            pytest.skip("a read-only tmpfs cannot be mounted here (no CAP_SYS_ADMIN); the ENOTDIR case runs")
        try:
            yield ro
        finally:
            subprocess.run(["umount", str(ro)], check=True)
    else:
        ro.chmod(0o555)
        try:
            yield ro
        finally:
            ro.chmod(0o755)


@pytest.fixture
def busy_port() -> Iterator[str]:
    """A port another socket listens on: a demo that got past its path checks fails there at once (exit 2, but
    another line) instead of serving forever, so a missing check fails the test rather than hanging it."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield str(s.getsockname()[1])


def _one_line(argv: list[str], capsys, needle: str) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (argv, code, err[-2000:])
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert needle in lines[0], lines[0]
    return lines[0]


def _dataset(root: Path) -> Path:
    """A YOLO folder of one photo with one die (all ``kosti eval`` needs to start)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    cv2.imwrite(str(root / "images" / "a.jpg"), np.full((64, 64, 3), 90, np.uint8))
    (root / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    return root


@pytest.mark.parametrize("sub", ["", "new/deeper"])
def test_demo_database_in_an_unwritable_folder(unwritable: Path, sub: str, busy_port: str, capsys) -> None:
    """``kosti demo --db DIR/kosti.db``: was ``OSError: [Errno 30] Read-only file system: '…/kosti.db.lock'``."""
    db = unwritable / sub / "kosti.db"
    line = _one_line(["demo", "--db", str(db), "--reader", "truth", "--port", busy_port], capsys, "database")
    assert str(unwritable) in line


def test_demo_review_dir_unwritable(unwritable: Path, tmp_path: Path, busy_port: str, capsys) -> None:
    _one_line(["demo", "--db", str(tmp_path / "k.db"), "--reader", "truth", "--port", busy_port,
               "--review-dir", str(unwritable / "caps")], capsys, "--review-dir folder")
    assert not (tmp_path / "k.db").exists()  # refused before the database was touched


def test_eval_plots_and_temperature_unwritable(unwritable: Path, tmp_path: Path, capsys) -> None:
    data = _dataset(tmp_path / "ds")
    _one_line(["eval", "--data", str(data), "--plots", str(unwritable / "plots")], capsys, "--plots folder")
    _one_line(["eval", "--data", str(data), "--fit-temperature", str(unwritable / "t.json")], capsys,
              "--fit-temperature file")


@pytest.mark.parametrize("argv, needle", [
    (["datasets", "clips", "--clip", "shake", "--out"], "--out folder"),
    (["datasets", "synth", "--n", "1", "--out"], "--out folder"),
])
def test_datasets_out_unwritable(unwritable: Path, argv: list[str], needle: str, capsys) -> None:
    _one_line([*argv, str(unwritable / "set")], capsys, needle)


def test_capture_out_unwritable(unwritable: Path, tmp_path: Path, capsys) -> None:
    photos = _dataset(tmp_path / "ds") / "images"
    _one_line(["capture", "--source", str(photos), "--out", str(unwritable / "caps")], capsys, "--out folder")


@pytest.mark.parametrize("flag, needle", [("--out", "--out folder"), ("--work", "--work folder"),
                                          ("--registry", "model registry")])
def test_train_outputs_unwritable(unwritable: Path, tmp_path: Path, flag: str, needle: str, capsys) -> None:
    data = _dataset(tmp_path / "ds")
    _one_line(["train", "--data", str(data), flag, str(unwritable / "x")], capsys, needle)


@pytest.mark.parametrize("argv", [["models", "use", "shipped"], ["models", "rollback"]])
def test_models_registry_unwritable(unwritable: Path, argv: list[str], capsys) -> None:
    _one_line([*argv, "--registry", str(unwritable / "models")], capsys, "model registry")


def test_config_init_unwritable(unwritable: Path, capsys) -> None:
    _one_line(["config", "init", "--path", str(unwritable / "kosti.toml")], capsys, "config file")


def test_stats_plot_and_play_save_unwritable(unwritable: Path, tmp_path: Path, capsys) -> None:
    from kosti.dashboard.store import Store

    Store(tmp_path / "k.db").close()
    _one_line(["stats", "--db", str(tmp_path / "k.db"), "--plot", str(unwritable / "faces.png")], capsys,
              "faces.png")
    _one_line(["play", "--players", "Ann,Boris", "--save", str(unwritable / "game.json")], capsys, "game.json")


@pytest.mark.parametrize("where", ["under-a-file", "missing-folder", "a-folder"])
def test_play_save_is_checked_before_the_game_starts(where: str, tmp_path: Path, monkeypatch, capsys) -> None:
    """``kosti play --save`` under a regular file (or in a missing folder, or naming a folder) is refused at start:
    one line, exit 2, and no rules, score sheet or prompt printed before it (the game never starts)."""
    import io

    (tmp_path / "file.csv").write_text("a,b\n")
    save = {"under-a-file": tmp_path / "file.csv" / "s.json", "missing-folder": tmp_path / "no" / "s.json",
            "a-folder": tmp_path}[where]
    monkeypatch.setattr("sys.stdin", io.StringIO("1 5 2 3 6\nbank\n"))
    code = main(["play", "--players", "Ann,Boris", "--save", str(save)])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "", "the game must not start"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(save) in lines[0] and "cannot save the game" in lines[0], err
    assert "Traceback" not in err and not list(tmp_path.rglob("*.tmp"))


def test_a_disk_that_fills_up_during_the_write_is_one_line(tmp_path: Path, capsys) -> None:
    """The checks pass (the folder is writable), then the write itself fails with ENOSPC: the last net in
    ``kosti.cli.main`` says it in one line, exit 2 (a tmpfs of one page holds no 8 KB config file)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tiny tmpfs")
    full = tmp_path / "full"
    full.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=4k", "tmpfs", str(full)):
        pytest.skip("a tmpfs cannot be mounted here")
    try:
        line = _one_line(["config", "init", "--path", str(full / "kosti.toml")], capsys, "no space left on device")
        assert not (full / "kosti.toml").exists() and not list(full.iterdir())  # nothing half-written left
        assert line.startswith("kosti config: ")
    finally:
        subprocess.run(["umount", str(full)], check=True)


def test_a_writable_path_is_created_and_left_clean(tmp_path: Path) -> None:
    """The check creates a missing folder and leaves no probe file behind (an ``--out`` must stay empty)."""
    from kosti.common.writable import writable_dir, writable_file

    d = writable_dir(tmp_path / "a" / "b", "--out folder")
    assert d.is_dir() and list(d.iterdir()) == []
    f = writable_file(tmp_path / "c" / "kosti.db", "database")
    assert f.parent.is_dir() and not f.exists() and list(f.parent.iterdir()) == []


def test_demo_frames_folder_of_the_config_unwritable(unwritable: Path, tmp_path: Path, busy_port: str, capsys,
                                                    monkeypatch) -> None:
    """The frames folder of ``[storage]`` (corrected throws kept for retraining, the review page's folder)."""
    cfg = tmp_path / "kosti.toml"
    cfg.write_text(f'[storage]\ndir = "{tmp_path / "data"}"\nframes_dir = "{unwritable / "frames"}"\n')
    monkeypatch.setenv("KOSTI_CONFIG", str(cfg))
    _one_line(["demo", "--db", str(tmp_path / "k.db"), "--reader", "truth", "--port", busy_port], capsys,
              "frames folder ([storage]")
    assert not (tmp_path / "k.db").exists()


@pytest.mark.parametrize("argv", [["backup", "{}/b.tar.gz"], ["backup", "--dir", "{}/daily"],
                                  ["games", "export", "--all", "--out", "{}/games"]])
def test_backup_and_game_export_unwritable(unwritable: Path, tmp_path: Path, argv: list[str], capsys) -> None:
    """The archive and export commands of issue 43 belong to the same kind: one line naming the path, exit 2."""
    from kosti.dashboard.store import Store

    Store(tmp_path / "k.db").close()
    _one_line([a.format(unwritable) for a in argv] + ["--db", str(tmp_path / "k.db")], capsys, str(unwritable))


def test_export_beside_read_only_weights(tmp_path: Path, capsys) -> None:
    """``kosti export`` writes beside the weights: a read-only bind mount of their folder is one line, exit 2."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a read-only bind mount")
    src, ro = tmp_path / "weights", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    (src / "dice_det.pt").write_bytes(b"not trained weights")
    if not _mount("--bind", str(src), str(ro)):
        pytest.skip("a bind mount is not permitted here")
    try:
        if not _mount("-o", "remount,ro,bind", str(ro)):
            pytest.skip("a read-only remount is not permitted here")
        _one_line(["export", str(ro / "dice_det.pt")], capsys, "the weights' folder")
    finally:
        subprocess.run(["umount", str(ro)], check=True)


def test_the_check_without_creating(unwritable: Path, tmp_path: Path) -> None:
    """``create=False`` (``kosti capture``, which makes its folder only once the reader has loaded): a folder that
    could be made is not made; one that could not is refused all the same."""
    from kosti.common.writable import UnwritablePath, writable_dir

    assert writable_dir(tmp_path / "later" / "caps", "--out folder", create=False) == tmp_path / "later" / "caps"
    assert not (tmp_path / "later").exists()
    with pytest.raises(UnwritablePath, match="--out folder"):
        writable_dir(unwritable / "caps", "--out folder", create=False)
