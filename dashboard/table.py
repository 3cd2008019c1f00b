"""The live table service: one game on one table, fed by the camera pipeline, shown on every phone.

:class:`TableService` owns the game in progress (an immutable :class:`kosti.engine.GameState`), stores
every step in :class:`kosti.dashboard.store.Store`, and turns settled throws into engine actions:

* a throw the pipeline marks ``ok`` with exactly ``state.dice_to_throw`` readable dice is applied at once
  as ``Roll(faces)``;
* any other throw (``uncertain``: a die unread, a die count that does not match, a low confidence) is
  held **pending** — nothing is scored until the table confirms it or corrects it (``fix`` a die,
  ``confirm`` with the right faces) or throws again. A silent wrong score is never recorded.

Controls (each a method raising :class:`TableError` with an HTTP status and an EN/RU reason): ``bank``
("хватит"), ``keep`` (presets where the player chooses what to set aside), ``fix`` (one die of the pending
or latest throw), ``confirm``, ``discard``, ``undo`` (restore the state before the latest action),
``request_throw`` (the virtual table throws). After every change a JSON snapshot (:meth:`snapshot`) is
broadcast to subscribers (the WebSocket clients).

A background thread reads the frame source, runs the pipeline (``expected_dice = state.dice_to_throw``),
draws overlays and encodes one JPEG per frame into a :class:`FrameHub` that every MJPEG viewer shares.

This module is also the single adapter between the dashboard and the other layers (engine, vision):
names from those packages are only touched here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from kosti.dashboard.store import Store, StoreError, ThrowRow
from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF, EARLIER_OPERATING_POINTS
from kosti.vision.settle import MOTION_FRACTION, STILL_FRACTION

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------------
# Engine adapter
# ---------------------------------------------------------------------------------------------------
from kosti.engine.errors import BadInput, RuleViolation  # noqa: E402
from kosti.engine.game import Bank, Keep, Roll  # noqa: E402
from kosti.engine.game import GameState as EngineGameState  # noqa: E402
from kosti.engine.games import (GAME_PRESETS, Choose, Game, TableGame, game_from_json,  # noqa: E402
                                game_presets, new_any_game)

#: The game on the table: any game of :mod:`kosti.engine.games` (1000 family or games.md).
GameState = Game
from kosti.engine.rules import MAX_PARAMETER as MAX_RULE_NUMBER  # noqa: E402,F401 - the request models' bound


def list_presets() -> list[dict[str, Any]]:
    """Every rule preset as ``{"name", "game", "dice", "target", "description", "parameters"}`` (cli.md
    ``kosti rules``): the 1000 family (``"game": "1000"``), then the games of games.md with their rules pages
    (``rules_en`` / ``rules_ru``) and ``description_ru``."""
    from kosti.engine import list_presets as _list

    out = [{"name": r.name, "game": "1000", "dice": r.dice_count, "target": r.target,
            "description": r.description, "summary": rules_summary(r), "parameters": r.to_dict()} for r in _list()]
    for p in game_presets():
        g = GAME_PRESETS[p["name"]]
        out.append({**p, "rules_en": g.rules_en, "rules_ru": g.rules_ru})
    return out


def make_game(preset: str, overrides: dict[str, Any] | None, players: list[str]) -> Game:
    """A fresh game of any preset. Raises :class:`BadInput` (unknown preset/parameter, bad players)."""
    rules: Any = {"preset": preset, "overrides": overrides or {}} if overrides else preset
    return new_any_game(rules, players)


def state_to_json(state: Game) -> str:
    """Serialise the game state (``to_json`` dict → text)."""
    return json.dumps(state.to_json(), ensure_ascii=False)


def state_from_json(text: str) -> Game:
    """Restore a game state written by :func:`state_to_json` (any game; 1000-family states stored before the
    games interface load unchanged)."""
    return game_from_json(json.loads(text))


def roll_sizes(state: Game) -> tuple[int, ...]:
    """Every dice count the next ``Roll`` may have (one count when the keep is automatic, several in a keep
    phase where throwing k dice means keeping the rest)."""
    return tuple(state.roll_sizes())


def score_of(state: Game, name: str) -> int:
    """Recorded score of the player called ``name`` (the game's unit)."""
    return state.scores_list()[list(state.player_names).index(name)]


def _reason(r: Any) -> dict[str, str] | None:
    return None if r is None else {"en": r.text_en, "ru": r.text_ru}


def view_state(game: Game | EngineGameState) -> dict[str, Any]:
    """Game state → the dashboard's JSON view (scoreboard, turn, allowed actions with reasons). The same keys
    for every game; ``game`` names it (``"1000"``, ``"pig"``, …). A bare 1000-family ``GameState`` is viewed
    as its game."""
    if isinstance(game, TableGame):
        return _table_game_view(game)
    state = game if isinstance(game, EngineGameState) else game.state  # type: ignore[attr-defined]
    s = state.summary()
    r = state.rules
    for i, p in enumerate(s["players"]):
        ps = state.players[i]
        p["to_move"] = (not state.over) and i == state.turn.player
        p["admission_score"] = ps.admission_score
        p["farkles"] = ps.farkles
        pit = r.pit_of(ps.score)
        p["pit"] = None if pit is None else {"lo": pit.lo, "hi": pit.hi}
        # the scoreboard's barrel line: "on the barrel, needs 120 (attempts 1 of 3)" / "на бочке, …"
        p["barrel"] = _reason(state.barrel_status(i))
    a = state.allowed()
    t = state.turn
    return {
        "game": "1000",
        "rules": s["rules"],
        "winner": s["winner"],
        "over": state.over,
        "to_move": s["to_move"],
        "players": s["players"],
        "turn": {
            "player": s["to_move"], "turn_points": s["turn"]["turn_points"], "dice_to_throw": state.dice_to_throw,
            "throws": t.throws, "hot": t.hot, "confirm": t.confirm, "last_roll": list(t.last_roll),
            "last_keep": list(t.last_keep), "pending_keep": None if t.pending is None else list(t.pending),
            "phase": state.phase,
        },
        "allowed": {
            "roll": a.roll, "dice": a.dice, "keep": a.keep, "bank": a.bank, "dice_options": list(roll_sizes(state)),
            "keeps": [{"faces": list(k.faces), "points": k.points} for k in a.keeps],
            "why_not_roll": _reason(a.why_not_roll), "why_not_bank": _reason(a.why_not_bank),
            "hint": _reason(a.hint),
        },
        "choose_keep": r.selection.set_aside == "at_least_one",
        "rules_summary": rules_summary(r),
        # the limits the scoreboard counts against ("bolts 2 of 3", "on the barrel 1 of 3")
        "rules_params": {"bolt_limit": r.bolts.limit if r.bolts.enabled else None,
                         "barrel_attempts": r.barrel.attempts if r.barrel.kind != "none" else None,
                         "fall_limit": r.barrel.max_falls if r.barrel.kind != "none" else None},
        "dice_count": r.dice_count,
        "log_tail": list(s["log"][-8:]),
    }


def _moves_view(m: Any, sizes: tuple[int, ...]) -> dict[str, Any]:
    return {"roll": m.roll, "dice": m.dice, "keep": m.keep, "bank": m.bank, "dice_options": list(sizes),
            "keeps": [{"faces": list(k.faces), "points": k.points} for k in m.keeps],
            "why_not_roll": _reason(m.why_not_roll), "why_not_bank": _reason(m.why_not_bank),
            "hint": _reason(m.hint), "choices": [c.to_json() for c in m.choices],
            "bank_label": _reason(m.bank_label)}


def _table_game_view(g: TableGame) -> dict[str, Any]:
    """The view of a games.md game: players carry ``tags`` (``{"en", "ru"}`` marks) and the game's own keys;
    ``status`` is the game's one-line state; ``rules_page`` its rules in both languages."""
    s = g.summary()
    preset = GAME_PRESETS.get(g.params.name)
    for i, p in enumerate(s["players"]):
        p["to_move"] = (not g.over) and i == g.mover
        p["tags"] = [{"en": en, "ru": ru} for en, ru in g.marks(i)]
    unit_en, unit_ru = g.SCORE_UNIT
    extra = {k: v for k, v in s.items() if k not in ("game", "rules", "winner", "to_move", "players", "turn", "log")}
    desc = [{"en": preset.description, "ru": preset.description_ru}] if preset else []
    return {
        "game": g.game,
        "rules": s["rules"],
        "winner": s["winner"],
        "over": g.over,
        "to_move": s["to_move"],
        "players": s["players"],
        "turn": {"player": s["to_move"], "turn_points": s["turn"]["turn_points"], "dice_to_throw": g.dice_to_throw,
                 "throws": 0, "hot": False, "confirm": False, "last_roll": [], "last_keep": [],
                 "pending_keep": None, "phase": "over" if g.over else "roll"},
        "allowed": _moves_view(g.moves(), roll_sizes(g) if not g.over else ()),
        "choose_keep": False,
        "rules_summary": desc,
        "score_unit": {"en": unit_en, "ru": unit_ru},
        "status": _reason(g.status()) if not g.over else None,
        "rules_page": {"en": preset.rules_en, "ru": preset.rules_ru} if preset else None,
        "game_state": extra,
        "dice_count": preset.dice if preset else g.dice_to_throw,
        "log_tail": list(s["log"][-8:]),
    }


def rules_summary(r: Any) -> list[dict[str, str]]:
    """The house-rule modules in force, one ``{"en", "ru"}`` line each (rule names in both languages)."""
    out = [{"en": f"{r.dice_count} dice, to {r.target}", "ru": f"{r.dice_count} костей, до {r.target}"}]
    if r.opening.threshold:
        out.append({"en": f"opening {r.opening.threshold}", "ru": f"вход {r.opening.threshold}"})
    if r.pits:
        z = ", ".join(f"{p.lo}–{p.hi}" for p in r.pits)
        out.append({"en": f"pits / ямы {z}", "ru": f"ямы / pits {z}"})
    if r.overtaking.enabled:
        out.append({"en": f"overtaking / обгон −{r.overtaking.penalty}", "ru": f"обгон / overtaking −{r.overtaking.penalty}"})
    if r.dump_truck.enabled:
        out.append({"en": f"dump truck / самосвал {r.dump_truck.value}", "ru": f"самосвал / dump truck {r.dump_truck.value}"})
    if r.bolts.enabled:
        out.append({"en": f"bolts / болты {r.bolts.limit} → −{r.bolts.penalty}",
                    "ru": f"болты / bolts {r.bolts.limit} → −{r.bolts.penalty}"})
    if r.barrel.kind != "none":
        en_k, ru_k = _BARREL_KIND_WORDS.get(r.barrel.kind, (r.barrel.kind, r.barrel.kind))
        out.append({"en": f"barrel / бочка ({en_k}) {r.barrel.entry}",
                    "ru": f"бочка / barrel ({ru_k}) {r.barrel.entry}"})
    return out


#: ``barrel.kind`` (rules.md §3.6) in words, ``(English, Russian)``, for the rules line.
_BARREL_KIND_WORDS = {"points": ("points", "по очкам"), "open": ("open, exact 1000", "открытая, ровно 1000"),
                      "capped": ("capped", "с потолком"), "final_range": ("final range", "зона перед финишем")}


def event_json(e: Any) -> dict[str, Any]:
    """One engine event as JSON (``kind``, ``player``, ``points``, ``faces``, ``text_en``, ``text_ru``)."""
    return e.to_json()


#: Engine event kinds that mean the throw scored nothing and the turn's points are lost.
BUST_KINDS = {"bust", "three_farkles", "toxic_twos"}
#: Engine event kinds the whole table must see as a banner, most important first.
BANNER_KINDS = ("win", "instant_win", "dump_truck", "overtaken", "knocked_off", "fall", "bolt_penalty", "bolt",
                "pit", "barrel", "capped", "overshoot", "dot", "three_farkles", "toxic_twos", "bust", "skip_turn")


def _score_changes(before_json: str, after_json: str) -> list[dict[str, Any]]:
    """Players whose recorded score differs between two stored engine states: ``[{"player", "before", "after"}]``."""
    try:
        a, b = state_from_json(before_json), state_from_json(after_json)
    except (BadInput, KeyError, ValueError):
        return []
    names = list(a.player_names)
    return [{"player": n, "before": score_of(a, n), "after": score_of(b, n)}
            for n in names if score_of(a, n) != score_of(b, n)]


#: Event kinds that end a turn, in order of preference for the turn's recorded outcome.
_OUTCOMES = ("win", "instant_win", "dump_truck", "overshoot", "dot", "toxic_twos", "bust", "bank", "capped")


# ---------------------------------------------------------------------------------------------------
# Vision adapter
# ---------------------------------------------------------------------------------------------------
@dataclass
class TableDie:
    """One die of a settled throw: ``value`` 1–6 (0 = unread), ``confidence`` 0–1, ``box`` x1 y1 x2 y2 (px)."""

    value: int
    confidence: float
    box: list[float]
    uncertain: bool = False


@dataclass
class TableThrow:
    """A settled throw as the table service sees it (from the pipeline, or injected by a test).

    Attributes:
        dice: the dice read on the settled frame.
        status: ``"ok"`` or ``"uncertain"`` (the pipeline's verdict).
        reasons: why the throw is uncertain (English, free text).
        frame_index, time_s: the settled frame's number and time (seconds, the source's clock).
        image: the settled frame, ``(H, W, 3)`` uint8 BGR, or ``None``.
        settled_at: ``time.time()`` when the settled frame was read (for latency measurements).
        corrects: ``frame_index`` of the earlier camera throw this one replaces (a die tipped over after
            the throw was read: the same physical throw, :attr:`kosti.vision.pipeline.Throw.corrects`).
    """

    dice: list[TableDie]
    status: str = "ok"
    reasons: list[str] = field(default_factory=list)
    frame_index: int | None = None
    time_s: float | None = None
    image: np.ndarray | None = None
    settled_at: float | None = None
    corrects: int | None = None

    @property
    def faces(self) -> list[int]:
        """Faces of the dice in the order read (0 = unread)."""
        return [int(d.value) for d in self.dice]


def _unstored_view(thr: TableThrow, resolution: str) -> dict[str, Any]:
    """The snapshot's view of a settled throw that has no database row (``ignored``: no game; ``not stored``:
    the write failed) — the same keys as a stored throw's view, ``id`` None."""
    return {"id": None, "faces": thr.faces, "confidences": [d.confidence for d in thr.dice],
            "boxes": [d.box for d in thr.dice], "status": thr.status, "reasons": thr.reasons,
            "resolution": resolution, "player": None, "image_url": None, "settled_at": thr.settled_at}


def throw_from_pipeline(t: Any, settled_at: float | None = None) -> TableThrow:
    """Convert a :class:`kosti.vision.pipeline.Throw` (or anything with that shape) to :class:`TableThrow`."""
    dice = []
    for d in getattr(t, "dice", []):
        value = int(getattr(d, "value", 0))
        box = [float(v) for v in getattr(d, "box", (0, 0, 0, 0))]
        unc = bool(getattr(d, "uncertain", value == 0))
        dice.append(TableDie(value, float(getattr(d, "confidence", 0.0)), box, unc))
    return TableThrow(
        dice=dice, status=str(getattr(t, "status", "ok")), reasons=[str(r) for r in getattr(t, "reasons", [])],
        frame_index=getattr(t, "frame_index", None), time_s=getattr(t, "time_s", None),
        image=getattr(t, "image", None), settled_at=settled_at, corrects=getattr(t, "corrects", None),
    )


class VirtualTruthReader:
    """A stand-in dice reader that reports the virtual table's ground truth instead of reading pixels.

    Used by ``kosti demo --reader truth`` (and automatically when the shipped ONNX models are missing), so
    the dashboard can be shown before the models exist. It has :class:`kosti.vision.reader.DiceReader`'s
    ``read(image) -> Detections`` shape. The dashboard says so on screen (``reader`` in the snapshot).
    """

    name = "virtual table ground truth (no models)"

    def __init__(self, source: Any) -> None:
        self.source = source

    def read(self, image: np.ndarray) -> Any:
        """:class:`kosti.vision.detections.Detections` of the last virtual throw (``image`` is not looked at)."""
        from kosti.vision.detections import Detections

        last = getattr(self.source, "last_throw", None)
        if last is None or last.boxes is None:  # no throw yet, or its dice have not come to rest yet
            return Detections.empty()
        boxes = np.asarray(last.boxes, np.float32).reshape(-1, 4)
        n = len(last.dice)
        return Detections(boxes, np.ones(n, np.float32), np.array([d.face for d in last.dice], np.int8),
                          np.ones(n, np.float32))


def default_reader(source: Any, kind: str = "auto") -> tuple[Any, str]:
    """Choose the dice reader: ``models`` (the shipped ONNX models), ``truth`` (virtual ground truth) or ``auto``.

    Returns ``(reader, description)``. ``auto`` uses the models when they load, else the ground truth of a
    virtual source. Raises whatever :class:`DiceReader` raises for ``models`` when they are missing.
    """
    if kind in ("auto", "models"):
        try:
            from kosti.vision.reader import DiceReader

            r = DiceReader()
            desc = r.describe() if hasattr(r, "describe") else "DiceReader"
            return r, desc
        except Exception as exc:  # noqa: BLE001 - auto falls back below
            if kind == "models":
                raise
            log.warning("dice models not available (%s)%s", exc,
                        "; reading the virtual table's ground truth instead" if getattr(source, "kind", "") == "virtual" else "")
    if getattr(source, "kind", "") == "virtual" or kind == "truth":
        r = VirtualTruthReader(source)
        return r, r.name
    raise RuntimeError("no dice reader: the ONNX models are missing and the source is not the virtual table")


class _NoReader:
    """Pipeline stand-in when no dice reader could be loaded: live view only, no throws."""

    state = "no reader"
    armed = False

    def process(self, image: np.ndarray, t: float, index: int) -> None:
        return None

    def apply_settings(self, settings: dict[str, Any]) -> None:
        pass

    def expect_new_throw(self) -> None:
        pass

    def overlay(self, image: np.ndarray, status: str | None) -> np.ndarray:
        return annotate_frame(image, [], "no dice reader - see the dashboard", None)


def _hide_credentials(spec: str | None) -> str | None:
    """The source spec as viewers may see it (:func:`kosti.vision.sources.redact_url`: no passwords)."""
    from kosti.vision.sources import redact_url

    return redact_url(spec)


class _DetectorAdapter:
    """:class:`kosti.vision.pipeline.ThrowDetector` as ``process(image, t, index) -> TableThrow | None``.

    The detector reports each rest period at most once and skips empty trays and unmoved dice. On top of
    that, the first rest after start-up is never a throw: dice lying on the table when the dashboard
    (re)starts belong to a throw that was already scored (or never will be), so a restart cannot score
    them twice.
    """

    def __init__(self, reader: Any, expected: Callable[[], int], settings: dict[str, Any]) -> None:
        from kosti.vision.pipeline import ThrowDetector

        self.expected = expected
        self.det = ThrowDetector(reader)
        self.state = "moving"
        self.update: Any = None
        self.armed = False
        self.apply_settings(settings)

    def apply_settings(self, settings: dict[str, Any]) -> None:
        """Zones (normalised polygons) and thresholds (``still_s`` seconds, ``value_conf`` 0–1, the settle
        detector's ``motion_fraction`` / ``still_fraction`` 0–1)."""
        from kosti.vision.zones import Zones

        z = settings.get("zones")
        self.det.zones = Zones.from_dict(z) if z else Zones()
        th = settings.get("thresholds") or {}
        if "still_s" in th:
            self.det.settle.still_s = float(th["still_s"])
        settle = self.det.settle
        motion = float(th.get("motion_fraction", settle.motion_fraction))
        still = float(th.get("still_fraction", settle.still_fraction))
        if 0.0 <= still <= motion <= 1.0:
            settle.motion_fraction, settle.still_fraction = motion, still
        else:  # kosti.toml and the stored settings may each be consistent and still contradict each other
            log.warning("settle thresholds ignored: still_fraction %s > motion_fraction %s", still, motion)
        if "value_conf" in th:
            self.det.min_value_confidence = float(th["value_conf"])

    def expect_new_throw(self) -> None:
        """The next throw is a new one (:meth:`kosti.vision.pipeline.ThrowDetector.expect_new_throw`)."""
        self.det.expect_new_throw()

    def process(self, image: np.ndarray, t: float, index: int) -> TableThrow | None:
        from kosti.vision.sources import Frame

        n = self.expected()
        self.det.expected_dice = n if n > 0 else None
        res = self.det.process(Frame(image, t, index))
        self.update = res.update
        self.state = res.update.state.value
        if res.update.settled_now and not self.armed:
            self.armed = True
            return None
        if res.throw is None:
            return None
        return throw_from_pipeline(res.throw)

    def overlay(self, image: np.ndarray, status: str | None) -> np.ndarray:
        """The vision layer's live-view overlay (dice, zones, settle state)."""
        from kosti.vision.pipeline import annotate

        return annotate(image, self.det.last_detections, self.update, self.det.zones, status)


def annotate_frame(image: np.ndarray, dice: list[TableDie], text: str, zones: dict[str, Any] | None) -> np.ndarray:
    """Draw the dice boxes with their values, the zones and a status line on a copy of ``image``.

    ``zones``: ``{"roll_area": [[x, y], ...], "set_aside": [[x, y], ...] | None}`` normalised to [0, 1]
    (:class:`kosti.vision.zones.Zones` dict form) or ``None``.
    """
    out = image.copy()
    h, w = out.shape[:2]
    for key, color in (("roll_area", (255, 200, 0)), ("set_aside", (255, 0, 200))):
        poly = (zones or {}).get(key)
        if poly and len(poly) >= 3:
            pts = np.array([[x * w, y * h] for x, y in poly], np.int32)
            cv2.polylines(out, [pts], True, color, 2, cv2.LINE_AA)
    for d in dice:
        x1, y1, x2, y2 = (int(round(v)) for v in d.box)
        color = (0, 200, 255) if (d.uncertain or d.value == 0) else (60, 220, 60)
        cv2.rectangle(out, (x1, y1), (x2, y2), color, 2, cv2.LINE_AA)
        label = "?" if d.value == 0 else str(d.value)
        cv2.putText(out, label, (x1, max(14, y1 - 6)), cv2.FONT_HERSHEY_SIMPLEX, 0.9, color, 2, cv2.LINE_AA)
    cv2.rectangle(out, (0, 0), (w, 30), (0, 0, 0), -1)
    cv2.putText(out, text, (8, 21), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def placeholder_frame(text: str, size: tuple[int, int] = (640, 360)) -> np.ndarray:
    """A dark frame saying ``text`` (shown when there is no camera)."""
    w, h = size
    img = np.full((h, w, 3), 32, np.uint8)
    cv2.putText(img, text, (20, h // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (200, 200, 200), 2, cv2.LINE_AA)
    return img


def encode_jpeg(image: np.ndarray, quality: int = 80, width: int | None = None) -> bytes:
    """JPEG bytes of ``image`` (BGR), optionally scaled to ``width`` pixels wide."""
    if width and image.shape[1] > width:
        h = round(image.shape[0] * width / image.shape[1])
        image = cv2.resize(image, (width, h), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


# ---------------------------------------------------------------------------------------------------
# Fan-out helpers
# ---------------------------------------------------------------------------------------------------
class FrameHub:
    """The newest encoded live frame, shared by every MJPEG viewer (one encode per frame, any viewers).

    Encoding costs CPU (a few ms per 960-px frame), so the capture thread encodes only while someone
    watches: every viewer calls :meth:`touch` per frame, and :meth:`wanted` stays true for ``linger_s``
    seconds after the last touch.
    """

    def __init__(self, linger_s: float = 2.0) -> None:
        self._lock = threading.Lock()
        self._jpeg: bytes | None = None
        self._seq = 0
        self._t = 0.0
        self._wanted_until = 0.0
        self.linger_s = linger_s

    def publish(self, jpeg: bytes) -> None:
        """Make ``jpeg`` (one encoded frame) the newest frame (from the capture thread)."""
        with self._lock:
            self._jpeg = jpeg
            self._seq += 1
            self._t = time.monotonic()

    def touch(self) -> None:
        """A viewer wants frames (keeps encoding on for ``linger_s`` seconds)."""
        self._wanted_until = time.monotonic() + self.linger_s

    def wanted(self) -> bool:
        """True while a viewer has asked for frames recently."""
        return time.monotonic() < self._wanted_until

    def latest(self) -> tuple[int, bytes | None]:
        """``(sequence number, JPEG bytes or None)``."""
        with self._lock:
            return self._seq, self._jpeg

    def age(self) -> float:
        """Seconds since the latest frame was published (infinite before the first)."""
        with self._lock:
            return time.monotonic() - self._t if self._jpeg is not None else float("inf")

    async def next_frame(self, after: int, poll_s: float = 0.01, timeout_s: float = 2.0) -> tuple[int, bytes | None]:
        """Wait (asynchronously) for a frame newer than ``after``; on timeout return the latest anyway."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.touch()
            seq, jpeg = self.latest()
            if seq > after or time.monotonic() >= deadline:
                return seq, jpeg
            await asyncio.sleep(poll_s)


class Broadcaster:
    """Thread-safe fan-out of JSON messages to asyncio subscribers (one queue per WebSocket)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()

    def subscribe(self) -> asyncio.Queue:
        """A new queue receiving every later message (call from the event loop's thread)."""
        q: asyncio.Queue = asyncio.Queue(maxsize=64)
        with self._lock:
            self._subs.add((asyncio.get_running_loop(), q))
        return q

    def unsubscribe(self, q: asyncio.Queue) -> None:
        """Stop sending to ``q`` (idempotent)."""
        with self._lock:
            self._subs = {s for s in self._subs if s[1] is not q}

    @property
    def count(self) -> int:
        """Number of subscribers."""
        with self._lock:
            return len(self._subs)

    def publish(self, message: dict[str, Any]) -> None:
        """Send ``message`` to every subscriber (from any thread). A full queue drops its oldest message."""
        with self._lock:
            subs = list(self._subs)
        for loop, q in subs:
            try:
                loop.call_soon_threadsafe(_put_latest, q, message)
            except RuntimeError:  # loop closed
                self.unsubscribe(q)


def _put_latest(q: asyncio.Queue, message: dict[str, Any]) -> None:
    if q.full():
        try:
            q.get_nowait()
        except asyncio.QueueEmpty:
            pass
    q.put_nowait(message)


def _faces_text(faces: list[int]) -> str:
    """``[1, 1, 5]`` → ``"1 1 5"`` (0 = an unread die → ``?``)."""
    return " ".join(str(f) if f else "?" for f in faces)


def _dice_ru(n: int) -> str:
    """The Russian word for "dice" after the number ``n`` (кость / кости / костей)."""
    if n % 10 == 1 and n % 100 != 11:
        return "кость"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "кости"
    return "костей"


def _action_text(kind: str, payload: dict[str, Any]) -> tuple[str, str]:
    """A stored action in words, ``(English, Russian)``: "throw 1 1 5" / "бросок 1 1 5"."""
    faces = _faces_text(list(payload.get("faces") or []))
    if kind == "roll":
        return f"throw {faces}", f"бросок {faces}"
    if kind == "keep":
        return f"set aside {faces}", f"отложено {faces}"
    if kind == "bank":
        return "stop (record the turn)", "«хватит» (запись хода)"
    return kind, kind


# ---------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------
from kosti.dashboard.errors import TableError  # noqa: E402 - the typed errors live in dashboard/errors.py


# ---------------------------------------------------------------------------------------------------
# The service
# ---------------------------------------------------------------------------------------------------
DEFAULT_SETTINGS: dict[str, Any] = {
    "zones": None,  # kosti.vision.zones.Zones.to_dict(): normalised polygons, None = whole frame
    # The shipped reader's operating point (kosti.models, chosen by benchmarks/select_operating_point.py)
    # and the settle detector's still time; the table changes them in Settings or in kosti.toml.
    "thresholds": {"conf": DEFAULT_CONF, "value_conf": DEFAULT_VALUE_CONF, "still_s": 0.4},
    "live_width": 960,
    "jpeg_quality": 75,
}
#: Reader thresholds that were the defaults of earlier versions: the dashboard's own before it took the
#: shipped operating point (conf 0.25, value_conf 0.6), and reader v0.3's operating point (0.5, 0.4),
#: which the settings form sent back with every Save (it now sends only what was changed). A database that
#: holds exactly one of these pairs
#: holds an old default, not a choice: the pair is dropped when the table starts
#: (:func:`_without_old_defaults`), so the table reads at the shipped model's own operating point.
OLD_DEFAULT_THRESHOLDS: tuple[dict[str, float], ...] = (
    {"conf": 0.25, "value_conf": 0.6},
    *({"conf": p["conf"], "value_conf": p["value_conf"]} for p in EARLIER_OPERATING_POINTS),  # kosti.models
)


#: The engine's reasons for refusing rule changes (``kosti.engine.rules``, English), in Russian: ``(regex,
#: replacement)`` applied to the text after the parameter path; the path (``opening.threshold``) is what the
#: table typed and stays as typed.
_RULES_REASONS_RU: tuple[tuple[str, str], ...] = (
    (r"unknown rule parameter \(known here: (.*)\)$", r"неизвестный параметр правил (здесь есть: \1)"),
    (r"expected an integer, got (.*)$", r"нужно целое число, а не \1"),
    (r"expected an object, got (.*)$", r"нужен объект JSON {…}, а не \1"),
    (r"expected a list, got (.*)$", r"нужен список, а не \1"),
    (r"expected true/false, got (.*)$", r"нужно true или false, а не \1"),
    (r"expected a string, got (.*)$", r"нужна строка, а не \1"),
    (r"expected (\d+) items, got (\d+)$", r"нужно элементов: \1, а дано \2"),
    (r"(.*) is not one of (.*)$", r"\1 — нет такого значения; можно: \2"),
    (r"(.*) is out of range \(at most (.*) either way\)$", r"\1 — вне допустимого (не больше \2 по модулю)"),
    (r"must be >= (\S+), got (.*)$", r"должно быть не меньше \1, а дано \2"),
    (r"must be positive, got (.*)$", r"должно быть больше нуля, а дано \1"),
    (r"may not be null$", r"не может быть null"),
    (r"unknown preset (.*); choose one of (.*)$", r"нет набора правил \1; есть: \2"),
)


def rules_reason_ru(msg: str) -> str:
    """The engine's English reason for refusing rule changes (``"opening.threshold: expected an integer, got
    'x'"``) in Russian (``"opening.threshold: нужно целое число, а не 'x'"``), by :data:`_RULES_REASONS_RU`;
    a reason without a Russian form is given as it is."""
    path, sep, reason = msg.partition(": ")
    if not sep:
        path, reason = "", msg
    for pattern, ru in _RULES_REASONS_RU:
        text, n = re.subn(pattern, ru, reason, count=1)
        if n:
            return (f"{path}: " if path else "") + text
    return msg


def _merged(base: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``base`` settings updated by ``values``: a table of values (``thresholds``) is merged key by key,
    anything else (``zones``, sizes) is replaced; ``source`` is not a stored setting and is skipped."""
    out = dict(base)
    for k, v in values.items():
        if k == "source":
            continue
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k != "zones":
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


def _valid_stored_settings(stored: dict[str, Any]) -> dict[str, Any]:
    """The stored settings whose values have the right kind and range; any other row is left out with a
    warning in the log (a hand-edited or damaged ``settings`` row must not stop the table: defaults apply).

    Ranges are those of the dashboard's ``PUT /api/settings`` models: thresholds 0–1 (``still_s`` 0–5 s),
    ``live_width`` 160–3840 px, ``jpeg_quality`` 20–95, ``zones`` as :meth:`kosti.vision.zones.Zones.from_dict`
    accepts, ``source`` a string.
    """
    from kosti.vision.zones import Zones

    def number(v: Any, lo: float, hi: float) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and lo <= float(v) <= hi

    out: dict[str, Any] = {}
    for key, value in stored.items():
        ok = False
        try:
            if key == "thresholds":
                limits = {"conf": 1.0, "value_conf": 1.0, "still_s": 5.0, "motion_fraction": 1.0, "still_fraction": 1.0}
                ok = isinstance(value, dict) and all(k in limits and number(v, 0.0, limits[k]) for k, v in value.items())
            elif key == "zones":
                ok = value is None or (isinstance(value, dict) and Zones.from_dict(value) is not None)
            elif key == "live_width":
                ok = number(value, 160, 3840)
            elif key == "jpeg_quality":
                ok = number(value, 20, 95)
            elif key == "source":
                ok = isinstance(value, str) and len(value) <= 2048
            else:
                ok = True  # settings of other versions pass through untouched
        except (TypeError, ValueError, KeyError):
            ok = False
        if ok:
            out[key] = value
        else:
            log.warning("stored setting %r has a bad value (%.80r); the default is used", key, value)
    return out


def _without_old_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """``stored`` settings without an earlier version's default thresholds (see :data:`OLD_DEFAULT_THRESHOLDS`)."""
    th = stored.get("thresholds")
    if not isinstance(th, dict):
        return stored
    for old in OLD_DEFAULT_THRESHOLDS:
        if (old["conf"], old["value_conf"]) == (DEFAULT_CONF, DEFAULT_VALUE_CONF):
            continue  # today's defaults
        if all(th.get(k) == v for k, v in old.items()):
            return {**stored, "thresholds": {k: v for k, v in th.items() if k not in old}}
    return stored


class TableService:
    """One table: the game in progress, its throws and controls, the live view.

    Args:
        store: the database; the latest active game in it is resumed.
        source: a :class:`kosti.vision.sources.FrameSource` (``None`` = no camera: throws come only through
            :meth:`submit_throw`).
        reader: dice reader with ``read(image) -> Detections`` (``None`` with a source: chosen by
            :func:`default_reader`).
        reader_kind: ``auto`` / ``models`` / ``truth`` for :func:`default_reader`.
        source_spec: the string the source came from (shown in settings).

    Thread safety: every public method may be called from any thread; game changes are serialised by one lock.
    """

    def __init__(self, store: Store, source: Any = None, reader: Any = None, reader_kind: str = "auto",
                 source_spec: str | None = None) -> None:
        self.store = store
        self.source = source
        self.source_spec = source_spec
        self._reader = reader
        self._reader_kind = reader_kind
        self.reader_desc = ""
        self._lock = threading.RLock()
        self.broadcaster = Broadcaster()
        self.frames = FrameHub()
        self.version = 0
        self.game_id: int | None = None
        self.rules_spec: dict[str, Any] = {}
        self.state: GameState | None = None
        self.turn_no = 0
        self.events: deque[dict[str, Any]] = deque(maxlen=30)
        self.last_throw: dict[str, Any] | None = None
        self.last_error: dict[str, Any] | None = None
        self.settings = json.loads(json.dumps(DEFAULT_SETTINGS))
        stored = _valid_stored_settings(store.get_settings())
        cleaned = _without_old_defaults(stored)
        if cleaned != stored:
            store.put_settings({"thresholds": cleaned["thresholds"]})
        self.settings = _merged(self.settings, cleaned)
        self._pipeline: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._live_dice: list[TableDie] = []
        self._motion = "idle"
        self._source_error = ""
        self.fps = 0.0
        #: Shown to the UI: control actions need the PIN (set by the app for non-loopback binds).
        self.pin_required = False
        #: Link to the label review page when the app serves one (``None`` otherwise).
        self.review_url: str | None = None
        self._throw_requested_at = 0.0
        #: Capture folder for corrected throws (training data for the reader), or ``None``.
        self.corrections_dir: Any = None
        #: The latest settled throw with its frame (``TableThrow``), game or not; ``None`` before the first.
        self.last_settled: Any = None
        #: ``(factory, token)``: when ``token()`` changes (``kosti models use`` switched the active model),
        #: the capture thread loads ``factory()`` and reads with it from then on. ``None`` = fixed reader.
        self.reader_reload: tuple[Callable[[], Any], Callable[[], Any]] | None = None
        self._reader_token: Any = None
        #: Dice of the pending throw before each edit (fix / add / remove), newest last, so that Undo
        #: takes back one edit at a time: ``(throw_id, faces, boxes, confidences)``. Kept in memory only.
        self._pending_edits: list[tuple[int, list[int], list[list[float]], list[float]]] = []
        #: Called with the engine state whenever a game is put on the table (new, resumed, rematch, restored at
        #: start-up), under the table lock: each must return at once (the advisor starts a thread).
        self.game_hooks: list[Callable[[Any], None]] = []
        self._resume()

    # ------------------------------------------------------------------ lifecycle
    def _resume(self) -> None:
        g = self.store.latest_active_game()
        if g is not None:
            self._load_game(g)

    def _load_game(self, g: Any) -> bool:
        """Put stored game ``g`` (a :class:`GameRow`) on the table: state, turn number, recent events, last
        throw. False (and nothing changed) when its stored state cannot be read."""
        try:
            state = state_from_json(g.state_json)
        except (BadInput, TypeError, ValueError, KeyError, AttributeError) as exc:
            log.error("game %s cannot be restored (%s); not resumed", g.id, exc)
            return False
        self._set_game(g.id, g.rules, state)
        turns = self.store.turns(g.id)
        self.turn_no = max((t["turn_no"] for t in turns), default=1)
        self.events.clear()
        for a in self.store.actions(g.id)[-10:]:
            self.events.extend(a.events)
        last = self.store.throws(g.id)
        self.last_throw = self._throw_view(last[-1]) if last else None
        self.last_error = None
        self._pending_edits.clear()
        return True

    def _set_game(self, game_id: int, rules_spec: dict[str, Any], state: GameState) -> None:
        self.game_id, self.rules_spec, self.state = game_id, rules_spec, state
        self._sync_source()
        for hook in self.game_hooks:
            try:
                hook(state)
            except Exception:  # a helper's fault must not stop a game from starting
                log.exception("game hook %r failed", hook)

    def start(self) -> None:
        """Open the source and start the capture/pipeline thread (no-op without a source)."""
        if self.source is None or (self._thread and self._thread.is_alive()):
            return
        if self._reader is None:
            try:
                self._reader, self.reader_desc = default_reader(self.source, self._reader_kind)
            except Exception as exc:  # noqa: BLE001 - keep the live view; say why nothing is read
                log.error("no dice reader: %s", exc)
                self.reader_desc = f"no dice reader: {exc}"
        elif not self.reader_desc:
            describe = getattr(self._reader, "describe", None)
            self.reader_desc = describe() if callable(describe) else getattr(self._reader, "name", type(self._reader).__name__)
        if self.reader_reload is not None:
            self._reader_token = self.reader_reload[1]()
        self._apply_thresholds()
        self._pipeline = self._make_pipeline() if self._reader is not None else _NoReader()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="kosti-table", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the capture thread and close the source (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self._thread = None
        if self.source is not None:
            self.source.close()

    def _maybe_reload_reader(self) -> None:
        """Swap in the newly activated model when the registry's change token moved (capture thread)."""
        if self.reader_reload is None:
            return
        factory, token_fn = self.reader_reload
        try:
            token = token_fn()
        except Exception:  # noqa: BLE001
            return
        if token == self._reader_token:
            return
        self._reader_token = token
        try:
            reader = factory()
        except Exception as exc:  # noqa: BLE001 - keep reading with the old model
            log.error("the newly activated dice model cannot be loaded (%s); keeping the current one", exc)
            return
        self._reader = reader
        describe = getattr(reader, "describe", None)
        self.reader_desc = describe() if callable(describe) else getattr(reader, "name", type(reader).__name__)
        self._apply_thresholds()
        if isinstance(self._pipeline, _DetectorAdapter):
            self._pipeline.det.reader = reader
        else:
            self._pipeline = self._make_pipeline()
        log.info("dice reader switched: %s", self.reader_desc)
        self._changed()

    def _make_pipeline(self) -> Any:
        return _DetectorAdapter(self._reader, self.expected_dice, self.settings)

    def _apply_thresholds(self) -> None:
        th = self.settings.get("thresholds", {})
        for k in ("conf", "value_conf"):
            if k in th and hasattr(self._reader, k):
                setattr(self._reader, k, float(th[k]))

    def expected_dice(self) -> int:
        """Dice the next throw should show: 0 when no game is running or when several counts are legal
        (a keep phase where the player chooses what to set aside — the count tells the engine the keep)."""
        st = self.state
        if st is None or st.over:
            return 0
        sizes = roll_sizes(st)
        return sizes[0] if len(sizes) == 1 else 0

    def _sync_source(self) -> None:
        """Tell a virtual table how many dice to throw automatically."""
        n = 0 if self.state is None or self.state.over else self.state.dice_to_throw
        if self.source is not None and getattr(self.source, "kind", "") == "virtual" and n > 0:
            self.source.n_dice = n

    def _run(self) -> None:
        from kosti.vision.sources import EndOfStream, SourceError, redact_text

        src = self.source
        fps_t = deque(maxlen=30)
        last_push = 0.0
        while not self._stop.is_set():
            if time.monotonic() - last_push > 2.0:  # camera health and frame rate for every screen
                last_push = time.monotonic()
                self._maybe_reload_reader()
                self.broadcaster.publish({"type": "source", "source": self.source_info()})
            try:
                frame = src.read(timeout=1.0)
            except EndOfStream:
                self._source_error = "end of stream"
                self.frames.publish(encode_jpeg(placeholder_frame("end of stream / конец записи")))
                self._stop.wait(0.5)
                continue
            except (SourceError, OSError) as exc:
                self._source_error = redact_text(str(exc))
                self.frames.publish(encode_jpeg(placeholder_frame("camera unavailable / нет камеры")))
                self._stop.wait(0.5)
                continue
            except Exception as exc:  # noqa: BLE001 - keep the table alive
                log.exception("source failed")
                self._source_error = redact_text(f"{type(exc).__name__}: {exc}")
                self._stop.wait(0.5)
                continue
            self._source_error = ""
            now = time.time()
            fps_t.append(now)
            if len(fps_t) > 1:
                self.fps = (len(fps_t) - 1) / max(1e-6, fps_t[-1] - fps_t[0])
            try:
                thr = self._pipeline.process(frame.image, frame.t, frame.index)
            except Exception:  # noqa: BLE001
                log.exception("pipeline failed on frame %s", frame.index)
                thr = None
            self._motion = getattr(self._pipeline, "state", "")
            if thr is not None:
                thr.settled_at = now
                self.last_settled = thr  # the teach page saves it on request (kosti.dashboard.teach)
                self._live_dice = list(thr.dice)
                try:
                    self.submit_throw(thr)
                except StoreError as exc:  # disk full / read-only: the banner says so on every screen
                    log.error("throw not stored: %s", exc)
                    self._show_unstored(thr)
                except Exception:  # noqa: BLE001
                    log.exception("could not apply throw")
            elif self._motion == "moving":
                self._live_dice = []
            if not self.frames.wanted():
                continue  # nobody is watching: skip the overlay and the JPEG encode
            try:
                img = self._pipeline.overlay(frame.image, None)
            except Exception:  # noqa: BLE001 - fall back to the plain overlay
                st = self.state
                who = f"{st.to_move} - {st.dice_to_throw} dice" if st is not None and not st.over else "no game"
                img = annotate_frame(frame.image, self._live_dice, f"{self._motion} | {who}", self.settings.get("zones"))
            self.frames.publish(encode_jpeg(img, int(self.settings.get("jpeg_quality", 75)),
                                            int(self.settings.get("live_width", 960) or 0) or None))

    # ------------------------------------------------------------------ snapshot / broadcast
    def snapshot(self) -> dict[str, Any]:
        """Everything the dashboard shows, as JSON-ready dict (``type: "state"``)."""
        with self._lock:
            st = self.state
            game = None
            if self.game_id is not None:
                g = self.store.get_game(self.game_id)
                game = {"id": self.game_id, "rules": self.rules_spec, "players": g.players if g else [],
                        "status": g.status if g else "active", "created_at": g.created_at if g else None}
            pending = None
            if self.game_id is not None:
                p = self.store.pending_throw(self.game_id)
                pending = self._throw_view(p) if p else None
            return {
                "type": "state",
                "version": self.version,
                "game": game,
                "state": view_state(st) if st is not None else None,
                "turn_no": self.turn_no,
                "last_throw": self.last_throw,
                "pending": pending,
                "events": list(self.events)[-12:],
                "error": self.last_error,
                "source": self.source_info(),
                "reader": self.reader_desc,
                "pin_required": self.pin_required,
                "review_url": self.review_url,
                "storage": self.storage_info(),
                "banner": self.banner(),
                "bank_preview": self.bank_preview(),
                "server_time": time.time(),
            }

    def storage_info(self) -> dict[str, Any]:
        """``{"ok": true}``, or ``{"ok": false, "error", "error_ru", "status"}`` while the database cannot be
        written (disk full, read-only): what the table sees on every screen until a write succeeds again."""
        err = self.store.write_error
        return {"ok": True} if err is None else {"ok": False, **err.to_json()}

    def source_info(self) -> dict[str, Any]:
        """Source description for the dashboard: kind, spec (credentials hidden), fps, status, whether it can throw."""
        spec = _hide_credentials(self.source_spec)
        if self.source is None:
            return {"kind": "none", "spec": spec, "virtual": False, "status": "none", "fps": 0.0}
        info: dict[str, Any] = {"kind": getattr(self.source, "kind", "?"), "spec": spec,
                                "virtual": hasattr(self.source, "throw"), "fps": round(self.fps, 1),
                                "motion": self._motion}
        status = getattr(self.source, "status", None)
        info["status"] = status.to_dict() if hasattr(status, "to_dict") else ("error" if self._source_error else "ok")
        info["message"] = self._source_error
        return info

    def storage_changed(self) -> None:
        """A write failed (or worked again): push the snapshot so every screen shows the storage state."""
        self._changed()

    def _show_unstored(self, thr: TableThrow) -> None:
        """Show a settled throw that could not be stored (nothing was scored), with the storage error."""
        with self._lock:
            self.last_throw = _unstored_view(thr, "not stored")
            self._changed()

    def _changed(self) -> None:
        self.version += 1
        self.broadcaster.publish(self.snapshot())

    def _throw_view(self, t: ThrowRow) -> dict[str, Any]:
        """A stored throw as JSON. ``outcome`` says what the throw did once scored: ``scored`` (``points``
        added to the turn), ``bust`` (nothing scored, the turn is lost), or ``None`` while it is not scored."""
        outcome, points, events = None, None, []
        if t.resolution in ("applied", "corrected"):
            act = self.store.action_for_throw(t.id)
            if act is not None:
                events = act.events
                kinds = {e["kind"] for e in events}
                outcome = "bust" if kinds & BUST_KINDS else "scored"
                points = sum(int(e.get("points") or 0) for e in events if e["kind"] == "throw")
        return {
            "id": t.id, "faces": t.faces, "confidences": t.confidences, "boxes": t.boxes, "status": t.status,
            "reasons": t.reasons, "resolution": t.resolution, "player": t.player, "turn_no": t.turn_no,
            "image_url": f"/api/throws/{t.id}/image.jpg" if t.has_image else None,
            "created_at": t.created_at, "source": t.source, "outcome": outcome, "points": points,
            "events": [e for e in events if e["kind"] != "turn"],
        }

    def banner(self) -> dict[str, Any] | None:
        """What the latest action did that the whole table must see (bust, bolt, dump truck, pit, barrel,
        overtaking, fall, win …): ``{"id": action id, "kind", "events": [...], "changes": [{"player",
        "before", "after"}]}`` or ``None``. ``kind`` is the most important event kind (:data:`BANNER_KINDS`
        order); ``changes`` lists every player whose recorded score the action changed."""
        if self.game_id is None:
            return None
        act = self.store.last_live_action(self.game_id)
        if act is None:
            return None
        kinds = [e["kind"] for e in act.events]
        kind = next((k for k in BANNER_KINDS if k in kinds), None)
        if kind is None:
            return None
        lost = None
        if kind in BUST_KINDS:
            try:
                lost = state_from_json(act.state_before_json).turn.points or None
            except (BadInput, KeyError, ValueError, AttributeError):
                lost = None
        return {"id": act.id, "kind": kind, "player": act.player, "created_at": act.created_at, "lost": lost,
                "events": [e for e in act.events if e["kind"] in BANNER_KINDS or e["kind"] in ("bank", "throw")],
                "changes": _score_changes(act.state_before_json, act.state_after_json)}

    def bank_preview(self) -> dict[str, Any] | None:
        """What Stop ("хватит") would do now, computed by the engine on a copy of the state (nothing is
        stored): ``{"events": [...], "changes": [{"player", "before", "after"}], "warn": bool}``; ``warn``
        when stopping costs someone points or hits a rule (pit, dump truck, overtaking, barrel, bolt).
        ``None`` when Stop is not allowed."""
        st = self.state
        if st is None or st.over or not st.moves().bank:
            return None
        try:
            after, events = st.apply(Bank())
        except (RuleViolation, BadInput):
            return None
        evs = [event_json(e) for e in events if e.kind != "turn"]
        changes = _score_changes(state_to_json(st), state_to_json(after))
        warn = any(e["kind"] in BANNER_KINDS for e in evs) or any(c["after"] < c["before"] for c in changes) \
            or (bool(changes) and not any(c["after"] > c["before"] for c in changes))
        return {"events": evs, "changes": changes, "warn": warn}

    # ------------------------------------------------------------------ game control
    def _require(self, game_id: int | None) -> GameState:
        if game_id is not None and game_id != self.game_id:
            if self.store.get_game(game_id) is None:
                raise TableError(404, f"no game {game_id}", f"игры {game_id} нет")
            raise TableError(409, f"game {game_id} is not the game on the table (that is {self.game_id})",
                             f"игра {game_id} сейчас не на столе (на столе игра {self.game_id})")
        if self.state is None or self.game_id is None:
            raise TableError(409, "no game in progress: start a new game", "игра не начата: начните новую игру")
        if self.state.over:
            raise TableError(409, "the game is over", "игра окончена")
        return self.state

    def running_game(self) -> dict[str, Any] | None:
        """The unfinished game on the table as ``{"id", "players", "turns"}``, or ``None`` (no game, or over)."""
        if self.game_id is None or self.state is None or self.state.over:
            return None
        g = self.store.get_game(self.game_id)
        return {"id": self.game_id, "players": g.players if g else [], "turns": self.turn_no}

    def new_game(self, players: list[str], preset: str = "classic", overrides: dict[str, Any] | None = None,
                 actor: str | None = None, replace: bool = False) -> dict[str, Any]:
        """Start a game.

        An unfinished game on the table is replaced only when ``replace`` is true (it is then kept as
        ``abandoned`` and can be put back with :meth:`resume`); otherwise :class:`TableError` 409 with code
        ``replace_needed`` — one tap on one phone must not end the game the table is playing.
        Raises :class:`TableError` 422 for bad players, an unknown preset or parameter.
        """
        names = [str(n).strip() for n in players]
        if not names or any(not n for n in names):
            raise TableError(422, "give at least one player name", "укажите хотя бы одно имя игрока", code="players")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise TableError(422, f"two players have the same name: {dup[0]}; names must differ",
                             f"у двух игроков одно имя: {dup[0]}; имена должны различаться", code="players")
        if len(names) > 12:
            raise TableError(422, "at most 12 players", "не больше 12 игроков", code="players")
        try:
            state = make_game(preset, overrides, names)
        except BadInput as exc:
            raise TableError(422, f"these rules cannot be used: {exc}",
                             f"такие правила нельзя применить: {rules_reason_ru(str(exc))}", code="rules") from None
        except KeyError as exc:
            raise TableError(422, f"unknown preset or parameter: {exc}", f"неизвестные правила или параметр: {exc}",
                             code="rules") from None
        with self._lock:
            running = self.running_game()
            if running is not None and not replace:
                who = ", ".join(running["players"])
                raise TableError(409, f"Game {running['id']} ({who}) is still being played: confirm to put it "
                                      "aside (it can be resumed from the list of games)",
                                 f"Игра {running['id']} ({who}) ещё идёт: подтвердите, чтобы отложить её "
                                 "(её можно продолжить из списка игр)", code="replace_needed")
            abandon = running["id"] if running is not None else None
            rules = {"preset": preset, "overrides": overrides or {}}
            gid = self.store.create_game(rules, names, state_to_json(state), abandon=abandon,
                                         first_turn=(state.to_move or names[0],
                                                     score_of(state, state.to_move or names[0])))
            self._set_game(gid, rules, state)
            self.turn_no = 1
            self.events.clear()
            self.last_throw = None
            self.last_error = None
            self._pending_edits.clear()
            self.events.append({"kind": "new_game", "player": "", "points": 0, "faces": [],
                                "text_en": f"New game: {', '.join(names)} ({preset})",
                                "text_ru": f"Новая игра: {', '.join(names)} ({preset})"})
            self._changed()
            return self.snapshot()

    def resume(self, game_id: int, actor: str | None = None, replace: bool = False) -> dict[str, Any]:
        """Put stored game ``game_id`` back on the table (404 unknown; 409 when it is finished, or when
        another unfinished game is on the table and ``replace`` is false — code ``replace_needed``)."""
        with self._lock:
            g = self.store.get_game(game_id)
            if g is None:
                raise TableError(404, f"no game {game_id}", f"игры {game_id} нет")
            if g.status == "finished":
                raise TableError(409, f"game {game_id} is over: start a rematch instead",
                                 f"игра {game_id} окончена: начните реванш", code="finished")
            if game_id == self.game_id:
                return self.snapshot()
            running = self.running_game()
            if running is not None and not replace:
                raise TableError(409, f"Game {running['id']} ({', '.join(running['players'])}) is still being "
                                      "played: confirm to put it aside",
                                 f"Игра {running['id']} ({', '.join(running['players'])}) ещё идёт: "
                                 "подтвердите, чтобы отложить её", code="replace_needed")
            try:
                state_from_json(g.state_json)
            except BadInput:
                raise TableError(409, f"game {game_id} cannot be restored", f"игру {game_id} нельзя восстановить") from None
            self.store.activate_game(game_id)
            g = self.store.get_game(game_id)
            assert g is not None
            self._load_game(g)
            self.events.append({"kind": "resumed", "player": "", "points": 0, "faces": [],
                                "text_en": f"Game {game_id} resumed: {', '.join(g.players)}",
                                "text_ru": f"Игра {game_id} продолжена: {', '.join(g.players)}"})
            self._changed()
            return self.snapshot()

    def rematch(self, game_id: int, actor: str | None = None, replace: bool = False) -> dict[str, Any]:
        """A new game with the players and rules of game ``game_id`` (same seat order); see :meth:`new_game`."""
        g = self.store.get_game(game_id)
        if g is None:
            raise TableError(404, f"no game {game_id}", f"игры {game_id} нет")
        rules = g.rules or {}
        return self.new_game(list(g.players), rules.get("preset", "classic"), rules.get("overrides") or None,
                             actor=actor, replace=replace)

    def games(self, limit: int = 50) -> list[dict[str, Any]]:
        """Stored games, newest first, each with its players' scores, turn count and status (for the list
        of games: resume / rematch / final standings)."""
        out = []
        for g in self.store.list_games(limit):
            scores: dict[str, int] = {}
            try:
                st = state_from_json(g.state_json)
                scores = dict(zip(st.player_names, st.scores_list()))
            except (BadInput, KeyError, ValueError):
                pass
            out.append({"id": g.id, "players": g.players, "rules": g.rules, "status": g.status, "winner": g.winner,
                        "created_at": g.created_at, "updated_at": g.updated_at, "scores": scores,
                        "turns": self.store.turn_count(g.id), "current": g.id == self.game_id})
        return out

    def _apply(self, kind: str, action: Any, payload: dict[str, Any], actor: str | None,
               throw_id: int | None = None, supersedes: int | None = None, base: GameState | None = None) -> list[dict]:
        """Apply an engine action, store it, update turns; returns the events. Caller holds the lock."""
        before = base if base is not None else self.state
        assert before is not None and self.game_id is not None
        try:
            after, events = before.apply(action)
        except RuleViolation as exc:
            raise TableError(409, exc.reason_en, exc.reason_ru) from None
        except BadInput as exc:
            raise TableError(422, str(exc), str(exc)) from None
        evs = [event_json(e) for e in events]
        mover = before.to_move
        turn_end = next_turn = None
        turn_events = [e for e in evs if e["kind"] == "turn"]
        if turn_events or after.over:
            outcome = next((k for k in _OUTCOMES if any(e["kind"] == k for e in evs)), "end")
            score_after = score_of(after, mover) if mover else None
            turn_end = {"score_after": score_after, "outcome": outcome}
            if turn_events and not after.over:
                nxt = turn_events[-1]["player"]
                next_turn = {"turn_no": self.turn_no + 1, "player": nxt, "score_before": score_of(after, nxt)}
        status = "finished" if after.over else "active"
        winner = after.winner
        self.store.record_action(
            self.game_id, kind, payload, player=mover, turn_no=self.turn_no, actor=actor,
            state_before_json=state_to_json(before), state_after_json=state_to_json(after), events=evs,
            throw_id=throw_id, throw_resolution="applied" if throw_id is not None else None,
            turn_end=turn_end, next_turn=next_turn, status=status,
            winner=winner if isinstance(winner, str) or winner is None else ", ".join(winner),
            supersedes=supersedes,
        )
        self.state = after
        if next_turn is not None:
            self.turn_no += 1
        self.events.extend(evs)
        self.last_error = None
        self._sync_source()
        return evs

    def submit_throw(self, thr: TableThrow, actor: str = "camera") -> dict[str, Any]:
        """Take a settled throw: apply it when it is ``ok`` and matches the state, else hold it pending.

        Returns ``{"applied": bool, "throw_id": int | None, "reasons": [...]}``. Without a running game the
        throw is only shown (not stored).
        """
        with self._lock:
            self._throw_requested_at = 0.0
            jpeg = thumb = None
            if thr.image is not None:
                jpeg = encode_jpeg(thr.image, 85)
                thumb = encode_jpeg(thr.image, 70, 240)
            st = self.state
            if st is None or st.over or self.game_id is None:
                self.last_throw = _unstored_view(thr, "ignored")
                self._changed()
                return {"applied": False, "throw_id": None, "reasons": ["no game in progress"]}
            if thr.corrects is not None:
                # The same physical throw, corrected by the camera (a die tipped over): the roll it replaces,
                # when it is still the latest action, is taken back first — one throw, one score.
                last = self.store.last_live_action(self.game_id)
                row = self.store.get_throw(last.throw_id) if last is not None and last.throw_id is not None else None
                if last is not None and last.kind == "roll" and row is not None and row.frame_index == thr.corrects:
                    self.store.undo_last(self.game_id)
                    self.state = state_from_json(last.state_before_json)
                    self.turn_no = last.turn_no
                    st = self.state
            reasons = list(thr.reasons)  # the pipeline's reasons (and warnings) "English / Русский"
            blocking = []
            sizes = roll_sizes(st)
            if not sizes:  # the game waits for a choice first (a bet, a claim, the 2–7 die): say which
                why = st.moves().why_not_roll or st.moves().hint
                blocking.append(f"no throw is due now: {why.text_en} / сейчас не бросают: {why.text_ru}")
            elif len(thr.dice) not in sizes:
                n = " or ".join(map(str, sizes))
                blocking.append(f"saw {len(thr.dice)} dice, expected {n} / видно костей: {len(thr.dice)}, ожидалось: "
                                + " или ".join(map(str, sizes)))
            if any(d.value not in range(1, 7) for d in thr.dice):
                blocking.append("a die could not be read / кость не распознана")
            ok = thr.status == "ok" and not blocking
            reasons += [r for r in blocking if thr.status != "uncertain" or not reasons]
            # A new throw replaces one still waiting: the dice on the table are what counts.
            self.store.resolve_pending(self.game_id, "superseded")
            self._pending_edits.clear()
            tid = self.store.add_throw(
                game_id=self.game_id, turn_no=self.turn_no, player=st.to_move, faces=thr.faces,
                confidences=[float(d.confidence) for d in thr.dice], boxes=[list(map(float, d.box)) for d in thr.dice],
                status="ok" if ok else "uncertain", reasons=reasons, frame_index=thr.frame_index, time_s=thr.time_s,
                resolution="pending", source=actor, jpeg=jpeg, thumb=thumb,
            )
            applied = False
            if ok:
                try:
                    self._apply("roll", Roll(tuple(thr.faces)), {"faces": thr.faces}, actor, throw_id=tid)
                    applied = True
                except TableError as exc:
                    reasons.append(f"{exc.en} / {exc.ru}")
                    self.last_error = exc.to_json()
            row = self.store.get_throw(tid)
            self.last_throw = self._throw_view(row) if row else None
            if self.last_throw is not None:
                self.last_throw["settled_at"] = thr.settled_at
                self.last_throw["reasons"] = reasons
            self._changed()
            return {"applied": applied, "throw_id": tid, "reasons": reasons}

    def bank(self, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Stop ("хватит") and record the turn points. 409 with the engine's reason when forbidden."""
        with self._lock:
            self._require(game_id)
            self._no_pending()
            self._apply("bank", Bank(), {}, actor)
            self._changed()
            return self.snapshot()

    def keep(self, faces: list[int], game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Set these scoring dice aside from the last throw (presets where the player chooses)."""
        with self._lock:
            self._require(game_id)
            self._no_pending()
            try:
                action = Keep(tuple(faces))
            except BadInput as exc:
                raise TableError(422, str(exc)) from None
            self._apply("keep", action, {"faces": list(faces)}, actor)
            self._changed()
            return self.snapshot()

    def choose(self, key: str, value: Any, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """A game's own choice ``{key: value}`` (e.g. a claim, a bet, an operation): 409 with the engine's reason
        when the rules forbid it now, 422 when malformed."""
        with self._lock:
            self._require(game_id)
            self._no_pending()
            self._apply("choose", Choose(key, value), {"key": key, "value": value}, actor)
            self._changed()
            return self.snapshot()

    def _no_pending(self) -> None:
        assert self.game_id is not None
        if self.store.pending_throw(self.game_id) is not None:
            raise TableError(409, "a throw is waiting for confirmation: confirm or fix it first",
                             "бросок ждёт подтверждения: подтвердите или исправьте его")

    def _pending_or_409(self) -> ThrowRow:
        assert self.game_id is not None
        p = self.store.pending_throw(self.game_id)
        if p is None:
            raise TableError(409, "no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
        return p

    def _remember_pending(self, p: ThrowRow) -> None:
        """Keep the pending throw's dice before an edit, so that Undo can take the edit back."""
        self._pending_edits = [e for e in self._pending_edits if e[0] == p.id]
        self._pending_edits.append((p.id, list(p.faces), [list(b) for b in p.boxes], list(p.confidences)))

    def _pending_changed(self, throw_id: int) -> dict[str, Any]:
        row = self.store.get_throw(throw_id)
        self.last_throw = self._throw_view(row) if row else self.last_throw
        self._changed()
        return self.snapshot()

    def fix(self, die_index: int, value: int, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Correct one die (index into the throw's dice, value 1–6).

        On a pending throw the value is changed (``die_index`` = the number of dice adds a die the camera
        missed) and the throw stays pending until confirmed. On the latest applied throw (when it is still
        the latest action) the roll is re-applied with the corrected faces; Undo then restores the throw as
        it was before the fix (:meth:`undo`).
        """
        if not 1 <= int(value) <= 6:
            raise TableError(422, f"a die shows 1–6, not {value}", f"на кости 1–6, а не {value}")
        with self._lock:
            self._require(game_id)
            assert self.game_id is not None
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
                if die_index == len(faces):  # a die the camera missed
                    if len(faces) >= 12:
                        raise TableError(422, "a throw has at most 12 dice", "в броске не больше 12 костей")
                    faces.append(int(value))  # no box: the camera never saw it (no training label is made)
                    confs.append(1.0)
                    old = None
                elif 0 <= die_index < len(faces):
                    old = faces[die_index]
                    faces[die_index] = int(value)
                else:
                    raise TableError(422, f"there is no die {die_index + 1} in this throw",
                                     f"в этом броске нет кости {die_index + 1}")
                self._remember_pending(p)
                self.store.add_correction(p.id, self.game_id, die_index, old, int(value), actor)
                self.store.set_throw_dice(p.id, faces, boxes[:len(faces)], confs[:len(faces)])
                return self._pending_changed(p.id)
            last = self.store.last_live_action(self.game_id)
            if last is None or last.kind != "roll" or last.throw_id is None:
                raise TableError(409, "only the latest throw can be fixed; undo back to it first",
                                 "исправить можно только последний бросок; сначала отмените действия после него")
            row = self.store.get_throw(last.throw_id)
            assert row is not None
            faces = list(last.payload["faces"])
            if not 0 <= die_index < len(faces):
                raise TableError(422, f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            old = faces[die_index]
            faces[die_index] = int(value)
            self._reapply_roll(last, faces, {"faces": faces, "corrected": True, "original_faces": list(last.payload["faces"])},
                               actor)
            self.store.add_correction(row.id, self.game_id, die_index, old, int(value), actor)
            self.store.set_throw_resolution(row.id, "corrected")
            self._save_correction(row.id)
            return self._pending_changed(row.id)

    def _reapply_roll(self, last: Any, faces: list[int], payload: dict[str, Any], actor: str | None) -> None:
        """Replace roll action ``last`` by ``Roll(faces)`` applied to the state before it (turn bookkeeping
        rebuilt by :meth:`Store.record_action`); the throw's faces follow. Caller holds the lock."""
        base = state_from_json(last.state_before_json)
        saved_turn = self.turn_no
        self.turn_no = last.turn_no
        try:
            self._apply("roll", Roll(tuple(faces)), payload, actor, throw_id=last.throw_id, supersedes=last.id, base=base)
        except TableError:
            self.turn_no = saved_turn
            raise
        self.store.update_throw_faces(last.throw_id, faces)

    def remove_die(self, die_index: int, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Take die ``die_index`` (0-based) out of the pending throw: the camera saw a die that was not
        thrown (a set-aside die, a die off the tray). 409 without a pending throw, 422 for a bad index."""
        with self._lock:
            self._require(game_id)
            p = self._pending_or_409()
            assert self.game_id is not None
            if not 0 <= die_index < len(p.faces):
                raise TableError(422, f"there is no die {die_index + 1} in this throw",
                                 f"в этом броске нет кости {die_index + 1}")
            faces, boxes, confs = list(p.faces), [list(b) for b in p.boxes], list(p.confidences)
            old = faces.pop(die_index)
            if die_index < len(boxes):
                boxes.pop(die_index)
            if die_index < len(confs):
                confs.pop(die_index)
            self._remember_pending(p)
            # new_value 0 = the die was removed (corrections.new_value is NOT NULL).
            self.store.add_correction(p.id, self.game_id, die_index, old, 0, actor)
            self.store.set_throw_dice(p.id, faces, boxes, confs)
            return self._pending_changed(p.id)

    def enter(self, faces: list[int], game_id: int | None = None, actor: str | None = "manual") -> dict[str, Any]:
        """Score a throw typed in by hand (any source: the camera is down, missed the throw, or misread it).

        ``faces``: the faces 1–6 of the dice thrown, as many as the state asks for (one of
        :func:`roll_sizes`). A throw waiting for confirmation is replaced (``superseded``). Stored as a
        throw with ``source = "manual"`` and applied as ``Roll(faces)``. 422 (in both languages) for a face
        outside 1–6 or a wrong number of dice; 409 when the rules forbid a throw now.
        """
        with self._lock:
            st = self._require(game_id)
            assert self.game_id is not None
            try:
                faces = [int(f) for f in faces]
            except (TypeError, ValueError):
                raise TableError(422, "faces are numbers 1–6", "грани — числа от 1 до 6") from None
            if any(f not in range(1, 7) for f in faces):
                raise TableError(422, "each die shows 1–6", "на каждой кости от 1 до 6")
            self._check_count(st, len(faces))
            self.store.resolve_pending(self.game_id, "superseded")
            self._pending_edits.clear()
            tid = self.store.add_throw(game_id=self.game_id, turn_no=self.turn_no, player=st.to_move, faces=faces,
                                       confidences=[1.0] * len(faces), boxes=[], status="ok", reasons=[],
                                       resolution="pending", source="manual")
            try:
                self._apply("roll", Roll(tuple(faces)), {"faces": faces, "manual": True}, actor, throw_id=tid)
            except TableError:
                self.store.set_throw_resolution(tid, "rejected")
                raise
            return self._pending_changed(tid)

    @staticmethod
    def _check_count(st: GameState, n: int) -> None:
        sizes = roll_sizes(st)
        if n not in sizes:
            en = " or ".join(map(str, sizes))
            ru = " или ".join(map(str, sizes))
            raise TableError(422, f"{en} dice are to be thrown now, not {n}",
                             f"сейчас бросают {ru} {_dice_ru(sizes[-1])}, а не {n}", code="dice_count")

    def confirm(self, faces: list[int] | None = None, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Accept the pending throw (optionally with all its faces given, any number of them: a die the
        camera saw but nobody threw is left out) and apply it as ``Roll``."""
        with self._lock:
            st = self._require(game_id)
            assert self.game_id is not None
            p = self._pending_or_409()
            cur = list(p.faces)
            if faces is not None:
                new = [int(f) for f in faces]
                if any(f not in range(1, 7) for f in new):
                    raise TableError(422, "each die shows 1–6: set every die or remove it",
                                     "на каждой кости от 1 до 6: укажите каждую кость или уберите её")
                self._check_count(st, len(new))
                self._remember_pending(p)
                for i, v in enumerate(new):
                    old = cur[i] if i < len(cur) else None
                    if old != v:
                        self.store.add_correction(p.id, self.game_id, i, old, v, actor)
                boxes = [list(b) for b in p.boxes][:len(new)]  # dice typed beyond the camera's have no box
                confs = list(p.confidences)[:len(new)] + [1.0] * max(0, len(new) - len(p.confidences))
                cur = new
                self.store.set_throw_dice(p.id, cur, boxes, confs)
            bad = [i for i, f in enumerate(cur) if f not in range(1, 7)]
            if bad:
                raise TableError(409, f"die {bad[0] + 1} is unread: set its value or remove it",
                                 f"кость {bad[0] + 1} не распознана: укажите её значение или уберите её")
            self._check_count(st, len(cur))
            self._apply("roll", Roll(tuple(cur)), {"faces": cur, "confirmed": True}, actor, throw_id=p.id)
            self._pending_edits.clear()
            if any(c["throw_id"] == p.id for c in self.store.corrections(self.game_id)):
                self.store.set_throw_resolution(p.id, "corrected")
            self._save_correction(p.id)
            return self._pending_changed(p.id)

    def _save_correction(self, throw_id: int) -> None:
        """Save a throw the table confirmed or corrected into :attr:`corrections_dir` for retraining
        (the settled frame and the faces the players gave, boxes from the camera). Never fails the game."""
        if self.corrections_dir is None:
            return
        row = self.store.get_throw(throw_id)
        jpeg = self.store.throw_image(throw_id)
        if row is None or jpeg is None:
            return
        dice = [{"value": f, "box": row.boxes[i] if i < len(row.boxes) else None,
                 "confidence": row.confidences[i] if i < len(row.confidences) else None}
                for i, f in enumerate(row.faces)]
        try:
            from kosti.datasets.capture import save_correction

            save_correction(self.corrections_dir, jpeg, dice, model=self.reader_desc or None,
                            key=f"game{row.game_id}-throw{row.id}")
        except Exception as exc:  # noqa: BLE001 - training data is a bonus; the game goes on
            log.warning("could not save the corrected throw %s for retraining: %s", throw_id, exc)

    def discard(self, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Drop the pending throw (the dice will be thrown again)."""
        with self._lock:
            self._require(game_id)
            assert self.game_id is not None
            if self.store.resolve_pending(self.game_id, "discarded") == 0:
                raise TableError(409, "no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
            self._pending_edits.clear()
            self._changed()
            return self.snapshot()

    def undo(self, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Undo the latest step, one at a time:

        * an edit of the pending throw (fix / add / remove a die) → the throw's dice before that edit;
        * a pending throw without edits → dropped (``discarded``);
        * a fix of an applied throw → the throw as it was before the fix (re-applied; the dice are still on
          the table, so the fix is what was wrong, not the throw);
        * any other action → the stored state before it.
        """
        with self._lock:
            if game_id is not None and game_id != self.game_id:
                self._require(game_id)
            if self.game_id is None:
                raise TableError(409, "no game in progress", "игра не начата")
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                edits = [e for e in self._pending_edits if e[0] == p.id]
                if edits:
                    _, faces, boxes, confs = edits[-1]
                    self._pending_edits.remove(edits[-1])
                    self.store.set_throw_dice(p.id, faces, boxes, confs)
                    self._event("undo", p.player or "", f"Edit undone: the throw reads {_faces_text(faces)} again",
                                f"Исправление отменено: в броске снова {_faces_text(faces)}")
                    return self._pending_changed(p.id)
                self.store.resolve_pending(self.game_id, "discarded")
                self._event("undo", p.player or "", f"Throw {_faces_text(p.faces)} dropped",
                            f"Бросок {_faces_text(p.faces)} сброшен")
                self._changed()
                return self.snapshot()
            last = self.store.last_live_action(self.game_id)
            if last is not None and last.kind == "roll" and last.payload.get("original_faces") and last.throw_id is not None:
                orig = [int(f) for f in last.payload["original_faces"]]
                self._reapply_roll(last, orig, {"faces": orig, "restored": True}, actor)
                self.store.set_throw_resolution(last.throw_id, "applied")
                self._event("undo", last.player or "", f"Fix undone: the throw is {_faces_text(orig)} again",
                            f"Исправление отменено: бросок снова {_faces_text(orig)}")
                self.last_error = None
                return self._pending_changed(last.throw_id)
            act = self.store.undo_last(self.game_id)
            if act is None:
                raise TableError(409, "nothing to undo", "отменять нечего")
            self.state = state_from_json(act.state_before_json)
            self.turn_no = act.turn_no
            en, ru = _action_text(act.kind, act.payload)
            self._event("undo", act.player or "", f"Undone: {en}", f"Отменено: {ru}")
            if act.throw_id is not None and self.last_throw and self.last_throw.get("id") == act.throw_id:
                row = self.store.get_throw(act.throw_id)
                self.last_throw = self._throw_view(row) if row else None
            self.last_error = None
            self._sync_source()
            self._changed()
            return self.snapshot()

    def _event(self, kind: str, player: str, en: str, ru: str) -> None:
        self.events.append({"kind": kind, "player": player, "points": 0, "faces": [], "text_en": en, "text_ru": ru})

    def request_throw(self, faces: list[int] | None = None, game_id: int | None = None) -> dict[str, Any]:
        """Ask the virtual table to throw ``state.dice_to_throw`` dice (or exactly ``faces``)."""
        with self._lock:
            st = self._require(game_id)
            if self.source is None or not hasattr(self.source, "throw"):
                raise TableError(409, "this table has a real camera: throw the real dice (or enter the faces by hand)",
                                 "на этом столе настоящая камера: бросайте настоящие кости (или введите грани вручную)")
            if not roll_sizes(st):  # the game waits for a choice (a bet, a claim, the 2–7 die)
                why = st.moves().why_not_roll or st.moves().hint
                raise TableError(409, f"no throw is due now: {why.text_en}", f"сейчас не бросают: {why.text_ru}")
            if faces is not None:
                self._check_count(st, len(faces))
                if any(int(f) not in range(1, 7) for f in faces):
                    raise TableError(422, "each die shows 1–6", "на каждой кости от 1 до 6")
            rolling = getattr(self.source, "resting", True) is False
            if rolling or (self._throw_requested_at and time.monotonic() - self._throw_requested_at < 4.0):
                raise TableError(409, "the dice are still rolling: wait for them to settle",
                                 "кости ещё катятся: подождите, пока они остановятся")
            self._throw_requested_at = time.monotonic()
            if self._pipeline is not None:
                self._pipeline.armed = True  # a requested throw is a new throw even right after start-up
                self._pipeline.expect_new_throw()  # … and never a correction of the last one
            try:
                self.source.throw(n_dice=st.dice_to_throw, faces=faces)
            except ValueError as exc:
                raise TableError(422, str(exc), f"виртуальный стол не может так бросить: {exc}") from None
            return {"requested": st.dice_to_throw, "faces": faces}

    # ------------------------------------------------------------------ history / settings
    def history(self, game_id: int) -> dict[str, Any]:
        """Turns, throws, actions and corrections of a game (404 if unknown)."""
        g = self.store.get_game(game_id)
        if g is None:
            raise TableError(404, f"no game {game_id}", f"игры {game_id} нет")
        throws = [self._throw_view(t) for t in self.store.throws(game_id)]
        actions = [{"id": a.id, "kind": a.kind, "payload": a.payload, "player": a.player, "turn_no": a.turn_no,
                    "actor": a.actor, "events": a.events, "throw_id": a.throw_id, "undone": a.undone,
                    "created_at": a.created_at} for a in self.store.actions(game_id, include_undone=True)]
        return {"game": {"id": g.id, "rules": g.rules, "players": g.players, "status": g.status, "winner": g.winner,
                         "created_at": g.created_at},
                "turns": self.store.turns(game_id), "throws": throws, "actions": actions,
                "corrections": self.store.corrections(game_id), "sheet": self.score_sheet(game_id)}

    def score_sheet(self, game_id: int) -> dict[str, Any]:
        """The paper score sheet of a game: one column per player, one row per round.

        Returns ``{"players": [names in seat order], "rows": [{"round": n, "cells": {name: cell}}]}`` where a
        cell is ``{"score": recorded score after the player's turn (None while it is being played), "delta":
        points this turn (negative for a penalty), "outcome": the turn's outcome (bank, bust, dump_truck …),
        "notes": [{"kind", "delta", "after", "by", "text_en", "text_ru"}]}``; ``notes`` explain a change made during someone
        else's turn (an overtaking fine, a fall or push off the barrel, a pit), so the victim's column says why
        the score moved. A round begins when the seat order wraps (rules.md §2: players throw in turn).
        """
        g = self.store.get_game(game_id)
        if g is None:
            raise TableError(404, f"no game {game_id}", f"игры {game_id} нет")
        seats = {n: i for i, n in enumerate(g.players)}
        rows: list[dict[str, Any]] = []
        round_of: dict[int, int] = {}
        prev = None
        for t in self.store.turns(game_id):
            seat = seats.get(t["player"], 0)
            if not rows or (prev is not None and seat <= prev):
                rows.append({"round": len(rows) + 1, "cells": {}})
            prev = seat
            round_of[t["turn_no"]] = len(rows) - 1
            cell = rows[-1]["cells"].setdefault(t["player"], {"score": None, "delta": None, "outcome": None, "notes": []})
            cell["score"] = t["score_after"]
            cell["outcome"] = t["outcome"]
            if t["score_after"] is not None:
                cell["delta"] = 0
        for a in self.store.actions(game_id):
            changes = _score_changes(a.state_before_json, a.state_after_json)
            if not changes or a.turn_no not in round_of:
                continue
            row = rows[round_of[a.turn_no]]
            own = row["cells"].get(a.player or "")
            for c in changes:
                if c["player"] == a.player and own is not None and own["delta"] is not None:
                    own["delta"] += c["after"] - c["before"]
            victims = [c for c in changes if c["player"] != a.player]
            for c in victims:
                evs = [e for e in a.events if e.get("player") == c["player"] and e["kind"] != "turn"]
                cell = row["cells"].setdefault(c["player"], {"score": None, "delta": None, "outcome": None, "notes": []})
                cell["notes"].append({"kind": evs[0]["kind"] if evs else "penalty", "delta": c["after"] - c["before"],
                                      "after": c["after"], "by": a.player,
                                      "text_en": "; ".join(e["text_en"] for e in evs) or f"{c['before']} → {c['after']}",
                                      "text_ru": "; ".join(e["text_ru"] for e in evs) or f"{c['before']} → {c['after']}"})
                if cell["score"] is None and not any(r is row for r in rows[round_of[a.turn_no] + 1:]):
                    cell["after_note"] = c["after"]
        return {"players": list(g.players), "rows": rows}

    def update_settings(self, values: dict[str, Any]) -> dict[str, Any]:
        """Store and apply settings (zones, thresholds, live view size; ``source`` switches the camera)."""
        with self._lock:
            new_source = values.pop("source", None)
            th = {**self.settings.get("thresholds", {}), **(values.get("thresholds") or {})}
            motion = float(th.get("motion_fraction", MOTION_FRACTION))
            still = float(th.get("still_fraction", STILL_FRACTION))
            if still > motion:
                raise TableError(422, f"still_fraction {still} must not exceed motion_fraction {motion} "
                                      "(the gap is the hysteresis)",
                                 f"still_fraction {still} не может быть больше motion_fraction {motion}")
            self.settings = _merged(self.settings, values)
            chosen = _merged(self.store.get_settings(), values)  # store what was chosen, never the defaults
            self.store.put_settings({k: chosen[k] for k in values})
            self._apply_thresholds()
            if self._pipeline is not None:
                self._pipeline.apply_settings(self.settings)
        if new_source is not None and new_source not in (self.source_spec, _hide_credentials(self.source_spec)):
            self.switch_source(str(new_source))
        self._changed()
        return self.get_settings()

    def get_settings(self) -> dict[str, Any]:
        """Current settings (with the source spec)."""
        d = dict(self.settings)
        d["source"] = _hide_credentials(self.source_spec)
        return d

    def switch_source(self, spec: str) -> None:
        """Close the current source and open ``spec`` instead (422 if it names nothing usable)."""
        from kosti.vision.sources import SourceError, open_source

        kwargs: dict[str, Any] = {}
        if spec.strip().lower().startswith("virtual"):
            kwargs["initial_throw"] = False
        try:
            src = open_source(spec, **kwargs)
        except SourceError as exc:
            from kosti.vision.sources import redact_text

            raise TableError(422, redact_text(str(exc))) from None
        self.stop()
        self.source, self.source_spec = src, spec
        if isinstance(self._reader, VirtualTruthReader):  # ground truth only exists on a virtual table
            self._reader = None if getattr(src, "kind", "") != "virtual" else VirtualTruthReader(src)
        self.store.put_settings({"source": spec})
        self.start()
