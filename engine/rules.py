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
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .errors import BadInput
from .scoring import ScoringRules

# ----------------------------------------------------------------------------------------------
# Choices (rules.md names). Used both for validation and for documentation (kosti rules --json).

SET_ASIDE = ("all_scoring", "at_least_one")  # §1.3
HOT_DICE = ("must_roll", "confirm_and_bank", "may_roll_or_bank")  # §1.4
PIT_EXIT = ("at_or_above", "strictly_above")  # §3.3
DUMP_TRIGGER = ("recorded", "running")  # §3.5
BOLT_TRIGGERS = ("zero_turn", "zero_first_throw", "failed_opening")  # §3.2
BOLT_EXEMPTIONS = ("not_open", "in_pit", "on_barrel")  # §3.2
BARREL_KINDS = ("none", "points", "open", "capped", "final_range")  # §3.6
KNOCKOFF_EFFECTS = ("fall", "to_admission_score", "minus_50")  # §3.6.6
SKIP_MODES = ("skip", "extra_turn", "extra_turn_minus_100")  # §3.7
SKIP_UPPER = ("exclusive", "inclusive")  # §3.7: 1.1 half-open zones; 1.0 closed zones
SKIP_TRIGGERS = ("recorded_stop", "turn_end")  # §3.7, §6.38a: 1.1 a recorded stop; 1.0 any turn
SEAT_SCORES = ("entry", "actual")  # §3.6.2, §3.6.6
CONFIRM_BELOW_MINIMUM = ("lose", "continue")  # §1.4, §6.5d
HOT_DICE_WIN = ("exact_only", "any_ending")  # §1.4, §3.13 step 4, §6.4
ENDING_MODES = ("at_least", "strictly_above", "exact")  # §3.8
OVERSHOOT_EFFECTS = ("void_turn", "dot", "transfer_to_lowest")  # §3.8
FINAL_ROUNDS = ("none", "others_one_more_turn", "equalize_turns")  # §3.8
NEGATIVE_SCORES = ("allowed", "clamp_zero")  # §3.9
FIRST_PLAYER = ("highest_throw", "highest_single_die_throw", "seat_order")  # §1.1

#: Largest magnitude of an integer rule parameter: every value in rules.md §3–4 and games.md is below 10^5
#: (targets 1000–20000, penalties, thresholds); 10^6 leaves room for house rules and refuses nonsense.
MAX_PARAMETER = 1_000_000


@dataclass(frozen=True, slots=True)
class Selection:
    """Which dice must be set aside after a scoring throw (rules.md §1.3).

    ``set_aside``: ``all_scoring`` (RU-A, RU-E, ID-A: every die of the best grouping is set aside,
    no choice) or ``at_least_one`` (RU-B, RU-C, F1–F6: the player keeps any legal non-empty subset).
    """

    set_aside: Literal["all_scoring", "at_least_one"] = "all_scoring"


@dataclass(frozen=True, slots=True)
class FailurePenalty:
    """Opening-failure penalty (RU-A, rules.md §3.1, §6.27): every ``every``-th failed opening turn
    costs ``amount`` points (a bolt = 100, a half-bolt = 50); the score may go negative."""

    every: int = 3
    amount: int = 100


@dataclass(frozen=True, slots=True)
class Opening:
    """Opening / entry threshold ("открыть игру", "допуск", "вход"), rules.md §3.1.

    ``threshold`` (points, 0 = module off) must be reached by the turn points of one turn before the
    first stop; ``failure_penalty`` (RU-A option) fines repeated failed opening turns;
    ``reopen_after_reset`` — after a dump truck / fall to 0 the player must open again (false in
    every source); ``first_throw_only`` — F3's literal reading: the first throw of the turn alone
    must reach the threshold.
    """

    threshold: int = 50
    in_one_turn: bool = True
    failure_penalty: FailurePenalty | None = None
    reopen_after_reset: bool = False
    first_throw_only: bool = False


@dataclass(frozen=True, slots=True)
class Pit:
    """A pit / one-jump zone ("яма"), rules.md §3.3: recorded scores in [lo, hi) (``at_or_above``,
    RU-A, ID-A: reaching ``hi`` exits) or [lo, hi] (``strictly_above``, RU-D: ``hi`` itself is still
    inside). A player whose score is inside must leave it in one turn."""

    lo: int
    hi: int
    exit: Literal["at_or_above", "strictly_above"] = "at_or_above"
    lo_inclusive: bool = True

    def contains(self, score: int) -> bool:
        """True if a recorded ``score`` (points) lies inside the pit."""
        above_lo = score >= self.lo if self.lo_inclusive else score > self.lo
        below_hi = score < self.hi if self.exit == "at_or_above" else score <= self.hi
        return above_lo and below_hi

    def exit_value(self, unit: int) -> int:
        """The smallest running total (points) that leaves the pit; ``unit`` = the game's point step
        (5 in 1000, 50 in Farkle), used for ``strictly_above`` (RU-D: 330 in 300–400 needs 405)."""
        return self.hi if self.exit == "at_or_above" else self.hi + unit


@dataclass(frozen=True, slots=True)
class Overtaking:
    """Overtaking ("обгон"), rules.md §3.4: passing an opponent's score (strictly lower before,
    strictly higher after) fines that opponent ``penalty`` points (RU-A, ID-D 50; RU-D 55)."""

    enabled: bool = False
    penalty: int = 50


@dataclass(frozen=True, slots=True)
class DumpTruck:
    """Dump truck ("самосвал"), rules.md §3.5: a score of exactly ``value`` (555) drops to 0.

    ``trigger``: ``recorded`` (RU-A literal: only a recorded score) or ``running`` (RU-D, ID-A,
    ID-D: also the running total mid-turn, ending the turn at once). ``via_penalties``: a score
    reached through fines or bolt penalties also dumps (RU-A)."""

    enabled: bool = False
    value: int = 555
    trigger: Literal["recorded", "running"] = "running"
    via_penalties: bool = True
    reopen_required: bool = False


@dataclass(frozen=True, slots=True)
class Bolts:
    """Bolts ("болт"), rules.md §3.2: each zero turn (or other trigger) adds a bolt; at ``limit``
    bolts the player loses ``penalty`` points and the counter resets.

    ``trigger``: any of ``zero_turn`` (a turn that records nothing), ``zero_first_throw`` (the first
    throw of the turn scores nothing), ``failed_opening`` (a turn that fails to open). At most one
    bolt per turn. ``exempt_when``: statuses (at the start of the turn) that give no bolt:
    ``not_open``, ``in_pit``, ``on_barrel``."""

    enabled: bool = False
    trigger: tuple[str, ...] = ("zero_turn",)
    limit: int = 3
    penalty: int = 100
    exempt_when: tuple[str, ...] = ("not_open", "in_pit", "on_barrel")
    reset_after_penalty: bool = True
    consecutive_only: bool = False


@dataclass(frozen=True, slots=True)
class Barrel:
    """Barrel ("бочка"), rules.md §3.6 — one of several incompatible kinds.

    * ``none`` — no barrel (RU-A "game without barrels").
    * ``points`` — seat above ``entry`` (880, strict); win only in one turn from the seat;
      ``attempts`` own turns, then a fall (−``fall_penalty``); the ``max_falls``-th fall → 0;
      a player climbing on knocks the sitter off (RU-A).
    * ``open`` — no seat; exact ``target``; overshoot → a dot; ``dots_limit`` dots → −``dot_penalty``
      and a fall; the ``max_falls``-th → 0 (RU-A open barrel).
    * ``capped`` — the 850 barrel: a turn ending above ``entry`` is recorded as ``entry``; from there
      ≥ target − entry in one turn wins; no attempt limit; a climber knocks the sitter back to his
      admission score (RU-B).
    * ``final_range`` — a zone [entry, target) that must be left by winning in one turn (ID-A box
      track, RU-D, ID-D).

    ``target`` None = the game's ``target``. ``attempts`` / ``max_falls`` None = unlimited.
    ``knockoff_effect``: ``fall`` (counts as a fall), ``to_admission_score`` (RU-B), ``minus_50``
    (ID-D push-off: −``push_off_penalty``). ``attempts_are_bolts`` (ID-D): a failed barrel turn is
    only a bolt and the third bolt's penalty is the fall (no separate attempt counter).

    Seat-type barrels ``points`` / ``final_range`` (rules.md 1.1, §3.6.2, §3.6.6, §6.28):

    * ``seat_score``: ``entry`` (RU-A, default) — a turn that ends above the entry, also one that
      would reach the target from below, records exactly ``entry`` and *seats* the player (a state
      of the player, not a range of scores: a player who records exactly 880 from below is not
      seated); ``actual`` (rules.md 1.0, ``final_range`` presets) — the real score stays and the
      seat is derived from it.
    * ``direct_win_from_below``: false (RU-A "first sit, then win", default) — a turn from below
      the seat never wins; true (rules.md 1.0; ``final_range``) — it may win directly.
    ``capped`` always records ``entry`` and never lets a player win from below (§6.34a)."""

    kind: Literal["none", "points", "open", "capped", "final_range"] = "none"
    entry: int = 880
    entry_strict: bool = True
    target: int | None = None
    attempts: int | None = 3
    fall_penalty: int = 100
    max_falls: int | None = 3
    knockoff: bool = True
    knockoff_effect: Literal["fall", "to_admission_score", "minus_50"] = "fall"
    push_off_penalty: int = 50
    dots_limit: int = 6
    dot_penalty: int = 100
    direct_win_from_below: bool = False
    attempts_are_bolts: bool = False
    seat_score: Literal["entry", "actual"] = "entry"


@dataclass(frozen=True, slots=True)
class SkipBarrels:
    """Skip-turn barrels of RU-C (rules.md 1.1 §3.7, §6.38): a player who *records* a score
    inside one of ``zones`` ([lo, hi) pairs; empty = module off) skips his next turn (``skip``), or
    gets an immediate extra turn that must take him off the barrel (``extra_turn``;
    ``extra_turn_minus_100`` also costs ``penalty`` points when it fails).

    ``upper``: ``exclusive`` (1.1, RU-C's 295 + 70 + 35 = 400 leaves the barrel: lo ≤ score < hi)
    or ``inclusive`` (rules.md 1.0: lo ≤ score ≤ hi). ``trigger``: ``recorded_stop`` (1.1, RU-C
    "the more often you *stop* on it, the more turns you lose": only a turn that records a score
    inside) or ``turn_end`` (1.0: any turn that ends with the score inside, a zero turn too)."""

    zones: tuple[tuple[int, int], ...] = ()
    mode: Literal["skip", "extra_turn", "extra_turn_minus_100"] = "skip"
    penalty: int = 100
    upper: Literal["exclusive", "inclusive"] = "exclusive"
    trigger: Literal["recorded_stop", "turn_end"] = "recorded_stop"

    def zone_of(self, score: int) -> int | None:
        """Index of the zone containing a recorded ``score`` (points), or None (``upper`` decides
        whether ``hi`` itself is inside)."""
        inclusive = self.upper == "inclusive"
        for i, (lo, hi) in enumerate(self.zones):
            if lo <= score < hi or (inclusive and score == hi):
                return i
        return None


@dataclass(frozen=True, slots=True)
class OvershootPenalty:
    """One step of the RU-D overshoot penalty ladder: at the ``at``-th overshoot lose ``penalty``
    points, or drop to 0 when ``to_zero`` (rules.md §3.8, §6.36: 5 → −100, 10 → 0, then reset)."""

    at: int
    penalty: int = 0
    to_zero: bool = False


@dataclass(frozen=True, slots=True)
class Ending:
    """How the game ends (rules.md §3.8).

    ``mode``: ``at_least`` (score ≥ target wins), ``strictly_above`` (> target; stopping on the
    target itself is not allowed), ``exact`` (exactly the target). ``overshoot_effect`` in exact mode:
    ``void_turn`` (turn lost, RU-C, RU-D), ``dot`` (open barrel), ``transfer_to_lowest`` (F2 welfare).
    ``overshoot_immediate``: decided as soon as the running total passes the target.
    ``overshoot_penalties``: RU-D's ladder (the counter resets after the last step)."""

    mode: Literal["at_least", "strictly_above", "exact"] = "at_least"
    overshoot_effect: Literal["void_turn", "dot", "transfer_to_lowest"] = "void_turn"
    overshoot_immediate: bool = True
    overshoot_penalties: tuple[OvershootPenalty, ...] = ()


@dataclass(frozen=True, slots=True)
class ThreeFarkles:
    """Farkle: ``count`` busts in a row cost ``penalty`` points (F4 base −1000, F2/F5 variant;
    rules.md §3.11). The counter resets after the penalty and after any scoring turn."""

    enabled: bool = False
    count: int = 3
    penalty: int = 1000


@dataclass(frozen=True, slots=True)
class HighStakes:
    """Farkle "High stakes" / "Greed" (F2 variant, rules.md §3.11, §6.42): the next player may
    start his turn by throwing the dice the previous player left unused when he stopped; if any of
    them score on that first throw he gets ``bonus`` points (1000) on top of his own turn points,
    otherwise it is a Farkle."""

    enabled: bool = False
    bonus: int = 1000


@dataclass(frozen=True, slots=True)
class TeamPlay:
    """Team Farkle (F2 variant, rules.md §3.11): partners sit opposite — with n players and teams
    of ``size``, seats i, i + n/size, … form one team; a team's score is the sum of its members'
    scores, the team reaching the target wins (usually played to 20000)."""

    enabled: bool = False
    size: int = 2


@dataclass(frozen=True, slots=True)
class Players:
    """Number of players (rules.md §1.1, §3.12): ``min``..``max`` (a 1-player training game is
    allowed, RU-E); ``recommended`` is informational (F2: "3-8")."""

    min: int = 1
    max: int = 8
    recommended: str | None = None


@dataclass(frozen=True, slots=True)
class Settlement:
    """ID-A money rule (§3.1): a loser who never opened pays a double stake. Informational only."""

    double_if_never_opened: bool = False


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
    selection: Selection = Selection()
    hot_dice: Literal["must_roll", "confirm_and_bank", "may_roll_or_bank"] = "must_roll"
    confirm_below_minimum: Literal["lose", "continue"] = "lose"
    hot_dice_win: Literal["exact_only", "any_ending"] = "exact_only"
    first_throw_retry: bool = False
    opening: Opening = Opening(threshold=0)
    negative_scores: Literal["allowed", "clamp_zero"] = "clamp_zero"
    pits: tuple[Pit, ...] = ()
    overtaking: Overtaking = Overtaking()
    dump_truck: DumpTruck = DumpTruck()
    bolts: Bolts = Bolts()
    barrel: Barrel = Barrel()
    skip_barrels: SkipBarrels = SkipBarrels()
    ending: Ending = Ending()
    final_round: Literal["none", "others_one_more_turn", "equalize_turns"] = "none"
    three_farkles: ThreeFarkles = ThreeFarkles()
    toxic_twos: bool = False
    high_stakes: HighStakes = HighStakes()
    team_play: TeamPlay = TeamPlay()
    players: Players = Players()
    first_player: Literal["highest_throw", "highest_single_die_throw", "seat_order"] = "highest_throw"
    settlement: Settlement = Settlement()

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
        rules = _build(cls, data, "")
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


# ----------------------------------------------------------------------------------------------
# Generic dataclass <-> dict with strict validation.

_CHOICES: dict[str, tuple[str, ...]] = {
    "selection.set_aside": SET_ASIDE,
    "hot_dice": HOT_DICE,
    "pits.exit": PIT_EXIT,
    "dump_truck.trigger": DUMP_TRIGGER,
    "barrel.kind": BARREL_KINDS,
    "barrel.knockoff_effect": KNOCKOFF_EFFECTS,
    "skip_barrels.mode": SKIP_MODES,
    "skip_barrels.upper": SKIP_UPPER,
    "skip_barrels.trigger": SKIP_TRIGGERS,
    "barrel.seat_score": SEAT_SCORES,
    "confirm_below_minimum": CONFIRM_BELOW_MINIMUM,
    "hot_dice_win": HOT_DICE_WIN,
    "ending.mode": ENDING_MODES,
    "ending.overshoot_effect": OVERSHOOT_EFFECTS,
    "final_round": FINAL_ROUNDS,
    "negative_scores": NEGATIVE_SCORES,
    "first_player": FIRST_PLAYER,
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, path: str) -> Any:
    """Convert ``value`` to the annotated type ``tp`` or raise BadInput naming ``path``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value == "unlimited" and type(None) in args and int in args:
            value = None  # rules.md writes "attempts: unlimited", "max_falls: unlimited"
        if value == "none" and type(None) in args and any(dataclasses.is_dataclass(a) for a in args):
            value = None  # "failure_penalty: none"
        if value is None:
            if type(None) in args:
                return None
            raise BadInput(f"{path}: may not be null")
        non_none = [a for a in args if a is not type(None)]
        errors = []
        for a in non_none:
            try:
                return _convert(a, value, path)
            except BadInput as exc:
                errors.append(str(exc))
        raise BadInput(errors[0] if errors else f"{path}: bad value {value!r}")
    if origin is Literal:
        if value not in args:
            raise BadInput(f"{path}: {value!r} is not one of {', '.join(map(str, args))}")
        return value
    if origin is tuple:
        if isinstance(value, str) and args and args[0] is str:
            value = [value]  # "trigger": "zero_turn" is accepted for ["zero_turn"]
        if not isinstance(value, (list, tuple)):
            raise BadInput(f"{path}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise BadInput(f"{path}: expected {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if tp is ScoringRules:
        if isinstance(value, ScoringRules):
            return value
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected an object, got {value!r}")
        try:
            return ScoringRules.from_dict(value)
        except BadInput:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            raise BadInput(f"{path}: {exc}") from None
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        value = _shorthand(tp, value)
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected an object, got {value!r}")
        return _build(tp, value, path + ".")
    if tp is bool:
        if not isinstance(value, bool):
            raise BadInput(f"{path}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if not (isinstance(value, float) and value.is_integer()):
                raise BadInput(f"{path}: expected an integer, got {value!r}")
            value = int(value)
        if abs(value) > MAX_PARAMETER:  # a target of 1e308 was accepted and made every total meaningless
            raise BadInput(f"{path}: {value:.3g} is out of range (at most {MAX_PARAMETER:,} either way)")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise BadInput(f"{path}: expected a string, got {value!r}")
        choices = _CHOICES.get(_choice_key(path))
        if choices is not None and value not in choices:
            raise BadInput(f"{path}: {value!r} is not one of {', '.join(choices)}")
        return value
    raise BadInput(f"{path}: unsupported parameter type {_type_name(tp)}")  # pragma: no cover


def _shorthand(tp: type, value: Any) -> Any:
    """Short forms as rules.md prose writes them: a pit ``[lo, hi]`` or ``[lo, hi, exit]``;
    ``"barrel": "none"`` (the kind); ``"opening": 75`` (the threshold); ``"bolts": true`` /
    ``"three_farkles": -1000`` / ``"overtaking": 55`` (enabled, with that penalty)."""
    names = {f.name for f in fields(tp)}
    if tp is Pit and isinstance(value, (list, tuple)) and 2 <= len(value) <= 3:
        return dict(zip(("lo", "hi", "exit"), value))
    if isinstance(value, str) and "kind" in names:
        return {"kind": value}
    if isinstance(value, bool) and "enabled" in names:
        return {"enabled": value}
    if isinstance(value, int) and not isinstance(value, bool):
        if "threshold" in names:
            return {"threshold": value}
        if "enabled" in names and "penalty" in names:
            return {"enabled": True, "penalty": abs(value)}
    return value


def _choice_key(path: str) -> str:
    import re

    return re.sub(r"\[\d+\]", "", path)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    h = _HINTS.get(cls)
    if h is None:
        h = typing.get_type_hints(cls)
        _HINTS[cls] = h
    return h


def _build(cls: type, data: dict[str, Any], prefix: str) -> Any:
    if not isinstance(data, dict):
        raise BadInput(f"{prefix.rstrip('.') or 'rules'}: expected an object, got {data!r}")
    hints = _hints(cls)
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise BadInput(f"{prefix}{unknown[0]}: unknown rule parameter (known here: "
                       f"{', '.join(sorted(names))})")
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _convert(hints[name], value, prefix + name)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise BadInput(f"{prefix.rstrip('.') or 'rules'}: {exc}") from None
