"""Backup and restore of a table: the games database, the model registry (the taught reader versions) and the
configuration, in one ``.tar.gz`` (``kosti backup`` / ``kosti restore``, :mod:`kosti.backup_cli`).

Archive layout (format :data:`FORMAT`), every member under ``kosti-backup/``:

* ``manifest.json`` — ``{"format", "created_at" (ISO 8601, UTC), "kosti_version", "host", "schema_version",
  "games", "actions", "files": {relative path: {"sha256", "size"}}}``;
* ``kosti.db`` — the database, copied with SQLite's online backup API (:meth:`sqlite3.Connection.backup`): a
  consistent snapshot even while the dashboard writes, WAL pages included, never a file copy of a live WAL
  database (which can miss committed transactions still in ``kosti.db-wal`` or catch a page half written);
* ``models/…`` — the model registry folder (:func:`kosti.registry.default_root`), when it exists;
* ``kosti.toml`` — the configuration file, when there is one (it holds the PIN: the archive is written mode 600);
* ``frames/…`` — the saved frames of corrected throws, only with ``frames=True``.

Restore checks everything before it touches anything: the archive must be a complete gzip tar whose members
are plain files and folders under ``kosti-backup/`` (no links, no absolute paths, no ``..``), carry a manifest
of this format, and match the manifest's sizes and SHA-256 sums exactly; the database must open as a kosti
database (integrity check, a schema this kosti knows). Only then, holding the dashboard's database lock (a
running dashboard refuses the restore), the current data is moved aside, the new data moved in by rename, and
the old data deleted; any failure while swapping moves the old data back. A refused archive raises
:class:`BackupError` (``exit_code`` 2) with one line, and nothing has changed.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import io
import json
import os
import shutil
import socket
import sqlite3
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

#: The archive format this kosti writes and reads.
FORMAT = "kosti-backup/1"
#: The one top folder of every member.
TOP = "kosti-backup"
#: File names of :func:`backup_to_dir` (``kosti-backup-YYYYmmdd-HHMMSS.tar.gz``); :func:`prune` keeps the newest.
STAMP_PREFIX = "kosti-backup-"
#: The largest archive member restore accepts (a model registry file or the database), bytes.
MAX_MEMBER_BYTES = 8 * 2**30
#: The largest ``manifest.json`` restore reads (about 150 bytes a file: some 400,000 files); make_backup never writes
#: a larger one.
MAX_MANIFEST_BYTES = 64 * 2**20


class BackupError(RuntimeError):
    """A backup cannot be made, or an archive cannot be restored: ``exit_code`` 2, one line saying why; nothing
    has changed."""

    exit_code = 2


@dataclass
class Paths:
    """Where a table keeps what a backup holds.

    Attributes:
        db: the games database (``[storage] db``). models: the model registry folder. config: the configuration
        file, or None (no file: defaults). frames: the saved frames folder (``[storage] frames_dir``), or None.
    """

    db: Path
    models: Path
    config: Path | None = None
    frames: Path | None = None


@dataclass
class Manifest:
    """The manifest of an archive (see the module docstring)."""

    created_at: str
    kosti_version: str
    host: str
    schema_version: int
    games: int
    actions: int
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The manifest as written into ``manifest.json``."""
        return {"format": FORMAT, "created_at": self.created_at, "kosti_version": self.kosti_version,
                "host": self.host, "schema_version": self.schema_version, "games": self.games,
                "actions": self.actions, "files": self.files}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot_database(db: Path, out: Path) -> tuple[int, int, int]:
    """Copy the live database ``db`` into the new file ``out`` with SQLite's online backup API, in one step (one
    read transaction: a consistent snapshot, the WAL's committed pages included, while writers go on), then turn
    the copy into a single self-contained file (``journal_mode=DELETE``) and check it (``integrity_check``).

    Returns ``(schema_version, games, actions)`` of the copy. Raises :class:`BackupError` when ``db`` is missing or
    is not a readable SQLite database."""
    if not db.is_file():
        raise BackupError(f"no database at {db} (give --db PATH, or --config of the table)")
    try:
        # A plain connection, as the sqlite3 shell's .backup: a read-only one cannot open a WAL database whose
        # -shm file is missing (the dashboard not running). It only reads; SQLite removes any -wal/-shm it made.
        src = sqlite3.connect(db, timeout=30.0)
        try:
            dst = sqlite3.connect(out)
            try:
                src.backup(dst)
                dst.execute("PRAGMA journal_mode=DELETE")
                problems = [r[0] for r in dst.execute("PRAGMA integrity_check(3)")]
                if problems != ["ok"]:
                    raise BackupError(f"the database {db} is damaged ({'; '.join(map(str, problems))}): "
                                      "no backup made")
                version = int(dst.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
                games = int(dst.execute("SELECT COUNT(*) FROM games").fetchone()[0])
                actions = int(dst.execute("SELECT COUNT(*) FROM actions").fetchone()[0])
            finally:
                dst.close()
        finally:
            src.close()
    except (sqlite3.Error, TypeError, ValueError) as exc:
        raise BackupError(f"cannot back up the database {db}: {str(exc).splitlines()[0]}") from None
    return version, games, actions


def _add_tree(tar: tarfile.TarFile, folder: Path, arc: str, files: dict[str, dict[str, Any]]) -> None:
    """Add every regular file under ``folder`` as ``TOP/arc/…`` (links and special files are left out)."""
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = f"{arc}/{path.relative_to(folder).as_posix()}"
        _add_file(tar, path, rel, files)


class _HashingReader:
    """``fh`` as tarfile reads it, hashing and counting every byte handed over."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def read(self, n: int = -1, /) -> bytes:
        data = self.fh.read(n)
        self.sha.update(data)
        self.size += len(data)
        return data


def _add_file(tar: tarfile.TarFile, path: Path, rel: str, files: dict[str, dict[str, Any]]) -> None:
    # Streamed in chunks (a database of gigabytes is never held in memory) and read once: the sum and the member
    # are the same bytes.
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        info = tarfile.TarInfo(f"{TOP}/{rel}")
        info.size, info.mode, info.mtime = st.st_size, 0o600, int(st.st_mtime)
        reader = _HashingReader(fh)
        tar.addfile(info, reader)
    files[rel] = {"sha256": reader.sha.hexdigest(), "size": reader.size}


def make_backup(paths: Paths, out: Path, *, frames: bool = False) -> Manifest:
    """Write a backup of ``paths`` to ``out`` (a ``.tar.gz``, mode 600; written beside it first and renamed, so
    ``out`` is never half a file). ``frames``: also the saved frames folder.

    Returns the :class:`Manifest`. Raises :class:`BackupError` (no database, an unreadable database or file,
    ``out`` cannot be written)."""
    from kosti import __version__
    from kosti.common.writable import UnwritablePath, writable_file

    out = Path(out)
    try:  # the output's folder first: a path under a file or on /proc is the archive's problem, not the database's
        writable_file(out, "backup")
    except UnwritablePath as exc:
        raise BackupError(str(exc)) from None
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    snap = out.with_name(f".{out.name}.{os.getpid()}.db")
    try:
        version, games, actions = snapshot_database(paths.db, snap)
        manifest = Manifest(created_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                            kosti_version=__version__, host=socket.gethostname(), schema_version=version,
                            games=games, actions=actions)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            _add_file(tar, snap, "kosti.db", manifest.files)
            if paths.models.is_dir():
                _add_tree(tar, paths.models, "models", manifest.files)
            if paths.config is not None and paths.config.is_file():
                _add_file(tar, paths.config, "kosti.toml", manifest.files)
            if frames and paths.frames is not None and paths.frames.is_dir():
                _add_tree(tar, paths.frames, "frames", manifest.files)
            body = json.dumps(manifest.to_json(), indent=1).encode("utf-8")
            if len(body) > MAX_MANIFEST_BYTES:
                raise BackupError(f"too many files for one backup ({len(manifest.files)}; its manifest would be "
                                  f"over {MAX_MANIFEST_BYTES // 2**20} MB): no backup made")
            info = tarfile.TarInfo(f"{TOP}/manifest.json")
            info.size, info.mode = len(body), 0o600
            tar.addfile(info, io.BytesIO(body))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        # The user's path, never the temporary file beside it (``.x.tar.gz.123.tmp``).
        raise BackupError(f"cannot write the backup {out}: {(exc.strerror or str(exc)).lower()}") from None
    finally:
        for p in (tmp, snap):
            p.unlink(missing_ok=True)
    return manifest


def backup_to_dir(paths: Paths, folder: Path, keep: int, *, frames: bool = False,
                  now: _dt.datetime | None = None) -> tuple[Path, Manifest, list[Path]]:
    """A backup named ``kosti-backup-YYYYmmdd-HHMMSS.tar.gz`` (UTC) in ``folder`` (made if missing), then
    :func:`prune` to the newest ``keep``. Returns ``(archive, manifest, deleted)``. The daily timer of
    ``deploy/install.sh`` runs this (``kosti backup --dir /var/lib/kosti/backups --keep N``)."""
    if keep < 1:
        raise BackupError(f"--keep must be at least 1, got {keep}")
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o750)
    except OSError as exc:
        raise BackupError(f"cannot make the backup folder {folder}: {exc.strerror or exc}") from None
    stamp = (now or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%d-%H%M%S")
    out = folder / f"{STAMP_PREFIX}{stamp}.tar.gz"
    manifest = make_backup(paths, out, frames=frames)
    return out, manifest, prune(folder, keep)


def prune(folder: Path, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` archives named ``kosti-backup-*.tar.gz`` in ``folder`` (the name's
    time stamp orders them); other files are never touched. Returns the deleted paths."""
    archives = sorted(p for p in folder.glob(f"{STAMP_PREFIX}*.tar.gz") if p.is_file())
    old = archives[:-keep] if keep > 0 else archives
    for p in old:
        p.unlink(missing_ok=True)
    return old


# ---------------------------------------------------------------------------------------------- restore
@dataclass
class Checked:
    """An archive that passed :func:`check_archive`, extracted into ``staging`` (``staging/kosti.db``, …)."""

    manifest: dict[str, Any]
    staging: Path

    def has(self, rel: str) -> bool:
        """Whether the archive holds ``rel`` (a file, or a folder of files)."""
        return any(f == rel or f.startswith(rel + "/") for f in self.manifest["files"])


def _refuse(archive: Path, why: str) -> BackupError:
    return BackupError(f"{archive}: {why}; nothing was changed")


def check_archive(archive: Path, staging: Path) -> Checked:
    """Read ``archive`` completely, check it against its manifest and extract it into the new folder
    ``staging`` (see the module docstring for what is checked). Raises :class:`BackupError` naming the archive and
    the first fault; ``staging`` may then hold a part and is the caller's to delete."""
    try:
        tar = tarfile.open(archive, mode="r:gz")
    except FileNotFoundError:
        raise BackupError(f"{archive}: no such file") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise _refuse(archive, f"not a kosti backup (not a gzip tar archive: {exc})") from None
    staging.mkdir(mode=0o700, parents=True)
    seen: dict[str, dict[str, Any]] = {}
    manifest: dict[str, Any] | None = None
    try:
        with tar:
            for m in tar:
                name = m.name
                parts = name.split("/")
                # "kosti-backup//tmp/x" would make ``staging / "/tmp/x"`` == /tmp/x: every part must be a plain name
                if name.startswith("/") or parts[0] != TOP or any(p in ("", ".", "..") for p in parts[1:]):
                    raise _refuse(archive, f"not a kosti backup (member {name!r} outside {TOP}/)")
                if m.isdir():
                    continue
                if not m.isfile():
                    raise _refuse(archive, f"not a kosti backup (member {name!r} is a link or a device)")
                if m.size > MAX_MEMBER_BYTES:
                    raise _refuse(archive, f"member {name!r} is too large")
                rel = "/".join(parts[1:])
                if not rel or not (staging / rel).resolve().is_relative_to(staging.resolve()):
                    raise _refuse(archive, f"not a kosti backup (member {name!r} outside {TOP}/)")
                fh = tar.extractfile(m)
                assert fh is not None  # a regular file
                if rel == "manifest.json":
                    try:
                        body = fh.read(MAX_MANIFEST_BYTES + 1)
                        if len(body) > MAX_MANIFEST_BYTES:
                            raise _refuse(archive, "manifest.json is too large")
                        manifest = json.loads(body.decode("utf-8"))
                    except (ValueError, UnicodeDecodeError):
                        raise _refuse(archive, "damaged manifest.json") from None
                    continue
                seen[rel] = _extract(fh, staging / rel)
    except BackupError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise _refuse(archive, f"damaged archive ({str(exc) or type(exc).__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise _refuse(archive, f"not a kosti backup (no manifest of format {FORMAT}"
                               f"{'' if found is None else f'; it says {found!r}'})")
    files = manifest.get("files")
    if not isinstance(files, dict) or "kosti.db" not in files:
        raise _refuse(archive, "the manifest lists no database")
    if set(files) != set(seen):
        diff = sorted(set(files) ^ set(seen))
        raise _refuse(archive, f"damaged archive (files and manifest differ: {diff[0]})")
    for rel, want in files.items():
        if not isinstance(want, dict) or want.get("sha256") != seen[rel]["sha256"] or \
                want.get("size") != seen[rel]["size"]:
            raise _refuse(archive, f"damaged archive ({rel} does not match its checksum)")
    return Checked(manifest, staging)


def _extract(fh: IO[bytes], dest: Path) -> dict[str, Any]:
    """Copy one member to ``dest`` (mode 600), returning its ``{"sha256", "size"}``."""
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    h, size = hashlib.sha256(), 0
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return {"sha256": h.hexdigest(), "size": size}


def _check_database(archive: Path, db: Path) -> None:
    """The restored database must open as a kosti database (the dashboard's own checks and migrations)."""
    from kosti.dashboard.store import Store, StoreError

    try:
        Store(db).close()
    except StoreError as exc:
        raise _refuse(archive, f"its database cannot be used: {exc.en}") from None


@contextmanager
def database_lock(db: Path) -> Iterator[None]:
    """Hold the lock a running dashboard holds on ``db`` (``<db>.lock``, :func:`kosti.dashboard.cli._lock_database`);
    :class:`BackupError` when a dashboard holds it."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(db.name + ".lock"), "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise BackupError(f"the dashboard is running on {db}: stop it first (sudo systemctl stop kosti), "
                              "then restore; nothing was changed") from None
        yield


def _owner_of(folder: Path) -> tuple[int, int] | None:
    """``(uid, gid)`` of ``folder`` when running as root (restored files get the data folder's owner: the service's
    user), else None."""
    if os.geteuid() != 0 or not folder.exists():
        return None
    st = folder.stat()
    return st.st_uid, st.st_gid


def _chown_tree(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is None:
        return
    os.chown(path, *owner)
    if path.is_dir():
        for p in path.rglob("*"):
            os.chown(p, *owner)


@dataclass
class RestoreResult:
    """What :func:`restore` put in place: the manifest, and which parts (``database``, ``models``, ``config``,
    ``frames``)."""

    manifest: dict[str, Any]
    restored: list[str]
    #: The replaced database, configuration, model registry and frames folder, kept beside them as
    #: ``<name>.before-restore-YYYYmmdd-HHMMSS`` (``kosti.db.before-restore-…``, ``models.before-restore-…``).
    kept: list[Path] = field(default_factory=list)


def restore(archive: Path, paths: Paths, *, with_config: bool = True) -> RestoreResult:
    """Restore ``archive`` (made by :func:`make_backup`) over ``paths``: the database, the model registry, the
    configuration (unless ``with_config`` is false; refused when the archive has one and the file cannot be
    written) and the frames when the archive has them. Parts the archive does not hold are left as they are.

    Everything is checked first (:func:`check_archive`, the database opens); a running dashboard (its lock on the
    database) refuses the restore. The current database and configuration are first copied beside them
    (``kosti.db.before-restore-YYYYmmdd-HHMMSS``, :attr:`RestoreResult.kept`), so newer games are never lost. The
    current data stays in place until the new data is ready beside it; then each part is swapped by rename; the
    replaced model registry and frames folders are kept beside them (``models.before-restore-YYYYmmdd-HHMMSS``), so
    newer taught models are never lost; a failure while swapping puts the old parts back.
    Raises :class:`BackupError` (one line; nothing changed)."""
    archive = Path(archive)
    db = Path(paths.db)
    data_dir = db.parent
    data_dir.mkdir(parents=True, exist_ok=True)
    staging = data_dir / f".kosti-restore-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    keep_staging = False
    try:
        checked = check_archive(archive, staging / "new")
        new = checked.staging
        _check_database(archive, new / "kosti.db")
        for suffix in ("-wal", "-shm"):
            (new / f"kosti.db{suffix}").unlink(missing_ok=True)
        config = paths.config
        if with_config and checked.has("kosti.toml"):
            if config is None:
                raise _refuse(archive, "it holds a configuration but no --config path is known: give --config, "
                                       "or --no-config")
            target_dir = config.parent if config.parent.exists() else config.parent.parent
            if not os.access(target_dir, os.W_OK) or (config.exists() and not os.access(config, os.W_OK)):
                raise _refuse(archive, f"{config} cannot be written by this user: run as root (sudo), or restore "
                                       "without the configuration (--no-config)")
        owner = _owner_of(data_dir)
        with database_lock(db):
            plan: list[tuple[str, Path, Path]] = [("database", new / "kosti.db", db)]
            if checked.has("models"):
                plan.append(("models", new / "models", Path(paths.models)))
            if checked.has("frames") and paths.frames is not None:
                plan.append(("frames", new / "frames", Path(paths.frames)))
            if with_config and checked.has("kosti.toml") and config is not None:
                plan.append(("config", new / "kosti.toml", config))
            stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
            kept = _keep_replaced(db, config if any(n == "config" for n, _, _ in plan) else None, stamp)
            _swap(plan, staging / "old", owner)
            for i, (name, _src, dst) in enumerate(plan):
                aside = staging / "old" / str(i) / dst.name
                if name in ("models", "frames") and aside.exists():
                    copy = dst.with_name(f"{dst.name}.before-restore-{stamp}")
                    try:  # the replaced folder, kept beside the new one as the database is (newer models)
                        _move(aside, copy)
                    except OSError:
                        copy, keep_staging = aside, True  # the restore is done: keep it where it is, say where
                    kept.append(copy)
        return RestoreResult(checked.manifest, [name for name, _, _ in plan], kept)
    finally:
        if not keep_staging:
            shutil.rmtree(staging, ignore_errors=True)


def _keep_replaced(db: Path, config: Path | None, stamp: str) -> list[Path]:
    """Copy the database (SQLite online backup: its WAL's committed pages included) and the configuration that
    the restore is about to replace to ``<name>.before-restore-YYYYmmdd-HHMMSS`` beside them (mode 600: the
    config holds the PIN), so newer games are never lost to a restore. Returns the copies made."""
    kept: list[Path] = []
    try:
        if db.is_file():
            copy = db.with_name(f"{db.name}.before-restore-{stamp}")
            src = sqlite3.connect(db, timeout=30.0)
            try:
                dst = sqlite3.connect(copy)
                try:
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode=DELETE")
                finally:
                    dst.close()
            finally:
                src.close()
            os.chmod(copy, 0o600)
            kept.append(copy)
        if config is not None and config.is_file():
            copy = config.with_name(f"{config.name}.before-restore-{stamp}")
            shutil.copy2(config, copy)
            os.chmod(copy, 0o600)
            kept.append(copy)
    except (OSError, sqlite3.Error) as exc:
        for k in kept:
            k.unlink(missing_ok=True)
        raise BackupError(f"cannot keep a copy of the current data before restoring ({exc}); nothing "
                          "changed") from None
    return kept


def _move(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` (a copy and delete across file systems)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(src, dst)
    except OSError:
        shutil.move(str(src), str(dst))


def _swap(plan: list[tuple[str, Path, Path]], old: Path, owner: tuple[int, int] | None) -> None:
    """Move each target aside into ``old`` and its new version in; on any failure undo every step done so far."""
    old.mkdir(parents=True, exist_ok=True)
    done: list[tuple[Path, Path]] = []  # (from, to) moves, to undo in reverse
    try:
        for i, (_name, src, dst) in enumerate(plan):
            keep_mode = dst.stat().st_mode & 0o777 if dst.is_file() else None
            keep_owner = (dst.stat().st_uid, dst.stat().st_gid) if dst.exists() and os.geteuid() == 0 else owner
            extras = [Path(f"{dst}{s}") for s in ("-wal", "-shm")] if i == 0 else []
            for path in [dst, *extras]:
                if path.exists():
                    aside = old / str(i) / path.name
                    _move(path, aside)
                    done.append((path, aside))
            _move(src, dst)
            done.append((src, dst))
            if keep_mode is not None:
                os.chmod(dst, keep_mode)
            _chown_tree(dst, keep_owner)
    except OSError as exc:
        for a, b in reversed(done):
            try:
                _move(b, a)
            except OSError:
                pass
        raise BackupError(f"restoring failed while moving the data ({exc.strerror or exc}); the old data was put "
                          "back") from None
