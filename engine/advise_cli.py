"""``kosti advise [--rules PRESET] [--dice N] [--objective turn|win] [--json] [GAME.json]`` — advice for the player to move.

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

Two objectives (``--objective``; default: the one the game has): ``turn`` — the 1000 family and
Farkle/10000, the expected recorded points of this turn (:mod:`kosti.engine.advisor`); ``win`` —
two-player Pig (``--rules pig`` or a Pig game file), the probability of winning the game under
optimal play (:mod:`kosti.engine.pig_advisor`). For ``win`` the JSON has the same eleven keys —
``stop_value`` / ``throw_value`` are then win probabilities — followed by ``"objective": "win"`` and
``"win_probability"`` (of the advised action). Exit 2 for an objective the game does not have, with
the reason (a win model of the 1000 presets would need ~10^8 states; see docs/advisor.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .advisor import advise
from .errors import BadInput
from .game import GameState, TurnState, new_game, replace
from .games import is_game_preset, new_any_game
from .pig_advisor import OBJECTIVE_WIN, PigModelRefused, advise_pig
from .presets import PRESET_NAMES, resolve_rules
from .texts import dice_en

#: The objective the advice maximises, named in every JSON document (engine/advisor.py).
OBJECTIVE = "turn: expected recorded points of this turn (net of the opponents' mean change)"


def add_advise_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``kosti advise``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "advise", help="throw or stop: the risk of the next throw and the best play this turn",
        description="Advice for the player to move: the exact chance that the next throw scores "
                    "nothing, the points it adds on average, and whether to throw or stop "
                    "(turn-level optimal play under the house rules). Exit 2: bad input.")
    p.add_argument("--rules", default=None, metavar="PRESET",
                   help="rule preset (kosti rules lists them; default: classic, or the game's)")
    p.add_argument("--dice", type=int, default=None, metavar="N",
                   help="dice to throw (alone: a fresh turn of an open player with N dice)")
    p.add_argument("--objective", choices=("turn", "win"), default=None,
                   help="turn: most points this turn (1000 family, Farkle); win: probability of "
                        "winning the game (two-player Pig). Default: the game's own")
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


#: Why the 1000 presets have no win objective (docs/advisor.md).
NO_WIN_MODEL = ("--objective win: the win probability is solved for two-player Pig only; for the "
                "1000 presets the whole-game state (both scores × turn points × dice × pit, barrel "
                "and bolt counters) runs to ~10^8 states")


def fresh_pig(rules: Any, dice: int | None) -> Any:
    """A fresh two-player Pig game ("Player" to move first against "Opponent", both at 0, after
    the order throw). Raises :class:`BadInput` for ``dice`` other than 1."""
    if dice not in (None, 1):
        raise BadInput(f"--dice: Pig is played with 1 die, got {dice}")
    spec: dict[str, Any] = dict(rules) if not isinstance(rules, str) else {"preset": rules}
    spec["overrides"] = {**(spec.get("overrides") or {}), "order_throw": False}
    return new_any_game(spec, ["Player", "Opponent"])


def advice_state(args: argparse.Namespace) -> Any:
    """The state to advise on, from the command-line arguments: a :class:`GameState` (1000
    family) or a Pig game. Raises :class:`BadInput`."""
    if args.game is None:
        if args.rules is not None and is_game_preset(args.rules):
            return fresh_pig(args.rules, args.dice) if args.rules == "pig" else _no_advice(args.rules)
        if isinstance(args.rules, str) and args.rules not in PRESET_NAMES:
            raise BadInput(f"unknown preset {args.rules!r}; the advisor knows {', '.join(PRESET_NAMES)} "
                           "and pig (two players)")
        return fresh_turn(args.rules or "classic", args.dice)
    from .cli import _read_json, replay

    doc = _read_json(args.game)
    if args.rules is not None and isinstance(doc, dict) and "format" not in doc:
        given = doc.get("rules")
        if given is None:
            doc = {**doc, "rules": args.rules}
        elif is_game_preset(given) or is_game_preset(args.rules):
            if given != args.rules and not (isinstance(given, dict)
                                            and given.get("preset") == args.rules):
                raise BadInput(f"--rules {args.rules} differs from the rules of {args.game}")
        elif resolve_rules(given) != resolve_rules(args.rules):
            raise BadInput(f"--rules {args.rules} differs from the rules of {args.game}")
    game, idx, err = replay(doc)
    if err is not None:
        raise BadInput(f"{args.game}: event {idx} is forbidden by the rules ({err})")
    st = getattr(game, "state", game)  # replay hosts every game; the advisor knows the 1000 family
    if getattr(st, "game", None) == "pig":
        if st.over:
            raise BadInput(f"{args.game}: the game is over, there is no turn to advise")
        if args.dice not in (None, 1):
            raise BadInput(f"--dice {args.dice}: Pig is played with 1 die")
        return st
    if not isinstance(st, GameState):
        _no_advice(getattr(game, "game", "this game"), args.game)
    if st.over:
        raise BadInput(f"{args.game}: the game is over, there is no turn to advise")
    if args.dice is not None and args.dice not in st.roll_sizes():
        raise BadInput(f"--dice {args.dice}: {st.to_move} throws {st.dice_to_throw} dice now")
    return st


def _no_advice(game: str, where: str | None = None) -> Any:
    """Raise the exit-2 reason for a game the advisor has no model of."""
    head = f"{where}: " if where else ""
    raise BadInput(f"{head}advice is for the 1000 family and Farkle/10000 presets (turn) and "
                   f"two-player Pig (win), not for {game}")


def run_advise(args: argparse.Namespace) -> int:
    """Handler of ``kosti advise``: exit 0, or 2 for bad input."""
    st = advice_state(args)
    if not isinstance(st, GameState):  # Pig: the win objective
        if args.objective == "turn":
            raise BadInput("--objective turn: Pig has the win objective here (--objective win)")
        return _run_pig(args, st)
    if args.objective == "win":
        raise BadInput(NO_WIN_MODEL)
    a = advise(st)
    if args.json:
        sys.stdout.write(json.dumps(a.to_cli_json(), ensure_ascii=False) + "\n")
        return 0
    stop = "—" if a.stop_value is None else f"{a.stop_value:.1f}"
    print(f"{a.player}: {a.advice.upper()}  (turn {a.turn_points}, {dice_en(a.dice_to_throw)} to throw)")
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


def _run_pig(args: argparse.Namespace, game: Any) -> int:
    """``kosti advise`` for a Pig game: the win objective. Exit 0, or 2 where the model refuses
    (more than two players, the order throw, a play-off series, a target above 200)."""
    try:
        a = advise_pig(game)
    except PigModelRefused as exc:
        raise BadInput(f"--objective win: {exc.text_en}") from None
    if args.json:
        sys.stdout.write(json.dumps(a.to_cli_json(), ensure_ascii=False) + "\n")
        return 0
    stop = "—" if a.win_if_stop is None else f"{100 * a.win_if_stop:.1f} %"
    print(f"{a.player}: {a.advice.upper()}  (series {a.series}; score {a.score} against "
          f"{a.opponent_score}, target {a.target})")
    print(f"  chance to win the game: throw {100 * a.win_if_throw:.1f} %, stop {stop}")
    print(f"  {a.why}")
    print(f"  {a.why_ru}")
    print(f"  objective: {OBJECTIVE_WIN}; solved in {a.solve_time_s:.1f} s (once per target)")
    return 0
