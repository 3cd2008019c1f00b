"""Configuration errors in plain words: :class:`ConfigError` and the translation of pydantic's errors.

A message names where the bad value came from (the file, or the ``KOSTI_*`` variable), the dotted field
and the reason, all on one line: ``/etc/kosti/kosti.toml: server.port: must be 1–65535, got 70000``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

ENV_PREFIX = "KOSTI_"
ENV_NESTED = "__"


class ConfigError(ValueError):
    """The configuration cannot be used. ``exit_code`` 2 (bad input, ``shared/docs/cli.md``).

    ``str()`` is one line: ``<source>: <field>: <reason>[; <source>: <field>: <reason> ...]``.
    ``errors`` holds the ``(source, field, reason)`` triples (``field`` is dotted, list items as ``[i]``;
    empty for whole-file problems such as a TOML syntax error).
    """

    exit_code = 2

    def __init__(self, message: str, errors: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


def config_error(exc: ValidationError, file_label: str, root: type[BaseModel]) -> ConfigError:
    """One :class:`ConfigError` naming the origin (``file_label`` or ``$KOSTI_…``), the dotted field and the
    reason in plain words of every error in ``exc``; ``root`` is the model validated (field bounds and key
    names for "did you mean")."""
    errors: list[tuple[str, str, str]] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc", ()))
        field, reason = _describe(err, loc, root)
        errors.append((_origin(tuple(re.sub(r"\[\d+\]", "", field).split(".")), file_label), field, reason))
    msg = "; ".join(f"{src}: {field}: {reason}" if field else f"{src}: {reason}"
                    for src, field, reason in errors)
    return ConfigError(msg, errors)


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _origin(loc: tuple[Any, ...], file_label: str) -> str:
    """``$KOSTI_SECTION__KEY`` when the environment supplied the value at ``loc``, else the file."""
    env = {k.upper(): k for k in os.environ}
    names = [str(p) for p in loc if not isinstance(p, int)]
    for depth in range(len(names), 0, -1):
        name = ENV_PREFIX + ENV_NESTED.join(names[:depth]).upper()
        if name in env:
            return "$" + env[name]
    return file_label


def _field_info(model: Any, key: Any) -> Any:
    """The pydantic ``FieldInfo`` of ``model`` read under ``key`` (its name or an older spelling accepted
    by its ``validation_alias``), or ``None``."""
    fields = getattr(model, "model_fields", None) or {}
    if key in fields:
        return fields[key]
    for info in fields.values():
        choices = getattr(info.validation_alias, "choices", ())
        if key in choices:
            return info
    return None


def _field_bounds(loc: tuple[Any, ...], root: type[BaseModel]) -> tuple[Any, ...] | None:
    """The (ge, gt, le, lt) bounds declared on the field at ``loc`` (or its list item type)."""
    import annotated_types as at

    model: Any = root
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        info = _field_info(model, part)
        if info is None:
            return None
        model = info.annotation
    if info is None:
        return None
    ge = gt = le = lt = None
    for m in info.metadata:
        if isinstance(m, at.Ge):
            ge = m.ge
        elif isinstance(m, at.Gt):
            gt = m.gt
        elif isinstance(m, at.Le):
            le = m.le
        elif isinstance(m, at.Lt):
            lt = m.lt
    return ge, gt, le, lt


def _describe(err: Mapping[str, Any], loc: tuple[Any, ...], root: type[BaseModel]) -> tuple[str, str]:
    """Turn one pydantic error into ``(dotted field, reason)`` in plain words."""
    typ, ctx, value = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    field = _dotted(loc)
    got = f", got {_show(value)}"
    if typ in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        b = _field_bounds(loc, root)
        if b is None or all(x is None for x in b):  # e.g. a polygon coordinate
            b = (ctx.get("ge"), ctx.get("gt"), ctx.get("le"), ctx.get("lt"))
            if loc and isinstance(loc[-1], int) and len(loc) >= 2 and isinstance(loc[-2], int):
                b = (0, None, 1, None)  # normalised coordinates
        ge, gt, le, lt = (_num(x) for x in b)
        if isinstance(value, str):  # an environment value: show it as typed
            got = f", got {value}"
        if ge is not None and le is not None:
            return field, f"must be {ge}–{le}{got}"
        lo = f"≥ {ge}" if ge is not None else (f"> {gt}" if gt is not None else None)
        hi = f"≤ {le}" if le is not None else (f"< {lt}" if lt is not None else None)
        return field, f"must be {' and '.join(x for x in (lo, hi) if x)}{got}"
    if typ == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1]) if loc else ""
        siblings = _field_names(parent, root)
        hint = difflib.get_close_matches(key, siblings, n=1)
        tail = f" (did you mean {hint[0]!r}?)" if hint else (
            f" (known: {', '.join(siblings)})" if siblings else "")
        return field, f"unknown key{tail}"
    if typ == "missing":
        return field, "required"
    if typ in ("int_parsing", "int_type", "int_from_float"):
        return field, f"must be an integer{got}"
    if typ in ("float_parsing", "float_type"):
        return field, f"must be a number{got}"
    if typ in ("bool_parsing", "bool_type"):
        return field, f"must be true or false{got}"
    if typ in ("string_type",):
        return field, f"must be a string{got}"
    if typ in ("list_type", "tuple_type"):
        return field, f"must be a list{got}"
    if typ in ("too_short", "too_long") and loc and isinstance(loc[-1], int):
        return field, f"must be an [x, y] pair{got}"
    if typ in ("model_type", "dict_type", "model_attributes_type"):
        return field, f"must be a table (a [{field}] section){got}"
    if typ == "literal_error":
        return field, f"must be one of {ctx.get('expected', '?')}{got}"
    if typ == "value_error":
        msg = str(ctx.get("error", err.get("msg", "")))
        msg = msg.removeprefix("Value error, ")
        m = re.match(r"^([a-z_]+(?:\.[a-z_]+)+): (.*)$", msg, re.S)
        if m:  # a cross-field check names its own field
            return m.group(1), m.group(2)
        return field, msg
    return field, f"{err.get('msg', 'invalid')}{got}"


def _num(x: Any) -> Any:
    """Bounds as written by people: 0.0 → 0, 120.0 → 120, 0.25 → 0.25."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _field_names(loc: tuple[Any, ...], root: type[BaseModel]) -> list[str]:
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        info = _field_info(model, part)
        if info is None:
            return []
        model = info.annotation
    fields = getattr(model, "model_fields", None)
    return list(fields) if fields else []


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    return json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, float) else f"{value:g}"
