"""rules.md §5.3 G-vectors and the turn examples of §5.1 (S-vectors) as data-driven tests.

Each scenario starts a game with :func:`kosti.engine.new_game` (preset, optional overrides,
starting scores and per-player state, exactly as ``kosti replay`` does), applies replay-format
events in order and checks the resulting state — or that the event at ``violation_at`` is refused
with a :class:`RuleViolation` whose reason contains ``reason``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ci_guard
import pytest

from kosti.engine import RuleViolation, action_from_json, new_game, with_overrides


@dataclass
class Scenario:
    id: str
    preset: str
    events: list[dict[str, Any]]
    players: tuple[str, ...] = ("A", "B")
    scores: dict[str, int] = field(default_factory=dict)
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
    overrides: dict[str, Any] | None = None
    violation_at: int | None = None
    reason: str | None = None
    # expectations on the final state
    score: dict[str, int] = field(default_factory=dict)
    player: dict[str, dict[str, Any]] = field(default_factory=dict)
    to_move: str | None = "?"
    winner: Any = "?"
    turn_points: int | None = None
    dice: int | None = None
    hint: tuple[str, str] | None = None  # words of allowed().hint (English, Russian)
    kinds: tuple[str, ...] = ()  # event kinds that must have happened
    not_kinds: tuple[str, ...] = ()  # event kinds that must not have happened


R = lambda *f: {"roll": list(f)}  # noqa: E731
K = lambda *f: {"keep": list(f)}  # noqa: E731
B = {"bank": True}
BUST5 = R(2, 2, 3, 4, 6)
BUST6 = R(2, 3, 3, 4, 6, 6)

SCENARIOS = [
    # ------------------------------------------------------------------ classic (RU-A)
    Scenario("G-01", "classic", [R(1, 5, 2, 3, 3), B], violation_at=1, reason="35 more to open"),
    Scenario("G-02", "classic", [R(1, 5, 2, 3, 3), R(5, 5, 2), R(1), B], violation_at=3,
             reason="must throw all five again"),
    Scenario("G-03", "classic", [R(1, 5, 2, 3, 3), R(5, 5, 2), R(1), R(1, 1, 1, 2, 3), B],
             score={"A": 135, "B": 0}, player={"A": {"opened": True}}, to_move="B"),
    Scenario("G-04", "classic", [R(6, 6, 6, 1, 2), B], scores={"A": 225}, violation_at=1,
             reason="needs 5 more to leave the pit"),
    Scenario("S-13", "classic", [R(5, 5, 5, 2, 3), B], scores={"A": 225}, violation_at=1,
             reason="needs 25 more to leave the pit"),
    Scenario("G-05", "classic", [R(6, 6, 6, 1, 5), R(5, 2, 3, 3, 4), B], scores={"A": 225},
             score={"A": 305}, player={"A": {"in_pit": False}}, to_move="B"),
    Scenario("G-06", "classic", [BUST5], scores={"A": 225}, state={"A": {"bolts": 2}},
             score={"A": 225}, player={"A": {"bolts": 2, "in_pit": True}}, not_kinds=("bolt",)),
    Scenario("G-07", "classic", [R(4, 4, 4, 2, 3), B], players=("A", "B", "C", "D"),
             scores={"A": 300, "B": 320, "C": 320, "D": 340},
             score={"A": 340, "B": 270, "C": 270, "D": 340},
             player={"B": {"in_pit": True}, "C": {"in_pit": True}}, kinds=("overtaken",)),
    Scenario("G-08", "classic", [R(1, 1, 2, 3, 4), B], scores={"A": 590, "B": 605},
             score={"A": 610, "B": 0}, player={"A": {"in_pit": True}, "B": {"opened": True}},
             kinds=("overtaken", "dump_truck")),
    Scenario("G-09 recorded: nothing mid-turn", "classic", [R(1, 5, 2, 3, 3)],
             scores={"A": 540}, score={"A": 540}, to_move="A", turn_points=15, dice=3),
    Scenario("G-09 recorded: stop on 555", "classic", [R(1, 5, 2, 3, 3), B], scores={"A": 540},
             score={"A": 0}, to_move="B", kinds=("dump_truck",)),
    Scenario("G-09 running (yard)", "yard_dice_50", [R(1, 5, 2, 3, 3)], scores={"A": 540},
             score={"A": 0}, to_move="B", kinds=("dump_truck",)),
    Scenario("G-11", "classic", [BUST5], scores={"A": 400}, state={"A": {"bolts": 2}},
             score={"A": 300}, player={"A": {"bolts": 0}}, kinds=("bolt_penalty",)),
    Scenario("G-12", "classic", [BUST5], state={"A": {"bolts": 2}},
             score={"A": 0}, player={"A": {"bolts": 2, "opened": False}}, not_kinds=("bolt",)),
    Scenario("G-12 opening penalty", "classic", [BUST5], state={"A": {"bolts": 2}},
             overrides={"opening": {"failure_penalty": {"every": 3, "amount": 100}}},
             score={"A": -100}, player={"A": {"bolts": 0, "opened": False}}),
    Scenario("G-13", "classic", [R(6, 6, 6, 2, 3), B], scores={"A": -100},
             state={"A": {"opened": False}},
             overrides={"opening": {"failure_penalty": {"every": 3, "amount": 100}}},
             score={"A": -40}, player={"A": {"opened": True}}),
    # rules.md 1.1: first sit (a turn above 880 records exactly 880), then win with 120
    Scenario("G-14", "classic", [R(1, 1, 2, 3, 4), B], scores={"A": 870},
             score={"A": 880}, player={"A": {"on_barrel": True, "barrel_attempts": 0}},
             kinds=("capped", "barrel")),
    Scenario("G-15", "classic", [R(1, 1, 2, 3, 4), R(1, 1, 5), R(6, 6, 6, 1, 2), B],
             scores={"A": 880}, state={"A": {"on_barrel": True}}, violation_at=3,
             reason="needs 5 more"),
    Scenario("G-16 two failures", "classic", [BUST5, BUST5, BUST5, BUST5], scores={"A": 880},
             state={"A": {"on_barrel": True}}, score={"A": 880},
             player={"A": {"on_barrel": True, "barrel_attempts": 2, "falls": 0, "bolts": 0}}),
    Scenario("G-16", "classic", [BUST5] * 6, scores={"A": 880}, state={"A": {"on_barrel": True}},
             score={"A": 780}, player={"A": {"falls": 1, "barrel_attempts": 0,
                                             "on_barrel": False}}, kinds=("fall",)),
    Scenario("G-17", "classic", [R(4, 4, 4, 2, 3), B], players=("B", "A"),
             scores={"A": 880, "B": 860},
             state={"A": {"on_barrel": True, "barrel_attempts": 1, "falls": 2}},
             score={"A": 0, "B": 880}, player={"B": {"on_barrel": True},
                                               "A": {"on_barrel": False, "falls": 0}},
             not_kinds=("overtaken",)),
    Scenario("G-17b", "classic", [R(4, 4, 4, 2, 3), B], players=("B", "A"),
             scores={"A": 880, "B": 860}, state={"A": {"on_barrel": True, "barrel_attempts": 1}},
             score={"A": 780, "B": 880}, player={"A": {"falls": 1, "barrel_attempts": 0},
                                                 "B": {"on_barrel": True}},
             not_kinds=("overtaken",)),
    Scenario("G-18", "classic", [R(1, 1, 2, 3, 4), B], scores={"A": 860, "B": 870},
             score={"A": 880, "B": 820}, player={"A": {"on_barrel": False}},
             kinds=("overtaken",), not_kinds=("barrel",)),
    Scenario("S-15", "classic", [R(1, 1, 1, 2, 3), B], scores={"A": 880},
             state={"A": {"on_barrel": True}}, violation_at=1, reason="needs 20 more"),
    Scenario("S-15 win from the barrel", "classic", [R(6, 6, 6, 6, 2)], scores={"A": 880},
             state={"A": {"on_barrel": True}}, score={"A": 1000}, winner="A", to_move=None),
    Scenario("G-47", "classic", [R(1, 1, 1, 2, 3), R(1, 2), R(1), R(4, 4, 4, 2, 3), B],
             scores={"A": 850}, score={"A": 880}, winner=None, to_move="B",
             player={"A": {"on_barrel": True, "barrel_attempts": 0}}),
    Scenario("G-47 no win from below in one throw", "classic", [R(1, 1, 1, 1, 2), B],
             scores={"A": 850}, score={"A": 880}, winner=None,
             player={"A": {"on_barrel": True}}),
    Scenario("G-48 refused", "classic", [R(1, 1, 1, 1, 5), B], scores={"A": 880},
             state={"A": {"on_barrel": True}}, violation_at=1,
             reason="must throw all five again"),
    Scenario("G-48 bust", "classic", [R(1, 1, 1, 1, 5), BUST5], scores={"A": 880},
             state={"A": {"on_barrel": True}}, score={"A": 880}, winner=None, to_move="B",
             player={"A": {"on_barrel": True, "barrel_attempts": 1}}),
    Scenario("G-48 win", "classic", [R(1, 1, 1, 1, 5), R(5, 2, 2, 3, 6)], scores={"A": 880},
             state={"A": {"on_barrel": True}}, score={"A": 1090}, winner="A"),
    Scenario("G-48 on the way: hot dice at 1000 from below", "classic_no_barrel",
             [R(1, 1, 1, 5, 5), B], scores={"A": 895}, violation_at=1,
             reason="must throw all five again"),
    # rules.md 1.0 behaviour by override
    Scenario("1.0: seat_score actual, direct win", "classic", [R(1, 1, 2, 3, 4), B],
             overrides={"barrel": {"seat_score": "actual", "direct_win_from_below": True}},
             scores={"A": 870}, score={"A": 890}, player={"A": {"on_barrel": True}}),
    Scenario("1.0: win from below", "classic", [R(1, 1, 1, 2, 3), R(1, 2), R(1), R(4, 4, 4, 2, 3)],
             overrides={"barrel": {"seat_score": "actual", "direct_win_from_below": True}},
             scores={"A": 850}, score={"A": 1010}, winner="A"),
    Scenario("1.0: hot dice win at once", "classic", [R(1, 1, 1, 1, 5)],
             overrides={"hot_dice_win": "any_ending"}, scores={"A": 880},
             state={"A": {"on_barrel": True}}, score={"A": 1085}, winner="A"),
    # ------------------------------------------------------------------ classic_open_barrel
    Scenario("G-19", "classic_open_barrel", [R(1, 1, 1, 2, 3)], scores={"A": 960},
             score={"A": 960}, player={"A": {"dots": 1}}, to_move="B", kinds=("dot",)),
    Scenario("G-20", "classic_open_barrel", [R(1, 1, 1, 4, 6)], scores={"A": 990},
             score={"A": 990}, player={"A": {"dots": 1}}, to_move="B"),
    Scenario("G-21", "classic_open_barrel", [R(1, 2, 2, 3, 4)], scores={"A": 990},
             score={"A": 1000}, winner="A", to_move=None),
    Scenario("G-22", "classic_open_barrel", [R(1, 1, 1, 2, 3)], scores={"A": 970},
             state={"A": {"dots": 5}}, score={"A": 0}, player={"A": {"dots": 0}}),
    Scenario("open barrel: dot for an unopened player", "classic_open_barrel",
             [R(1, 1, 1, 1, 5), R(1, 1, 1, 1, 1)], player={"A": {"dots": 1, "opened": False}},
             score={"A": 0}, winner=None),
    Scenario("open barrel: exactly 1000 in the first turn wins", "classic_open_barrel",
             [R(1, 1, 1, 1, 1)], score={"A": 1000}, winner="A"),
    # ------------------------------------------------------------------ variant2_850_barrel (RU-B)
    Scenario("S-01", "variant2_850_barrel", [R(1, 5, 3, 3, 4), K(1, 5)], to_move="A",
             turn_points=15, dice=3),
    Scenario("S-02", "variant2_850_barrel", [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5)],
             to_move="A", turn_points=25, dice=1),
    Scenario("S-03", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5), R(1), B], violation_at=5,
             reason="confirmation throw"),
    Scenario("S-04", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5), R(1), R(5, 2, 2, 3, 6)],
             scores={"A": 100}, score={"A": 140}, to_move="B", kinds=("confirmation",)),
    Scenario("S-05", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5), R(1), R(2, 2, 3, 4, 6)],
             scores={"A": 100}, score={"A": 100}, to_move="B"),
    Scenario("variant2: keep a non-scoring die", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 3)], violation_at=1, reason="3"),
    Scenario("V-107 keep one 1", "variant2_850_barrel", [R(1, 1, 1, 4, 6), K(1)],
             to_move="A", turn_points=10, dice=4),
    Scenario("V-107 keep 1 1 1", "variant2_850_barrel", [R(1, 1, 1, 4, 6), K(1, 1, 1)],
             to_move="A", turn_points=100, dice=2),
    Scenario("G-23", "variant2_850_barrel", [R(6, 6, 6, 2, 3), B], scores={"A": 820},
             state={"A": {"admission_score": 90}}, score={"A": 850},
             player={"A": {"on_barrel": True}}, kinds=("capped",)),
    Scenario("S-16 / §6.34a cap from below", "variant2_850_barrel", [R(1, 1, 1, 2, 3), B],
             scores={"A": 800}, score={"A": 850}, winner=None),
    Scenario("G-24", "variant2_850_barrel", [R(5, 5, 5, 2, 3), B], players=("B", "A"),
             scores={"A": 850, "B": 800}, state={"A": {"admission_score": 90}},
             score={"A": 90, "B": 850}, player={"B": {"on_barrel": True},
                                                "A": {"on_barrel": False}}),
    Scenario("G-25 refused", "variant2_850_barrel",
             [R(1, 1, 1, 2, 3), K(1, 1, 1), R(1, 2), B], scores={"A": 850}, violation_at=3,
             reason="needs 40 more"),
    Scenario("G-25 bust", "variant2_850_barrel",
             [R(1, 1, 1, 2, 3), K(1, 1, 1), R(1, 2), R(3)], scores={"A": 850},
             score={"A": 850}, player={"A": {"on_barrel": True, "falls": 0}}, to_move="B"),
    Scenario("G-26", "variant2_850_barrel", [R(1, 1, 1, 1, 2), K(1, 1, 1, 1)],
             scores={"A": 850}, score={"A": 1050}, winner="A"),
    Scenario("G-26 by a confirmation", "variant2_850_barrel",
             [R(1, 1, 1, 5, 2), K(1, 1, 1, 5), R(5), R(5, 5, 5, 2, 3)],
             scores={"A": 850}, score={"A": 1010}, winner="A"),
    Scenario("G-26 a straight needs its confirmation", "variant2_850_barrel",
             [R(2, 3, 4, 5, 6), K(2, 3, 4, 5, 6), B], scores={"A": 850}, violation_at=2,
             reason="confirmation throw"),
    Scenario("G-26 straight confirmed", "variant2_850_barrel",
             [R(2, 3, 4, 5, 6), K(2, 3, 4, 5, 6), R(5, 2, 2, 3, 6)], scores={"A": 850},
             score={"A": 1105}, winner="A"),
    Scenario("G-49 hint", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5), R(1), K(1)], to_move="A", dice=5,
             turn_points=35, hint=("records nothing", "ничего не запишет")),
    Scenario("G-49", "variant2_850_barrel",
             [R(1, 5, 3, 3, 4), K(1, 5), R(5, 5, 2), K(5, 5), R(1), R(5, 2, 2, 3, 6)],
             score={"A": 0}, player={"A": {"opened": False}}, to_move="B",
             kinds=("confirmation",), not_kinds=("bank",)),
    Scenario("variant2: a confirmation short of 150 on the barrel loses the turn",
             "variant2_850_barrel", [R(1, 1, 1, 5, 2), K(1, 1, 1, 5), R(5), R(5, 5, 2, 3, 4)],
             scores={"A": 850}, score={"A": 850}, player={"A": {"on_barrel": True}},
             to_move="B", winner=None, not_kinds=("bank",)),
    Scenario("1.0: confirmation on the barrel continues the turn", "variant2_850_barrel",
             [R(1, 1, 1, 5, 2), K(1, 1, 1, 5), R(5), R(5, 5, 2, 3, 4)],
             overrides={"confirm_below_minimum": "continue"},
             scores={"A": 850}, to_move="A", turn_points=120, dice=3, winner=None),
    Scenario("1.0: ... and then wins", "variant2_850_barrel",
             [R(1, 1, 1, 5, 2), K(1, 1, 1, 5), R(5), R(5, 5, 2, 3, 4), R(1, 1, 1), K(1, 1, 1)],
             overrides={"confirm_below_minimum": "continue", "hot_dice_win": "any_ending"},
             scores={"A": 850}, score={"A": 1070}, winner="A"),
    Scenario("1.0: a stop that implies the winning straight wins", "variant2_850_barrel",
             [R(2, 3, 4, 5, 6), B], overrides={"hot_dice_win": "any_ending"},
             scores={"A": 850}, score={"A": 1100}, winner="A"),
    # ------------------------------------------------------------------ soviet_box_track (ID-A)
    Scenario("S-10", "soviet_box_track", [R(1, 5, 2, 3, 3), R(1, 5, 5)], to_move="A",
             turn_points=35, dice=5, kinds=("hot_dice",)),
    Scenario("S-10 must roll", "soviet_box_track", [R(1, 5, 2, 3, 3), R(1, 5, 5), B],
             scores={"A": 300}, violation_at=2, reason="throw all five"),
    Scenario("S-11", "soviet_box_track", [R(1, 5, 2, 3, 3), R(1, 5, 5), R(6, 6, 6, 2, 3)],
             to_move="A", turn_points=95, dice=2),
    Scenario("S-12", "soviet_box_track",
             [R(1, 5, 2, 3, 3), R(1, 5, 5), R(6, 6, 6, 2, 3), R(5, 3), B],
             score={"A": 100}, player={"A": {"opened": True}}, to_move="B"),
    Scenario("G-10", "soviet_box_track", [R(1, 5, 2, 3, 3)], scores={"A": 540},
             score={"A": 0}, player={"A": {"opened": True}}, to_move="B",
             kinds=("dump_truck",)),
    Scenario("G-27", "soviet_box_track", [R(1, 1, 5, 2, 3), R(4, 4)], to_move="A",
             turn_points=25, dice=5),
    Scenario("V-113", "soviet_box_track", [R(1, 5, 2, 3, 3), R(3, 3, 4)], to_move="B",
             kinds=("bust",)),
    Scenario("G-28", "soviet_box_track", [R(4, 4, 4, 4, 4)], scores={"A": 230},
             winner="A", to_move=None, kinds=("instant_win",)),
    Scenario("G-28 unopened, mid-turn", "soviet_box_track", [R(1, 5, 2, 3, 3), R(6, 6, 6)],
             winner=None, to_move="A", dice=5),
    Scenario("G-28 unopened", "soviet_box_track", [R(2, 2, 2, 2, 2)], winner="A"),
    Scenario("G-29", "soviet_box_track", [R(4, 4, 4, 2, 3), B], scores={"A": 180},
             score={"A": 220}, player={"A": {"in_pit": True}}),
    Scenario("G-29 next turn", "soviet_box_track", [R(4, 4, 4, 2, 3), B, BUST5,
                                                     R(6, 6, 6, 1, 2), B],
             scores={"A": 180}, violation_at=4, reason="needs 10 more to leave the pit"),
    Scenario("G-30", "soviet_box_track", [R(3, 3, 3, 2, 6), B], scores={"A": 880},
             score={"A": 910}, player={"A": {"on_barrel": True, "barrel_attempts": 0}}),
    Scenario("G-30 needs 90", "soviet_box_track", [R(6, 6, 6, 1, 2), B], scores={"A": 910},
             violation_at=1, reason="needs 20 more"),
    Scenario("G-31", "soviet_box_track", [BUST5] * 6, scores={"A": 910},
             score={"A": 810}, player={"A": {"bolts": 0, "falls": 1, "on_barrel": False}}),
    Scenario("G-32", "soviet_box_track", [BUST5], scores={"A": 300},
             state={"A": {"bolts": 2}}, score={"A": 250},
             player={"A": {"bolts": 0, "in_pit": True}}),
    Scenario("soviet: knock-off is a fall", "soviet_box_track", [R(4, 4, 4, 2, 3), B],
             players=("B", "A"), scores={"A": 950, "B": 870}, score={"A": 850, "B": 910},
             player={"A": {"falls": 1}}),
    # ------------------------------------------------------------------ raznoobrazie (RU-C)
    Scenario("G-33", "raznoobrazie_skip_barrels", [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), B],
             scores={"A": 290}, score={"A": 360}, player={"A": {"skip_next": True}},
             to_move="B"),
    Scenario("G-33 skipped", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), B, BUST5], scores={"A": 290},
             player={"A": {"skip_next": False}}, to_move="B", kinds=("skip_turn",)),
    Scenario("G-34 extra turn", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), B],
             overrides={"skip_barrels": {"mode": "extra_turn_minus_100"}},
             scores={"A": 290}, score={"A": 360}, to_move="A", kinds=("extra_turn",)),
    Scenario("G-34 still on the barrel", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), B, R(1, 1, 5, 2, 3), B],
             overrides={"skip_barrels": {"mode": "extra_turn_minus_100"}},
             scores={"A": 290}, score={"A": 285}, player={"A": {"skip_next": True}},
             to_move="B"),
    Scenario("G-34 bust", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), B, BUST5],
             overrides={"skip_barrels": {"mode": "extra_turn_minus_100"}},
             scores={"A": 290}, score={"A": 260}, player={"A": {"skip_next": True}}),
    Scenario("G-35", "raznoobrazie_skip_barrels", [R(1, 1, 2, 3, 4), K(1, 1)],
             scores={"A": 985}, score={"A": 985}, player={"A": {"overshoots": 1}},
             to_move="B", kinds=("overshoot",)),
    Scenario("G-35 a throw of 3 implies keeping 1 1: overshoot, the throw does not count",
             "raznoobrazie_skip_barrels", [R(1, 1, 2, 3, 4), R(2, 3, 4)], scores={"A": 985},
             score={"A": 985}, player={"A": {"overshoots": 1}}, to_move="B",
             kinds=("overshoot",), not_kinds=("bust",)),
    Scenario("G-35 keep fewer", "raznoobrazie_skip_barrels", [R(1, 1, 2, 3, 4), K(1)],
             scores={"A": 985}, turn_points=10, to_move="A"),
    Scenario("S-19", "raznoobrazie_skip_barrels", [R(1, 5, 2, 3, 3), K(1, 5)],
             scores={"A": 985}, score={"A": 1000}, winner="A"),
    Scenario("G-36", "raznoobrazie_skip_barrels", [R(3, 3, 3, 3, 3)], scores={"A": 500},
             winner="A", kinds=("instant_win",)),
    Scenario("G-37", "raznoobrazie_skip_barrels", [BUST5], to_move="B",
             not_kinds=("retry",)),
    Scenario("S-20", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 2), K(1), B,
              R(1, 1, 5, 2, 3), K(1, 1, 5), R(1, 3), K(1), B],
             overrides={"skip_barrels": {"mode": "extra_turn_minus_100"}}, scores={"A": 295},
             score={"A": 400}, player={"A": {"skip_next": False}}, to_move="B",
             kinds=("extra_turn",), not_kinds=("skip_turn",)),
    Scenario("G-50", "raznoobrazie_skip_barrels", [R(6, 6, 6, 2, 3), K(6, 6, 6), B],
             scores={"A": 340}, score={"A": 400}, player={"A": {"skip_next": False}},
             to_move="B", not_kinds=("skip_turn",)),
    Scenario("G-50 and B plays next round", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), B, BUST5], scores={"A": 340}, to_move="A",
             not_kinds=("skip_turn",)),
    Scenario("G-51", "raznoobrazie_skip_barrels", [BUST5], scores={"A": 365}, score={"A": 365},
             player={"A": {"skip_next": False}}, to_move="B", not_kinds=("skip_turn",)),
    Scenario("G-52", "raznoobrazie_skip_barrels", [R(1, 5, 2, 3, 4), K(1, 5), R(1, 1, 5),
                                                   K(1, 1, 5)],
             scores={"A": 960, "B": 0}, score={"A": 1000}, winner="A"),
    Scenario("G-52 by a stop that implies the keep", "raznoobrazie_skip_barrels",
             [R(1, 5, 2, 3, 4), K(1, 5), R(1, 1, 5), B],
             scores={"A": 960, "B": 0}, score={"A": 1000}, winner="A"),
    Scenario("1.0: closed zones, any turn", "raznoobrazie_skip_barrels",
             [R(6, 6, 6, 2, 3), K(6, 6, 6), B], scores={"A": 340},
             overrides={"skip_barrels": {"upper": "inclusive", "trigger": "turn_end"}},
             score={"A": 400}, player={"A": {"skip_next": True}}),
    Scenario("1.0: a zero turn inside skips", "raznoobrazie_skip_barrels", [BUST5],
             overrides={"skip_barrels": {"upper": "inclusive", "trigger": "turn_end"}},
             scores={"A": 365}, player={"A": {"skip_next": True}}),
    # ------------------------------------------------------------------ zary_custom (RU-D)
    Scenario("S-06/S-07", "zary_custom", [R(2, 5, 5, 6, 6), R(1, 3, 4), B],
             scores={"A": 100}, score={"A": 120}),
    Scenario("G-38 retry", "zary_custom", [BUST5], scores={"A": 100}, to_move="A", dice=5,
             kinds=("retry",), not_kinds=("bolt",)),
    Scenario("G-38", "zary_custom", [BUST5, R(2, 3, 3, 4, 6)], scores={"A": 100},
             to_move="B", player={"A": {"bolts": 1}}),
    Scenario("zary: no retry after a scoring throw", "zary_custom", [R(1, 2, 3, 4, 6), R(2, 3, 4, 6)],
             scores={"A": 100}, to_move="B"),
    Scenario("S-14", "zary_custom", [R(5, 5, 5, 2, 3), R(5, 3), B], scores={"A": 275},
             score={"A": 330}, player={"A": {"in_pit": True}}),
    Scenario("G-39", "zary_custom", [R(6, 6, 6, 2, 3), R(1, 2), B], scores={"A": 330},
             violation_at=2, reason="needs 5 more"),
    Scenario("G-39 exit above 400", "zary_custom", [R(6, 6, 6, 2, 3), R(1, 2), R(5), R(1, 2, 3, 4, 6), B],
             scores={"A": 330}, score={"A": 415}, player={"A": {"in_pit": False}}),
    Scenario("S-35 5th overshoot", "zary_custom", [R(1, 1, 1, 2, 3)], scores={"A": 950},
             state={"A": {"overshoots": 4}}, score={"A": 850}),
    Scenario("S-35 10th overshoot", "zary_custom", [R(1, 1, 1, 2, 3)], scores={"A": 950},
             state={"A": {"overshoots": 9}}, score={"A": 0}, player={"A": {"overshoots": 0}}),
    Scenario("zary: five 1s win", "zary_custom", [R(1, 1, 1, 1, 1)], scores={"A": 990},
             winner="A"),
    # ------------------------------------------------------------------ yard_dice_50 (ID-D)
    Scenario("S-08", "yard_dice_50", [R(1, 2, 4, 5, 6)], to_move="A", turn_points=15, dice=3),
    Scenario("S-09", "yard_dice_50", [R(1, 1, 5, 3, 4), R(2, 3)], to_move="B",
             player={"A": {"bolts": 1}}, score={"A": 0}),
    Scenario("S-17", "yard_dice_50", [R(1, 5, 2, 3, 3)], scores={"A": 540}, score={"A": 0},
             player={"A": {"opened": True}}, to_move="B"),
    Scenario("S-18", "yard_dice_50", [R(6, 6, 6, 2, 3), B], scores={"A": 925}, violation_at=1,
             reason="needs 15 more"),
    Scenario("G-40", "yard_dice_50", [BUST5], state={"A": {"bolts": 2}}, score={"A": 0},
             player={"A": {"bolts": 0}}, kinds=("bolt_penalty",)),
    Scenario("G-41", "yard_dice_50", [R(3, 3, 3, 2, 6), B], players=("B", "A"),
             scores={"A": 925, "B": 880}, score={"A": 875, "B": 910},
             player={"A": {"on_barrel": False}, "B": {"on_barrel": True}},
             kinds=("knocked_off",), not_kinds=("overtaken",)),
    Scenario("§4.6 three bolts on the barrel = the fall", "yard_dice_50", [BUST5] * 6,
             scores={"A": 925}, score={"A": 875}, player={"A": {"bolts": 0, "falls": 1}}),
    # ------------------------------------------------------------------ Farkle / 10000
    Scenario("G-42", "farkle", [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), R(2, 3, 4)],
             players=("A", "B", "C"), scores={"A": 9800, "B": 5000, "C": 7000},
             score={"A": 9800}, to_move="B", winner=None),
    Scenario("G-42 final round", "farkle",
             [R(3, 3, 3, 2, 4, 6), K(3, 3, 3), B, BUST6, R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B],
             players=("A", "B", "C"), scores={"A": 9800, "B": 5000, "C": 9200},
             score={"A": 10100, "B": 5000, "C": 10200}, winner="C", to_move=None,
             kinds=("final_round",)),
    Scenario("G-42 leader keeps the win", "farkle",
             [R(3, 3, 3, 2, 4, 6), K(3, 3, 3), B, BUST6, BUST6],
             players=("A", "B", "C"), scores={"A": 9800, "B": 5000, "C": 9200},
             winner="A", to_move=None),
    Scenario("S-21 keep only the 1", "farkle", [R(1, 2, 2, 5, 5, 6), K(1)], to_move="A",
             turn_points=100, dice=5),
    Scenario("V-110 fourth 2 is dead", "farkle", [R(2, 2, 2, 2, 3, 4), K(2, 2, 2, 2)],
             violation_at=1),
    Scenario("S-23", "farkle", [R(1, 2, 3, 4, 6, 6), K(1), R(1, 1, 2, 3, 4), K(1, 1), B],
             score={"A": 300}),
    Scenario("S-24", "farkle_official", [R(1, 2, 3, 3, 5, 6), K(1, 5), R(2, 2, 2, 6),
                                         K(2, 2, 2), B], score={"A": 350}),
    Scenario("S-25", "farkle_class_5000", [R(1, 2, 3, 3, 5, 6), K(1, 5), R(3, 4, 4, 5), K(5), B],
             scores={"A": 400}, score={"A": 600}),
    Scenario("S-26", "farkle_official", [R(5, 5, 2, 3, 4, 6), K(5, 5), R(5, 2, 3, 4), K(5), B],
             score={"A": 150}),
    Scenario("farkle_class: entry 350", "farkle_class_5000",
             [R(1, 2, 3, 3, 5, 6), K(1, 5), R(3, 4, 4, 5), K(5), B], violation_at=4,
             reason="150 more to open"),
    Scenario("G-43", "farkle_official", [BUST6], scores={"A": 1500},
             state={"A": {"farkles": 2}}, score={"A": 500}, kinds=("three_farkles",)),
    Scenario("G-43 reset by a scoring turn", "farkle_official",
             [R(1, 2, 3, 3, 4, 6), B, BUST6], scores={"A": 1500},
             state={"A": {"farkles": 2}}, score={"A": 1600}, not_kinds=("three_farkles",)),
    Scenario("G-44", "ten_thousand", [R(3, 3, 3, 2, 4, 6), K(3, 3, 3)],
             overrides={"ending": {"mode": "exact"}}, scores={"A": 9800}, score={"A": 9800},
             to_move="B", kinds=("overshoot",)),
    Scenario("ten_thousand: first to 10000 wins", "ten_thousand", [R(3, 3, 3, 2, 4, 6), B],
             scores={"A": 9800}, score={"A": 10100}, winner="A"),
    Scenario("G-45", "farkle", [R(1, 2, 3, 3, 4, 6), K(1), R(2, 2, 2, 2, 5)],
             overrides={"toxic_twos": True}, score={"A": 0}, to_move="B",
             kinds=("toxic_twos",)),
    Scenario("G-46", "farkle", [R(1, 1, 1, 5, 5, 3), K(1, 1, 1, 5, 5), R(1), B],
             score={"A": 1200}, to_move="B"),
    Scenario("dix_mille: hot dice must roll", "dix_mille",
             [R(1, 2, 3, 4, 5, 5), B], scores={"A": 1000}, violation_at=1,
             reason="throw all six again"),
    # ------------------------------------------------------------------ general
    Scenario("a roll after the game is over", "soviet_box_track", [R(4, 4, 4, 4, 4), BUST5],
             violation_at=1, reason="game is over"),
    Scenario("bank before any throw", "classic", [B], violation_at=0, reason="throw the dice first"),
]


def _play(sc: Scenario):
    rules: Any = sc.preset if sc.overrides is None else with_overrides(sc.preset, sc.overrides)
    st = new_game(rules, list(sc.players), sc.scores, sc.state)
    kinds: list[str] = []
    for i, e in enumerate(sc.events):
        action = action_from_json(e)
        if sc.violation_at is not None and i == sc.violation_at:
            with pytest.raises(RuleViolation) as info:
                st.apply(action)
            if sc.reason:
                assert sc.reason in info.value.reason_en, info.value.reason_en
            assert info.value.reason_ru  # the Russian reason is always given
            return st, kinds
        st, ev = st.apply(action)
        kinds.extend(x.kind for x in ev)
    assert sc.violation_at is None, "the expected violation did not happen"
    return st, kinds


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(sc: Scenario) -> None:
    st, kinds = _play(sc)
    summary = st.summary()
    by_name = {p["name"]: p for p in summary["players"]}
    for name, score in sc.score.items():
        assert by_name[name]["score"] == score, (name, summary["log"])
    for name, exp in sc.player.items():
        p = {**by_name[name], **{k: getattr(st.player(name), k) for k in
                                 ("admission_score", "farkles", "turns")}}
        for key, value in exp.items():
            assert p[key] == value, (name, key, p, summary["log"])
    if sc.to_move != "?":
        assert st.to_move == sc.to_move, summary["log"]
    if sc.winner != "?":
        assert st.winner == sc.winner, summary["log"]
    if sc.turn_points is not None:
        assert st.turn_points == sc.turn_points, summary["log"]
    if sc.dice is not None:
        assert st.dice_to_throw == sc.dice, summary["log"]
    if sc.hint is not None:
        hint = st.moves().hint
        assert sc.hint[0] in hint.text_en and sc.hint[1] in hint.text_ru, hint
    for k in sc.kinds:
        assert k in kinds, (k, kinds)
    for k in sc.not_kinds:
        assert k not in kinds, (k, kinds)


# ---------------------------------------------------------------------------------------------
# Every vector of rules.md §5.1 / §5.3 has a test here or among the scoring vectors

RULES_MD = Path(__file__).resolve().parents[3] / "shared" / "docs" / "rules.md"
_ID = re.compile(r"\b([SG]-\d+[a-z]?)\b")


def _covered_ids() -> set[str]:
    ids = {m for sc in SCENARIOS for m in _ID.findall(sc.id)}
    data = json.loads((Path(__file__).resolve().parents[2] / "engine" / "data"
                       / "score_vectors.json").read_text(encoding="utf-8"))
    ids |= {m for v in data["vectors"] for m in _ID.findall(v["id"])}
    return ids


def test_every_rules_md_vector_is_tested() -> None:
    if not RULES_MD.exists():
        ci_guard.missing(f"{RULES_MD} not found: the shared rules spec is not checked out here")
    text = RULES_MD.read_text(encoding="utf-8")
    start, end = text.index("## 5. Test vectors"), text.index("## 6. Open ambiguities")
    listed = {m.group(1) for m in re.finditer(r"^\| ([SG]-\d+[a-z]?) \|", text[start:end], re.M)}
    assert len(listed) > 80, "the §5 tables were not found"
    missing = sorted(listed - _covered_ids(), key=lambda i: (i[0], int(re.sub(r"\D", "", i))))
    assert not missing, f"rules.md §5 vectors without a test: {missing}"
