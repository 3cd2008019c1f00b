"""``[game]``: the rule preset, its overrides and the players."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator
from pydantic_settings import NoDecode

from kosti.config.base import Section, doc
from kosti.engine.names import check_player_names


class GameSettings(Section):
    """Game (``[game]``): rule preset (``kosti rules``), parameter overrides and players."""

    preset: str = Field("classic", description=doc("""
        Rule preset (`kosti rules` lists them): classic, farkle, ten_thousand, ..."""))
    players: Annotated[list[str], NoDecode] = Field(default_factory=list, description=doc("""
        Players in seat order; [] = enter them on the dashboard. Names are unique (ignoring case), at most
        40 characters each, at most 12 players (kosti.engine.names)."""))
    overrides: dict[str, Any] = Field(default_factory=dict, description=doc("""
        Rule parameter overrides (names as in `kosti rules --json`), as tables, for example:
          [game.overrides.opening]
          threshold = 75"""))

    @field_validator("players", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if isinstance(v, str):  # KOSTI_GAME__PLAYERS=Ann,Boris or a JSON list
            if v.lstrip().startswith("["):
                try:
                    return json.loads(v)
                except ValueError:
                    raise ValueError(f"not a JSON list of names: {v!r}") from None
            return [p for p in (s.strip() for s in v.split(",")) if p]
        return v

    @field_validator("players")
    @classmethod
    def _players_ok(cls, v: list[str]) -> list[str]:
        return check_player_names(v) if v else []  # the one rule; its PlayerNameError is a ValueError

    @model_validator(mode="after")
    def _rules_ok(self) -> GameSettings:
        problem = _rules_problem(self.preset, self.overrides)
        if problem:
            raise ValueError(problem)
        return self


def _rules_problem(preset: str, overrides: Mapping[str, Any]) -> str | None:
    """Ask the rules engine whether ``preset`` + ``overrides`` is a valid rule set; ``None`` if it is.

    Uses :func:`kosti.engine.presets.resolve_rules` (the same check ``kosti replay`` applies), which
    raises ``BadInput`` naming an unknown preset or parameter.
    """
    if not re.fullmatch(r"[a-z0-9_]+", preset):
        return f"game.preset: not a preset name: {preset!r} (see kosti rules)"
    try:
        from kosti.engine.presets import get_preset, resolve_rules
    except ImportError:  # the engine is not installed: only the name's form is checked
        return None
    from kosti.engine.games import GAME_PRESETS, game_preset

    try:
        if preset not in GAME_PRESETS:  # the other dice games of games.md are presets too
            get_preset(preset)
    except Exception as exc:  # noqa: BLE001 - BadInput (exit 2) carries the reason
        if getattr(exc, "exit_code", None) != 2 and not isinstance(exc, ValueError | KeyError):
            raise
        return f"game.preset: {_first_line(exc)}"
    if overrides:
        try:
            if preset in GAME_PRESETS:
                game_preset(preset).params.with_overrides(dict(overrides))
            else:
                resolve_rules({"preset": preset, "overrides": dict(overrides)})
        except Exception as exc:  # noqa: BLE001
            if getattr(exc, "exit_code", None) != 2 and not isinstance(exc, ValueError | KeyError | TypeError):
                raise
            return f"game.overrides: {_first_line(exc)}"
    return None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
