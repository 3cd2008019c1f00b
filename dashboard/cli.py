"""``kosti demo`` and ``kosti run``: start the dashboard (../shared/docs/cli.md).

* ``kosti demo [--players A,B] [--rules PRESET] [--port 8000] [--host 127.0.0.1] [--auto-throw SECONDS] [--db PATH]
  [--reader auto|models|truth]`` — the built-in virtual table: rendered dice are read from pixels by the dice
  reader, scored by the engine and shown live. Press "Throw" on the dashboard (or use ``--auto-throw``);
  ``--players`` starts (or resumes) a game as ``run`` does.
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
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # the heavy modules are imported when a command runs, not when the CLI starts
    from pydantic import JsonValue

    from kosti.config import KostiConfig
    from kosti.dashboard.app import DashboardConfig
    from kosti.vision.camera_probe import Capture as _Capture
    from kosti.vision.runner import ReaderReload
    from kosti.vision.throws import Reader


class CliError(Exception):
    """Bad command-line input (exit code 2, one line on stderr)."""

    exit_code = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo`` and ``run`` to the ``kosti`` command line."""
    demo = subparsers.add_parser("demo", help="dashboard on the built-in virtual dice table",
                                 description="Start the dashboard on the virtual table (whole chain from pixels).")
    _game_options(demo)
    _common(demo)
    demo.add_argument("--auto-throw", type=float, default=None, metavar="SECONDS",
                      help="the virtual table throws by itself SECONDS (>= 1) after the dice come to rest")
    demo.set_defaults(func=_demo)

    run = subparsers.add_parser("run", help="dashboard on a camera", description="Start the dashboard on a camera.")
    run.add_argument("--source", default=None,
                     help="picamera, a device index (0), an rtsp:// or http:// URL, a video file or a folder of frames "
                          "(default: source.spec of the config)")
    run.add_argument("--rotate", type=int, default=None, choices=(0, 90, 180, 270), metavar="DEGREES",
                     help="turn every frame clockwise by 0, 90, 180 or 270 degrees: a camera mounted sideways or "
                          "upside down; at an angle, until the far side of the table is at the top "
                          "(default: source.rotate of the config when it is not 0, else the turn chosen on the page)")
    run.add_argument("--wait-for-camera", action="store_true",
                     help="a camera that is not connected yet (no Pi camera listed, no /dev/videoN) does not stop "
                          "kosti: the page says so and the camera is picked up when it is plugged in "
                          "(the service's setting, deploy/kosti.service); without it kosti exits 2 at once")
    _game_options(run)
    _common(run)
    run.set_defaults(func=_run)


def _game_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default=None, metavar="PRESET", help="rule preset for a new game (default: game.preset, classic)")
    p.add_argument("--players", default=None, metavar="A,B,...", help="start a game with these players (default: game.players)")


def _game_settings(args: argparse.Namespace, cfg: KostiConfig) -> tuple[list[str] | None, str, dict[str, JsonValue] | None]:
    """``(players, preset, overrides)`` from the flags over the config file (``CliError`` on bad flags)."""
    players = list(cfg.game.players) or None
    if args.players is not None:
        players = [p.strip() for p in args.players.split(",") if p.strip()]
        if not players:
            raise CliError("--players: give names separated by commas")
    preset, overrides = cfg.game.preset, cfg.game.overrides or None
    if args.rules is not None:
        from kosti.engine import PRESET_NAMES
        from kosti.engine.games import GAME_PRESETS

        if args.rules not in PRESET_NAMES and args.rules not in GAME_PRESETS:
            raise CliError(f"unknown preset {args.rules!r} (see kosti rules)")
        if args.rules != preset:
            preset, overrides = args.rules, None  # the file's overrides belong to the file's preset
    return players, preset, overrides


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None, type=Path, metavar="PATH",
                   help="kosti.toml (default /etc/kosti/kosti.toml or ~/.config/kosti/kosti.toml when present); "
                        "flags override it")
    p.add_argument("--port", type=int, default=None, help="TCP port (default: server.port of the config, 8000)")
    p.add_argument("--host", default=None,
                   help="bind address (default: server.host, 127.0.0.1; 0.0.0.0 lets phones on the network watch, "
                        "control needs the PIN)")
    p.add_argument("--pin", default=None, help="control PIN, 4–6 digits (default: server.pin, else random, printed)")
    p.add_argument("--db", default=None, type=Path,
                   help="SQLite database (default: storage.db of the config, ~/.local/share/kosti/kosti.db)")
    p.add_argument("--reader", default="auto", choices=("auto", "models", "truth"),
                   help="dice reader: the shipped ONNX models, the virtual table's ground truth, or auto")
    p.add_argument("--review-dir", default=None, type=Path, metavar="DIR",
                   help="also serve the label review page (/review) for this kosti capture folder")
    p.add_argument("--record", default=None, type=Path, metavar="DIR",
                   help="keep the camera stream around each throw as a short clip in DIR, with the throw as the game "
                        "finally recorded it beside it; `kosti watch --truth DIR` scores your own table on them")
    p.add_argument("--record-mb", type=float, default=500.0, metavar="MB",
                   help="size cap of the --record folder in megabytes: the oldest clips go first (default 500)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))


def _serve(config: DashboardConfig, args: argparse.Namespace) -> int:
    """Claim the port and the database, then build the app and serve it.

    Order matters: a process that cannot start (the port is taken, another kosti holds the database) exits
    2 with one line on stderr *before* the app opens the database, so it changes nothing there — the game
    another process is running stays as it was."""
    import uvicorn

    from kosti.dashboard.app import create_app

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _check_paths(config, args)
    sock = _listen(config.host, config.port)
    lock = _lock_database(Path(config.db_path))
    from kosti.common.watchdog import Watchdog, start_watchdog

    dog: Watchdog | None = None
    try:
        try:
            app = create_app(config)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        cfg = app.state.config
        shown = _lan_address() if cfg.host in ("0.0.0.0", "::") else cfg.host
        print(f"kosti dashboard: http://{shown}:{cfg.port}/  (database {cfg.db_path})", flush=True)
        if cfg.pin_required:
            print(f"control PIN: {cfg.pin}  (controls need the PIN; anyone who can reach the page can watch)", flush=True)
        # proxy_headers=False: the dashboard is never behind a proxy, so a client's X-Forwarded-For is not believed;
        # ws_max_size: a WebSocket command is a few hundred bytes (kosti.dashboard.app.MAX_WS_MESSAGE).
        server = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level, access_log=False,
                                               proxy_headers=False, ws_max_size=64 * 1024))
        dog = start_watchdog(cfg.host, cfg.port)  # under systemd: READY=1, then WATCHDOG=1 while /healthz answers
        server.run(sockets=[sock])
    finally:
        if dog is not None:
            dog.stop()
        sock.close()
        lock.close()
    return 0


def _check_paths(config: DashboardConfig, args: argparse.Namespace) -> None:
    """Every path the dashboard writes to, checked before anything is claimed: the database's folder (the
    database, its lock, WAL and journal), the ``--review-dir`` folder (the review and teach pages write labels and
    photos there) and the frames folder of ``[storage]`` (corrected throws kept for retraining; the review folder
    when no ``--review-dir`` is given). :class:`kosti.common.writable.UnwritablePath` (exit 2, one line) when one cannot be
    created or written."""
    from kosti.common.writable import writable_dir, writable_file

    writable_file(Path(config.db_path), "database")
    if args.review_dir is not None:
        writable_dir(args.review_dir, "--review-dir folder")
    if getattr(args, "record", None) is not None:
        writable_dir(args.record, "--record folder")
        if not args.record_mb >= 0:
            raise CliError(f"--record-mb must be >= 0, got {args.record_mb:g}")
        config.record_dir, config.record_mb = args.record, float(args.record_mb)
    for folder in {config.review_dir, config.corrections_dir} - {None, args.review_dir}:
        assert folder is not None
        writable_dir(folder, "frames folder ([storage] dir and frames_dir of kosti.toml)")


def _listen(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket on ``host:port`` (:class:`CliError` when the port is taken or the
    address is not this machine's)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        why = "the port is in use (another kosti or another program): choose --port" \
            if exc.errno in (98, 48, 10048) else (exc.strerror or str(exc))
        raise CliError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def _lock_database(db: Path) -> IO[str]:
    """Hold an exclusive lock beside the database (``<db>.lock``) while this process serves it, so a second
    ``kosti run``/``demo`` on the same database refuses to start instead of taking over the game
    (:class:`CliError`). The lock goes with the process (also on kill -9)."""
    import fcntl

    from kosti.common.writable import writable_file

    db = writable_file(db, "database")  # checked by _check_paths too: the lock is the first file written
    f = open(db.with_name(db.name + ".lock"), "a+")  # noqa: SIM115 - held open for the life of the server
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise CliError(f"the database {db} is in use by another kosti dashboard: stop it, or use --db") from None
    return f


def _lan_address() -> str:
    """This machine's address on the local network (for phones), or 127.0.0.1.

    A UDP socket "connected" to a private address makes the OS pick the outgoing interface; no packet
    is sent.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _load(args: argparse.Namespace) -> KostiConfig:
    """The kosti configuration (file + ``KOSTI_*`` environment); :class:`kosti.config.ConfigError` exits 2."""
    from kosti.config import load_config

    return load_config(args.config)


def _is_virtual(spec: object) -> bool:
    """Whether source ``spec`` names the virtual table (the one spec grammar; an unusable spec is not)."""
    from kosti.vision.sources import SourceError, parse_source_spec

    try:
        return isinstance(spec, str) and parse_source_spec(spec).kind == "virtual"
    except SourceError:
        return False


def _config(args: argparse.Namespace, cfg: KostiConfig, **kw: object) -> DashboardConfig:
    """Command line over configuration file → :class:`kosti.dashboard.app.DashboardConfig`."""
    from kosti.dashboard.app import DashboardConfig
    from kosti.vision.params import LIVE_THRESHOLDS, ReaderParams, SettleParams

    if args.pin is not None and not (args.pin.isdigit() and 4 <= len(args.pin) <= 6):
        raise CliError("--pin must be 4–6 digits")
    if args.port is not None and not 0 < args.port < 65536:
        raise CliError("--port must be 1–65535")
    settings: dict[str, JsonValue] = {}
    # The file's table settings are applied at each start where it sets them to something else than their default;
    # a default the file holds (as `kosti config init` and deploy/kosti.toml write every key) is no choice, so the
    # tray, thresholds and turn chosen on the page stay across restarts.
    zones = cfg.zones
    if zones.model_fields_set and zones != type(zones)():
        settings["zones"] = {"roll_area": [list(p) for p in zones.roll_area],
                             "set_aside": [list(p) for p in zones.set_aside] or None}
    th: dict[str, JsonValue] = {}
    # one name from kosti.toml to the detector: each knob set in the file, read from its section's dump
    for sec, owner in ((cfg.reader, ReaderParams), (cfg.settle, SettleParams)):
        keys = tuple(k for k, cls in LIVE_THRESHOLDS.items() if cls is owner)
        values = sec.model_dump(include=set(keys) & sec.model_fields_set)
        defaults = type(sec)().model_dump(include=set(keys))
        th.update({key: float(values[key]) for key in keys if key in values and values[key] != defaults[key]})
    if th:
        settings["thresholds"] = th
    # The frames' turn is a table setting, so that the tray the table marked turns with the picture
    # (kosti.dashboard.table_settings.with_turned_zones). The virtual table is never turned: a file's rotate is
    # for its camera.
    virtual = _is_virtual(kw.get("source"))
    if getattr(args, "rotate", None) is not None and not virtual:
        settings["rotate"] = int(args.rotate)
    elif cfg.source.rotate and not virtual:
        settings["rotate"] = int(cfg.source.rotate)
    storage = cfg.storage
    server = cfg.server
    return DashboardConfig(
        db_path=args.db or storage.db_path, host=args.host or server.host, port=args.port or server.port,
        pin=args.pin or server.pin, require_pin=True if args.pin else None,
        review_dir=args.review_dir or storage.frames_path,
        corrections_dir=storage.frames_path, settings=settings or None,
        allowed_hosts=list(server.allowed_hosts), monitor_from=list(server.monitor_from), mdns=True,
        mqtt=cfg.mqtt if cfg.mqtt.enabled else None,
        **kw)  # type: ignore[arg-type]


def _reader(args: argparse.Namespace, cfg: KostiConfig, virtual: bool) -> Reader | None:
    """The dice reader the configuration names (``[reader]``), or ``None`` = the virtual table's ground truth.

    Raises :class:`CliError` when the models cannot be loaded, except for ``demo --reader auto``, which
    falls back to the virtual table's ground truth (with a warning on the dashboard)."""
    if args.reader == "truth":
        if not virtual:
            raise CliError("--reader truth works only on the virtual table")
        return None
    try:
        from kosti.vision.reader import DiceReader

        return DiceReader(**cfg.reader.reader_kwargs())
    except Exception as exc:  # noqa: BLE001 - any load failure is the same problem for the user
        if virtual and args.reader == "auto":
            logging.getLogger(__name__).warning("dice models not available (%s); the virtual table's ground "
                                                "truth is used instead", exc)
            return None
        raise CliError(f"cannot load the dice reader: {exc}") from None


def _reload(args: argparse.Namespace, cfg: KostiConfig, reader: Reader | None) -> ReaderReload | None:
    """``(factory, token)`` that follows ``kosti models use`` while running (``[reader] model = "active"``
    without explicit paths), else ``None``."""
    rs = cfg.reader
    if reader is None or rs.model != "active" or rs.detector or rs.classifier:
        return None
    from kosti.registry import Registry
    from kosti.vision.reader import DiceReader

    reg = Registry()
    return (lambda: DiceReader(**rs.reader_kwargs(reg))), reg.change_token


def _demo(args: argparse.Namespace) -> int:
    if args.auto_throw is not None and args.auto_throw < 1.0:
        # The dice must lie still for the settle time (0.4 s) and be read before the next throw starts.
        raise CliError("--auto-throw must be at least 1 second")
    cfg = _load(args)
    players, preset, overrides = _game_settings(args, cfg)
    reader = _reader(args, cfg, virtual=True)
    return _serve(_config(args, cfg, source="virtual", auto_throw_s=args.auto_throw, reader=reader,
                          reader_kind="truth" if reader is None else args.reader, preset=preset,
                          players=players, overrides=overrides, reader_reload=_reload(args, cfg, reader)), args)


def _run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from kosti.config import SourceSettings
    from kosti.vision.sources import SourceError, open_source, redact_text

    cfg = _load(args)
    players, preset, overrides = _game_settings(args, cfg)
    src_cfg = cfg.source
    if args.source is not None:
        try:
            src_cfg = SourceSettings(spec=args.source, width=src_cfg.width, height=src_cfg.height, fps=src_cfg.fps)
        except ValidationError as exc:
            raise CliError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None  # names the source once
    kwargs = src_cfg.source_kwargs()
    if src_cfg.kind == "virtual":
        kwargs["initial_throw"] = False  # a game's first throw comes when asked for
    try:
        src = open_source(src_cfg.spec, **kwargs)  # validate now: a clear error before serving
        if src.kind in ("video", "folder", "frames"):
            src.open()  # a truncated video or an unreadable first photo is refused here, not after serving
    except SourceError as exc:
        raise CliError(redact_text(str(exc))) from None
    _probe_camera(src_cfg.spec, wait=args.wait_for_camera)
    virtual = src.kind == "virtual"
    if virtual and args.rotate:
        raise CliError("--rotate turns a camera's picture; the virtual table is never turned")
    reader = _reader(args, cfg, virtual=virtual)
    return _serve(_config(args, cfg, source_obj=src, source=src_cfg.spec, preset=preset, players=players,
                          overrides=overrides, reader=reader, reader_kind="truth" if reader is None else args.reader,
                          reader_reload=_reload(args, cfg, reader)),
                  args)


def _probe_camera(spec: str, factory: Callable[[int | str], _Capture] | None = None, wait: bool = False) -> None:
    """A local camera that cannot be there (picamera2 not installed, no Pi camera listed, a device OpenCV cannot
    open) is one clear line at start (:class:`CliError`, exit 2) instead of "camera down" and retries forever
    (:func:`kosti.vision.camera_probe.probe_camera`; other sources are left alone: a stream may come up later).
    With ``wait`` (``--wait-for-camera``, the service), a camera that is only not connected yet
    (:class:`~kosti.vision.camera_probe.CameraAbsent`) is one line on stderr and kosti goes on: the page says
    "no camera is connected: plug it in" and the reconnecting source picks it up with backoff (issue 44)."""
    from kosti.vision.camera_probe import CameraAbsent, probe_camera, quiet_native_camera_logs
    from kosti.vision.sources import SourceError

    try:
        probe_camera(spec, factory)
    except CameraAbsent as exc:
        if not wait:
            raise CliError(str(exc)) from None
        print(f"kosti run: {exc}; waiting for it: the page says so, and the camera is picked up when it is "
              "plugged in", file=sys.stderr, flush=True)
    except SourceError as exc:
        raise CliError(str(exc)) from None
    quiet_native_camera_logs()  # a camera that goes away later: kosti's one line per cause, not OpenCV's per retry


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
