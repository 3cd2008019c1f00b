"""``kosti club``: every table of a club on one screen, live, over the tables' MQTT broker.

Each table's dashboard publishes itself on the broker (:mod:`kosti.dashboard.mqtt`: ``<prefix>/<table>/state``,
``availability``, ``results``, ``event/…``). The club reads the same topics and nothing else — the broker is the
only link between the tables, no protocol of kosti's own — and serves one page (``/``, English and Russian) with
each table's players, scores and turn, and the evening's standings.

* :class:`ClubBoard` keeps what the broker said of each table (messages validated and bounded; a table that sends
  nonsense is ignored, not shown) and builds the page's snapshot (:meth:`ClubBoard.snapshot`).
* A table is ``live`` only while its retained availability says ``online`` *and* the club is connected to the
  broker; ``off`` when it said ``offline`` (a clean stop) or the broker said it for it (its last will: the Pi went
  off); ``unknown`` when no word of its availability has come since the club (re)connected. Only ``live`` tables
  are shown as playing: the others keep their last known scores, greyed and marked so — never stale as live.
* Standings: every game a table finished since ``since`` (the evening's start), over all tables: per player,
  wins, games and points, most wins first (:func:`standings`).
* :class:`ClubListener` is the paho-mqtt subscriber; :func:`create_club_app` the FastAPI app (``/``,
  ``/api/club``, the WebSocket ``/ws`` pushing each new snapshot).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kosti.common.mqtt_names import MQTT_TOPIC_LEVEL
from kosti.dashboard.access import CrossSiteGuard, allowed_host_names
from kosti.dashboard.broadcast import Broadcaster

if TYPE_CHECKING:
    from paho.mqtt.client import Client, ConnectFlags, DisconnectFlags, MQTTMessage
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

    from kosti.dashboard.mqtt import BrokerSettings

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Largest message read from the broker (bytes); a table's state is ~1 KiB, its results ~5 KiB.
MAX_PAYLOAD = 256 * 1024
#: At most this many tables are shown (a club of 64 tables is a tournament hall; more is a broker gone wrong).
MAX_TABLES = 64
#: Default length of the evening for the standings: games finished this many hours before now count.
EVENING_HOURS = 12.0

Name = Annotated[str, Field(min_length=1, max_length=64)]
Text = Annotated[str, Field(max_length=400)]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PlayerIn(_In):
    """A player on a table's ``state``."""

    name: Name
    score: int | None = None
    to_move: bool = False


class LastThrowIn(_In):
    """The ``last_throw`` of a table's ``state``."""

    text: Annotated[str, Field(max_length=60)]
    points: int | None = None
    player: Name | None = None


class GameIn(_In):
    """The ``game`` of a table's ``state``."""

    id: int | None = None
    game: Annotated[str, Field(max_length=40)] | None = None
    preset: Annotated[str, Field(max_length=60)] | None = None
    status: Annotated[str, Field(max_length=20)] | None = None


class StateIn(_In):
    """A table's retained ``state`` (:func:`kosti.dashboard.mqtt.state_message`), as far as the club shows it."""

    name: Name
    game: GameIn | None = None
    players: Annotated[list[PlayerIn], Field(max_length=16)] = []
    current_player: Name | None = None
    turn_no: int = 0
    turn_points: int = 0
    over: bool = False
    winner: Annotated[str, Field(max_length=200)] | None = None
    last_throw: LastThrowIn | None = None
    camera: Annotated[str, Field(max_length=20)] = "none"
    time: float = 0.0


class ResultPlayerIn(_In):
    """One player's final score in a finished game."""

    name: Name
    score: int | None = None


class ResultIn(_In):
    """One finished game of a table's ``results``."""

    id: int
    finished_at: float
    preset: Annotated[str, Field(max_length=60)] | None = None
    players: Annotated[list[ResultPlayerIn], Field(max_length=16)]
    winner: Annotated[str, Field(max_length=200)] | None = None


class ResultsIn(_In):
    """A table's retained ``results`` (:func:`kosti.dashboard.mqtt.results_message`)."""

    games: Annotated[list[ResultIn], Field(max_length=100)] = []


class EngineEventIn(_In):
    """One engine event carried by an event message."""

    kind: Annotated[str, Field(max_length=40)]
    text_en: Text = ""
    text_ru: Text = ""


class EventIn(_In):
    """An event message (``event/throw|bust|turn_end|game_end``)."""

    kind: Annotated[str, Field(max_length=20)]
    player: Name | None = None
    events: Annotated[list[EngineEventIn], Field(max_length=40)] = []
    time: float = 0.0


def standings(results: Mapping[str, Sequence[ResultIn]], since: float) -> list[dict[str, Any]]:
    """The evening's standings over every table's finished games (``results``: table id → games) finished at or
    after ``since`` (seconds since the epoch).

    A player is one name, whatever its case, at any table (the spelling shown is the first met). Returns
    ``[{"name", "wins", "games", "points", "tables"}]`` sorted by wins, then points, both descending, then
    name; ``points`` sums the player's final scores, ``tables`` lists the tables played at. ``winner`` is a
    name or several joined by ", " (a shared win counts as a win for each)."""
    rows: dict[str, dict[str, Any]] = {}
    for table, games in sorted(results.items()):
        for g in games:
            if g.finished_at < since:
                continue
            winners = {w.strip().casefold() for w in (g.winner or "").split(",") if w.strip()}
            for p in g.players:
                row = rows.setdefault(p.name.casefold(), {"name": p.name, "wins": 0, "games": 0, "points": 0,
                                                          "tables": []})
                row["games"] += 1
                row["points"] += p.score or 0
                row["wins"] += p.name.casefold() in winners
                if table not in row["tables"]:
                    row["tables"].append(table)
    return sorted(rows.values(), key=lambda r: (-r["wins"], -r["points"], r["name"].casefold()))


class ClubBoard:
    """What the broker said of each table, and the page's snapshot of it. Thread-safe.

    Args:
        prefix: the tables' topic prefix (``[mqtt] prefix``).
        since: the evening's start for the standings (seconds since the epoch).
        address: the broker as shown on the page (``host:port``).

    Attributes:
        listeners: called with each new snapshot (the club app's :class:`Broadcaster`).
    """

    def __init__(self, prefix: str = "kosti", since: float | None = None, address: str = "") -> None:
        self.prefix = prefix
        self.since = time.time() - EVENING_HOURS * 3600 if since is None else since
        self.address = address
        self._lock = threading.Lock()
        self._tables: dict[str, dict[str, Any]] = {}
        self._results: dict[str, list[ResultIn]] = {}
        self.connected = False
        self.connected_since: float | None = None
        self.ignored = 0  #: messages refused as malformed (a table that sends nonsense is not shown)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def subscriptions(self) -> list[str]:
        """The topic filters the club subscribes to."""
        return [f"{self.prefix}/+/{t}" for t in ("availability", "state", "results")] + [f"{self.prefix}/+/event/+"]

    # ------------------------------------------------------------------ from the broker
    def broker_state(self, connected: bool) -> None:
        """The club's own connection: on every (re)connection each table's availability is forgotten until the
        broker says it again (its retained message comes at once), so a table that died meanwhile is not live."""
        with self._lock:
            self.connected = connected
            self.connected_since = time.time()
            if connected:
                for t in self._tables.values():
                    t["availability"] = None
        self._changed()

    def message(self, topic: str, payload: bytes) -> bool:
        """One message from the broker; True when it changed the board. Topics outside the prefix, a table id that
        is not a topic level of kosti's, more than :data:`MAX_TABLES` tables, payloads over :data:`MAX_PAYLOAD` or
        that do not validate are ignored (counted in :attr:`ignored`)."""
        base = self.prefix + "/"
        if not topic.startswith(base):
            return False
        parts = topic[len(base):].split("/")
        table, kind = parts[0], "/".join(parts[1:])
        if not MQTT_TOPIC_LEVEL.fullmatch(table) or len(payload) > MAX_PAYLOAD:
            self.ignored += 1
            return False
        try:
            changed = self._apply(table, kind, payload)
        except (ValidationError, UnicodeDecodeError, ValueError) as exc:
            self.ignored += 1
            log.debug("club: ignored %s: %s", topic, str(exc)[:200])
            return False
        if changed:
            self._changed()
        return changed

    def _apply(self, table: str, kind: str, payload: bytes) -> bool:
        """Validate first, then note it: a message that does not validate leaves no trace of its table."""
        value: Any = None
        if kind == "availability":
            value = payload.decode("utf-8").strip()
            if value not in ("online", "offline"):
                raise ValueError(f"availability {value!r}")
        elif kind == "state":
            value = StateIn.model_validate_json(payload) if payload else None
        elif kind == "results":
            value = ResultsIn.model_validate_json(payload).games if payload else []
        elif kind.startswith("event/") and kind.count("/") == 1:
            ev = EventIn.model_validate_json(payload)
            said = next((e for e in ev.events if e.text_en), None)
            value = {"kind": ev.kind, "player": ev.player, "time": ev.time or time.time(),
                     "text_en": said.text_en if said else "", "text_ru": said.text_ru if said else ""}
        else:
            return False
        with self._lock:
            if table not in self._tables:
                if not payload:  # an emptied retained topic of a table never seen
                    return False
                if len(self._tables) >= MAX_TABLES:
                    raise ValueError(f"more than {MAX_TABLES} tables")
            t = self._tables.setdefault(table, {"availability": None, "since": None, "state": None,
                                                "last_event": None})
            if kind == "availability":
                if t["availability"] != value:
                    t["since"] = time.time()
                t["availability"] = value
            elif kind == "state":
                t["state"] = value
            elif kind == "results":
                self._results[table] = value
            else:
                t["last_event"] = value
            return True

    # ------------------------------------------------------------------ to the page
    def snapshot(self) -> dict[str, Any]:
        """The page's JSON: ``{"type": "club", "broker": {"connected", "address", "since"}, "tables": [{"id",
        "name", "status": "live" | "off" | "unknown", "since", "state", "last_event"}], "standings":
        [:func:`standings` rows], "games": games finished since ``since``, "since", "time"}``; tables in id order."""
        with self._lock:
            tables = []
            for tid in sorted(self._tables):
                t = self._tables[tid]
                state: StateIn | None = t["state"]
                if not self.connected or t["availability"] is None:
                    status = "unknown"
                else:
                    status = "live" if t["availability"] == "online" else "off"
                tables.append({"id": tid, "name": state.name if state else tid, "status": status,
                               "since": t["since"], "state": state.model_dump() if state else None,
                               "last_event": t["last_event"]})
            results = {k: list(v) for k, v in self._results.items()}
            finished = sum(1 for games in results.values() for g in games if g.finished_at >= self.since)
            return {"type": "club", "broker": {"connected": self.connected, "address": self.address,
                                               "since": self.connected_since},
                    "tables": tables, "standings": standings(results, self.since), "games": finished,
                    "since": self.since, "time": time.time()}

    def _changed(self) -> None:
        if not self.listeners:
            return
        snap = self.snapshot()
        for listener in list(self.listeners):
            try:
                listener(snap)
            except Exception:  # noqa: BLE001 - a listener's fault must not stop the board
                log.exception("club listener %r failed", listener)


class ClubListener:
    """The club's MQTT subscriber: feeds :class:`ClubBoard` from the broker; reconnects by itself (1 s, doubling to
    30 s). Credentials and TLS come from ``settings`` (``[mqtt]``), the broker from ``host``/``port``.

    Raises :class:`kosti.dashboard.mqtt.MqttUnavailable` when paho-mqtt is not installed."""

    def __init__(self, board: ClubBoard, host: str, port: int, settings: BrokerSettings | None = None) -> None:
        try:
            import paho.mqtt.client as mqtt
        except ImportError:
            from kosti.dashboard.mqtt import MqttUnavailable

            raise MqttUnavailable("paho-mqtt is not installed: pip install 'kosti[mqtt]'") from None
        import secrets

        self.board, self.host, self.port = board, host, port
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"kosti-club-{secrets.token_hex(4)}",
                                  protocol=mqtt.MQTTv311, clean_session=True)
        if settings is not None and settings.username is not None:
            self.client.username_pw_set(settings.username, settings.password)
        if settings is not None and settings.tls:
            self.client.tls_set()
        self.client.reconnect_delay_set(1, 30)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self._stopping = False

    def start(self) -> None:
        """Connect in the background (retried until the broker answers)."""
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect and stop the network thread."""
        self._stopping = True  # a disconnect asked for is no lost broker
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: Client, userdata: object, flags: ConnectFlags, reason: ReasonCode,
                    properties: Properties | None) -> None:
        if reason.is_failure:
            log.error("club: the broker %s:%d refused the connection: %s", self.host, self.port, reason)
            return
        client.subscribe([(t, 1) for t in self.board.subscriptions()])
        log.info("club: connected to %s:%d", self.host, self.port)

    def _on_subscribe(self, client: Client, userdata: object, mid: int, reasons: list[ReasonCode],
                      properties: Properties | None) -> None:
        """Connected once the broker granted the subscriptions: from then on every table's message reaches the
        board (taken as connected at CONNACK, a message published in between was lost unseen)."""
        refused = [r for r in reasons if r.is_failure]
        if refused:
            log.error("club: the broker %s:%d refused the subscription: %s", self.host, self.port, refused[0])
            return
        self.board.broker_state(True)

    def _on_disconnect(self, client: Client, userdata: object, flags: DisconnectFlags, reason: ReasonCode,
                       properties: Properties | None) -> None:
        if self.board.connected and not self._stopping:
            log.warning("club: lost the broker %s:%d (%s); retrying", self.host, self.port, reason)
        self.board.broker_state(False)

    def _on_message(self, client: Client, userdata: object, message: MQTTMessage) -> None:
        self.board.message(message.topic, bytes(message.payload))


def create_club_app(board: ClubBoard, listener: ClubListener | None = None,
                    host_names: frozenset[str] | None = None) -> FastAPI:
    """The club's web app: ``GET /`` the page (``static/club.html``, ``club.js``, ``club.css``), ``GET /api/club``
    the board's snapshot, ``WS /ws`` the snapshot now and at every change. ``listener`` is started and stopped with
    the app. Read-only: nothing on it changes a game.

    The table dashboard's guard stands in front of it (:class:`kosti.dashboard.access.CrossSiteGuard`): a request
    naming another host (a foreign page that rebinds its own name to the club's address) and a WebSocket opened from
    another site get 403, so such a page cannot read the club's players and scores. ``host_names``: the names the
    page may be opened by besides IP addresses (default :func:`~kosti.dashboard.access.allowed_host_names`: loopback,
    this machine's name and ``NAME.local``)."""
    broadcaster = Broadcaster()
    board.listeners.append(broadcaster.publish)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if listener is not None:
            await run_in_threadpool(listener.start)
        try:
            yield
        finally:
            if listener is not None:
                await run_in_threadpool(listener.stop)

    app = FastAPI(title="kosti club", description="Every table of the club on one screen (read-only).",
                  version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.board = board
    app.add_middleware(CrossSiteGuard, names=host_names if host_names is not None else allowed_host_names())

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "club.html", media_type="text/html")

    @app.get("/club.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(STATIC_DIR / "club.js", media_type="text/javascript")

    @app.get("/club.css", include_in_schema=False)
    def style() -> FileResponse:
        return FileResponse(STATIC_DIR / "club.css", media_type="text/css")

    @app.get("/api/club")
    def club() -> dict[str, Any]:
        """Every table (players, scores, turn, live / off) and the evening's standings."""
        return board.snapshot()

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        q = broadcaster.subscribe()
        try:
            await websocket.send_json(board.snapshot())
            while True:
                try:
                    msg = await asyncio.wait_for(q.get(), timeout=10.0)
                except TimeoutError:
                    msg = board.snapshot()  # a beat every 10 s: the page knows the club is still there
                await websocket.send_json(msg)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            broadcaster.unsubscribe(q)

    return app
