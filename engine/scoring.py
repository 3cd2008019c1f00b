"""Scoring of one throw: the evaluation algorithm and the eleven scoring tables of rules.md §2.

This module is the throw-scoring core of the rules engine (``../shared/docs/rules.md`` §2, with §1.3
legal keeps, §1.7.3 the two-dice double, §3.10 instant wins and the §6.2 decisions). It knows
nothing about turns, scores or players; :mod:`kosti.engine.game` builds on it.

Public API
----------
* :class:`ScoringRules` — which table (``"CLASSIC_X20"`` … ``"FARKLE_CLASS"``, the rules.md names of
  T1–T11) and every switch of that table. Immutable and hashable. ``ScoringRules()`` is T1 with five
  dice. Switches that a table does not have are ``None``.
* :func:`score_throw` — the best legal keep of a throw (rules.md §2.1 steps 1–4: maximum value, ties
  → more dice). A throw with no scoring die is a bust.
* :func:`score_keep` — the value of a chosen set of dice at its best grouping (§1.3: "a set of dice
  that is set aside is always valued at its best possible grouping"); raises :class:`IllegalKeep`
  when a kept die belongs to no combination.
* :func:`legal_keeps` — every legal set-aside of a throw (distinct multisets), best first, for the
  ``selection.set_aside = at_least_one`` presets.
* :class:`ThrowScore`, :class:`Combination` — the immutable results.

Every result is precomputed per distinct :class:`ScoringRules` over all 923 multisets of 1–6 faces
(rules.md §2.1, last paragraph), so scoring a throw from raw faces costs one ``sorted`` and one dict
lookup; results are shared objects (they are frozen, so sharing is safe).

Points are game points (1000: multiples of 5; Farkle/10000: multiples of 50). Faces are the
integers 1–6 (anything that compares equal to them, e.g. ``numpy.int64``, is accepted).

Decisions where rules.md leaves room (all follow its RECOMMENDED defaults of §6.2; none deviates)
-----------------------------------------------------------------------------------------------
* Ties between keeps of equal value go to more dice (§2.1 step 4, §6.3), then to the smaller
  sorted faces (only exotic custom tables reach this). Ties between groupings of one keep (e.g.
  ZARY_PLUS10 four 1s = 110 = three 1s + a single 1) are reported as the grouping with fewer
  combinations; the points are the same either way.
* ``three_pairs_same_face`` (§6.15 "allow both, keep the switch") governs both "four of a kind +
  a pair" and "six of a kind" as three pairs; false = only three different pairs.
* The names of the six-dice n-of-a-kind variants (``kind_bonus``: none / doubling / linear / flat /
  high) are this module's; rules.md lists the values (F2, F4, F5 variants) but names no parameter.
* ``ones_count_as_ten`` is one switch for both "× face" formulas that rules.md flags (T3 four 1s,
  §6.10; T9 four/five/six 1s, §6.17). ``three_ones_value`` (§6.18) exists in every six-dice table.
* RAZNOOBRAZIE_UNKNOWN = T1 values with ``instant_win`` defaulting to ``five_of_a_kind`` (§6.12);
  BOX_X100 defaults to ``five_of_a_kind`` too (T4 "1000 + instant win"). A preset may override.
* The two-dice double (§1.7.3) is auto-accepted (§6.7) and only when the throw is otherwise a bust
  (1-1 = 20 and 5-5 = 10 score normally); it needs exactly two *thrown* dice.
* ``instant_win`` describes the throw (§3.10 "checked right after a throw"): at least five 1s /
  five equal faces / six 1s among the thrown dice, whatever the player keeps.
* A bust reports ``remaining_dice`` = number of dice thrown (nothing was set aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import texts
from .errors import BadInput
from .plurals import count_en
from .scoring_catalog import (
    Combination,
    IllegalKeep,
    ThrowScore,
    _counts,
    _faces,
    _lookup,
    combination_catalog,
)
from .scoring_tables import (
    COMBINATION_LABELS,
    COMBINATION_NAMES,
    FIVE_DICE_TABLES,
    INSTANT_WINS,
    KIND_BONUSES,
    QUAD_RULES,
    SIX_DICE_TABLES,
    TABLES,
    ScoringRules,
    _rebuild_rules,  # noqa: F401 - pickles name it here
)

__all__ = [
    "COMBINATION_LABELS",
    "COMBINATION_NAMES",
    "FIVE_DICE_TABLES",
    "INSTANT_WINS",
    "KIND_BONUSES",
    "QUAD_RULES",
    "SIX_DICE_TABLES",
    "TABLES",
    "Combination",
    "IllegalKeep",
    "ScoringRules",
    "ThrowScore",
    "combination_catalog",
    "legal_keeps",
    "score_keep",
    "score_throw",
]

# ----------------------------------------------------------------------------------------------
# Public scoring functions


def _bad_faces(faces: Any, r: ScoringRules, what: str = "throw") -> BadInput:
    """The BadInput explaining why ``faces`` is not a throw of 1..dice faces 1–6."""
    try:
        items = list(faces)
    except TypeError:
        return BadInput(f"{what}: expected a list of faces 1-6, got {faces!r}")
    for f in items:
        if isinstance(f, bool) or not (f == int(f) if isinstance(f, (int, float)) else False) \
                or not 1 <= f <= 6:
            return BadInput(f"{what}: face {f!r} is outside 1-6")
    if not 1 <= len(items) <= r.dice_count:
        return BadInput(f"{what}: {count_en(len(items), 'die')}; a throw has 1 to {r.dice_count} dice "
                        f"in this game")
    return BadInput(f"{what}: invalid faces {items!r}")


def score_throw(faces: Sequence[int], rules: ScoringRules) -> ThrowScore:
    """Score one throw: its best legal keep (rules.md §2.1).

    ``faces``: 1..``rules.dice`` faces, each 1–6, in any order. Returns the keep of maximum value;
    ties go to the keep with more dice (§2.1 step 4, §6.3), then to the smaller sorted faces.
    This is the set-aside for ``selection.set_aside = all_scoring``. A throw with no legal keep
    is a bust (``bust`` true, 0 points). With ``two_dice_double_zero`` a double on exactly two
    thrown dice is kept for 0 points (§1.7.3). ``instant_win`` is evaluated on the throw (§3.10).

    Raises :class:`BadInput` (a ``ValueError``) for a face outside 1–6 or a number of dice
    outside 1..``rules.dice``. Cost: one sort + one dict lookup (precomputed per rules).
    """
    lk = rules._cache or _lookup(rules)
    try:
        return lk.throws[tuple(sorted(faces))]
    except (KeyError, TypeError):
        raise _bad_faces(faces, rules) from None


def legal_keeps(faces: Sequence[int], rules: ScoringRules) -> list[ThrowScore]:
    """Every legal set-aside of one throw (rules.md §1.3, §2.1 step 2), as distinct multisets.

    Sorted best first: more points, then more dice, then smaller sorted faces; the first entry
    equals :func:`score_throw`. Each keep is valued at its best grouping. Empty list for a bust.
    Raises :class:`BadInput` like :func:`score_throw`."""
    lk = rules._cache or _lookup(rules)
    try:
        return list(lk.legal[tuple(sorted(faces))])
    except (KeyError, TypeError):
        raise _bad_faces(faces, rules) from None


def score_keep(kept: Sequence[int], rules: ScoringRules, *,
               throw: Sequence[int] | None = None) -> ThrowScore:
    """Value of a chosen set of dice at its best grouping (rules.md §1.3).

    ``kept``: the faces set aside (1..``rules.dice`` dice, any order). ``throw``: the whole throw
    they come from; when given, ``kept`` must be a sub-multiset of it, and ``remaining_dice``,
    ``hot_dice``, ``instant_win`` and the two-dice double (§1.7.3, needs exactly two thrown dice)
    refer to that throw. Without ``throw`` the kept dice are taken as the whole throw (so
    ``remaining_dice`` is 0 and ``hot_dice`` true).

    Raises :class:`BadInput` for bad faces / dice counts or kept dice missing from ``throw``, and
    :class:`IllegalKeep` (a ``RuleViolation`` with exit code 3, also a ``ValueError``) when
    ``kept`` is empty or a kept die belongs to no combination of the kept set ("no dead dice may be
    kept").
    """
    lk = rules._cache or _lookup(rules)
    try:
        key = tuple(sorted(kept))
    except TypeError:
        raise _bad_faces(kept, rules, "keep") from None
    if throw is None:
        throw_key = key
    else:
        try:
            throw_key = tuple(sorted(throw))
        except TypeError:
            raise _bad_faces(throw, rules) from None
        if throw_key not in lk.throws:
            raise _bad_faces(throw, rules)
    if not key:
        raise IllegalKeep(*texts.empty_keep())
    result = lk.legal_by_keep.get((throw_key, key))
    if result is not None:
        return result
    if key not in lk.throws:
        raise _bad_faces(kept, rules, "keep")
    if throw is not None and any(a > b for a, b in zip(_counts(key), _counts(throw_key))):
        raise BadInput(f"keep: {list(key)} is not part of the throw {list(throw_key)}")
    # Not a legal keep: name the dice that no legal sub-keep can use.
    usable = _counts(())
    for o in lk.legal[key]:
        usable = tuple(max(a, b) for a, b in zip(usable, _counts(o.scoring_dice)))
    dead = _faces([max(0, a - b) for a, b in zip(_counts(key), usable)])
    if not dead:  # every face is usable somewhere, but not all together (e.g. a 4th 2 in Farkle)
        best = lk.throws[key].scoring_dice
        dead = _faces([a - b for a, b in zip(_counts(key), _counts(best))])
    raise IllegalKeep(*texts.illegal_keep(key, dead), dead)

