"""Rule trees to and from plain dicts, with strict validation naming the parameter path.

:func:`plain` turns any rule dataclass into JSON-able data; :func:`build` rebuilds a dataclass
from a dict, converting each value to its annotated type (:func:`convert`) and accepting the short
forms that rules.md prose writes (:func:`shorthand`). Every failure is a
:class:`~kosti.engine.errors.BadInput` whose message starts with the parameter path
(``"bolts.penalty: expected an integer, got 'x'"``).
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from dataclasses import fields
from typing import Any, Literal

from .errors import BadInput
from .rule_modules import (
    BARREL_KINDS,
    CONFIRM_BELOW_MINIMUM,
    DUMP_TRIGGER,
    ENDING_MODES,
    FINAL_ROUNDS,
    FIRST_PLAYER,
    HOT_DICE,
    HOT_DICE_WIN,
    KNOCKOFF_EFFECTS,
    MAX_PARAMETER,
    NEGATIVE_SCORES,
    OVERSHOOT_EFFECTS,
    PIT_EXIT,
    SEAT_SCORES,
    SET_ASIDE,
    SKIP_MODES,
    SKIP_TRIGGERS,
    SKIP_UPPER,
    Pit,
)
from .scoring import ScoringRules

__all__ = ["CHOICES", "build", "convert", "plain", "shorthand"]

CHOICES: dict[str, tuple[str, ...]] = {
    "selection.set_aside": SET_ASIDE,
    "hot_dice": HOT_DICE,
    "pits.exit": PIT_EXIT,
    "dump_truck.trigger": DUMP_TRIGGER,
    "barrel.kind": BARREL_KINDS,
    "barrel.knockoff_effect": KNOCKOFF_EFFECTS,
    "skip_barrels.mode": SKIP_MODES,
    "skip_barrels.upper": SKIP_UPPER,
    "skip_barrels.trigger": SKIP_TRIGGERS,
    "barrel.seat_score": SEAT_SCORES,
    "confirm_below_minimum": CONFIRM_BELOW_MINIMUM,
    "hot_dice_win": HOT_DICE_WIN,
    "ending.mode": ENDING_MODES,
    "ending.overshoot_effect": OVERSHOOT_EFFECTS,
    "final_round": FINAL_ROUNDS,
    "negative_scores": NEGATIVE_SCORES,
    "first_player": FIRST_PLAYER,
}


def plain(value: Any) -> Any:
    """A rule dataclass (or tuple of them, or a value) as plain JSON-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def convert(tp: Any, value: Any, path: str) -> Any:
    """Convert ``value`` to the annotated type ``tp`` or raise BadInput naming ``path``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value == "unlimited" and type(None) in args and int in args:
            value = None  # rules.md writes "attempts: unlimited", "max_falls: unlimited"
        if value == "none" and type(None) in args and any(dataclasses.is_dataclass(a) for a in args):
            value = None  # "failure_penalty: none"
        if value is None:
            if type(None) in args:
                return None
            raise BadInput(f"{path}: may not be null")
        non_none = [a for a in args if a is not type(None)]
        errors = []
        for a in non_none:
            try:
                return convert(a, value, path)
            except BadInput as exc:
                errors.append(str(exc))
        raise BadInput(errors[0] if errors else f"{path}: bad value {value!r}")
    if origin is Literal:
        if value not in args:
            raise BadInput(f"{path}: {value!r} is not one of {', '.join(map(str, args))}")
        return value
    if origin is tuple:
        if isinstance(value, str) and args and args[0] is str:
            value = [value]  # "trigger": "zero_turn" is accepted for ["zero_turn"]
        if not isinstance(value, (list, tuple)):
            raise BadInput(f"{path}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise BadInput(f"{path}: expected {len(args)} items, got {len(value)}")
        return tuple(convert(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if tp is ScoringRules:
        if isinstance(value, ScoringRules):
            return value
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected an object, got {value!r}")
        try:
            return ScoringRules.from_dict(value)
        except BadInput:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            raise BadInput(f"{path}: {exc}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        value = shorthand(tp, value)
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected an object, got {value!r}")
        return build(tp, value, path + ".")
    if tp is bool:
        if not isinstance(value, bool):
            raise BadInput(f"{path}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if not (isinstance(value, float) and value.is_integer()):
                raise BadInput(f"{path}: expected an integer, got {value!r}")
            value = int(value)
        if abs(value) > MAX_PARAMETER:  # a target of 1e308 was accepted and made every total meaningless
            raise BadInput(f"{path}: {value:.3g} is out of range (at most {MAX_PARAMETER:,} either way)")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise BadInput(f"{path}: expected a string, got {value!r}")
        choices = CHOICES.get(_choice_key(path))
        if choices is not None and value not in choices:
            raise BadInput(f"{path}: {value!r} is not one of {', '.join(choices)}")
        return value
    raise BadInput(f"{path}: unsupported parameter type {_type_name(tp)}")  # pragma: no cover


def shorthand(tp: type, value: Any) -> Any:
    """Short forms as rules.md prose writes them: a pit ``[lo, hi]`` or ``[lo, hi, exit]``;
    ``"barrel": "none"`` (the kind); ``"opening": 75`` (the threshold); ``"bolts": true`` /
    ``"three_farkles": -1000`` / ``"overtaking": 55`` (enabled, with that penalty)."""
    names = {f.name for f in fields(tp)}
    if tp is Pit and isinstance(value, (list, tuple)) and 2 <= len(value) <= 3:
        return dict(zip(("lo", "hi", "exit"), value))
    if isinstance(value, str) and "kind" in names:
        return {"kind": value}
    if isinstance(value, bool) and "enabled" in names:
        return {"enabled": value}
    if isinstance(value, int) and not isinstance(value, bool):
        if "threshold" in names:
            return {"threshold": value}
        if "enabled" in names and "penalty" in names:
            return {"enabled": True, "penalty": abs(value)}
    return value


def _choice_key(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    h = _HINTS.get(cls)
    if h is None:
        h = typing.get_type_hints(cls)
        _HINTS[cls] = h
    return h


def build(cls: type, data: dict[str, Any], prefix: str) -> Any:
    """An instance of the dataclass ``cls`` from ``data`` (missing keys take the defaults);
    ``prefix``: the path of ``cls`` in the tree (``"barrel."``; ``""`` at the root). Raises
    :class:`BadInput` for an unknown key or a bad value, naming its path."""
    if not isinstance(data, dict):
        raise BadInput(f"{prefix.rstrip('.') or 'rules'}: expected an object, got {data!r}")
    hints = _hints(cls)
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise BadInput(f"{prefix}{unknown[0]}: unknown rule parameter (known here: "
                       f"{', '.join(sorted(names))})")
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = convert(hints[name], value, prefix + name)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise BadInput(f"{prefix.rstrip('.') or 'rules'}: {exc}") from None

