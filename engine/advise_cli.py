"""``kosti advise [--rules PRESET] [--dice N] [--json] [GAME.json]`` — advice for the player to move.

Contract (``../shared/docs/cli.md``): with ``GAME.json`` (the ``kosti replay`` input, or a
``kosti play --save`` file) the state is the end of that game; with ``--dice N`` alone it is a fresh
turn of an open player with N dice to throw. ``--json`` prints exactly one JSON document::

    {"player": "Ann", "dice_to_throw": 5, "turn_points": 0, "bust_probability": 0.0772,
     "expected_points": 28.29, "may_stop": false, "advice": "throw", "stop_value": null,
     "throw_value": 36.7, "why": "...", "why_ru": "..."}

exactly these keys (:data:`kosti.engine.advisor.CLI_KEYS`); the human output adds the chance to
meet the player's requirement and the objective (the dashboard's ``/api/advice`` carries every
field of :class:`kosti.engine.advisor.Advice`). Exit 2 with a one-line reason for bad input: an unreadable
or malformed file, an unknown preset, ``--dice`` outside 1..dice of the game or different from the
dice the state asks for, a game that is over or that stops at an event the rules forbid.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .advisor import advise
from .errors import BadInput
from .game import GameState, TurnState, new_game, replace
from .presets import resolve_rules

#: The objective the advice maximises, named in every JSON document (engine/advisor.py).
OBJECTIVE = "turn: expected recorded points of this turn (net of the opponents' mean change)"


def add_advise_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``kosti advise``."""
    p = subparsers.add_parser(
        "advise", help="throw or stop: the risk of the next throw and the best play this turn",
        description="Advice for the player to move: the exact chance that the next throw scores "
                    "nothing, the points it adds on average, and whether to throw or stop "
                    "(turn-level optimal play under the house rules). Exit 2: bad input.")
    p.add_argument("--rules", default=None, metavar="PRESET",
                   help="rule preset (kosti rules lists them; default: classic, or the game's)")
    p.add_argument("--dice", type=int, default=None, metavar="N",
                   help="dice to throw (alone: a fresh turn of an open player with N dice)")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("game", nargs="?", metavar="GAME.json",
                   help="a recorded game (kosti replay input): advice at its end")
    p.set_defaults(func=run_advise)
    return p


def fresh_turn(rules: Any, dice: int | None) -> GameState:
    """A fresh turn of an open player ("Player", against one open "Opponent", both at 0) with
    ``dice`` dice to throw (default: all). Fewer dice than the game has means the turn has set
    dice aside worth 0 points so far. Raises :class:`BadInput` for ``dice`` outside 1..dice."""
    r = resolve_rules(rules)
    n = r.dice_count if dice is None else dice
    if not 1 <= n <= r.dice_count:
        raise BadInput(f"--dice: {r.name} is played with 1 to {r.dice_count} dice, got {n}")
    st = new_game(r, ["Player", "Opponent"],
                  state={"Player": {"opened": True}, "Opponent": {"opened": True}})
    if n != r.dice_count:
        st = replace(st, turn=TurnState(player=0, dice=n, throws=1, scored=True))
    return st


def advice_state(args: argparse.Namespace) -> GameState:
    """The state to advise on, from the command-line arguments. Raises :class:`BadInput`."""
    if args.game is None:
        return fresh_turn(args.rules or "classic", args.dice)
    from .cli import _read_json, replay

    doc = _read_json(args.game)
    if args.rules is not None and isinstance(doc, dict) and "format" not in doc:
        given = doc.get("rules")
        if given is None:
            doc = {**doc, "rules": args.rules}
        elif resolve_rules(given) != resolve_rules(args.rules):
            raise BadInput(f"--rules {args.rules} differs from the rules of {args.game}")
    game, idx, err = replay(doc)
    if err is not None:
        raise BadInput(f"{args.game}: event {idx} is forbidden by the rules ({err})")
    st = getattr(game, "state", game)  # replay hosts every game; the advisor knows the 1000 family
    if not isinstance(st, GameState):
        raise BadInput(f"{args.game}: advice is for the 1000 family and Farkle/10000 presets, "
                       f"not for {getattr(game, 'game', 'this game')}")
    if st.over:
        raise BadInput(f"{args.game}: the game is over, there is no turn to advise")
    if args.dice is not None and args.dice not in st.roll_sizes():
        raise BadInput(f"--dice {args.dice}: {st.to_move} throws {st.dice_to_throw} dice now")
    return st


def run_advise(args: argparse.Namespace) -> int:
    """Handler of ``kosti advise``: exit 0, or 2 for bad input."""
    st = advice_state(args)
    a = advise(st)
    if args.json:
        sys.stdout.write(json.dumps(a.to_cli_json(), ensure_ascii=False) + "\n")
        return 0
    stop = "—" if a.stop_value is None else f"{a.stop_value:.1f}"
    print(f"{a.player}: {a.advice.upper()}  (turn {a.turn_points}, {a.dice_to_throw} dice to throw)")
    print(f"  no score on the next throw: {100 * a.bust_probability:.2f} %  ·  "
          f"points it adds on average: {a.expected_points:.1f}")
    print(f"  expected recorded points: throw {a.throw_value:.1f}, stop {stop}")
    if a.requirement is not None:
        print(f"  chance {_REQ[a.requirement]} this turn: {100 * a.record_probability:.1f} %")
    print(f"  {a.why}")
    print(f"  {a.why_ru}")
    print(f"  objective: {OBJECTIVE}")
    return 0


_REQ = {"open": "to open the game", "pit": "to leave the pit", "barrel": "to win from the barrel"}
