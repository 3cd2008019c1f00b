"""Named rule presets of rules.md §4 and custom rules built from them.

Every preset of ``../shared/docs/rules.md`` §4 (the eight primary ones and the secondary ones of
§4.9) is available by its exact name through :func:`get_preset`; each carries a one-line
``description`` and the ``source`` article ID of rules.md §0.1. Where a preset follows a
RECOMMENDED decision of §6 (or departs from it) the description or the comment says so.

Custom rules: :func:`with_overrides` (a preset + a nested dict of parameter changes, names as in
rules.md §3–4; dotted keys such as ``"opening.threshold"`` are accepted too), :func:`resolve_rules`
(a preset name, ``{"preset": ..., "overrides": ...}``, a full parameter dict, or a :class:`Rules`)
and :func:`load_rules_file` (the same in a JSON or TOML file). Unknown or inconsistent parameters
raise :class:`~kosti.engine.errors.BadInput` naming the parameter.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import BadInput
from .rules import Rules
from .rules_dict import shorthand as _shorthand

#: Annotated type of every top-level Rules field (for the short forms of overrides).
_RULES_FIELD_TYPES: dict[str, Any] = typing.get_type_hints(Rules)

__all__ = [
    "PRESET_NAMES",
    "PRIMARY_PRESETS",
    "get_preset",
    "list_presets",
    "load_rules_file",
    "resolve_rules",
    "with_overrides",
]

# Scoring switches that rules.md §4 writes at the top level of a preset; they live in
# ``Rules.scoring`` (kosti.engine.scoring.ScoringRules) and overrides may use either place.
_SCORING_KEYS = {
    "scoring_table": "table", "instant_win": "instant_win",
    "two_dice_double_zero": "two_dice_double_zero", "quad_rule": "quad_rule",
    "straights": "straights", "three_pairs_same_face": "three_pairs_same_face",
    "three_ones_value": "three_ones_value", "two_triplets": "two_triplets",
    "kind_bonus": "kind_bonus", "six_ones_value": "six_ones_value",
}

_CLASSIC: dict[str, Any] = {
    "description": "RU-A classic rules: opening 50, pits 200–300 and 600–700, overtaking −50, "
                   "dump truck 555 (recorded), bolts 3 → −100, points barrel: a turn ending "
                   "above 880 (even one reaching 1000) records 880 and seats the player, who "
                   "then needs 120 in one turn (3 attempts, −100, 3rd fall → 0); hot dice must "
                   "be thrown even at 1000",
    "source": "RU-A",
    "dice_count": 5,
    "target": 1000,
    "scoring": {"table": "CLASSIC_X20"},  # T1, straights 125/250; five 1s are just 1000 points
    "selection": {"set_aside": "all_scoring"},
    "hot_dice": "must_roll",
    "hot_dice_win": "exact_only",  # rules.md 1.1 §1.4, §6.4: the hot-dice throw is compulsory
    "first_throw_retry": False,
    # optional RU-A opening penalty: {"every": 3, "amount": 100 or 50} (rules.md §6.27: off)
    "opening": {"threshold": 50, "in_one_turn": True, "failure_penalty": None,
                "reopen_after_reset": False},
    "negative_scores": "allowed",
    "pits": [{"lo": 200, "hi": 300, "exit": "at_or_above"},
             {"lo": 600, "hi": 700, "exit": "at_or_above"}],
    "overtaking": {"enabled": True, "penalty": 50},
    "dump_truck": {"enabled": True, "value": 555, "trigger": "recorded", "via_penalties": True,
                   "reopen_required": False},
    "bolts": {"enabled": True, "trigger": ["zero_turn"], "limit": 3, "penalty": 100,
              "exempt_when": ["not_open", "in_pit", "on_barrel"], "reset_after_penalty": True},
    "barrel": {"kind": "points", "entry": 880, "entry_strict": True, "target": None,
               "attempts": 3, "fall_penalty": 100, "max_falls": 3, "knockoff": True,
               # rules.md 1.1 §3.6.2, §6.28: first sit (recorded 880), then win with 120
               "knockoff_effect": "fall", "direct_win_from_below": False,
               "seat_score": "entry"},
    "ending": {"mode": "at_least"},
    "players": {"min": 1, "max": 8},
    "first_player": "highest_throw",
}

_FARKLE: dict[str, Any] = {
    "description": "F2 Farkle base: 6 dice, straight 3000, three pairs 1500, free choice of "
                   "scoring dice, hot dice may roll or bank, to 10000 with a final round",
    "source": "F2",
    "dice_count": 6,
    "target": 10000,
    "scoring": {"table": "FARKLE_BASE"},
    "selection": {"set_aside": "at_least_one"},
    "hot_dice": "may_roll_or_bank",
    "opening": {"threshold": 0},  # variant: 500 (350/400/600/1000)
    "negative_scores": "clamp_zero",
    "ending": {"mode": "at_least"},
    "final_round": "others_one_more_turn",
    "three_farkles": {"enabled": False},  # variant: −1000
    "players": {"min": 2, "max": 8, "recommended": "3-8"},
    "first_player": "highest_single_die_throw",
}


def _merge(base: dict[str, Any], changes: Mapping[str, Any]) -> None:
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


def _delta(base: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    _merge(out, changes)
    return out


#: rules.md §4 presets as parameter dicts (validated into Rules on first use). ``barrel.target``
#: is left null (= the game's ``target``, 1000 in every 1000 preset) so that a ``target``
#: override (ID-D: 500 or 1500) moves the barrel's goal with it.
_PRESETS: dict[str, dict[str, Any]] = {
    # §4.1
    "classic": _CLASSIC,
    # §4.1 variant / §4.9
    "classic_no_barrel": _delta(
        _CLASSIC, description="RU-A classic rules, game without barrels: first to 1000 or more "
        "wins (hot dice must be thrown even at 1000)", barrel={"kind": "none"}),
    # §4.2
    "classic_open_barrel": _delta(
        _CLASSIC, description="RU-A classic with the open barrel: exactly 1000 to win (hot dice "
        "that hit 1000 win at once); overshoot → a dot at once; 6th dot → score 0",
        barrel={"kind": "open", "dots_limit": 6, "dot_penalty": 100, "max_falls": 1,
                "knockoff": False},
        ending={"mode": "exact", "overshoot_effect": "dot", "overshoot_immediate": True}),
    # §4.3
    "variant2_850_barrel": {
        "description": "RU-B 'Variant No. 2': keep at least one scoring die, confirmation throw "
                       "after hot dice (a confirmed turn below 75 to enter, 150 on the barrel "
                       "records nothing), admission 75, the 850 barrel (need 150; a climber "
                       "knocks the sitter back to his admission score)",
        "source": "RU-B",
        "dice_count": 5, "target": 1000,
        "scoring": {"table": "CLASSIC_X20"},
        "selection": {"set_aside": "at_least_one"},
        "hot_dice": "confirm_and_bank",
        "confirm_below_minimum": "lose",  # rules.md 1.1 §1.4, §6.5d (RU-B "the turn passes")
        "first_throw_retry": False,
        "opening": {"threshold": 75, "in_one_turn": True},
        "negative_scores": "clamp_zero",
        "barrel": {"kind": "capped", "entry": 850, "entry_strict": False, "target": None,
                   "attempts": None, "fall_penalty": 0, "max_falls": None, "knockoff": True,
                   "knockoff_effect": "to_admission_score",
                   # §3.6.6: the cap records 850; a win from below cannot arise (§6.34a)
                   "seat_score": "entry", "direct_win_from_below": True},
        "ending": {"mode": "at_least"},
    },
    # §4.4
    "soviet_box_track": {
        "description": "ID-A Soviet boxed game: four of a kind ×100 (ones like twos), five of a "
                       "kind = instant win, two-dice double = 0, entry 75, pits 200–299 and "
                       "600–699, dump truck 555 mid-turn, bolts 3 → −50, barrel 900–999 (the "
                       "real score stays; a turn from below may win; hot dice must be thrown "
                       "even at 1000)",
        "source": "ID-A",
        "dice_count": 5, "target": 1000,
        "scoring": {"table": "BOX_X100", "two_dice_double_zero": True,
                    "instant_win": "five_of_a_kind"},
        "selection": {"set_aside": "all_scoring"},
        "hot_dice": "must_roll",
        "opening": {"threshold": 75, "in_one_turn": True, "reopen_after_reset": False},
        "negative_scores": "clamp_zero",  # not stated; RECOMMENDED
        "pits": [{"lo": 200, "hi": 300, "exit": "at_or_above"},
                 {"lo": 600, "hi": 700, "exit": "at_or_above"}],
        "dump_truck": {"enabled": True, "value": 555, "trigger": "running",
                       "via_penalties": True, "reopen_required": False},
        "bolts": {"enabled": True, "trigger": ["zero_turn"], "limit": 3, "penalty": 50,
                  "exempt_when": ["not_open", "in_pit", "on_barrel"],
                  "reset_after_penalty": True},
        "barrel": {"kind": "final_range", "entry": 900, "entry_strict": False, "target": None,
                   "attempts": 3, "fall_penalty": 100, "max_falls": None, "knockoff": True,
                   "knockoff_effect": "fall",  # knock-off = a normal fall (§6.32)
                   # §3.6.6: the zone is a range, the real score stays
                   "seat_score": "actual", "direct_win_from_below": True},
        "ending": {"mode": "at_least"},
        "settlement": {"double_if_never_opened": True},
    },
    # §4.5
    "raznoobrazie_skip_barrels": {
        "description": "RU-C (Goloviznin): entry 75, five of a kind wins at once, skip-turn "
                       "barrels 300–400 / 600–700 / 900–960 (400 is out; recording a score "
                       "inside costs the next turn, a zero turn does not), exactly 1000 to win "
                       "(hot dice that hit 1000 win at once; scoring table reconstructed: RU-C's "
                       "list is lost, T1 values used)",
        "source": "RU-C",
        "dice_count": 5, "target": 1000,
        "scoring": {"table": "RAZNOOBRAZIE_UNKNOWN", "instant_win": "five_of_a_kind"},
        "selection": {"set_aside": "at_least_one"},
        "hot_dice": "must_roll",
        "first_throw_retry": False,
        "opening": {"threshold": 75, "in_one_turn": True},
        "negative_scores": "clamp_zero",
        # rules.md 1.1 §3.7, §6.38a: half-open zones, triggered by a recorded stop
        "skip_barrels": {"zones": [[300, 400], [600, 700], [900, 960]], "mode": "skip",
                         "upper": "exclusive", "trigger": "recorded_stop"},
        "ending": {"mode": "exact", "overshoot_effect": "void_turn", "overshoot_immediate": True},
    },
    # §4.6
    "yard_dice_50": {
        "description": "ID-D 'Dice' from a neighbour: entry 50, bolts 3 → −50 (also before entry "
                       "and on the barrel), dump truck 555 mid-turn, overtaking −50, barrel from "
                       "900 (the real score stays, a turn from below may win; 3 bolts = the "
                       "fall, push-off −50); hot dice must be thrown even at 1000",
        "source": "ID-D",
        "dice_count": 5, "target": 1000,
        "scoring": {"table": "CLASSIC_X20"},
        "selection": {"set_aside": "all_scoring"},
        "hot_dice": "must_roll",
        "opening": {"threshold": 50, "in_one_turn": True, "reopen_after_reset": False},
        "negative_scores": "clamp_zero",  # author's advice
        "bolts": {"enabled": True, "trigger": ["zero_turn", "failed_opening"], "limit": 3,
                  "penalty": 50, "exempt_when": [], "reset_after_penalty": True},
        "dump_truck": {"enabled": True, "value": 555, "trigger": "running",
                       "via_penalties": True, "reopen_required": False},
        "overtaking": {"enabled": True, "penalty": 50},
        # attempts are the 3 bolts: the third bolt's −50 is the fall, not an extra −50 (§4.6)
        "barrel": {"kind": "final_range", "entry": 900, "entry_strict": False, "target": None,
                   "attempts": 3, "fall_penalty": 50, "max_falls": None, "knockoff": True,
                   "knockoff_effect": "minus_50", "push_off_penalty": 50,
                   "attempts_are_bolts": True,
                   # §3.6.6: the zone is a range, the real score stays
                   "seat_score": "actual", "direct_win_from_below": True},
        "ending": {"mode": "at_least"},
        "first_player": "highest_throw",
    },
    # §4.7
    "farkle": _FARKLE,
    # §4.8
    "ten_thousand": {
        "description": "F3 10000: 6 dice, doubling table (each die beyond three doubles), "
                       "straight 1500, three pairs 1500; first to 10000 wins",
        "source": "F3",
        "dice_count": 6, "target": 10000,
        "scoring": {"table": "TEN_THOUSAND_DOUBLING"},
        "selection": {"set_aside": "at_least_one"},
        "hot_dice": "may_roll_or_bank",
        "opening": {"threshold": 0},  # variant: 500
        "negative_scores": "clamp_zero",
        "ending": {"mode": "at_least"},  # variant: exact (overshoot → no points that round)
        "final_round": "none",
        "first_player": "highest_single_die_throw",
    },
    # §4.9 secondary presets
    "program_x50": _delta(
        _CLASSIC, description="RU-E computer version: classic rules with four of a kind = "
        "face × 50 and five of a kind = 1000; up to 6 players incl. 1-player training; the "
        "classic points barrel (a turn above 880 records 880, then 120 in one turn)",
        source="RU-E", scoring={"table": "PROGRAM_X50"}, players={"min": 1, "max": 6}),
    "zary_custom": {
        "description": "RU-D 'zary': four of a kind = triple + 10, five 1s win at once, second "
                       "attempt after an empty first throw, entry 50, obstacles 300–400 and "
                       "750–900 (exit above), overtaking −55, dump truck mid-turn, bolts 3 → "
                       "−100, exactly 1000 (hot dice that hit it win at once; 5 overshoots −100, "
                       "10 → 0)",
        "source": "RU-D",
        "dice_count": 5, "target": 1000,
        "scoring": {"table": "ZARY_PLUS10", "quad_rule": "plus10", "straights": True,
                    "instant_win": "five_ones"},  # straights 125/250 assumed (§6.11)
        "selection": {"set_aside": "all_scoring"},
        "hot_dice": "must_roll",
        "first_throw_retry": True,
        "opening": {"threshold": 50, "in_one_turn": True},  # alternatives 55, 25
        "negative_scores": "clamp_zero",
        "pits": [{"lo": 300, "hi": 400, "exit": "strictly_above"},
                 {"lo": 750, "hi": 900, "exit": "strictly_above"}],
        "overtaking": {"enabled": True, "penalty": 55},
        "dump_truck": {"enabled": True, "value": 555, "trigger": "running",
                       "via_penalties": True, "reopen_required": False},
        "bolts": {"enabled": True, "trigger": ["zero_turn"], "limit": 3, "penalty": 100,
                  "exempt_when": ["not_open", "in_pit", "on_barrel"]},
        "ending": {"mode": "exact", "overshoot_effect": "void_turn", "overshoot_immediate": True,
                   "overshoot_penalties": [{"at": 5, "penalty": 100},
                                           {"at": 10, "to_zero": True}]},
    },
    "farkle_official": _delta(
        _FARKLE, description="F4 boxed Farkle: three pairs 750, straight 1000, three Farkles in "
        "a row −1000, final round", source="F4", scoring={"table": "FARKLE_OFFICIAL"},
        three_farkles={"enabled": True, "count": 3, "penalty": 1000},
        final_round="others_one_more_turn"),
    "farkle_class_5000": _delta(
        _FARKLE, description="F5 classroom Farkle: F4 values (assumed, §6.20), entry 350, play "
        "to 5000, equal turns for everyone, three Farkles −1000", source="F5",
        scoring={"table": "FARKLE_CLASS"}, opening={"threshold": 350}, target=5000,
        final_round="equalize_turns",
        three_farkles={"enabled": True, "count": 3, "penalty": 1000},
        first_player="highest_single_die_throw"),
    "dix_mille": {
        "description": "F6 Dix Mille: four of a kind ×2, five ×4, 1-2-3-4-5 = 1250 (2-6 only its "
                       "5), entry 750 in one turn, hot dice must be rolled (assumed; even at "
                       "10000), to 10000",
        "source": "F6",
        "dice_count": 6, "target": 10000,
        "scoring": {"table": "DIX_MILLE"},
        "selection": {"set_aside": "at_least_one"},
        "hot_dice": "must_roll",
        "opening": {"threshold": 750, "in_one_turn": True},
        "negative_scores": "clamp_zero",
        "ending": {"mode": "at_least"},
        "final_round": "none",
        "players": {"min": 1, "max": 8},
    },
    "wikihow_10000": {
        "description": "F1 wikiHow 10000: 4/5/6 of a kind = 200/400/800 × face (ones "
                       "2000/4000/8000, §6.17), straight 1500, three pairs 1500, to 10000",
        "source": "F1",
        "dice_count": 6, "target": 10000,
        "scoring": {"table": "WIKIHOW_10000"},
        "selection": {"set_aside": "at_least_one"},
        "hot_dice": "may_roll_or_bank",
        "opening": {"threshold": 0},
        "negative_scores": "clamp_zero",
        "ending": {"mode": "at_least"},
        "final_round": "none",
    },
}

#: The eight primary presets of rules.md §4.1–4.8, in document order.
PRIMARY_PRESETS: tuple[str, ...] = (
    "classic", "classic_open_barrel", "variant2_850_barrel", "soviet_box_track",
    "raznoobrazie_skip_barrels", "yard_dice_50", "farkle", "ten_thousand",
)
#: Every preset name: the primary ones, then the secondary ones of §4.9.
PRESET_NAMES: tuple[str, ...] = PRIMARY_PRESETS + (
    "classic_no_barrel", "program_x50", "zary_custom", "farkle_official", "farkle_class_5000",
    "dix_mille", "wikihow_10000",
)

_CACHE: dict[str, Rules] = {}


def get_preset(name: str) -> Rules:
    """The :class:`Rules` of a rules.md §4 preset by its exact name (e.g. ``"classic"``).

    Raises :class:`BadInput` for an unknown name, listing the known ones."""
    rules = _CACHE.get(name)
    if rules is None:
        if name not in _PRESETS:
            raise BadInput(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}")
        d = copy.deepcopy(_PRESETS[name])
        d["name"] = name
        rules = Rules.from_dict(d)
        _CACHE[name] = rules
    return rules


def list_presets() -> list[Rules]:
    """Every preset, in :data:`PRESET_NAMES` order."""
    return [get_preset(n) for n in PRESET_NAMES]


def _expand_dotted(overrides: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise BadInput(f"overrides: parameter names must be strings, got {key!r}")
        if isinstance(value, Mapping):
            value = _expand_dotted(value)
        parts = key.split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise BadInput(f"overrides: {key} conflicts with another override")
        if isinstance(value, dict) and isinstance(node.get(parts[-1]), dict):
            _merge(node[parts[-1]], value)
        else:
            node[parts[-1]] = value
    return out


def with_overrides(rules: Rules | str, overrides: Mapping[str, Any] | None) -> Rules:
    """A preset (or rules) with some parameters changed.

    ``overrides`` is a nested dict with rules.md names, e.g. ``{"opening": {"threshold": 75},
    "barrel": {"kind": "none"}}``; dotted keys (``{"opening.threshold": 75}``) work too; lists
    (``pits``) replace the preset's list. Scoring switches may be given at the top level as in
    rules.md §4 (``scoring_table``, ``instant_win``, ``two_dice_double_zero``, ``quad_rule`` …) or
    under ``scoring``; changing the table resets its switches to the new table's defaults and, unless
    ``dice_count`` is given, takes the table's dice count. Raises :class:`BadInput` naming an
    unknown or inconsistent parameter."""
    base = get_preset(rules) if isinstance(rules, str) else rules
    if not overrides:
        return base
    if not isinstance(overrides, Mapping):
        raise BadInput(f"overrides: expected an object, got {overrides!r}")
    ov = _expand_dotted(overrides)
    for key in ("name", "description", "source"):
        if key in ov and not isinstance(ov[key], str):
            raise BadInput(f"{key}: expected a string")
    scoring_ov: dict[str, Any] = {}
    if "scoring" in ov:
        if not isinstance(ov["scoring"], Mapping):
            raise BadInput("scoring: expected an object")
        scoring_ov.update(ov.pop("scoring"))
    for key in list(ov):
        if key in _SCORING_KEYS:
            scoring_ov[_SCORING_KEYS[key]] = ov.pop(key)
    if "scoring_table" in scoring_ov:
        scoring_ov["table"] = scoring_ov.pop("scoring_table")
    for key, value in list(ov.items()):  # short forms ("barrel": "none") merge like objects
        tp = _RULES_FIELD_TYPES.get(key)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp) and not isinstance(value, Mapping):
            ov[key] = _shorthand(tp, value)
    d = base.to_dict()
    scoring = d["scoring"]
    new_table = scoring_ov.get("table")
    if new_table is not None and new_table != scoring["table"]:
        scoring = {}
    scoring.update(scoring_ov)
    if "dice_count" in ov:
        scoring["dice"] = ov["dice_count"]
    elif new_table is not None and new_table != d["scoring"]["table"]:
        scoring.pop("dice", None)
    _merge(d, ov)
    try:
        from .scoring import ScoringRules

        sc = ScoringRules.from_dict(scoring)
    except BadInput as exc:
        raise BadInput(f"scoring.{exc}") from None
    d["scoring"] = sc.to_dict()
    if "dice_count" not in ov:
        d["dice_count"] = sc.dice_count
    return Rules.from_dict(d)


def resolve_rules(spec: Rules | str | Mapping[str, Any]) -> Rules:
    """Rules from any accepted form: a :class:`Rules`; a preset name; ``{"preset": name,
    "overrides": {...}}`` (cli.md); or a full parameter dict as written by ``Rules.to_dict()``.
    Raises :class:`BadInput` for an unknown preset or parameter."""
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, str):
        return get_preset(spec)
    if isinstance(spec, Mapping):
        if "preset" in spec:
            extra = set(spec) - {"preset", "overrides"}
            if extra:
                raise BadInput(f"rules.{sorted(extra)[0]}: unknown key (expected 'preset' and "
                               f"'overrides')")
            name = spec["preset"]
            if not isinstance(name, str):
                raise BadInput(f"rules.preset: expected a preset name, got {name!r}")
            return with_overrides(get_preset(name), spec.get("overrides"))
        return Rules.from_dict(dict(spec))
    raise BadInput(f"rules: expected a preset name or an object, got {spec!r}")


def load_rules_file(path: str | Path) -> Rules:
    """Read rules from a JSON or TOML file (``.toml`` by extension, else JSON) in any form
    :func:`resolve_rules` accepts (a TOML file has top-level ``preset = "classic"`` and an
    ``[overrides]`` table, or the full parameters). Raises :class:`BadInput` if the file cannot be
    read or parsed."""
    return resolve_rules(read_rules_document(path))


def read_rules_document(path: str | Path) -> Any:
    """The JSON or TOML document of a rules file (``.toml`` by extension, else JSON), not yet resolved: a
    preset name, ``{"preset", "overrides"}`` (of the 1000 family or of another game, e.g. ``{"preset": "yacht",
    "overrides": {"full_house": 25}}``) or full 1000-family parameters. Raises :class:`BadInput` if the file
    cannot be read or parsed."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{p}: cannot read ({exc.strerror})") from None
    if p.suffix.lower() == ".toml":
        import tomllib

        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"{p}: malformed TOML ({exc})") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{p}: malformed JSON ({exc})") from None
    return data
