"""The actions of the 1000 / Farkle game (rules.md §1.2): a throw, a keep, a stop.

:class:`Roll` (the faces of one throw), :class:`Keep` (which scoring dice to set aside, only where
``selection.set_aside`` is ``at_least_one``) and :class:`Bank` ("хватит"), with their replay-event
JSON form of cli.md (:func:`action_from_json` / :func:`action_to_json`). Faces are checked here
(integers 1–6, else :class:`~kosti.engine.errors.BadInput`); whether the rules allow the action now
is :meth:`kosti.engine.game.GameState.apply`'s business.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import BadInput

__all__ = ["Action", "Bank", "Keep", "Roll", "action_from_json", "action_to_json"]

def _faces_tuple(faces: Any) -> tuple[int, ...]:
    if isinstance(faces, (str, bytes)) or not isinstance(faces, Iterable):
        raise BadInput(f"faces must be a list of integers 1-6, got {faces!r}")
    out = []
    for f in faces:
        if isinstance(f, bool) or not isinstance(f, int):
            raise BadInput(f"a face must be an integer 1-6, got {f!r}")
        if f < 1 or f > 6:
            raise BadInput(f"a face must be 1-6, got {f}")
        out.append(f)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Roll:
    """One throw: the faces (1–6) of exactly ``GameState.dice_to_throw`` dice, in any order."""

    faces: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", _faces_tuple(self.faces))


@dataclass(frozen=True, slots=True)
class Keep:
    """Set aside these scoring dice (faces) from the last throw (``at_least_one`` presets)."""

    faces: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", _faces_tuple(self.faces))


@dataclass(frozen=True, slots=True)
class Bank:
    """Stop ("хватит") and record the turn points."""


Action = Roll | Keep | Bank


def action_from_json(d: Any) -> Action:
    """Parse a replay event: ``{"roll": [faces]}``, ``{"keep": [faces]}`` or ``{"bank": true}``
    (cli.md). Raises :class:`BadInput` for anything else."""
    if not isinstance(d, dict) or len(d) != 1:
        raise BadInput(f"an event must be one of {{'roll': [...]}}, {{'keep': [...]}}, "
                       f"{{'bank': true}}; got {d!r}")
    (key, value), = d.items()
    if key == "roll":
        return Roll(value)
    if key == "keep":
        return Keep(value)
    if key == "bank":
        if value is not True:
            raise BadInput(f"'bank' must be true, got {value!r}")
        return Bank()
    raise BadInput(f"unknown event {key!r} (expected roll, keep or bank)")


def action_to_json(a: Action) -> dict[str, Any]:
    """The replay-event form of an action (inverse of :func:`action_from_json`)."""
    if isinstance(a, Roll):
        return {"roll": list(a.faces)}
    if isinstance(a, Keep):
        return {"keep": list(a.faces)}
    return {"bank": True}

