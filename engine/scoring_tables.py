"""The eleven scoring tables of rules.md §2.2–2.3 by name, their switches, and :class:`ScoringRules`.

The names (T1–T11 as rules.md spells them, the combination names of cli.md, the players' labels)
and the per-table defaults of every switch; :class:`ScoringRules` is one table with its switches
chosen, validated on construction. :mod:`kosti.engine.scoring_catalog` turns it into the
precomputed results that :mod:`kosti.engine.scoring` serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from .errors import BadInput

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
            allowed = "5 or 6 dice" if six else "5 dice (the 1000 family); 6 dice are played with a Farkle or " \
                "10000 preset"
            raise BadInput(f"dice: these rules score {allowed}, got {dice!r}")
        object.__setattr__(self, "dice", dice)
        for name in _SWITCHES:
            value = getattr(self, name)
            if name not in defaults and name not in _UNIVERSAL:
                if value is not None:
                    raise BadInput(f"{name}: the scoring of these rules has no such switch")
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
        return cast(int, self.dice)  # always set by __post_init__ (the table's default when None was given)

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
    elif name in _CHOICE_SWITCHES and value not in _CHOICE_SWITCHES[name]:
        raise BadInput(f"{name}: expected one of {', '.join(_CHOICE_SWITCHES[name])}, got {value!r}")

