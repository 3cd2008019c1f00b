"""Pig (Свинья), games.md §6: one die, throw as often as you like, a 1 loses the series.

Rules (games.md §6, article lines 325–336):

* order: everyone throws one die; the **lowest** throw starts (``order_throw``);
* a series: throw and add the face as often as you like; a **1** cancels the series' points and
  the die passes on; the player may stop ("хватит", :class:`~kosti.engine.game.Bank`) at any moment
  and records the series total;
* the first to ``target`` (100) — with ``equal_series`` every player gets the same number of
  series, so the round is finished after someone reaches the target; the highest total wins.

Decisions where games.md leaves it open (labelled in the description, parameters where players
would disagree):

* a tie for the lowest order throw: the first player (in seat order) who threw it starts — the
  tie rule the same article gives for Aces (§7);
* a stop needs at least one throw in the series (stopping at 0 would only skip the turn);
* ties at the end are a shared victory (``tie``: ``shared``), or the tied players play one more
  series each until one is ahead (``tie``: ``play_off``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..game import Event, Reason
from ..kinds import TurnOutcome
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, ev


@dataclass(frozen=True)
class PigParams(GameParams):
    """Pig parameters: ``target`` (points to reach, 100), ``equal_series`` (everyone gets the
    same number of series: the round is finished after the target is reached), ``order_throw``
    (an order throw decides who starts: lowest; else the first named player starts), ``tie``
    (``shared`` or ``play_off``)."""

    target: int = 100
    equal_series: bool = True
    order_throw: bool = True
    tie: str = "shared"

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"target": (2, 100000)}
    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"tie": ("shared", "play_off")}


def order_starter(throws: tuple[int, ...]) -> int:
    """Seat of the starter after an order throw: the lowest face, on a tie the first to throw it
    (games.md §7 Aces; used for Pig too). ``throws``: one face per seat."""
    return throws.index(min(throws))


@dataclass(frozen=True)
class Pig(TableGame[PigParams]):
    """Pig state (see the module docstring). ``phase``: ``order`` or ``play``; ``order_throws``:
    faces of the order throw so far; ``starter``: seat that starts each round; ``series``: points of
    the series in progress; ``throws``: throws in this series; ``playoff``: seats still in a
    play-off (``tie``: ``play_off``), else empty."""

    phase: str = "order"
    order_throws: tuple[int, ...] = ()
    starter: int = 0
    series: int = 0
    throws: int = 0
    playoff: tuple[int, ...] = ()

    game: ClassVar[str] = "pig"
    HAS_STOP: ClassVar[bool] = True
    PARAMS: ClassVar[type[GameParams]] = PigParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)

    @property
    def in_setup(self) -> bool:
        """The order throw (everyone throws once; the lowest starts) is no player's turn."""
        return not self.over and self.phase == "order"

    def _opened(self) -> Pig:
        if not self.params.order_throw:
            return dataclasses.replace(self, phase="play")
        return self

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 1

    @property
    def turn_points(self) -> int:
        return self.series

    def player_extra(self, i: int) -> dict[str, Any]:
        return {"order_throw": self.order_throws[i] if i < len(self.order_throws) else None}

    def extra_summary(self) -> dict[str, Any]:
        return {"phase": self.phase, "target": self.params.target}

    def status(self) -> Reason | None:
        if self.phase == "order":
            return Reason("order throw: the lowest starts", "бросок за очерёдность: начинает "
                          "наименьший")
        return Reason(f"series {self.series}, target {self.params.target}",
                      f"в серии {self.series}, цель {self.params.target}")

    def moves(self) -> Moves:
        p = self.params
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        if self.phase == "order":
            why = Reason("this is the order throw", "это бросок за очерёдность")
            return Moves(True, 1, False, False, (), None, why,
                         Reason(f"{name}: throw one die for the order (lowest starts)",
                                f"{name}: бросьте одну кость за очерёдность (начинает "
                                f"наименьший)"), (1,))
        if self.throws == 0:
            why = Reason("throw at least once in the series first",
                         "сначала бросьте хотя бы раз в этой серии")
            return Moves(True, 1, False, False, (), None, why,
                         Reason(f"{name}: throw the die", f"{name}: бросайте кость"), (1,))
        total = self.scores[self.mover] + self.series
        extra_en = f" (that makes {total}, the target is reached)" if total >= p.target else ""
        extra_ru = f" (будет {total}, цель достигнута)" if total >= p.target else ""
        return Moves(True, 1, False, True, (), None, None,
                     Reason(f"{name}: throw again or stop and record {self.series}{extra_en}",
                            f"{name}: бросайте ещё или скажите «хватит» и запишите "
                            f"{self.series}{extra_ru}"), (1,),
                     bank_label=Reason(f"stop and record {self.series}",
                                       f"хватит, записать {self.series}"))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Pig:
        f = faces[0]
        name = self.names[self.mover]
        if self.phase == "order":
            throws = self.order_throws + (f,)
            evs.append(ev("order", name, f"{name} throws {f} for the order",
                          f"{name} выбрасывает {f} за очерёдность", faces=faces))
            if len(throws) < len(self.names):
                return dataclasses.replace(self, order_throws=throws, mover=len(throws))
            s = order_starter(throws)
            evs.append(ev("turn", self.names[s], f"{self.names[s]} threw the lowest and starts",
                          f"{self.names[s]} выбрасывает меньше всех и начинает"))
            return dataclasses.replace(self, order_throws=throws, phase="play", starter=s,
                                       mover=s)
        if f == 1:
            evs.append(ev("bust", name, f"{name} throws 1: the series ({self.series}) is lost",
                          f"{name} выбрасывает 1: очки серии ({self.series}) сгорают", faces=faces,
                          outcome=TurnOutcome.BUST))
            return dataclasses.replace(self, series=0, throws=0)._end_series(evs)
        evs.append(ev("throw", name, f"{name} throws {f}: series {self.series + f}",
                      f"{name} выбрасывает {f}: в серии {self.series + f}", self.series + f, faces))
        return dataclasses.replace(self, series=self.series + f, throws=self.throws + 1)

    def _bank(self, evs: list[Event]) -> Pig:
        name = self.names[self.mover]
        total = self.scores[self.mover] + self.series
        scores = self._add(self.mover, self.series, evs,
                           f"{name} stops and records {self.series} (total {total})",
                           f"{name}: «хватит», записано {self.series} (всего {total})", kind="bank",
                           outcome=TurnOutcome.BANK)
        return dataclasses.replace(self, scores=scores, series=0, throws=0)._end_series(evs)

    def _end_series(self, evs: list[Event]) -> Pig:
        """Pass the die on, or end the game (target reached; equal series; play-off)."""
        p = self.params
        n = len(self.names)
        if self.playoff:
            order = [s for s in self.playoff]
            i = order.index(self.mover)
            if i + 1 < len(order):
                return self._pass_to(order[i + 1], evs)
            return self._decide(tuple(order), evs)
        reached = any(s >= p.target for s in self.scores)
        if reached and not p.equal_series:
            return self._decide(tuple(range(n)), evs)
        nxt = self._next_seat(self.mover)
        if reached and nxt == self.starter:
            return self._decide(tuple(range(n)), evs)
        if reached and not any(e.kind == "final_round" for e in evs) and \
                self.scores[self.mover] >= p.target and all(
                    s < p.target for i, s in enumerate(self.scores) if i != self.mover):
            evs.append(ev("final_round", self.names[self.mover],
                          f"{self.names[self.mover]} reached {p.target}: the round is played "
                          f"to the end (equal series for all)",
                          f"{self.names[self.mover]}: уже {p.target}, круг доигрывается до "
                          f"конца (у всех одинаковое число серий)"))
        return self._pass_to(nxt, evs)

    def _pass_to(self, seat: int, evs: list[Event]) -> Pig:
        evs.append(ev("turn", self.names[seat], f"{self.names[seat]} to throw",
                      f"бросает {self.names[seat]}"))
        return dataclasses.replace(self, mover=seat, series=0, throws=0)

    def _decide(self, seats: tuple[int, ...], evs: list[Event]) -> Pig:
        p = self.params
        best = max(self.scores[i] for i in seats)
        top = tuple(i for i in seats if self.scores[i] == best)
        if len(top) > 1 and p.tie == "play_off":
            names = ", ".join(self.names[i] for i in top)
            evs.append(ev("play_off", names, f"Tie at {best}: {names} play one more series each",
                          f"Ничья при {best}: {names} играют ещё по одной серии"))
            return dataclasses.replace(self, playoff=top)._pass_to(top[0], evs)
        return self._finish(top, evs)



RULES_EN = """One die. First everyone throws the die once: the lowest throw starts (on a tie, the first player who threw it). Play then passes to the left.

A series: throw the die and add its face to the series, as often as you like. A 1 cancels all points of the series and the die passes on. Say "stop" at any moment to record the series total.

The first to 100 points ends the game, but every player gets the same number of series: the round is played to the end, then the highest total wins. A tie is a shared victory (parameter tie = play_off: the tied players play one more series each).

Decided by kosti (games.md leaves it open): the order-throw tie rule of Aces; a stop needs at least one throw in the series; the tie rule above."""

RULES_RU = """Одна кость. Сначала каждый бросает кость один раз: начинает тот, у кого выпало меньше всех (при равенстве — тот, кто выбросил это число первым). Дальше ход переходит налево.

Серия: бросайте кость и прибавляйте выпавшие очки к серии сколько угодно раз. Единица сжигает все очки серии, и кость переходит к следующему. В любой момент можно сказать «хватит» и записать очки серии.

Игра идёт до 100 очков, но все игроки имеют право на одинаковое количество серий: круг доигрывается до конца, и побеждает набравший больше всех. При равенстве победу делят (параметр tie = play_off: игроки с равным счётом играют ещё по одной серии).

Решено в kosti (в games.md не сказано): при равных бросках за очерёдность — правило Тузов; «хватит» можно сказать только после хотя бы одного броска в серии; правило ничьей выше."""

PRESETS = (
    GamePreset("pig", Pig, PigParams(name="pig"), 1, 100,
               "Pig (Свинья): one die, a 1 loses the series, stop to record; first to 100, "
               "equal series for all (the round is finished); lowest order throw starts "
               "(decided: tie → first to throw it; a stop needs one throw; final tie shared)",
               "Свинья: одна кость, единица сжигает серию, «хватит» записывает очки; до 100, у "
               "всех одинаковое число серий; начинает наименьший бросок (решено: при равенстве "
               "— кто первым бросил; «хватит» после хотя бы одного броска; ничья — общая победа)",
               "games.md §6", RULES_EN, RULES_RU),
)

__all__ = ["Pig", "PigParams", "PRESETS", "order_starter"]
