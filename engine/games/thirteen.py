"""Thirteen (Игра в 13), games.md §2: a d6 and a 2–7 die, five throws, make multiples of 13.

Rules (games.md §2, article lines 264–282): two dice, an ordinary one (1–6) and one whose faces go from 2 to 7.
Each player throws five times in a row. The first throw's sum starts the running number; for each later throw
the player announces how its sum joins it: plus, minus, take a half / a third / a quarter (divide the throw by
2, 3 or 4 and add it), multiply by 2, 3 or 4 (and add it). A running number that is a multiple of 13 scores
points: 13 = 1 point, 26 = 2, … "On the fifth throw only 13 pips can bring points." The first to 10 points
wins; variant: play to multiples of 11 or 17 instead of 13. Seed example: 9, then 12 "take a third" → 13
(1 point), then 3 "plus" → 16, then 5 "times 2" → 26 (2 points).

Player input: the operation of each throw after the first (``{"op": "third"}``) and the face of the 2–7 die
(``{"special": 7}``): the reader knows only d6 faces, so the camera reads the ordinary die
(``{"roll": [face]}``) and the table enters the special die by hand (or both by hand: ``{"throw": [d6,
special]}``). The three may come in any order; the throw counts once all are in.

Decisions (labelled; parameters where players disagree):

* ``scoring = "largest"`` (default): the turn scores the largest multiple reached ("get the largest number that
  is a multiple of 13"), so 13 then 26 scores 2; ``"sum"``: every multiple reached adds (1 + 2 = 3);
* ``division = "floor"``: a half / third / quarter rounds down (11 / 2 → 5); ``"exact_only"``: a division with
  a remainder is refused;
* ``fifth_only_base`` (true): on the fifth throw only a running number of exactly 13 scores (1 point);
* only positive multiples count; the first to ``target`` (10) at the end of his five throws wins at once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from ..plurals import count_en, count_ru
from .base import OVER_MOVES, ChoiceOption, Choose, GameParams, GamePreset, Moves, TableGame, ev, thaw

#: Operations: name → (English, Russian, function of (running, throw sum) → running or None if inexact).
OPS: dict[str, tuple[str, str, int, int]] = {
    # name: (english, russian, multiplier, divisor)
    "plus": ("plus", "плюс", 1, 1),
    "minus": ("minus", "минус", -1, 1),
    "half": ("take a half", "беру половину", 1, 2),
    "third": ("take a third", "беру треть", 1, 3),
    "quarter": ("take a quarter", "беру четверть", 1, 4),
    "times2": ("multiply by 2", "множу на 2", 2, 1),
    "times3": ("multiply by 3", "множу на 3", 3, 1),
    "times4": ("multiply by 4", "множу на 4", 4, 1),
}


@dataclass(frozen=True)
class ThirteenParams(GameParams):
    """Thirteen parameters: ``base`` (13; variants 11, 17), ``target`` (10 points), ``throws`` (5 per turn),
    ``scoring`` (``largest`` / ``sum``), ``division`` (``floor`` / ``exact_only``), ``fifth_only_base``."""

    base: int = 13
    target: int = 10
    throws: int = 5
    scoring: str = "largest"
    division: str = "floor"
    fifth_only_base: bool = True

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {
        "base": (2, 100), "target": (1, 1000), "throws": (2, 20)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"scoring": ("largest", "sum"),
                                                        "division": ("floor", "exact_only")}


@dataclass(frozen=True)
class Thirteen(TableGame[ThirteenParams]):
    """Thirteen state: ``throw_no`` (throws done this turn), ``running`` (the running number), ``d6`` /
    ``special`` / ``op`` (parts of the throw in progress; 0 / "" when not yet entered), ``best`` (largest
    multiple reached this turn, in points), ``turn_points`` (points of this turn under ``sum``)."""

    throw_no: int = 0
    running: int = 0
    d6: int = 0
    special: int = 0
    op: str = ""
    best: int = 0
    sum_points: int = 0

    game: ClassVar[str] = "thirteen"
    CHOICES: ClassVar[tuple[str, ...]] = ("op", "special", "throw")
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"op": "plus"}', "the operation of a throw after the first: " + ", ".join(OPS),
         "действие броска после первого: " + ", ".join(OPS)),
        ('{"special": 7}', "the face of the 2–7 die, entered by hand", "грань кубика 2–7, вводится вручную"),
        ('{"throw": [5, 7]}', "both dice by hand: the d6, then the 2–7 die", "оба кубика вручную: d6, затем кубик 2–7"),
    )
    PARAMS: ClassVar[type[GameParams]] = ThirteenParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over or self.d6 else 1

    @property
    def turn_points(self) -> int:
        return self.best if self.params.scoring == "largest" else self.sum_points

    def extra_summary(self) -> dict[str, Any]:
        return {"throw": self.throw_no + 1, "running": self.running, "d6": self.d6 or None,
                "special": self.special or None, "op": self.op or None}

    def status(self) -> Reason | None:
        p = self.params
        return Reason(f"throw {self.throw_no + 1} of {p.throws}; running number {self.running}",
                      f"бросок {self.throw_no + 1} из {p.throws}; сейчас {self.running}")

    def moves(self) -> Moves:
        p = self.params
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        choices: list[ChoiceOption] = []
        if self.throw_no > 0 and not self.op:
            choices += [ChoiceOption("op", k, en, ru) for k, (en, ru, _, _) in OPS.items()]
        if not self.special:
            choices += [ChoiceOption("special", v, f"special die: {v}", f"особая кость: {v}") for v in range(2, 8)]
        need = []
        if not self.d6:
            need.append(("throw the ordinary die", "бросьте обычную кость"))
        if not self.special:
            need.append(("enter the 2–7 die", "введите очки кости 2–7"))
        if self.throw_no > 0 and not self.op:
            need.append(("choose the operation", "выберите действие"))
        no = Reason("the five throws are always made", "все пять бросков делаются всегда")
        why_roll = None if not self.d6 else Reason("the ordinary die is already read", "обычная кость уже прочитана")
        hint = Reason(f"{name}, throw {self.throw_no + 1} of {p.throws}: " + ", ".join(e for e, _ in need),
                      f"{name}, бросок {self.throw_no + 1} из {p.throws}: " + ", ".join(r for _, r in need))
        return Moves(not self.d6, 1, False, False, (), why_roll, no, hint, (1,) if not self.d6 else (),
                     tuple(choices))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Thirteen:
        name = self.names[self.mover]
        evs.append(ev("throw", name, f"{name}: the ordinary die shows {faces[0]}",
                      f"{name}: на обычной кости {faces[0]}", faces=faces))
        return dataclasses.replace(self, d6=faces[0])._resolve(evs)

    def _choose(self, key: str, value: Any, evs: list[Event]) -> Thirteen:
        v = thaw(value)
        name = self.names[self.mover]
        if key == "op":
            if self.throw_no == 0:
                raise RuleViolation("the first throw only starts the running number: no operation",
                                    "первый бросок только задаёт начальное число: действие не выбирают")
            if self.op:
                raise RuleViolation(f"the operation is already chosen ({OPS[self.op][0]})",
                                    f"действие уже выбрано («{OPS[self.op][1]}»)")
            if v not in OPS:
                raise BadInput(f"op: one of {', '.join(OPS)}; got {v!r}")
            evs.append(ev("op", name, f"{name}: {OPS[v][0]}", f"{name}: «{OPS[v][1]}»"))
            return dataclasses.replace(self, op=v)._resolve(evs)
        if key == "throw":
            if isinstance(v, str):
                parts = v.replace(",", " ").split()
                v = [int(x) if x.isdigit() else x for x in parts]
            if not isinstance(v, list) or len(v) != 2:
                raise BadInput(f"throw: [ordinary die, 2–7 die], got {v!r}")
            if self.d6 or self.special:
                raise RuleViolation("part of this throw is already entered: enter the rest",
                                    "часть этого броска уже введена: введите остальное")
            if isinstance(v[0], bool) or not isinstance(v[0], int) or not 1 <= v[0] <= 6:
                raise BadInput(f"the ordinary die shows 1–6, got {v[0]!r}")
            return dataclasses.replace(self, d6=v[0])._choose("special", v[1], evs)
        if self.special:
            raise RuleViolation(f"the 2–7 die is already entered ({self.special})",
                                f"кость 2–7 уже введена ({self.special})")
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not 2 <= v <= 7:
            raise BadInput(f"special: the 2–7 die shows 2–7, got {v!r}")
        evs.append(ev("special", name, f"{name}: the 2–7 die shows {v}", f"{name}: на кости 2–7 выпало {v}"))
        return dataclasses.replace(self, special=v)._resolve(evs)

    def _resolve(self, evs: list[Event]) -> Thirteen:
        """Apply the throw once the ordinary die, the 2–7 die and (after the first throw) the operation are in."""
        p = self.params
        if not self.d6 or not self.special or (self.throw_no > 0 and not self.op):
            return self
        name = self.names[self.mover]
        s = self.d6 + self.special
        if self.throw_no == 0:
            running, how_en, how_ru = s, f"{s}", f"{s}"
        else:
            en, ru, mul, div = OPS[self.op]
            if div > 1 and s % div and p.division == "exact_only":
                raise RuleViolation(f"{s} cannot be divided by {div} exactly (division: exact_only)",
                                    f"{s} не делится на {div} без остатка (division: exact_only)")
            part = s * mul if div == 1 else s // div
            running = self.running + part
            how_en = f"{self.running} {en} {s} → {running}"
            how_ru = f"{self.running} «{ru}» {s} → {running}"
        no = self.throw_no + 1
        evs.append(ev("running", name, f"{name}: {how_en}", f"{name}: {how_ru}", running))
        k = running // p.base if running > 0 and running % p.base == 0 else 0
        if no == p.throws and p.fifth_only_base and running != p.base:
            k = 0
        st = dataclasses.replace(self, running=running, throw_no=no, d6=0, special=0, op="")
        if k:
            if p.scoring == "sum":
                st = dataclasses.replace(st, scores=st._add(self.mover, k, evs, f"{running} = {k} × {p.base}: "
                                                            f"{count_en(k, 'ball')}", f"{running} = {k} × {p.base}: "
                                                            f"{count_ru(k, 'ball')}"), sum_points=st.sum_points + k)
            else:
                evs.append(ev("multiple", name, f"{running} = {k} × {p.base}", f"{running} = {k} × {p.base}", k))
                st = dataclasses.replace(st, best=max(st.best, k))
        if no < p.throws:
            return st
        return st._end_turn(evs)

    def _end_turn(self, evs: list[Event]) -> Thirteen:
        p = self.params
        name = self.names[self.mover]
        st = self
        if p.scoring == "largest":
            st = dataclasses.replace(st, scores=st._add(self.mover, self.best, evs,
                                                        f"{name} scores {count_en(self.best, 'ball')} this turn",
                                                        f"{name} получает за ход {count_ru(self.best, 'ball')}"))
        st = dataclasses.replace(st, throw_no=0, running=0, best=0, sum_points=0)
        if st.scores[self.mover] >= p.target:
            return st._finish((self.mover,), evs)
        nxt = self._next_seat(self.mover)
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw", f"бросает {self.names[nxt]}"))
        return dataclasses.replace(st, mover=nxt)

    def random_choice(self, rng: Any) -> Choose | None:
        if self.over:
            return None
        if not self.special:
            return Choose("special", rng.randint(2, 7))
        if self.throw_no > 0 and not self.op:
            return Choose("op", rng.choice(sorted(OPS)))
        return None


RULES_EN = """Two dice: an ordinary one (1–6) and a special one with faces 2 to 7. The camera reads the ordinary die; enter the special die's face by hand.

Each player throws five times in a row. The first throw's sum starts the running number. For each later throw choose how its sum joins: plus, minus, take a half, a third or a quarter of it (and add), or multiply it by 2, 3 or 4 (and add).

A running number that is a multiple of 13 scores: 13 = 1 point, 26 = 2 points, and so on. On the fifth throw only 13 itself scores. Example: 9, then 12 "take a third" → 13 (1 point), then 3 "plus" → 16, then 5 "multiply by 2" → 26 (2 points). The first to 10 points wins (variant: multiples of 11 or 17, parameter base).

Decided by kosti: a turn scores the largest multiple it reached (2 in the example; parameter scoring = sum adds them: 3); divisions round down (11 / 2 → 5; parameter division = exact_only refuses a remainder); only positive numbers count; the winner is the first to reach 10 at the end of his five throws."""

RULES_RU = """Две кости: обычная (1–6) и особая с гранями от 2 до 7. Камера читает обычную кость; очки особой кости вводятся вручную.

Каждый игрок бросает пять раз подряд. Сумма первого броска — начальное число. Для каждого следующего броска выберите, как его сумма присоединяется: плюс, минус, «беру половину», «треть» или «четверть» (и прибавить), «множу на 2, 3 или 4» (и прибавить).

Если число кратно 13, оно приносит баллы: 13 — 1 балл, 26 — 2 балла и т. д. При пятом броске баллы приносит только само 13. Пример: 9, затем 12 «беру треть» → 13 (1 балл), затем 3 «плюс» → 16, затем 5 «множу на 2» → 26 (2 балла). Побеждает первым набравший 10 баллов (вариант: кратные 11 или 17, параметр base).

Решено в kosti: ход приносит наибольшее достигнутое кратное (в примере 2; параметр scoring = sum складывает их: 3); деление округляется вниз (11 / 2 → 5; параметр division = exact_only запрещает остаток); считаются только положительные числа; побеждает первым набравший 10 к концу своих пяти бросков."""

PRESETS = (
    GamePreset("thirteen", Thirteen, ThirteenParams(name="thirteen"), 1, 10,
               "Thirteen (Игра в 13): a d6 plus a 2–7 die entered by hand, five throws joined by plus / minus / "
               "a part / a multiple; multiples of 13 score; first to 10 points (decided: the largest multiple of "
               "a turn scores, divisions round down, the fifth throw scores only 13)",
               "Игра в 13: обычная кость и кость 2–7 (вводится вручную), пять бросков, соединённых действиями "
               "плюс / минус / доля / умножение; кратные 13 приносят баллы; до 10 баллов (решено: засчитывается "
               "наибольшее кратное хода, деление вниз, пятый бросок приносит баллы только при 13)",
               "games.md §2", RULES_EN, RULES_RU),
)

__all__ = ["Thirteen", "ThirteenParams", "PRESETS", "OPS"]
