"""A game's record as the dashboard shows it: the list of stored games (:func:`games`), one game's turns,
throws, actions and corrections (:func:`history`) and its paper score sheet (:func:`score_sheet`). Reads of
the :class:`~kosti.dashboard.store.Store` only."""

from __future__ import annotations

from typing import Any

from kosti.dashboard.errors import NotFound
from kosti.dashboard.store import SETUP_OUTCOME, Store
from kosti.dashboard.views import score_deltas, state_from_json, throw_view
from kosti.engine.errors import BadInput


def games(store: Store, current: int | None, limit: int = 50) -> list[dict[str, Any]]:
    """Stored games, newest first, each with its players' scores, turn count and status (for the list
    of games: resume / rematch / final standings); ``current`` marks the game on the table."""
    out = []
    for g in store.list_games(limit):
        scores: dict[str, int] = {}
        try:
            st = state_from_json(g.state_json)
            scores = dict(zip(st.player_names, st.scores_list()))
        except (BadInput, KeyError, ValueError):
            pass
        out.append({"id": g.id, "players": g.players, "rules": g.rules, "status": g.status, "winner": g.winner,
                    "created_at": g.created_at, "updated_at": g.updated_at, "scores": scores,
                    "turns": store.turn_count(g.id), "current": g.id == current})
    return out


def history(store: Store, game_id: int) -> dict[str, Any]:
    """Turns, throws, actions and corrections of a game (404 if unknown)."""
    with store.consistent():  # one view: a throw is never shown pending beside the roll that applied it
        g = store.get_game(game_id)
        if g is None:
            raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
        throws = [throw_view(store, t) for t in store.throws(game_id)]
        actions = [{"id": a.id, "kind": a.kind, "payload": a.payload, "player": a.player, "turn_no": a.turn_no,
                    "actor": a.actor, "events": a.events, "throw_id": a.throw_id, "undone": a.undone,
                    "created_at": a.created_at} for a in store.actions(game_id, include_undone=True)]
        return {"game": {"id": g.id, "rules": g.rules, "players": g.players, "status": g.status,
                         "winner": g.winner, "created_at": g.created_at},
                "turns": store.turns(game_id), "throws": throws, "actions": actions,
                "corrections": store.corrections(game_id), "sheet": score_sheet(store, game_id)}


def score_sheet(store: Store, game_id: int) -> dict[str, Any]:
    """The paper score sheet of a game: one column per player, one row per round.

    Returns ``{"players": [names in seat order], "rows": [{"round": n, "cells": {name: cell}}]}`` where a
    cell is ``{"score": recorded score after the player's turn (None while it is being played), "delta":
    points this turn (negative for a penalty), "outcome": the turn's outcome (bank, bust, dump_truck …),
    "notes": [{"kind", "delta", "after", "by", "text_en", "text_ru"}]}``; ``notes`` explain a change made during someone
    else's turn (an overtaking fine, a fall or push off the barrel, a pit), so the victim's column says why
    the score moved. A round begins when the seat order wraps past the seat of the first turn (rules.md §2:
    players throw in turn; Pig's round begins with the lowest order throw). The order
    or set-up throws before the first turn (outcome ``setup``: :attr:`kosti.engine.games.Game.in_setup`) are
    not a round of the sheet.
    """
    g = store.get_game(game_id)
    if g is None:
        raise NotFound(f"no game {game_id}", f"игры {game_id} нет")
    seats = {n: i for i, n in enumerate(g.players)}
    rows: list[dict[str, Any]] = []
    round_of: dict[int, int] = {}
    prev = None
    first_seat: int | None = None
    for t in store.turns(game_id):
        player, turn_no = t["player"], t["turn_no"]
        assert isinstance(player, str) and isinstance(turn_no, int), t  # NOT NULL columns of ``turns``
        if t["outcome"] == SETUP_OUTCOME:  # an order / set-up throw is no player's turn (Pig, Aces, Buck dice)
            continue
        if first_seat is None:  # a round begins with whoever threw first (Pig: the lowest order throw)
            first_seat = seats.get(player, 0)
        seat = (seats.get(player, 0) - first_seat) % max(len(seats), 1)
        if not rows or (prev is not None and seat <= prev):
            rows.append({"round": len(rows) + 1, "cells": {}})
        prev = seat
        round_of[turn_no] = len(rows) - 1
        cell = rows[-1]["cells"].setdefault(player, {"score": None, "delta": None, "outcome": None, "notes": []})
        cell["score"] = t["score_after"]
        cell["outcome"] = t["outcome"]
        if t["score_after"] is not None:
            cell["delta"] = 0
    for a in store.actions(game_id):
        changes = score_deltas(a.state_before_json, a.state_after_json)
        if not changes or a.turn_no not in round_of:
            continue
        row = rows[round_of[a.turn_no]]
        own = row["cells"].get(a.player or "")
        for name, before, after in changes:
            if name == a.player and own is not None and own["delta"] is not None:
                own["delta"] += after - before
        victims = [(name, before, after) for name, before, after in changes if name != a.player]
        for name, before, after in victims:
            evs = [e for e in a.events if e.get("player") == name and e["kind"] != "turn"]
            cell = row["cells"].setdefault(name, {"score": None, "delta": None, "outcome": None, "notes": []})
            cell["notes"].append({"kind": evs[0]["kind"] if evs else "penalty", "delta": after - before,
                                  "after": after, "by": a.player,
                                  "text_en": "; ".join(str(e["text_en"]) for e in evs) or f"{before} → {after}",
                                  "text_ru": "; ".join(str(e["text_ru"]) for e in evs) or f"{before} → {after}"})
            if cell["score"] is None and not any(r is row for r in rows[round_of[a.turn_no] + 1:]):
                cell["after_note"] = after
    return {"players": list(g.players), "rows": rows}
