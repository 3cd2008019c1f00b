"""The table on an MQTT broker: its events, its state, whether it is on, and its Home Assistant sensors.

Optional (``[mqtt]`` in ``kosti.toml``, ``pip install 'kosti[mqtt]'``: paho-mqtt, the Eclipse Foundation's
client). :class:`TableMqtt` hears the table (:attr:`kosti.dashboard.session.GameSession.action_listeners`
for the events, :attr:`kosti.dashboard.broadcast.Broadcaster.listeners` for the state) and publishes, under
``<prefix>/<table>/`` (``prefix`` ``kosti`` by default; :class:`TableTopics`):

* ``availability`` — ``online`` / ``offline``, retained; ``offline`` is also the connection's last will, so
  the broker says it when the Pi goes off without a word (after 1.5 × ``keepalive``);
* ``state`` — the table now, retained (:func:`state_message`): players and scores, who throws, the turn's
  points, the last throw, the camera;
* ``results`` — the games finished here in the last 24 hours, retained (:func:`results_message`): what
  ``kosti club`` builds the evening's standings from;
* ``event/throw``, ``event/bust``, ``event/turn_end``, ``event/game_end`` — one message per event, not
  retained, QoS 1, numbered by ``seq`` in the order the game made them (:func:`event_messages`);
* Home Assistant MQTT discovery, retained, under ``<discovery_prefix>/sensor/kosti_<table>/<sensor>/config``
  (:func:`discovery_configs`): current player, turn points, last throw, camera state and each player's score.

The broker is never in the game's way: publishing only queues a message (paho's own queue, in order), the
client reconnects by itself (1 s, doubling to 30 s), and events made while the broker is away are sent when it
is back; the latest state, results, availability and discovery are published again on every connection (a
broker restarted without persistence has forgotten its retained messages). The state, results and discovery
go out at QoS 0 and only while connected: a newer one always follows on the next connection, and an old one
resent after it could not overwrite it. Events made while kosti itself is down are not sent later.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kosti.dashboard.views import BUST_KINDS, score_of

if TYPE_CHECKING:
    from paho.mqtt.client import Client, ConnectFlags, DisconnectFlags, MQTTMessage
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

    from kosti.dashboard.session import AppliedAction
    from kosti.dashboard.table import TableService

log = logging.getLogger(__name__)


class BrokerSettings(Protocol):
    """What the publisher and the club read of the ``[mqtt]`` section (:class:`kosti.config.mqtt.MqttSettings`,
    declared there once; the dashboard does not import the configuration, the application top hands it over)."""

    prefix: str
    name: str | None
    username: str | None
    password: str | None
    tls: bool
    keepalive: int
    discovery: bool
    discovery_prefix: str

    def address(self) -> tuple[str, int]:
        """``(host, port)`` of the broker."""
        ...

    def table_id(self) -> str:
        """This table's topic level."""
        ...


ONLINE, OFFLINE = "online", "offline"
#: Event messages paho keeps while the broker is away, at most (about 0.5 KiB each: an evening is ~3,000).
MAX_QUEUED = 50_000
#: ``results`` lists the games finished this long ago at most (seconds), up to :data:`RESULTS_MAX` of them.
RESULTS_WINDOW_S = 24 * 3600
RESULTS_MAX = 50
#: The event topics (``<prefix>/<table>/event/<kind>``).
EVENT_KINDS = ("throw", "bust", "turn_end", "game_end")
#: The camera states of ``state.camera``: a reconnecting camera's own (:class:`kosti.vision.reconnect.SourceStatus`),
#: ``ok`` / ``error`` for a source that does not reconnect, ``none`` without a camera.
CAMERA_STATES = ("ok", "connecting", "stalled", "reconnecting", "failed", "error", "none")


class MqttUnavailable(Exception):
    """MQTT was asked for but cannot be used (paho-mqtt missing): one line, exit code 2 on the command line."""

    exit_code = 2


@dataclass(frozen=True)
class TableTopics:
    """The topics of one table: ``<prefix>/<table>/…``."""

    prefix: str
    table: str

    @property
    def base(self) -> str:
        """``<prefix>/<table>``."""
        return f"{self.prefix}/{self.table}"

    @property
    def availability(self) -> str:
        """``online`` / ``offline``, retained; the last will."""
        return f"{self.base}/availability"

    @property
    def state(self) -> str:
        """The retained state (:func:`state_message`)."""
        return f"{self.base}/state"

    @property
    def results(self) -> str:
        """The retained finished games (:func:`results_message`)."""
        return f"{self.base}/results"

    def event(self, kind: str) -> str:
        """One of :data:`EVENT_KINDS`: ``<prefix>/<table>/event/<kind>``."""
        return f"{self.base}/event/{kind}"


def player_key(name: str) -> str:
    """A stable topic- and template-safe key for a player's name (names are unique ignoring case,
    :mod:`kosti.engine.names`): ``"p"`` + 10 hex digits of the SHA-1 of the case-folded name."""
    return "p" + hashlib.sha1(name.casefold().encode("utf-8")).hexdigest()[:10]


def faces_text(faces: list[int]) -> str:
    """``[1, 1, 5]`` → ``"1 1 5"``."""
    return " ".join(str(int(f)) for f in faces)


def camera_state(source: Mapping[str, Any] | None) -> str:
    """The camera's state in one word (:data:`CAMERA_STATES`) from the snapshot's ``source``."""
    if not source or source.get("kind") == "none":
        return "none"
    status = source.get("status")
    if isinstance(status, Mapping):
        state = status.get("state")
        return state if isinstance(state, str) and state in CAMERA_STATES else "error"
    return status if isinstance(status, str) and status in CAMERA_STATES else "error"


def state_message(snapshot: Mapping[str, Any], table: str, name: str) -> dict[str, Any]:
    """The retained ``state`` of a table from its dashboard snapshot (:meth:`TableService.snapshot`).

    Returns ``{"table", "name", "game": {"id", "game", "preset", "status"} | None, "players": [{"name", "key",
    "score", "to_move"}], "scores": {key: score}, "current_player": name | None, "turn_no", "turn_points",
    "over", "winner", "last_throw": {"faces", "text", "points", "player"} | None, "camera", "version", "time"}``;
    ``key`` is :func:`player_key` (Home Assistant's score sensors read ``scores[key]``), ``time`` seconds since
    the epoch."""
    view = snapshot.get("state") or None
    game = snapshot.get("game") or None
    players: list[dict[str, Any]] = []
    if view is not None:
        for p in view.get("players") or []:
            players.append({"name": p.get("name"), "key": player_key(str(p.get("name"))),
                            "score": p.get("score"), "to_move": bool(p.get("to_move"))})
    turn = (view or {}).get("turn") or {}
    over = bool((view or {}).get("over"))
    last = snapshot.get("last_throw") or None
    last_throw = None
    if last is not None and last.get("faces") and last.get("resolution") in ("applied", "corrected"):
        last_throw = {"faces": list(last["faces"]), "text": faces_text(last["faces"]), "points": last.get("points"),
                      "player": last.get("player")}
    winner = (view or {}).get("winner")
    return {
        "table": table, "name": name,
        "game": None if game is None else {"id": game.get("id"), "game": (view or {}).get("game"),
                                           "preset": (game.get("rules") or {}).get("preset"),
                                           "status": game.get("status")},
        "players": players,
        "scores": {p["key"]: p["score"] for p in players},
        "current_player": None if over or view is None else view.get("to_move"),
        "turn_no": snapshot.get("turn_no", 0),
        "turn_points": 0 if over else (turn.get("turn_points") or 0),
        "over": over,
        "winner": ", ".join(winner) if isinstance(winner, list) else winner,
        "last_throw": last_throw,
        "camera": camera_state(snapshot.get("source")),
        "version": snapshot.get("version", 0),
        "time": round(time.time(), 3),
    }


def event_messages(a: AppliedAction) -> list[tuple[str, dict[str, Any]]]:
    """The events of one applied action as ``(kind, payload)`` in the order they happened: ``throw`` (a roll:
    ``faces``, ``points``, ``correction``), ``bust`` (the throw or turn scored nothing), ``turn_end``
    (``outcome``, ``score_after``, ``next_player``), ``game_end`` (``winner``, ``scores``). Every payload
    carries ``game_id``, ``turn_no``, ``player`` and the engine's events of the action (``events``: kind,
    points, English and Russian text), so a screen can say what happened in the table's words."""
    common: dict[str, Any] = {"game_id": a.game_id, "turn_no": a.turn_no, "player": a.player,
                              "events": [e for e in a.events if e.get("kind") != "turn"]}
    out: list[tuple[str, dict[str, Any]]] = []
    outcome = (a.turn_end or {}).get("outcome")
    busts = [e for e in a.events if e.get("kind") in BUST_KINDS]
    if a.kind == "roll":  # a throw that scores nothing has a bust event instead of a throw event: 0 points
        thrown = next((e for e in a.events if e.get("kind") == "throw"), None)
        points = thrown.get("points") if thrown else (0 if busts else None)
        out.append(("throw", {**common, "faces": list(a.faces), "text": faces_text(a.faces), "points": points,
                              "correction": a.correction}))
    if busts or outcome == "bust":
        out.append(("bust", {**common, "kind": busts[-1].get("kind") if busts else "bust"}))
    if a.turn_end is not None and outcome != "setup":
        out.append(("turn_end", {**common, "outcome": outcome, "score_after": a.turn_end.get("score_after"),
                                 "next_player": a.next_player}))
    if a.over:
        names = list(a.state.player_names)
        out.append(("game_end", {**common, "winner": a.winner,
                                 "scores": [{"name": n, "score": score_of(a.state, n)} for n in names]}))
    return out


def results_message(games: Sequence[Mapping[str, Any]], table: str, name: str, now: float | None = None) -> dict[str, Any]:
    """The retained ``results``: the games of ``games`` (:func:`kosti.dashboard.history.games`, newest first)
    finished in the last :data:`RESULTS_WINDOW_S` seconds, at most :data:`RESULTS_MAX`, as ``{"table", "name",
    "games": [{"id", "finished_at", "preset", "players": [{"name", "score"}], "winner"}], "time"}``."""
    now = time.time() if now is None else now
    done = []
    for g in games:
        finished = float(g.get("updated_at") or 0.0)
        if g.get("status") != "finished" or now - finished > RESULTS_WINDOW_S:
            continue
        scores = g.get("scores") or {}
        done.append({"id": g.get("id"), "finished_at": round(finished, 3),
                     "preset": (g.get("rules") or {}).get("preset"),
                     "players": [{"name": n, "score": scores.get(n)} for n in g.get("players") or []],
                     "winner": g.get("winner")})
        if len(done) >= RESULTS_MAX:
            break
    return {"table": table, "name": name, "games": done, "time": round(now, 3)}


def discovery_configs(topics: TableTopics, name: str, players: Sequence[Mapping[str, Any]], discovery_prefix: str,
                      version: str) -> dict[str, dict[str, Any]]:
    """Home Assistant MQTT discovery (``https://www.home-assistant.io/integrations/sensor.mqtt/``): config topic →
    payload for the table's sensors — current player, turn points, last throw (its points and player as
    attributes), camera, and one score sensor per player of ``players`` (``[{"name", "key"}]``, the state's). Every
    sensor reads the retained ``state`` with a template and is unavailable while the table is ``offline``; all
    belong to one device, the table."""
    node = f"kosti_{topics.table}"
    device = {"identifiers": [node], "name": f"kosti {name}", "manufacturer": "kosti",
              "model": "dice table scorekeeper", "sw_version": version}
    common = {"state_topic": topics.state, "availability_topic": topics.availability,
              "payload_available": ONLINE, "payload_not_available": OFFLINE, "device": device,
              "origin": {"name": "kosti", "sw_version": version}}
    sensors: dict[str, dict[str, Any]] = {
        "current_player": {"name": "Current player", "icon": "mdi:account-arrow-right",
                           "value_template": "{{ value_json.current_player or '' }}"},
        "turn_points": {"name": "Turn points", "icon": "mdi:dice-multiple", "unit_of_measurement": "points",
                        "state_class": "measurement", "value_template": "{{ value_json.turn_points }}"},
        "last_throw": {"name": "Last throw", "icon": "mdi:dice-5",
                       "value_template": "{{ value_json.last_throw.text if value_json.last_throw else '' }}",
                       "json_attributes_topic": topics.state,
                       "json_attributes_template": "{{ (value_json.last_throw or {}) | tojson }}"},
        "camera": {"name": "Camera", "icon": "mdi:cctv", "value_template": "{{ value_json.camera }}"},
    }
    for p in players:
        key = str(p["key"])
        sensors[f"score_{key}"] = {"name": f"Score {p['name']}", "icon": "mdi:counter",
                                   "unit_of_measurement": "points", "state_class": "measurement",
                                   "value_template": f"{{{{ value_json.scores['{key}'] }}}}"}
    return {f"{discovery_prefix}/sensor/{node}/{obj}/config": {**common, **cfg, "unique_id": f"{node}_{obj}"}
            for obj, cfg in sensors.items()}


class TableMqtt:
    """Publishes one table on an MQTT broker (see the module docstring); :meth:`start` / :meth:`stop` with the app.

    Args:
        settings: the ``[mqtt]`` section (``broker`` set).
        table: the table to publish.
        version: kosti's version (Home Assistant's device and origin).

    Raises :class:`MqttUnavailable` when paho-mqtt is not installed. Thread safety: the table's threads call
    the listeners, paho's network thread the callbacks; one lock orders what is published.
    """

    def __init__(self, settings: BrokerSettings, table: TableService, version: str = "") -> None:
        try:
            import paho.mqtt.client as mqtt
        except ImportError:
            raise MqttUnavailable("[mqtt] broker is set but paho-mqtt is not installed: "
                                  "pip install 'kosti[mqtt]' (or leave broker unset)") from None
        self.settings = settings
        self.table = table
        self.version = version
        self.topics = TableTopics(settings.prefix, settings.table_id())
        self.name = settings.name or self.topics.table
        self.host, self.port = settings.address()
        self._lock = threading.RLock()
        self._seq = 0
        self._run = secrets.token_hex(4)  # which start of kosti numbered the events
        self._state: dict[str, Any] | None = None
        self._players: list[dict[str, Any]] = []
        self._score_keys: set[str] = set()  # players whose score sensor this run announced
        self._results: dict[str, Any] | None = None
        self._started = False
        #: Set while connected to the broker (tests and the log wait on it).
        self.connected = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"kosti-{self.topics.table}-{self._run}",
                             protocol=mqtt.MQTTv311, clean_session=True)
        client.will_set(self.topics.availability, OFFLINE, qos=1, retain=True)
        if settings.username is not None:
            client.username_pw_set(settings.username, settings.password)
        if settings.tls:
            client.tls_set()
        client.max_queued_messages_set(MAX_QUEUED)
        client.reconnect_delay_set(1, 30)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_discovered
        self.client = client

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Hear the table and connect in the background (the broker may be away: it is retried until it answers)."""
        if self._started:
            return
        self._started = True
        self._note_snapshot(self.table.snapshot())
        self._results = self._results_now()
        self.table.session.action_listeners.append(self._on_action)
        self.table.broadcaster.listeners.append(self._on_broadcast)
        self.client.connect_async(self.host, self.port, keepalive=self.settings.keepalive)
        self.client.loop_start()
        log.info("MQTT: publishing table %r on %s:%d under %s/", self.topics.table, self.host, self.port,
                 self.topics.base)

    def stop(self, timeout_s: float = 3.0) -> None:
        """Say ``offline`` (a clean stop sends no last will), send what is queued (up to ``timeout_s``) and
        disconnect. Idempotent."""
        if not self._started:
            return
        self._started = False
        if self._on_action in self.table.session.action_listeners:
            self.table.session.action_listeners.remove(self._on_action)
        if self._on_broadcast in self.table.broadcaster.listeners:
            self.table.broadcaster.listeners.remove(self._on_broadcast)
        if self.connected.is_set():
            info = self.client.publish(self.topics.availability, OFFLINE, qos=1, retain=True)
            try:
                info.wait_for_publish(timeout_s)
            except (RuntimeError, ValueError):  # the connection went meanwhile
                pass
        self.client.disconnect()
        self.client.loop_stop()

    # ------------------------------------------------------------------ from the table
    def _on_action(self, applied: AppliedAction) -> None:
        """An action the session stored (its thread, under its lock): its events, queued in order."""
        with self._lock:
            for kind, payload in event_messages(applied):
                self._seq += 1
                msg = {"seq": self._seq, "run": self._run, "table": self.topics.table, "kind": kind,
                       "time": round(time.time(), 3), **payload}
                self.client.publish(self.topics.event(kind), json.dumps(msg, ensure_ascii=False), qos=1)
            if applied.over:
                self._results = self._results_now()
                if self._results is not None:
                    self._publish_latest(self.topics.results, self._results)

    def _on_broadcast(self, message: Mapping[str, object]) -> None:
        """A snapshot or a camera report for the screens: the retained state when it changed."""
        if message.get("type") == "state":
            self._note_snapshot(message, publish=True)
        elif message.get("type") == "source" and self._state is not None:
            camera = camera_state(message.get("source"))  # type: ignore[arg-type]
            with self._lock:
                if self._state is not None and camera != self._state["camera"]:
                    self._state = {**self._state, "camera": camera, "time": round(time.time(), 3)}
                    self._publish_latest(self.topics.state, self._state)

    def _note_snapshot(self, snapshot: Mapping[str, Any], publish: bool = False) -> None:
        msg = state_message(snapshot, self.topics.table, self.name)
        with self._lock:
            old = self._state
            if old is not None and {**old, "time": 0, "version": 0} == {**msg, "time": 0, "version": 0}:
                return
            self._state = msg
            players = [{"name": p["name"], "key": p["key"]} for p in msg["players"]]
            if publish:
                if players != self._players:
                    self._players = players
                    self._announce()
                self._publish_latest(self.topics.state, msg)
            else:
                self._players = players

    def _results_now(self) -> dict[str, Any] | None:
        from kosti.dashboard.history import games

        try:
            return results_message(games(self.table.store, self.table.session.game_id, RESULTS_MAX * 2), self.topics.table,
                                   self.name)
        except Exception:  # noqa: BLE001 - a database problem is the dashboard's to show; the standings wait
            log.exception("MQTT: cannot list the finished games")
            return None

    # ------------------------------------------------------------------ to the broker
    def _publish_latest(self, topic: str, payload: Mapping[str, Any]) -> None:
        """A retained latest value, QoS 0, only while connected (the next connection publishes the newest)."""
        if self.connected.is_set():
            self.client.publish(topic, json.dumps(payload, ensure_ascii=False), qos=0, retain=True)

    def _announce(self) -> None:
        """Home Assistant discovery for the current players; the score sensors of players who left are emptied
        (Home Assistant then removes them). Caller holds the lock."""
        if not self.settings.discovery or not self.connected.is_set():
            return
        for topic, cfg in discovery_configs(self.topics, self.name, self._players, self.settings.discovery_prefix,
                                            self.version).items():
            self.client.publish(topic, json.dumps(cfg, ensure_ascii=False), qos=0, retain=True)
        current = {p["key"] for p in self._players}
        for key in self._score_keys - current:
            self.client.publish(self._score_topic(key), b"", qos=0, retain=True)
        self._score_keys = set(current)

    def _score_topic(self, key: str) -> str:
        return f"{self.settings.discovery_prefix}/sensor/kosti_{self.topics.table}/score_{key}/config"

    def _discovery_filter(self) -> str:
        return f"{self.settings.discovery_prefix}/sensor/kosti_{self.topics.table}/+/config"

    def _on_connect(self, client: Client, userdata: object, flags: ConnectFlags, reason: ReasonCode,
                    properties: Properties | None) -> None:
        if reason.is_failure:
            log.error("MQTT: the broker %s:%d refused the connection: %s", self.host, self.port, reason)
            return
        with self._lock:
            self.connected.set()
            client.publish(self.topics.availability, ONLINE, qos=1, retain=True)
            self._announce()
            if self.settings.discovery:  # score sensors of players no longer at the table are taken away
                client.subscribe(self._discovery_filter(), qos=0)
            if self._state is not None:
                self._publish_latest(self.topics.state, self._state)
            if self._results is not None:
                self._publish_latest(self.topics.results, self._results)
        log.info("MQTT: connected to %s:%d", self.host, self.port)

    def _on_disconnect(self, client: Client, userdata: object, flags: DisconnectFlags, reason: ReasonCode,
                       properties: Properties | None) -> None:
        was = self.connected.is_set()
        self.connected.clear()
        if was and self._started:
            log.warning("MQTT: lost the broker %s:%d (%s); events are kept until it is back", self.host, self.port,
                        reason)

    def _on_discovered(self, client: Client, userdata: object, message: MQTTMessage) -> None:
        """A retained discovery config of this table (an earlier start's): a player's score sensor for a player not
        at the table now is emptied (Home Assistant then removes the entity)."""
        obj = message.topic.split("/")[-2]
        if not message.payload or not obj.startswith("score_"):
            return
        with self._lock:
            if obj[len("score_"):] not in {p["key"] for p in self._players}:
                client.publish(message.topic, b"", qos=0, retain=True)
