"""Martinetti / Ohio (Мартинетти / Огайо), games.md §5: three dice carry a token over fields 1 to 12.

Rules (games.md §5, article lines 299–324): one token each, three dice, a board with fields 1–12 (on the
dashboard it is virtual). A 1 is needed to enter field 1; without it the turn passes to the left. Consecutive
numbers in one throw may be used together (1 and 2, or 1, 2 and 3, move straight to 2 or 3); dice may be summed
(three 1s read as 1 + (1 + 1) → field 2). The player keeps throwing while he can use the next number, and loses
the turn when he cannot. A number the thrower missed may be used by any partner who needs exactly that number,
if he shouts it while the dice pass on; of several, the one nearest clockwise to the thrower gets it. The first
token from 1 to 12 wins.

Decisions (labelled; ``missed`` is a parameter because it is a house matter):

* each die is used once per throw, numbers 7–12 are sums of two or three dice, and all three dice are thrown
  each time (the article's "presumably"s);
* the engine always plays the thrower's best advance (the longest run of next numbers that disjoint groups of
  the dice can make), so a thrower never misses his own number;
* ``missed = "claims"`` (default): after a throw that ends a turn, the table enters who shouted
  (``{"claim": "Boris"}`` or a list of names); the nearest clockwise to the thrower among them whose next
  number the dice make advances one field; ``"auto"``: that player is found and advanced without a shout
  (a house rule, not the seed); ``"off"``: no claims;
* "clockwise" is the turn order (to the left).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, Sequence

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from .base import OVER_MOVES, ChoiceOption, Choose, GameParams, GamePreset, Moves, TableGame, ev, faces_text, thaw

#: The last field of the board.
LAST_FIELD = 12


def best_run(dice: Sequence[int], need: int) -> tuple[tuple[int, ...], ...]:
    """The longest run of consecutive numbers ``need``, ``need + 1``, … (up to 12) that disjoint groups of
    ``dice`` make (each die used once; a group's number is its sum). Returns the groups used, in order; empty
    when ``need`` cannot be made."""
    best: tuple[tuple[int, ...], ...] = ()
    if need > LAST_FIELD:
        return best
    idx = range(len(dice))
    for r in range(1, len(dice) + 1):
        for combo in combinations(idx, r):
            group = tuple(dice[i] for i in combo)
            if sum(group) != need:
                continue
            rest = [dice[i] for i in idx if i not in combo]
            run = (group,) + best_run(rest, need + 1)
            if len(run) > len(best):
                best = run
    return best


@dataclass(frozen=True)
class MartinettiParams(GameParams):
    """Martinetti parameters: ``missed`` (``claims`` / ``auto`` / ``off``, see the module docstring)."""

    missed: str = "claims"

    CHOICES_OF: ClassVar[dict[str, tuple[Any, ...]]] = {"missed": ("claims", "auto", "off")}


@dataclass(frozen=True)
class Martinetti(TableGame[MartinettiParams]):
    """Martinetti state: ``scores`` are the fields the tokens stand on (0 = not on the board yet);
    ``claim_dice`` (the dice of the throw that just ended a turn, open to claims until the next throw);
    ``claim_from`` (the seat that threw them)."""

    claim_dice: tuple[int, ...] = ()
    claim_from: int = 0

    game: ClassVar[str] = "martinetti"
    CHOICES: ClassVar[tuple[str, ...]] = ("claim",)
    #: The replay events of :attr:`CHOICES` (``kosti rules --json`` appends them to the description, cli.md).
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"claim": "Boris"} / {"claim": ["Boris", "Ann"]}', "who shouted a missed number",
         "кто крикнул пропущенное число"),
    )
    PARAMS: ClassVar[type[GameParams]] = MartinettiParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)
    SCORE_UNIT: ClassVar[tuple[str, str]] = ("field", "поле")

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over else 3

    def marks(self, i: int) -> list[tuple[str, str]]:
        f = self.scores[i]
        if f == 0:
            return [("off the board: needs a 1", "не на доске: нужна 1")]
        return [(f"on field {f}, needs {f + 1}", f"на поле {f}, нужно {f + 1}")]

    def extra_summary(self) -> dict[str, Any]:
        return {"board": [{"name": n, "field": f} for n, f in zip(self.names, self.scores)],
                "claim_dice": list(self.claim_dice) or None}

    def status(self) -> Reason | None:
        board = " · ".join(f"{n} ▸ {f}" for n, f in zip(self.names, self.scores))
        return Reason(f"board: {board}", f"доска: {board}")

    def _claimable(self) -> list[int]:
        """Seats (nearest clockwise to the thrower first) whose next number the open dice make."""
        if not self.claim_dice:
            return []
        n = len(self.names)
        seats = [(self.claim_from + k) % n for k in range(1, n)]
        return [s for s in seats if self.scores[s] < LAST_FIELD and best_run(self.claim_dice, self.scores[s] + 1)]

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        name = self.names[self.mover]
        need = self.scores[self.mover] + 1
        no = Reason("the turn ends by itself when the next number cannot be made",
                    "ход кончается сам, когда следующее число не складывается")
        choices: tuple[ChoiceOption, ...] = ()
        if self.claim_dice and self.params.missed == "claims":
            choices = tuple(ChoiceOption("claim", self.names[s], f"{self.names[s]} claims the missed "
                                         f"{self.scores[s] + 1}", f"{self.names[s]} забирает пропущенное "
                                         f"{self.scores[s] + 1}") for s in self._claimable())
        return Moves(True, 3, False, False, (), None, no,
                     Reason(f"{name}: throw three dice — you need {need}", f"{name}: бросайте три кости — нужно "
                            f"{need}"), (3,), choices)

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Martinetti:
        i = self.mover
        name = self.names[i]
        st = dataclasses.replace(self, claim_dice=())
        run = best_run(faces, self.scores[i] + 1)
        if run:
            to = self.scores[i] + len(run)
            used = " + ".join("(" + "+".join(map(str, g)) + ")" if len(g) > 1 else str(g[0]) for g in run)
            st = dataclasses.replace(st, scores=st._add(i, len(run), evs, f"{name} throws {faces_text(faces)}: "
                                                        f"{used} → field {to}", f"{name} выбрасывает "
                                                        f"{faces_text(faces)}: {used} → поле {to}", faces=faces))
            if to >= LAST_FIELD:
                return st._finish((i,), evs)
            return st
        evs.append(ev("throw", name, f"{name} throws {faces_text(faces)}: no {self.scores[i] + 1}, the turn passes",
                      f"{name} выбрасывает {faces_text(faces)}: {self.scores[i] + 1} не складывается, ход переходит",
                      0, faces))
        nxt = self._next_seat(i)
        st = dataclasses.replace(st, claim_dice=faces, claim_from=i, mover=nxt)
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw", f"бросает {self.names[nxt]}"))
        if self.params.missed == "auto":
            seats = st._claimable()
            if seats:
                st = st._award(seats[0], evs)
            st = dataclasses.replace(st, claim_dice=())
        elif self.params.missed == "off":
            st = dataclasses.replace(st, claim_dice=())
        return st

    def _award(self, seat: int, evs: list[Event]) -> Martinetti:
        to = self.scores[seat] + 1
        st = dataclasses.replace(self, scores=self._add(
            seat, 1, evs, f"{self.names[seat]} uses the missed {to}: field {to}",
            f"{self.names[seat]} забирает пропущенное {to}: поле {to}"), claim_dice=())
        if to >= LAST_FIELD:
            return st._finish((seat,), evs)
        return st

    def _choose(self, key: str, value: Any, evs: list[Event]) -> Martinetti:
        if self.params.missed != "claims":
            raise RuleViolation(f"claims are off in these rules (missed = {self.params.missed})",
                                f"в этих правилах заявок нет (missed = {self.params.missed})")
        if not self.claim_dice:
            raise RuleViolation("no missed number to claim: claims are made while the dice pass on",
                                "забирать нечего: пропущенное число заявляют, пока кости переходят")
        v = thaw(value)
        names = [v] if isinstance(v, str) else v
        if not isinstance(names, list) or not names or not all(isinstance(x, str) for x in names):
            raise BadInput(f"claim: a player's name or a list of names, got {v!r}")
        seats = []
        for nm in names:
            if nm not in self.names:
                raise BadInput(f"claim: unknown player {nm!r} (players: {', '.join(self.names)})")
            seats.append(self.names.index(nm))
        ok = [s for s in self._claimable() if s in seats]
        if not ok:
            who = ", ".join(names)
            raise RuleViolation(f"{who} cannot use {faces_text(self.claim_dice)}: the dice do not make the number "
                                f"needed", f"{who}: из {faces_text(self.claim_dice)} нужное число не складывается")
        return self._award(ok[0], evs)

    def random_choice(self, rng: Any) -> Choose | None:
        seats = self._claimable() if self.params.missed == "claims" else []
        if seats and rng.random() < 0.5:
            return Choose("claim", self.names[rng.choice(seats)])
        return None


RULES_EN = """One token each, three dice and a board with fields 1 to 12 (shown on the page).

A 1 is needed to put your token on field 1; without it the turn passes to the left. Then you need 2, then 3, and so on. Consecutive numbers in one throw may be used together (1 and 2, or 1, 2 and 3), and dice may be added up (three 1s read as 1 + (1 + 1) take you to field 2). Each die is used once per throw; 7 to 12 are sums of two or three dice. You keep throwing while you can make the next number; when you cannot, the turn passes.

A missed number: while the dice pass on, a partner who needs exactly a number the dice make may shout and use it; of several, the one nearest clockwise to the thrower gets it. The first token to reach field 12 wins.

Decided by kosti: the engine always plays the thrower's best advance; the table enters who shouted after a turn ends (parameter missed = auto awards it without a shout, off turns it off)."""

RULES_RU = """У каждого игрока фишка, три кости и доска с полями от 1 до 12 (она показана на странице).

Чтобы поставить фишку на поле 1, нужна единица; без неё ход переходит налево. Затем нужно 2, потом 3 и так далее. Последовательные числа одного броска можно использовать вместе (1 и 2 или 1, 2 и 3), а кости можно складывать (три единицы читаются как 1 + (1 + 1) и ведут на поле 2). Каждая кость используется в броске один раз; числа от 7 до 12 — суммы двух или трёх костей. Игрок бросает, пока может составить следующее число; когда не может, ход переходит.

Пропущенное число: пока кости переходят, партнёр, которому нужно как раз это число, может выкрикнуть его и использовать; из нескольких его получает ближайший по часовой стрелке к бросавшему. Побеждает тот, чья фишка первой дойдёт до поля 12.

Решено в kosti: программа всегда делает за бросающего лучший ход; после конца хода стол вводит, кто выкрикнул (параметр missed = auto присуждает число без выкрика, off отключает это правило)."""

PRESETS = (
    GamePreset("martinetti", Martinetti, MartinettiParams(name="martinetti"), 3, LAST_FIELD,
               "Martinetti / Ohio (Мартинетти): three dice move a token over fields 1–12 — make the next number "
               "with single dice or sums, runs of consecutive numbers in one throw; keep throwing while you can "
               "(decided: the best advance is played for you; missed numbers are claimed on the page)",
               "Мартинетти / Огайо: три кости ведут фишку по полям 1–12 — составьте следующее число из костей или "
               "их сумм, несколько подряд за один бросок; бросайте, пока получается (решено: лучший ход делается "
               "автоматически; пропущенные числа заявляются на странице)",
               "games.md §5", RULES_EN, RULES_RU),
)

__all__ = ["Martinetti", "MartinettiParams", "PRESETS", "best_run", "LAST_FIELD"]
