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
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from kosti.dashboard.store import Store, ThrowRow
from kosti.models import DEFAULT_CONF, DEFAULT_VALUE_CONF
from kosti.vision.settle import MOTION_FRACTION, STILL_FRACTION

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------------
# Engine adapter
# ---------------------------------------------------------------------------------------------------
from kosti.engine.errors import BadInput, RuleViolation  # noqa: E402
from kosti.engine.game import Bank, GameState, Keep, Roll, new_game  # noqa: E402


def list_presets() -> list[dict[str, Any]]:
    """Every rule preset as ``{"name", "dice", "target", "description", "parameters"}`` (cli.md ``kosti rules``)."""
    from kosti.engine import list_presets as _list

    return [{"name": r.name, "dice": r.dice_count, "target": r.target, "description": r.description,
             "parameters": r.to_dict()} for r in _list()]


def make_game(preset: str, overrides: dict[str, Any] | None, players: list[str]) -> GameState:
    """A fresh engine state. Raises :class:`BadInput` (unknown preset/parameter, bad players)."""
    rules: Any = {"preset": preset, "overrides": overrides or {}} if overrides else preset
    return new_game(rules, players)


def state_to_json(state: GameState) -> str:
    """Serialise the engine state (``GameState.to_json`` dict → text)."""
    return json.dumps(state.to_json(), ensure_ascii=False)


def state_from_json(text: str) -> GameState:
    """Restore the engine state written by :func:`state_to_json`."""
    return GameState.from_json(json.loads(text))


def roll_sizes(state: GameState) -> tuple[int, ...]:
    """Every dice count the next ``Roll`` may have (engine ``GameState.roll_sizes``; one count when the
    keep is automatic, several in a keep phase where throwing k dice means keeping the rest)."""
    f = getattr(state, "roll_sizes", None)
    return tuple(f()) if f is not None else (state.dice_to_throw,)


def _reason(r: Any) -> dict[str, str] | None:
    return None if r is None else {"en": r.text_en, "ru": r.text_ru}


def view_state(state: GameState) -> dict[str, Any]:
    """Engine state → the dashboard's JSON view (scoreboard, turn, allowed actions with reasons)."""
    s = state.summary()
    r = state.rules
    for i, p in enumerate(s["players"]):
        ps = state.players[i]
        p["to_move"] = (not state.over) and i == state.turn.player
        p["admission_score"] = ps.admission_score
        p["farkles"] = ps.farkles
        pit = r.pit_of(ps.score)
        p["pit"] = None if pit is None else {"lo": pit.lo, "hi": pit.hi}
    a = state.allowed()
    t = state.turn
    return {
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
        "dice_count": r.dice_count,
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
        out.append({"en": f"barrel / бочка ({r.barrel.kind}) {r.barrel.entry}",
                    "ru": f"бочка / barrel ({r.barrel.kind}) {r.barrel.entry}"})
    return out


def event_json(e: Any) -> dict[str, Any]:
    """One engine event as JSON (``kind``, ``player``, ``points``, ``faces``, ``text_en``, ``text_ru``)."""
    return e.to_json()


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
    """

    dice: list[TableDie]
    status: str = "ok"
    reasons: list[str] = field(default_factory=list)
    frame_index: int | None = None
    time_s: float | None = None
    image: np.ndarray | None = None
    settled_at: float | None = None

    @property
    def faces(self) -> list[int]:
        """Faces of the dice in the order read (0 = unread)."""
        return [int(d.value) for d in self.dice]


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
        image=getattr(t, "image", None), settled_at=settled_at,
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
        if last is None:
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

    def overlay(self, image: np.ndarray, status: str | None) -> np.ndarray:
        return annotate_frame(image, [], "no dice reader - see the dashboard", None)


def _hide_credentials(spec: str | None) -> str | None:
    """``rtsp://user:pass@cam/…`` → ``rtsp://***@cam/…`` (settings and snapshots are public to viewers)."""
    import re

    return None if spec is None else re.sub(r"//[^/@]*@", "//***@", spec)


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


# ---------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------
class TableError(Exception):
    """A control the table cannot carry out. ``status`` is the HTTP status (404, 409, 422 …)."""

    def __init__(self, status: int, en: str, ru: str | None = None) -> None:
        super().__init__(en)
        self.status = status
        self.en = en
        self.ru = ru if ru is not None else en

    def to_json(self) -> dict[str, Any]:
        """``{"error": English, "error_ru": Russian, "status": HTTP status}``."""
        return {"error": self.en, "error_ru": self.ru, "status": self.status}


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
#: Reader thresholds the dashboard used by default before it took the shipped operating point; every
#: settings change stored them beside what the user changed, so a database that holds exactly this pair
#: holds the old defaults, not a choice (dropped when the table starts: :func:`_without_old_defaults`).
OLD_DEFAULT_THRESHOLDS = {"conf": 0.25, "value_conf": 0.6}


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


def _without_old_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """``stored`` settings without the pre-operating-point default thresholds (see :data:`OLD_DEFAULT_THRESHOLDS`)."""
    th = stored.get("thresholds")
    if not isinstance(th, dict) or any(th.get(k) != v for k, v in OLD_DEFAULT_THRESHOLDS.items()):
        return stored
    return {**stored, "thresholds": {k: v for k, v in th.items() if k not in OLD_DEFAULT_THRESHOLDS}}


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
        stored = store.get_settings()
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
        self._resume()

    # ------------------------------------------------------------------ lifecycle
    def _resume(self) -> None:
        g = self.store.latest_active_game()
        if g is None:
            return
        try:
            state = state_from_json(g.state_json)
        except BadInput as exc:
            log.error("game %s cannot be restored (%s); not resumed", g.id, exc)
            return
        self._set_game(g.id, g.rules, state)
        turns = self.store.turns(g.id)
        self.turn_no = max((t["turn_no"] for t in turns), default=1)
        for a in self.store.actions(g.id)[-10:]:
            self.events.extend(a.events)
        p = self.store.pending_throw(g.id)
        last = self.store.throws(g.id)
        if last:
            self.last_throw = self._throw_view(last[-1])
        log.info("resumed game %s (%s) with %s pending", g.id, ", ".join(g.players), "a throw" if p else "nothing")

    def _set_game(self, game_id: int, rules_spec: dict[str, Any], state: GameState) -> None:
        self.game_id, self.rules_spec, self.state = game_id, rules_spec, state
        self._sync_source()

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
        from kosti.vision.sources import EndOfStream, SourceError

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
                self._source_error = str(exc)
                self.frames.publish(encode_jpeg(placeholder_frame("camera unavailable / нет камеры")))
                self._stop.wait(0.5)
                continue
            except Exception as exc:  # noqa: BLE001 - keep the table alive
                log.exception("source failed")
                self._source_error = f"{type(exc).__name__}: {exc}"
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
                "server_time": time.time(),
            }

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

    def _changed(self) -> None:
        self.version += 1
        self.broadcaster.publish(self.snapshot())

    def _throw_view(self, t: ThrowRow) -> dict[str, Any]:
        return {
            "id": t.id, "faces": t.faces, "confidences": t.confidences, "boxes": t.boxes, "status": t.status,
            "reasons": t.reasons, "resolution": t.resolution, "player": t.player, "turn_no": t.turn_no,
            "image_url": f"/api/throws/{t.id}/image.jpg" if t.has_image else None,
            "created_at": t.created_at,
        }

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

    def new_game(self, players: list[str], preset: str = "classic", overrides: dict[str, Any] | None = None,
                 actor: str | None = None) -> dict[str, Any]:
        """Start a game (the previous unfinished one is marked abandoned). Raises :class:`TableError` 422."""
        try:
            state = make_game(preset, overrides, players)
        except BadInput as exc:
            raise TableError(422, str(exc), str(exc)) from None
        except KeyError as exc:
            raise TableError(422, f"unknown preset or parameter: {exc}") from None
        with self._lock:
            abandon = self.game_id if self.state is not None and not self.state.over else None
            rules = {"preset": preset, "overrides": overrides or {}}
            gid = self.store.create_game(rules, players, state_to_json(state), abandon=abandon,
                                         first_turn=(state.to_move or players[0], state.players[state.turn.player].score))
            self._set_game(gid, rules, state)
            self.turn_no = 1
            self.events.clear()
            self.last_throw = None
            self.last_error = None
            self.events.append({"kind": "new_game", "player": "", "points": 0, "faces": [],
                                "text_en": f"New game: {', '.join(players)} ({preset})",
                                "text_ru": f"Новая игра: {', '.join(players)} ({preset})"})
            self._changed()
            return self.snapshot()

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
            score_after = after.player(mover).score if mover else None
            turn_end = {"score_after": score_after, "outcome": outcome}
            if turn_events and not after.over:
                nxt = turn_events[-1]["player"]
                next_turn = {"turn_no": self.turn_no + 1, "player": nxt, "score_before": after.player(nxt).score}
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
                self.last_throw = {"id": None, "faces": thr.faces, "confidences": [d.confidence for d in thr.dice],
                                   "boxes": [d.box for d in thr.dice], "status": thr.status, "reasons": thr.reasons,
                                   "resolution": "ignored", "player": None, "image_url": None,
                                   "settled_at": thr.settled_at}
                self._changed()
                return {"applied": False, "throw_id": None, "reasons": ["no game in progress"]}
            reasons = list(thr.reasons)  # the pipeline's reasons (and warnings) "English / Русский"
            blocking = []
            sizes = roll_sizes(st)
            if len(thr.dice) not in sizes:
                n = " or ".join(map(str, sizes))
                blocking.append(f"saw {len(thr.dice)} dice, expected {n} / видно костей: {len(thr.dice)}, ожидалось: "
                                + " или ".join(map(str, sizes)))
            if any(d.value not in range(1, 7) for d in thr.dice):
                blocking.append("a die could not be read / кость не распознана")
            ok = thr.status == "ok" and not blocking
            reasons += [r for r in blocking if thr.status != "uncertain" or not reasons]
            # A new throw replaces one still waiting: the dice on the table are what counts.
            self.store.resolve_pending(self.game_id, "superseded")
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
                    reasons.append(exc.en)
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

    def _no_pending(self) -> None:
        assert self.game_id is not None
        if self.store.pending_throw(self.game_id) is not None:
            raise TableError(409, "a throw is waiting for confirmation: confirm or fix it first",
                             "бросок ждёт подтверждения: подтвердите или исправьте его")

    def fix(self, die_index: int, value: int, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Correct one die (index into the throw's dice, value 1–6).

        On a pending throw the value is changed and the throw stays pending until confirmed. On the latest
        applied throw (when it is still the latest action) the roll is re-applied with the corrected faces.
        """
        if not 1 <= int(value) <= 6:
            raise TableError(422, f"a die shows 1–6, not {value}", f"на кости 1–6, а не {value}")
        with self._lock:
            self._require(game_id)
            assert self.game_id is not None
            p = self.store.pending_throw(self.game_id)
            if p is not None:
                faces = list(p.faces)
                if die_index == len(faces):  # a die the camera missed
                    faces.append(int(value))
                    old = None
                elif 0 <= die_index < len(faces):
                    old = faces[die_index]
                    faces[die_index] = int(value)
                else:
                    raise TableError(422, f"die index {die_index} out of range 0–{len(faces)}")
                self.store.add_correction(p.id, self.game_id, die_index, old, int(value), actor)
                self.store.update_throw_faces(p.id, faces)
                row = self.store.get_throw(p.id)
                self.last_throw = self._throw_view(row) if row else self.last_throw
                self._changed()
                return self.snapshot()
            last = self.store.last_live_action(self.game_id)
            if last is None or last.kind != "roll" or last.throw_id is None:
                raise TableError(409, "only the latest throw can be fixed; undo back to it first",
                                 "исправить можно только последний бросок; сначала отмените действия после него")
            row = self.store.get_throw(last.throw_id)
            assert row is not None
            faces = list(last.payload["faces"])
            if not 0 <= die_index < len(faces):
                raise TableError(422, f"die index {die_index} out of range 0–{len(faces) - 1}")
            old = faces[die_index]
            faces[die_index] = int(value)
            base = state_from_json(last.state_before_json)
            saved_turn = self.turn_no
            self.turn_no = last.turn_no
            try:
                self._apply("roll", Roll(tuple(faces)), {"faces": faces, "corrected": True}, actor,
                            throw_id=row.id, supersedes=last.id, base=base)
            except TableError:
                self.turn_no = saved_turn
                raise
            # Later turns opened by the superseded roll: turn rows are rebuilt by record_action(next_turn).
            self.store.add_correction(row.id, self.game_id, die_index, old, int(value), actor)
            self.store.update_throw_faces(row.id, faces)
            self.store.set_throw_resolution(row.id, "corrected")
            self._save_correction(row.id)
            nrow = self.store.get_throw(row.id)
            self.last_throw = self._throw_view(nrow) if nrow else self.last_throw
            self._changed()
            return self.snapshot()

    def confirm(self, faces: list[int] | None = None, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Accept the pending throw (optionally with all its faces given) and apply it as ``Roll``."""
        with self._lock:
            st = self._require(game_id)
            assert self.game_id is not None
            p = self.store.pending_throw(self.game_id)
            if p is None:
                raise TableError(409, "no throw is waiting for confirmation", "нет броска, ждущего подтверждения")
            cur = list(p.faces)
            if faces is not None:
                new = [int(f) for f in faces]
                for i, v in enumerate(new):
                    old = cur[i] if i < len(cur) else None
                    if old != v:
                        self.store.add_correction(p.id, self.game_id, i, old, v, actor)
                cur = new
                self.store.update_throw_faces(p.id, cur)
            if any(f not in range(1, 7) for f in cur):
                bad = [i for i, f in enumerate(cur) if f not in range(1, 7)]
                raise TableError(409, f"die {bad[0]} is unread: fix it first", f"кость {bad[0]} не распознана: исправьте её")
            sizes = roll_sizes(st)
            if len(cur) not in sizes:
                n = " or ".join(map(str, sizes))
                raise TableError(409, f"the throw has {len(cur)} dice but {n} were thrown: fix it",
                                 f"в броске {len(cur)} костей, а бросали {' или '.join(map(str, sizes))}: исправьте")
            self._apply("roll", Roll(tuple(cur)), {"faces": cur, "confirmed": True}, actor, throw_id=p.id)
            if any(c["throw_id"] == p.id for c in self.store.corrections(self.game_id)):
                self.store.set_throw_resolution(p.id, "corrected")
            self._save_correction(p.id)
            row = self.store.get_throw(p.id)
            self.last_throw = self._throw_view(row) if row else self.last_throw
            self._changed()
            return self.snapshot()

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
            self._changed()
            return self.snapshot()

    def undo(self, game_id: int | None = None, actor: str | None = None) -> dict[str, Any]:
        """Undo the latest action: restore the stored state before it (a pending throw is discarded first)."""
        with self._lock:
            if game_id is not None and game_id != self.game_id:
                self._require(game_id)
            if self.game_id is None:
                raise TableError(409, "no game in progress", "игра не начата")
            if self.store.resolve_pending(self.game_id, "discarded"):
                self._changed()
                return self.snapshot()
            act = self.store.undo_last(self.game_id)
            if act is None:
                raise TableError(409, "nothing to undo", "отменять нечего")
            self.state = state_from_json(act.state_before_json)
            self.turn_no = act.turn_no
            self.events.append({"kind": "undo", "player": act.player or "", "points": 0, "faces": [],
                                "text_en": f"Undone: {act.kind} {act.payload.get('faces', '')}".strip(),
                                "text_ru": f"Отменено: {act.kind} {act.payload.get('faces', '')}".strip()})
            self.last_error = None
            self._sync_source()
            self._changed()
            return self.snapshot()

    def request_throw(self, faces: list[int] | None = None, game_id: int | None = None) -> dict[str, Any]:
        """Ask the virtual table to throw ``state.dice_to_throw`` dice (or exactly ``faces``)."""
        with self._lock:
            st = self._require(game_id)
            if self.source is None or not hasattr(self.source, "throw"):
                raise TableError(409, "this table has a real camera: throw the real dice",
                                 "на этом столе настоящая камера: бросайте настоящие кости")
            if faces is not None:
                if len(faces) not in roll_sizes(st):
                    n = " or ".join(map(str, roll_sizes(st)))
                    raise TableError(422, f"{n} dice are to be thrown, got {len(faces)} faces")
                if any(int(f) not in range(1, 7) for f in faces):
                    raise TableError(422, "faces must be 1–6")
            rolling = getattr(self.source, "resting", True) is False
            if rolling or (self._throw_requested_at and time.monotonic() - self._throw_requested_at < 4.0):
                raise TableError(409, "the dice are still rolling: wait for them to settle",
                                 "кости ещё катятся: подождите, пока они остановятся")
            self._throw_requested_at = time.monotonic()
            if self._pipeline is not None:
                self._pipeline.armed = True  # a requested throw is a new throw even right after start-up
            try:
                self.source.throw(n_dice=st.dice_to_throw, faces=faces)
            except ValueError as exc:
                raise TableError(422, str(exc)) from None
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
                "corrections": self.store.corrections(game_id)}

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
            raise TableError(422, str(exc)) from None
        self.stop()
        self.source, self.source_spec = src, spec
        if isinstance(self._reader, VirtualTruthReader):  # ground truth only exists on a virtual table
            self._reader = None if getattr(src, "kind", "") != "virtual" else VirtualTruthReader(src)
        self.store.put_settings({"source": spec})
        self.start()
