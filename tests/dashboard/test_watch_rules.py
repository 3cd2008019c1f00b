"""``kosti watch --rules`` plays its throws through the dashboard's :class:`GameSession` (``vision/live_cli.py``):
the same throws give the same game on the command line and at the table, a corrected throw is taken back by the
session (one throw, one score), and a throw the game refuses says why on a ``game:`` line."""

from __future__ import annotations

from kosti.dashboard.session import GameSession
from kosti.dashboard.store import Store
from kosti.dashboard.throws import throw_from_pipeline
from kosti.vision.live_cli import _play, _session
from kosti.vision.throws import Die, Throw


def _throw(frame: int, faces: list[int], corrects: int | None = None, status: str = "ok") -> Throw:
    dice = [Die(f, 0.97, (40.0 * i, 10.0, 40.0 * i + 30, 40.0)) for i, f in enumerate(faces)]
    return Throw(frame_index=frame, time_s=frame / 30, dice=dice, status=status, corrects=corrects)


def test_a_corrected_throw_is_scored_once_as_the_table_scores_it():
    session = _session("classic")
    assert session.store.get_game(session.game_id).players == ["Player 1"]  # the preset's fewest players
    assert session.state.dice_to_throw == 5
    first = _play(session, _throw(10, [1, 1, 5, 2, 3]))
    assert "25" in first and session.state.turn.points == 25 and session.state.dice_to_throw == 2
    # A die tipped over: the same physical throw now shows 1 1 1 2 3 (100 points, two dice left).
    again = _play(session, _throw(40, [1, 1, 1, 2, 3], corrects=10))
    assert "100" in again and session.state.turn.points == 100 and session.state.dice_to_throw == 2
    rolls = [a for a in session.store.actions(session.game_id) if a.kind == "roll"]
    assert [a.payload["faces"] for a in rolls] == [[1, 1, 1, 2, 3]]  # the first roll was taken back

    # The dashboard's table, given the same throws, keeps the same game.
    table = GameSession(Store(":memory:"))
    table.new_game(["Player 1"], "classic")
    table.submit_throw(throw_from_pipeline(_throw(10, [1, 1, 5, 2, 3])))
    table.submit_throw(throw_from_pipeline(_throw(40, [1, 1, 1, 2, 3], corrects=10)))
    assert table.state.to_json() == session.state.to_json()


def test_an_uncertain_throw_is_held_and_a_throw_of_the_wrong_count_is_not_scored():
    session = _session("classic")
    assert _play(session, _throw(5, [1, 0, 5, 2, 3], status="uncertain")) == ""
    assert session.state.turn.points == 0 and session.store.pending_throw(session.game_id) is not None
    line = _play(session, _throw(9, [1, 5, 2]))  # three dice where five are thrown
    assert line.startswith("\n    game: ") and "5" in line and session.state.turn.points == 0
    assert session.store.pending_throw(session.game_id).frame_index == 9  # held, the earlier one superseded
