"""``kosti demo`` and ``kosti run``: start the dashboard (../shared/docs/cli.md).

* ``kosti demo [--port 8000] [--host 127.0.0.1] [--auto-throw SECONDS] [--db PATH] [--reader auto|models|truth]``
  — the built-in virtual table: rendered dice are read from pixels by the dice reader, scored by the
  engine and shown live. Press "Throw" on the dashboard (or use ``--auto-throw``).
* ``kosti run --source SRC [--rules PRESET] [--players A,B] [--port 8000] [--host H] [--pin PIN] [--db PATH]``
  — a real camera (``picamera``, a device index such as ``0``, an ``rtsp://``/``http://`` URL, a video
  file or a folder of frames). With ``--players`` a game starts unless the stored game in progress has
  the same players and rules (then it resumes).

The database defaults to ``$XDG_DATA_HOME/kosti/kosti.db`` (``~/.local/share/kosti/kosti.db``). Bound to
a non-loopback host, control actions need the PIN printed at start-up.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


class CliError(Exception):
    """Bad command-line input (exit code 2, one line on stderr)."""

    exit_code = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``demo`` and ``run`` to the ``kosti`` command line."""
    demo = subparsers.add_parser("demo", help="dashboard on the built-in virtual dice table",
                                 description="Start the dashboard on the virtual table (whole chain from pixels).")
    _common(demo)
    demo.add_argument("--auto-throw", type=float, default=None, metavar="SECONDS",
                      help="the virtual table throws by itself SECONDS (>= 1) after the dice come to rest")
    demo.set_defaults(func=_demo)

    run = subparsers.add_parser("run", help="dashboard on a camera", description="Start the dashboard on a camera.")
    run.add_argument("--source", required=True,
                     help="picamera, a device index (0), an rtsp:// or http:// URL, a video file or a folder of frames")
    run.add_argument("--rules", default=None, metavar="PRESET", help="rule preset for a new game (default classic)")
    run.add_argument("--players", default=None, metavar="A,B,...", help="start a game with these players")
    _common(run)
    run.set_defaults(func=_run)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    p.add_argument("--host", default="127.0.0.1",
                   help="bind address (default 127.0.0.1; 0.0.0.0 lets phones on the network watch, control needs the PIN)")
    p.add_argument("--pin", default=None, help="control PIN, 4–6 digits (default: random, printed at start-up)")
    p.add_argument("--db", default=None, type=Path, help="SQLite database (default ~/.local/share/kosti/kosti.db)")
    p.add_argument("--reader", default="auto", choices=("auto", "models", "truth"),
                   help="dice reader: the shipped ONNX models, the virtual table's ground truth, or auto")
    p.add_argument("--review-dir", default=None, type=Path, metavar="DIR",
                   help="also serve the label review page (/review) for this kosti capture folder")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))


def _serve(config: object, args: argparse.Namespace) -> int:
    import uvicorn

    from kosti.dashboard.app import create_app

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        app = create_app(config)  # type: ignore[arg-type]
    except ValueError as exc:
        raise CliError(str(exc)) from None
    cfg = app.state.config
    shown = _lan_address() if cfg.host in ("0.0.0.0", "::") else cfg.host
    print(f"kosti dashboard: http://{shown}:{cfg.port}/  (database {cfg.db_path})", flush=True)
    if cfg.pin_required:
        print(f"control PIN: {cfg.pin}  (anyone on the network can watch; controls need the PIN)", flush=True)
    uvicorn.run(app, host=cfg.host, port=cfg.port, log_level=args.log_level, access_log=False)
    return 0


def _lan_address() -> str:
    """This machine's address on the local network (for phones), or 127.0.0.1.

    A UDP socket "connected" to a private address makes the OS pick the outgoing interface; no packet
    is sent.
    """
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _config(args: argparse.Namespace, **kw: object) -> object:
    from kosti.dashboard.app import DashboardConfig, default_db_path

    if args.pin is not None and not (args.pin.isdigit() and 4 <= len(args.pin) <= 6):
        raise CliError("--pin must be 4–6 digits")
    if not 0 < args.port < 65536:
        raise CliError("--port must be 1–65535")
    return DashboardConfig(db_path=args.db or default_db_path(), host=args.host, port=args.port, pin=args.pin,
                           reader_kind=args.reader, review_dir=args.review_dir, **kw)  # type: ignore[arg-type]


def _demo(args: argparse.Namespace) -> int:
    if args.auto_throw is not None and args.auto_throw < 1.0:
        # The dice must lie still for the settle time (0.4 s) and be read before the next throw starts.
        raise CliError("--auto-throw must be at least 1 second")
    return _serve(_config(args, source="virtual", auto_throw_s=args.auto_throw), args)


def _run(args: argparse.Namespace) -> int:
    from kosti.vision.sources import SourceError, open_source

    players = None
    if args.players:
        players = [p.strip() for p in args.players.split(",") if p.strip()]
        if not players:
            raise CliError("--players: give names separated by commas")
    if args.rules is not None:
        from kosti.engine import PRESET_NAMES

        if args.rules not in PRESET_NAMES:
            raise CliError(f"unknown preset {args.rules!r} (see kosti rules)")
    try:
        src = open_source(args.source)  # validate the spec now: a clear error before the server starts
    except SourceError as exc:
        raise CliError(str(exc)) from None
    if args.reader != "truth" or getattr(src, "kind", "") != "virtual":
        from kosti.dashboard.table import default_reader

        try:
            default_reader(src, "models" if getattr(src, "kind", "") != "virtual" else args.reader)
        except Exception as exc:  # noqa: BLE001 - any load failure is the same problem for the user
            raise CliError(f"cannot load the dice reader: {exc}") from None
    return _serve(_config(args, source=args.source, preset=args.rules or "classic", players=players), args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
