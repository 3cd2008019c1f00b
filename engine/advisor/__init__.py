"""kosti.engine.advisor — advice and dice statistics, apart from the rules they read (pure, no I/O).

* :mod:`.throw_tables` — the exact risk of one throw (every 6^N throw enumerated under the preset's scoring);
* :mod:`.stop_or_throw` — "stop or throw": :class:`TurnPolicy`, the turn-level optimal policy by dynamic
  programming (expected recorded points of the turn; its limits in the module docstring);
* :mod:`.advice` — :func:`advise`: the policy's values as an :class:`Advice` with its reason in English and
  Russian (cli.md ``kosti advise``);
* :mod:`.pig` — the second objective, the chance to win two-player Pig (:func:`advise_pig`);
* :mod:`.dice_stats` — are the dice fair, was a player lucky (chi-square, luck against the expectation);
* :mod:`.cli` — ``kosti advise`` (registered by :mod:`kosti.engine.cli`).

The advisor reads the engine (:class:`~kosti.engine.game.GameState`, the turn steps); nothing of the
engine's rules imports it. docs/advisor.md describes the maths.
"""

from .advice import (
    CLI_KEYS,
    CONFIRM,
    HOT,
    NORMAL,
    Advice,
    ThrowClass,
    TurnPolicy,
    advise,
    bust_probability,
    expected_points,
    points_distribution,
    policy_for,
    prepare_tables,
    throw_classes,
    throw_kind,
)

__all__ = ["CLI_KEYS", "CONFIRM", "HOT", "NORMAL", "Advice", "ThrowClass", "TurnPolicy", "advise",
           "bust_probability", "expected_points", "points_distribution", "policy_for", "prepare_tables",
           "throw_classes", "throw_kind"]
