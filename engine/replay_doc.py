"""The replay document of ``kosti replay`` (``../shared/docs/cli.md``: ``rules``, ``players``, ``scores``, ``state``,
``events``) read into a game: used by the command line and by the dashboard's game import, so it lives in the
engine, not in its command-line module."""

from __future__ import annotations

from typing import Any

from .errors import BadInput
from .games import Game, new_any_game


def game_from_record(doc: Any) -> tuple[Game, list[Any]]:
    """The starting state and the raw event list of a replay document (cli.md): a 1000-family
    :class:`GameState` or a games.md game (:class:`TableGame`), both the one game interface.
    Raises :class:`BadInput` for a malformed document."""
    if not isinstance(doc, dict):
        raise BadInput("the game file must hold a JSON object")
    unknown = set(doc) - {"rules", "players", "scores", "state", "events"}
    if unknown:
        raise BadInput(f"unknown key {sorted(unknown)[0]!r} (expected rules, players, scores, "
                       f"state, events)")
    players = doc.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise BadInput("players: expected a list of names")
    scores = doc.get("scores") or {}
    state = doc.get("state") or {}
    if not isinstance(scores, dict) or not isinstance(state, dict):
        raise BadInput("scores and state must be objects keyed by player name")
    events = doc.get("events", [])
    if not isinstance(events, list):
        raise BadInput("events: expected a list")
    gs = new_any_game(doc.get("rules", "classic"), players, scores, state)
    return gs, events
