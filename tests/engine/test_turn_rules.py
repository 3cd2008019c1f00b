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
    g, ev = new_game(rules, ["Ann", "Bob"]).apply(Roll([5, 5, 5, 2, 3]))  # exactly 50 opens
    assert [e.kind for e in ev] == ["throw"] and g.turn_points == 50 and g.to_move == "Ann"
    g = new_game(rules, ["Ann", "Bob"])
    g, _ = g.apply(Roll([1, 1, 1, 2, 3]))  # 100 opens; a later throw of 5 is fine
    g, ev = g.apply(Roll([5, 2]))
    assert [e.kind for e in ev] == ["throw"] and g.turn_points == 105 and g.to_move == "Ann"
    assert g.turn.throws == 2


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


def _hot_at_35(rules: object, players: list[str], scores: dict[str, int] | None = None) -> object:
    """RU-B: Ann keeps 1 5, then 1 5 5: hot dice at 35, a confirmation throw of five is due."""
    g = new_game(rules, players, scores)
    for action in (Roll([1, 5, 2, 3, 3]), Keep([1, 5]), Roll([1, 5, 5]), Keep([1, 5, 5])):
        g, _ = g.apply(action)
    return g


def test_a_failed_confirmation_loses_the_turns_points():
    g, ev = _hot_at_35("variant2_850_barrel", ["Ann", "Bob"]).apply(Roll([2, 3, 4, 6, 2]))
    assert _said(ev)[0] == ("bust", -35, "Ann throws 2 3 4 6 2: confirmation failed, the turn's 35 are lost",
                            "Ann бросает 2 3 4 6 2: подтверждение не удалось, 35 очков хода сгорают")
    assert g.to_move == "Bob" and g.player("Ann").score == 0


def test_a_confirmation_throw_that_is_hot_again_still_records_the_turn():
    g = new_game("variant2_850_barrel", ["Ann", "Bob"])
    g, _ = g.apply(Roll([1, 1, 1, 5, 5]))
    g, _ = g.apply(Keep([1, 1, 1, 5, 5]))
    g, ev = g.apply(Roll([1, 1, 1, 5, 5]))
    assert [e.kind for e in ev][:4] == ["throw", "hot_dice", "confirmation", "bank"]
    assert _said(ev)[2] == ("confirmation", 220, "Ann: turn confirmed", "Ann: ход подтверждён")
    assert g.player("Ann").score == 220 and g.to_move == "Bob"


def test_a_confirmation_that_ends_the_turn_by_a_dump_truck_ends_it_there():
    """One player, so the next turn is his own: the confirmation's 20 make 555 (dump truck); nothing more happens
    in that action, the new turn starts clean."""
    rules = {"preset": "variant2_850_barrel", "overrides": {
        "dump_truck": {"enabled": True, "value": 555, "trigger": "running"}, "players.min": 1}}
    g, ev = _hot_at_35(rules, ["Ann"], {"Ann": 500}).apply(Roll([1, 5, 5, 2, 3]))
    assert [e.kind for e in ev] == ["throw", "dump_truck", "turn"]
    assert g.player("Ann").score == 0 and g.player("Ann").turns == 1
    assert (g.turn.points, g.turn.throws, g.turn.scored) == (0, 0, False)


@pytest.mark.parametrize(("rules", "en", "ru"), [
    ("variant2_850_barrel", "Ann: all dice scored, confirmation throw of 5",
     "Ann: все кости сыграли, бросок подтверждения 5 костями"),
    ("classic", "Ann: hot dice, must throw all five again", "Ann: все кости сыграли, нужно снова бросить все пять"),
    ("farkle", "Ann: hot dice, may throw all six again or stop",
     "Ann: все кости сыграли, можно бросить все шесть или остановиться"),
])
def test_hot_dice_say_what_the_table_plays(rules, en, ru):
    """rules.md §1.4: a confirmation throw (RU-B), must throw again (classic), may throw or stop (Farkle)."""
    g = new_game(rules, ["Ann", "Bob"])
    faces = [1, 1, 1, 5, 5] if g.dice_to_throw == 5 else [1, 1, 1, 5, 5, 5]
    g, ev = g.apply(Roll(faces))
    if g.phase == "keep":
        g, ev = g.apply(Keep(faces))
    assert ("hot_dice", 0, en, ru) in _said(ev)


def test_three_twos_are_not_toxic_four_are():
    rules = {"preset": "farkle", "overrides": {"toxic_twos": True}}
    g, ev = new_game(rules, ["Ann", "Bob"]).apply(Roll([2, 2, 2, 1, 5, 3]))
    assert [e.kind for e in ev] == ["throw"] and g.to_move == "Ann"


def test_a_first_throw_retry_costs_nothing():
    g, ev = new_game("zary_custom", ["Ann", "Bob"]).apply(Roll([2, 3, 4, 6, 2]))
    assert _said(ev) == [("retry", 0, "Ann throws 2 3 4 6 2: nothing, second attempt",
                          "Ann бросает 2 3 4 6 2: пусто, вторая попытка")]
    assert g.to_move == "Ann" and g.dice_to_throw == 5
    # the second attempt is an ordinary throw (not a confirmation throw)
    g, ev = g.apply(Roll([1, 5, 2, 3, 3]))
    assert _said(ev) == [("throw", 15, "Ann throws 1 5 2 3 3: 15 (turn 15)", "Ann бросает 1 5 2 3 3: 15 (за ход 15)")]
    assert g.turn_points == 15 and g.to_move == "Ann"


def test_a_stop_past_an_exact_target_voids_the_turn():
    """rules.md §3.8 (RU-C, the overshoot judged at the stop): 990 + 20 = 1010 > 1000."""
    rules = {"preset": "raznoobrazie_skip_barrels", "overrides": {"ending.overshoot_immediate": False}}
    g = new_game(rules, ["A", "B"], {"A": 990})
    g, _ = g.apply(Roll([1, 5, 5, 2, 3]))
    g, _ = g.apply(Keep([1, 5, 5]))
    g, ev = g.apply(Bank())
    assert _said(ev)[0] == ("overshoot", 0, "A overshoots 1000 (1010): the turn is void",
                            "A: перебор (1010), ход не засчитан")
    assert g.player("A").score == 990 and g.to_move == "B"


def test_a_throw_no_keep_can_leave_is_refused_by_its_count():
    """Farkle, 1 2 3 4 6 6 pending: the only keep (the 1) leaves five dice, so a throw of two is refused."""
    g, _ = new_game("farkle", ["A", "B"]).apply(Roll([1, 2, 3, 4, 6, 6]))
    with pytest.raises(BadInput, match=r"^A must throw 5 dice, got 2 \(1 2\)$"):
        g.apply(Roll([1, 2]))


def test_the_dice_a_confirmation_throw_leaves_are_offered_for_high_stakes():
    """RU-B with F2's high stakes: the confirmation throw 1 2 3 4 6 scores the 1 and the turn is recorded; the
    four dice it left over are the next player's high-stakes offer."""
    rules = {"preset": "variant2_850_barrel", "overrides": HIGH_STAKES}
    g, ev = _hot_at_35(rules, ["Ann", "Bob"], {"Ann": 100}).apply(Roll([1, 2, 3, 4, 6]))
    assert [e.kind for e in ev] == ["throw", "confirmation", "bank", "turn"]
    assert _said(ev)[-1][2:] == ("Bob to throw (or play the 4 dice left over for the high-stakes bonus)",
                                 "бросает Bob (или оставленные кости (4) ради бонуса)")
    assert g.player("Ann").score == 145 and g.roll_sizes() == (4, 5)


def test_a_double_worth_nothing_still_tells_the_turn_so_far():
    """ID-A (rules.md §1.7.3): a double on exactly two dice is kept for 0; the sheet still says the turn's total."""
    g, _ = new_game("soviet_box_track", ["Ann", "Bob"]).apply(Roll([1, 1, 5, 2, 3]))
    g, ev = g.apply(Roll([3, 3]))
    assert _said(ev)[0] == ("throw", 0, "Ann throws 3 3: 0 (turn 25)", "Ann бросает 3 3: 0 (за ход 25)")
    assert g.turn_points == 25 and g.dice_to_throw == 5


def test_a_throw_of_the_wrong_count_after_a_pending_throw_names_the_best_keeps_count():
    """Farkle, 1 5 5 5 2 2 pending: no keep leaves one die; the message names the best keep's two."""
    g, _ = new_game("farkle", ["A", "B"]).apply(Roll([1, 5, 5, 5, 2, 2]))
    with pytest.raises(BadInput) as info:
        g.apply(Roll([1]))
    assert (str(info.value), info.value.reason_ru) == ("A must throw 2 dice, got 1 (1)",
                                                       "A: нужно бросить 2 кости, а введено 1 (1)")
