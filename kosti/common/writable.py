"""The one check for a path kosti writes to: a folder or a file it cannot create or write is one clear line
(exit 2, ``../shared/docs/cli.md``) before any work is done, not a traceback after it.

Every command that writes checks its paths here first: the games database and its lock (``kosti demo`` /
``run --db``, ``[storage]``), ``kosti eval --plots`` and ``--fit-temperature``, ``kosti stats --plot``,
``kosti datasets synth / prepare / clips --out``, ``kosti capture --out``, ``kosti train --out / --work /
--registry``, ``kosti models … --registry``, ``kosti config init --path``. A folder is created when missing
(with its parents) and then proven writable by creating and removing a file in it, so a read-only file system,
a folder of another user, a path under a regular file (``ENOTDIR``) or a full disk are all found before the
command starts. ``kosti play --save`` says it in its own words (the rules engine imports nothing else).

:func:`describe_os_error` words an :class:`OSError` the same way; ``kosti.cli.main`` uses it as the last net
for a write that fails later (the disk fills up during a run): one line and exit 2, never a traceback.
Standard library only (the Raspberry Pi's lean runtime imports it).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

#: ``errno`` values that mean "this path cannot be written here" (the user's folder, not a bug of kosti).
UNWRITABLE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR,
                               errno.ENOSPC, errno.EDQUOT, errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP})


class UnwritablePath(Exception):
    """A path kosti must write to cannot be created or written: exit code 2 with this one-line message."""

    exit_code = 2


def _reason(exc: OSError) -> str:
    """The OS's words for ``exc`` (``Read-only file system``, ``Not a directory`` …), lower-cased first letter."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def describe_os_error(exc: OSError) -> str:
    """One line for an OS error on a path: ``"/x/plots/matrix.png: read-only file system"`` (the path when the OS
    named one, then its reason; a second path for a rename or a copy)."""
    paths = [str(f) for f in (exc.filename, exc.filename2) if f is not None]
    return f"{' -> '.join(paths)}: {_reason(exc)}" if paths else _reason(exc)


def writable_dir(path: str | os.PathLike[str], what: str, create: bool = True) -> Path:
    """Make sure ``path`` is a folder kosti can write in: create it (and its parents) when missing, then create
    and remove a probe file in it.

    Args:
        path: the folder (``~`` expanded).
        what: what it is for the user, named in the error (``"--out folder"``).
        create: ``False``: create nothing (a command that must leave no folder behind when a later check fails):
            the nearest existing folder on the path must be a folder this user may write in (``os.access``,
            which also reports a read-only file system).

    Returns:
        The folder's path, ``~`` expanded.

    Raises:
        UnwritablePath: a file is in the way, the folder cannot be created, or nothing can be written in it
            (read-only file system, permissions, full disk) — one line naming ``what``, the path and the reason.
    """
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise UnwritablePath(f"cannot write {what} {p}: it is a file, not a folder")
    if not create:
        near = next(a for a in (p, *p.parents) if a.exists())
        if not near.is_dir():
            raise UnwritablePath(f"cannot create {what} {p}: {near} is a file, not a folder")
        if not os.access(near, os.W_OK | os.X_OK):
            why = "read-only file system" if _read_only_fs(near) else "permission denied"
            raise UnwritablePath(f"cannot {'write in' if near == p else 'create'} {what} {p}: {why}")
        return p
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UnwritablePath(f"cannot create {what} {p}: {_reason(exc)}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".kosti-write-check-", dir=p)
    except OSError as exc:
        raise UnwritablePath(f"cannot write in {what} {p}: {_reason(exc)}") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:  # pragma: no cover - a folder we just wrote in refuses the delete: leave the empty file
        pass
    return p


def _read_only_fs(path: Path) -> bool:
    """Whether ``path`` lies on a file system mounted read-only (``statvfs``'s ``ST_RDONLY``)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def writable_file(path: str | os.PathLike[str], what: str) -> Path:
    """Make sure kosti can create or replace the file ``path``: its folder passes :func:`writable_dir` (created
    when missing) and an existing file may be written. Nothing is written to the file itself.

    Args:
        path: the file (``~`` expanded).
        what: what it is for the user, named in the error (``"database"``, ``"--plot file"``).

    Returns:
        The file's path, ``~`` expanded.

    Raises:
        UnwritablePath: the path is a folder, its folder cannot be created or written, or the file is
            read-only — one line naming ``what``, the path and the reason.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise UnwritablePath(f"cannot write {what} {p}: it is a folder, not a file")
    writable_dir(p.parent, f"the {what}'s folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise UnwritablePath(f"cannot write {what} {p}: the file is read-only")
    return p
