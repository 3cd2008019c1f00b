"""Aces (Тузы), games.md §7: throw the dice you hold; 1s go to the centre, 2s left, 5s right.

Rules (games.md §7, article lines 337–351): five dice per player. Each player throws one die
for the order; the **lowest** starts, on a tie the one who threw that value first. On his turn a
player throws all the dice he holds: every 1 (ace) goes to the centre, out of play; every 2 goes
to the neighbour on the left; every 5 to the neighbour on the right; 3, 4 and 6 stay. A player
with no dice is not out (neighbours may pass dice to him), but he is skipped while he has none.
Play goes on until every die is in the centre; the player who throws the last 1 loses.

The score column counts the dice each player holds. "Left" is the next seat in turn order (the
turn passes to the left). Decisions: one throw per turn (the article's "turn" is one throw of
all one's dice); with two players the left and right neighbour are the same player. Everyone but
the loser is listed as a winner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Self, Sequence

from ..game import Event, Reason
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, dice_en, dice_ru, ev, faces_text
from .pig import order_starter


@dataclass(frozen=True)
class AcesParams(GameParams):
    """Aces parameters: ``dice_each`` (dice each player starts with, 5), ``order_throw`` (an
    order throw decides who starts: lowest; else the first named player)."""

    dice_each: int = 5
    order_throw: bool = True

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"dice_each": (1, 10)}


@dataclass(frozen=True)
class Aces(TableGame[AcesParams]):
    """Aces state: ``scores`` are the dice each player holds; ``centre``: dice in the centre;
    ``phase``: ``order`` or ``play``; ``order_throws``: faces of the order throw so far."""

    centre: int = 0
    phase: str = "order"
    order_throws: tuple[int, ...] = ()

    game: ClassVar[str] = "aces"
    PARAMS: ClassVar[type[GameParams]] = AcesParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 12)

    @property
    def in_setup(self) -> bool:
        """The order throw (one die each; the lowest starts) is no player's turn."""
        return not self.over and self.phase == "order"
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("dice held", "кости на руках")

    @classmethod
    def start(cls, params: GameParams, players: Sequence[str], scores: Mapping[str, int] | None = None) -> Self:
        """As :meth:`TableGame.start`; every player holds ``dice_each`` dice unless ``scores``
        gives other counts (a game that begins mid-way)."""
        assert isinstance(params, AcesParams), params  # cls.PARAMS
        st = super().start(params, players, None)
        held = [params.dice_each] * len(st.names)
        for k, v in dict(scores or {}).items():
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                from ..errors import BadInput
                raise BadInput(f"scores.{k}: dice held must be a non-negative integer, got {v!r}")
            held[st.names.index(k)] = v
        total = params.dice_each * len(st.names)
        if sum(held) > total or sum(held) == 0:
            from ..errors import BadInput
            raise BadInput(f"scores: players hold {sum(held)} dice; 1–{total} are in the game")
        st = dataclasses.replace(st, scores=tuple(held), centre=total - sum(held))
        if st.phase == "play" and held[st.mover] == 0:
            st = dataclasses.replace(st, mover=st._holder_from(st.mover))
        return st

    def _opened(self) -> Aces:
        if not self.params.order_throw:
            return dataclasses.replace(self, phase="play")
        return self

    @property
    def dice_to_throw(self) -> int:
        if self.over:
            return 0
        return 1 if self.phase == "order" else self.scores[self.mover]

    def player_extra(self, i: int) -> dict[str, Any]:
        return {"dice": self.scores[i]}

    def extra_summary(self) -> dict[str, Any]:
        return {"centre": self.centre, "phase": self.phase}

    def status(self) -> Reason | None:
        return Reason(f"in the centre: {self.centre}", f"в центре: {self.centre}")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("in Aces every throw is played out: there is no stopping",
                    "в Тузах не останавливаются: каждый бросок разыгрывается")
        if self.phase == "order":
            return Moves(True, 1, False, False, (), None, no,
                         Reason(f"{name}: throw one die for the order (lowest starts)",
                                f"{name}: бросьте одну кость за очерёдность (начинает "
                                f"наименьший)"), (1,))
        n = self.scores[self.mover]
        return Moves(True, n, False, False, (), None, no,
                     Reason(f"{name}: throw your {dice_en(n)} — 1 to the centre, 2 to the left, "
                            f"5 to the right",
                            f"{name}: бросайте свои {dice_ru(n)} — 1 в центр, 2 налево, "
                            f"5 направо"), (n,))

    def _holder_from(self, seat: int, scores: tuple[int, ...] | None = None) -> int:
        """The first seat at or after ``seat`` (to the left) that holds dice."""
        sc = self.scores if scores is None else scores
        for k in range(len(self.names)):
            s = (seat + k) % len(self.names)
            if sc[s] > 0:
                return s
        return seat

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Aces:
        name = self.names[self.mover]
        if self.phase == "order":
            throws = self.order_throws + (faces[0],)
            evs.append(ev("order", name, f"{name} throws {faces[0]} for the order",
                          f"{name} выбрасывает {faces[0]} за очерёдность", faces=faces))
            if len(throws) < len(self.names):
                return dataclasses.replace(self, order_throws=throws, mover=len(throws))
            s = self._holder_from(order_starter(throws))
            evs.append(ev("turn", self.names[s], f"{self.names[s]} threw the lowest and starts",
                          f"{self.names[s]} выбрасывает меньше всех и начинает"))
            return dataclasses.replace(self, order_throws=throws, phase="play", mover=s)
        ones, twos, fives = faces.count(1), faces.count(2), faces.count(5)
        left, right = self._next_seat(self.mover), self._next_seat(self.mover, -1)
        evs.append(ev("throw", name, f"{name} throws {faces_text(faces)}",
                      f"{name} выбрасывает {faces_text(faces)}", faces=faces))
        st = self
        for count, to, en, ru in ((ones, None, "to the centre", "в центр"),
                                  (twos, left, f"to {self.names[left]} (left)",
                                   f"к {self.names[left]} (налево)"),
                                  (fives, right, f"to {self.names[right]} (right)",
                                   f"к {self.names[right]} (направо)")):
            if not count:
                continue
            sc = st._add(self.mover, -count, evs, f"{name} gives {dice_en(count)} {en}",
                         f"{name} отдаёт {dice_ru(count)} {ru}", kind="dice_moved")
            st = dataclasses.replace(st, scores=sc)
            if to is None:
                st = dataclasses.replace(st, centre=st.centre + count)
            else:
                st = dataclasses.replace(st, scores=st._add(
                    to, count, evs, f"{st.names[to]} receives {dice_en(count)}",
                    f"{st.names[to]} получает {dice_ru(count)}", kind="dice_moved"))
        if sum(st.scores) == 0:
            evs.append(ev("last_ace", name, f"{name} threw the last 1", f"{name} выбрасывает "
                          f"последнюю единицу"))
            return st._finish(tuple(i for i in range(len(self.names)) if i != self.mover), evs,
                              loser=self.mover)
        nxt = st._holder_from(self._next_seat(self.mover))
        evs.append(ev("turn", st.names[nxt], f"{st.names[nxt]} to throw "
                      f"{dice_en(st.scores[nxt])}", f"бросает {st.names[nxt]}: "
                      f"{dice_ru(st.scores[nxt])}"))
        return dataclasses.replace(st, mover=nxt)


RULES_EN = """Five dice for each player. Everyone throws one die for the order: the lowest starts; on a tie, the one who threw that value first.

On your turn throw all the dice you hold. Every 1 (ace) goes to the centre and is out of play; every 2 goes to your neighbour on the left; every 5 to your neighbour on the right; 3, 4 and 6 stay with you. A player with no dice is not out: his neighbours may pass him dice. Players without dice are skipped.

The game goes on until every die is in the centre. The player who throws the last 1 loses.

The score column shows the dice each player holds. Decided by kosti: "left" is the next player in turn order; one throw per turn; with two players the left and right neighbour are the same player."""

RULES_RU = """У каждого игрока пять костей. Все бросают по одной кости за очерёдность: начинает выбросивший меньше всех, при равенстве — тот, кто выбросил это число первым.

В свой ход бросайте все кости, которые у вас есть. Каждая единица (туз) уходит в центр и выбывает из игры; каждая двойка переходит к соседу слева; каждая пятёрка — к соседу справа; тройки, четвёрки и шестёрки остаются у вас. Игрок без костей не выбывает: соседи могут передать ему кости. Игроков без костей пропускают.

Игра идёт, пока все кости не окажутся в центре. Проигрывает тот, кто выбросил последнюю единицу.

В столбце счёта — число костей у каждого игрока. Решено в kosti: «налево» — следующий по очереди игрок; один бросок за ход; при двух игроках сосед слева и справа — один и тот же."""

PRESETS = (
    GamePreset("aces", Aces, AcesParams(name="aces"), 5, None,
               "Aces (Тузы): 5 dice each; throw the dice you hold — 1 to the centre, 2 to the "
               "left, 5 to the right; the one who throws the last 1 loses (decided: one throw "
               "per turn, players without dice are skipped)",
               "Тузы: по 5 костей; бросайте свои кости — 1 в центр, 2 налево, 5 направо; "
               "проигрывает выбросивший последнюю единицу (решено: один бросок за ход, игроков "
               "без костей пропускают)",
               "games.md §7", RULES_EN, RULES_RU),
)

__all__ = ["Aces", "AcesParams", "PRESETS"]
