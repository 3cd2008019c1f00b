"""Dead dice (Отложи мёртвую), games.md §9: 2s and 5s are dead; score only clean throws.

Rules (games.md §9, article lines 356–361): five dice; the order is drawn by lot. A player
throws all his live dice: if no die shows a 2 or a 5, the sum of the faces is added to his
score; if any does, the throw scores nothing and every 2 and 5 is dead and set aside. He keeps
throwing the remaining dice until all five are dead; then the dice pass on. The highest total
wins.

Decisions (labelled in the description): the order is the seat order as entered (the lot is
drawn at the table); ``rounds`` (1: one turn each — the article does not say) is a parameter;
a tie for the highest total is a shared victory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..game import Event, Reason
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, dice_en, dice_ru, ev, faces_text, sort_winners

#: Faces that die (games.md §9).
DEAD_FACES = (2, 5)


@dataclass(frozen=True)
class DeadDiceParams(GameParams):
    """Dead dice parameters: ``dice`` (5), ``rounds`` (turns each player plays, 1)."""

    dice: int = 5
    rounds: int = 1

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {
        "dice": (1, 10), "rounds": (1, 1000)}


@dataclass(frozen=True)
class DeadDice(TableGame[DeadDiceParams]):
    """Dead dice state: ``live`` (dice still to throw this turn), ``turn_total`` (points scored
    this turn, already recorded), ``turns_done`` (turns played by everyone together)."""

    live: int = 0
    turn_total: int = 0
    turns_done: int = 0

    game: ClassVar[str] = "dead_dice"
    PARAMS: ClassVar[type[GameParams]] = DeadDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)

    def _opened(self) -> DeadDice:
        return dataclasses.replace(self, live=self.params.dice)

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else self.live

    def extra_summary(self) -> dict[str, Any]:
        p = self.params
        return {"live_dice": self.live, "round": self.turns_done // len(self.names) + 1,
                "rounds": p.rounds}

    def status(self) -> Reason | None:
        return Reason(f"live dice: {self.live}, this turn: {self.turn_total}",
                      f"живых костей: {self.live}, за ход: {self.turn_total}")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("the turn goes on until all dice are dead",
                    "ход продолжается, пока все кости не умрут")
        return Moves(True, self.live, False, False, (), None, no,
                     Reason(f"{name}: throw {dice_en(self.live)} — a throw without 2 or 5 "
                            f"scores its sum", f"{name}: бросайте {dice_ru(self.live)} — бросок "
                            f"без 2 и 5 приносит сумму очков"), (self.live,))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> DeadDice:
        p = self.params
        name = self.names[self.mover]
        dead = sum(1 for f in faces if f in DEAD_FACES)
        if not dead:
            s = sum(faces)
            scores = self._add(self.mover, s, evs, f"{name} throws {faces_text(faces)}: no 2 "
                               f"or 5, scores {s}", f"{name} выбрасывает {faces_text(faces)}: "
                               f"без 2 и 5, записано {s}", faces=faces)
            return dataclasses.replace(self, scores=scores, turn_total=self.turn_total + s)
        live = self.live - dead
        evs.append(ev("dead", name, f"{name} throws {faces_text(faces)}: {dice_en(dead)} dead, "
                      f"nothing scored, {live} left", f"{name} выбрасывает {faces_text(faces)}: "
                      f"мёртвых {dead}, очков нет, осталось {live}", 0, faces))
        if live:
            return dataclasses.replace(self, live=live)
        done = self.turns_done + 1
        evs.append(ev("turn_end", name, f"all dice are dead: {name} scored {self.turn_total} "
                      f"this turn", f"все кости мертвы: {name} — за ход {self.turn_total}",
                      self.turn_total))
        st = dataclasses.replace(self, live=p.dice, turn_total=0, turns_done=done)
        if done >= p.rounds * len(self.names):
            return st._finish(sort_winners(self.scores), evs)
        nxt = self._next_seat(self.mover)
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw",
                      f"бросает {self.names[nxt]}"))
        return dataclasses.replace(st, mover=nxt)


RULES_EN = """Five dice; the order is drawn by lot (kosti plays in the order the players were entered).

Throw all your live dice. If no die shows a 2 or a 5, the sum of the faces is added to your score. If any die shows a 2 or a 5, the throw scores nothing, and every 2 and 5 is dead and set aside. Keep throwing the remaining dice until all five are dead; then the dice pass on.

The highest total wins. The article does not say how many rounds are played: kosti plays one turn each (parameter rounds); a tie is a shared victory."""

RULES_RU = """Пять костей; очерёдность определяют жребием (kosti играет в том порядке, в каком введены игроки).

Бросайте все живые кости. Если ни на одной нет 2 или 5, сумма очков прибавляется к вашему счёту. Если хоть на одной выпало 2 или 5, бросок ничего не приносит, а все двойки и пятёрки «умирают» и откладываются. Бросайте оставшиеся кости, пока не умрут все пять; затем кости переходят к следующему.

Побеждает набравший больше всех. Сколько кругов играть, в статье не сказано: kosti играет по одному ходу каждому (параметр rounds); при равенстве победу делят."""

PRESETS = (
    GamePreset("dead_dice", DeadDice, DeadDiceParams(name="dead_dice"), 5, None,
               "Dead dice (Отложи мёртвую): throw the live dice; no 2 or 5 scores the sum, "
               "else the 2s and 5s die; the turn ends when all five are dead; highest total "
               "wins (decided: one turn each, seat order, tie shared)",
               "Отложи мёртвую: бросайте живые кости; без 2 и 5 — сумма в счёт, иначе двойки и "
               "пятёрки умирают; ход кончается, когда мертвы все пять; побеждает больший счёт "
               "(решено: по одному ходу, порядок мест, ничья — общая победа)",
               "games.md §9", RULES_EN, RULES_RU),
)

__all__ = ["DeadDice", "DeadDiceParams", "PRESETS", "DEAD_FACES"]
