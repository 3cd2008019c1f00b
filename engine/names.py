"""The one player-name rule: what a name at the table may be, for every layer that takes names.

Used by the engine when a game starts (:func:`kosti.engine.game.new_game`), by the configuration
(``[game] players``, :class:`kosti.config.GameSettings`) and by the dashboard (a new game, a rename), so
a name refused in one place is refused everywhere with the same reason, in English and Russian.

The rule: at least one name; each name is stripped of surrounding blanks and must not then be empty;
at most :data:`MAX_NAME_LENGTH` characters (a name is shown on a scoreboard row, not stored as a
document); at most :data:`MAX_PLAYERS` names (a game's own rules may allow fewer, ``rules.players``);
no two names equal ignoring case ("Ann" and "ann" would be one row to the eye).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .errors import BadInput

#: Longest player name (characters, after stripping blanks).
MAX_NAME_LENGTH = 40
#: Most players one table takes (the presets of rules.md allow at most 8; games.md's games fewer or as many).
MAX_PLAYERS = 12

NameProblem = Literal["none", "blank", "too_long", "too_many", "duplicate"]


class PlayerNameError(BadInput):
    """A list of player names breaks the rule (exit code 2, as every :class:`BadInput`).

    Attributes:
        code: ``none`` (no names), ``blank``, ``too_long``, ``too_many`` or ``duplicate``.
        name: the offending name (``""`` for ``none``, ``blank`` and ``too_many``).
        reason_en, reason_ru: the reason in the players' words; ``str()`` is the English one.
    """

    def __init__(self, code: NameProblem, reason_en: str, reason_ru: str, name: str = "") -> None:
        super().__init__(reason_en)
        self.code, self.name, self.reason_en, self.reason_ru = code, name, reason_en, reason_ru


def check_player_names(names: Sequence[object]) -> list[str]:
    """Apply the player-name rule to ``names`` (seat order).

    Args:
        names: the names as given (anything not a string counts as blank).

    Returns:
        The names stripped of surrounding blanks, in the same order.

    Raises:
        PlayerNameError: the first problem found, checked in this order: no names, a blank name, a name
            over :data:`MAX_NAME_LENGTH` characters, more than :data:`MAX_PLAYERS` names, a name equal to
            an earlier one ignoring case (``name`` is the later one).
    """
    if not names:
        raise PlayerNameError("none", "give at least one player name", "укажите хотя бы одно имя игрока")
    out = [n.strip() if isinstance(n, str) else "" for n in names]
    if any(not n for n in out):
        raise PlayerNameError("blank", "player names must not be blank", "имя игрока не может быть пустым")
    for n in out:
        if len(n) > MAX_NAME_LENGTH:
            raise PlayerNameError("too_long", f"player name longer than {MAX_NAME_LENGTH} characters: {n!r}",
                                  f"имя игрока длиннее {MAX_NAME_LENGTH} символов: {n}", n)
    if len(out) > MAX_PLAYERS:
        raise PlayerNameError("too_many", f"at most {MAX_PLAYERS} players, got {len(out)}",
                              f"не больше {MAX_PLAYERS} игроков, а указано {len(out)}")
    seen: set[str] = set()
    for n in out:
        if n.casefold() in seen:
            raise PlayerNameError("duplicate", f"two players have the same name: {n}; names must be unique",
                                  f"у двух игроков одно имя: {n}; имена должны различаться", n)
        seen.add(n.casefold())
    return out
