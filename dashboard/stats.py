"""Dice statistics of the stored games: the ``/api/stats`` document and its PNG plot (``kosti stats`` is
:mod:`kosti.dashboard.stats_cli`).

Reads the dashboard database (:class:`kosti.dashboard.store.Store`) and hands plain numbers to
:mod:`kosti.engine.advisor.dice_stats` (the maths: counts, chi-square with its p-value, luck).

Which throws count: every stored throw that was scored — resolution ``applied`` or ``corrected``
(with the corrected faces) — and whose action was not undone. Dropped, replaced and pending
throws, and throws seen with no game, are left out: they were misreads or not part of play.

Per-die counts need the camera to tell the dice apart (colour or tracked position); the live
pipeline does not do that yet, so ``per_die.available`` is false and says why. A stored throw whose
``reasons`` carry ``die_ids`` (a list, one id per die) is counted per die already.

``kosti stats [--db PATH] [--config PATH] [--game ID] [--plot FILE.png] [--json]`` prints the
document (exactly one JSON document with ``--json``); exit 2 for a missing or unreadable database
or an unknown game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from typing_extensions import TypedDict

from kosti.engine import resolve_rules
from kosti.engine.advisor.dice_stats import (
    TABLE_SUBJECT,
    bust_rate,
    chi_square_uniform,
    expected_band,
    face_counts,
    per_die_counts,
    summarise_counts,
    throw_luck,
)
from kosti.engine.games import is_game_preset
from kosti.engine.rules import Rules

from .store import SETUP_OUTCOME, Store

#: Throw resolutions that count (see the module docstring).
COUNTED = ("applied", "corrected")
PER_DIE_NOTE = ("the camera does not tell the dice apart yet (it follows no die by its colour or place): "
                "only the counts of the whole table are available")
PER_DIE_NOTE_RU = ("камера пока не различает кости (не следит за цветом или местом каждой кости): "
                   "есть только общий счёт стола")


class ChiSquareJson(TypedDict):
    """:meth:`kosti.engine.advisor.dice_stats.ChiSquare.to_json`: dice counted ``n``, Pearson's ``statistic``, ``dof``
    (5), ``p_value`` (None without dice), ``enough`` (expected count ≥ 5 per face), the verdict in words."""

    n: int
    statistic: float
    dof: int
    p_value: float | None
    enough: bool
    verdict: str
    verdict_ru: str


class LuckJson(TypedDict):
    """:meth:`kosti.engine.advisor.dice_stats.Luck.to_json`: points of the scored throws against their expectation
    under the same rules (``z``: standard deviations above it), per turn, with the verdict in words."""

    player: str
    throws: int
    turns: int
    points: int
    expected: float
    per_turn: float
    z: float
    verdict: str
    verdict_ru: str


class PlayerStatsJson(TypedDict):
    """One player's row: turns, throws, recorded ``points_per_turn`` (None before a turn ends), zero throws
    and the number fair dice would give, ``luck`` (1000 family throws only)."""

    player: str
    turns: int
    throws: int
    points_per_turn: float | None
    zero_throws: int
    expected_zero_throws: float
    luck: LuckJson


class DieStatsJson(TypedDict):
    """One tracked die: its six face ``counts`` and their fairness test."""

    counts: list[int]
    chi_square: ChiSquareJson


class PerDieJson(TypedDict):
    """Per-die counts: ``available`` only when the camera tells the dice apart (``note`` says why not)."""

    available: bool
    note: str | None
    note_ru: str | None
    dice: dict[str, DieStatsJson]


class StatsDocument(TypedDict):
    """The ``/api/stats`` and ``kosti stats --json`` document (see :func:`collect`)."""

    games: int
    throws: int
    dice: int
    faces: list[int]
    expected: float
    band: list[float]
    chi_square: ChiSquareJson
    per_die: PerDieJson
    players: list[PlayerStatsJson]


class _PlayerTally(TypedDict):
    throws: list[tuple[Rules | None, tuple[int, ...]]]
    turns: int
    points: int


def _die_ids(reasons: Sequence[object]) -> list[object] | None:
    """The ``die_ids`` list a stored throw's reasons carry (one id per die), or None."""
    for r in reasons:
        if isinstance(r, dict):
            ids = r.get("die_ids")
            if isinstance(ids, list):
                return ids
    return None


def collect(store: Store, game_ids: list[int] | None = None) -> StatsDocument:
    """The statistics document of the stored games (all, or ``game_ids``).

    Keys: ``games``, ``throws`` (scored throws), ``dice`` (dice in them), ``faces`` (six counts),
    ``expected`` (count per face of fair dice), ``band`` ([low, high], 95 %), ``chi_square``
    (:class:`kosti.engine.advisor.dice_stats.ChiSquare` JSON), ``per_die`` ({available, note, note_ru,
    dice: id → {counts, chi_square}}), ``players`` (per player: turns, throws, recorded
    ``points_per_turn``, ``zero_throws`` and ``expected_zero_throws``, ``luck``). Raises ``KeyError``
    for an unknown game id.

    Every game's throws count in the face statistics (a die is a die whatever the game); luck and the
    zero-throw rate are measured against the 1000 family's scoring (:mod:`kosti.engine.advisor.dice_stats`), so the
    other games (``games.md``: Pig, Chicago, …) add their throws and turns but no luck."""
    games = []
    if game_ids is None:
        games = list(reversed(store.list_games(limit=1_000_000)))
    else:
        for gid in game_ids:
            g = store.get_game(gid)
            if g is None:
                raise KeyError(gid)
            games.append(g)
    all_faces: list[list[int]] = []
    tracked: list[tuple[list[int], list[object] | None]] = []
    by_player: dict[str, _PlayerTally] = {}
    for g in games:
        rules = None if is_game_preset(g.rules) else resolve_rules(g.rules)
        live = {a.throw_id for a in store.actions(g.id) if a.throw_id is not None}
        for t in store.throws(g.id):
            if t.resolution not in COUNTED or t.id not in live:
                continue
            if not t.faces or len(t.faces) > (rules.dice_count if rules is not None else 6) \
                    or not all(1 <= f <= 6 for f in t.faces):
                continue
            all_faces.append(list(t.faces))
            tracked.append((list(t.faces), _die_ids(t.reasons)))
            if t.player:
                p = by_player.setdefault(t.player, {"throws": [], "turns": 0, "points": 0})
                p["throws"].append((rules, tuple(t.faces)))
        for turn in store.turns(g.id):
            player = turn["player"]
            if turn.get("outcome") in (None, SETUP_OUTCOME) or not isinstance(player, str):
                continue  # a turn in progress, or the order / set-up throws that are no one's turn
            p = by_player.setdefault(player, {"throws": [], "turns": 0, "points": 0})
            p["turns"] += 1
            before, after = turn.get("score_before"), turn.get("score_after")
            if isinstance(before, int) and isinstance(after, int):  # the turns table's INTEGER columns
                p["points"] += after - before
    counts = face_counts(all_faces)
    n = sum(counts)
    mean, lo, hi = expected_band(n)
    per_die = per_die_counts(tracked)
    players: list[PlayerStatsJson] = []
    for name, p in by_player.items():
        scored = [(r, f) for r, f in p["throws"] if r is not None]  # the 1000 family's throws
        luck = throw_luck(name, scored, p["turns"])
        zero_throws, expected_zero = 0, 0.0
        for rules, faces in scored:
            z, e = bust_rate(rules, [faces])
            zero_throws += z
            expected_zero += e
        players.append({"player": name, "turns": p["turns"], "throws": len(p["throws"]),
                        "points_per_turn": round(p["points"] / p["turns"], 2) if p["turns"] else None,
                        "zero_throws": zero_throws, "expected_zero_throws": round(expected_zero, 2),
                        "luck": cast(LuckJson, luck.to_json())})  # the engine's JSON, keys as LuckJson
    return {
        "games": len(games), "throws": len(all_faces), "dice": n, "faces": counts,
        "expected": round(mean, 3), "band": [round(lo, 3), round(hi, 3)],
        "chi_square": cast(ChiSquareJson, chi_square_uniform(counts, TABLE_SUBJECT).to_json()),
        "per_die": {"available": bool(per_die), "note": None if per_die else PER_DIE_NOTE,
                    "note_ru": None if per_die else PER_DIE_NOTE_RU,
                    "dice": cast(dict[str, DieStatsJson], summarise_counts(per_die))},
        "players": players,
    }


def faces_png(doc: StatsDocument, width: int = 640, height: int = 360) -> bytes:
    """A PNG bar chart of ``doc["faces"]`` with the expected count (line) and its 95 % band
    (shaded), drawn with OpenCV (no plotting library on the Pi). Returns the PNG bytes."""
    import cv2  # imported here: ``kosti stats`` without --plot needs no OpenCV
    import numpy as np

    img = np.full((height, width, 3), (27, 35, 43)[::-1], np.uint8)  # the dashboard's card colour
    counts = doc["faces"]
    lo, hi = doc["band"]
    top = max([hi, *counts, 1]) * 1.15
    left, right, bottom, ceil = 50, width - 20, height - 40, 30

    def y(v: float) -> int:
        return int(bottom - (bottom - ceil) * v / top)

    fg, mut, acc, band_c = (242, 237, 232), (173, 161, 147), (107, 185, 63), (70, 90, 60)
    cv2.rectangle(img, (left, y(hi)), (right, y(lo)), band_c, -1)
    cv2.line(img, (left, y(doc["expected"])), (right, y(doc["expected"])), mut, 1, cv2.LINE_AA)
    slot = (right - left) / 6
    for i, c in enumerate(counts):
        x0 = int(left + slot * i + slot * 0.2)
        x1 = int(left + slot * (i + 1) - slot * 0.2)
        color = acc if lo <= c <= hi else (42, 163, 240)
        cv2.rectangle(img, (x0, y(c)), (x1, bottom), color, -1)
        cv2.putText(img, str(c), (x0, y(c) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5, fg, 1, cv2.LINE_AA)
        cv2.putText(img, str(i + 1), ((x0 + x1) // 2 - 6, bottom + 24), cv2.FONT_HERSHEY_SIMPLEX,
                    0.7, fg, 2, cv2.LINE_AA)
    cv2.line(img, (left, bottom), (right, bottom), mut, 1)
    p = doc["chi_square"]["p_value"]
    title = f"{doc['dice']} dice, expected {doc['expected']:.1f} per face (band 95%)"
    if p is not None:
        title += f", chi2 p = {p:.3f}"
    cv2.putText(img, title, (left, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, fg, 1, cv2.LINE_AA)
    ok, buf = cv2.imencode(".png", img)
    if not ok:  # pragma: no cover - OpenCV always encodes a valid image
        raise RuntimeError("PNG encoding failed")
    return buf.tobytes()
