"""Liar dice (Лжец), games.md §1 — a referee aid: claims and calls are entered, the camera reads the lifted cup.

Rules (games.md §1, article lines 255–263): five dice, a cup; every player starts with 3 stakes. The player
shakes, looks under the cup and announces a combination, true or false. His left-hand neighbour either calls
"Лжец!" (liar) or accepts. On a call the cup is lifted: if the claim was true the challenger puts 1 stake in the
centre; if false the claimant puts 1 stake in the centre and gives 1 to the player on his left; either way the
turn passes to the left. On accepting, the cup passes to the neighbour, who may re-throw any dice (the dice in
the cup no longer matter) and must announce more than the previous claim (seed: "three 3s and two 2s" → at
least "three 4s and two 2s"). A player who has lost all his stakes is out; the last player with a stake wins
the pot.

The camera cannot see into the cup: claims (``{"claim": [3, 3, 3, 2, 2]}`` or ``"33322"``) and calls
(``{"call": "liar"}`` / ``{"call": "accept"}``) are entered; when the cup is lifted the reader reads the five
dice (``{"roll": [faces]}``) and kosti says whether the claim holds and moves the stakes.

Decisions (labelled): the ranking the article leaves to the game General (not described) is kosti's
poker-dice list (:mod:`.hands`): nothing < pair < two pairs < three of a kind < small straight 1-5 < large
straight 2-6 < full house < four of a kind < five of a kind, then by faces (``straights = false`` drops the
straights); a claim holds when the dice show the claimed hand or a better one; a claimant with a single stake
pays the centre first; accepting the highest hand (five 6s) is refused, since nothing can exceed it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Self, Sequence

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from .base import OVER_MOVES, ChoiceOption, Choose, GameParams, GamePreset, Moves, TableGame, ev, faces_text, thaw
from .hands import hand_key, hand_name, parse_hand

_TOP = (6, 6, 6, 6, 6)


@dataclass(frozen=True)
class LiarDiceParams(GameParams):
    """Liar dice parameters: ``stakes`` (3 each), ``straights`` (rank the straights, true)."""

    stakes: int = 3
    straights: bool = True

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"stakes": (1, 1000)}


@dataclass(frozen=True)
class LiarDice(TableGame[LiarDiceParams]):
    """Liar dice state: ``scores`` are the stakes in front of each player; ``pot`` (stakes in the centre);
    ``phase`` (``claim`` → ``respond`` → ``reveal``); ``claim`` (the claimed hand, sorted high to low; empty
    when a new chain starts); ``claimant`` (seat); ``responder`` (seat that calls or accepts)."""

    pot: int = 0
    phase: str = "claim"
    claim: tuple[int, ...] = ()
    claimant: int = 0
    responder: int = 0

    game: ClassVar[str] = "liar_dice"
    CHOICES: ClassVar[tuple[str, ...]] = ("claim", "call")
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"claim": [3, 3, 3, 2, 2]} / {"claim": "33322"}', "the announced hand", "объявленная комбинация"),
        ('{"call": "liar"} / {"call": "accept"}', "«Liar!» (lift the cup) or accept the claim",
         "«Лжец!» (открыть стакан) или поверить"),
    )
    PARAMS: ClassVar[type[GameParams]] = LiarDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 12)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("stakes", "ставки")

    @classmethod
    def start(cls, params: GameParams, players: Sequence[str], scores: Mapping[str, int] | None = None) -> Self:
        """As :meth:`TableGame.start`; every player starts with ``stakes`` stakes unless ``scores`` says."""
        assert isinstance(params, LiarDiceParams), params  # cls.PARAMS
        st = super().start(params, players, None)
        sc = [params.stakes] * len(st.names)
        for k, v in dict(scores or {}).items():
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise BadInput(f"scores.{k}: stakes must be a non-negative integer, got {v!r}")
            sc[st.names.index(k)] = v
        if sum(1 for v in sc if v > 0) < 2:
            raise BadInput("scores: at least two players need a stake")
        st = dataclasses.replace(st, scores=tuple(sc))
        return dataclasses.replace(st, mover=st._active_from(0))

    def _active_from(self, seat: int) -> int:
        n = len(self.names)
        for k in range(n):
            s = (seat + k) % n
            if self.scores[s] > 0:
                return s
        return seat

    def _left(self, seat: int) -> int:
        return self._active_from(self._next_seat(seat))

    @property
    def dice_to_throw(self) -> int:
        return 5 if not self.over and self.phase == "reveal" else 0

    def marks(self, i: int) -> list[tuple[str, str]]:
        return [("out", "вне игры")] if self.scores[i] == 0 else []

    def extra_summary(self) -> dict[str, Any]:
        return {"phase": self.phase, "pot": self.pot, "claim": list(self.claim) or None,
                "claimant": self.names[self.claimant] if self.claim else None}

    def status(self) -> Reason | None:
        en, ru = f"pot {self.pot}", f"в центре {self.pot}"
        if self.claim:
            cen, cru = hand_name(self.claim, self.params.straights)
            en += f"; {self.names[self.claimant]} claims {cen}"
            ru += f"; {self.names[self.claimant]} объявляет: {cru}"
        return Reason(en, ru)

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("there is no stopping in Liar dice", "в «Лжеце» не останавливаются")
        cup = Reason("the cup stays covered until someone calls «Liar!»", "стакан открывают только после «Лжец!»")
        if self.phase == "claim":
            more: tuple[str, str] | None = None
            if self.claim:
                cen, cru = hand_name(self.claim, self.params.straights)
                more = (f" — more than {cen}", f" — больше, чем {cru}")
            hint = Reason(f"{name}: look under the cup and announce a hand{more[0] if more else ''}",
                          f"{name}: посмотрите под стакан и объявите комбинацию{more[1] if more else ''}")
            return Moves(False, 0, False, False, (), cup, no, hint, (),
                         (ChoiceOption("claim", None, "announce a hand: five faces, e.g. 3 3 3 2 2",
                                       "объявить комбинацию: пять граней, например 3 3 3 2 2"),))
        if self.phase == "respond":
            hint = Reason(f"{name}: call «Liar!» or accept", f"{name}: скажите «Лжец!» или примите")
            choices = [ChoiceOption("call", "liar", "«Liar!» — lift the cup", "«Лжец!» — открыть стакан")]
            if self.claim != _TOP:
                choices.append(ChoiceOption("call", "accept", "accept and take the cup", "принять и взять стакан"))
            return Moves(False, 0, False, False, (), cup, no, hint, (), tuple(choices))
        return Moves(True, 5, False, False, (), None, no,
                     Reason("lift the cup: the camera reads the five dice", "поднимите стакан: камера прочтёт "
                            "пять костей"), (5,))

    def _choose(self, key: str, value: Any, evs: list[Event]) -> LiarDice:
        p = self.params
        v = thaw(value)
        name = self.names[self.mover]
        if key == "claim":
            if self.phase != "claim":
                raise RuleViolation("a claim is made by the player holding the cup, before the call",
                                    "объявляет тот, у кого стакан, до ответа соседа")
            hand = parse_hand(v)
            if self.claim and hand_key(hand, p.straights) <= hand_key(self.claim, p.straights):
                old, old_ru = hand_name(self.claim, p.straights)
                raise RuleViolation(f"each announcement must exceed the previous one ({old})",
                                    f"каждое объявление должно быть больше предыдущего ({old_ru})")
            en, ru = hand_name(hand, p.straights)
            evs.append(ev("claim", name, f"{name} announces {en}", f"{name} объявляет: {ru}", faces=hand))
            return dataclasses.replace(self, claim=hand, claimant=self.mover, phase="respond",
                                       responder=self._left(self.mover), mover=self._left(self.mover))
        if self.phase != "respond":
            raise RuleViolation("there is no claim to answer", "отвечать не на что")
        if v == "accept":
            if self.claim == _TOP:
                raise RuleViolation("nothing exceeds five 6s: call «Liar!»",
                                    "больше пяти шестёрок не бывает: скажите «Лжец!»")
            evs.append(ev("accept", name, f"{name} accepts and takes the cup", f"{name} принимает и берёт стакан"))
            return dataclasses.replace(self, phase="claim")
        if v == "liar":
            evs.append(ev("call", name, f"{name}: «Liar!» — the cup is lifted", f"{name}: «Лжец!» — стакан поднят"))
            return dataclasses.replace(self, phase="reveal")
        raise BadInput(f"call: 'liar' or 'accept', got {v!r}")

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> LiarDice:
        p = self.params
        c, r = self.claimant, self.responder
        en, ru = hand_name(faces, p.straights)
        holds = hand_key(faces, p.straights) >= hand_key(self.claim, p.straights)
        evs.append(ev("reveal", self.names[c], f"the cup shows {faces_text(faces)} ({en}): the claim "
                      f"{'holds' if holds else 'is false'}", f"под стаканом {faces_text(faces)} ({ru}): объявление "
                      f"{'верно' if holds else 'ложно'}", faces=faces))
        st = self
        pot = self.pot
        if holds:
            st = dataclasses.replace(st, scores=st._add(r, -1, evs, f"{self.names[r]} puts a stake in the centre",
                                                        f"{self.names[r]} кладёт ставку в центр", kind="settle"))
            pot += 1
        else:
            st = dataclasses.replace(st, scores=st._add(c, -1, evs, f"{self.names[c]} puts a stake in the centre",
                                                        f"{self.names[c]} кладёт ставку в центр", kind="settle"))
            pot += 1
            if st.scores[c] > 0:
                st = dataclasses.replace(st, scores=st._add(c, -1, evs, f"{self.names[c]} gives a stake to "
                                                            f"{self.names[r]}", f"{self.names[c]} отдаёт ставку "
                                                            f"{self.names[r]}", kind="settle"))
                st = dataclasses.replace(st, scores=st._add(r, 1, evs, f"{self.names[r]} receives a stake",
                                                            f"{self.names[r]} получает ставку", kind="settle"))
        st = dataclasses.replace(st, pot=pot, claim=(), phase="claim")
        for s in (c, r):
            if st.scores[s] == 0:
                evs.append(ev("out", self.names[s], f"{self.names[s]} has no stakes left and is out",
                              f"{self.names[s]}: ставок не осталось, выход из игры"))
        alive = [i for i, v in enumerate(st.scores) if v > 0]
        if len(alive) == 1:
            w = alive[0]
            st = dataclasses.replace(st, scores=st._add(w, pot, evs, f"{self.names[w]} takes the pot ({pot})",
                                                        f"{self.names[w]} забирает банк ({pot})", kind="settle"),
                                     pot=0)
            return st._finish((w,), evs)
        nxt = st._left(c)
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} takes the cup", f"стакан переходит: {self.names[nxt]}"))
        return dataclasses.replace(st, mover=nxt)

    def random_choice(self, rng: Any) -> Choose | None:
        p = self.params
        if self.phase == "claim":
            for _ in range(50):
                hand = parse_hand([rng.randint(1, 6) for _ in range(5)])
                if not self.claim or hand_key(hand, p.straights) > hand_key(self.claim, p.straights):
                    return Choose("claim", list(hand))
            return Choose("claim", list(_TOP))
        if self.phase == "respond":
            if self.claim == _TOP or rng.random() < 0.5:
                return Choose("call", "liar")
            return Choose("call", "accept")
        return None


RULES_EN = """A referee aid: the camera cannot see into the cup, so claims and calls are entered on the page; when the cup is lifted the camera reads the dice and kosti says whether the claim holds.

Five dice and a cup; every player starts with 3 stakes. The player shakes, looks under the cup and announces a hand, true or false. His left-hand neighbour calls «Liar!» or accepts. On «Liar!» the cup is lifted: if the claim holds, the challenger puts a stake in the centre; if not, the claimant puts a stake in the centre and gives one to the player on his left. Either way the turn passes to the left. On accepting, the neighbour takes the cup, may throw again, and must announce more than the previous claim (three 3s and two 2s → at least three 4s and two 2s).

A player without stakes is out; the last player with a stake wins the centre pot.

Ranking (the article refers to the game General, which it does not describe; kosti's choice): nothing < a pair < two pairs < three of a kind < small straight 1-2-3-4-5 < large straight 2-3-4-5-6 < full house < four of a kind < five of a kind; the same rank compares by faces, the biggest group first. A claim holds when the dice show it or a better hand."""

RULES_RU = """Помощник судьи: камера не видит под стаканом, поэтому объявления и ответы вводятся на странице; когда стакан поднят, камера читает кости, и kosti говорит, верно ли объявление.

Пять костей и стакан; у каждого игрока 3 ставки. Игрок трясёт стакан, смотрит под него и объявляет комбинацию — правду или нет. Сосед слева говорит «Лжец!» или принимает. После «Лжец!» стакан поднимают: если объявление верно, вызвавший кладёт ставку в центр; если ложно, объявивший кладёт ставку в центр и отдаёт одну соседу слева. В любом случае ход переходит налево. Приняв, сосед берёт стакан, может перебросить кости и должен объявить больше, чем было (три тройки и две двойки → не меньше трёх четвёрок и двух двоек).

Игрок без ставок выбывает; последний, у кого осталась ставка, забирает банк.

Старшинство (статья ссылается на игру «генерал», которая не описана; выбор kosti): ничего < пара < две пары < тройка < малый стрит 1-2-3-4-5 < большой стрит 2-3-4-5-6 < фул < каре < пять одинаковых; при равном ранге сравниваются очки, начиная с самой большой группы. Объявление верно, если на костях оно или комбинация старше."""

PRESETS = (
    GamePreset("liar_dice", LiarDice, LiarDiceParams(name="liar_dice"), 5, None,
               "Liar dice (Лжец), referee aid: claims and «Liar!» calls are entered, the camera reads the lifted "
               "cup and settles the stakes; 3 stakes each, last with a stake wins the pot (decided: poker-dice "
               "ranking with straights, since the article's General list is missing; a better hand makes a claim "
               "true)",
               "Лжец, помощник судьи: объявления и «Лжец!» вводятся, камера читает поднятый стакан и рассчитывает "
               "ставки; по 3 ставки, банк забирает последний со ставкой (решено: старшинство покера на костях со "
               "стритами, так как списка «генерала» в статье нет; старшая комбинация делает объявление верным)",
               "games.md §1", RULES_EN, RULES_RU),
)

__all__ = ["LiarDice", "LiarDiceParams", "PRESETS"]
