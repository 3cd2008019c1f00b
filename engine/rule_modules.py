"""The house-rule modules of rules.md §1 and §3 as parameter dataclasses, and their choices.

One frozen dataclass per module (opening, pits, overtaking, dump truck, bolts, barrel, skip-turn
barrels, ending, Farkle's modules, players); :class:`kosti.engine.rules.Rules` holds one of each.
Parameter names and defaults follow rules.md (the "Default" column of §3: all modules off). The
``*_CHOICES``-style tuples below list the allowed values of each string parameter, for the
validation of :mod:`kosti.engine.rules_dict` and for ``kosti rules --json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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

