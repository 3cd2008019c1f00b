"""Counting words in English and Russian: the one place that says "1 die", "2 dice", "5 костей".

Every count kosti prints or shows next to a noun goes through :func:`count` (or :func:`count_en` /
:func:`count_ru`), so that "1 dice", "1 games" or "21 бросков" cannot come back in one corner of the
program. The rules are the CLDR plural rules of the two languages (Unicode CLDR, "Language Plural
Rules": English ``one`` for exactly 1, ``other`` otherwise; Russian ``one`` for n % 10 = 1 and
n % 100 ≠ 11, ``few`` for n % 10 in 2–4 and n % 100 not in 12–14, ``many`` otherwise) — the same rules
the browser's ``Intl.PluralRules`` applies on the dashboard (``static/app.js`` ``count()``; a browser test
checks the two agree for every noun of :data:`NOUNS`).

Nouns are the table's own words (rules.md §0.3 glossary): a bolt is "болт", a pit "яма", a barrel
"бочка". Numbers are integers; a negative count takes the form of its absolute value ("−1 point").
"""

from __future__ import annotations

from typing import Literal

__all__ = ["NOUNS", "Lang", "count", "count_en", "count_ru", "en_form", "noun", "ru_form", "ru_plural"]

Lang = Literal["en", "ru"]

#: noun key → ((English one, other), (Russian one, few, many)). Russian forms are nominative after the
#: number ("5 костей", "2 хода"); keys are the English singular.
NOUNS: dict[str, tuple[tuple[str, str], tuple[str, str, str]]] = {
    "die": (("die", "dice"), ("кость", "кости", "костей")),
    "game": (("game", "games"), ("игра", "игры", "игр")),
    "turn": (("turn", "turns"), ("ход", "хода", "ходов")),
    "throw": (("throw", "throws"), ("бросок", "броска", "бросков")),
    "zero throw": (("zero throw", "zero throws"), ("пустой бросок", "пустых броска", "пустых бросков")),
    "point": (("point", "points"), ("очко", "очка", "очков")),
    "player": (("player", "players"), ("игрок", "игрока", "игроков")),
    "round": (("round", "rounds"), ("раунд", "раунда", "раундов")),
    "series": (("series", "series"), ("серия", "серии", "серий")),
    "stake": (("stake", "stakes"), ("ставка", "ставки", "ставок")),
    "bet": (("bet", "bets"), ("ставка", "ставки", "ставок")),
    "extra throw": (("extra throw", "extra throws"),
                    ("дополнительный бросок", "дополнительных броска", "дополнительных бросков")),
    "ball": (("point", "points"), ("балл", "балла", "баллов")),  # Thirteen's points, «баллы», not pips
    "bolt": (("bolt", "bolts"), ("болт", "болта", "болтов")),
    "attempt": (("attempt", "attempts"), ("попытка", "попытки", "попыток")),
    "photo": (("photo", "photos"), ("фото", "фото", "фото")),
    "face": (("face", "faces"), ("грань", "грани", "граней")),
    "action": (("action", "actions"), ("действие", "действия", "действий")),
    "clip": (("clip", "clips"), ("ролик", "ролика", "роликов")),
    "frame": (("frame", "frames"), ("кадр", "кадра", "кадров")),
    "expected throw": (("expected throw", "expected throws"), ("ожидаемый бросок", "ожидаемых броска",
                                                                "ожидаемых бросков")),
}


def ru_form(n: int) -> Literal["one", "few", "many"]:
    """The CLDR Russian plural category of the integer ``n`` (1 → one, 2–4 → few, 5, 11–14, 0 → many)."""
    n = abs(n)
    if n % 10 == 1 and n % 100 != 11:
        return "one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "few"
    return "many"


def en_form(n: int) -> Literal["one", "other"]:
    """The CLDR English plural category of the integer ``n`` (exactly 1 → one)."""
    return "one" if abs(n) == 1 else "other"


def ru_plural(n: int, one: str, few: str, many: str) -> str:
    """The Russian noun form for the number ``n`` from the three given (1 бросок, 2 броска, 5 бросков)."""
    return {"one": one, "few": few, "many": many}[ru_form(n)]


def noun(n: int, key: str, lang: Lang = "en") -> str:
    """The noun ``key`` of :data:`NOUNS` in the form the number ``n`` needs, without the number
    ("dice", "кости"). Raises ``KeyError`` for a noun not in the table."""
    en, ru = NOUNS[key]
    if lang == "ru":
        return ru_plural(n, *ru)
    return en[0] if en_form(n) == "one" else en[1]


def count_en(n: int, key: str) -> str:
    """``"1 die"``, ``"2 dice"``, ``"0 games"`` (``key``: a noun of :data:`NOUNS`)."""
    return f"{n} {noun(n, key, 'en')}"


def count_ru(n: int, key: str) -> str:
    """``"1 кость"``, ``"3 кости"``, ``"11 костей"`` (``key``: a noun of :data:`NOUNS`)."""
    return f"{n} {noun(n, key, 'ru')}"


def count(n: int, key: str, lang: Lang = "en") -> str:
    """The number and its noun in ``lang``: :func:`count_en` or :func:`count_ru`."""
    return count_ru(n, key) if lang == "ru" else count_en(n, key)
