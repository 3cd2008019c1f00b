"""Poker-dice hands of five dice: rank, compare, name (Indian dice, Liar dice, Bluff; games.md §1, §4, §15).

Ranks, low to high (games.md §4 for Indian dice, without straights): nothing, one pair, two pairs, three of a
kind, full house (3 + 2), four of a kind, five of a kind. With ``straights`` (Liar dice and Bluff: the
article points to the list of the game General, which it does not give, so kosti states its own) the
small straight 1-2-3-4-5 and the large straight 2-3-4-5-6 rank above three of a kind and below the full
house, as in General, where straight < full house < four of a kind < five of a kind ("генерал").

Within a rank, hands compare by the faces of their groups, biggest group first and higher face first, then
the remaining dice high to low (a pair of 6s beats a pair of 2s; three 4s and two 2s beat three 3s and two
2s — the seed example of games.md §1).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from ..errors import BadInput

__all__ = ["RANKS", "hand_key", "hand_name", "compare_hands", "parse_hand"]

#: Rank ids, low to high, with English and Russian names.
RANKS: tuple[tuple[str, str, str], ...] = (
    ("nothing", "nothing", "ничего"),
    ("pair", "a pair", "пара"),
    ("two_pairs", "two pairs", "две пары"),
    ("three", "three of a kind", "тройка"),
    ("small_straight", "small straight 1-2-3-4-5", "малый стрит 1-2-3-4-5"),
    ("large_straight", "large straight 2-3-4-5-6", "большой стрит 2-3-4-5-6"),
    ("full_house", "full house", "фул"),
    ("four", "four of a kind", "каре"),
    ("five", "five of a kind", "пять одинаковых"),
)
_RANK_INDEX = {r[0]: i for i, r in enumerate(RANKS)}


def parse_hand(value: object) -> tuple[int, ...]:
    """Five faces (1–6) from a list or a string such as ``"3 3 3 2 2"`` / ``"33322"``; raises
    :class:`BadInput` otherwise."""
    if isinstance(value, str):
        tokens = value.replace(",", " ").split()
        if len(tokens) == 1 and tokens[0].isdigit():
            tokens = list(tokens[0])
        try:
            value = [int(t) for t in tokens]
        except ValueError:
            raise BadInput(f"a hand is five faces 1-6, got {value!r}") from None
    if not isinstance(value, list | tuple) or len(value) != 5 or not all(
            isinstance(f, int) and not isinstance(f, bool) and 1 <= f <= 6 for f in value):
        raise BadInput(f"a hand is five faces 1-6, got {value!r}")
    return tuple(sorted(value, reverse=True))


def _rank(faces: Sequence[int], straights: bool) -> str:
    counts = sorted(Counter(faces).values(), reverse=True)
    if counts[0] == 5:
        return "five"
    if counts[0] == 4:
        return "four"
    if counts == [3, 2]:
        return "full_house"
    if straights and sorted(faces) == [1, 2, 3, 4, 5]:
        return "small_straight"
    if straights and sorted(faces) == [2, 3, 4, 5, 6]:
        return "large_straight"
    if counts[0] == 3:
        return "three"
    if counts[:2] == [2, 2]:
        return "two_pairs"
    if counts[0] == 2:
        return "pair"
    return "nothing"


def hand_key(faces: Sequence[int], straights: bool = False) -> tuple[int, ...]:
    """A sort key of a five-dice hand: ``(rank index, faces ordered by group size then face, …)``; a bigger
    key is a better hand. ``straights``: rank the two straights (Liar dice, Bluff)."""
    if len(faces) != 5:
        raise BadInput(f"a hand is five dice, got {len(faces)}")
    c = Counter(faces)
    order = sorted(faces, key=lambda f: (c[f], f), reverse=True)
    return (_RANK_INDEX[_rank(faces, straights)], *order)


def hand_name(faces: Sequence[int], straights: bool = False) -> tuple[str, str]:
    """``(english, russian)`` name of a hand with its faces, e.g. ``("full house 3 3 3 2 2", "фул 3 3 3 2 2")``."""
    key = hand_key(faces, straights)
    _, en, ru = RANKS[key[0]]
    text = " ".join(map(str, key[1:]))
    return f"{en} {text}", f"{ru} {text}"


def compare_hands(a: Sequence[int], b: Sequence[int], straights: bool = False) -> int:
    """1 if hand ``a`` beats ``b``, -1 if it loses, 0 if they are equal."""
    ka, kb = hand_key(a, straights), hand_key(b, straights)
    return (ka > kb) - (ka < kb)
