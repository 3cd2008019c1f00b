"""A camera correction (issue 13): a die tipped over after the throw was read. The corrected throw
replaces the roll it corrects — one physical throw, one score — when that roll is still the latest action."""

from __future__ import annotations

from dataclasses import replace


def test_corrected_throw_replaces_the_roll_it_corrects(client, throw, start_game):
    gid = start_game(client)
    table = client.app.state.table
    first = replace(throw([1, 2, 2, 4, 6]), frame_index=40)  # a 1 scores 10 (classic)
    assert table.submit_throw(first)["applied"] is True
    corrected = replace(throw([5, 2, 2, 4, 6]), frame_index=84, corrects=40)  # the 1 tipped onto a 5
    assert table.submit_throw(corrected)["applied"] is True
    s = client.get("/api/state").json()
    assert s["state"]["turn"]["turn_points"] == 5  # not 10 + 5: the first read is taken back
    assert s["state"]["to_move"] == "Ann" and s["state"]["turn"]["dice_to_throw"] == 4
    h = client.get(f"/api/games/{gid}/history").json()
    assert [a["kind"] for a in h["actions"] if not a.get("undone")] == ["roll"]


def test_a_correction_of_an_older_throw_is_a_plain_throw(client, throw, start_game):
    start_game(client)
    table = client.app.state.table
    table.submit_throw(replace(throw([1, 2, 2, 4, 6]), frame_index=40))
    # The correction names a throw that is not the latest roll (frame 12): nothing is taken back.
    table.submit_throw(replace(throw([5, 2, 2, 4]), frame_index=84, corrects=12))
    s = client.get("/api/state").json()
    assert s["state"]["turn"]["turn_points"] == 15  # 10 + 5: both rolls count
