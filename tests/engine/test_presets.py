"""Presets of rules.md §4: names, parameters as the spec lists them, overrides, and rejection of
unknown or inconsistent parameters with a message naming the parameter."""

from __future__ import annotations

import json

import pytest

from kosti.engine import (
    PRESET_NAMES,
    PRIMARY_PRESETS,
    BadInput,
    Rules,
    get_preset,
    load_rules_file,
    new_game,
    resolve_rules,
    with_overrides,
)
from kosti.engine.rules import OvershootPenalty, Pit
from kosti.engine.selfplay import play_random_game

SECTION_4_NAMES = {
    "classic", "classic_open_barrel", "variant2_850_barrel", "soviet_box_track",
    "raznoobrazie_skip_barrels", "yard_dice_50", "farkle", "ten_thousand",
    "classic_no_barrel", "program_x50", "zary_custom", "farkle_official", "farkle_class_5000",
    "dix_mille", "wikihow_10000",
}


def test_every_section_4_preset_exists():
    assert set(PRESET_NAMES) == SECTION_4_NAMES
    assert len(PRIMARY_PRESETS) == 8


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_identity_and_round_trip(name):
    r = get_preset(name)
    assert r.name == name
    assert r.description and "\n" not in r.description
    assert r.source in {"RU-A", "RU-B", "RU-C", "RU-D", "RU-E", "ID-A", "ID-D",
                        "F1", "F2", "F3", "F4", "F5", "F6"}
    assert r.dice_count == r.scoring.dice_count
    d = json.loads(json.dumps(r.to_dict()))
    assert Rules.from_dict(d) == r


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_plays_a_whole_random_game(name):
    st = play_random_game(name, ("A", "B", "C"), seed=7)
    assert st.over and st.winner is not None
    best = max(p.score for p in st.players)
    if get_preset(name).final_round != "none":
        assert st.winner in [p.name for p in st.players if p.score == best]


# (preset, dotted parameter, expected value) — rules.md §4 as written
SPEC = [
    ("classic", "scoring.table", "CLASSIC_X20"),
    ("classic", "selection.set_aside", "all_scoring"),
    ("classic", "hot_dice", "must_roll"),
    ("classic", "opening.threshold", 50),
    ("classic", "negative_scores", "allowed"),
    ("classic", "pits", (Pit(200, 300), Pit(600, 700))),
    ("classic", "overtaking.penalty", 50),
    ("classic", "dump_truck.trigger", "recorded"),
    ("classic", "bolts.penalty", 100),
    ("classic", "bolts.exempt_when", ("not_open", "in_pit", "on_barrel")),
    ("classic", "barrel.kind", "points"),
    ("classic", "barrel.entry", 880),
    ("classic", "barrel.max_falls", 3),
    # rules.md 1.1 (§3.6.2, §3.6.6, §6.28): first sit at 880, then win with 120
    ("classic", "barrel.seat_score", "entry"),
    ("classic", "barrel.direct_win_from_below", False),
    ("classic", "hot_dice_win", "exact_only"),
    ("program_x50", "barrel.seat_score", "entry"),
    ("program_x50", "barrel.direct_win_from_below", False),
    ("soviet_box_track", "barrel.seat_score", "actual"),
    ("soviet_box_track", "barrel.direct_win_from_below", True),
    ("yard_dice_50", "barrel.seat_score", "actual"),
    ("yard_dice_50", "barrel.direct_win_from_below", True),
    ("variant2_850_barrel", "barrel.seat_score", "entry"),
    ("variant2_850_barrel", "confirm_below_minimum", "lose"),  # §1.4, §6.5d
    ("raznoobrazie_skip_barrels", "skip_barrels.upper", "exclusive"),  # §3.7, §6.38a
    ("raznoobrazie_skip_barrels", "skip_barrels.trigger", "recorded_stop"),
    ("classic", "scoring.instant_win", "none"),
    ("classic_no_barrel", "barrel.kind", "none"),
    ("classic_no_barrel", "pits", (Pit(200, 300), Pit(600, 700))),
    ("classic_open_barrel", "barrel.kind", "open"),
    ("classic_open_barrel", "barrel.dots_limit", 6),
    ("classic_open_barrel", "barrel.max_falls", 1),
    ("classic_open_barrel", "ending.mode", "exact"),
    ("classic_open_barrel", "ending.overshoot_effect", "dot"),
    ("classic_open_barrel", "overtaking.enabled", True),
    ("variant2_850_barrel", "selection.set_aside", "at_least_one"),
    ("variant2_850_barrel", "hot_dice", "confirm_and_bank"),
    ("variant2_850_barrel", "opening.threshold", 75),
    ("variant2_850_barrel", "barrel.kind", "capped"),
    ("variant2_850_barrel", "barrel.entry", 850),
    ("variant2_850_barrel", "barrel.knockoff_effect", "to_admission_score"),
    ("variant2_850_barrel", "bolts.enabled", False),
    ("variant2_850_barrel", "pits", ()),
    ("soviet_box_track", "scoring.table", "BOX_X100"),
    ("soviet_box_track", "scoring.two_dice_double_zero", True),
    ("soviet_box_track", "scoring.instant_win", "five_of_a_kind"),
    ("soviet_box_track", "opening.threshold", 75),
    ("soviet_box_track", "dump_truck.trigger", "running"),
    ("soviet_box_track", "bolts.penalty", 50),
    ("soviet_box_track", "barrel.kind", "final_range"),
    ("soviet_box_track", "barrel.entry", 900),
    ("soviet_box_track", "barrel.max_falls", None),
    ("soviet_box_track", "overtaking.enabled", False),
    ("soviet_box_track", "settlement.double_if_never_opened", True),
    ("raznoobrazie_skip_barrels", "selection.set_aside", "at_least_one"),
    ("raznoobrazie_skip_barrels", "scoring.instant_win", "five_of_a_kind"),
    ("raznoobrazie_skip_barrels", "first_throw_retry", False),
    ("raznoobrazie_skip_barrels", "skip_barrels.zones", ((300, 400), (600, 700), (900, 960))),
    ("raznoobrazie_skip_barrels", "skip_barrels.mode", "skip"),
    ("raznoobrazie_skip_barrels", "ending.mode", "exact"),
    ("raznoobrazie_skip_barrels", "ending.overshoot_effect", "void_turn"),
    ("yard_dice_50", "bolts.trigger", ("zero_turn", "failed_opening")),
    ("yard_dice_50", "bolts.exempt_when", ()),
    ("yard_dice_50", "bolts.penalty", 50),
    ("yard_dice_50", "negative_scores", "clamp_zero"),
    ("yard_dice_50", "barrel.knockoff_effect", "minus_50"),
    ("yard_dice_50", "barrel.fall_penalty", 50),
    ("yard_dice_50", "overtaking.penalty", 50),
    ("farkle", "dice_count", 6),
    ("farkle", "target", 10000),
    ("farkle", "scoring.table", "FARKLE_BASE"),
    ("farkle", "hot_dice", "may_roll_or_bank"),
    ("farkle", "opening.threshold", 0),
    ("farkle", "final_round", "others_one_more_turn"),
    ("farkle", "three_farkles.enabled", False),
    ("farkle", "players.min", 2),
    ("ten_thousand", "scoring.table", "TEN_THOUSAND_DOUBLING"),
    ("ten_thousand", "final_round", "none"),
    ("ten_thousand", "first_player", "highest_single_die_throw"),
    ("program_x50", "scoring.table", "PROGRAM_X50"),
    ("program_x50", "players.max", 6),
    ("program_x50", "players.min", 1),
    ("zary_custom", "scoring.quad_rule", "plus10"),
    ("zary_custom", "scoring.instant_win", "five_ones"),
    ("zary_custom", "first_throw_retry", True),
    ("zary_custom", "pits", (Pit(300, 400, "strictly_above"), Pit(750, 900, "strictly_above"))),
    ("zary_custom", "overtaking.penalty", 55),
    ("zary_custom", "dump_truck.trigger", "running"),
    ("zary_custom", "ending.mode", "exact"),
    ("zary_custom", "ending.overshoot_penalties",
     (OvershootPenalty(5, 100), OvershootPenalty(10, 0, True))),
    ("farkle_official", "scoring.table", "FARKLE_OFFICIAL"),
    ("farkle_official", "three_farkles.penalty", 1000),
    ("farkle_official", "three_farkles.enabled", True),
    ("farkle_class_5000", "opening.threshold", 350),
    ("farkle_class_5000", "target", 5000),
    ("farkle_class_5000", "final_round", "equalize_turns"),
    ("dix_mille", "scoring.table", "DIX_MILLE"),
    ("dix_mille", "opening.threshold", 750),
    ("dix_mille", "hot_dice", "must_roll"),
    ("wikihow_10000", "scoring.table", "WIKIHOW_10000"),
    ("wikihow_10000", "hot_dice", "may_roll_or_bank"),
    ("wikihow_10000", "final_round", "none"),
]


def _get(obj, dotted):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name, param, value", SPEC, ids=[f"{n}:{p}" for n, p, _ in SPEC])
def test_preset_parameters_follow_section_4(name, param, value):
    assert _get(get_preset(name), param) == value


def test_overrides_nested_dotted_and_scoring_aliases():
    r = with_overrides("classic", {"opening": {"threshold": 75}, "barrel.kind": "none",
                                   "instant_win": "five_ones"})
    assert r.opening.threshold == 75 and r.barrel.kind == "none"
    assert r.scoring.instant_win == "five_ones"
    assert r.pits == get_preset("classic").pits  # untouched parameters stay
    five_dice_farkle = with_overrides("farkle", {"dice_count": 5})
    assert five_dice_farkle.dice_count == 5 and five_dice_farkle.scoring.dice_count == 5
    g = new_game(five_dice_farkle, ["A", "B"])
    assert g.dice_to_throw == 5
    switched = with_overrides("classic", {"scoring_table": "ZARY_PLUS10"})
    assert switched.scoring.quad_rule == "plus10"
    assert resolve_rules({"preset": "farkle", "overrides": {"target": 5000}}).target == 5000
    unlimited = with_overrides("classic", {"barrel": {"attempts": "unlimited",
                                                      "max_falls": "unlimited"}})
    assert unlimited.barrel.attempts is None and unlimited.barrel.max_falls is None


def test_override_shorthands_as_rules_md_writes_them():
    r = with_overrides("yard_dice_50", {"pits": [[300, 400], [600, 700]], "opening": 55,
                                        "three_farkles": -1000, "overtaking": 55,
                                        "barrel": "none"})
    assert r.pits == (Pit(300, 400), Pit(600, 700))
    assert r.opening.threshold == 55 and r.overtaking.penalty == 55
    assert r.three_farkles.enabled and r.three_farkles.penalty == 1000
    assert r.barrel.kind == "none" and r.barrel.entry == 900  # the rest of the barrel stays
    assert with_overrides("classic", {"bolts": False}).bolts.enabled is False


@pytest.mark.parametrize("overrides, names", [
    ({"opening": {"treshold": 75}}, "opening.treshold"),
    ({"bolts": {"penalty": "lots"}}, "bolts.penalty"),
    ({"barrel": {"kind": "wooden"}}, "barrel.kind"),
    ({"hot_dice": "sometimes"}, "hot_dice"),
    ({"pits": [{"lo": 300, "hi": 200}]}, "pits[0]"),
    ({"barrel": {"kind": "open"}}, "barrel.kind"),  # open barrel needs an exact ending
    ({"ending": {"mode": "exact"}}, "ending.mode"),  # exact cannot sit on a points barrel
    ({"bolts": {"trigger": ["sneezing"]}}, "bolts.trigger"),
    ({"dice_count": 6}, "dice"),  # CLASSIC_X20 is a five-dice table
    ({"scoring": {"three_pairs": 500}}, "three_pairs"),  # no such switch in a 1000 table
    ({"players": {"min": 3, "max": 2}}, "players"),
    ({"colour": "red"}, "colour"),
])
def test_bad_overrides_name_the_parameter(overrides, names):
    with pytest.raises(BadInput) as info:
        with_overrides("classic", overrides)
    assert names in str(info.value)


def test_unknown_preset():
    with pytest.raises(BadInput, match="unknown preset"):
        get_preset("clasic")


def test_rules_files_json_and_toml(tmp_path):
    j = tmp_path / "r.json"
    j.write_text(json.dumps({"preset": "classic", "overrides": {"overtaking": {"penalty": 55}}}))
    assert load_rules_file(j).overtaking.penalty == 55
    t = tmp_path / "r.toml"
    t.write_text('preset = "yard_dice_50"\n[overrides.barrel]\nfall_penalty = 100\n'
                 '[overrides]\ntarget = 1500\n')
    r = load_rules_file(t)
    assert (r.barrel.fall_penalty, r.target, r.name) == (100, 1500, "yard_dice_50")
    full = tmp_path / "full.json"
    full.write_text(json.dumps(get_preset("zary_custom").to_dict()))
    assert load_rules_file(full) == get_preset("zary_custom")
    broken = tmp_path / "broken.toml"
    broken.write_text("preset = ")
    with pytest.raises(BadInput, match="malformed TOML"):
        load_rules_file(broken)


def test_player_limits():
    with pytest.raises(BadInput, match="1–6 players"):
        new_game("program_x50", [f"P{i}" for i in range(7)])
    with pytest.raises(BadInput, match="2–8 players"):
        new_game("farkle", ["Solo"])
    assert new_game("classic", ["Solo"]).to_move == "Solo"  # training mode (RU-E)
    with pytest.raises(BadInput, match="unique"):
        new_game("classic", ["A", "A"])


def test_rules_1_0_reachable_by_override():
    """Every change of rules.md 1.1 has a switch back to 1.0's behaviour (issue 17)."""
    r = with_overrides("classic", {"barrel": {"seat_score": "actual",
                                              "direct_win_from_below": True},
                                   "hot_dice_win": "any_ending"})
    assert (r.barrel.seat_score, r.barrel.direct_win_from_below, r.hot_dice_win) == (
        "actual", True, "any_ending")
    r = with_overrides("variant2_850_barrel", {"confirm_below_minimum": "continue"})
    assert r.confirm_below_minimum == "continue"
    r = with_overrides("raznoobrazie_skip_barrels", {"skip_barrels.upper": "inclusive",
                                                     "skip_barrels.trigger": "turn_end"})
    assert r.skip_barrels.zone_of(400) == 0 and get_preset(
        "raznoobrazie_skip_barrels").skip_barrels.zone_of(400) is None
    for bad in ({"barrel.seat_score": "half"}, {"confirm_below_minimum": "maybe"},
                {"hot_dice_win": "never"}, {"skip_barrels.trigger": "zero_turn"}):
        with pytest.raises(BadInput, match=next(iter(bad)).split(".")[-1]):
            with_overrides("classic", bad)
