"""Hypothesis properties of the game state machine over random legal play in every preset.

* a replay of random legal events never crashes and is deterministic (``kosti replay`` gives the
  same final state);
* no player ever loses points except through a named rule (an event of a penalty kind for that
  player), and only the mover gains points (bank / instant win) or the lowest player via welfare;
* the JSON form of every reachable state restores exactly;
* ``allowed()`` agrees with ``apply()``: a stop is accepted exactly when ``allowed().bank`` is true;
* a stop while a throw awaits its keep behaves exactly like the best keep followed by the stop
  (the same state and events, or the same refusal), in every preset and variant (parametrized,
  so none is left to chance).
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kosti.engine import PRESET_NAMES, Bank, GameState, RuleViolation, action_to_json, new_game, with_overrides
from kosti.engine.cli import replay
from kosti.engine.selfplay import random_action

PENALTY_KINDS = {"bolt_penalty", "fall", "knocked_off", "overtaken", "dump_truck",
                 "three_farkles", "overshoot", "skip_turn", "dot"}
GAIN_KINDS = {"bank", "instant_win"}

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: every preset, plus module values no preset uses (rules.md §3 alternatives)
VARIANTS: list[tuple[str, dict | None]] = [(name, None) for name in PRESET_NAMES] + [
    ("classic", {"ending.mode": "strictly_above"}),
    ("classic", {"opening.failure_penalty": {"every": 3, "amount": 50}}),
    ("classic", {"barrel.direct_win_from_below": False, "dump_truck.trigger": "running"}),
    # rules.md 1.0 behaviour, reachable by override
    ("classic", {"barrel": {"seat_score": "actual", "direct_win_from_below": True},
                 "hot_dice_win": "any_ending"}),
    ("classic", {"barrel.seat_score": "actual"}),
    ("variant2_850_barrel", {"confirm_below_minimum": "continue", "hot_dice_win": "any_ending"}),
    ("raznoobrazie_skip_barrels", {"skip_barrels": {"upper": "inclusive", "trigger": "turn_end"}}),
    ("raznoobrazie_skip_barrels", {"skip_barrels.mode": "extra_turn_minus_100"}),
    ("raznoobrazie_skip_barrels", {"ending.overshoot_immediate": False}),
    ("farkle", {"high_stakes.enabled": True, "toxic_twos": True}),
    ("farkle", {"team_play.enabled": True}),
    ("farkle", {"dice_count": 5, "three_farkles.enabled": True}),
    ("ten_thousand", {"ending": {"mode": "exact", "overshoot_effect": "transfer_to_lowest"}}),
    ("zary_custom", {"ending": {"mode": "at_least", "overshoot_penalties": []},
                     "barrel": {"kind": "final_range", "entry": 900, "entry_strict": False,
                                "attempts": 3, "max_falls": 3}}),
]

games = st.tuples(st.sampled_from(VARIANTS), st.integers(0, 2**32 - 1),
                  st.integers(1, 4), st.lists(st.integers(-200, 990), min_size=4, max_size=4))


def _start(variant, n: int, scores: list[int]) -> GameState:
    preset, overrides = variant
    rules = with_overrides(preset, overrides)
    n = max(n, rules.players.min)
    if rules.team_play.enabled:
        n = 2 * rules.team_play.size
    names = [f"P{i}" for i in range(n)]
    scale = 10 if rules.dice_count == 6 or rules.target >= 5000 else 1
    start = {nm: (s // 5 * 5) * scale for nm, s in zip(names, scores)}
    if rules.negative_scores == "clamp_zero":
        start = {nm: max(0, s) for nm, s in start.items()}
    return new_game(rules, names, start)


@SETTINGS
@given(games)
def test_random_play_invariants(game):
    variant, seed, n, scores = game
    rng = random.Random(seed)
    state = _start(variant, n, scores)
    actions = []
    for _ in range(150):
        if state.over:
            break
        allowed = state.moves()
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
                    (variant, old_p, new_p, [e.text_en for e in events])
            elif new_p.score > old_p.score:
                assert any((e.player == new_p.name and e.kind in GAIN_KINDS)
                           or e.kind == "transfer" for e in events), (variant, old_p, new_p)
        if not new.over:
            assert 1 <= new.dice_to_throw <= new.rules.dice_count
            assert new.turn_points >= 0
        # exact JSON round trip of every reachable state
        restored = GameState.from_json(json.loads(json.dumps(new.to_json())))
        assert restored == new
        state = new
    # the same events through the replay path give the same final state
    start = _start(variant, n, scores)
    doc = {"rules": {"preset": variant[0], "overrides": variant[1]},
           "players": [p.name for p in start.players],
           "scores": {p.name: p.score for p in start.players},
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


@SETTINGS
@given(st.sampled_from(VARIANTS), st.data())
def test_arbitrary_actions_never_crash(variant, data):
    """Any action in any reachable state is applied, refused as forbidden (RuleViolation, exit 3)
    or refused as bad input (BadInput, exit 2) — never another exception (exit 1) — and a refused
    action leaves the state unchanged."""
    from kosti.engine import BadInput, Keep, Roll

    state = _start(variant, 4, [0, 0, 0, 0])
    faces = st.integers(1, 6)
    for _ in range(60):
        if state.over:
            break
        kind = data.draw(st.sampled_from(["roll", "roll", "roll", "keep", "bank"]))
        if kind == "roll":
            n = data.draw(st.one_of(st.sampled_from(state.roll_sizes()), st.integers(0, 7)))
            action = Roll.__new__(Roll)
            object.__setattr__(action, "faces", tuple(data.draw(st.lists(
                st.one_of(faces, st.integers(0, 7)), min_size=n, max_size=n))))
        elif kind == "keep":
            pool = list(state.turn.pending or state.turn.last_roll or (1,))
            action = Keep(data.draw(st.lists(st.sampled_from(pool), max_size=len(pool))))
        else:
            action = Bank()
        before = state.to_json()
        try:
            state, _ = state.apply(action)
        except (BadInput, RuleViolation):
            assert state.to_json() == before


def _turn_over(before: GameState, after: GameState) -> bool:
    """True if ``after`` is no longer ``before``'s turn (the game ended or the turn passed)."""
    return (after.over or after.turn.player != before.turn.player
            or after.turn.throws != before.turn.throws or not after.turn.scored)


def _outcome(state: GameState, actions) -> tuple:
    """Apply actions in order, stopping once the turn is over: ("ok", state JSON, event texts)
    or ("refused", reason)."""
    from kosti.engine import RuleViolation as RV

    events = []
    st_ = state
    for i, a in enumerate(actions):
        if i and _turn_over(state, st_):
            break
        try:
            st_, ev = st_.apply(a)
        except RV as exc:
            return ("refused", exc.reason_en)
        events.extend((e.kind, e.player, e.points, e.text_en, e.text_ru) for e in ev)
    return ("ok", st_.to_json(), events)


#: every preset as written, and every preset with a keep phase (at_least_one), so that a stop
#: with a pending throw arises under every preset's barrel, ending and hot-dice rules
KEEP_VARIANTS = VARIANTS + [(name, {"selection.set_aside": "at_least_one"})
                            for name in PRESET_NAMES]


def _variant_id(variant) -> str:
    preset, overrides = variant
    return preset if overrides is None else f"{preset}:{json.dumps(overrides, sort_keys=True)}"


def test_every_preset_is_a_keep_variant_as_written_and_with_a_keep_phase():
    presets_as_written = {p for p, o in KEEP_VARIANTS if o is None}
    with_keep_phase = {p for p, o in KEEP_VARIANTS if o == {"selection.set_aside": "at_least_one"}}
    assert presets_as_written == with_keep_phase == set(PRESET_NAMES)
    assert len({_variant_id(v) for v in KEEP_VARIANTS}) == len(KEEP_VARIANTS)


# parametrized, not drawn: every preset and variant is checked on every run (a few games each)
@pytest.mark.parametrize("variant", KEEP_VARIANTS, ids=[_variant_id(v) for v in KEEP_VARIANTS])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3),
       scores=st.lists(st.integers(-200, 990), min_size=4, max_size=4))
def test_stop_with_a_pending_throw_is_the_best_keep_then_the_stop(variant, seed, n, scores):
    """rules.md 1.1 / issue 17: ``Bank`` while a throw awaits its keep == ``Keep(best)`` then
    ``Bank`` (the stop is not made when that keep already ended the turn, e.g. by a win), under
    every variant of ``KEEP_VARIANTS``."""
    from kosti.engine import Keep

    rng = random.Random(seed)
    state = _start(variant, n, scores)
    checked = 0
    for _ in range(200):
        if state.over:
            break
        if state.phase == "keep":
            best = state.moves().keeps[0]
            stop = _outcome(state, [Bank()])
            keep_then_stop = _outcome(state, [Keep(best.faces), Bank()])
            assert stop == keep_then_stop, (variant, state.turn, state.players)
            assert state.moves().bank == (stop[0] == "ok"), (variant, stop)
            checked += 1
        state, _ = state.apply(random_action(state, rng))
    if variant[1] and variant[1].get("selection.set_aside") == "at_least_one":
        assert checked or state.over
