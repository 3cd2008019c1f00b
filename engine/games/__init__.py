"""kosti.engine.games — every game kosti hosts behind one interface (:class:`Game`,
:mod:`kosti.engine.protocol`), and the one registry from a name to its game (:func:`find_game`, as
python-chess's ``chess.variant.find_variant``).

* the 1000 family (every preset of rules.md §4): :class:`kosti.engine.game.GameState` itself;
* the games of ``../shared/docs/games.md`` that a camera scores by itself, one module each:
  Pig (:mod:`.pig`), Craps (:mod:`.craps`), Aces (:mod:`.aces`), Four dice (:mod:`.four_dice`),
  Dead dice (:mod:`.dead_dice`), Chicago (:mod:`.chicago`), Buck dice (:mod:`.buck_dice`);
* those that need a little player input (a game's own choices, :class:`Choose`): Indian dice
  (:mod:`.indian_dice`), Martinetti / Ohio (:mod:`.martinetti`), Sea dice / Yacht (:mod:`.yacht`: which dice
  to keep, which box to score), High dice (:mod:`.high_dice`), Bank dice (:mod:`.bank_dice`), Thirteen
  (:mod:`.thirteen`);
* referee aids for the hidden-cup games: Liar dice (:mod:`.liar_dice`), Bluff (:mod:`.bluff`), ranked by
  :mod:`.hands`.

Entry points: :func:`find_game` (a game id or any preset name → its game class; :data:`GAMES` is the registry),
:func:`new_any_game` (a preset name or ``{"preset", "overrides"}`` + players),
:func:`game_from_json` (any saved state), :func:`game_presets` (the ``kosti rules`` entries),
:func:`game_preset` (one preset, with its rules page in English and Russian).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import BadInput
from ..game import GAME_FORMAT, GameState, new_game
from ..presets import PRESET_NAMES
from .aces import PRESETS as _ACES
from .bank_dice import PRESETS as _BANK
from .base import (
    OVER_MOVES,
    SCORE_KINDS,
    ChoiceOption,
    Choose,
    Game,
    GameAction,
    GameParams,
    GamePreset,
    Moves,
    TableGame,
    action_from_json,
    action_to_json,
)
from .bluff import PRESETS as _BLUFF
from .buck_dice import PRESETS as _BUCK
from .chicago import PRESETS as _CHICAGO
from .craps import PRESETS as _CRAPS
from .dead_dice import PRESETS as _DEAD
from .four_dice import PRESETS as _FOUR
from .high_dice import PRESETS as _HIGH
from .indian_dice import PRESETS as _INDIAN
from .liar_dice import PRESETS as _LIAR
from .martinetti import PRESETS as _MARTINETTI
from .pig import PRESETS as _PIG
from .thirteen import PRESETS as _THIRTEEN
from .yacht import PRESETS as _YACHT

__all__ = ["Game", "GameState", "TableGame", "Moves", "OVER_MOVES", "Choose", "ChoiceOption", "GameAction",
           "GameParams", "GamePreset", "SCORE_KINDS", "GAME_PRESETS", "GAME_CLASSES", "GAMES",
           "action_from_json", "action_to_json", "find_game", "new_any_game", "unknown_preset", "game_from_json",
           "game_presets", "game_preset", "is_game_preset"]

#: Presets of the games of games.md by name, in the order ``kosti rules`` lists them.
GAME_PRESETS: dict[str, GamePreset] = {
    p.name: p for p in (*_PIG, *_CRAPS, *_ACES, *_FOUR, *_DEAD, *_CHICAGO, *_BUCK,  # the camera scores them
                        *_INDIAN, *_MARTINETTI, *_YACHT, *_HIGH, *_BANK, *_THIRTEEN,  # a little player input
                        *_LIAR, *_BLUFF)}  # referee aids

#: The games.md game classes by game id.
GAME_CLASSES: dict[str, type[TableGame[Any]]] = {p.game: p.cls for p in GAME_PRESETS.values()}

#: The registry: every game class by game id, the 1000 family first (``"1000"``: :class:`GameState`).
GAMES: dict[str, type[Game]] = {GameState.game: GameState, **GAME_CLASSES}


def find_game(name: str) -> type[Game]:
    """The game class of ``name``: a game id of :data:`GAMES` (``"1000"``, ``"pig"`` …) or any preset name
    (``"classic"`` and every 1000-family preset of rules.md §4 → :class:`GameState`; ``"craps_seed"`` →
    its games.md class). Raises :class:`BadInput` naming every choice (:func:`unknown_preset`)."""
    if name in GAMES:
        return GAMES[name]
    if name in GAME_PRESETS:
        return GAME_PRESETS[name].cls
    if name in PRESET_NAMES:
        return GameState
    raise unknown_preset(name)


def is_game_preset(spec: Any) -> bool:
    """True when ``spec`` (a preset name or ``{"preset": name, ...}``) names a games.md game
    rather than a 1000-family preset."""
    name = spec.get("preset") if isinstance(spec, Mapping) else spec
    return isinstance(name, str) and name in GAME_PRESETS


def game_preset(name: str) -> GamePreset:
    """The games.md preset called ``name``; raises :class:`BadInput` for an unknown name."""
    try:
        return GAME_PRESETS[name]
    except KeyError:
        raise BadInput(f"unknown game preset {name!r}") from None


def _params(spec: Any) -> tuple[GamePreset, GameParams]:
    if isinstance(spec, str):
        p = game_preset(spec)
        return p, p.params
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"preset", "overrides"}
        if unknown:
            raise BadInput(f"rules: unknown key {sorted(unknown)[0]!r} (expected preset, "
                           f"overrides)")
        p = game_preset(str(spec.get("preset")))
        return p, p.params.with_overrides(spec.get("overrides") or {})
    raise BadInput(f"rules: expected a preset name or {{'preset', 'overrides'}}, got {spec!r}")


def new_any_game(rules: Any, players: Sequence[str], scores: Mapping[str, int] | None = None,
                 state: Mapping[str, Mapping[str, Any]] | None = None) -> Game:
    """Start any game: ``rules`` is a preset name (1000 family or games.md) or
    ``{"preset": name, "overrides": {...}}`` (for the 1000 family also a full rules dict);
    ``players``: names in seat order; ``scores``: optional starting scores by name; ``state``:
    1000-family per-player state (cli.md). Raises :class:`BadInput`.

    The game is the registry's (:func:`find_game`); a name it does not know, and the game id ``"1000"`` (the
    family, no preset of it), is refused naming every preset (:func:`unknown_preset`). Rules without a preset
    name (a full rules dict, or not a name at all) are the 1000 family's to accept or refuse (:func:`new_game`)."""
    name = rules.get("preset") if isinstance(rules, Mapping) else rules
    if not isinstance(name, str):
        return new_game(rules, players, scores, state)
    if name == GameState.game:
        raise unknown_preset(name)
    game = find_game(name)
    if game is GameState:
        return new_game(rules, players, scores, state)
    if state:
        raise BadInput("'state' applies to the 1000 family only")
    preset, params = _params(rules)
    return preset.cls.start(params, players, scores)


def unknown_preset(name: str) -> BadInput:
    """The one-line error for a preset name neither the 1000 family (rules.md §4) nor games.md knows, naming them all."""
    return BadInput(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)} (the 1000 family) or "
                    f"{', '.join(GAME_PRESETS)} (the other games)")


def game_from_json(d: Any) -> Game:
    """Restore any saved state (``to_json`` of any game; ``"format": "kosti-game/2"``, or
    ``"kosti-game/1"`` saved before rules.md 1.1, is the 1000 family). Raises :class:`BadInput` for a
    malformed document."""
    if not isinstance(d, Mapping):
        raise BadInput("a saved game must be a JSON object")
    fmt = d.get("format")
    if fmt in (GAME_FORMAT, "kosti-game/1") or fmt is None:
        return GameState.from_json(d)
    for cls in GAME_CLASSES.values():
        if fmt == f"kosti-{cls.game}/1":
            return cls.from_json(d)
    raise BadInput(f"unknown saved game format {fmt!r}")


def game_presets() -> list[dict[str, Any]]:
    """The games.md entries of ``kosti rules --json``: ``{"name", "game", "dice", "target",
    "description", "description_ru", "source", "parameters"}`` each. cli.md: ``kosti replay`` plays them from ``roll``,
    ``bank`` "and a game's own choices as documented in its description" — so a game with its own events
    (:attr:`~kosti.engine.games.base.Game.EVENT_FORMS`) has them appended to both descriptions."""
    def described(p: GamePreset, ru: bool) -> str:
        forms = p.cls.EVENT_FORMS
        text = p.description_ru if ru else p.description
        if not forms:
            return text
        head = "Свои события kosti replay" if ru else "Own events of kosti replay"
        return f"{text}. {head}: " + "; ".join(f"{js} — {r if ru else e}" for js, e, r in forms)

    return [{"name": p.name, "game": p.game, "dice": p.dice, "target": p.target,
             "description": described(p, False), "description_ru": described(p, True),
             "source": p.source, "parameters": p.params.to_dict()}
            for p in GAME_PRESETS.values()]
