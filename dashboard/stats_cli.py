"""``kosti stats``: the dice statistics of the stored games (:mod:`kosti.dashboard.stats`) on the command line.

A command-line module (the application top, docs/architecture.md): it may read the configuration for the
database's default place; the statistics themselves import nothing above the dashboard.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kosti.engine.plurals import count_en, noun

from .stats import collect, faces_png
from .store import Store


class StatsInputError(ValueError):
    """Bad input for ``kosti stats`` (exit 2)."""

    exit_code = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``kosti stats``."""
    p = subparsers.add_parser(
        "stats", help="dice statistics of the stored games: faces, fairness test, luck",
        description="Counts per face over every scored throw of the stored games, a chi-square "
                    "test of fairness with its p-value in plain words, and each player's luck "
                    "against the odds of the same rules. Exit 2: missing database or unknown game.")
    p.add_argument("--db", type=Path, default=None,
                   help="SQLite database (default: storage.db of the config, ~/.local/share/kosti/kosti.db)")
    p.add_argument("--config", type=Path, default=None, metavar="PATH", help="kosti.toml")
    p.add_argument("--game", type=int, action="append", default=None, metavar="ID",
                   help="only this game (repeatable); default: every stored game")
    p.add_argument("--plot", type=Path, default=None, metavar="FILE.png",
                   help="also write the face-frequency plot with its expected band")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run_stats)


def _db_path(args: argparse.Namespace) -> Path:
    if args.db is not None:
        return args.db
    from kosti.config import load_config

    return load_config(args.config).storage.db_path


def run_stats(args: argparse.Namespace) -> int:
    """Handler of ``kosti stats``: exit 0, or 2 for bad input."""
    path = _db_path(args)
    if path.is_dir():
        raise StatsInputError(f"{path}: is a folder; --db takes the database file itself (storage.db_path)")
    if not path.is_file():
        raise StatsInputError(f"{path}: no such database (play a game with kosti demo/run first)")
    import sqlite3

    try:
        store = Store(path)
    except sqlite3.DatabaseError as exc:
        raise StatsInputError(f"{path}: not a kosti database ({exc})") from None
    try:
        try:
            doc = collect(store, args.game)
        except KeyError as exc:
            raise StatsInputError(f"no game {exc.args[0]} in {path}") from None
    finally:
        store.close()
    if args.plot is not None:
        try:
            args.plot.write_bytes(faces_png(doc))
        except OSError as exc:
            raise StatsInputError(f"{args.plot}: cannot write ({exc.strerror or exc})") from None
    if args.json:  # the document, with the plot's path last when one was written
        out = doc if args.plot is None else {**doc, "plot": str(args.plot)}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 0
    cs = doc["chi_square"]
    print(f"{count_en(doc['games'], 'game')}, {doc['throws']} scored {noun(doc['throws'], 'throw')}, "
          f"{count_en(doc['dice'], 'die')}")
    print("faces 1-6: " + "  ".join(f"{i + 1}: {c}" for i, c in enumerate(doc["faces"]))
          + f"   (fair: {doc['expected']:.1f} each, 95 % band {doc['band'][0]:.0f}–{doc['band'][1]:.0f})")
    print(f"chi-square {cs['statistic']:.2f} (5 dof): {cs['verdict']}")
    print(f"хи-квадрат: {cs['verdict_ru']}")
    if not doc["per_die"]["available"]:
        print(f"per die: {doc['per_die']['note']}")
    for k, d in doc["per_die"]["dice"].items():
        print(f"die {k}: {d['counts']} — {d['chi_square']['verdict']}")
    for p in doc["players"]:
        ppt = "—" if p["points_per_turn"] is None else f"{p['points_per_turn']:.1f}"
        print(f"{p['player']}: {count_en(p['turns'], 'turn')}, {count_en(p['throws'], 'throw')}, {ppt} points a turn, "
              f"{count_en(p['zero_throws'], 'zero throw')} (expected {p['expected_zero_throws']:.1f}); "
              f"{p['luck']['verdict']} / {p['luck']['verdict_ru']}")
    if args.plot is not None:
        print(f"plot: {args.plot}")
    return 0
