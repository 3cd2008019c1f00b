"""The engine's named values as enums: event kinds, game phases, turn outcomes.

Each enum is an :class:`enum.StrEnum`: a member *is* its string (``EventKind.BUST == "bust"``,
``json.dumps(EventKind.BUST) == '"bust"'``, ``f"{Phase.ROLL}" == "roll"``), so saved games, the
``kosti replay`` JSON and every string comparison elsewhere stay byte for byte what they were.
"""

from __future__ import annotations

from enum import StrEnum
from types import SimpleNamespace

__all__ = ["EventKind", "Kinds", "Outcomes", "Phase", "TurnOutcome"]


class EventKind(StrEnum):
    """What an :class:`~kosti.engine.game.Event` of the 1000 / Farkle engine reports (rules.md
    §1, §3). The table games of games.md (:mod:`kosti.engine.games`) add kinds of their own."""

    THROW = "throw"                #: a throw and its best value (§1.2)
    KEEP = "keep"                  #: dice set aside from a pending throw (§1.3)
    BUST = "bust"                  #: a zero throw or a turn that ends with nothing (§1.5)
    RETRY = "retry"                #: second attempt after a zero first throw (§1.7.1)
    HOT_DICE = "hot_dice"          #: all dice scored (§1.4)
    CONFIRMATION = "confirmation"  #: the confirmation throw's verdict (§1.4, §6.5)
    BANK = "bank"                  #: turn points recorded (§1.6)
    OPENED = "opened"              #: opening threshold passed (§3.1)
    CAPPED = "capped"              #: a score recorded as the barrel entry (§3.6)
    DUMP_TRUCK = "dump_truck"      #: exactly 555: score 0 (§3.5)
    OVERSHOOT = "overshoot"        #: past an exact target (§3.8)
    DOT = "dot"                    #: open-barrel overshoot (§3.6.3)
    TRANSFER = "transfer"          #: overshoot points given to the lowest (F2, §3.8)
    FALL = "fall"                  #: off the barrel (§3.6)
    KNOCKED_OFF = "knocked_off"    #: a sitter pushed off by a climber (§3.6.6)
    OVERTAKEN = "overtaken"        #: overtaking fine (§3.4)
    BOLT = "bolt"                  #: a bolt (§3.2)
    BOLT_PENALTY = "bolt_penalty"  #: the bolt limit's fine (§3.2, §3.1)
    THREE_FARKLES = "three_farkles"  #: busts in a row fined (§3.11)
    TOXIC_TWOS = "toxic_twos"      #: four 2s wipe the turn (F2, §3.11)
    SKIP_TURN = "skip_turn"        #: a turn skipped or to be skipped (§3.7)
    EXTRA_TURN = "extra_turn"      #: an extra turn from a skip barrel (§3.7)
    BARREL = "barrel"              #: onto the barrel / a failed barrel attempt (§3.6)
    PIT = "pit"                    #: into a pit (§3.3)
    INSTANT_WIN = "instant_win"    #: a throw that wins at once (§3.10)
    FINAL_ROUND = "final_round"    #: the final round starts (§3.8)
    WIN = "win"                    #: the game is won
    TURN = "turn"                  #: who throws next
    HIGH_STAKES = "high_stakes"    #: the high-stakes bonus (F2, §3.11)


class Phase(StrEnum):
    """:attr:`~kosti.engine.game.GameState.phase`: what the game waits for."""

    ROLL = "roll"  #: a throw (or a stop)
    KEEP = "keep"  #: the keep of a pending throw (``selection.set_aside: at_least_one``, §1.3)
    OVER = "over"  #: nothing: the game has ended


class TurnOutcome(StrEnum):
    """How a turn ended (rules.md §3.13), carried by the one event of an action that ends a turn
    (:attr:`~kosti.engine.game.Event.outcome`), so that no consumer infers it from event kinds."""

    BANK = "bank"                #: the turn points were recorded (a stop, a confirmed turn, a win)
    BUST = "bust"                #: a zero turn: nothing recorded (bust, toxic twos, a failed opening)
    DUMP = "dump"                #: the running total hit the dump truck: score 0 (§3.5)
    OVERSHOOT = "overshoot"      #: past an exact target: void / dot / transfer (§3.8)
    INSTANT_WIN = "instant_win"  #: a throw that wins the game at once (§3.10)


#: The members of :class:`EventKind` / :class:`TurnOutcome` as plain attributes (``Kinds.THROW is
#: EventKind.THROW``) for the rule modules' hot paths: reading a member off an enum class costs
#: about 0.2 µs in Python 3.11, off a namespace a tenth of that.
Kinds = SimpleNamespace(**EventKind.__members__)
Outcomes = SimpleNamespace(**TurnOutcome.__members__)
