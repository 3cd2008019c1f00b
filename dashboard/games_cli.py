"""``kosti games export`` and ``kosti games import``: the dashboard's games as files and back
(:mod:`kosti.dashboard.export`).

* ``kosti games export ID [--format json|csv|zip] [--out FILE]`` — one game: the recorded-game JSON of ``cli.md``
  (``kosti replay`` / ``kosti advise`` read it), the CSV score sheet, or a zip of both with the throws' photos;
  on stdout without ``--out`` (not the zip).
* ``kosti games export --all [--format json|csv|zip] --out FOLDER`` — every game, one file each
  (``kosti-game-<id>.<ext>``).
* ``kosti games import FILE`` — a recorded game (JSON, or an exported zip) into the database, validated by replaying
  it; a file the engine refuses changes nothing (exit 2, one line naming the event).
* ``kosti games list`` — the stored games, one line each.

The database is ``--db``, else ``[storage] db`` of the configuration (``--config``), as ``kosti run`` finds it.
The dashboard may be running: exports read a consistent snapshot and an import is one transaction.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kosti.engine.plurals import count_en

FORMATS = ("json", "csv", "zip")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``games`` (``export``, ``import``, ``list``) to the ``kosti`` command line."""
    p = subparsers.add_parser("games", help="export the dashboard's games (JSON for kosti replay, CSV, zip) or import one",
                              description="The dashboard's stored games as files, and a recorded game back in.")
    sub = p.add_subparsers(dest="games_command", metavar="ACTION", required=True)
    ex = sub.add_parser("export", help="a game (or --all) as recorded-game JSON, a CSV score sheet or a zip with photos")
    ex.add_argument("game", nargs="?", type=int, help="the game's id (kosti games list)")
    ex.add_argument("--all", action="store_true", help="every stored game, one file each in --out FOLDER")
    ex.add_argument("--format", choices=FORMATS, default="json",
                    help="json: the recorded game of cli.md (kosti replay, kosti advise); csv: a row per turn, a column "
                         "per player; zip: both and the throws' photos (default json)")
    ex.add_argument("--out", type=Path, default=None, metavar="PATH",
                    help="file to write (a folder with --all); default: stdout (not for zip)")
    _db_options(ex)
    ex.set_defaults(func=_export)
    im = sub.add_parser("import", help="put a recorded game (JSON or an exported zip) into the database")
    im.add_argument("file", type=Path, help="the recorded game (cli.md), or a zip from kosti games export")
    _db_options(im)
    im.set_defaults(func=_import)
    ls = sub.add_parser("list", help="the stored games, newest first")
    ls.add_argument("--json", action="store_true", help="one JSON document")
    _db_options(ls)
    ls.set_defaults(func=_list)


def _db_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, default=None, help="SQLite database (default: storage.db of the config)")
    p.add_argument("--config", type=Path, default=None, metavar="PATH", help="kosti.toml (as kosti run finds it)")


class GamesCliError(Exception):
    """Bad input for ``kosti games`` (exit 2, one line)."""

    exit_code = 2


def _db_path(args: argparse.Namespace, must_exist: bool = True) -> Path:
    """``--db``, else the configuration's ``[storage] db``; :class:`GamesCliError` when it is not there."""
    if args.db is not None:
        db = Path(args.db).expanduser()
    else:
        from kosti.config import load_config

        db = load_config(args.config).storage.db_path
    if must_exist and not db.is_file():
        raise GamesCliError(f"no database at {db} (give --db PATH, or --config of the table)")
    return db


def _open(args: argparse.Namespace, must_exist: bool = True) -> Any:
    from kosti.dashboard.store import Store

    return Store(_db_path(args, must_exist))


def _content(store: Any, game_id: int, fmt: str) -> bytes:
    from kosti.dashboard.export import game_csv, game_record, game_zip

    if fmt == "csv":
        return game_csv(store, game_id).encode("utf-8")
    if fmt == "zip":
        return game_zip(store, game_id)
    return (json.dumps(game_record(store, game_id), ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as exc:
        raise GamesCliError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _export(args: argparse.Namespace) -> int:
    if args.all == (args.game is not None):
        raise GamesCliError("give a game id or --all (not both)")
    if args.all and args.out is None:
        raise GamesCliError("--all writes one file per game: give --out FOLDER")
    if args.format == "zip" and args.out is None:
        raise GamesCliError("a zip is written to a file: give --out FILE.zip")
    store = _open(args)
    try:
        if args.all:
            out = Path(args.out)
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise GamesCliError(f"{out}: cannot make the folder ({exc.strerror or exc})") from None
            ids = [g.id for g in store.list_games(limit=1_000_000)]
            for gid in ids:
                _write(out / f"kosti-game-{gid}.{args.format}", _content(store, gid, args.format))
            print(f"{count_en(len(ids), 'game')} written to {out}", file=sys.stderr)
            return 0
        if store.get_game(args.game) is None:
            raise GamesCliError(f"no game {args.game} in {store.path} (kosti games list)")
        data = _content(store, args.game, args.format)
    finally:
        store.close()
    if args.out is None:
        sys.stdout.write(data.decode("utf-8").removeprefix("\ufeff"))  # the byte-order mark is for files
    else:
        _write(Path(args.out), data)
        print(f"game {args.game} written to {args.out}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from kosti.dashboard.export import ExportError, import_game, read_game_file

    path = Path(args.file)
    try:
        if not path.is_file():
            raise GamesCliError(f"{path}: no such file")
        if path.stat().st_size > 64 * 2**20:
            raise GamesCliError(f"{path}: larger than 64 MB: not a game file")
        data = path.read_bytes()
    except OSError as exc:
        raise GamesCliError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        doc = read_game_file(data, str(path))
        from kosti.dashboard.export import plan_import

        plan_import(doc)  # refused before the database is even opened
    except ExportError as exc:
        raise GamesCliError(f"{path}: {exc}".replace(f"{path}: {path}: ", f"{path}: ")) from None
    store = _open(args, must_exist=False)
    try:
        gid = import_game(store, doc)
        g = store.get_game(gid)
    finally:
        store.close()
    assert g is not None
    print(f"imported as game {gid} ({', '.join(g.players)}; {g.status}) into {store.path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from kosti.dashboard.history import games

    store = _open(args)
    try:
        rows = games(store, None, limit=1_000_000)
    finally:
        store.close()
    if args.json:
        print(json.dumps({"games": [{k: r[k] for k in ("id", "players", "rules", "status", "winner", "scores",
                                                        "turns", "created_at")} for r in rows]}, ensure_ascii=False))
        return 0
    for r in rows:
        scores = ", ".join(f"{n} {s}" for n, s in r["scores"].items())
        print(f"{r['id']:>5}  {r['status']:<9}  {r['rules'].get('preset', '')}  {scores}")
    return 0
