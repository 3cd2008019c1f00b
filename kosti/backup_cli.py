"""``kosti backup``, ``kosti restore`` and ``kosti pin``: the appliance's own commands (:mod:`kosti.backup`).

* ``kosti backup OUT.tar.gz`` — the games database (SQLite's online backup API, safe while the dashboard runs),
  the model registry and the configuration in one archive; ``--frames`` adds the saved frames.
  ``kosti backup --dir DIR --keep N`` names the archive by the time and keeps the newest N (the daily timer of
  ``deploy/install.sh``).
* ``kosti restore IN.tar.gz`` — checks the archive completely, then swaps the data in; refuses a damaged or
  foreign archive, or a running dashboard, with one line and changes nothing (``--no-config`` keeps the current
  configuration).
* ``kosti pin`` — the control PIN phones need (``[server] pin``), with the addresses to open and a QR code in the
  terminal (``--qr``).

Paths: ``--db`` (else ``[storage] db`` of the configuration), ``--registry`` (else the model registry's default,
:func:`kosti.registry.default_root`), ``--config`` (else the file ``kosti run`` would read).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kosti.engine.plurals import count


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``backup``, ``restore`` and ``pin`` to the ``kosti`` command line."""
    b = subparsers.add_parser("backup", help="games, taught reader versions and the config in one .tar.gz "
                                             "(safe while the dashboard runs)",
                              description="Back up the games database (SQLite online backup), the model registry "
                                          "and the configuration into one archive.")
    b.add_argument("out", nargs="?", type=Path, help="archive to write (OUT.tar.gz)")
    b.add_argument("--dir", type=Path, default=None, metavar="DIR",
                   help="write kosti-backup-YYYYmmdd-HHMMSS.tar.gz into DIR instead, keeping the newest --keep")
    b.add_argument("--keep", type=int, default=7, metavar="N", help="with --dir: archives to keep (default 7)")
    b.add_argument("--frames", action="store_true", help="also the saved frames of corrected throws (large)")
    _paths_options(b)
    b.set_defaults(func=_backup)
    r = subparsers.add_parser("restore", help="put a kosti backup back (stop the dashboard first)",
                              description="Restore a kosti backup: checked completely first; the current data stays "
                                          "until the new data is in place.")
    r.add_argument("archive", type=Path, help="a .tar.gz made by kosti backup")
    r.add_argument("--no-config", action="store_true", help="keep the current configuration file")
    _paths_options(r)
    r.set_defaults(func=_restore)
    p = subparsers.add_parser("pin", help="show the control PIN and the address phones open (--qr: a QR code)",
                              description="Show the dashboard's control PIN ([server] pin) and its address.")
    p.add_argument("--qr", action="store_true", help="also draw the QR code (address with the PIN) in the terminal")
    p.add_argument("--config", type=Path, default=None, metavar="PATH", help="kosti.toml (as kosti run finds it)")
    p.set_defaults(func=_pin)


def _paths_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, metavar="PATH", help="kosti.toml (as kosti run finds it)")
    p.add_argument("--db", type=Path, default=None, help="SQLite database (default: storage.db of the config)")
    p.add_argument("--registry", type=Path, default=None, metavar="DIR",
                   help="model registry folder (default: the data folder's models/)")


def _paths(args: argparse.Namespace) -> object:
    from kosti.backup import Paths
    from kosti.config import default_config_path, load_config
    from kosti.registry import default_root

    cfg = load_config(args.config)
    config = Path(args.config) if args.config is not None else default_config_path()
    return Paths(db=Path(args.db).expanduser() if args.db else cfg.storage.db_path,
                 models=Path(args.registry).expanduser() if args.registry else default_root(),
                 config=config, frames=cfg.storage.frames_path)


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB"


def _backup(args: argparse.Namespace) -> int:
    from kosti.backup import BackupError, Paths, backup_to_dir, make_backup

    if (args.out is None) == (args.dir is None):
        raise BackupError("give the archive to write (OUT.tar.gz) or --dir DIR (not both)")
    paths = _paths(args)
    assert isinstance(paths, Paths)
    if args.dir is not None:
        out, manifest, deleted = backup_to_dir(paths, Path(args.dir), args.keep, frames=args.frames)
    else:
        out, manifest, deleted = Path(args.out), make_backup(paths, Path(args.out), frames=args.frames), []
    size = out.stat().st_size
    parts = ["database"] + [k for k in ("models", "kosti.toml", "frames")
                            if any(f == k or f.startswith(k + "/") for f in manifest.files)]
    print(f"backup {out} ({_size(size)}): {count(manifest.games, 'game')}, {count(manifest.actions, 'action')}; "
          f"{', '.join(parts)}" + (f"; {len(deleted)} older removed" if deleted else ""))
    return 0


def _restore(args: argparse.Namespace) -> int:
    from kosti.backup import Paths, restore

    paths = _paths(args)
    assert isinstance(paths, Paths)
    result = restore(Path(args.archive), paths, with_config=not args.no_config)
    m = result.manifest
    print(f"restored {args.archive} (made {m.get('created_at')} on {m.get('host')}, {count(int(m.get('games') or 0), 'game')}): "
          f"{', '.join(result.restored)}.")
    for kept in result.kept:
        what = "configuration"
        for part, label in ((paths.db, "database"), (paths.models, "model registry"), (paths.frames, "frames")):
            if part is not None and (kept.name == Path(part).name or kept.name.startswith(Path(part).name + ".")):
                what = label
                break
        print(f"the replaced {what} is kept as {kept}")
    print("Start kosti again (on the Pi: sudo systemctl start kosti)")
    return 0


def _pin(args: argparse.Namespace) -> int:
    from kosti.config import load_config
    from kosti.dashboard.join import join_urls, terminal_qr

    cfg = load_config(args.config)
    server = cfg.server
    urls = join_urls(server.host, server.port, server.pin)
    if server.pin:
        print(f"PIN: {server.pin}   (server.pin; controls need it, watching does not)")
    elif urls.lan:
        print("PIN: none set: the dashboard picks a random one at every start and prints it in its log "
              "(journalctl -u kosti | grep -i pin); set server.pin to keep one")
    else:
        print("PIN: none needed: the dashboard listens on this machine only (server.host)")
    print(f"Watch:   {urls.watch}")
    if urls.control != urls.watch:
        print(f"Control: {urls.control}")
    if urls.name_url:
        print(f"Also:    {urls.name_url}")
    if args.qr:
        sys.stdout.write(terminal_qr(urls.control))
    return 0
