"""High dice (Хай Дайс), games.md §13: banker and punter each throw two dice; the punter must beat the banker.

Rules (games.md §13, article lines 434–452): two players, a banker and a punter; each throws two dice and the
sum is his score; the banker throws first. If the punter's sum is higher, the banker pays one stake;
otherwise (lower or equal) the punter pays one stake. Variant: with 1 or 2 extra throws the punter
"notionally borrows one stake" before each extra throw; if the second throw also fails he pays 2 stakes,
after three failed throws 3.

Decisions (labelled; parameters where players disagree):

* the stake is agreed (``stake``, 1) and may be changed on the page before a round's first throw
  (``{"stake": n}``);
* ``extra_throws`` (0, 1 or 2): after a failed throw the punter may throw again (borrowing a stake) or accept
  the loss ("stop", :class:`~kosti.engine.game.Bank`);
* the payout for a win on an extra throw is not stated: ``extra_win_pays = "one"`` — the banker pays one
  stake, as for a first-throw win (the borrowed stakes are given back); ``"in_play"`` — he pays as many stakes
  as were in play (1 + the borrowed ones);
* the players take turns as banker, one round each; ``rounds`` (6) rounds; the score column is each player's
  money balance in stakes; the higher balance wins, equal balances share the victory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from ..plurals import count_en, count_ru
from .base import OVER_MOVES, ChoiceOption, GameParams, GamePreset, Moves, TableGame, ev, faces_text, sort_winners


@dataclass(frozen=True)
class HighDiceParams(GameParams):
    """High dice parameters: ``stake`` (1), ``extra_throws`` (0–2), ``extra_win_pays`` (``one`` /
    ``in_play``), ``rounds`` (6)."""

    stake: int = 1
    extra_throws: int = 0
    extra_win_pays: str = "one"
    rounds: int = 6

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {
        "stake": (1, 10**9), "extra_throws": (0, 2), "rounds": (1, 1000)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"extra_win_pays": ("one", "in_play")}


@dataclass(frozen=True)
class HighDice(TableGame[HighDiceParams]):
    """High dice state: ``round`` (1-based), ``banker`` (seat), ``banker_sum`` (0 until the banker threw),
    ``punter_throws`` (throws the punter made this round), ``stake`` (the stake in force)."""

    round: int = 1
    banker: int = 0
    banker_sum: int = 0
    punter_throws: int = 0
    stake: int = 0

    game: ClassVar[str] = "high_dice"
    HAS_STOP: ClassVar[bool] = True
    CHOICES: ClassVar[tuple[str, ...]] = ("stake",)
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"stake": 2}', "the stake, before a round's first throw", "ставка до первого броска раунда"),
    )
    PARAMS: ClassVar[type[GameParams]] = HighDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 2)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("stakes won or lost", "выигранные и проигранные ставки")

    def _opened(self) -> HighDice:
        return dataclasses.replace(self, stake=self.params.stake)

    @property
    def punter(self) -> int:
        """Seat of the punter this round."""
        return 1 - self.banker

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 2

    def marks(self, i: int) -> list[tuple[str, str]]:
        return [("banker", "банкомёт")] if i == self.banker else [("punter", "понтёр")]

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "banker": self.names[self.banker], "stake": self.stake,
                "banker_sum": self.banker_sum or None, "punter_throws": self.punter_throws}

    def status(self) -> Reason | None:
        en = f"round {self.round}: stake {self.stake}"
        ru = f"раунд {self.round}: ставка {self.stake}"
        if self.banker_sum:
            en += f"; the banker threw {self.banker_sum}"
            ru += f"; банкомёт выбросил {self.banker_sum}"
        return Reason(en, ru)

    def moves(self) -> Moves:
        p = self.params
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        if not self.banker_sum:
            why = Reason("the banker throws first", "первым бросает банкомёт")
            choices = (ChoiceOption("stake", None, "set the stake for this round",
                                    "назначить ставку на этот раунд"),)
            return Moves(True, 2, False, False, (), None, why,
                         Reason(f"{name} (banker): throw two dice", f"{name} (банкомёт): бросайте две кости"),
                         (2,), choices)
        if self.punter_throws == 0:
            why = Reason("throw first", "сначала бросьте")
            return Moves(True, 2, False, False, (), None, why,
                         Reason(f"{name} (punter): throw two dice — beat {self.banker_sum}",
                                f"{name} (понтёр): бросайте две кости — нужно больше {self.banker_sum}"), (2,))
        left = 1 + p.extra_throws - self.punter_throws
        return Moves(True, 2, False, True, (), None, None,
                     Reason(f"{name}: throw again borrowing a stake ({count_en(left, 'extra throw')} left) or accept "
                            f"the loss of {count_en(self.punter_throws, 'stake')}",
                            f"{name}: бросайте ещё, заняв ставку (в запасе {count_ru(left, 'extra throw')}), или "
                            f"признайте проигрыш: {count_ru(self.punter_throws, 'stake')}"), (2,),
                     bank_label=Reason(f"accept the loss ({self.punter_throws} × {self.stake})",
                                       f"признать проигрыш ({self.punter_throws} × {self.stake})"))

    def _choose(self, key: str, value: Any, evs: list[Event]) -> HighDice:
        if self.banker_sum:
            raise RuleViolation("the stake is set before the banker's throw",
                                "ставку назначают до броска банкомёта")
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadInput(f"stake: a positive whole number, got {value!r}")
        evs.append(ev("stake", self.names[self.banker], f"the stake is {value}", f"ставка — {value}"))
        return dataclasses.replace(self, stake=value)

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> HighDice:
        p = self.params
        s = sum(faces)
        name = self.names[self.mover]
        if not self.banker_sum:
            evs.append(ev("throw", name, f"{name} (banker) throws {faces_text(faces)} = {s}",
                          f"{name} (банкомёт) выбрасывает {faces_text(faces)} = {s}", s, faces))
            return dataclasses.replace(self, banker_sum=s, mover=self.punter)
        n = self.punter_throws + 1
        if s > self.banker_sum:
            pay = self.stake * (n if p.extra_win_pays == "in_play" else 1)
            return dataclasses.replace(self, punter_throws=n)._settle(
                self.punter, pay, evs, f"{name} throws {faces_text(faces)} = {s}, beats {self.banker_sum}: the "
                f"banker pays {pay}", f"{name} выбрасывает {faces_text(faces)} = {s}, больше {self.banker_sum}: "
                f"банкомёт платит {pay}", faces)
        evs.append(ev("throw", name, f"{name} throws {faces_text(faces)} = {s}: does not beat {self.banker_sum}",
                      f"{name} выбрасывает {faces_text(faces)} = {s}: не больше {self.banker_sum}", s, faces))
        st = dataclasses.replace(self, punter_throws=n)
        if n >= 1 + p.extra_throws:
            return st._lose(evs)
        return st

    def _bank(self, evs: list[Event]) -> HighDice:
        return self._lose(evs)

    def _lose(self, evs: list[Event]) -> HighDice:
        pay = self.stake * self.punter_throws
        name = self.names[self.punter]
        return self._settle(self.banker, pay, evs, f"{name} failed to beat the banker: pays {pay}",
                            f"{name} не обыгрывает банкомёта: платит {pay}", ())

    def _settle(self, winner: int, amount: int, evs: list[Event], en: str, ru: str,
                faces: tuple[int, ...]) -> HighDice:
        p = self.params
        loser = 1 - winner
        sc = self._add(winner, amount, evs, en, ru, kind="settle", faces=faces)
        sc = dataclasses.replace(self, scores=sc)._add(
            loser, -amount, evs, f"{self.names[loser]} pays {amount}", f"{self.names[loser]} платит {amount}",
            kind="settle")
        st = dataclasses.replace(self, scores=sc)
        if self.round >= p.rounds:
            return st._finish(sort_winners(sc), evs)
        banker = 1 - self.banker
        evs.append(ev("round", self.names[banker], f"round {self.round + 1}: {self.names[banker]} is the banker",
                      f"раунд {self.round + 1}: банкомёт — {self.names[banker]}"))
        return dataclasses.replace(st, round=self.round + 1, banker=banker, banker_sum=0, punter_throws=0,
                                   mover=banker)


RULES_EN = """Two players, a banker and a punter. Each throws two dice; the sum is his score. The banker throws first.

If the punter's sum is higher, the banker pays one stake. Otherwise — lower or equal — the punter pays one stake.

Variant (parameter extra_throws, 1 or 2): after a failed throw the punter may throw again, notionally borrowing one stake from the banker; if the second throw also fails he pays 2 stakes, after three failed throws 3. He may also accept the loss instead of throwing again.

Decided by kosti: the stake is agreed (parameter stake) and may be changed on the page before the banker's throw; a win on an extra throw is paid one stake (parameter extra_win_pays = in_play: as many stakes as were in play); the players take turns as banker, 6 rounds (parameter rounds); the higher balance wins."""

RULES_RU = """Два игрока — банкомёт и понтёр. Каждый бросает две кости; сумма — его очки. Первым бросает банкомёт.

Если у понтёра сумма больше, банкомёт платит одну ставку. Иначе — меньше или поровну — платит понтёр.

Вариант (параметр extra_throws, 1 или 2): после неудачного броска понтёр может бросить ещё раз, условно заняв одну ставку у банкомёта; если и второй бросок неудачен, он платит 2 ставки, после трёх неудачных — 3. Вместо нового броска он может признать проигрыш.

Решено в kosti: ставка оговаривается (параметр stake) и может быть изменена на странице до броска банкомёта; выигрыш на дополнительном броске оплачивается одной ставкой (параметр extra_win_pays = in_play — столькими ставками, сколько было в игре); игроки по очереди становятся банкомётом, 6 раундов (параметр rounds); побеждает больший выигрыш."""

PRESETS = (
    GamePreset("high_dice", HighDice, HighDiceParams(name="high_dice"), 2, None,
               "High dice (Хай Дайс): banker and punter throw two dice each, the punter must beat the banker's "
               "sum (a tie loses); one stake either way (decided: stake entered on the page, banker alternates, "
               "6 rounds, extra throws a parameter, a late win pays one stake)",
               "Хай Дайс: банкомёт и понтёр бросают по две кости, понтёр должен превзойти сумму банкомёта "
               "(равенство — проигрыш); одна ставка (решено: ставка вводится на странице, банкомёт меняется, "
               "6 раундов, дополнительные броски — параметр, поздний выигрыш — одна ставка)",
               "games.md §13", RULES_EN, RULES_RU),
)

__all__ = ["HighDice", "HighDiceParams", "PRESETS"]
