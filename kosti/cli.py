"""The ``kosti`` console command: one entry point, subcommands registered by each layer.

Each layer owns its subcommands in its own ``cli`` module, which exposes
``register(subparsers) -> None``; every subcommand sets ``func(args) -> int`` as its handler.
Modules are imported lazily at registration so that ``kosti score`` never imports torch or OpenCV
beyond what its layer needs.

Exit codes (``../shared/docs/cli.md``): 0 success · 2 bad input · 3 an action the rules forbid ·
1 anything else. An exception that carries an integer ``exit_code`` attribute is reported as one
line on stderr and exits with that code; so is an :class:`OSError` on a path that cannot be written
(read-only, not a folder, disk full: exit 2, :mod:`kosti.common.writable`); any other exception is a bug (exit 1,
with traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

#: Modules that contribute subcommands, in the order they appear in ``kosti --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "kosti.engine.cli",      # rules, score, advise, replay, play
    "kosti.vision.cli",      # read, eval, export
    "kosti.vision.live_cli", # watch
    "kosti.datasets.cli",    # datasets (synth, prepare)
    "kosti.datasets.capture_cli",  # capture
    "kosti.datasets.train_cli",  # train
    "kosti.models_cli",      # models list / use / rollback
    "kosti.config.cli",      # config init / check / path
    "kosti.dashboard.cli",   # demo, run
    "kosti.dashboard.club_cli",  # club
    "kosti.dashboard.stats_cli",  # stats
    "kosti.dashboard.games_cli",  # games export / import / list
    "kosti.backup_cli",      # backup, restore, pin
)


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``argparse`` parser whose usage errors (an unknown flag, a missing argument, a value of the wrong type) are
    one line on stderr with exit code 2, as every other bad input (``../shared/docs/cli.md``, "Exit codes"), instead
    of the usage block and the message; ``--help`` still shows the usage. Subcommand parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _SubcommandParsers)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class _SubcommandParsers(argparse._SubParsersAction):
    """Subcommands whose unknown arguments are refused by the subcommand itself: ``kosti score --frobnicate 1``
    says ``kosti score: unrecognized arguments: --frobnicate 1 (see kosti score --help)``, not ``kosti: …`` (plain
    ``argparse`` hands a subcommand's leftovers up to the top-level parser, which names only ``kosti``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        subparser = self._name_parser_map.get(values[0]) if values else None
        before = list(vars(namespace).get(argparse._UNRECOGNIZED_ARGS_ATTR, []))
        super().__call__(parser, namespace, values, option_string)
        extra = list(vars(namespace).get(argparse._UNRECOGNIZED_ARGS_ATTR, []))[len(before):]
        if extra and subparser is not None:
            subparser.error(f"unrecognized arguments: {' '.join(extra)}")


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every available layer's subcommands registered."""
    parser = OneLineErrorParser(
        prog="kosti",
        description="Camera scorekeeper for the dice game 1000 (Тысяча), Farkle and 10000.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a layer not installed yet (or an optional extra)
            if exc.name and (exc.name == name or name.startswith(exc.name + ".")):
                continue
            raise
        module.register(sub)
    return parser


def _redact_logs() -> None:
    """Camera passwords never reach a log: every record is passed through the one redaction rule
    (:func:`kosti.common.redact.install_log_redaction`)."""
    from kosti.common.redact import install_log_redaction

    install_log_redaction()


def _version() -> str:
    from kosti import __version__

    return f"kosti {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code (see module docstring)."""
    from kosti.common.ultralytics_env import offline_env

    offline_env()  # before any subcommand can import Ultralytics: it never reaches the network
    _redact_logs()
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        # The last net for a path the command could not write after its own checks passed (the disk filled up,
        # the folder went read-only during the run): one line and exit 2, the user's folder and not a bug.
        from kosti.common.writable import UNWRITABLE_ERRNOS, describe_os_error

        if exc.errno not in UNWRITABLE_ERRNOS:
            raise
        from kosti.common.redact import redact_text

        print(f"kosti {args.command}: {redact_text(describe_os_error(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - mapped to exit codes below
        code = getattr(exc, "exit_code", None)
        if isinstance(code, int):
            from kosti.common.redact import redact_text

            msg = redact_text(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
            print(f"kosti {args.command}: {msg}", file=sys.stderr)
            return code
        raise


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
