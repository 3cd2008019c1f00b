"""The one way kosti imports Ultralytics: offline by construction, its logs kept off stdout.

Ultralytics reaches the network on its own: importing it resolves two hosts to decide whether it is online
(``ultralytics.utils.is_online``, a 20 s stall when DNS does not answer) unless ``YOLO_OFFLINE`` is set
*before* the import; ``Model.train``/``export`` ask PyPI for a newer version
(``checks.check_pip_update_available``); runs send an analytics event when ``settings sync`` is on
(``ultralytics/utils/events.py``); every detection dataset check fetches ``Arial.ttf`` over HTTPS
(``data/utils.py`` → ``checks.check_font``); missing requirements are ``pip install``-ed
(``YOLO_AUTOINSTALL``). :func:`import_ultralytics` switches all of these off before and right after
the first import, and every module of kosti that needs Ultralytics imports it through here
(``tests/datasets/test_offline.py`` fails on any socket connection during ``kosti train`` and ``kosti export``).

Ultralytics logs to stdout: :func:`import_ultralytics` points its ``LOGGER``'s stream handlers at stderr
(Ultralytics logs from places no caller wraps, e.g. ``Model.names`` loading an exported model: "Loading … for
ONNX Runtime inference"), and :func:`stdout_to_stderr` sends what it prints directly to stderr around its
calls, so a ``--json`` command's stdout keeps its one JSON document.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

#: Environment set before Ultralytics is first imported (names from ``ultralytics/utils/__init__.py``).
OFFLINE_ENV = {
    "YOLO_OFFLINE": "1",         # is_online() → False without a DNS lookup; ONLINE gates PyPI checks and events
    "YOLO_AUTOINSTALL": "false",  # never pip-install a missing requirement at run time
    "MPLBACKEND": "Agg",         # plots (when any) without a display
}


def offline_env() -> None:
    """Set :data:`OFFLINE_ENV` in ``os.environ`` (``MPLBACKEND`` only when unset). Call before importing
    Ultralytics; :func:`import_ultralytics` does."""
    for key, value in OFFLINE_ENV.items():
        if key == "MPLBACKEND":
            os.environ.setdefault(key, value)
        else:
            os.environ[key] = value


def _local_font(font: str = "Arial.ttf") -> Path | None:
    """``check_font`` without the download: the font in Ultralytics' config folder, else matplotlib's
    bundled DejaVu Sans, else ``None`` (Ultralytics then draws with PIL's default font)."""
    from ultralytics.utils import USER_CONFIG_DIR

    own = USER_CONFIG_DIR / Path(font).name
    if own.is_file():
        return own
    try:
        import matplotlib

        bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return bundled if bundled.is_file() else None
    except ImportError:
        return None


def import_ultralytics() -> ModuleType:
    """Import Ultralytics with everything that would reach the network switched off; returns the module.

    Sets :data:`OFFLINE_ENV` first, imports with stdout sent to stderr, points Ultralytics' logger at stderr
    (:func:`logs_to_stderr`), then marks it offline, disables analytics
    (``settings sync`` off for this process only, the user's settings file is not rewritten), the PyPI
    version check and the font download.

    Raises:
        ImportError: Ultralytics is not installed (the ``train`` extra).
    """
    offline_env()
    with stdout_to_stderr():  # the first import writes "Creating new Ultralytics Settings …" on stdout
        import ultralytics
        from ultralytics import utils
        from ultralytics.utils import checks, events

    logs_to_stderr(utils.LOGGER)
    utils.ONLINE = checks.ONLINE = False
    dict.__setitem__(utils.SETTINGS, "sync", False)  # in memory: JSONDict.__setitem__ would save the file
    events.events.enabled = False
    checks.check_pip_update_available = lambda: False
    checks.check_font = _local_font
    with contextlib.suppress(ImportError):
        from ultralytics.data import utils as data_utils

        data_utils.check_font = _local_font
    with contextlib.suppress(ImportError):
        from ultralytics.utils import plotting

        plotting.check_font = _local_font
    return ultralytics


#: The name of the stdout handler ``ultralytics.utils.set_logging`` gives Ultralytics' ``LOGGER``.
_ULTRALYTICS_HANDLER = "ultralytics.utils.set_logging"


class _Stderr:
    """A stream that writes to whatever ``sys.stderr`` is at the time (a handler bound to one stderr object
    would outlive it when the object is replaced, as pytest's capture does)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def logs_to_stderr(logger: logging.Logger) -> None:
    """Point the ``logger``'s stream handlers that write to stdout (Ultralytics' ``LOGGER`` has one,
    ``StreamHandler(sys.stdout)`` named ``ultralytics.utils.set_logging``) at stderr, for the rest of the
    process."""
    for handler in logger.handlers:
        if not isinstance(handler, logging.StreamHandler) or isinstance(handler.stream, _Stderr):
            continue
        if handler.get_name() == _ULTRALYTICS_HANDLER or handler.stream in (sys.stdout, sys.__stdout__):
            handler.setStream(_Stderr())


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to file descriptor 1 (Python or native code) to fd 2 meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
