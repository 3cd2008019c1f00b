"""The mid-turn rules' outcomes a table sees (issue 45: mutation testing of ``engine/turn.py``): the points an event
carries (a bust loses the turn's points, a dump truck the player's score), the score sheet's sentences in English and
Russian, the high-stakes bonus (once, on the first throw only), toxic twos, F3's literal opening from the first throw,
and the player's record after an instant win. Played through :mod:`kosti.engine`'s public game API."""

from __future__ import annotations

import pytest

from kosti.engine import BadInput, Bank, Keep, Roll, new_game

HIGH_STAKES = {"high_stakes": {"enabled": True, "bonus": 1000}}


def _said(events) -> list[tuple[str, int, str, str]]:
    return [(e.kind, e.points, e.text_en, e.text_ru) for e in events]


def test_a_bust_takes_away_exactly_the_turns_points():
    g = new_game("farkle", ["Ann", "Bob"])
    g, _ = g.apply(Roll([1, 5, 2, 3, 4, 6]))
    g, _ = g.apply(Keep([1]))
    g, ev = g.apply(Roll([2, 3, 4, 6, 2]))
    assert _said(ev)[0] == ("bust", -100, "Ann throws 2 3 4 6 2: Farkle, the turn's 100 are lost",
                            "Ann бросает 2 3 4 6 2: фаркл, 100 очков хода сгорают")
    assert g.to_move == "Bob" and g.player("Ann").score == 0


def test_a_running_dump_truck_costs_the_score_the_player_had():
    g = new_game("soviet_box_track", ["Ann", "Bob"], {"Ann": 540})
    g, ev = g.apply(Roll([1, 5, 2, 3, 3]))  # 540 + 15 = 555 mid-turn
    assert _said(ev)[:2] == [
        ("throw", 15, "Ann throws 1 5 2 3 3: 15 (turn 15)", "Ann бросает 1 5 2 3 3: 15 (за ход 15)"),
        ("dump_truck", -540, "Ann reaches 555: dump truck! Score 0", "Ann набирает 555: самосвал! Счёт 0")]
    assert g.player("Ann").score == 0 and g.to_move == "Bob"


def test_an_instant_win_records_the_turn_and_opens_the_player():
    g = new_game("soviet_box_track", ["Ann", "Bob"])
    assert not g.player("Ann").opened
    g, ev = g.apply(Roll([3, 3, 3, 3, 3]))
    assert _said(ev)[-1] == ("instant_win", 1000, "Ann wins instantly with 3 3 3 3 3!",
                             "Ann мгновенно побеждает: 3 3 3 3 3!")
    ann = g.player("Ann")
    assert g.over and g.winner == "Ann" and (ann.score, ann.opened, ann.turns) == (1000, True, 1)
    assert (g.turn.points, g.turn.pending, g.turn.hot, g.turn.confirm) == (0, None, False, False)


def test_toxic_twos_wipe_the_turn_for_nothing():
    g = new_game({"preset": "farkle", "overrides": {"toxic_twos": True}}, ["Ann", "Bob"])
    g, ev = g.apply(Roll([2, 2, 2, 2, 1, 5]))
    assert _said(ev)[0] == ("toxic_twos", 0, "Ann throws 2 2 2 2 1 5: toxic twos, the turn is wiped",
                            "Ann бросает 2 2 2 2 1 5: ядовитые двойки, ход сгорает")
    assert g.to_move == "Bob"


def _stakes_offered() -> object:
    """Farkle with high stakes: Ann records 600 leaving 2 dice, so Bob may start from those 2."""
    g = new_game({"preset": "farkle", "overrides": HIGH_STAKES}, ["Ann", "Bob"], {"Ann": 1000})
    g, _ = g.apply(Roll([1, 5, 5, 5, 2, 3]))
    g, _ = g.apply(Keep([1, 5, 5, 5]))
    g, _ = g.apply(Bank())
    return g


def test_the_high_stakes_bonus_comes_once_on_the_first_throw_of_the_dice_left_over():
    g = _stakes_offered()
    assert g.roll_sizes() == (2, 6)
    h, ev = g.apply(Roll([1, 2]))
    assert _said(ev)[0] == ("high_stakes", 1000, "Bob scores with the dice left over: +1000 bonus",
                            "Bob набирает очки оставленными костями: бонус +1000")
    assert h.turn_points == 1000
    h, _ = h.apply(Keep([1]))
    assert h.turn_points == 1100
    h, ev = h.apply(Roll([5]))  # the next throw of the turn: no bonus again
    assert [e.kind for e in ev] == ["throw"] and h.turn_points == 1100
    # a full throw of six instead: no bonus
    h, ev = g.apply(Roll([1, 2, 3, 4, 6, 6]))
    assert "high_stakes" not in [e.kind for e in ev]


def test_a_wrong_number_of_dice_names_the_dice_left_over_only_before_the_first_throw():
    g = _stakes_offered()
    with pytest.raises(BadInput) as info:
        g.apply(Roll([1, 2, 3]))
    assert (str(info.value), info.value.reason_ru) == (
        "Bob must throw 6 dice (or the 2 left by the previous player), got 3 (1 2 3)",
        "Bob: нужно бросить 6 костей (или 2, оставленные предыдущим игроком), а введено 3 (1 2 3)")
    h, _ = g.apply(Roll([1, 2]))
    h, _ = h.apply(Keep([1]))
    with pytest.raises(BadInput) as info:
        h.apply(Roll([5, 5]))
    assert (str(info.value), info.value.reason_ru) == ("Bob must throw 1 die, got 2 (5 5)",
                                                            "Bob: нужно бросить 1 кость, а введено 2 (5 5)")


def test_the_bonus_throw_in_a_set_aside_all_game_tells_the_turn_so_far():
    g = new_game({"preset": "classic", "overrides": HIGH_STAKES}, ["Ann", "Bob"], {"Ann": 100})
    g, _ = g.apply(Roll([1, 5, 2, 3, 3]))
    g, _ = g.apply(Bank())
    g, ev = g.apply(Roll([1, 2, 3]))
    assert _said(ev) == [
        ("high_stakes", 1000, "Bob scores with the dice left over: +1000 bonus",
         "Bob набирает очки оставленными костями: бонус +1000"),
        ("throw", 10, "Bob throws 1 2 3: 10 (turn 1010)", "Bob бросает 1 2 3: 10 (за ход 1010)")]


def test_f3_literal_opening_judges_the_first_throw_only():
    rules = {"preset": "classic", "overrides": {"opening.first_throw_only": True}}
    g = new_game(rules, ["Ann", "Bob"])
    g, ev = g.apply(Roll([1, 5, 2, 3, 3]))  # 15 < 50 on the first throw: the turn ends
    assert _said(ev)[1] == ("bust", 0, "Ann: the first throw must bring 50 to open; the turn ends",
                            "Ann: для входа первый бросок должен дать 50; ход окончен")
    g = new_game(rules, ["Ann", "Bob"])
    g, _ = g.apply(Roll([1, 1, 1, 2, 3]))  # 100 opens; a later throw of 5 is fine
    g, ev = g.apply(Roll([5, 2]))
    assert [e.kind for e in ev] == ["throw"] and g.turn_points == 105 and g.to_move == "Ann"


def test_a_confirmed_turn_short_of_the_opening_records_nothing():
    """RU-B (rules.md §1.4, §6.5d): hot dice at 35, the confirmation throw scores 10, 45 < 75 to open: the turn
    passes with nothing recorded, and the sheet says why in both languages."""
    g = new_game("variant2_850_barrel", ["Ann", "Bob"])
    for action in (Roll([1, 5, 2, 3, 3]), Keep([1, 5]), Roll([1, 5, 5]), Keep([1, 5, 5])):
        g, _ = g.apply(action)
    g, ev = g.apply(Roll([1, 2, 3, 4, 6]))
    assert _said(ev)[0][:3] == ("throw", 10, "Ann throws 1 2 3 4 6: 10 (confirmation) (turn 45)")
    kind, points, en, ru = _said(ev)[1]
    assert (kind, points) == ("confirmation", 0)
    assert en == ("Ann: turn confirmed at 45, but it may not be recorded (needs 30 more to open the game (opening 75)): "
                  "nothing is recorded, the turn passes")
    assert ru.startswith("Ann: ход подтверждён с 45, но записать его нельзя")
    assert g.to_move == "Bob" and (g.player("Ann").score, g.player("Ann").opened) == (0, False)
