"""``kosti config`` — write, check (and print resolved) and locate the configuration file (see :mod:`kosti.config`).

* ``kosti config init [--path P] [--set SECTION.KEY=VALUE ...] [--force] [--mode 600]`` — write the
  commented config file (default path: :func:`kosti.config.default_config_path`); refuses to replace an
  existing file without ``--force``. ``--set`` values are TOML values or plain strings
  (``--set server.host=0.0.0.0 --set server.pin=482913 --set reader.backend=ncnn``).
* ``kosti config check [--config P] [--json]`` — load and validate (file + ``KOSTI_*`` environment);
  exit 0 and a summary, or exit 2 with ``<source>: <field>: <reason>``. ``--json`` prints the resolved
  configuration.
* ``kosti config path`` — print the file that would be read.

Exit codes: 0 ok · 2 invalid configuration or refused overwrite. Runnable as ``python -m kosti.config.cli``
(the installer uses that form).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kosti.common.redact import redact_url
from kosti.config import (
    ConfigError,
    default_config_path,
    load_config,
    parse_assignment,
    write_default_config,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``config`` command (``init``, ``check``, ``path``) to ``subparsers``."""
    p = subparsers.add_parser("config", help="write (init), validate (check) and locate (path) the configuration file",
                              description="kosti.toml: write a commented one (init), validate it and print "
                                          "the resolved values (check --json), or print where it is (path).")
    sub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)

    init = sub.add_parser("init", help="write a commented config file")
    init.add_argument("--path", type=Path, default=None, help="file to write (default: %(prog)s path)")
    init.add_argument("--set", dest="assignments", action="append", default=[], metavar="SECTION.KEY=VALUE",
                      help="set a value (repeatable), e.g. server.port=8080")
    init.add_argument("--force", action="store_true", help="replace an existing file")
    init.add_argument("--mode", default="600", help="file permissions, octal (default 600: it may hold the PIN)")
    init.set_defaults(func=_cmd_init)

    check = sub.add_parser("check", help="validate the configuration (file + KOSTI_* environment)")
    check.add_argument("--config", type=Path, default=None, help="config file (default: the one kosti reads)")
    check.add_argument("--json", action="store_true", help="print the resolved configuration as JSON")
    check.set_defaults(func=_cmd_check)

    path = sub.add_parser("path", help="print the config file kosti reads by default")
    path.set_defaults(func=_cmd_path)


def _cmd_init(args: argparse.Namespace) -> int:
    values: dict[str, dict[str, Any]] = {}
    for a in args.assignments:
        section, key, value = parse_assignment(a)
        values.setdefault(section, {})[key] = value
    try:
        mode = int(args.mode, 8)
    except ValueError:
        raise ConfigError(f"--mode {args.mode!r}: expected octal permissions such as 600") from None
    target = args.path if args.path is not None else default_config_path()
    p = write_default_config(target, values, overwrite=args.force, mode=mode)
    print(f"wrote {p}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    if args.json:
        print(json.dumps(json.loads(cfg.model_dump_json()), ensure_ascii=False, indent=2))
        return 0
    where = args.config or default_config_path()
    src = where if Path(where).is_file() else "defaults (no file)"
    s = cfg.server
    print(f"{src}: ok — source {redact_url(cfg.source.spec)} ({cfg.source.kind}) {cfg.source.width}x{cfg.source.height}"
          f"@{cfg.source.fps:g}{f' turned {cfg.source.rotate}°' if cfg.source.rotate else ''}, rules {cfg.game.preset}, model {cfg.reader.model} via {cfg.reader.backend}, "
          f"http://{s.host}:{s.port}/ {'with PIN' if s.pin else 'without PIN'}, data {cfg.storage.data_dir}")
    return 0


def _cmd_path(args: argparse.Namespace) -> int:
    print(default_config_path())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kosti config ...`` standalone (``python -m kosti.config.cli check``); returns the exit code."""
    parser = argparse.ArgumentParser(prog="kosti")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"kosti config: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
