"""Four dice (Четыре кубика), games.md §8: at least one 6 among four dice — de Méré's bet.

Rules (games.md §8, article lines 352–355): four dice are thrown; if at least one shows a 6 the
"first" player wins, otherwise the other player. The chance of a 6 is 1 − (5/6)^4 = 0.5177
(:data:`P_SIX`).

Decisions (labelled in the description): two players; ``six_backer`` (seat 0 or 1, the
"first" player, default the first named) backs "at least one 6"; each throw is one round and its
winner scores 1 (the score column counts won rounds); the players take turns throwing (who
throws does not change the odds); the first to ``target`` won rounds (5) wins.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..game import Event, Reason
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, faces_text

#: Probability of at least one 6 among four fair dice: 1 − (5/6)^4 (games.md §8: "51.8%").
P_SIX = 1 - (5 / 6) ** 4


@dataclass(frozen=True)
class FourDiceParams(GameParams):
    """Four dice parameters: ``six_backer`` (seat 0 or 1 of the player who backs "at least one
    6"), ``target`` (won rounds that win the game)."""

    six_backer: int = 0
    target: int = 5

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {
        "six_backer": (0, 1), "target": (1, 1000)}


@dataclass(frozen=True)
class FourDice(TableGame[FourDiceParams]):
    """Four dice state: ``rounds`` (rounds played)."""

    rounds: int = 0

    game: ClassVar[str] = "four_dice"
    PARAMS: ClassVar[type[GameParams]] = FourDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 2)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("rounds won", "выигранные раунды")

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 4

    def player_extra(self, i: int) -> dict[str, Any]:
        backer = self.params.six_backer
        return {"backs": "six" if i == backer else "no_six"}

    def extra_summary(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "p_six": round(P_SIX, 4)}

    def marks(self, i: int) -> list[tuple[str, str]]:
        if i == self.params.six_backer:
            return [("backs a 6", "ставит на шестёрку")]
        return [("backs no 6", "ставит против шестёрки")]

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        backer = self.names[self.params.six_backer]
        other = self.names[1 - self.params.six_backer]
        name = self.names[self.mover]
        no = Reason("every throw decides a round: there is no stopping",
                    "каждый бросок решает раунд: останавливаться незачем")
        return Moves(True, 4, False, False, (), None, no,
                     Reason(f"{name}: throw four dice — any 6 wins for {backer}, no 6 for "
                            f"{other}", f"{name}: бросайте четыре кости — хоть одна шестёрка: "
                            f"выигрывает {backer}, ни одной: {other}"), (4,))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> FourDice:
        p = self.params
        six = 6 in faces
        w = p.six_backer if six else 1 - p.six_backer
        en = (f"{self.names[self.mover]} throws {faces_text(faces)}: "
              f"{'a 6' if six else 'no 6'} — {self.names[w]} wins the round")
        ru = (f"{self.names[self.mover]} выбрасывает {faces_text(faces)}: "
              f"{'есть шестёрка' if six else 'шестёрок нет'} — раунд выигрывает {self.names[w]}")
        scores = self._add(w, 1, evs, en, ru, kind="win_round", faces=faces)
        st = dataclasses.replace(self, scores=scores, rounds=self.rounds + 1,
                                 mover=self._next_seat(self.mover))
        if scores[w] >= p.target:
            return st._finish((w,), evs)
        return st


RULES_EN = """Four dice are thrown. If at least one shows a 6, the first player (the one who backs the 6) wins the round; otherwise the other player wins it. The chance of at least one 6 is 1 − (5/6)^4 = 51.8% (de Méré's bet).

Decided by kosti: two players; the first named backs the 6 (parameter six_backer); the players take turns throwing; each round won scores 1; the first to 5 rounds (parameter target) wins."""

RULES_RU = """Бросают четыре кости. Если выпала хотя бы одна шестёрка, раунд выигрывает первый игрок (тот, кто ставит на шестёрку); если нет — другой игрок. Вероятность хотя бы одной шестёрки — 1 − (5/6)^4 = 51,8% (пари де Мере).

Решено в kosti: два игрока; на шестёрку ставит первый названный (параметр six_backer); игроки бросают по очереди; каждый выигранный раунд — 1 очко; побеждает первым выигравший 5 раундов (параметр target)."""

PRESETS = (
    GamePreset("four_dice", FourDice, FourDiceParams(name="four_dice"), 4, 5,
               "Four dice (Четыре кубика): two players; any 6 among four dice wins the round "
               "for the first player, no 6 for the other (p = 0.518); decided: the players "
               "take turns throwing, first to 5 rounds wins",
               "Четыре кубика: два игрока; хоть одна шестёрка из четырёх костей — раунд "
               "первого игрока, ни одной — второго (p = 0,518); решено: бросают по очереди, "
               "побеждает первым выигравший 5 раундов",
               "games.md §8", RULES_EN, RULES_RU),
)

__all__ = ["FourDice", "FourDiceParams", "PRESETS", "P_SIX"]
