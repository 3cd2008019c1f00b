"""The configuration file written from the model: :func:`render_config`, :func:`write_default_config`.

The commented TOML text is generated from the section models (:mod:`kosti.config.sections`): a header,
then per section ``[name]`` and per field its ``description`` as ``#`` comment lines above ``key = value``.
An unset (``None``) key becomes a commented-out example (the field's ``json_schema_extra["example"]``);
a table-valued field (``game.overrides``) is written as sub-tables after the section's keys.
``deploy/kosti.toml`` is :func:`render_config` of the defaults (a test keeps the two equal).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kosti.config.errors import ConfigError, config_error
from kosti.config.sections import SECTIONS, FileConfig

#: The file's first lines.
HEADER = """\
# kosti configuration — camera scorekeeper for the dice game 1000 (Тысяча), Farkle and 10000.
# Environment variables override this file: KOSTI_<SECTION>__<KEY>, e.g. KOSTI_SERVER__PORT=8080.
# Check it with `kosti config check`; relative paths are relative to this file's folder.
# After editing: sudo systemctl restart kosti   (docs/setup.md)
"""


def _toml_value(v: Any) -> str:
    """Format a scalar or (nested) list as a TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"cannot write {v} to TOML")
        return repr(v)
    if isinstance(v, Path):
        v = str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _toml_tables(prefix: str, table: Mapping[str, Any]) -> str:
    """Render ``table`` as ``[prefix]`` with sub-tables as ``[prefix.key]``."""
    scalars = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
    subs = {k: v for k, v in table.items() if isinstance(v, Mapping)}
    out = f"[{prefix}]\n" + "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in scalars.items())
    for k, v in subs.items():
        out += _toml_tables(f"{prefix}.{_toml_key(k)}", v)
    return out


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def render_config(values: Mapping[str, Any] | None = None) -> str:
    """The commented TOML text of a configuration, generated from the section models.

    ``values``: nested dict of section → key → value (as in the file); missing keys take the defaults.
    Values are validated first (:class:`ConfigError` on a bad one). The result parses back to the same
    configuration (:func:`kosti.config.load_config`).
    """
    data = _plain_defaults()
    for section, keys in (values or {}).items():
        if section not in data or not isinstance(keys, Mapping):
            raise ConfigError(f"{section}: unknown section (known: {', '.join(data)})")
        data[section].update(keys)
    validate_plain(data)
    out = [HEADER]
    for name, model in SECTIONS.items():
        out.append(f"\n[{name}]\n")
        tables: list[str] = []
        for key, info in model.model_fields.items():
            comment = "".join(f"# {line}".rstrip() + "\n" for line in (info.description or "").splitlines())
            value = data[name].get(key)
            if isinstance(value, Mapping):  # a table: after the section's keys (TOML), its comment with it
                tables.append(comment + (_toml_tables(f"{name}.{key}", value) if value else ""))
            elif value is None:
                example = (info.json_schema_extra or {}).get("example", "")  # type: ignore[union-attr]
                out.append(f"{comment}# {key} = {_toml_value(example)}\n")
            else:
                out.append(f"{comment}{key} = {_toml_value(value)}\n")
        out.extend(tables)
    return "".join(out)


def _plain_defaults() -> dict[str, dict[str, Any]]:
    """Default values per section as plain Python (tuples → lists, Paths → str), without the environment."""
    return {name: json.loads(model().model_dump_json(exclude_none=False)) for name, model in SECTIONS.items()}


def validate_plain(data: Mapping[str, Any]) -> None:
    """Validate ``data`` (section → key → value) as the file alone would give it, without ``KOSTI_*``
    environment overrides. Raises :class:`ConfigError` naming ``values`` as the origin."""
    try:
        FileConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, "values", FileConfig) from None


def write_default_config(path: str | os.PathLike[str], values: Mapping[str, Any] | None = None, *,
                         overwrite: bool = False, mode: int = 0o600) -> Path:
    """Write the commented config file (defaults, or ``values`` as in :func:`render_config`) to ``path``.

    Never replaces an existing file unless ``overwrite`` (it holds the PIN and calibrated zones):
    raises :class:`ConfigError` instead. Writes a temporary file and renames it into place, with
    ``mode`` (default 0600: the file may hold the PIN). Creates missing parent folders. Returns the path.
    """
    from kosti.common.writable import UnwritablePath, writable_file

    p = Path(path).expanduser()
    if p.exists() and not overwrite:
        raise ConfigError(f"{p}: already exists; not overwriting it (it may hold your PIN and zones)")
    text = render_config(values)
    try:
        writable_file(p, "config file")
    except UnwritablePath as exc:
        raise ConfigError(str(exc)) from None
    fd, tmp = tempfile.mkstemp(prefix=".kosti-", suffix=".toml.tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if overwrite:
            os.replace(tmp, p)
        else:
            os.link(tmp, p)  # fails if the file appeared meanwhile: never clobber
            os.unlink(tmp)
    except FileExistsError:
        os.unlink(tmp)
        raise ConfigError(f"{p}: already exists; not overwriting it") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p


def parse_assignment(text: str) -> tuple[str, str, Any]:
    """Parse ``section.key=value`` (as given to ``kosti config init --set``) into ``(section, key, value)``.

    The value is read as a TOML value when it is one (``8080``, ``true``, ``[[0,0],[1,0],[1,1]]``,
    ``"x"``), else taken as a plain string (``0.0.0.0``, ``/var/lib/kosti``, ``012345``).
    Raises :class:`ConfigError` when the left side is not ``section.key``.
    """
    left, sep, right = text.partition("=")
    m = re.fullmatch(r"\s*([a-z_]+)\.([a-z_]+)\s*", left)
    if not sep or not m:
        raise ConfigError(f"--set {text!r}: expected section.key=value, e.g. server.port=8080")
    raw = right.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return m.group(1), m.group(2), value
