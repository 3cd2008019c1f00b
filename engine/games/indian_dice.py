"""Indian dice (Индийские кости), games.md §4: poker with five dice, without straights, up to three throws.

Rules (games.md §4, article lines 289–298): ranks low to high — one pair, two pairs, three of a kind, full
house, four of a kind, five of a kind (no straights). The first player may throw up to 3 times and stop after
the 1st or the 2nd ("I stop": :class:`~kosti.engine.game.Bank`); the others may make as many throws as he
made. The most valuable combination wins the round. A match is usually 3 rounds: everyone plays rounds 1 and
2; only two players play round 3, by prior agreement the two strongest or the two weakest.

Decisions (labelled; parameters where players disagree):

* ``keep_dice`` (false): the article does not mention keeping dice, so every throw is of all five; with true
  the player may set dice aside (``{"keep": [faces]}``) and throws the rest;
* ``others_may_stop`` (true): "могут" (may) — the others may stop earlier than the first player's count;
* ties (not covered): hands of the same rank compare by their faces (a pair of 6s beats a pair of 2s, then the
  other dice); ``tie = "rank_only"`` makes the same rank a tie; a tie shares the round (each scores 1);
* the score column counts rounds won; round 3 is played by the two players with the most (``round3 =
  "strongest"``) or the fewest (``"weakest"``) rounds won, ties for a place going to the earlier seat; or by
  everyone (``"all"``); the most rounds won wins the match, a tie is a shared victory;
* round *k* starts with seat *k* − 1 (the start passes to the left each round).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from ..plurals import count_en, ru_plural
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, dice_en, dice_ru, ev, faces_text, sort_winners
from .hands import hand_key, hand_name


@dataclass(frozen=True)
class IndianDiceParams(GameParams):
    """Indian dice parameters: ``rounds`` (3), ``max_throws`` (3), ``round3`` (``strongest`` / ``weakest`` /
    ``all``), ``keep_dice`` (false), ``others_may_stop`` (true), ``tie`` (``faces`` / ``rank_only``)."""

    rounds: int = 3
    max_throws: int = 3
    round3: str = "strongest"
    keep_dice: bool = False
    others_may_stop: bool = True
    tie: str = "faces"

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"rounds": (1, 20), "max_throws": (1, 10)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"round3": ("strongest", "weakest", "all"),
                                                        "tie": ("faces", "rank_only")}


@dataclass(frozen=True)
class IndianDice(TableGame[IndianDiceParams]):
    """Indian dice state: ``round``; ``order`` (seats playing this round, in order); ``pos`` (index into
    ``order`` of the mover); ``limit`` (throws allowed after the first player's turn, 0 before); ``throws``
    (throws in this turn); ``kept`` (dice set aside); ``hand`` (the current five dice); ``hands`` (final hands
    of this round, one per seat in ``order`` that has played)."""

    round: int = 1
    order: tuple[int, ...] = ()
    pos: int = 0
    limit: int = 0
    throws: int = 0
    kept: tuple[int, ...] = ()
    hand: tuple[int, ...] = ()
    hands: tuple[tuple[int, ...], ...] = ()

    game: ClassVar[str] = "indian_dice"
    HAS_STOP: ClassVar[bool] = True
    PARAMS: ClassVar[type[GameParams]] = IndianDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 12)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("rounds won", "выигранные раунды")

    def _opened(self) -> IndianDice:
        order = tuple(range(len(self.names)))
        return dataclasses.replace(self, order=order, mover=order[0])

    @property
    def _cap(self) -> int:
        return self.params.max_throws if self.pos == 0 else self.limit

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 5 - len(self.kept)

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "throws": self.throws, "throw_limit": self._cap,
                "hand": list(self.hand), "kept": list(self.kept),
                "round_players": [self.names[i] for i in self.order]}

    def status(self) -> Reason | None:
        en = f"round {self.round}: throw {self.throws} of {self._cap}"
        ru = f"раунд {self.round}: бросок {self.throws} из {self._cap}"
        if self.hand:
            hen, hru = hand_name(self.hand)
            en, ru = f"{en}; hand: {hen}", f"{ru}; комбинация: {hru}"
        return Reason(en, ru)

    def moves(self) -> Moves:
        p = self.params
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        n = self.dice_to_throw
        why_bank = None
        if self.throws == 0:
            why_bank = Reason("throw at least once", "сначала бросьте хотя бы раз")
        elif self.pos > 0 and not p.others_may_stop:
            why_bank = Reason(f"you throw as many times as the first player ({self.limit})",
                              f"вы бросаете столько же раз, сколько первый игрок ({self.limit})")
        hint = Reason(f"{name}: throw {dice_en(n)} (throw {self.throws + 1} of at most {self._cap})"
                      + (" or stop" if why_bank is None else ""),
                      f"{name}: бросайте {dice_ru(n)} (бросок {self.throws + 1}, всего не больше "
                      f"{self._cap})" + (" или скажите «хватит»" if why_bank is None else ""))
        return Moves(True, n, False, why_bank is None, (), None, why_bank, hint, (n,),
                     bank_label=Reason("I stop", "хватит"))

    def _keep(self, faces: tuple[int, ...], evs: list[Event]) -> IndianDice:
        p = self.params
        if not p.keep_dice:
            raise RuleViolation("in these rules every throw is of all five dice (keep_dice is off)",
                                "в этих правилах каждый раз бросают все пять костей (keep_dice выключен)")
        if self.throws == 0:
            raise RuleViolation("there is no throw to set dice aside from",
                                "нет броска, из которого можно отложить кости")
        if Counter(faces) - Counter(self.hand) or len(faces) >= 5:
            raise BadInput(f"keep {faces_text(faces)}: set aside up to four dice of the hand "
                           f"{faces_text(self.hand)}")
        name = self.names[self.mover]
        evs.append(ev("keep", name, f"{name} keeps {faces_text(faces)}", f"{name} оставляет "
                      f"{faces_text(faces)}", faces=faces))
        return dataclasses.replace(self, kept=tuple(faces))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> IndianDice:
        name = self.names[self.mover]
        hand = tuple(self.kept) + faces
        en, ru = hand_name(hand)
        evs.append(ev("throw", name, f"{name} throws {faces_text(faces)}: {en}",
                      f"{name} выбрасывает {faces_text(faces)}: {ru}", faces=faces))
        st = dataclasses.replace(self, hand=hand, throws=self.throws + 1, kept=())
        if st.throws >= st._cap:
            return st._end_turn(evs)
        return st

    def _bank(self, evs: list[Event]) -> IndianDice:
        name = self.names[self.mover]
        evs.append(ev("stop", name, f"{name} stops after {count_en(self.throws, 'throw')}",
                      f"{name}: «хватит» после {self.throws} {ru_plural(self.throws, 'броска', 'бросков', 'бросков')}"))
        return self._end_turn(evs)

    def _end_turn(self, evs: list[Event]) -> IndianDice:
        limit = self.throws if self.pos == 0 else self.limit
        hands = self.hands + (self.hand,)
        st = dataclasses.replace(self, hands=hands, limit=limit, throws=0, kept=(), hand=())
        if len(hands) < len(self.order):
            nxt = self.order[len(hands)]
            evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw (at most {limit})",
                          f"бросает {self.names[nxt]} (не больше {limit} раз)"))
            return dataclasses.replace(st, pos=len(hands), mover=nxt)
        return st._end_round(evs)

    def _end_round(self, evs: list[Event]) -> IndianDice:
        p = self.params
        keys = [hand_key(h) for h in self.hands]
        if p.tie == "rank_only":
            keys = [k[:1] for k in keys]
        best = max(keys)
        scores = self.scores
        st = self
        for seat, k, h in zip(self.order, keys, self.hands):
            if k == best:
                en, ru = hand_name(h)
                scores = dataclasses.replace(st, scores=scores)._add(
                    seat, 1, evs, f"{self.names[seat]} wins round {self.round} with {en}",
                    f"{self.names[seat]} выигрывает раунд {self.round}: {ru}", kind="win_round")
        st = dataclasses.replace(self, scores=scores, hands=())
        if self.round >= p.rounds:
            return st._finish(sort_winners(scores), evs)
        r = self.round + 1
        n = len(self.names)
        if r == 3 and p.round3 != "all" and n > 2:
            ranked = sorted(range(n), key=lambda i: (-scores[i] if p.round3 == "strongest" else scores[i], i))
            order = tuple(sorted(ranked[:2]))
            who = " and ".join(self.names[i] for i in order)
            who_ru = " и ".join(self.names[i] for i in order)
            evs.append(ev("round", who, f"round 3 is played by {who} (the {p.round3})",
                          f"третий раунд играют {who_ru} ("
                          f"{'сильнейшие' if p.round3 == 'strongest' else 'слабейшие'})"))
        else:
            start = (r - 1) % n
            order = tuple((start + k) % n for k in range(n))
            evs.append(ev("round", self.names[order[0]], f"round {r}: {self.names[order[0]]} starts",
                          f"раунд {r}: начинает {self.names[order[0]]}"))
        return dataclasses.replace(st, round=r, order=order, pos=0, limit=0, mover=order[0])


RULES_EN = """Five dice, poker without straights. Combinations, low to high: a pair, two pairs, three of a kind, full house (3 + 2), four of a kind, five of a kind.

The first player may throw up to three times and may stop after the first or the second throw ("I stop"). The others may make as many throws as the first player made (they may stop earlier). The most valuable combination wins the round and scores 1.

A match is three rounds: everyone plays rounds 1 and 2; only two players play round 3 — by agreement the two strongest (most rounds won; parameter round3 = weakest for the two weakest). The most rounds won wins the match.

Decided by kosti: every throw is of all five dice (parameter keep_dice lets players set dice aside); hands of the same rank compare by their faces (a pair of 6s beats a pair of 2s, then the other dice); an exact tie shares the round; round k is started by the next player to the left."""

RULES_RU = """Пять костей, покер без стрита. Комбинации по возрастанию: пара, две пары, тройка, фул (3 + 2), каре, пять одинаковых.

Первый игрок может бросать до трёх раз и остановиться после первого или второго броска («хватит»). Остальные могут сделать столько бросков, сколько сделал первый (можно и меньше). Самая ценная комбинация выигрывает раунд и приносит 1 очко.

Партия — три раунда: первые два играют все, третий — только двое, по договорённости двое сильнейших (больше выигранных раундов; параметр round3 = weakest — двое слабейших). Побеждает выигравший больше раундов.

Решено в kosti: каждый раз бросают все пять костей (параметр keep_dice разрешает откладывать кости); комбинации одного ранга сравниваются по очкам (пара шестёрок старше пары двоек, затем остальные кости); полное равенство делит раунд; раунд k начинает следующий игрок слева."""

PRESETS = (
    GamePreset("indian_dice", IndianDice, IndianDiceParams(name="indian_dice"), 5, None,
               "Indian dice (Индийские кости): poker with five dice, no straights; the first player throws up "
               "to 3 times and may stop, the others as many times as he did; best hand wins the round; 3 rounds, "
               "round 3 for the two strongest (decided: all five dice every throw, same rank → higher faces, "
               "exact tie shares the round)",
               "Индийские кости: покер пятью костями без стрита; первый бросает до 3 раз и может остановиться, "
               "остальные — столько же; лучшая комбинация выигрывает раунд; 3 раунда, третий — двое сильнейших "
               "(решено: каждый раз все пять костей, при равном ранге — старшие очки, полное равенство делит раунд)",
               "games.md §4", RULES_EN, RULES_RU),
)

__all__ = ["IndianDice", "IndianDiceParams", "PRESETS"]
