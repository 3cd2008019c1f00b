"""The one player-name rule (kosti.engine.names), shared by the engine, the config and the dashboard."""

from __future__ import annotations

import pytest

from kosti.engine.errors import BadInput
from kosti.engine.names import MAX_NAME_LENGTH, MAX_PLAYERS, PlayerNameError, check_player_names


def test_names_are_stripped_and_kept_in_order() -> None:
    assert check_player_names([" Ann ", "Boris", "Вера"]) == ["Ann", "Boris", "Вера"]
    assert check_player_names(["x" * MAX_NAME_LENGTH] + [f"p{i}" for i in range(MAX_PLAYERS - 1)])[0] == "x" * 40


@pytest.mark.parametrize(("names", "code", "name", "ru"), [
    ([], "none", "", "укажите хотя бы одно имя игрока"),
    (["Ann", "  "], "blank", "", "имя игрока не может быть пустым"),
    (["Ann", 7], "blank", "", "имя игрока не может быть пустым"),
    (["y" * 41], "too_long", "y" * 41, "имя игрока длиннее 40 символов"),
    ([f"p{i}" for i in range(13)], "too_many", "", "не больше 12 игроков, а указано 13"),
    (["Ann", "Boris", "ANN "], "duplicate", "ANN", "у двух игроков одно имя: ANN"),
])
def test_each_problem_has_a_code_and_both_languages(names, code, name, ru) -> None:
    with pytest.raises(PlayerNameError) as err:
        check_player_names(names)
    e = err.value
    assert (e.code, e.name) == (code, name) and ru in e.reason_ru and str(e) == e.reason_en
    assert isinstance(e, BadInput) and isinstance(e, ValueError) and e.exit_code == 2


def test_the_config_refuses_what_the_rule_refuses() -> None:
    from kosti.config import GameSettings

    assert GameSettings(players=[" Ann", "Boris"]).players == ["Ann", "Boris"]
    assert GameSettings(players=[]).players == []
    with pytest.raises(ValueError, match="same name: ann"):
        GameSettings(players=["Ann", "ann"])
