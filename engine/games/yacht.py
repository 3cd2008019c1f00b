"""Sea dice / Yacht (Морские кости / Яхта), games.md §11: five dice, twelve rounds, up to three throws a turn,
keep the good dice and throw the rest, then score the five dice in one box of the table.

The article (games.md §11, lines 374–404) names the combinations — Яхта (five of a kind), Каре (4 + 1), Фул
(3 + 2), Большой спринт (2-3-4-5-6), Малый спринт (1-2-3-4-5), Тройка, Пара — and says to "use a table giving
each combination's value; players may change the values, but the Yacht value never changes". It gives no
table. kosti plays the classic Yacht table (the published rules of Yacht, E. S. Lowe / Hoyle's: twelve boxes,
one per round):

* Ones … Sixes: the sum of the dice showing that face;
* Full house (3 + 2): the sum of all five dice; Four of a kind: the sum of the four dice;
* Little straight (1-2-3-4-5): 30; Big straight (2-3-4-5-6): 30;
* Choice: the sum of all five dice; Yacht (five of a kind): 50.

Decisions (labelled in the description; parameters where players would disagree):

* every value except the Yacht's is a house-rule parameter (``full_house``, ``four_of_a_kind``, ``choice``: 0 =
  the sum of the dice, the classic rule, any other number = that many points; ``little_straight``,
  ``big_straight``: their points); ``yacht`` is 50 and refused if changed ("the Yacht value never changes");
* three throws a turn (``throws``: the article's "usually one to three"); after a throw the player may keep any
  dice (``{"keep": [faces]}``) and throws the rest, or scores at once;
* each box once per player; a throw that fits no open box is scored 0 in a box the player chooses (the
  article does not say; the classic rule);
* the article's Тройка and Пара are not boxes of the classic table (they are scored in Choice or an upper box);
* the highest total after twelve rounds wins; a tie is a shared victory.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import BadInput, RuleViolation
from ..game import Event, Reason
from .base import (
    OVER_MOVES,
    ChoiceOption,
    GameParams,
    GamePreset,
    Moves,
    TableGame,
    dice_en,
    dice_ru,
    ev,
    faces_text,
    sort_winners,
)

#: The boxes of the classic Yacht table in sheet order, ``(name, English, Russian)`` (the Russian names of
#: games.md §11 where the article has them).
BOXES: tuple[tuple[str, str, str], ...] = (
    ("ones", "Ones", "Единицы"), ("twos", "Twos", "Двойки"), ("threes", "Threes", "Тройки"),
    ("fours", "Fours", "Четвёрки"), ("fives", "Fives", "Пятёрки"), ("sixes", "Sixes", "Шестёрки"),
    ("full_house", "Full house", "Фул"), ("four_of_a_kind", "Four of a kind", "Каре"),
    ("little_straight", "Little straight", "Малый спринт"), ("big_straight", "Big straight", "Большой спринт"),
    ("choice", "Choice", "Шанс"), ("yacht", "Yacht", "Яхта"),
)
BOX_NAMES = tuple(b[0] for b in BOXES)
#: The Yacht's points: fixed by the article ("the Yacht value never changes"), 50 in the classic table.
YACHT_POINTS = 50


@dataclass(frozen=True)
class YachtParams(GameParams):
    """Yacht parameters: ``throws`` (a turn's throws, 3), the boxes' values — ``full_house``, ``four_of_a_kind``,
    ``choice`` (0 = the sum of the dice, the classic rule; another number = those points), ``little_straight``,
    ``big_straight`` (30 each) — and ``yacht`` (50; refused if changed: games.md §11)."""

    throws: int = 3
    full_house: int = 0
    four_of_a_kind: int = 0
    little_straight: int = 30
    big_straight: int = 30
    choice: int = 0
    yacht: int = YACHT_POINTS

    RANGES: ClassVar[dict[str, tuple[int | None, int | None]]] = {
        "throws": (1, 6), "full_house": (0, 1000), "four_of_a_kind": (0, 1000), "little_straight": (0, 1000),
        "big_straight": (0, 1000), "choice": (0, 1000)}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.yacht != YACHT_POINTS:
            raise BadInput(f"{self.name or 'yacht'}.yacht: the Yacht value never changes (games.md §11): it is "
                           f"{YACHT_POINTS}, got {self.yacht!r}")


def box_points(box: str, dice: tuple[int, ...], p: YachtParams) -> int:
    """Points of five ``dice`` (faces 1–6) in ``box`` (a name of :data:`BOX_NAMES`) under ``p``: 0 when the dice
    do not make the box's combination. Raises ``KeyError`` for an unknown box."""
    c = Counter(dice)
    total = sum(dice)
    if box in BOX_NAMES[:6]:
        face = BOX_NAMES.index(box) + 1
        return face * c[face]
    if box == "full_house":
        return (p.full_house or total) if sorted(c.values()) == [2, 3] else 0
    if box == "four_of_a_kind":
        face, n = c.most_common(1)[0]
        return (p.four_of_a_kind or 4 * face) if n >= 4 else 0
    if box == "little_straight":
        return p.little_straight if sorted(dice) == [1, 2, 3, 4, 5] else 0
    if box == "big_straight":
        return p.big_straight if sorted(dice) == [2, 3, 4, 5, 6] else 0
    if box == "choice":
        return p.choice or total
    if box == "yacht":
        return p.yacht if len(c) == 1 else 0
    raise KeyError(box)


def _box_words(box: str) -> tuple[str, str]:
    _, en, ru = BOXES[BOX_NAMES.index(box)]
    return en, ru


@dataclass(frozen=True)
class Yacht(TableGame[YachtParams]):
    """Yacht state: ``round`` (1–12), ``throws`` (made this turn), ``dice`` (the five dice after the last throw,
    empty before the first), ``kept`` (dice kept for the next throw), ``sheet`` (per seat, one number per box of
    :data:`BOXES`: the points scored there, -1 while open)."""

    round: int = 1
    throws: int = 0
    dice: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()
    sheet: tuple[tuple[int, ...], ...] = ()

    game: ClassVar[str] = "yacht"
    CHOICES: ClassVar[tuple[str, ...]] = ("score", "keep")
    EVENT_FORMS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ('{"score": "full_house"}', "score the five dice in a box: " + ", ".join(BOX_NAMES),
         "записать пять костей в клетку: " + ", ".join(BOX_NAMES)),
        ('{"keep": [5, 5, 5]}', "keep these dice and throw the rest", "оставить эти кости, перебросить остальные"),
    )
    PARAMS: ClassVar[type[GameParams]] = YachtParams
    PLAYERS: ClassVar[tuple[int, int]] = (1, 12)

    def _opened(self) -> Yacht:
        return dataclasses.replace(self, sheet=tuple((-1,) * len(BOXES) for _ in self.names))

    @property
    def _max_throws(self) -> int:
        return self.params.throws

    @property
    def dice_to_throw(self) -> int:
        return 0 if self.over or self.throws >= self._max_throws else 5 - len(self.kept)

    def open_boxes(self, seat: int) -> tuple[str, ...]:
        """The boxes of seat ``seat`` not yet scored, in sheet order."""
        return tuple(b for b, v in zip(BOX_NAMES, self.sheet[seat]) if v < 0)

    def player_extra(self, i: int) -> dict[str, Any]:
        return {"sheet": {b: (v if v >= 0 else None) for b, v in zip(BOX_NAMES, self.sheet[i])}}

    def extra_summary(self) -> dict[str, Any]:
        return {"round": self.round, "rounds": len(BOXES), "throws": self.throws, "dice": list(self.dice),
                "kept": list(self.kept)}

    def marks(self, i: int) -> list[tuple[str, str]]:
        left = len(self.open_boxes(i))
        return [(f"boxes left: {left} of {len(BOXES)}", f"свободных клеток: {left} из {len(BOXES)}")] if left else []

    def status(self) -> Reason | None:
        en = f"round {self.round} of {len(BOXES)}: throw {self.throws} of {self._max_throws}"
        ru = f"раунд {self.round} из {len(BOXES)}: бросок {self.throws} из {self._max_throws}"
        if self.dice:
            en, ru = f"{en}: {faces_text(self.dice)}", f"{ru}: {faces_text(self.dice)}"
        if self.kept:
            en, ru = f"{en} (kept {faces_text(self.kept)})", f"{ru} (оставлены {faces_text(self.kept)})"
        return Reason(en, ru)

    def moves(self) -> Moves:
        if self.over:
            return OVER_MOVES
        p = self.params
        name = self.names[self.mover]
        no_bank = Reason("score the dice in a box of the table instead", "вместо этого запишите кости в клетку")
        choices: list[ChoiceOption] = []
        if self.dice:
            for b in self.open_boxes(self.mover):
                en, ru = _box_words(b)
                pts = box_points(b, self.dice, p)
                choices.append(ChoiceOption("score", b, f"{en}: {pts}", f"{ru}: {pts}"))
        n = self.dice_to_throw
        if n and self.dice:
            choices.append(ChoiceOption("keep", None, "keep these dice, throw the rest",
                                        "оставить эти кости, перебросить остальные"))
        if not self.dice:
            hint = Reason(f"{name}: round {self.round} — throw five dice (throw 1 of {self._max_throws})",
                          f"{name}: раунд {self.round} — бросайте пять костей (бросок 1 из {self._max_throws})")
            return Moves(True, 5, False, False, (), None, no_bank, hint, (5,))
        if n:
            hint = Reason(f"{name}: keep dice and throw {dice_en(n)} (throw {self.throws + 1} of "
                          f"{self._max_throws}), or score {faces_text(self.dice)} in a box",
                          f"{name}: оставьте кости и бросайте {dice_ru(n)} (бросок {self.throws + 1} из "
                          f"{self._max_throws}) или запишите {faces_text(self.dice)} в клетку")
            return Moves(True, n, False, False, (), None, no_bank, hint, (n,), tuple(choices))
        why = Reason(f"all {self._max_throws} throws are made: score the dice in a box",
                     f"все броски ({self._max_throws}) сделаны: запишите кости в клетку")
        hint = Reason(f"{name}: score {faces_text(self.dice)} in a box", f"{name}: запишите {faces_text(self.dice)} "
                      f"в клетку")
        return Moves(False, 0, False, False, (), why, no_bank, hint, (), tuple(choices))

    def _roll(self, faces: tuple[int, ...], evs: list[Event]) -> Yacht:
        name = self.names[self.mover]
        dice = tuple(self.kept) + faces
        throws = self.throws + 1
        kept = f" + {faces_text(self.kept)}" if self.kept else ""
        evs.append(ev("throw", name, f"{name} throws {faces_text(faces)}{kept}: {faces_text(dice)} (throw {throws} "
                      f"of {self._max_throws})", f"{name} выбрасывает {faces_text(faces)}{kept}: {faces_text(dice)} "
                      f"(бросок {throws} из {self._max_throws})", faces=faces))
        return dataclasses.replace(self, dice=dice, throws=throws, kept=())

    def _keep(self, faces: tuple[int, ...], evs: list[Event]) -> Yacht:
        if not self.dice:
            raise RuleViolation("there is no throw to keep dice from", "нет броска, из которого можно оставить кости")
        if self.throws >= self._max_throws:
            raise RuleViolation("all throws are made: score the dice in a box",
                                "все броски сделаны: запишите кости в клетку")
        if Counter(faces) - Counter(self.dice):
            raise BadInput(f"keep {faces_text(faces)}: keep dice of the throw {faces_text(self.dice)}",
                           f"оставить {faces_text(faces)}: можно оставить только кости броска {faces_text(self.dice)}")
        if len(faces) >= 5:
            raise BadInput("keep at most four dice: to keep all five, score them in a box",
                           "оставить можно не больше четырёх костей: все пять запишите в клетку")
        name = self.names[self.mover]
        evs.append(ev("keep", name, f"{name} keeps {faces_text(faces) or 'nothing'}",
                      f"{name} оставляет {faces_text(faces) or 'ничего'}", faces=faces))
        return dataclasses.replace(self, kept=tuple(faces))

    def _choose(self, key: str, value: Any, evs: list[Event]) -> Yacht:
        if key == "keep":  # the page's typed keep ("5 5 5", "555") or a list of faces
            return self._keep(_faces_of(value), evs)
        if not self.dice:
            raise RuleViolation("throw the dice first", "сначала бросьте кости")
        if not isinstance(value, str) or value not in BOX_NAMES:
            raise BadInput(f"score: {value!r} is not a box (boxes: {', '.join(BOX_NAMES)})",
                           f"score: {value!r} — такой клетки нет (клетки: {', '.join(BOX_NAMES)})")
        seat = self.mover
        if value not in self.open_boxes(seat):
            en, ru = _box_words(value)
            raise RuleViolation(f"{en} is already scored", f"клетка «{ru}» уже заполнена")
        p = self.params
        pts = box_points(value, self.dice, p)
        name = self.names[seat]
        en, ru = _box_words(value)
        scores = self._add(seat, pts, evs, f"{name} scores {faces_text(self.dice)} as {en}: {pts}",
                           f"{name} записывает {faces_text(self.dice)} в клетку «{ru}»: {pts}", faces=self.dice)
        row = list(self.sheet[seat])
        row[BOX_NAMES.index(value)] = pts
        sheet = self.sheet[:seat] + (tuple(row),) + self.sheet[seat + 1:]
        st = dataclasses.replace(self, scores=scores, sheet=sheet, dice=(), kept=(), throws=0)
        nxt = self._next_seat(seat)
        if nxt == 0:  # everyone has played this round
            if self.round >= len(BOXES):
                return st._finish(sort_winners(st.scores), evs)
            evs.append(ev("round", self.names[0], f"round {self.round + 1} of {len(BOXES)}",
                          f"раунд {self.round + 1} из {len(BOXES)}"))
            st = dataclasses.replace(st, round=self.round + 1)
        evs.append(ev("turn", self.names[nxt], f"{self.names[nxt]} to throw", f"бросает {self.names[nxt]}"))
        return dataclasses.replace(st, mover=nxt)


def _faces_of(value: Any) -> tuple[int, ...]:
    """Faces typed for a keep: a list of ints, or text such as "5 5 5", "5,5,5" or "555" (nothing: keep none)."""
    if isinstance(value, list | tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        faces = tuple(value)
    elif isinstance(value, str) and all(ch.isdigit() or ch in " ,;" for ch in value):
        faces = tuple(int(ch) for ch in value if ch.isdigit())
    else:
        raise BadInput(f"keep: type the faces to keep, e.g. 5 5 5, got {value!r}",
                       f"оставить: введите очки костей, например 5 5 5, а введено {value!r}")
    if not all(1 <= f <= 6 for f in faces):
        raise BadInput(f"keep: a face must be 1-6, got {faces_text(faces)}",
                       f"оставить: на грани бывает от 1 до 6, а введено {faces_text(faces)}")
    return faces


RULES_EN = """Five dice, twelve rounds. In his turn a player throws up to three times: after each throw he keeps the dice he likes and throws the others again, or stops and scores. The five dice are then written in one box of his table; each box is filled once, one per round, so after twelve rounds the table is full. The highest total wins; a tie is a shared victory.

The boxes (the classic Yacht table): Ones to Sixes — the sum of the dice showing that face; Full house (three of one face and two of another) — the sum of the five dice; Four of a kind — the sum of the four; Little straight 1-2-3-4-5 — 30; Big straight 2-3-4-5-6 — 30; Choice — the sum of the five dice; Yacht (five of a kind) — 50. Dice that do not make a box's combination score 0 there.

The article names the combinations but gives no table; it says players may change the values but the Yacht's never changes. So kosti plays the classic table, and every value but the Yacht's is a house-rule parameter (full_house, four_of_a_kind, choice: 0 = the sum of the dice; little_straight, big_straight; throws = 3). The article's three of a kind and pair are not boxes of the classic table (they score in Choice or an upper box)."""

RULES_RU = """Пять костей, двенадцать раундов. В свой ход игрок бросает до трёх раз: после каждого броска он оставляет понравившиеся кости и перебрасывает остальные или останавливается и записывает результат. Пять костей записываются в одну клетку его таблицы; каждая клетка заполняется один раз, по одной за раунд, так что через двенадцать раундов таблица заполнена. Побеждает набравший больше всех; при равенстве победу делят.

Клетки (классическая таблица «Яхты»): от Единиц до Шестёрок — сумма костей с этим числом; Фул (три одинаковых и две другие одинаковые) — сумма пяти костей; Каре — сумма четырёх одинаковых; Малый спринт 1-2-3-4-5 — 30; Большой спринт 2-3-4-5-6 — 30; Шанс — сумма пяти костей; Яхта (пять одинаковых) — 50. Кости без нужной комбинации дают в этой клетке 0.

В статье названы комбинации, но нет таблицы очков; сказано, что игроки могут менять значимость комбинаций, но очки за яхту не меняются никогда. Поэтому kosti играет по классической таблице, и каждое значение, кроме яхты, — параметр домашних правил (full_house, four_of_a_kind, choice: 0 — сумма костей; little_straight, big_straight; throws = 3). Тройка и Пара из статьи не входят в классическую таблицу."""

PRESETS = (
    GamePreset("yacht", Yacht, YachtParams(name="yacht"), 5, None,
               "Sea dice / Yacht (Морские кости): five dice, 12 rounds, up to three throws a turn keeping any dice, "
               "then the five dice are scored in one box of the table, each box once (decided: the classic Yacht "
               "table — ones to sixes, full house and four of a kind by their sum, straights 30, choice, yacht 50; "
               "every value but the Yacht's is a house-rule parameter; a throw that fits no box scores 0 in a box "
               "of the player's choice; tie shared)",
               "Морские кости / Яхта: пять костей, 12 раундов, до трёх бросков за ход с любыми оставленными "
               "костями, затем пять костей записываются в одну клетку таблицы, каждая клетка один раз (решено: "
               "классическая таблица «Яхты» — от единиц до шестёрок, фул и каре по сумме, спринты по 30, шанс, "
               "яхта 50; каждое значение, кроме яхты, — параметр домашних правил; бросок без комбинации даёт 0 в "
               "выбранной клетке; ничья — общая победа)",
               "games.md §11", RULES_EN, RULES_RU),
)

__all__ = ["BOXES", "BOX_NAMES", "PRESETS", "YACHT_POINTS", "Yacht", "YachtParams", "box_points"]
