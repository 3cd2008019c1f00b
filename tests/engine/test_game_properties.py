"""Hypothesis properties of the game state machine over random legal play in every preset.

* a replay of random legal events never crashes and is deterministic (``kosti replay`` gives the
  same final state);
* no player ever loses points except through a named rule (an event of a penalty kind for that
  player), and only the mover gains points (bank / instant win) or the lowest player via welfare;
* the JSON form of every reachable state restores exactly;
* ``allowed()`` agrees with ``apply()``: a stop is accepted exactly when ``allowed().bank`` is true.
"""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kosti.engine import (PRESET_NAMES, Bank, GameState, RuleViolation, action_to_json, get_preset,
                          new_game)
from kosti.engine.cli import replay
from kosti.engine.selfplay import random_action

PENALTY_KINDS = {"bolt_penalty", "fall", "knocked_off", "overtaken", "dump_truck",
                 "three_farkles", "overshoot", "skip_turn", "dot"}
GAIN_KINDS = {"bank", "instant_win"}

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

games = st.tuples(st.sampled_from(PRESET_NAMES), st.integers(0, 2**32 - 1),
                  st.integers(1, 4), st.lists(st.integers(-200, 990), min_size=4, max_size=4))


def _start(preset: str, n: int, scores: list[int]) -> GameState:
    names = [f"P{i}" for i in range(max(n, 2 if preset.startswith("farkle") else 1))]
    rules_scale = 10 if preset in ("farkle", "ten_thousand", "farkle_official", "dix_mille",
                                   "wikihow_10000", "farkle_class_5000") else 1
    rules = get_preset(preset)
    start = {nm: (s // 5 * 5) * rules_scale for nm, s in zip(names, scores)}
    if rules.negative_scores == "clamp_zero":
        start = {nm: max(0, s) for nm, s in start.items()}
    return new_game(rules, names, start)


@SETTINGS
@given(games)
def test_random_play_invariants(game):
    preset, seed, n, scores = game
    rng = random.Random(seed)
    state = _start(preset, n, scores)
    actions = []
    for _ in range(150):
        if state.over:
            break
        allowed = state.allowed()
        # allowed() agrees with apply() on stopping
        if allowed.bank:
            state.apply(Bank())
        else:
            try:
                state.apply(Bank())
            except RuleViolation as exc:
                assert exc.reason_en and exc.reason_ru
            else:
                raise AssertionError("Bank accepted although allowed() said no")
        action = random_action(state, rng)
        new, events = state.apply(action)
        actions.append(action)
        # points change only through named rules
        for old_p, new_p in zip(state.players, new.players):
            if new_p.score < old_p.score:
                assert any(e.player == new_p.name and e.kind in PENALTY_KINDS for e in events), \
                    (preset, old_p, new_p, [e.text_en for e in events])
            elif new_p.score > old_p.score:
                assert any((e.player == new_p.name and e.kind in GAIN_KINDS)
                           or e.kind == "transfer" for e in events), (preset, old_p, new_p)
        if not new.over:
            assert 1 <= new.dice_to_throw <= new.rules.dice_count
            assert new.turn_points >= 0
        # exact JSON round trip of every reachable state
        restored = GameState.from_json(json.loads(json.dumps(new.to_json())))
        assert restored == new
        state = new
    # the same events through the replay path give the same final state
    doc = {"rules": preset, "players": [p.name for p in _start(preset, n, scores).players],
           "scores": {p.name: p.score for p in _start(preset, n, scores).players},
           "events": [action_to_json(a) for a in actions]}
    replayed, idx, err = replay(doc)
    assert err is None and idx is None
    assert replayed.summary() == state.summary()


@SETTINGS
@given(st.sampled_from(PRESET_NAMES), st.integers(0, 2**32 - 1))
def test_bad_rolls_change_nothing(preset, seed):
    """A wrong dice count or a face outside 1-6 raises BadInput and leaves the state as it was."""
    from kosti.engine import BadInput, Roll

    rng = random.Random(seed)
    state = new_game(preset, ["A", "B"])
    for _ in range(rng.randint(0, 30)):
        if state.over:
            return
        state, _ = state.apply(random_action(state, rng))
    if state.over or state.phase == "keep":
        return
    n = state.dice_to_throw
    before = state.to_json()
    for faces in ([1] * (n + 1), [1] * (n - 1) if n > 1 else [1, 1], [0] + [1] * (n - 1),
                  [7] + [1] * (n - 1)):
        try:
            state.apply(Roll(faces))
        except BadInput:
            pass
        else:
            raise AssertionError(f"{faces} accepted with {n} dice to throw")
    assert state.to_json() == before
