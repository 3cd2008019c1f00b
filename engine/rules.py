"""The rule parameter tree of the game engine: every house-rule module of rules.md §1 and §3.

A :class:`Rules` value is an immutable tree of frozen dataclasses. Parameter names follow
``../shared/docs/rules.md`` (§1, §3, §4) so that a preset written there reads the same here:
``opening.threshold``, ``bolts.penalty``, ``barrel.kind``, ``ending.mode`` … The scoring table and
its switches (T1–T11, instant win, two-dice double) live in :class:`kosti.engine.scoring.ScoringRules`,
held in ``Rules.scoring``.

``Rules.to_dict()`` gives plain JSON-able data; ``Rules.from_dict(d)`` rebuilds it and rejects an
unknown parameter or a value of the wrong type or outside its choices with :class:`BadInput` naming
the parameter path (``"bolts.penalty: expected an integer, got 'x'"``). Cross-parameter
inconsistencies (a pit whose ``lo >= hi``, a ``capped`` barrel with an exact ending, …) are rejected
by :meth:`Rules.validate`.

Every number has the source given in rules.md; defaults are the "Default" column of §3 (all modules
off), presets (:mod:`kosti.engine.presets`) switch them on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .errors import BadInput
from .rule_modules import (
    BARREL_KINDS,
    BOLT_EXEMPTIONS,
    BOLT_TRIGGERS,
    CONFIRM_BELOW_MINIMUM,
    DUMP_TRIGGER,
    ENDING_MODES,
    FINAL_ROUNDS,
    FIRST_PLAYER,
    HOT_DICE,
    HOT_DICE_WIN,
    KNOCKOFF_EFFECTS,
    MAX_PARAMETER,
    NEGATIVE_SCORES,
    OVERSHOOT_EFFECTS,
    PIT_EXIT,
    SEAT_SCORES,
    SET_ASIDE,
    SKIP_MODES,
    SKIP_TRIGGERS,
    SKIP_UPPER,
    Barrel,
    Bolts,
    DumpTruck,
    Ending,
    FailurePenalty,
    HighStakes,
    Opening,
    OvershootPenalty,
    Overtaking,
    Pit,
    Players,
    Selection,
    Settlement,
    SkipBarrels,
    TeamPlay,
    ThreeFarkles,
)
from .rules_dict import CHOICES as _CHOICES  # noqa: F401 - kept importable from here
from .rules_dict import build as _build
from .rules_dict import plain as _plain
from .rules_dict import shorthand as _shorthand  # noqa: F401 - kept importable from here
from .scoring import ScoringRules

__all__ = [
    "BARREL_KINDS",
    "BOLT_EXEMPTIONS",
    "BOLT_TRIGGERS",
    "CONFIRM_BELOW_MINIMUM",
    "DUMP_TRIGGER",
    "ENDING_MODES",
    "FINAL_ROUNDS",
    "FIRST_PLAYER",
    "HOT_DICE",
    "HOT_DICE_WIN",
    "KNOCKOFF_EFFECTS",
    "MAX_PARAMETER",
    "NEGATIVE_SCORES",
    "OVERSHOOT_EFFECTS",
    "PIT_EXIT",
    "RULES_1_0_VALUES",
    "SEAT_SCORES",
    "SET_ASIDE",
    "SKIP_MODES",
    "SKIP_TRIGGERS",
    "SKIP_UPPER",
    "Barrel",
    "Bolts",
    "DumpTruck",
    "Ending",
    "FailurePenalty",
    "HighStakes",
    "Opening",
    "OvershootPenalty",
    "Overtaking",
    "Pit",
    "Players",
    "Rules",
    "Selection",
    "Settlement",
    "SkipBarrels",
    "TeamPlay",
    "ThreeFarkles",
    "rules_1_0",
]


@dataclass(frozen=True, slots=True)
class Rules:
    """The complete rule set of one game (rules.md §1, §3). Immutable; build with
    :func:`kosti.engine.presets.get_preset` or :meth:`from_dict`.

    ``name`` / ``description`` / ``source`` identify a preset (rules.md §4, source article ID of
    §0.1). ``dice_count``: 5 (1000) or 6 (Farkle, 10000). ``target``: points to win (1000 / 10000).
    ``scoring``: the scoring table and its switches (:class:`ScoringRules`).
    ``first_throw_retry`` (§1.7.1): one second attempt when the first throw of a turn scores nothing.
    ``confirm_below_minimum`` (§1.4, §6.5d; ``confirm_and_bank`` only): a confirmed turn below what
    the player may record now (admission 75, the 850 barrel's 150, a pit exit) records nothing and
    the turn passes (``lose``, RU-B, rules.md 1.1) or counts as an ordinary throw and the turn goes
    on (``continue``, rules.md 1.0).
    ``hot_dice_win`` (§1.4, §3.13 step 4, §6.4): whether hot dice that reach the winning total win
    at once — only under an ``exact`` ending, where a further throw could only overshoot
    (``exact_only``, RU-A/RU-D/ID-A "this throw must be made", rules.md 1.1), or under any ending
    (``any_ending``, rules.md 1.0).
    ``toxic_twos`` (F2): four or more 2s in one throw wipe the turn.
    ``high_stakes`` (F2): start from the previous player's unused dice for a bonus.
    ``team_play`` (F2): partners' scores are added for the win.
    Not implemented (rules.md leaves them undefined or cosmetic): ``copy_previous`` (F5), stakes
    settlement (``settlement`` is informational only).
    """

    name: str = "custom"
    description: str = ""
    source: str = ""
    dice_count: int = 5
    target: int = 1000
    scoring: ScoringRules = field(default_factory=ScoringRules)
    selection: Selection = Selection()  # noqa: RUF009 - frozen, safe to share
    hot_dice: Literal["must_roll", "confirm_and_bank", "may_roll_or_bank"] = "must_roll"
    confirm_below_minimum: Literal["lose", "continue"] = "lose"
    hot_dice_win: Literal["exact_only", "any_ending"] = "exact_only"
    first_throw_retry: bool = False
    opening: Opening = Opening(threshold=0)  # noqa: RUF009 - frozen, safe to share
    negative_scores: Literal["allowed", "clamp_zero"] = "clamp_zero"
    pits: tuple[Pit, ...] = ()
    overtaking: Overtaking = Overtaking()  # noqa: RUF009 - frozen, safe to share
    dump_truck: DumpTruck = DumpTruck()  # noqa: RUF009 - frozen, safe to share
    bolts: Bolts = Bolts()  # noqa: RUF009 - frozen, safe to share
    barrel: Barrel = Barrel()  # noqa: RUF009 - frozen, safe to share
    skip_barrels: SkipBarrels = SkipBarrels()  # noqa: RUF009 - frozen, safe to share
    ending: Ending = Ending()  # noqa: RUF009 - frozen, safe to share
    final_round: Literal["none", "others_one_more_turn", "equalize_turns"] = "none"
    three_farkles: ThreeFarkles = ThreeFarkles()  # noqa: RUF009 - frozen, safe to share
    toxic_twos: bool = False
    high_stakes: HighStakes = HighStakes()  # noqa: RUF009 - frozen, safe to share
    team_play: TeamPlay = TeamPlay()  # noqa: RUF009 - frozen, safe to share
    players: Players = Players()  # noqa: RUF009 - frozen, safe to share
    first_player: Literal["highest_throw", "highest_single_die_throw", "seat_order"] = "highest_throw"
    settlement: Settlement = Settlement()  # noqa: RUF009 - frozen, safe to share

    # -- derived values ------------------------------------------------------------------------
    @property
    def unit(self) -> int:
        """The smallest point step of the game: 5 with 5 dice (single 5 = 5), 50 with 6 dice."""
        return 5 if self.dice_count == 5 else 50

    @property
    def barrel_target(self) -> int:
        """Points needed to win from the barrel (``barrel.target`` or the game ``target``)."""
        return self.barrel.target if self.barrel.target is not None else self.target

    def pit_of(self, score: int) -> Pit | None:
        """The pit containing a recorded ``score``, or None (rules.md §3.3)."""
        for pit in self.pits:
            if pit.contains(score):
                return pit
        return None

    @property
    def seat_is_state(self) -> bool:
        """True where sitting on the barrel is a state of the player rather than a range of
        scores: a ``points`` / ``final_range`` barrel with ``seat_score: entry`` (rules.md 1.1
        §3.6.2). The seat is then ``PlayerState.seated``; elsewhere :meth:`on_barrel` decides."""
        return self.barrel.kind in ("points", "final_range") and self.barrel.seat_score == "entry"

    def above_entry(self, score: int) -> bool:
        """True if a recorded ``score`` (points) is past the barrel entry (``points``: > 880,
        ``entry_strict``; ``final_range`` / ``capped``: ≥ entry)."""
        b = self.barrel
        return score > b.entry if b.entry_strict and b.kind != "capped" else score >= b.entry

    def on_barrel(self, score: int) -> bool:
        """True if a recorded ``score`` lies in a seat-type barrel's range (``points``: > entry;
        ``capped``: ≥ entry; ``final_range``: entry ≤ score < target). Always False for ``none`` and
        ``open`` (no seat). Where :attr:`seat_is_state` the seat is the player's state instead:
        ask :meth:`kosti.engine.GameState.on_barrel`."""
        b = self.barrel
        kind = b.kind
        if kind == "none" or kind == "open":
            return False
        above = score > b.entry if b.entry_strict else score >= b.entry
        if kind == "capped":
            return score >= b.entry and score < self.barrel_target
        return above and score < self.barrel_target

    def wins(self, total: int) -> bool:
        """True if a total (points) meets the ending condition (``ending.mode`` vs ``target``)."""
        mode = self.ending.mode
        if mode == "at_least":
            return total >= self.target
        if mode == "strictly_above":
            return total > self.target
        return total == self.target

    def overshoots(self, total: int) -> bool:
        """True if a total passes the target where exactness is required (exact ending)."""
        return self.ending.mode == "exact" and total > self.target

    # -- (de)serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every parameter (names as rules.md §3–4)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if f.name == "scoring" else _plain(value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Build and validate rules from a dict as produced by :meth:`to_dict` (missing keys take
        the defaults). Raises :class:`BadInput` naming the offending parameter."""
        rules: Rules = _build(cls, data, "")
        rules.validate()
        return rules

    def replace(self, **changes: Any) -> Rules:
        """A copy with top-level fields replaced (``dataclasses.replace``), validated."""
        rules = dataclasses.replace(self, **changes)
        rules.validate()
        return rules

    def validate(self) -> None:
        """Check cross-parameter consistency; raises :class:`BadInput` naming the parameter."""
        if self.dice_count not in (5, 6):
            raise BadInput(f"dice_count: must be 5 or 6, got {self.dice_count}")
        sc_dice = getattr(self.scoring, "dice_count", None)
        if sc_dice is not None and sc_dice != self.dice_count:
            raise BadInput(f"dice_count: {self.dice_count} does not match the scoring table "
                           f"({sc_dice} dice)")
        if self.target <= 0:
            raise BadInput(f"target: must be positive, got {self.target}")
        if not self.opening.in_one_turn:
            raise BadInput("opening.in_one_turn: false is not supported (every source requires the "
                           "threshold in one turn, rules.md §3.1)")
        if self.opening.threshold < 0:
            raise BadInput(f"opening.threshold: must be >= 0, got {self.opening.threshold}")
        fp = self.opening.failure_penalty
        if fp is not None and (fp.every < 1 or fp.amount < 0):
            raise BadInput("opening.failure_penalty: needs every >= 1 and amount >= 0")
        for i, pit in enumerate(self.pits):
            if pit.lo >= pit.hi:
                raise BadInput(f"pits[{i}]: lo ({pit.lo}) must be below hi ({pit.hi})")
        for i, (lo, hi) in enumerate(self.skip_barrels.zones):
            if lo > hi:
                raise BadInput(f"skip_barrels.zones[{i}]: lo ({lo}) must not exceed hi ({hi})")
        for t in self.bolts.trigger:
            if t not in BOLT_TRIGGERS:
                raise BadInput(f"bolts.trigger: unknown trigger {t!r} (choose from {BOLT_TRIGGERS})")
        for e in self.bolts.exempt_when:
            if e not in BOLT_EXEMPTIONS:
                raise BadInput(f"bolts.exempt_when: unknown status {e!r} (choose from "
                               f"{BOLT_EXEMPTIONS})")
        if self.bolts.enabled and self.bolts.limit < 1:
            raise BadInput(f"bolts.limit: must be >= 1, got {self.bolts.limit}")
        b = self.barrel
        if b.attempts is not None and b.attempts < 1:
            raise BadInput(f"barrel.attempts: must be >= 1 or null (unlimited), got {b.attempts}")
        if b.max_falls is not None and b.max_falls < 1:
            raise BadInput(f"barrel.max_falls: must be >= 1 or null (unlimited), got {b.max_falls}")
        if b.kind != "none" and b.kind != "open" and b.entry >= self.barrel_target:
            raise BadInput(f"barrel.entry: {b.entry} must be below the target {self.barrel_target}")
        if b.kind == "open":
            if self.ending.mode != "exact":
                raise BadInput("barrel.kind: 'open' needs ending.mode 'exact' (rules.md §3.6.3)")
            if b.dots_limit < 1:
                raise BadInput(f"barrel.dots_limit: must be >= 1, got {b.dots_limit}")
        if self.ending.overshoot_effect == "dot" and b.kind != "open":
            raise BadInput("ending.overshoot_effect: 'dot' needs barrel.kind 'open'")
        if b.kind in ("points", "capped", "final_range") and self.ending.mode == "exact":
            raise BadInput(f"ending.mode: 'exact' cannot be combined with barrel.kind {b.kind!r}")
        if b.knockoff_effect == "to_admission_score" and b.kind != "capped":
            raise BadInput("barrel.knockoff_effect: 'to_admission_score' needs barrel.kind 'capped'")
        if b.attempts_are_bolts and not self.bolts.enabled:
            raise BadInput("barrel.attempts_are_bolts: needs bolts.enabled")
        if self.skip_barrels.mode not in SKIP_MODES:
            raise BadInput(f"skip_barrels.mode: unknown {self.skip_barrels.mode!r}")
        steps = [p.at for p in self.ending.overshoot_penalties]
        if steps != sorted(set(steps)) or any(s < 1 for s in steps):
            raise BadInput("ending.overshoot_penalties: 'at' counts must be increasing and >= 1")
        if self.players.min < 1 or self.players.max < self.players.min:
            raise BadInput(f"players: need 1 <= min <= max, got {self.players.min}..{self.players.max}")
        if self.team_play.enabled:
            if self.team_play.size < 2:
                raise BadInput(f"team_play.size: must be >= 2, got {self.team_play.size}")
            if b.kind != "none" or self.ending.mode != "at_least":
                raise BadInput("team_play.enabled: needs barrel.kind 'none' and ending.mode "
                               "'at_least' (a team wins on its summed score)")
        if self.three_farkles.enabled and self.three_farkles.count < 1:
            raise BadInput("three_farkles.count: must be >= 1")


#: The rule parameters added by rules.md 1.1 with the values that reproduce version 1.0 (the
#: engine's behaviour before them). A rule dict saved before 1.1 lacks these keys; filling them
#: with these values (:func:`rules_1_0`) resolves its rules exactly as they were saved.
RULES_1_0_VALUES: dict[str, Any] = {
    "confirm_below_minimum": "continue",
    "hot_dice_win": "any_ending",
    "barrel": {"seat_score": "actual"},
    "skip_barrels": {"upper": "inclusive", "trigger": "turn_end"},
}


def rules_1_0(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a full rule dict saved before rules.md 1.1 (``Rules.to_dict()`` of that time)
    with every 1.1 parameter it lacks set to its 1.0 value (:data:`RULES_1_0_VALUES`); keys it has
    are kept. ``barrel.direct_win_from_below`` was always saved, so it needs no filling."""
    out = dict(data)
    for key, value in RULES_1_0_VALUES.items():
        if isinstance(value, dict):
            sub = out.get(key)
            if isinstance(sub, dict):
                out[key] = {**value, **sub}
        else:
            out.setdefault(key, value)
    return out

