"""kosti.engine — the rules of 1000 (Тысяча), Farkle and 10000: scoring, turns, the game.

Pure Python, no I/O, imports nothing else from kosti. Public API (see each module for details):

* scoring (:mod:`kosti.engine.scoring`): :class:`ScoringRules`, :func:`score_throw`,
  :func:`score_keep`, :func:`legal_keeps`, :class:`ThrowScore` (tables and switches in
  :mod:`~kosti.engine.scoring_tables`, the precomputed results in :mod:`~kosti.engine.scoring_catalog`).
* rules (:mod:`kosti.engine.rules`): :class:`Rules`, the parameter tree of rules.md §1/§3 (one
  dataclass per house-rule module in :mod:`~kosti.engine.rule_modules`, dict conversion in
  :mod:`~kosti.engine.rules_dict`).
* presets (:mod:`kosti.engine.presets`): :func:`get_preset`, :data:`PRESET_NAMES`,
  :func:`with_overrides`, :func:`resolve_rules`, :func:`load_rules_file`.
* the game (:mod:`kosti.engine.game`): :func:`new_game`, :class:`GameState` (immutable;
  ``apply(action) -> (state, events)``, ``moves()``, ``summary()``, ``to_json()``/``from_json``; it
  implements the game protocol of :mod:`~kosti.engine.protocol`, as every game of :mod:`~kosti.engine.games`
  does), actions :class:`Roll`, :class:`Keep`, :class:`Bank` (:mod:`~kosti.engine.actions`),
  :class:`Event` (:mod:`~kosti.engine.records`), :class:`Moves` (:mod:`~kosti.engine.protocol`). A throw, a keep and a stop are
  :mod:`~kosti.engine.turn`; the end of a turn is :data:`kosti.engine.turn_end.AFTER_TURN`, one
  step per rule module in the order of rules.md §3.13; what the mover may do is
  :mod:`~kosti.engine.standing`.
* named values (:mod:`kosti.engine.kinds`): :class:`EventKind`, :class:`Phase`,
  :class:`TurnOutcome` — ``StrEnum`` members, equal to (and serialised as) their strings.
* texts (:mod:`kosti.engine.texts`): every English / Russian sentence, from a code and parameters.
* errors (:mod:`kosti.engine.errors`): :class:`KostiEngineError`, :class:`BadInput` (exit 2),
  :class:`RuleViolation` (exit 3).
"""
from .errors import BadInput, KostiEngineError, RuleViolation
from .game import (
    Action,
    Bank,
    Event,
    GameState,
    Keep,
    KeepOption,
    Moves,
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
from .kinds import EventKind, Phase, TurnOutcome
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
    "Action", "Bank", "Event", "GameState", "Keep", "KeepOption", "Moves", "PlayerState",
    "Reason", "Roll", "TurnState", "action_from_json", "action_to_json", "new_game",
    "first_player", "seat_order",
    "PRESET_NAMES", "PRIMARY_PRESETS", "get_preset", "list_presets", "load_rules_file",
    "resolve_rules", "with_overrides",
    "Rules", "EventKind", "Phase", "TurnOutcome",
    "ScoringRules", "ThrowScore", "legal_keeps", "score_keep", "score_throw",
]
