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

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import BadInput, RuleViolation

__all__ = [
    "TABLES",
    "FIVE_DICE_TABLES",
    "SIX_DICE_TABLES",
    "INSTANT_WINS",
    "KIND_BONUSES",
    "QUAD_RULES",
    "COMBINATION_NAMES",
    "COMBINATION_LABELS",
    "ScoringRules",
    "Combination",
    "ThrowScore",
    "IllegalKeep",
    "score_throw",
    "score_keep",
    "legal_keeps",
    "combination_catalog",
]

# ----------------------------------------------------------------------------------------------
# Names (rules.md §2.2–2.3 table names; cli.md combination names)

#: The five-dice "1000" tables of rules.md §2.2 (T1–T5).
FIVE_DICE_TABLES: tuple[str, ...] = (
    "CLASSIC_X20",           # T1  RU-A, RU-B, ID-D: three ×10, four ×20, five ×100
    "ZARY_PLUS10",           # T2  RU-D: four = triple + 10 (quad_rule plus10) or ×20
    "PROGRAM_X50",           # T3  RU-E: four ×50, five = 1000
    "BOX_X100",              # T4  ID-A: four ×100 (ones like twos), five = 1000 + instant win
    "RAZNOOBRAZIE_UNKNOWN",  # T5  RU-C: list lost → T1 values, five of a kind wins (§6.12)
)
#: The six-dice Farkle / 10000 tables of rules.md §2.3 (T6–T11).
SIX_DICE_TABLES: tuple[str, ...] = (
    "FARKLE_BASE",            # T6  F2: straight 3000, three pairs 1500, no n-of-a-kind bonus
    "TEN_THOUSAND_DOUBLING",  # T7  F3: each die beyond three doubles; straight 1500, pairs 1500
    "FARKLE_OFFICIAL",        # T8  F4: three pairs 750, straight 1000
    "WIKIHOW_10000",          # T9  F1: 4/5/6 of a kind = 200/400/800 × face (ones ×10, §6.17)
    "DIX_MILLE",              # T10 F6: 4 kind ×2, 5 kind ×4, (6 kind ×8), 1-2-3-4-5 = 1250
    "FARKLE_CLASS",           # T11 F5: values of T8 (§6.20)
)
TABLES: tuple[str, ...] = FIVE_DICE_TABLES + SIX_DICE_TABLES

#: ``instant_win`` choices (rules.md §3.10).
INSTANT_WINS: tuple[str, ...] = ("none", "five_ones", "five_of_a_kind", "six_ones")
#: ``quad_rule`` choices of ZARY_PLUS10 (rules.md §2.2 T2).
QUAD_RULES: tuple[str, ...] = ("plus10", "x20")
#: ``kind_bonus`` choices of the six-dice tables: value of 4/5/6 of a kind (rules.md §2.3).
#: ``none`` — no bonus, extra dice score only as singles (T6 base, T8 base, T11 base);
#: ``doubling`` — 2×/4×/8× the triple (T7, T9, T10, F5 "doubling", "Facebook Farkle");
#: ``linear`` — 2×/3×/4× the triple (F2 first variant, F4 variant);
#: ``flat`` — 1000/2000/3000 (F2 second variant, F5 variant, "Pocket Farkle");
#: ``high`` — 4×/6×/8× the triple (F2 third variant).
KIND_BONUSES: tuple[str, ...] = ("none", "doubling", "linear", "flat", "high")

#: Combination names exactly as ``../shared/docs/cli.md`` (``kosti score``) lists them.
COMBINATION_NAMES: tuple[str, ...] = (
    "single", "three_of_a_kind", "four_of_a_kind", "five_of_a_kind", "six_of_a_kind",
    "small_straight", "large_straight", "straight6", "three_pairs", "two_triplets", "double_zero",
)
#: Player-facing labels of the combinations: name → (English, Russian) (rules.md §2.1, §0.3).
COMBINATION_LABELS: dict[str, tuple[str, str]] = {
    "single": ("single", "одиночная кость"),
    "three_of_a_kind": ("three of a kind", "три одинаковых"),
    "four_of_a_kind": ("four of a kind", "четыре одинаковых"),
    "five_of_a_kind": ("five of a kind", "пять одинаковых"),
    "six_of_a_kind": ("six of a kind", "шесть одинаковых"),
    "small_straight": ("small straight 1-2-3-4-5", "малый стрит"),
    "large_straight": ("large straight 2-3-4-5-6", "большой стрит"),
    "straight6": ("straight 1-6", "стрит 1–6"),
    "three_pairs": ("three pairs", "три пары"),
    "two_triplets": ("two triplets", "две тройки"),
    "double_zero": ("double on two dice (0 points)", "дубль на двух костях (0 очков)"),
}
_KIND_NAMES = {3: "three_of_a_kind", 4: "four_of_a_kind", 5: "five_of_a_kind", 6: "six_of_a_kind"}
_NAME_ORDER = {name: i for i, name in enumerate(COMBINATION_NAMES)}

# Per-table defaults of every switch. A switch absent from a table's dict does not apply to it
# (its field stays None and setting it raises). Sources: rules.md §2.2, §2.3, §6.2.
_FIVE_COMMON: dict[str, Any] = {
    "straights": True, "small_straight": 125, "large_straight": 250,  # §2.2, §6.11
}
_SIX_COMMON: dict[str, Any] = {
    "straights": True, "small_straight": 0, "large_straight": 0,
    "three_pairs": 1500, "three_pairs_same_face": True,  # §2.1, §6.15
    "straight6": 1500, "two_triplets": 0,
    "kind_bonus": "none", "three_ones_value": 1000,  # §6.18
    "six_ones_value": 0,  # F2 variant "six 1s = 5000"; 0 = no special value
}
_TABLE_DEFAULTS: dict[str, dict[str, Any]] = {
    "CLASSIC_X20": {**_FIVE_COMMON, "instant_win": "none"},
    "ZARY_PLUS10": {**_FIVE_COMMON, "instant_win": "none", "quad_rule": "plus10"},
    "PROGRAM_X50": {**_FIVE_COMMON, "instant_win": "none", "ones_count_as_ten": True},
    "BOX_X100": {**_FIVE_COMMON, "instant_win": "five_of_a_kind"},
    "RAZNOOBRAZIE_UNKNOWN": {**_FIVE_COMMON, "instant_win": "five_of_a_kind"},
    "FARKLE_BASE": {**_SIX_COMMON, "instant_win": "none", "straight6": 3000},
    "TEN_THOUSAND_DOUBLING": {**_SIX_COMMON, "instant_win": "none", "kind_bonus": "doubling"},
    "FARKLE_OFFICIAL": {**_SIX_COMMON, "instant_win": "none", "three_pairs": 750,
                        "straight6": 1000},
    "WIKIHOW_10000": {**_SIX_COMMON, "instant_win": "none", "kind_bonus": "doubling",
                      "ones_count_as_ten": True},
    "DIX_MILLE": {**_SIX_COMMON, "instant_win": "none", "kind_bonus": "doubling",
                  "small_straight": 1250, "three_pairs": 0, "straight6": 0},
    "FARKLE_CLASS": {**_SIX_COMMON, "instant_win": "none", "three_pairs": 750, "straight6": 1000},
}
#: Switches every table has (besides ``table`` and ``dice``).
_UNIVERSAL = ("two_dice_double_zero", "instant_win")
#: Order of the switch fields in :meth:`ScoringRules.to_dict`.
_SWITCHES = (
    "two_dice_double_zero", "instant_win", "straights", "small_straight", "large_straight",
    "quad_rule", "ones_count_as_ten", "three_pairs", "three_pairs_same_face", "straight6",
    "two_triplets", "kind_bonus", "three_ones_value", "six_ones_value",
)
_POINT_SWITCHES = ("small_straight", "large_straight", "three_pairs", "straight6",
                   "two_triplets", "three_ones_value", "six_ones_value")
_BOOL_SWITCHES = ("two_dice_double_zero", "straights", "ones_count_as_ten", "three_pairs_same_face")
_CHOICE_SWITCHES = {"instant_win": INSTANT_WINS, "quad_rule": QUAD_RULES,
                    "kind_bonus": KIND_BONUSES}
_ALIASES = {"scoring_table": "table", "dice_count": "dice"}


# ----------------------------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True, slots=True)
class ScoringRules:
    """The scoring table of one game and all of its switches (rules.md §2, §1.7.3, §3.10).

    Fields (``None`` = "the table's default"; after construction every switch that the table has
    holds a concrete value and every switch it lacks is ``None``):

    * ``table`` — the rules.md table name: ``CLASSIC_X20`` (T1), ``ZARY_PLUS10`` (T2),
      ``PROGRAM_X50`` (T3), ``BOX_X100`` (T4), ``RAZNOOBRAZIE_UNKNOWN`` (T5), ``FARKLE_BASE`` (T6),
      ``TEN_THOUSAND_DOUBLING`` (T7), ``FARKLE_OFFICIAL`` (T8), ``WIKIHOW_10000`` (T9),
      ``DIX_MILLE`` (T10), ``FARKLE_CLASS`` (T11). ``from_dict`` also accepts ``scoring_table``.
    * ``dice`` — dice in the game: 5 for T1–T5; 6 (default) or 5 ("Five-Dice Farkle", §3.11) for
      T6–T11. Also readable as ``dice_count``; ``from_dict`` accepts ``dice_count``.
    * ``two_dice_double_zero`` (all tables, default false) — §1.7.3: exactly two dice thrown showing
      the same face may be kept as scoring dice worth 0 (auto-accepted, §6.7); 1-1 and 5-5 keep
      their normal value.
    * ``instant_win`` (all tables) — §3.10: ``none`` | ``five_ones`` | ``five_of_a_kind`` |
      ``six_ones``; a property of the throw. Default ``five_of_a_kind`` for BOX_X100 (T4: "1000
      and instant victory") and RAZNOOBRAZIE_UNKNOWN (T5, §6.12), else ``none``.
    * ``straights`` (all tables, default true) — false disables every five-die straight
      (T2's ``straights`` parameter).
    * ``small_straight`` / ``large_straight`` (all tables) — points of 1-2-3-4-5 / 2-3-4-5-6 in one
      throw; 0 = not a combination. 125 / 250 for T1–T5 (§2.2, §6.11); DIX_MILLE 1250 / 0 (F6:
      the "high straight" 1-2-3-4-5 = 1250, 2-3-4-5-6 earns only its 5); 0 / 0 for other 6-dice
      tables.
    * ``quad_rule`` (ZARY_PLUS10 only) — ``plus10`` (default: four = triple + 10, §6.13) | ``x20``
      (four = 20 × face, ones = 10; T2 then equals T1).
    * ``ones_count_as_ten`` (PROGRAM_X50 and WIKIHOW_10000 only, default true) — a one counts as 10
      inside "× face" formulas (§6.10: four 1s = 500 in T3; §6.17: four/five/six 1s =
      2000/4000/8000 in T9). False = literal reading (T3 four 1s = 50, T9 = 200/400/800).
    * ``three_pairs`` (6-dice tables) — points of three pairs, 0 = not a combination (T6, T7, T9
      1500; T8, T11 750; T10 0).
    * ``three_pairs_same_face`` (6-dice tables, default true, §6.15) — four of a kind + a pair and
      six of a kind also count as three pairs; false = only three different pairs.
    * ``straight6`` (6-dice tables) — points of 1-2-3-4-5-6, 0 = none (T6 3000, T7 1500, T8 1000,
      T9 1500, T10 0, T11 1000).
    * ``two_triplets`` (6-dice tables, default 0 = off) — points of two different triples in one
      throw (F2/F5 variant 2500); when off two triples score separately (§6.16).
    * ``kind_bonus`` (6-dice tables) — four/five/six of a kind, see :data:`KIND_BONUSES`
      (``none`` for T6, T8, T11; ``doubling`` for T7, T9, T10).
    * ``three_ones_value`` (6-dice tables, default 1000; 300 = F2/F4 variant, §6.18) — three 1s;
      the "triple" that the kind bonus multiplies.
    * ``six_ones_value`` (6-dice tables, default 0 = none) — F2 variant "six 1s = 5000".

    Raises :class:`~kosti.engine.errors.BadInput` (a ``ValueError``) naming the parameter for an
    unknown table, a switch the table does not have, a wrong type or a value outside its choices.
    """

    table: str = "CLASSIC_X20"
    dice: int | None = None
    two_dice_double_zero: bool = False
    instant_win: str | None = None
    straights: bool | None = None
    small_straight: int | None = None
    large_straight: int | None = None
    quad_rule: str | None = None
    ones_count_as_ten: bool | None = None
    three_pairs: int | None = None
    three_pairs_same_face: bool | None = None
    straight6: int | None = None
    two_triplets: int | None = None
    kind_bonus: str | None = None
    three_ones_value: int | None = None
    six_ones_value: int | None = None
    _cache: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or self.table not in _TABLE_DEFAULTS:
            raise BadInput(f"table: unknown scoring table {self.table!r}; "
                           f"choose one of {', '.join(TABLES)}")
        defaults = _TABLE_DEFAULTS[self.table]
        six = self.table in SIX_DICE_TABLES
        dice = self.dice
        if dice is None:
            dice = 6 if six else 5
        allowed_dice = (5, 6) if six else (5,)
        if isinstance(dice, bool) or not isinstance(dice, int) or dice not in allowed_dice:
            allowed = "5 or 6" if six else "5"
            raise BadInput(f"dice: table {self.table} is played with {allowed} dice, got {dice!r}")
        object.__setattr__(self, "dice", dice)
        for name in _SWITCHES:
            value = getattr(self, name)
            if name not in defaults and name not in _UNIVERSAL:
                if value is not None:
                    raise BadInput(f"{name}: the scoring table {self.table} has no such switch")
                continue
            if value is None:
                value = defaults.get(name, False)
            _check_switch(name, value)
            object.__setattr__(self, name, value)
        if not self.straights:
            for name in ("small_straight", "large_straight"):
                if self.__getattribute__(name) not in (0, defaults[name]):
                    raise BadInput(f"{name}: set to {getattr(self, name)} but straights is false")
                object.__setattr__(self, name, 0)

    # -- convenience ---------------------------------------------------------------------------
    @property
    def dice_count(self) -> int:
        """Alias of ``dice`` (the rules.md parameter name ``dice_count``)."""
        return self.dice  # type: ignore[return-value]

    @property
    def scoring_table(self) -> str:
        """Alias of ``table`` (the rules.md preset key ``scoring_table``)."""
        return self.table

    @property
    def single_values(self) -> tuple[int, int]:
        """Points of a single 1 and a single 5: (10, 5) in 1000 tables, (100, 50) in
        Farkle/10000 (rules.md §2.2, §2.3)."""
        return (100, 50) if self.table in SIX_DICE_TABLES else (10, 5)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict: ``table``, ``dice`` and every switch this table has (concrete
        values). ``ScoringRules.from_dict(r.to_dict()) == r``."""
        out: dict[str, Any] = {"table": self.table, "dice": self.dice}
        for name in _SWITCHES:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScoringRules:
        """Build from a mapping with the keys of :meth:`to_dict` (missing keys → table defaults;
        ``scoring_table`` / ``dice_count`` accepted as aliases of ``table`` / ``dice``).

        Raises :class:`BadInput` naming an unknown key, a switch the table does not have, or a bad
        value."""
        if not isinstance(d, Mapping):
            raise BadInput(f"scoring: expected an object, got {d!r}")
        kwargs: dict[str, Any] = {}
        known = {"table", "dice", *_SWITCHES}
        for key, value in d.items():
            name = _ALIASES.get(key, key)
            if name not in known:
                raise BadInput(f"{key}: unknown scoring parameter; known: "
                               f"{', '.join(['table', 'dice', *_SWITCHES])}")
            if name in kwargs and kwargs[name] != value:
                raise BadInput(f"{key}: conflicts with {name}={kwargs[name]!r}")
            kwargs[name] = value
        return cls(**kwargs)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # pickle / copy.deepcopy rebuild from the parameters; the precomputed lookup (a few MB of
        # shared result objects) is never copied — equal rules find it again in the module cache.
        return (_rebuild_rules, (self.to_dict(),))

    def replace(self, **changes: Any) -> ScoringRules:
        """A copy with some parameters changed (same validation as the constructor). Changing
        ``table`` resets the switches the new table does not have and those not given."""
        if "table" in changes and changes["table"] != self.table:
            return ScoringRules(**changes)
        d = self.to_dict()
        d.update(changes)
        return ScoringRules.from_dict(d)


def _rebuild_rules(d: dict[str, Any]) -> ScoringRules:
    """Unpickling helper of :class:`ScoringRules`."""
    return ScoringRules.from_dict(d)


def _check_switch(name: str, value: Any) -> None:
    if name in _BOOL_SWITCHES:
        if not isinstance(value, bool):
            raise BadInput(f"{name}: expected true or false, got {value!r}")
    elif name in _POINT_SWITCHES:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BadInput(f"{name}: expected points (an integer >= 0), got {value!r}")
    elif name in _CHOICE_SWITCHES:
        if value not in _CHOICE_SWITCHES[name]:
            raise BadInput(f"{name}: expected one of {', '.join(_CHOICE_SWITCHES[name])}, "
                           f"got {value!r}")


# ----------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class Combination:
    """One scoring combination inside a keep.

    ``name``: one of :data:`COMBINATION_NAMES` (cli.md). ``faces``: its dice, sorted ascending.
    ``points``: its value under the table (rules.md §2)."""

    name: str
    faces: tuple[int, ...]
    points: int

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "faces": [...], "points": ...}`` as in cli.md ``kosti score``."""
        return {"name": self.name, "faces": list(self.faces), "points": self.points}


@dataclass(frozen=True, slots=True)
class ThrowScore:
    """The value of one keep (set-aside) from one throw.

    * ``faces`` — the thrown faces, sorted ascending (results are permutation invariant).
    * ``bust`` — true iff the throw has no legal keep (rules.md §1.5); then ``points`` 0,
      ``scoring_dice`` empty, ``remaining_dice`` = number thrown, ``combinations`` empty.
    * ``points`` — value of the keep at its best grouping (§1.3, §2.1).
    * ``scoring_dice`` — the kept dice, sorted ascending.
    * ``remaining_dice`` — thrown dice not kept (may be re-thrown).
    * ``hot_dice`` — every thrown die was kept (not a bust and ``remaining_dice == 0``, §1.4).
    * ``instant_win`` — the *throw* meets ``ScoringRules.instant_win`` (§3.10); the same for every
      keep of one throw.
    * ``combinations`` — the best grouping of the kept dice, highest points first.
    """

    faces: tuple[int, ...]
    bust: bool
    points: int
    scoring_dice: tuple[int, ...]
    remaining_dice: int
    hot_dice: bool
    instant_win: bool
    combinations: tuple[Combination, ...]

    def to_dict(self) -> dict[str, Any]:
        """The cli.md ``kosti score`` JSON fields (without ``rules``; ``faces`` sorted)."""
        return {
            "faces": list(self.faces), "bust": self.bust, "points": self.points,
            "scoring_dice": list(self.scoring_dice), "remaining_dice": self.remaining_dice,
            "hot_dice": self.hot_dice, "instant_win": self.instant_win,
            "combinations": [c.to_dict() for c in self.combinations],
        }


class IllegalKeep(RuleViolation, ValueError):
    """A keep that the rules forbid: a kept die belongs to no scoring combination of the kept set
    (rules.md §1.3 "no dead dice may be kept"), or an empty keep. CLI exit code 3; also a
    ``ValueError``. ``dead`` holds the kept faces that cannot be scored (sorted)."""

    def __init__(self, reason_en: str, reason_ru: str, dead: tuple[int, ...] = ()) -> None:
        super().__init__(reason_en, reason_ru)
        self.dead = dead


# ----------------------------------------------------------------------------------------------
# Combination catalogue of a table

# A multiset of faces is represented by its counts: a 6-tuple, counts[f - 1] = dice showing f.
_Counts = tuple[int, int, int, int, int, int]


def _counts(faces: Iterable[int]) -> _Counts:
    c = [0] * 6
    for f in faces:
        c[f - 1] += 1
    return tuple(c)  # type: ignore[return-value]


def _faces(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(f for f in range(1, 7) for _ in range(counts[f - 1]))


def _kind_points(r: ScoringRules, face: int, n: int) -> int | None:
    """Points of n (3..6) dice showing ``face`` in one throw, or None if not a combination."""
    table = r.table
    if table in FIVE_DICE_TABLES:
        v = 10 if face == 1 else face  # "1 counts as 10 throughout the game" (RU-A, RU-E)
        if n == 3:
            return 10 * v
        if n == 4:
            if table == "ZARY_PLUS10":
                return 10 * v + 10 if r.quad_rule == "plus10" else 20 * v
            if table == "PROGRAM_X50":
                return 50 * (v if r.ones_count_as_ten else face)
            if table == "BOX_X100":
                return 100 * (2 if face == 1 else face)  # ones count like twos (§6.14)
            return 20 * v  # T1, T5
        if n == 5:
            if table in ("PROGRAM_X50", "BOX_X100"):
                return 1000
            return 100 * v  # T1, T2, T5
        return None
    # six-dice tables (§2.3)
    triple = r.three_ones_value if face == 1 else 100 * face
    if n == 3:
        return triple
    bonus = r.kind_bonus
    if bonus == "none":
        return None
    if bonus == "doubling":
        if table == "WIKIHOW_10000" and face == 1 and not r.ones_count_as_ten:
            return 200 * 2 ** (n - 4)  # F1 literal "200/400/800 × face" for ones (§6.17)
        return triple * 2 ** (n - 3)
    if bonus == "linear":
        return triple * (n - 2)
    if bonus == "flat":
        return 1000 * (n - 3)
    return triple * 2 * (n - 2)  # "high": 4×, 6×, 8×


def combination_catalog(r: ScoringRules) -> list[Combination]:
    """Every combination the rules enable (excluding ``double_zero``, which depends on the number of
    dice thrown), with its points, in :data:`COMBINATION_NAMES` order. Shapes: at most ``r.dice``
    dice each. Used for the evaluation and for describing a table to players."""
    s1, s5 = r.single_values
    out = [Combination("single", (1,), s1), Combination("single", (5,), s5)]
    for n in range(3, r.dice + 1):
        for face in range(1, 7):
            pts = _kind_points(r, face, n)
            if face == 1 and n == 6 and r.six_ones_value:
                pts = max(pts or 0, r.six_ones_value)  # F2 variant: six 1s = 5000
            if pts is not None:
                out.append(Combination(_KIND_NAMES[n], (face,) * n, pts))
    if r.straights and r.small_straight:
        out.append(Combination("small_straight", (1, 2, 3, 4, 5), r.small_straight))
    if r.straights and r.large_straight:
        out.append(Combination("large_straight", (2, 3, 4, 5, 6), r.large_straight))
    if r.dice >= 6 and r.straight6:
        out.append(Combination("straight6", (1, 2, 3, 4, 5, 6), r.straight6))
    if r.dice >= 6 and r.three_pairs:
        for a, b, c in itertools.combinations(range(1, 7), 3):
            out.append(Combination("three_pairs", (a, a, b, b, c, c), r.three_pairs))
        if r.three_pairs_same_face:
            for a, b in itertools.permutations(range(1, 7), 2):  # four of a kind + a pair (F2)
                out.append(Combination("three_pairs", tuple(sorted((a,) * 4 + (b,) * 2)),
                                       r.three_pairs))
            for a in range(1, 7):  # six of a kind as three pairs (§6.15)
                out.append(Combination("three_pairs", (a,) * 6, r.three_pairs))
    if r.dice >= 6 and r.two_triplets:
        for a, b in itertools.combinations(range(1, 7), 2):
            out.append(Combination("two_triplets", (a, a, a, b, b, b), r.two_triplets))
    out.sort(key=lambda c: (_NAME_ORDER[c.name], c.faces))
    return out


def _combo_sort_key(c: Combination) -> tuple[int, int, tuple[int, ...]]:
    return (-c.points, _NAME_ORDER[c.name], c.faces)


# ----------------------------------------------------------------------------------------------
# Precomputed lookup tables


class _Lookup:
    """Per-rules precomputation over all multisets of 1..dice faces (rules.md §2.1 steps 1–4).

    ``keeps[counts]`` — best complete grouping of a kept multiset: (points, combinations) or None
    when some die cannot be covered. ``throws[sorted faces]`` — the best :class:`ThrowScore`.
    ``legal[sorted faces]`` — every legal keep of the throw as a tuple, best first."""

    __slots__ = ("keeps", "throws", "legal", "legal_by_keep")

    def __init__(self, r: ScoringRules) -> None:
        catalog = [(_counts(c.faces), c) for c in combination_catalog(r)]
        memo: dict[_Counts, tuple[int, tuple[Combination, ...]] | None] = {(0,) * 6: (0, ())}

        def best(counts: _Counts) -> tuple[int, tuple[Combination, ...]] | None:
            if counts in memo:
                return memo[counts]
            result: tuple[int, tuple[Combination, ...]] | None = None
            rank: tuple[Any, ...] | None = None
            for cc, combo in catalog:
                if any(x < y for x, y in zip(counts, cc)):
                    continue
                sub = best(tuple(x - y for x, y in zip(counts, cc)))  # type: ignore[arg-type]
                if sub is None:
                    continue
                combos = tuple(sorted((combo, *sub[1]), key=_combo_sort_key))
                points = combo.points + sub[0]
                # max points; then fewest combinations (the larger grouping); then a fixed order
                key = (points, -len(combos), tuple(_combo_sort_key(c) for c in combos))
                if rank is None or _better(key, rank):
                    result, rank = (points, combos), key
            memo[counts] = result
            return result

        all_counts = [c for n in range(1, r.dice + 1) for c in _multisets(n)]
        for counts in all_counts:
            best(counts)
        self.keeps = memo
        self.throws: dict[tuple[int, ...], ThrowScore] = {}
        self.legal: dict[tuple[int, ...], tuple[ThrowScore, ...]] = {}
        self.legal_by_keep: dict[tuple[tuple[int, ...], tuple[int, ...]], ThrowScore] = {}
        for counts in all_counts:
            faces = _faces(counts)
            n = len(faces)
            win = _instant_win(r.instant_win, counts)
            options: list[ThrowScore] = []
            for sub in itertools.product(*(range(c + 1) for c in counts)):
                k = sum(sub)
                if k == 0:
                    continue
                val = memo.get(sub)  # type: ignore[arg-type]
                if val is None:
                    continue
                options.append(ThrowScore(faces, False, val[0], _faces(sub), n - k, n == k, win,
                                          val[1]))
            if (r.two_dice_double_zero and n == 2 and faces[0] == faces[1]
                    and not any(o.scoring_dice == faces for o in options)):
                # §1.7.3 / §6.7: an accepted double on exactly two thrown dice, worth 0
                options.append(ThrowScore(faces, False, 0, faces, 0, True, win,
                                          (Combination("double_zero", faces, 0),)))
            options.sort(key=lambda o: (-o.points, -len(o.scoring_dice), o.scoring_dice))
            self.legal[faces] = tuple(options)
            for o in options:
                self.legal_by_keep[(faces, o.scoring_dice)] = o
            if options:
                self.throws[faces] = options[0]
            else:
                self.throws[faces] = ThrowScore(faces, True, 0, (), n, False, win, ())


def _better(key: tuple[Any, ...], rank: tuple[Any, ...]) -> bool:
    """Grouping order: more points, then fewer combinations, then the smaller canonical tuple."""
    if key[:2] != rank[:2]:
        return key[:2] > rank[:2]
    return key[2] < rank[2]


def _multisets(n: int) -> list[_Counts]:
    return [_counts(c) for c in itertools.combinations_with_replacement(range(1, 7), n)]


def _instant_win(kind: str, counts: Sequence[int]) -> bool:
    """rules.md §3.10 on the counts of one throw."""
    if kind == "five_ones":
        return counts[0] >= 5
    if kind == "five_of_a_kind":
        return max(counts) >= 5
    if kind == "six_ones":
        return counts[0] >= 6
    return False


_LOOKUPS: dict[ScoringRules, _Lookup] = {}


def _lookup(r: ScoringRules) -> _Lookup:
    lk = r._cache
    if lk is None:
        if not isinstance(r, ScoringRules):
            raise TypeError(f"rules must be a ScoringRules, got {type(r).__name__}")
        lk = _LOOKUPS.get(r)
        if lk is None:
            lk = _LOOKUPS[r] = _Lookup(r)
        object.__setattr__(r, "_cache", lk)
    return lk


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
    if not 1 <= len(items) <= r.dice:
        return BadInput(f"{what}: {len(items)} dice; a throw has 1 to {r.dice} dice "
                        f"in this game ({r.table})")
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
        raise IllegalKeep("at least one scoring die must be kept",
                          "нужно отложить хотя бы одну зачётную кость")
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
        usable = tuple(max(a, b) for a, b in zip(usable, _counts(o.scoring_dice)))  # type: ignore
    dead = _faces([max(0, a - b) for a, b in zip(_counts(key), usable)])
    if not dead:  # every face is usable somewhere, but not all together (e.g. a 4th 2 in Farkle)
        best = lk.throws[key].scoring_dice
        dead = _faces([a - b for a, b in zip(_counts(key), _counts(best))])
    listed = " ".join(map(str, dead))
    en = f"die {listed} belongs" if len(dead) == 1 else f"dice {listed} belong"
    ru = f"кость {listed} не входит" if len(dead) == 1 else f"кости {listed} не входят"
    raise IllegalKeep(
        f"keep {' '.join(map(str, key))} is not allowed: {en} to no scoring combination",
        f"так отложить нельзя ({' '.join(map(str, key))}): {ru} ни в одну зачётную комбинацию",
        dead,
    )
