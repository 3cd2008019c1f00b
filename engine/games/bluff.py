"""Bluff (Блеф), games.md §15 — a referee aid: the claim and the call are entered, the camera reads the hands.

Rules (games.md §15, article lines 464–486): usually two players, five dice each in a cup turned upside down.
The lead player hides his throw and names any combination, true or invented. The opponent may call "Блеф!":
if he really exposed the lead, the lead loses. If he accepts instead, he throws for an answering combination;
then the lead reveals: if the new combination is better the lead loses, otherwise the lead wins. The hands are
poker hands agreed beforehand; the number of throws per player is agreed too.

Entered: the claim (``{"claim": [faces]}``), the call (``{"call": "bluff"}`` / ``{"call": "accept"}``). Read by
the camera: the answer throw(s) (``{"roll": [faces]}``; "stop" keeps the current answer) and the lead's hidden
dice when the cup is lifted (``{"roll": [faces]}``).

Decisions (labelled; parameters where players disagree):

* the ranking is kosti's poker-dice list with straights (:mod:`.hands`), the same as Liar dice;
* a true claim that was called "Bluff!" (the article does not say): the caller loses the round;
* the answer is compared with the lead's **revealed** dice (``compare = "revealed"``) or with his **claim**
  (``"claimed"``; then the cup need not be lifted); an equal hand does not beat the lead;
* ``answer_throws`` (1–3): how many throws the answer may take (all five dice each time), stopping early allowed;
* two players; the lead alternates each round; a won round scores 1; the first to ``target`` (3) wins.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from .base import OVER_MOVES, ChoiceOption, Choose, GameParams, GamePreset, Moves, TableGame, ev, faces_text, thaw
from .hands import hand_key, hand_name, parse_hand


@dataclass(frozen=True)
class BluffParams(GameParams):
    """Bluff parameters: ``target`` (3 round wins), ``compare`` (``revealed`` / ``claimed``), ``answer_throws``
    (1–3), ``straights`` (true)."""

    target: int = 3
    compare: str = "revealed"
    answer_throws: int = 1
    straights: bool = True

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"target": (1, 100), "answer_throws": (1, 3)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"compare": ("revealed", "claimed")}


@dataclass(frozen=True)
class Bluff(TableGame[BluffParams]):
    """Bluff state: ``lead`` (seat); ``phase`` (``claim`` → ``call`` → ``answer`` → ``reveal``); ``claim``;
    ``called`` (the opponent called "Bluff!"); ``answer`` (the opponent's current hand); ``answer_throws``
    (throws he made); ``round``."""

    lead: int = 0
    phase: str = "claim"
    claim: tuple[int, ...] = ()
    called: bool = False
    answer: tuple[int, ...] = ()
    throws_made: int = 0
    round: int = 1

    game: ClassVar[str] = "bluff"
    HAS_STOP: ClassVar[bool] = True
    CHOICES: ClassVar[tuple[str, ...]] = ("claim", "call")
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"claim": [6, 6, 6, 2, 2]}', "the lead's announced hand", "объявленная комбинация ведущего"),
        ('{"call": "bluff"} / {"call": "accept"}', "«Bluff!» (lift the cup) or accept and throw an answer",
         "«Блеф!» (открыть стакан) или принять и бросать ответ"),
    )
    PARAMS: ClassVar[type[GameParams]] = BluffParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 2)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("rounds won", "выигранные раунды")

    @property
    def opponent(self) -> int:
        """Seat of the player answering the lead."""
        return 1 - self.lead

    @property
    def dice_to_throw(self) -> int:
        return 5 if not self.over and self.phase in ("answer", "reveal") else 0

    def marks(self, i: int) -> list[tuple[str, str]]:
        return [("lead", "ведущий")] if i == self.lead else []

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "phase": self.phase, "lead": self.names[self.lead],
                "claim": list(self.claim) or None, "answer": list(self.answer) or None}

    def _name(self, hand: tuple[int, ...]) -> tuple[str, str]:
        return hand_name(hand, self.params.straights)

    def _key(self, hand: tuple[int, ...]) -> tuple[int, ...]:
        return hand_key(hand, self.params.straights)

    def status(self) -> Reason | None:
        en, ru = f"round {self.round}", f"раунд {self.round}"
        if self.claim:
            cen, cru = self._name(self.claim)
            en, ru = f"{en}; {self.names[self.lead]} claims {cen}", f"{ru}; {self.names[self.lead]} объявляет: {cru}"
        if self.answer:
            aen, aru = self._name(self.answer)
            en, ru = f"{en}; answer {aen}", f"{ru}; ответ: {aru}"
        return Reason(en, ru)

    def moves(self) -> Moves:
        p = self.params
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        hidden = Reason("the lead's cup stays covered", "стакан ведущего закрыт")
        no = Reason("nothing to stop now", "останавливаться сейчас нечего")
        if self.phase == "claim":
            return Moves(False, 0, False, False, (), hidden, no,
                         Reason(f"{name} (lead): throw under the cup and announce a hand",
                                f"{name} (ведущий): бросьте под стаканом и объявите комбинацию"), (),
                         (ChoiceOption("claim", None, "announce a hand: five faces, e.g. 6 6 6 2 2",
                                       "объявить комбинацию: пять граней, например 6 6 6 2 2"),))
        if self.phase == "call":
            return Moves(False, 0, False, False, (), hidden, no,
                         Reason(f"{name}: call «Bluff!» or accept and answer", f"{name}: скажите «Блеф!» или "
                                f"примите и отвечайте"), (),
                         (ChoiceOption("call", "bluff", "«Bluff!» — lift the cup", "«Блеф!» — открыть стакан"),
                          ChoiceOption("call", "accept", "accept and throw an answer", "принять и бросать ответ")))
        if self.phase == "answer":
            why = None if self.throws_made else Reason("throw your answer first", "сначала бросьте ответ")
            return Moves(True, 5, False, why is None, (), None, why,
                         Reason(f"{name}: throw five dice for your answer (throw {self.throws_made + 1} of "
                                f"{p.answer_throws})", f"{name}: бросайте пять костей для ответа (бросок "
                                f"{self.throws_made + 1} из {p.answer_throws})"), (5,),
                         bank_label=Reason("keep this answer", "оставить этот ответ"))
        return Moves(True, 5, False, False, (), None, no,
                     Reason(f"{self.names[self.lead]}: lift the cup — the camera reads your dice",
                            f"{self.names[self.lead]}: поднимите стакан — камера прочтёт ваши кости"), (5,))

    def _choose(self, key: str, value: Any, evs: list[Event]) -> Bluff:
        v = thaw(value)
        name = self.names[self.mover]
        if key == "claim":
            if self.phase != "claim":
                raise RuleViolation("the lead announces before the call", "ведущий объявляет до ответа")
            hand = parse_hand(v)
            en, ru = self._name(hand)
            evs.append(ev("claim", name, f"{name} announces {en}", f"{name} объявляет: {ru}", faces=hand))
            return dataclasses.replace(self, claim=hand, phase="call", mover=self.opponent)
        if self.phase != "call":
            raise RuleViolation("there is no claim to answer", "отвечать не на что")
        if v == "bluff":
            evs.append(ev("call", name, f"{name}: «Bluff!» — the cup is lifted", f"{name}: «Блеф!» — стакан поднят"))
            return dataclasses.replace(self, called=True, phase="reveal", mover=self.lead)
        if v == "accept":
            evs.append(ev("accept", name, f"{name} accepts and throws an answer", f"{name} принимает и бросает ответ"))
            return dataclasses.replace(self, phase="answer")
        raise BadInput(f"call: 'bluff' or 'accept', got {v!r}")

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Bluff:
        p = self.params
        hand = tuple(sorted(faces, reverse=True))
        en, ru = self._name(hand)
        if self.phase == "answer":
            name = self.names[self.opponent]
            evs.append(ev("answer", name, f"{name} throws {faces_text(faces)}: {en}",
                          f"{name} выбрасывает {faces_text(faces)}: {ru}", faces=faces))
            st = dataclasses.replace(self, answer=hand, throws_made=self.throws_made + 1)
            return st._answered(evs) if st.throws_made >= p.answer_throws else st
        lead = self.names[self.lead]
        evs.append(ev("reveal", lead, f"{lead}'s cup shows {faces_text(faces)}: {en}",
                      f"под стаканом {lead}: {faces_text(faces)} — {ru}", faces=faces))
        if self.called:
            true = self._key(hand) >= self._key(self.claim)
            if true:
                return self._round_won(self.lead, evs, "the claim was true: the caller loses",
                                       "объявление было верным: проигрывает вызвавший")
            return self._round_won(self.opponent, evs, "a bluff: the lead loses", "блеф: ведущий проигрывает")
        return self._compare(hand, evs)

    def _bank(self, evs: list[Event]) -> Bluff:
        return self._answered(evs)

    def _answered(self, evs: list[Event]) -> Bluff:
        if self.params.compare == "claimed":
            return self._compare(self.claim, evs)
        return dataclasses.replace(self, phase="reveal", mover=self.lead)

    def _compare(self, lead_hand: tuple[int, ...], evs: list[Event]) -> Bluff:
        if self._key(self.answer) > self._key(lead_hand):
            return self._round_won(self.opponent, evs, "the answer is better: the lead loses",
                                   "ответ сильнее: ведущий проигрывает")
        return self._round_won(self.lead, evs, "the answer is not better: the lead wins",
                               "ответ не сильнее: ведущий выигрывает")

    def _round_won(self, seat: int, evs: list[Event], en: str, ru: str) -> Bluff:
        p = self.params
        sc = self._add(seat, 1, evs, f"{en}; {self.names[seat]} wins round {self.round}",
                       f"{ru}; {self.names[seat]} выигрывает раунд {self.round}", kind="win_round")
        st = dataclasses.replace(self, scores=sc)
        if sc[seat] >= p.target:
            return st._finish((seat,), evs)
        lead = 1 - self.lead
        evs.append(ev("round", self.names[lead], f"round {self.round + 1}: {self.names[lead]} leads",
                      f"раунд {self.round + 1}: ведёт {self.names[lead]}"))
        return dataclasses.replace(st, lead=lead, mover=lead, phase="claim", claim=(), called=False, answer=(),
                                   throws_made=0, round=self.round + 1)

    def random_choice(self, rng: Any) -> Choose | None:
        if self.phase == "claim":
            return Choose("claim", [rng.randint(1, 6) for _ in range(5)])
        if self.phase == "call":
            return Choose("call", rng.choice(["bluff", "accept"]))
        return None


RULES_EN = """A referee aid for two players, five dice each in a cup turned upside down. The claim and the call are entered on the page; the camera reads the answer and, when the cup is lifted, the lead's dice.

The lead hides his throw and names any hand, true or invented. The opponent may call «Bluff!»: the cup is lifted, and if the claim was false the lead loses the round. If he accepts instead, he throws for an answering hand; then the lead reveals: if the answer is better the lead loses, otherwise he wins.

Decided by kosti: the ranking is the one of Liar dice (nothing < pair < two pairs < three of a kind < small straight < large straight < full house < four of a kind < five of a kind, then faces); a true claim called «Bluff!» loses the round for the caller; the answer is compared with the lead's revealed dice (parameter compare = claimed: with his claim); an equal hand does not beat the lead; one answer throw (parameter answer_throws, up to 3); the lead alternates; first to 3 rounds wins."""

RULES_RU = """Помощник судьи для двоих; у каждого пять костей в перевёрнутом стакане. Объявление и ответ вводятся на странице; камера читает ответный бросок и, когда стакан поднят, кости ведущего.

Ведущий прячет бросок и называет любую комбинацию — настоящую или выдуманную. Соперник может сказать «Блеф!»: стакан поднимают, и если объявление ложно, ведущий проигрывает раунд. Если соперник принимает, он бросает ответную комбинацию; затем ведущий открывает стакан: если ответ сильнее, ведущий проиграл, иначе выиграл.

Решено в kosti: старшинство как в «Лжеце» (ничего < пара < две пары < тройка < малый стрит < большой стрит < фул < каре < пять одинаковых, затем очки); за верное объявление, названное блефом, раунд проигрывает вызвавший; ответ сравнивается с открытыми костями ведущего (параметр compare = claimed — с его объявлением); равная комбинация ведущего не бьёт; один ответный бросок (параметр answer_throws, до 3); ведущий меняется; побеждает первым выигравший 3 раунда."""

PRESETS = (
    GamePreset("bluff", Bluff, BluffParams(name="bluff"), 5, 3,
               "Bluff (Блеф), referee aid for two: the lead's claim and the «Bluff!» call are entered, the camera "
               "reads the answer and the lifted cup (decided: Liar-dice ranking, a true claim called bluff loses "
               "for the caller, the answer is compared with the revealed dice, one answer throw, first to 3)",
               "Блеф, помощник судьи для двоих: объявление ведущего и «Блеф!» вводятся, камера читает ответ и "
               "поднятый стакан (решено: старшинство как в «Лжеце», за верное объявление, названное блефом, "
               "проигрывает вызвавший, ответ сравнивается с открытыми костями, один ответный бросок, до 3 побед)",
               "games.md §15", RULES_EN, RULES_RU),
)

__all__ = ["Bluff", "BluffParams", "PRESETS"]
