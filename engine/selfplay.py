"""Random legal play for tests, benchmarks and demos (a virtual table without a camera).

:func:`random_action` picks a legal next action for the player to move with a simple greedy
policy: throw random dice, set aside a random legal keep where the rules let the player choose,
and stop ("хватит") when allowed and the turn points reach a random target. :func:`play_random_game`
plays a whole game that way. Randomness comes only from the ``random.Random`` passed in, so a seed
reproduces a game exactly.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, Mapping, Sequence

from .game import Action, Bank, Event, GameState, Keep, Roll, new_game
from .rules import Rules

__all__ = ["random_action", "random_faces", "play_random_game", "random_game_steps"]


def random_faces(n: int, rng: random.Random) -> tuple[int, ...]:
    """``n`` fair six-sided dice (faces 1–6)."""
    return tuple(rng.randint(1, 6) for _ in range(n))


def random_action(state: GameState, rng: random.Random, *, bank_at: int | None = None,
                  keep_choice: float = 0.5) -> Action | None:
    """A legal action for the player to move, or None when the game is over.

    ``bank_at``: stop as soon as stopping is allowed and the turn points reach this many points
    (default: a random 1–8 point steps × 50 for 1000, × 500 for Farkle). ``keep_choice``:
    probability of choosing a random legal keep instead of the best one in ``at_least_one``
    presets."""
    if state.over:
        return None
    allowed = state.moves()
    if allowed.keep:
        if rng.random() < keep_choice:
            return Keep(rng.choice(allowed.keeps).faces)
        return Keep(allowed.keeps[0].faces)
    if allowed.bank:
        target = bank_at if bank_at is not None else rng.randint(1, 8) * state.rules.unit * 10
        if state.turn.points >= target:
            return Bank()
    return Roll(random_faces(allowed.dice, rng))


def random_game_steps(state: GameState, rng: random.Random, *, max_actions: int = 100_000,
                      **kw: Any) -> Iterator[tuple[Action, GameState, tuple[Event, ...]]]:
    """Yield ``(action, new_state, events)`` for random legal play until the game ends."""
    for _ in range(max_actions):
        action = random_action(state, rng, **kw)
        if action is None:
            return
        state, events = state.apply(action)
        yield action, state, events


def play_random_game(rules: Rules | str | Mapping[str, Any], players: Sequence[str] = ("A", "B"), seed: int = 0,
                     max_actions: int = 100_000) -> GameState:
    """Play a whole random game under ``rules`` (a preset name or :class:`Rules`); returns the
    final state (possibly unfinished after ``max_actions``)."""
    rng = random.Random(seed)
    st = new_game(rules, list(players))
    for _, after, _ in random_game_steps(st, rng, max_actions=max_actions):
        st = after
    return st
