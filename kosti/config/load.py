"""kosti configuration: one TOML file, environment overrides, validated at start.

Where the file is looked for (first hit wins; see :func:`default_config_path`):

1. ``--config PATH`` (the ``path`` argument of :func:`load_config`); it must exist;
   ``$KOSTI_CONFIG`` (a path) stands for ``--config`` when the flag is not given;
2. ``/etc/kosti/kosti.toml`` (the Raspberry Pi service, written by ``deploy/install.sh``);
3. ``$XDG_CONFIG_HOME/kosti/kosti.toml`` (``~/.config/kosti/kosti.toml`` when unset).

No file at all means all defaults. Environment variables override the file: prefix ``KOSTI_``, sections
nested with ``__`` (``KOSTI_SERVER__PORT=8080``, ``KOSTI_SOURCE__SPEC=0``, ``KOSTI_GAME__PLAYERS=Ann,Boris``;
lists and tables as JSON: ``KOSTI_ZONES__ROLL_AREA='[[0,0],[1,0],[1,1],[0,1]]'``). Names are
case-insensitive. Relative paths in the file are resolved against the file's folder; ``storage.db`` and
``storage.frames_dir`` are relative to ``storage.dir``.

Invalid configuration raises :class:`ConfigError` (``exit_code`` 2) whose message names where the bad
value came from, the field and the reason, all on one line, e.g.
``/etc/kosti/kosti.toml: server.port: must be 1–65535, got 70000`` or
``$KOSTI_SERVER__PORT: server.port: must be an integer, got 'http'``. Unknown keys are errors too
(``server.prot: unknown key (did you mean 'port'?)``), so a typo never silently falls back to a default.

The model is one place: the sections (:mod:`kosti.config.sections`) name each knob once, from the TOML
key to the keyword argument of the constructor it feeds, and document it in ``Field(description=…)``;
the example file ``deploy/kosti.toml`` is :func:`render_config` of the defaults, generated from those
descriptions (:mod:`kosti.config.files`; :func:`write_default_config` writes the same text with chosen
values, used by the installer); error messages are :mod:`kosti.config.errors`. This module merges the
file and the environment into :class:`KostiConfig`.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from kosti.config.errors import ENV_NESTED, ENV_PREFIX, ConfigError, config_error
from kosti.config.sections import (
    GameSettings,
    MqttSettings,
    ReaderSettings,
    ServerSettings,
    SettleSettings,
    SourceSettings,
    StorageSettings,
    ZonesSettings,
)

# the package (kosti.config) re-exports the sections, files and errors; this module exports its own names
__all__ = ["CONFIG_ENV", "MAX_CONFIG_BYTES", "SYSTEM_CONFIG", "KostiConfig", "default_config_path", "load_config"]

SYSTEM_CONFIG = Path("/etc/kosti/kosti.toml")
#: Environment variable naming the configuration file when ``--config`` is not given (it must exist); a test
#: run or a second table on the same machine points it at its own file so ``/etc/kosti`` is never read.
CONFIG_ENV = "KOSTI_CONFIG"


class KostiConfig(BaseSettings):
    """The whole configuration. ``KostiConfig()`` = defaults + ``KOSTI_*`` environment variables;
    :func:`load_config` adds the TOML file underneath the environment.

    Sections: ``source``, ``zones``, ``settle``, ``reader``, ``game``, ``server``, ``storage``, ``mqtt`` (see
    each class). Unknown keys are rejected.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTED, case_sensitive=False, extra="forbid",
        validate_default=True,
    )

    source: SourceSettings = Field(default_factory=SourceSettings)
    zones: ZonesSettings = Field(default_factory=ZonesSettings)
    settle: SettleSettings = Field(default_factory=SettleSettings)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)
    game: GameSettings = Field(default_factory=GameSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    mqtt: MqttSettings = Field(default_factory=MqttSettings)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment first (highest priority), then the init values (the TOML file); no .env files."""
        return env_settings, init_settings


# ------------------------------------------------------------------------------------------ loading
def default_config_path() -> Path:
    """``$KOSTI_CONFIG`` when set; else ``/etc/kosti/kosti.toml`` if it exists, else
    ``$XDG_CONFIG_HOME/kosti/kosti.toml``."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]).expanduser()
    if SYSTEM_CONFIG.is_file():
        return SYSTEM_CONFIG
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "kosti" / "kosti.toml"


#: Keys (dotted) holding paths that are resolved against the config file's folder.
_FILE_RELATIVE = (("reader", "detector"), ("reader", "classifier"), ("storage", "dir"))


#: Largest configuration file read (bytes); the commented template is ~6 KiB.
MAX_CONFIG_BYTES = 1024 * 1024


def load_config(path: str | os.PathLike[str] | None = None) -> KostiConfig:
    """Read, merge and validate the configuration.

    ``path``: the TOML file (``--config``); it must exist. ``None``: ``$KOSTI_CONFIG`` when set (it must
    exist), else :func:`default_config_path`, and defaults when that file does not exist. ``KOSTI_*`` environment variables override the file.
    Returns the validated :class:`KostiConfig`. Raises :class:`ConfigError` (exit code 2) naming the
    source, field and reason of every problem (unreadable file, TOML syntax, unknown key, bad value).
    """
    if path is None and os.environ.get(CONFIG_ENV):
        path = os.environ[CONFIG_ENV]  # as --config: it must exist
    explicit = path is not None
    p = Path(path).expanduser() if path is not None else default_config_path()
    data: dict[str, Any] = {}
    label = str(p)
    if p.is_file():
        try:
            if p.stat().st_size > MAX_CONFIG_BYTES:
                raise ConfigError(f"{label}: larger than {MAX_CONFIG_BYTES // 1024} KiB; not a kosti configuration")
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{label}: invalid TOML: {exc}") from exc
        except RecursionError:
            raise ConfigError(f"{label}: invalid TOML: nested too deeply") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{label}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
        for section, key in _FILE_RELATIVE:
            sec = data.get(section)
            if isinstance(sec, dict) and isinstance(sec.get(key), str):
                q = Path(sec[key]).expanduser()
                sec[key] = str(q if q.is_absolute() else (p.parent / q).resolve())
    elif explicit:
        what = "is a folder, not a file" if p.is_dir() else (
            "not a regular file (a pipe or a device)" if p.exists() else "no such file")
        raise ConfigError(f"{label}: {what}")
    else:
        label = "defaults"
    try:
        return KostiConfig(**data)
    except ValidationError as exc:
        raise config_error(exc, label, KostiConfig) from None
    except SettingsError as exc:  # an environment value that is not valid JSON for a list/table
        m = re.search(r'field "(\w+)"', str(exc))
        section = (m.group(1) if m else "").upper()
        names = sorted(k for k in os.environ if section and k.upper().startswith(ENV_PREFIX + section))
        where = ", ".join("$" + n for n in names) or "environment"
        raise ConfigError(
            f"{where}: {section.lower() or 'value'}: not valid JSON (lists and tables in KOSTI_* variables "
            "are written as JSON, e.g. [[0,0],[1,0],[1,1],[0,1]])") from None
