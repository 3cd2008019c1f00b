"""``kosti club --broker HOST[:PORT]``: serve the club screen, every table on the broker live (:mod:`kosti.dashboard.club`).

* ``kosti club --broker HOST[:PORT] [--port 8080] [--host 127.0.0.1] [--prefix kosti] [--hours 12] [--config PATH]``

The broker's user name, password and TLS come from the ``[mqtt]`` section of the config (as each table's); without
``--broker``, its ``broker``. Needs ``pip install 'kosti[mqtt]'``. Exit 2 with one line on bad input (a port that is
taken, a broker address that is not one, no broker at all).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path


class CliError(Exception):
    """Bad command-line input (exit code 2, one line on stderr)."""

    exit_code = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``club`` to the ``kosti`` command line."""
    p = subparsers.add_parser(
        "club", help="one screen of every table on an MQTT broker (a club's TV)",
        description="Serve a page that shows every kosti table publishing on the MQTT broker live (players, scores, "
                    "turn, on or off) and the evening's standings. Each table needs [mqtt] broker set to the same "
                    "broker (docs/mqtt.md). Needs the mqtt extra: pip install 'kosti[mqtt]'.")
    p.add_argument("--broker", default=None, metavar="HOST[:PORT]",
                   help="the MQTT broker the tables publish on (default: mqtt.broker of the config; port 1883)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address the page is served on (default 127.0.0.1; 0.0.0.0 lets a TV or phones on the network "
                        "open it: it is read-only)")
    p.add_argument("--port", type=int, default=8080, help="TCP port of the page (default 8080)")
    p.add_argument("--prefix", default=None, help="the tables' topic prefix (default: mqtt.prefix of the config, kosti)")
    p.add_argument("--hours", type=float, default=None, metavar="HOURS",
                   help="the evening: games finished in the last HOURS count in the standings (default 12, at most 24: "
                        "each table keeps a day of results on the broker)")
    p.add_argument("--config", default=None, type=Path, metavar="PATH",
                   help="kosti.toml for the broker's user name, password and TLS (default: the usual search)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=_club)


def _club(args: argparse.Namespace) -> int:
    from kosti.config import load_config
    from kosti.config.sections import MqttSettings, mqtt_address
    from kosti.dashboard.mqtt import RESULTS_WINDOW_S

    full = load_config(args.config)
    cfg = full.mqtt
    broker = args.broker or cfg.broker
    if not broker:
        raise CliError("give --broker HOST[:PORT] (the MQTT broker the tables publish on), or set [mqtt] broker")
    try:
        host, port = mqtt_address(broker, cfg.tls)
    except ValueError as exc:
        raise CliError(f"--broker: {exc}") from None
    if not 0 < args.port < 65536:
        raise CliError("--port must be 1–65535")
    prefix = cfg.prefix
    if args.prefix is not None:
        try:
            prefix = MqttSettings(prefix=args.prefix).prefix
        except ValueError:
            raise CliError(f"--prefix: {args.prefix!r}: at most 4 topic levels of letters, digits, - and _") from None
    hours = 12.0 if args.hours is None else args.hours
    if not 0 < hours <= RESULTS_WINDOW_S / 3600:
        raise CliError("--hours must be more than 0 and at most 24 (each table keeps a day of results on the broker)")

    import uvicorn

    from kosti.dashboard.access import allowed_host_names
    from kosti.dashboard.cli import _lan_address, _listen
    from kosti.dashboard.club import ClubBoard, ClubListener, create_club_app

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    board = ClubBoard(prefix, since=time.time() - hours * 3600, address=f"{host}:{port}")
    listener = ClubListener(board, host, port, cfg)
    try:
        sock = _listen(args.host, args.port)
    except Exception as exc:  # the dashboard's CliError: the port is taken
        raise CliError(str(exc)) from None
    try:
        app = create_club_app(board, listener, allowed_host_names([args.host, *full.server.allowed_hosts]))
        shown = _lan_address() if args.host in ("0.0.0.0", "::") else args.host
        print(f"kosti club: http://{shown}:{args.port}/  (tables on {host}:{port}, topics {prefix}/+/...)", flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level, access_log=False, proxy_headers=False,
                                               ws_max_size=4096))
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
