"""``kosti backup`` / ``kosti restore`` (issue 43, item 2) on real SQLite files and a real model registry folder.

A backup taken while a game is being played (the dashboard's own session writing actions in another thread, the
database in WAL mode with pages still in ``-wal``) restores to a database holding every action committed before it,
each exactly as stored; a damaged or foreign archive is refused with one line and changes nothing; a running
dashboard refuses a restore."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sqlite3
import tarfile
import threading
from pathlib import Path

import pytest

from kosti.backup import Paths, check_archive, make_backup, restore
from kosti.cli import main
from kosti.dashboard.store import Store
from kosti.dashboard.table import TableService
from kosti.dashboard.views import state_from_json


def _actions(db: Path) -> list[tuple]:
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT id, game_id, kind, payload_json, state_after_json, undone FROM actions ORDER BY id").fetchall()
    finally:
        c.close()


def _digest(*paths: Path) -> dict[str, str]:
    """SHA-256 of every file under ``paths`` (a file or a folder), to prove nothing changed."""
    out = {}
    for p in paths:
        files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file()) if p.exists() else []
        for f in files:
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


@pytest.fixture
def table_files(tmp_path: Path) -> Paths:
    """A table's files: a database with a game, a model registry with a version, a config with a PIN."""
    models = tmp_path / "data" / "models"
    (models / "v1").mkdir(parents=True)
    (models / "v1" / "detector.onnx").write_bytes(b"onnx-bytes" * 100)
    (models / "active.json").write_text('{"version": "v1"}')
    config = tmp_path / "etc" / "kosti.toml"
    config.parent.mkdir()
    config.write_text('[server]\nhost = "0.0.0.0"\npin = "482913"\n')
    return Paths(db=tmp_path / "data" / "kosti.db", models=models, config=config, frames=tmp_path / "data" / "frames")


def _play(table: TableService, stop: threading.Event, done: list[int]) -> None:
    """Throw and stop on the table until told to stop (the real session: every action one SQLite transaction)."""
    faces = [[1, 5, 2, 3, 6], [2, 2, 3], [5, 2, 2, 3, 4], [1, 3, 4]]
    i = 0
    while not stop.is_set():
        st = table.session.state
        if st is None or st.over:
            table.session.new_game(["Ann", "Boris"], replace=True)
            continue
        f = faces[i % len(faces)]
        n = st.dice_to_throw
        try:
            table.session.enter((f * 3)[:n])
            if i % 3 == 2:
                table.session.bank()
        except Exception:  # noqa: BLE001 - a stop the rules forbid: throw again
            pass
        i += 1
        done.append(i)


def test_backup_while_playing_restores_every_action(table_files: Paths, tmp_path: Path, capsys) -> None:
    store = Store(table_files.db)
    table = TableService(store)
    table.session.new_game(["Ann", "Boris"])
    stop, done = threading.Event(), []
    player = threading.Thread(target=_play, args=(table, stop, done))
    player.start()
    archives = []
    try:
        while len(done) < 30:
            threading.Event().wait(0.01)
        for k in range(3):  # backups taken while the game goes on
            before = len(_actions(table_files.db))
            out = tmp_path / f"during-{k}.tar.gz"
            assert main(["backup", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                         "--config", str(table_files.config)]) == 0
            archives.append((out, before))
        assert Path(f"{table_files.db}-wal").stat().st_size > 0, "the game's pages are still in the WAL"
    finally:
        stop.set()
        player.join()
    final = tmp_path / "final.tar.gz"
    assert main(["backup", str(final), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 0  # the dashboard still has the file open
    live = _actions(table_files.db)
    assert len(live) > 30
    for out, before in [*archives, (final, len(live))]:
        target = Paths(db=tmp_path / f"restored-{out.stem}" / "kosti.db", models=tmp_path / f"m-{out.stem}",
                       config=None)
        restore(out, target, with_config=False)
        got = _actions(target.db)
        assert len(got) >= before and got == live[:len(got)], "a prefix of the live log, each action as stored"
        s = Store(target.db)  # the restored file opens as a kosti database
        try:
            g = s.latest_active_game() or s.list_games(1)[0]
            last = [a for a in s.actions(g.id)]
            if last:  # the stored state is the one after the game's last live action
                assert state_from_json(g.state_json) == state_from_json(last[-1].state_after_json)
        finally:
            s.close()
    assert len(_actions(tmp_path / "restored-final.tar" / "kosti.db")) == len(live)
    store.close()


def _make(table_files: Paths, tmp_path: Path) -> Path:
    s = Store(table_files.db)
    t = TableService(s)
    t.session.new_game(["Ann", "Boris"])
    t.session.enter([1, 5, 2, 3, 6])
    s.close()
    out = tmp_path / "b.tar.gz"
    make_backup(table_files, out)
    return out


def test_restore_puts_back_database_models_and_config(table_files: Paths, tmp_path: Path, capsys) -> None:
    out = _make(table_files, tmp_path)
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
    assert {"kosti-backup/manifest.json", "kosti-backup/kosti.db", "kosti-backup/kosti.toml",
            "kosti-backup/models/v1/detector.onnx", "kosti-backup/models/active.json"} <= names
    assert oct(out.stat().st_mode & 0o777) == "0o600", "the archive holds the PIN"
    saved = _digest(table_files.models, table_files.config)
    saved_actions = _actions(table_files.db)
    # the table goes on after the backup: another game, a new model version, a new PIN
    s = Store(table_files.db)
    TableService(s).session.new_game(["Cleo", "Dan"], replace=True)
    s.close()
    (table_files.models / "v2").mkdir()
    (table_files.models / "v2" / "detector.onnx").write_bytes(b"newer")
    table_files.config.write_text('[server]\npin = "1111"\n')
    capsys.readouterr()
    assert main(["restore", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 0
    assert "restored" in capsys.readouterr().out
    assert _actions(table_files.db) == saved_actions
    assert _digest(table_files.models, table_files.config) == saved
    assert not Path(f"{table_files.db}-wal").exists() or Path(f"{table_files.db}-wal").stat().st_size == 0
    assert not list(table_files.db.parent.glob(".kosti-restore-*")), "the old data is gone, the staging too"


def _damaged(kind: str, good: Path, tmp_path: Path) -> Path:
    bad = tmp_path / f"{kind}.tar.gz"
    data = good.read_bytes()
    if kind == "truncated":
        bad.write_bytes(data[: len(data) * 2 // 3])
    elif kind == "flipped":
        raw = bytearray(gzip.decompress(data))
        with tarfile.open(fileobj=io.BytesIO(bytes(raw))) as tar:
            m = tar.getmember("kosti-backup/kosti.db")
        raw[m.offset_data + 200] ^= 0xFF  # one byte of the database, inside a valid gzip tar
        bad.write_bytes(gzip.compress(bytes(raw)))
    elif kind == "foreign":
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo("photos/cat.jpg")
            info.size = 3
            tar.addfile(info, io.BytesIO(b"cat"))
        bad.write_bytes(buf.getvalue())
    elif kind == "not_gzip":
        bad.write_text("hello")
    elif kind == "escape":
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo("kosti-backup/../../evil")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        bad.write_bytes(buf.getvalue())
    elif kind == "newer_format":
        buf = io.BytesIO()
        with tarfile.open(good) as src, tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for m in src.getmembers():
                body = src.extractfile(m).read()
                if m.name.endswith("manifest.json"):
                    body = json.dumps({**json.loads(body), "format": "kosti-backup/9"}).encode()
                    m.size = len(body)
                tar.addfile(m, io.BytesIO(body))
        bad.write_bytes(buf.getvalue())
    return bad


@pytest.mark.parametrize(("kind", "message"), [
    ("truncated", "damaged archive"),
    ("flipped", "does not match its checksum"),
    ("foreign", "not a kosti backup"),
    ("not_gzip", "not a kosti backup"),
    ("escape", "outside kosti-backup/"),
    ("newer_format", "it says 'kosti-backup/9'"),
])
def test_a_damaged_or_foreign_archive_is_refused_and_changes_nothing(kind, message, table_files: Paths,
                                                                      tmp_path: Path, capsys) -> None:
    bad = _damaged(kind, _make(table_files, tmp_path), tmp_path)
    before = _digest(table_files.db.parent, table_files.config)
    capsys.readouterr()
    assert main(["restore", str(bad), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 2
    err = capsys.readouterr().err
    assert message in err and "nothing was changed" in err and err.count("\n") == 1, err
    assert _digest(table_files.db.parent, table_files.config) == before
    assert not (tmp_path / "evil").exists()


def test_a_running_dashboard_refuses_the_restore(table_files: Paths, tmp_path: Path, capsys) -> None:
    from kosti.dashboard.cli import _lock_database

    out = _make(table_files, tmp_path)
    lock = _lock_database(table_files.db)  # what kosti run holds while it serves
    before = _digest(table_files.db.parent)
    try:
        assert main(["restore", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                     "--no-config"]) == 2
    finally:
        lock.close()
    assert "the dashboard is running" in capsys.readouterr().err
    assert _digest(table_files.db.parent) == before


def test_check_archive_reads_what_make_backup_wrote(table_files: Paths, tmp_path: Path) -> None:
    out = _make(table_files, tmp_path)
    checked = check_archive(out, tmp_path / "x")
    m = checked.manifest
    assert m["format"] == "kosti-backup/1" and m["games"] == 1 and m["actions"] == 1
    assert (tmp_path / "x" / "kosti.toml").read_bytes() == table_files.config.read_bytes()


def test_backup_dir_keeps_the_newest_n(table_files: Paths, tmp_path: Path) -> None:
    import datetime as dt

    from kosti.backup import backup_to_dir

    _make(table_files, tmp_path)
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    for day in range(1, 6):
        backup_to_dir(table_files, folder, keep=3, now=dt.datetime(2026, 12, day, 3, 0, tzinfo=dt.UTC))
    assert sorted(p.name for p in folder.iterdir()) == [
        "kosti-backup-20261203-030000.tar.gz", "kosti-backup-20261204-030000.tar.gz",
        "kosti-backup-20261205-030000.tar.gz", "notes.txt"]


def test_backup_of_a_missing_database_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["backup", str(tmp_path / "b.tar.gz"), "--db", str(tmp_path / "none.db"),
                 "--registry", str(tmp_path / "m")]) == 2
    assert "no database at" in capsys.readouterr().err
    assert not (tmp_path / "b.tar.gz").exists() and not (tmp_path / "none.db").exists()


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_an_unwritable_backup_path_names_the_users_path(where, table_files: Paths, tmp_path: Path, capsys) -> None:
    """The output's folder is checked first: a path under a regular file or in /proc is the archive's problem (not
    'cannot back up the database'), worded with the path the user gave, never the temporary file beside it."""
    _make(table_files, tmp_path)
    if where == "under-a-file":
        (tmp_path / "file.csv").write_text("a,b\n")
        out = tmp_path / "file.csv" / "x.tar.gz"
    else:
        out = Path("/proc/x.tar.gz")
    capsys.readouterr()
    assert main(["backup", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(out.parent) in err and "backup" in err, err
    assert "database" not in err and ".tmp" not in err and ".x.tar.gz" not in err, err


def test_restore_keeps_the_replaced_database_and_config_beside_them(table_files: Paths, tmp_path: Path,
                                                                     capsys) -> None:
    """A restore over newer games keeps the database (and config) it replaces as a dated copy and says where;
    its last line fits any install, not only the Pi's service."""
    out = _make(table_files, tmp_path)
    s = Store(table_files.db)
    t = TableService(s)
    t.session.new_game(["Cleo", "Dan"], replace=True)
    t.session.enter([5, 5, 2, 3, 4])
    s.close()
    newer = _actions(table_files.db)
    table_files.config.write_text('[server]\npin = "1111"\n')
    capsys.readouterr()
    assert main(["restore", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 0
    text = capsys.readouterr().out
    dbs = list(table_files.db.parent.glob("kosti.db.before-restore-*"))
    tomls = list(table_files.config.parent.glob("kosti.toml.before-restore-*"))
    assert len(dbs) == 1 and len(tomls) == 1
    assert _actions(dbs[0]) == newer != _actions(table_files.db), "the newer games are in the kept copy"
    assert tomls[0].read_text() == '[server]\npin = "1111"\n'
    assert oct(tomls[0].stat().st_mode & 0o777) == "0o600"
    assert str(dbs[0]) in text and str(tomls[0]) in text
    assert "Start kosti again (on the Pi: sudo systemctl start kosti)" in text


@pytest.mark.parametrize("trick", ["absolute", "dot"])
def test_a_member_escaping_the_staging_folder_is_refused_before_anything_is_written(trick, table_files: Paths,
                                                                                      tmp_path: Path, capsys) -> None:
    """'kosti-backup//abs/path' joined onto the staging folder is the absolute path itself: refused, never
    written (restore runs as root), and nothing of the table changes."""
    good = _make(table_files, tmp_path)
    outside = tmp_path / "outside" / "planted"
    name = f"kosti-backup/{outside}" if trick == "absolute" else "kosti-backup/./kosti.toml"
    bad = tmp_path / f"{trick}.tar.gz"
    with tarfile.open(good) as src, tarfile.open(bad, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
        for m in src.getmembers():
            tar.addfile(m, src.extractfile(m))
    with tarfile.open(bad) as tar:
        assert tar.getnames()[0] == name, "tarfile keeps the name as crafted"
    before = _digest(table_files.db.parent, table_files.config)
    capsys.readouterr()
    assert main(["restore", str(bad), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 2
    err = capsys.readouterr().err
    assert "not a kosti backup" in err and "nothing was changed" in err and err.count("\n") == 1, err
    assert not outside.exists() and not outside.parent.exists()
    assert _digest(table_files.db.parent, table_files.config) == before


def test_restore_keeps_the_replaced_models_and_frames_beside_them(table_files: Paths, tmp_path: Path,
                                                                   capsys) -> None:
    """A model version taught (and frames saved) after the backup are not deleted by a restore: the replaced
    folders are kept as ``models.before-restore-…`` / ``frames.before-restore-…`` beside them, and the CLI says
    where."""
    frames = table_files.frames
    assert frames is not None
    (frames / "g1").mkdir(parents=True)
    (frames / "g1" / "a.jpg").write_bytes(b"old-frame")
    assert table_files.config is not None
    table_files.config.write_text(f'[server]\npin = "482913"\n[storage]\nframes_dir = "{frames}"\n')
    s = Store(table_files.db)
    TableService(s).session.new_game(["Ann", "Boris"])
    s.close()
    out = tmp_path / "b.tar.gz"
    assert main(["backup", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config), "--frames"]) == 0
    (table_files.models / "v2").mkdir()
    (table_files.models / "v2" / "detector.onnx").write_bytes(b"newer-model")
    (frames / "g2").mkdir()
    (frames / "g2" / "b.jpg").write_bytes(b"newer-frame")
    capsys.readouterr()
    assert main(["restore", str(out), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 0
    text = capsys.readouterr().out
    assert not (table_files.models / "v2").exists() and not (frames / "g2").exists(), "the backup's data is in place"
    [old_models] = table_files.models.parent.glob("models.before-restore-*")
    [old_frames] = frames.parent.glob("frames.before-restore-*")
    assert (old_models / "v2" / "detector.onnx").read_bytes() == b"newer-model"
    assert (old_models / "v1" / "detector.onnx").read_bytes() == b"onnx-bytes" * 100
    assert (old_frames / "g2" / "b.jpg").read_bytes() == b"newer-frame"
    assert f"the replaced model registry is kept as {old_models}" in text, text
    assert f"the replaced frames is kept as {old_frames}" in text, text
    assert not list(table_files.db.parent.glob(".kosti-restore-*"))


def test_backup_streams_the_database_instead_of_reading_it_into_memory(table_files: Paths, tmp_path: Path) -> None:
    """A big database is copied into the archive in chunks: Python's memory peak stays far below its size."""
    import tracemalloc

    _make(table_files, tmp_path)
    c = sqlite3.connect(table_files.db)
    c.execute("CREATE TABLE ballast (b BLOB)")
    c.execute("INSERT INTO ballast VALUES (zeroblob(24 * 1024 * 1024))")
    c.commit()
    c.close()
    out = tmp_path / "big.tar.gz"
    tracemalloc.start()
    try:
        make_backup(table_files, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB while backing up a 24 MiB database"
    checked = check_archive(out, tmp_path / "x")  # and the sums written while streaming are right
    assert checked.manifest["files"]["kosti.db"]["size"] == (tmp_path / "x" / "kosti.db").stat().st_size > 24 * 2**20


def test_a_manifest_over_one_mib_is_read_whole(table_files: Paths, tmp_path: Path, capsys) -> None:
    """Thousands of frames make a manifest over 1 MiB: restore reads it whole (it was cut at 1 MiB and the
    archive called damaged)."""
    good = _make(table_files, tmp_path)
    big = tmp_path / "big-manifest.tar.gz"
    with tarfile.open(good) as src, tarfile.open(big, mode="w:gz") as tar:
        for m in src.getmembers():
            body = src.extractfile(m).read()
            if m.name.endswith("manifest.json"):
                body = json.dumps({**json.loads(body), "note": "x" * (3 * 2**20 // 2)}, indent=1).encode()
                m.size = len(body)
            tar.addfile(m, io.BytesIO(body))
    capsys.readouterr()
    assert main(["restore", str(big), "--db", str(table_files.db), "--registry", str(table_files.models),
                 "--config", str(table_files.config)]) == 0, capsys.readouterr().err


def test_make_backup_never_writes_a_manifest_restore_cannot_read(table_files: Paths, tmp_path: Path,
                                                                 monkeypatch) -> None:
    import kosti.backup as backup

    _make(table_files, tmp_path)
    monkeypatch.setattr(backup, "MAX_MANIFEST_BYTES", 200)
    out = tmp_path / "over.tar.gz"
    with pytest.raises(backup.BackupError, match="too many files for one backup"):
        make_backup(table_files, out)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".over.tar.gz")]
