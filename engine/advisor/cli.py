"""``kosti advise [--rules PRESET] [--dice N] [--objective turn|win] [--json] [GAME.json]`` — advice for the player to move.

A turn in words instead of ``GAME.json`` (issue 42): ``--turn-points P`` (with ``--dice N``, the dice left),
``--score S``, ``--opponent-score S`` and, where the preset has them, ``--no-opened``, ``--pit``, ``--barrel``
(:func:`described_turn`; Pig: :func:`described_pig`) — "60 points, 2 dice, should I throw?" is
``kosti advise --turn-points 60 --dice 2``. Without them the contract's forms are unchanged.

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
optimal play (:mod:`kosti.engine.advisor.pig`). For ``win`` the JSON has the same eleven keys —
``stop_value`` / ``throw_value`` are then win probabilities — followed by ``"objective": "win"`` and
``"win_probability"`` (of the advised action). Exit 2 for an objective the game does not have, with
the reason (a win model of the 1000 presets would need ~10^8 states; see docs/advisor.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from ..errors import BadInput
from ..game import GameState, TurnState, new_game, replace
from ..games import is_game_preset, new_any_game
from ..plurals import count
from ..presets import PRESET_NAMES, resolve_rules
from ..texts import dice_en
from .advice import OBJECTIVE, advise
from .pig import OBJECTIVE_WIN, PigModelRefused, advise_pig

#: The objective the advice maximises, named in every JSON document (engine/advisor/advice.py).


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
    turn = p.add_argument_group(
        "a turn in words (instead of GAME.json)",
        "\"60 points, 2 dice, should I throw?\" is --turn-points 60 --dice 2. The player to move is "
        "\"Player\", against one \"Opponent\"; both open, at 0, unless said otherwise.")
    turn.add_argument("--turn-points", type=int, default=None, metavar="P",
                      help="points set aside this turn so far (needs --dice: the dice left to throw; "
                           "all the game's dice = hot dice)")
    turn.add_argument("--score", type=int, default=None, metavar="S",
                      help="the player's recorded score (default 0; with --pit or --barrel: the lowest "
                           "score that puts him there)")
    turn.add_argument("--opponent-score", type=int, default=None, metavar="S",
                      help="the opponent's recorded score (default 0): overtaking in 1000, the race in Pig")
    turn.add_argument("--opened", action=argparse.BooleanOptionalAction, default=None,
                      help="--no-opened: the player has not opened the game yet (score 0; presets "
                           "with an opening threshold)")
    turn.add_argument("--pit", action="store_true",
                      help="the player sits in a pit / яма (presets with pits; his score must lie in one)")
    turn.add_argument("--barrel", action="store_true",
                      help="the player sits on the barrel / бочка (presets with a barrel seat)")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("game", nargs="?", metavar="GAME.json",
                   help="a recorded game (kosti replay input): advice at its end")
    p.set_defaults(func=run_advise)
    return p


#: The options of a turn in words, as ``(argparse dest, flag)``: refused beside ``GAME.json``.
TURN_WORDS = (("turn_points", "--turn-points"), ("score", "--score"), ("opponent_score", "--opponent-score"),
              ("opened", "--opened"), ("pit", "--pit"), ("barrel", "--barrel"))


def _pits_text(r: Any) -> str:
    """The pits of rules ``r`` as players write them: ``200–300, 600–700``."""
    return ", ".join(f"{p.lo}–{p.hi}" for p in r.pits)


def described_turn(rules: Any, dice: int | None = None, turn_points: int | None = None,
                   score: int | None = None, opponent_score: int | None = None,
                   opened: bool | None = None, pit: bool = False, barrel: bool = False) -> GameState:
    """A turn of the 1000 family told in words (``kosti advise --turn-points 60 --dice 2 …``).

    "Player" is to move against one "Opponent". ``dice``: dice to throw now (default all);
    ``turn_points``: points set aside this turn so far (default 0; more than 0 needs ``dice``, and
    ``dice`` equal to all the game's dice then means hot dice, rules.md §1.4); ``score`` /
    ``opponent_score``: recorded scores (default 0, a score other than 0 counts as opened);
    ``opened``: False for a player who has not opened yet (§3.1); ``pit``: he sits in a pit (§3.3;
    the pit follows from the score, so the score must lie in one — without ``score``, the first
    pit's lowest score); ``barrel``: he sits on the barrel (§3.6; without ``score``, the lowest
    score of the seat). All points are in the game's unit (:attr:`Rules.unit`: 5, or 50 in Farkle).

    Raises :class:`BadInput` (exit 2) with a one-line reason for anything the preset does not have
    or that contradicts itself: a negative or off-unit number, turn points without ``dice``, a
    score that already wins, ``--no-opened`` with a score or where every player is open, ``pit`` in
    a preset without pits or with a score outside them, ``barrel`` without a barrel seat or with a
    score off it.
    """
    r = resolve_rules(rules)
    n = r.dice_count if dice is None else dice
    if not 1 <= n <= r.dice_count:
        raise BadInput(f"--dice: {r.name} is played with 1 to {r.dice_count} dice, got {n}")
    unit = r.unit
    for flag, v in (("--turn-points", turn_points), ("--score", score), ("--opponent-score", opponent_score)):
        if v is not None and v % unit:
            raise BadInput(f"{flag} {v}: {r.name} scores in steps of {unit}")
    points = turn_points or 0
    if points < 0:
        raise BadInput(f"--turn-points {points}: turn points are 0 or more")
    if points and dice is None:
        raise BadInput(f"--turn-points {points}: say how many dice are left to throw (--dice N; "
                       f"{r.dice_count} for hot dice)")
    if pit:
        if not r.pits:
            raise BadInput(f"--pit: {r.name} has no pits")
        if score is None:
            first = r.pits[0]
            score = next(s for s in range(first.lo, first.hi + unit, unit) if first.contains(s))
        elif r.pit_of(score) is None:
            raise BadInput(f"--pit: a score of {score} is in no pit of {r.name} (pits: {_pits_text(r)})")
    seat = r.seat_is_state
    if barrel:
        if r.barrel.kind in ("none", "open"):
            raise BadInput(f"--barrel: {r.name} has no barrel to sit on")
        if score is None:
            score = next(s for s in range(r.barrel.entry, r.barrel_target, unit)
                         if seat or r.on_barrel(s))
        elif not (score >= r.barrel.entry if seat else r.on_barrel(score)):
            raise BadInput(f"--barrel: a score of {score} is not on the barrel of {r.name} "
                           f"(it seats from {r.barrel.entry} up to {r.barrel_target})")
    me = score or 0
    if opened is False:
        if r.opening.threshold <= 0:
            raise BadInput(f"--no-opened: {r.name} has no opening threshold, every player is open")
        if me:
            raise BadInput(f"--no-opened: a player who has not opened has a score of 0, got --score {me}")
    for flag, v in (("--score", me), ("--opponent-score", opponent_score or 0)):
        if r.wins(v):
            raise BadInput(f"{flag} {v}: that score has already won {r.name} (target {r.target}); "
                           "there is no turn to advise")
    st = new_game(r, ["Player", "Opponent"], scores={"Player": me, "Opponent": opponent_score or 0},
                  state={"Player": {"opened": opened is not False, **({"on_barrel": True} if barrel else {})},
                         "Opponent": {"opened": True}})
    if n != r.dice_count or points:
        hot = n == r.dice_count
        st = replace(st, turn=TurnState(player=0, dice=n, throws=1, scored=True, points=points, hot=hot,
                                        confirm=hot and r.hot_dice == "confirm_and_bank"))
    return st


def described_pig(rules: Any, dice: int | None = None, turn_points: int | None = None,
                  score: int | None = None, opponent_score: int | None = None) -> Any:
    """A two-player Pig game told in words: "Player" to move (he starts each round) against "Opponent",
    with recorded scores ``score`` / ``opponent_score`` (default 0) and ``turn_points`` in the series so
    far (default 0; more than 0 means he has thrown and may stop). Raises :class:`BadInput` for
    ``dice`` other than 1, negative numbers or a score that has already reached the target."""
    game = fresh_pig(rules, dice)
    t = game.params.target
    for flag, v in (("--turn-points", turn_points), ("--score", score), ("--opponent-score", opponent_score)):
        if v is not None and v < 0:
            raise BadInput(f"{flag} {v}: Pig's points are 0 or more")
    if (score or 0) >= t or (opponent_score or 0) >= t:
        raise BadInput(f"--score: a score of {max(score or 0, opponent_score or 0)} has already reached "
                       f"Pig's target {t}; there is no turn to advise")
    points = turn_points or 0
    return dataclasses.replace(game, scores=(score or 0, opponent_score or 0), series=points,
                               throws=1 if points else 0)


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
    words = [flag for dest, flag in TURN_WORDS if getattr(args, dest, None) not in (None, False)]
    if args.game is None:
        if args.rules is not None and is_game_preset(args.rules):
            if args.rules != "pig":
                return _no_advice(args.rules)
            flags = [f for f in words if f in ("--opened", "--pit", "--barrel")]
            if flags or args.opened is False:
                raise BadInput(f"{(flags or ['--no-opened'])[0]}: Pig has no opening, pits or barrel")
            return described_pig(args.rules, args.dice, args.turn_points, args.score, args.opponent_score)
        if isinstance(args.rules, str) and args.rules not in PRESET_NAMES:
            raise BadInput(f"unknown preset {args.rules!r}; the advisor knows {', '.join(PRESET_NAMES)} "
                           "and pig (two players)")
        return described_turn(args.rules or "classic", args.dice, args.turn_points, args.score,
                              args.opponent_score, args.opened, args.pit, args.barrel)
    if words or args.opened is False:
        raise BadInput(f"{(words or ['--no-opened'])[0]}: a turn in words is instead of {args.game}, "
                       "whose events already give the state")
    from ..cli import _read_json, replay

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
    st = game  # replay hosts every game; the advisor knows the 1000 family and Pig
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
        raise BadInput(f"--dice {args.dice}: {st.to_move} throws {count(st.dice_to_throw, 'die')} now")
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
    print(f"  {situation(st)}")
    print(f"  no score on the next throw: {100 * a.bust_probability:.2f} %  ·  "
          f"points it adds on average: {a.expected_points:.1f}")
    print(f"  expected recorded points: throw {a.throw_value:.1f}, stop {stop}")
    if a.requirement is not None:
        print(f"  chance {_REQ[a.requirement]} this turn: {100 * a.record_probability:.1f} %")
    print(f"  {a.why}")
    print(f"  {a.why_ru}")
    print(f"  objective: {OBJECTIVE}")
    return 0


def situation(st: GameState) -> str:
    """The mover's standing in one line, for the human output: his score and what it means under the
    preset (not opened, in the pit 200–300, on the barrel needing 120), and the others' scores."""
    i = st.turn.player
    p = st.players[i]
    parts = [f"score {p.score}"]
    if not p.opened and st.rules.opening.threshold > 0:
        parts.append(f"not opened (needs {st.rules.opening.threshold} in one turn)")
    pit = st.rules.pit_of(p.score)
    if pit is not None:
        parts.append(f"in the pit {pit.lo}–{pit.hi}")
    need = st.barrel_need(i)
    if need is not None:
        parts.append(f"on the barrel, needs {need} in one turn")
    others = ", ".join(f"{o.name} {o.score}" for j, o in enumerate(st.players) if j != i)
    return "; ".join(parts) + (f" — against {others}" if others else "")


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
