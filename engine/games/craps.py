"""Craps (Крэпс), games.md §3: two dice, win or lose a round on the sum.

Rules (games.md §3, article lines 283–288): the thrower sums two dice. First throw (come-out):
7 or 11 wins; a "craps" number loses; any other sum becomes his **point**, and he throws until
a 7 (he loses) or his point (he wins).

Decisions (labelled in the description, parameters where players would disagree):

* the losing come-out numbers: the article says "2, 8, 12"; standard craps loses on 2, 3, 12,
  so the 8 is taken as a typo for 3 in the preset ``craps`` (``craps_numbers`` = [2, 3, 12]);
  the preset ``craps_seed`` takes the article literally ([2, 8, 12]: 8 loses, 3 is a point);
* the article describes no bets and no passing of the dice: each round is one shooter's come-out
  and point; a won round scores 1 (the score column counts won rounds); the dice pass to the left
  after every round; every player shoots ``rounds`` rounds; the most won rounds wins, a tie is a
  shared victory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput
from ..game import Event, Reason
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, ev, sort_winners


@dataclass(frozen=True)
class CrapsParams(GameParams):
    """Craps parameters: ``naturals`` (come-out sums that win: 7, 11), ``craps_numbers``
    (come-out sums that lose: 2, 3, 12 — the article's literal list is 2, 8, 12), ``rounds``
    (rounds each player shoots)."""

    naturals: tuple[int, ...] = (7, 11)
    craps_numbers: tuple[int, ...] = (2, 3, 12)
    rounds: int = 3

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"rounds": (1, 1000)}

    def __post_init__(self) -> None:
        super().__post_init__()
        both = set(self.naturals) & set(self.craps_numbers)
        if both:
            raise BadInput(f"{self.name}: sum {min(both)} cannot both win and lose")
        if any(not 2 <= s <= 12 for s in (*self.naturals, *self.craps_numbers)):
            raise BadInput(f"{self.name}: come-out sums must be 2–12")
        if 7 in self.craps_numbers:
            raise BadInput(f"{self.name}: 7 cannot be a losing come-out number (it ends a point)")


@dataclass(frozen=True)
class Craps(TableGame[CrapsParams]):
    """Craps state: ``point`` (the shooter's point, 0 on the come-out throw), ``rounds_done``
    (rounds played by everyone together), ``last_sum``."""

    point: int = 0
    rounds_done: int = 0
    last_sum: int = 0

    game: ClassVar[str] = "craps"
    PARAMS: ClassVar[type[GameParams]] = CrapsParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("rounds won", "выигранные раунды")

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 2

    def extra_summary(self) -> dict[str, Any]:
        p = self.params
        return {"point": self.point or None, "round": self.rounds_done + 1,
                "rounds": p.rounds * len(self.names)}

    def status(self) -> Reason | None:
        p = self.params
        r = f"{self.rounds_done + 1}/{p.rounds * len(self.names)}"
        if self.point:
            return Reason(f"round {r}: the point is {self.point}",
                          f"раунд {r}: очко {self.point}")
        return Reason(f"round {r}: come-out throw", f"раунд {r}: первый бросок")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("craps has no stopping: the round ends on a win or a loss",
                    "в крэпсе не останавливаются: раунд кончается выигрышем или проигрышем")
        if self.point:
            hint = Reason(f"{name}: throw two dice — {self.point} wins, 7 loses",
                          f"{name}: бросайте две кости — {self.point} выигрывает, 7 проигрывает")
        else:
            p = self.params
            nat = ", ".join(map(str, p.naturals))
            cr = ", ".join(map(str, p.craps_numbers))
            hint = Reason(f"{name}: come-out throw of two dice — {nat} win, {cr} lose, "
                          f"anything else is your point",
                          f"{name}: первый бросок двух костей — {nat} выигрывают, {cr} "
                          f"проигрывают, остальное становится вашим очком")
        return Moves(True, 2, False, False, (), None, no, hint, (2,))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Craps:
        p = self.params
        s = sum(faces)
        name = self.names[self.mover]
        st = dataclasses.replace(self, last_sum=s)
        if not self.point:
            if s in p.naturals:
                return st._round_over(True, evs, f"{name} throws {s} on the come-out: wins",
                                      f"{name} выбрасывает {s} первым броском: выигрыш", faces)
            if s in p.craps_numbers:
                return st._round_over(False, evs, f"{name} throws {s} on the come-out: loses",
                                      f"{name} выбрасывает {s} первым броском: проигрыш", faces)
            evs.append(ev("point", name, f"{name} throws {s}: his point is {s}",
                          f"{name} выбрасывает {s}: очко — {s}", s, faces))
            return dataclasses.replace(st, point=s)
        if s == self.point:
            return st._round_over(True, evs, f"{name} throws his point {s}: wins",
                                  f"{name} выбрасывает своё очко {s}: выигрыш", faces)
        if s == 7:
            return st._round_over(False, evs, f"{name} throws 7 before his point {self.point}: "
                                  f"loses", f"{name} выбрасывает 7 раньше своего очка "
                                  f"{self.point}: проигрыш", faces)
        evs.append(ev("throw", name, f"{name} throws {s}: still playing for {self.point}",
                      f"{name} выбрасывает {s}: игра на {self.point} продолжается", s, faces))
        return st

    def _round_over(self, won: bool, evs: list[Event], en: str, ru: str,
                    faces: tuple[int, ...]) -> Craps:
        p = self.params
        scores = self.scores
        if won:
            scores = self._add(self.mover, 1, evs, en, ru, kind="win_round", faces=faces)
        else:
            evs.append(ev("lose_round", self.names[self.mover], en, ru, 0, faces))
        done = self.rounds_done + 1
        st = dataclasses.replace(self, scores=scores, point=0, rounds_done=done)
        if done >= p.rounds * len(self.names):
            return st._finish(sort_winners(scores), evs)
        nxt = self._next_seat(self.mover)
        evs.append(ev("turn", self.names[nxt], f"the dice pass to {self.names[nxt]}",
                      f"кости переходят к {self.names[nxt]}"))
        return dataclasses.replace(st, mover=nxt)


RULES_EN = """Two dice; the thrower sums them. The first throw of a round (come-out): 7 or 11 wins; 2, 3 or 12 loses ("craps"). Any other sum becomes the thrower's point: he throws on until his point (he wins) or a 7 (he loses).

The article lists the losing numbers as 2, 8, 12. Standard craps loses on 2, 3, 12, so kosti takes the 8 as a typo for 3; the preset craps_seed plays the article literally (8 loses, 3 is a point).

The article describes no bets and no passing of the dice. kosti decides: a won round scores 1; after every round the dice pass to the left; each player shoots the agreed number of rounds (parameter rounds, 3); the most rounds won wins, a tie is a shared victory."""

RULES_RU = """Две кости; бросающий складывает очки. Первый бросок раунда: 7 или 11 выигрывают; 2, 3 или 12 проигрывают. Любая другая сумма становится очком бросающего: он бросает дальше, пока не выбросит своё очко (выигрыш) или 7 (проигрыш).

В статье проигрышные числа — 2, 8, 12. В обычном крэпсе проигрывают 2, 3, 12, поэтому kosti считает 8 опечаткой вместо 3; вариант craps_seed играет буквально по статье (8 проигрывает, 3 становится очком).

Ставки и передача костей в статье не описаны. Решено в kosti: выигранный раунд даёт 1 очко; после каждого раунда кости переходят налево; каждый игрок бросает оговорённое число раундов (параметр rounds, 3); побеждает выигравший больше раундов, при равенстве победу делят."""

PRESETS = (
    GamePreset("craps", Craps, CrapsParams(name="craps"), 2, None,
               "Craps (Крэпс): come-out 7/11 win, 2/3/12 lose (decided: the article's 8 read "
               "as a typo for 3), else a point until the point or 7; a won round scores 1, "
               "dice pass left each round, 3 rounds each, most wins (tie shared)",
               "Крэпс: первый бросок 7/11 — выигрыш, 2/3/12 — проигрыш (решено: 8 из статьи — "
               "опечатка вместо 3), иначе очко до очка или 7; выигранный раунд — 1 очко, кости "
               "переходят налево после раунда, по 3 раунда каждому (ничья — общая победа)",
               "games.md §3", RULES_EN, RULES_RU),
    GamePreset("craps_seed", Craps, CrapsParams(name="craps_seed", craps_numbers=(2, 8, 12)),
               2, None,
               "Craps as the article writes it: come-out 7/11 win, 2/8/12 lose, 3 becomes a "
               "point; otherwise as craps",
               "Крэпс буквально по статье: первый бросок 7/11 — выигрыш, 2/8/12 — проигрыш, 3 "
               "становится очком; остальное как в craps",
               "games.md §3", RULES_EN, RULES_RU),
)

__all__ = ["Craps", "CrapsParams", "PRESETS"]
