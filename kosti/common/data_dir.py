"""The one rule for kosti's data folder (games database, saved frames, model registry).

Used by the model registry (:func:`kosti.registry.default_root`), the configuration's ``[storage] dir``
default (:attr:`kosti.config.StorageSettings.data_dir`) and the dashboard's default database
(:func:`kosti.dashboard.app.default_db_path`); ``--data``/``--db``/``--root`` options and ``storage.dir``
override it where a command offers them. Light: the standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Data folder of the system service (``deploy/install.sh``, ``StateDirectory=kosti`` in the unit).
SYSTEM_DATA_DIR = Path("/var/lib/kosti")


def default_data_dir() -> Path:
    """Where kosti keeps games, frames and models when not told otherwise.

    ``$XDG_DATA_HOME/kosti`` when ``XDG_DATA_HOME`` is set and absolute (a relative value is invalid per
    the XDG Base Directory spec and ignored; the service sets ``/var/lib``); else the service's
    :data:`SYSTEM_DATA_DIR` (``/var/lib/kosti``) when it exists and this user may read it (so ``sudo -u
    kosti kosti models list`` sees the service's registry, as ``/etc/kosti`` is preferred for the config);
    else ``~/.local/share/kosti``. Nothing is created.

    Returns:
        The folder's path (absolute).
    """
    base = os.environ.get("XDG_DATA_HOME") or ""
    if base and Path(base).is_absolute():
        return Path(base) / "kosti"
    if SYSTEM_DATA_DIR.is_dir() and os.access(SYSTEM_DATA_DIR, os.R_OK | os.X_OK):
        return SYSTEM_DATA_DIR
    return Path.home() / ".local" / "share" / "kosti"
