"""Chicago (Чикаго), games.md §10: eleven rounds; round k needs the sum k + 1 of two dice.

Rules (games.md §10, article lines 362–373): two dice, 11 rounds; round *k* targets the sum
*k* + 1 (round 1 needs 2, round 11 needs 12); the player who throws the target writes the target
to his score. The highest total after 11 rounds wins.

Decisions (labelled in the description; ``procedure`` is a parameter because players disagree):

* ``procedure = "one_throw"`` (preset ``chicago``): in each round every player throws once, in
  seat order; each one who hits the target scores it;
* ``procedure = "race"`` (preset ``chicago_race``, the literal "кто первым", whoever first): the
  players throw in turn, one throw each, until someone hits; he alone scores and the next round
  begins with the player after him;
* "одну за другой" (one after the other): the two dice may be thrown together or one after the
  other — only the settled sum counts;
* a tie for the highest total is a shared victory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..game import Event, Reason
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, ev, faces_text, sort_winners


@dataclass(frozen=True)
class ChicagoParams(GameParams):
    """Chicago parameters: ``rounds`` (11: targets 2…12), ``procedure`` (``one_throw`` or
    ``race``, see the module docstring)."""

    rounds: int = 11
    procedure: str = "one_throw"

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"rounds": (1, 11)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"procedure": ("one_throw", "race")}


@dataclass(frozen=True)
class Chicago(TableGame[ChicagoParams]):
    """Chicago state: ``round`` (1-based; its target is ``round + 1``), ``thrown`` (throws made
    in this round)."""

    round: int = 1
    thrown: int = 0

    game: ClassVar[str] = "chicago"
    PARAMS: ClassVar[type[GameParams]] = ChicagoParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)

    @property
    def target(self) -> int:
        """The sum this round needs (round + 1)."""
        return self.round + 1

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 2

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "target": None if self.over else self.target,
                "rounds": self.params.rounds}

    def status(self) -> Reason | None:
        return Reason(f"round {self.round}: the target is {self.target}",
                      f"раунд {self.round}: нужна сумма {self.target}")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("every throw counts: there is no stopping",
                    "каждый бросок идёт в зачёт: останавливаться незачем")
        return Moves(True, 2, False, False, (), None, no,
                     Reason(f"{name}: round {self.round} — throw two dice for a sum of "
                            f"{self.target}", f"{name}: раунд {self.round} — бросайте две кости, "
                            f"нужна сумма {self.target}"), (2,))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Chicago:
        p = self.params
        name = self.names[self.mover]
        s = sum(faces)
        st = self
        hit = s == self.target
        if hit:
            st = dataclasses.replace(st, scores=self._add(
                self.mover, self.target, evs, f"{name} throws {faces_text(faces)} = {s}: hits "
                f"round {self.round}, scores {s}", f"{name} выбрасывает {faces_text(faces)} = {s}: "
                f"в цель в раунде {self.round}, записано {s}", faces=faces))
        else:
            evs.append(ev("throw", name, f"{name} throws {faces_text(faces)} = {s} (needed "
                          f"{self.target})", f"{name} выбрасывает {faces_text(faces)} = {s} (нужно "
                          f"{self.target})", 0, faces))
        nxt = self._next_seat(self.mover)
        thrown = self.thrown + 1
        if p.procedure == "race":
            round_over = hit
        else:
            round_over = thrown >= len(self.names)
            if round_over:
                nxt = 0
        # every throw is a turn: the "turn" event says the dice pass (the table's turns, sheet and export)
        to_throw = ev("turn", self.names[nxt], f"{self.names[nxt]} to throw", f"бросает {self.names[nxt]}")
        if not round_over:
            evs.append(to_throw)
            return dataclasses.replace(st, thrown=thrown, mover=nxt)
        if self.round >= p.rounds:
            return st._finish(sort_winners(st.scores), evs)
        evs.append(ev("round", self.names[nxt], f"round {self.round + 1}: the target is "
                      f"{self.target + 1}", f"раунд {self.round + 1}: нужна сумма "
                      f"{self.target + 1}"))
        evs.append(to_throw)
        return dataclasses.replace(st, round=self.round + 1, thrown=0, mover=nxt)


RULES_EN = """Two dice, eleven rounds. Round 1 needs a sum of 2, round 2 a sum of 3, and so on up to 12 in round 11. A player who throws the round's sum writes that sum to his score. The highest total after 11 rounds wins; a tie is a shared victory.

The article is unclear about the round procedure. kosti plays one throw per player per round, in seat order: everyone who hits scores (preset chicago). The preset chicago_race reads "whoever first" literally: the players throw in turn until someone hits; only he scores, and the next round begins with the player after him.

"One after the other": the two dice may be thrown together or one after the other; only the sum counts."""

RULES_RU = """Две кости, одиннадцать раундов. В первом раунде нужна сумма 2, во втором — 3 и так далее до 12 в одиннадцатом. Выбросивший нужную сумму записывает её себе в счёт. Побеждает набравший больше всех за 11 раундов; при равенстве победу делят.

Порядок раунда в статье неясен. kosti даёт каждому игроку один бросок за раунд по порядку мест: очки получает каждый, кто попал (вариант chicago). Вариант chicago_race понимает «кто первым» буквально: игроки бросают по очереди, пока кто-нибудь не попадёт; очки получает только он, а следующий раунд начинает следующий за ним игрок.

«Одну за другой»: кости можно бросать вместе или по одной; считается только сумма."""

PRESETS = (
    GamePreset("chicago", Chicago, ChicagoParams(name="chicago"), 2, None,
               "Chicago (Чикаго): 11 rounds, round k needs the sum k + 1 of two dice and scores "
               "it; highest total wins (decided: one throw per player per round, everyone who "
               "hits scores; dice together or one after the other; tie shared)",
               "Чикаго: 11 раундов, в раунде k нужна сумма k + 1 двух костей, она и "
               "записывается; побеждает больший счёт (решено: по одному броску на игрока в "
               "раунде, очки каждому попавшему; кости вместе или по одной; ничья — общая победа)",
               "games.md §10", RULES_EN, RULES_RU),
    GamePreset("chicago_race", Chicago, ChicagoParams(name="chicago_race", procedure="race"),
               2, None,
               "Chicago, race procedure: the players throw in turn until someone hits the "
               "round's sum; only he scores it; otherwise as chicago",
               "Чикаго, гонка: игроки бросают по очереди, пока кто-нибудь не выбросит сумму "
               "раунда; очки получает только он; остальное как в chicago",
               "games.md §10", RULES_EN, RULES_RU),
)

__all__ = ["Chicago", "ChicagoParams", "PRESETS"]
