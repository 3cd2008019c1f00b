"""The turn a stored action ends and how it ended come from the engine's ``Event.outcome`` (issue 12):
the session infers nothing from event kinds. The words stored in ``turns.outcome`` stay the score
sheet's (``bank``, ``bust``, ``dump_truck``, ``overshoot``, ``instant_win``, ``win``, ``end``)."""

from __future__ import annotations

from kosti.dashboard.session import GameSession
from kosti.dashboard.store import Store
from kosti.dashboard.views import TURN_OUTCOME_WORDS, turn_outcome
from kosti.engine import new_game
from kosti.engine.game import Roll
from kosti.engine.games import new_any_game
from kosti.engine.kinds import TurnOutcome


def _session(tmp_path, players, preset="classic", overrides=None, scores=None) -> GameSession:
    sess = GameSession(Store(tmp_path / "kosti.db"))
    sess.new_game(players, preset, overrides)
    if scores:
        rules = {"preset": preset, "overrides": overrides} if overrides else preset
        sess.set_state(new_any_game(rules, players, scores=scores))
    return sess


def _turns(sess: GameSession) -> list[tuple[int, str, str | None]]:
    assert sess.game_id is not None
    return [(t["turn_no"], t["player"], t["outcome"]) for t in sess.store.turns(sess.game_id)]


def test_every_turn_outcome_has_a_word_the_score_sheet_knows():
    assert set(TURN_OUTCOME_WORDS) == set(TurnOutcome)
    assert set(TURN_OUTCOME_WORDS.values()) == {"bank", "bust", "dump_truck", "overshoot", "instant_win"}


def test_turn_outcome_reads_the_marked_event_not_the_kinds():
    g = new_game("classic", ["Ann", "Boris"])
    _, ev = g.apply(Roll((2, 3, 4, 6, 6)))
    assert turn_outcome(ev, over=False) == "bust"
    _, ev = g.apply(Roll((1, 1, 1, 2, 3)))  # the turn goes on: no event carries an outcome
    assert turn_outcome(ev, over=False) is None
    unmarked = tuple(e.__class__(e.kind, e.player, e.text_en, e.text_ru, e.points, e.faces) for e in
                     g.apply(Roll((2, 3, 4, 6, 6)))[1])
    assert [e.kind for e in unmarked][0] == "bust" and turn_outcome(unmarked, over=False) is None
    assert turn_outcome(unmarked, over=True) == "win"


def test_bust_and_stop_are_stored_as_before(tmp_path):
    sess = _session(tmp_path, ["Ann", "Boris"])
    sess.enter([2, 3, 4, 6, 6])  # nothing scores
    sess.enter([1, 1, 1, 5, 3])  # Boris 105
    sess.bank()
    assert _turns(sess) == [(1, "Ann", "bust"), (2, "Boris", "bank"), (3, "Ann", None)]


def test_running_dump_truck_is_stored_as_dump_truck(tmp_path):
    sess = _session(tmp_path, ["Ann", "Boris"], overrides={"dump_truck": {"trigger": "running"}},
                    scores={"Ann": 455, "Boris": 0})
    sess.enter([1, 1, 1, 2, 3])  # 455 + 100 = 555 while throwing (rules.md §3.5)
    assert _turns(sess)[0] == (1, "Ann", "dump_truck")


def test_open_barrel_overshoot_is_stored_as_overshoot(tmp_path):
    sess = _session(tmp_path, ["Ann", "Boris"], preset="classic_open_barrel", scores={"Ann": 990, "Boris": 0})
    sess.enter([1, 1, 1, 2, 3])  # 990 + 100 passes the exact 1000 (rules.md §3.8): a dot
    assert _turns(sess)[0] == (1, "Ann", "overshoot")


def test_final_round_turns_end_although_the_engine_names_no_next_player(tmp_path):
    """In Farkle's final round the engine passes the dice on without a ``turn`` event; the marked
    event still ends the turn, so each final-round turn gets its own row (the next player from the
    state) and the last one, which ends the game, records ``win``."""
    sess = _session(tmp_path, ["Ann", "Boris", "Cleo"], preset="farkle", scores={"Ann": 9900, "Boris": 0, "Cleo": 0})
    sess.enter([1, 1, 1, 5, 2, 3])  # 1050 to keep
    sess.bank()  # Ann 10950: final round for Boris and Cleo
    assert sess.state is not None and sess.state.to_move == "Boris"
    sess.enter([2, 3, 4, 6, 6, 2])  # Farkle
    assert sess.state.to_move == "Cleo"
    sess.enter([2, 3, 4, 6, 6, 2])  # Farkle: the game is over
    assert sess.state.over
    assert _turns(sess) == [(1, "Ann", "bank"), (2, "Boris", "bust"), (3, "Cleo", "win")]


def test_an_instant_win_is_stored_as_instant_win(tmp_path):
    sess = _session(tmp_path, ["Ann", "Boris"], overrides={"scoring": {"instant_win": "five_ones"}})
    sess.enter([1, 1, 1, 1, 1])  # rules.md §3.10
    assert sess.state is not None and sess.state.over
    assert _turns(sess) == [(1, "Ann", "instant_win")]


def test_pig_series_are_stored_as_bust_and_bank(tmp_path):
    """Pig's engine marks the series' end (a thrown 1: bust; a stop: bank) like the 1000 engine does, so
    the score sheet keeps Pig's words rather than a bare turn change."""
    sess = GameSession(Store(tmp_path / "kosti.db"))
    sess.new_game(["Ann", "Boris"], "pig", {"order_throw": False})
    first = sess.require(None).to_move  # the game state: who throws first
    sess.enter([4])
    sess.enter([1])  # the series is lost
    sess.enter([6])
    sess.bank()
    outcomes = [o for _, _, o in _turns(sess)]
    assert outcomes[:2] == ["bust", "bank"], outcomes
    assert _turns(sess)[0][1] == first
