"""Bank dice (Банк на костях), games.md §14: punters bet on a number; three dice are thrown; matches pay.

Rules (games.md §14, article lines 453–463): a banker and punters; three dice thrown together. Each punter bets
on a number from 1 to 6: one matching die pays the stake, two pay double, three pay triple; no match loses the
stake to the banker.

Decisions (labelled): the bets are entered on the page before the throw (``{"bet": {"player": "Boris",
"number": 3, "amount": 2}}``, or the text ``"Boris 3 2"``), one bet per punter per round (a new bet replaces
the old one), at least one bet before the dice are thrown; the first named player is the banker for the whole
game (``rotate_banker`` passes the bank to the left every round); ``rounds`` (5); the score column is each
player's balance; the higher balance wins, equal balances share the victory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from ..plurals import count_en, count_ru
from .base import (
    OVER_MOVES,
    ChoiceOption,
    Choose,
    GameParams,
    GamePreset,
    Moves,
    TableGame,
    ev,
    faces_text,
    sort_winners,
    thaw,
)


@dataclass(frozen=True)
class BankDiceParams(GameParams):
    """Bank dice parameters: ``rounds`` (5), ``rotate_banker`` (false: the first named player keeps the bank),
    ``max_amount`` (the largest bet accepted, 100)."""

    rounds: int = 5
    rotate_banker: bool = False
    max_amount: int = 100

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"rounds": (1, 1000), "max_amount": (1, 10**9)}


@dataclass(frozen=True)
class BankDice(TableGame[BankDiceParams]):
    """Bank dice state: ``round``; ``banker`` (seat); ``bets`` (``(seat, number, amount)`` per bet of this
    round, in seat order)."""

    round: int = 1
    banker: int = 0
    bets: tuple[tuple[int, int, int], ...] = ()

    game: ClassVar[str] = "bank_dice"
    CHOICES: ClassVar[tuple[str, ...]] = ("bet",)
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"bet": {"player": "Boris", "number": 3, "amount": 2}}', "a punter's bet before the throw",
         "ставка игрока до броска"),
    )
    PARAMS: ClassVar[type[GameParams]] = BankDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 12)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("balance", "баланс")

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 3

    def marks(self, i: int) -> list[tuple[str, str]]:
        if i == self.banker:
            return [("banker", "банкомёт")]
        for seat, number, amount in self.bets:
            if seat == i:
                return [(f"bets {amount} on {number}", f"ставит {amount} на {number}")]
        return []

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "banker": self.names[self.banker],
                "bets": [{"player": self.names[s], "number": n, "amount": a} for s, n, a in self.bets]}

    def status(self) -> Reason | None:
        return Reason(f"round {self.round}: {count_en(len(self.bets), 'bet')}",
                      f"раунд {self.round}: {count_ru(len(self.bets), 'bet')}")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        no = Reason("the banker just throws; there is no stopping", "банкомёт просто бросает; останавливаться незачем")
        choices = (ChoiceOption("bet", None, "enter a bet: player, number 1–6, amount",
                                "ставка: игрок, число 1–6, сумма"),)
        name = self.names[self.banker]
        if not self.bets:
            why = Reason("the punters bet first", "сначала ставят понтёры")
            return Moves(False, 3, False, False, (), why, no,
                         Reason("punters: enter your bets (a number 1–6 and an amount)",
                                "понтёры: введите ставки (число 1–6 и сумму)"), (), choices)
        return Moves(True, 3, False, False, (), None, no,
                     Reason(f"{name} (banker): throw three dice, or take more bets",
                            f"{name} (банкомёт): бросайте три кости или примите ещё ставки"), (3,), choices)

    def _parse_bet(self, value: Any) -> tuple[int, int, int]:
        v = thaw(value)
        if isinstance(v, str):
            parts = v.replace(",", " ").split()
            if len(parts) != 3:
                raise BadInput(f"bet: 'PLAYER NUMBER AMOUNT', e.g. 'Boris 3 2'; got {v!r}")
            v = {"player": parts[0], "number": parts[1], "amount": parts[2]}
        if not isinstance(v, dict) or set(v) != {"player", "number", "amount"}:
            raise BadInput(f"bet: expected player, number and amount; got {v!r}")
        name = v["player"]
        match = [i for i, n in enumerate(self.names) if n == name or n.lower() == str(name).lower()]
        if not match:
            raise BadInput(f"bet: unknown player {name!r} (players: {', '.join(self.names)})")
        try:
            number, amount = int(v["number"]), int(v["amount"])
        except (TypeError, ValueError):
            raise BadInput(f"bet: number and amount must be whole numbers, got {v!r}") from None
        if not 1 <= number <= 6:
            raise BadInput(f"bet: the number is 1–6, got {number}")
        if not 1 <= amount <= self.params.max_amount:
            raise BadInput(f"bet: the amount is 1–{self.params.max_amount}, got {amount}")
        return match[0], number, amount

    def _choose(self, key: str, value: Any, evs: list[Event]) -> BankDice:
        seat, number, amount = self._parse_bet(value)
        name = self.names[seat]
        if seat == self.banker:
            raise RuleViolation(f"{name} is the banker and does not bet", f"{name} — банкомёт и не ставит")
        bets = tuple(sorted([b for b in self.bets if b[0] != seat] + [(seat, number, amount)]))
        evs.append(ev("bet", name, f"{name} bets {amount} on {number}", f"{name} ставит {amount} на {number}"))
        return dataclasses.replace(self, bets=bets)

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> BankDice:
        p = self.params
        b = self.names[self.banker]
        evs.append(ev("throw", b, f"{b} throws {faces_text(faces)}", f"{b} выбрасывает {faces_text(faces)}",
                      faces=faces))
        st = self
        for seat, number, amount in self.bets:
            k = faces.count(number)
            name = self.names[seat]
            if k:
                win = amount * k
                st = dataclasses.replace(st, scores=st._add(seat, win, evs, f"{name}: {k} × {number}, wins {win}",
                                                            f"{name}: {number} выпало {k} раз, выигрыш {win}",
                                                            kind="settle"))
                st = dataclasses.replace(st, scores=st._add(self.banker, -win, evs, f"{b} pays {win}",
                                                            f"{b} платит {win}", kind="settle"))
            else:
                st = dataclasses.replace(st, scores=st._add(seat, -amount, evs, f"{name}: no {number}, loses "
                                                            f"{amount}", f"{name}: {number} не выпало, проигрыш "
                                                            f"{amount}", kind="settle"))
                st = dataclasses.replace(st, scores=st._add(self.banker, amount, evs, f"{b} takes {amount}",
                                                            f"{b} забирает {amount}", kind="settle"))
        st = dataclasses.replace(st, bets=())
        if self.round >= p.rounds:
            return st._finish(sort_winners(st.scores), evs)
        banker = self._next_seat(self.banker) if p.rotate_banker else self.banker
        evs.append(ev("round", self.names[banker], f"round {self.round + 1}: place your bets",
                      f"раунд {self.round + 1}: делайте ставки"))
        return dataclasses.replace(st, round=self.round + 1, banker=banker, mover=banker)

    def random_choice(self, rng: Any) -> Choose | None:
        punters = [i for i in range(len(self.names)) if i != self.banker]
        seat = punters[rng.randrange(len(punters))]
        return Choose("bet", {"player": self.names[seat], "number": rng.randint(1, 6), "amount": rng.randint(1, 5)})


RULES_EN = """A banker and punters; three dice are thrown together.

Each punter bets on a number from 1 to 6. One matching die pays the stake; two matching dice pay double; three pay triple. No match: the punter loses his stake to the banker.

Decided by kosti: the bets are entered on the page before the throw (a player, a number 1–6 and an amount), one bet per punter per round (a new one replaces it); the first named player keeps the bank (parameter rotate_banker passes it to the left each round); 5 rounds (parameter rounds); the higher balance wins."""

RULES_RU = """Банкомёт и понтёры; три кости бросают вместе.

Каждый понтёр ставит на число от 1 до 6. Одна совпавшая кость приносит ставку, две — двойную, три — тройную. Если совпадений нет, понтёр отдаёт ставку банкомёту.

Решено в kosti: ставки вводятся на странице до броска (игрок, число 1–6 и сумма), по одной ставке на понтёра за раунд (новая заменяет прежнюю); банк держит первый названный игрок (параметр rotate_banker передаёт его налево каждый раунд); 5 раундов (параметр rounds); побеждает больший баланс."""

PRESETS = (
    GamePreset("bank_dice", BankDice, BankDiceParams(name="bank_dice"), 3, None,
               "Bank dice (Банк на костях): punters bet on a number 1–6; three dice; 1, 2 or 3 matches pay the "
               "stake once, twice or three times, no match loses it (decided: bets entered on the page, one per "
               "punter per round, the first named player is the banker, 5 rounds)",
               "Банк на костях: понтёры ставят на число 1–6; три кости; 1, 2 или 3 совпадения приносят ставку "
               "один, два или три раза, без совпадений ставка проиграна (решено: ставки вводятся на странице, по "
               "одной на понтёра за раунд, банкомёт — первый названный игрок, 5 раундов)",
               "games.md §14", RULES_EN, RULES_RU),
)

__all__ = ["BankDice", "BankDiceParams", "PRESETS"]
