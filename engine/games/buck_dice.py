"""Buck dice (Бак Дайс), games.md §12: three dice, score the game point, 15 is a buck.

Rules (games.md §12, article lines 405–433):

* set-up: everyone throws three dice; the highest total moves first; the player with the
  **lowest** total throws one die, and its face is the **game point** for the whole game;
* a turn: throw three dice and keep throwing; each die showing the game point scores 1; three
  equal dice that are not the game point (small buck) score 5; three game points (straight buck)
  write 15 at once, whatever the score was; the turn ends on a throw without a game point, or when
  the player reaches 15;
* 15 is a buck: the player leaves the game; the last player left loses and pays everyone the
  agreed stake, double to a player who went out with a straight buck.

Decisions (labelled in the description; parameters where players would disagree):

* set-up ties: the first player (seat order) with the highest total moves first; the first with
  the lowest total throws the game point;
* ``exact_15`` (false): more than 15 is a buck too (recorded as 15); with ``exact_15`` a throw
  that would pass 15 scores nothing and ends the turn;
* ``small_buck_ends_turn`` (false): the small buck has no game point, but it scored, so the turn
  goes on; with true it ends the turn after scoring 5;
* the straight buck sets the score to 15 ("независимо от суммы"); adding 15 would give the same
  result (the player is out either way), so this is not a parameter;
* ``stake`` (1): the loser pays it to each winner, twice to a straight-buck winner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..game import Event, Reason
from ..plurals import count_en
from .base import OVER_MOVES, GameParams, GamePreset, Moves, TableGame, ev, faces_text

#: A buck (games.md §12).
BUCK = 15


@dataclass(frozen=True)
class BuckDiceParams(GameParams):
    """Buck dice parameters: ``exact_15``, ``small_buck_ends_turn``, ``stake`` (see the module
    docstring)."""

    exact_15: bool = False
    small_buck_ends_turn: bool = False
    stake: int = 1

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {"stake": (0, 10**9)}


@dataclass(frozen=True)
class BuckDice(TableGame[BuckDiceParams]):
    """Buck dice state: ``phase`` (``setup`` → ``point`` → ``play``), ``setup_sums`` (set-up
    totals so far), ``point`` (the game point, 0 until thrown), ``first`` (the seat that moves
    first), ``out`` (seats that made a buck, in order), ``straight`` (seats that went out with a
    straight buck)."""

    phase: str = "setup"
    setup_sums: tuple[int, ...] = ()
    point: int = 0
    first: int = 0
    out: tuple[int, ...] = ()
    straight: tuple[int, ...] = ()

    game: ClassVar[str] = "buck_dice"
    PARAMS: ClassVar[type[GameParams]] = BuckDiceParams
    PLAYERS: ClassVar[tuple[int, int]] = (2, 12)

    @property
    def in_setup(self) -> bool:
        """The set-up throws (who starts) and the game-point throw are no player's turn."""
        return not self.over and self.phase in ("setup", "point")

    @property
    def dice_to_throw(self) -> int:
        if self.over:
            return 0
        return 1 if self.phase == "point" else 3

    def player_extra(self, i: int) -> dict[str, Any]:
        return {"buck": i in self.out, "straight_buck": i in self.straight}

    def extra_summary(self) -> dict[str, Any]:
        return {"phase": self.phase, "game_point": self.point or None,
                "settlement": self.settlement()}

    def settlement(self) -> dict[str, int] | None:
        """Money owed when the game is over: ``{name: amount}`` (positive = receives; the loser
        pays ``stake`` to each winner, twice to a straight-buck winner); None while playing."""
        if not self.over:
            return None
        stake = self.params.stake
        out = {n: 0 for n in self.names}
        loser = next(i for i in range(len(self.names)) if i not in self.out)
        for i in self.out:
            amount = stake * (2 if i in self.straight else 1)
            out[self.names[i]] += amount
            out[self.names[loser]] -= amount
        return out

    def marks(self, i: int) -> list[tuple[str, str]]:
        if i in self.straight:
            return [("straight buck, out", "бак с тремя игровыми очками, вышел")]
        return [("buck, out", "бак, вышел")] if i in self.out else []

    def status(self) -> Reason | None:
        if not self.point:
            return Reason("set-up throws", "начальные броски")
        return Reason(f"the game point is {self.point}", f"игровое очко — {self.point}")

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        no = Reason("the turn ends by itself: on a throw without the game point, or at 15",
                    "ход кончается сам: броском без игрового очка или на 15")
        if self.phase == "setup":
            hint = Reason(f"{name}: set-up throw of three dice (highest starts, lowest throws "
                          f"the game point)", f"{name}: начальный бросок трёх костей (больший "
                          f"начинает, меньший бросает игровое очко)")
            return Moves(True, 3, False, False, (), None, no, hint, (3,))
        if self.phase == "point":
            hint = Reason(f"{name}: throw one die — its face is the game point",
                          f"{name}: бросьте одну кость — её очко станет игровым")
            return Moves(True, 1, False, False, (), None, no, hint, (1,))
        return Moves(True, 3, False, False, (), None, no,
                     Reason(f"{name}: throw three dice — every {self.point} scores 1",
                            f"{name}: бросайте три кости — каждое {self.point} даёт 1 очко"),
                     (3,))

    def _active_from(self, seat: int) -> int:
        for k in range(len(self.names)):
            s = (seat + k) % len(self.names)
            if s not in self.out:
                return s
        return seat

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> BuckDice:
        name = self.names[self.mover]
        if self.phase == "setup":
            sums = self.setup_sums + (sum(faces),)
            evs.append(ev("setup", name, f"{name} throws {faces_text(faces)} = {sum(faces)}",
                          f"{name} выбрасывает {faces_text(faces)} = {sum(faces)}", faces=faces))
            if len(sums) < len(self.names):
                return dataclasses.replace(self, setup_sums=sums, mover=len(sums))
            first = sums.index(max(sums))
            low = sums.index(min(sums))
            evs.append(ev("turn", self.names[low], f"{self.names[first]} threw the highest and "
                          f"moves first; {self.names[low]} threw the lowest and throws the game "
                          f"point", f"{self.names[first]} выбрасывает больше всех и ходит первым; "
                          f"{self.names[low]} выбрасывает меньше всех и бросает игровое очко"))
            return dataclasses.replace(self, setup_sums=sums, phase="point", first=first,
                                       mover=low)
        if self.phase == "point":
            evs.append(ev("game_point", name, f"the game point is {faces[0]}",
                          f"игровое очко — {faces[0]}", faces[0], faces))
            evs.append(ev("turn", self.names[self.first], f"{self.names[self.first]} to throw",
                          f"бросает {self.names[self.first]}"))
            return dataclasses.replace(self, phase="play", point=faces[0], mover=self.first)
        return self._play(faces, evs)

    def _play(self, faces: tuple[int, ...], evs: list[Event]) -> BuckDice:
        p = self.params
        i = self.mover
        name = self.names[i]
        score = self.scores[i]
        hits = faces.count(self.point)
        small = hits == 0 and len(set(faces)) == 1
        straight = hits == 3
        t = faces_text(faces)
        if straight:
            gain, en, ru = BUCK - score, f"{name} throws {t}: three game points — a straight " \
                f"buck, 15 at once", f"{name} выбрасывает {t}: три игровых очка — сразу 15"
        elif small:
            gain, en, ru = 5, f"{name} throws {t}: small buck, 5 points", \
                f"{name} выбрасывает {t}: малый бак, 5 очков"
        elif hits:
            gain, en, ru = hits, f"{name} throws {t}: {hits} × {self.point}, " \
                f"{count_en(hits, 'point')}", f"{name} выбрасывает {t}: игровых очков " \
                f"{hits}, записано {hits}"
        else:
            evs.append(ev("throw", name, f"{name} throws {t}: no game point, the turn ends",
                          f"{name} выбрасывает {t}: игровых очков нет, ход окончен", 0, faces))
            return self._pass(evs)
        if score + gain > BUCK:
            if p.exact_15 and not straight:
                evs.append(ev("overshoot", name, f"{en} — that passes 15: nothing scored, the "
                              f"turn ends", f"{ru} — это больше 15: очки не записаны, ход "
                              f"окончен", 0, faces))
                return self._pass(evs)
            gain = BUCK - score
        st = dataclasses.replace(self, scores=self._add(i, gain, evs, en, ru, faces=faces))
        if st.scores[i] >= BUCK:
            out = st.out + (i,)
            evs.append(ev("buck", name, f"{name} has a buck (15) and leaves the game",
                          f"{name}: бак (15), выход из игры"))
            st = dataclasses.replace(st, out=out,
                                     straight=st.straight + ((i,) if straight else ()))
            left = [s for s in range(len(self.names)) if s not in out]
            if len(left) == 1:
                return st._finish(tuple(out), evs, loser=left[0])
            return st._pass(evs)
        if small and p.small_buck_ends_turn:
            return st._pass(evs)
        return st

    def _pass(self, evs: list[Event]) -> BuckDice:
        nxt = self._active_from(self._next_seat(self.mover))
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw",
                      f"бросает {self.names[nxt]}"))
        return dataclasses.replace(self, mover=nxt)


RULES_EN = """Three dice. Set-up: everyone throws three dice; the highest total moves first (on a tie, the first who threw it). The player with the lowest total throws one die: its face is the game point for the whole game.

On your turn throw three dice and keep throwing. Each die showing the game point scores 1. Three equal dice that are not the game point (small buck) score 5. Three game points (straight buck) give 15 at once, whatever your score was. The turn ends on a throw without a game point, or when you reach 15.

15 points is a buck: the player leaves the game. The last player left loses and pays each other player the agreed stake, double to a player who went out with a straight buck.

Decided by kosti: more than 15 counts as a buck (parameter exact_15: then a throw that passes 15 scores nothing and ends the turn); a small buck does not end the turn (parameter small_buck_ends_turn); money is shown, and settled by hand."""

RULES_RU = """Три кости. Начало: все бросают по три кости; первым ходит выбросивший больше всех (при равенстве — тот, кто выбросил первым). Выбросивший меньше всех бросает одну кость: её очко становится игровым очком на всю игру.

В свой ход бросайте три кости и продолжайте бросать. Каждая кость с игровым очком даёт 1 очко. Три одинаковые кости, не равные игровому очку (малый бак), дают 5 очков. Три игровых очка сразу дают 15 — независимо от того, сколько было набрано. Ход кончается броском без игрового очка или когда набрано 15.

15 очков — это «бак»: игрок выходит из игры. Последний оставшийся проигрывает и платит каждому оговорённую ставку, а тому, кто вышел с тремя игровыми очками, — вдвойне.

Решено в kosti: больше 15 тоже считается баком (параметр exact_15: тогда бросок сверх 15 не засчитывается и ход кончается); малый бак не заканчивает ход (параметр small_buck_ends_turn); деньги показываются, а рассчитываются вручную."""

PRESETS = (
    GamePreset("buck_dice", BuckDice, BuckDiceParams(name="buck_dice"), 3, BUCK,
               "Buck dice (Бак Дайс): set-up throw picks the first player and the game point; "
               "each game point 1, small buck 5, three game points 15 at once; 15 = buck, out; "
               "last one left pays (decided: over 15 is a buck, small buck does not end the "
               "turn, set-up ties → first to throw)",
               "Бак Дайс: начальный бросок определяет первого игрока и игровое очко; каждое "
               "игровое очко — 1, малый бак — 5, три игровых очка — сразу 15; 15 — бак, выход; "
               "последний платит (решено: больше 15 — тоже бак, малый бак не кончает ход, при "
               "равенстве — кто бросил первым)",
               "games.md §12", RULES_EN, RULES_RU),
)

__all__ = ["BuckDice", "BuckDiceParams", "PRESETS", "BUCK"]
