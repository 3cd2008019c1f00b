"""kosti.engine — the rules of 1000 (Тысяча), Farkle and 10000: scoring, turns, the game.

Pure Python, no I/O. Public API (see each module for details):

* scoring (:mod:`kosti.engine.scoring`): :class:`ScoringRules`, :func:`score_throw`,
  :func:`score_keep`, :func:`legal_keeps`, :class:`ThrowScore`.
* rules (:mod:`kosti.engine.rules`): :class:`Rules`, the parameter tree of rules.md §1/§3.
* presets (:mod:`kosti.engine.presets`): :func:`get_preset`, :data:`PRESET_NAMES`,
  :func:`with_overrides`, :func:`resolve_rules`, :func:`load_rules_file`.
* the game (:mod:`kosti.engine.game`): :func:`new_game`, :class:`GameState` (immutable;
  ``apply(action) -> (state, events)``, ``allowed()``, ``summary()``, ``to_json()``/``from_json``),
  actions :class:`Roll`, :class:`Keep`, :class:`Bank`, :class:`Event`, :class:`Allowed`.
* errors (:mod:`kosti.engine.errors`): :class:`KostiEngineError`, :class:`BadInput` (exit 2),
  :class:`RuleViolation` (exit 3).
"""

from .errors import BadInput, KostiEngineError, RuleViolation
from .game import (
    Action,
    Allowed,
    Bank,
    Event,
    GameState,
    Keep,
    KeepOption,
    PlayerState,
    Reason,
    Roll,
    TurnState,
    action_from_json,
    action_to_json,
    first_player,
    new_game,
    seat_order,
)
from .presets import (
    PRESET_NAMES,
    PRIMARY_PRESETS,
    get_preset,
    list_presets,
    load_rules_file,
    resolve_rules,
    with_overrides,
)
from .rules import Rules
from .scoring import ScoringRules, ThrowScore, legal_keeps, score_keep, score_throw

__all__ = [
    "BadInput", "KostiEngineError", "RuleViolation",
    "Action", "Allowed", "Bank", "Event", "GameState", "Keep", "KeepOption", "PlayerState",
    "Reason", "Roll", "TurnState", "action_from_json", "action_to_json", "new_game",
    "first_player", "seat_order",
    "PRESET_NAMES", "PRIMARY_PRESETS", "get_preset", "list_presets", "load_rules_file",
    "resolve_rules", "with_overrides",
    "Rules",
    "ScoringRules", "ThrowScore", "legal_keeps", "score_keep", "score_throw",
]
