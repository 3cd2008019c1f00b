"""The table on a real Mosquitto broker (:mod:`kosti.dashboard.mqtt`): events in order, the retained state,
availability with its last will, Home Assistant discovery, and a broker that goes away mid-game.

Each test starts ``mosquitto`` on a free loopback port (:mod:`tests.dashboard.mqtt_broker`) and a dashboard app
on a temporary database whose ``[mqtt]`` section points at it; the game is played through the HTTP API.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jinja2
import mqtt_broker
import pytest
from mqtt_broker import Mosquitto, Recorder

from kosti.config import KostiConfig, load_config
from kosti.config.sections import MqttSettings, mqtt_address
from kosti.dashboard.mqtt import MqttUnavailable, TableMqtt, player_key

mosquitto = mqtt_broker.mosquitto  # the fixtures: a broker on a free loopback port
persistent_mosquitto = mqtt_broker.persistent_mosquitto

FARKLE_QUICK = {"target": 300}  # Farkle to 300: a three-ones turn reaches it, the final round follows


def _settings(port: int, table: str = "t1", **kw) -> MqttSettings:
    return MqttSettings(broker=f"127.0.0.1:{port}", table=table, **kw)


def _enter(client, gid: int, faces: list[int]) -> dict:
    r = client.post(f"/api/games/{gid}/enter", json={"faces": faces})
    assert r.status_code == 200, r.text
    return r.json()


def _bank(client, gid: int) -> dict:
    r = client.post(f"/api/games/{gid}/bank")
    assert r.status_code == 200, r.text
    return r.json()


def _events(rec: Recorder, table: str = "t1") -> list[dict]:
    found = [json.loads(p) for t, p, _ in list(rec.messages) if t.startswith(f"kosti/{table}/event/")]
    return sorted(found, key=lambda m: m["seq"])


def _kinds(rec: Recorder) -> list[tuple[str, str | None]]:
    return [(m["kind"], m.get("player")) for m in _events(rec)]


def _publisher(client) -> TableMqtt:
    pub = client.app.state.mqtt
    assert pub is not None
    assert pub.connected.wait(10), "the table did not connect to the broker"
    return pub


def test_a_whole_game_is_published_in_order_with_retained_state(mosquitto: Mosquitto, make_client, start_game) -> None:
    rec = Recorder(mosquitto.port, ["kosti/#"])
    try:
        with make_client(mqtt=_settings(mosquitto.port, name="Стол у окна")) as client:
            _publisher(client)
            gid = start_game(client, ["Ann", "Boris"], "farkle", FARKLE_QUICK)
            _enter(client, gid, [1, 1, 1, 2, 3, 4])   # Ann: three ones, 1000 in the turn
            _bank(client, gid)                        # 1000 ≥ 300: Boris has the final round
            _enter(client, gid, [2, 3, 4, 6, 6, 2])   # Boris: nothing scores — a farkle, the game ends
            rec.wait_for(lambda m: any(t.endswith("/event/game_end") for t, _, _ in m), "the game's end")
        events = _events(rec)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # none lost, none twice
        assert len({e["run"] for e in events}) == 1
        assert _kinds(rec) == [("throw", "Ann"), ("turn_end", "Ann"), ("throw", "Boris"), ("bust", "Boris"),
                               ("turn_end", "Boris"), ("game_end", "Boris")]
        first, banked, bust_throw, bust, bust_end, end = events
        assert first["faces"] == [1, 1, 1, 2, 3, 4] and first["text"] == "1 1 1 2 3 4" and first["points"] == 1000
        assert first["game_id"] == gid and first["turn_no"] == 1 and first["correction"] is False
        assert banked["outcome"] == "bank" and banked["score_after"] == 1000 and banked["next_player"] == "Boris"
        assert bust_throw["points"] == 0 and bust_end["outcome"] == "win"  # the turn that ended the game
        assert any(e["kind"] == "bust" and e["text_ru"] for e in bust["events"])  # the table's words, in Russian too
        assert end["winner"] == "Ann" and end["scores"] == [{"name": "Ann", "score": 1000}, {"name": "Boris", "score": 0}]
        # every event on its own topic, none retained
        topics = [t for t, p, _ in rec.messages if b'"seq"' in p]
        assert topics == [f"kosti/t1/event/{e['kind']}" for e in events]
        assert not any(r for t, p, r in rec.messages if "/event/" in t)
        # the retained state is the last word, and a late subscriber gets it with the results of the evening
        late = Recorder(mosquitto.port, ["kosti/t1/state", "kosti/t1/results", "kosti/t1/availability"])
        try:
            late.wait_for(lambda m: len({t for t, _, _ in m}) == 3, "the retained state, results and availability")
            state = json.loads(late.last("kosti/t1/state") or b"{}")
            results = json.loads(late.last("kosti/t1/results") or b"{}")
            assert late.last("kosti/t1/availability") == b"offline"  # the app stopped cleanly: it said so
        finally:
            late.close()
        assert state["name"] == "Стол у окна" and state["over"] is True and state["winner"] == "Ann"
        assert state["current_player"] is None and state["game"]["preset"] == "farkle"
        assert [(p["name"], p["score"]) for p in state["players"]] == [("Ann", 1000), ("Boris", 0)]
        assert state["scores"] == {player_key("Ann"): 1000, player_key("Boris"): 0}
        assert state["last_throw"]["text"] == "2 3 4 6 6 2" and state["last_throw"]["player"] == "Boris"
        assert state["camera"] == "none"  # no camera on this table
        assert [(g["id"], g["winner"], g["players"]) for g in results["games"]] == \
            [(gid, "Ann", [{"name": "Ann", "score": 1000}, {"name": "Boris", "score": 0}])]
        assert [p for t, p, _ in rec.messages if t == "kosti/t1/availability"][:1] == [b"online"]
    finally:
        rec.close()


def test_home_assistant_discovery_configs_read_the_state(mosquitto: Mosquitto, make_client, start_game) -> None:
    rec = Recorder(mosquitto.port, ["homeassistant/#", "kosti/t1/state"])
    try:
        with make_client(mqtt=_settings(mosquitto.port)) as client:
            _publisher(client)
            gid = start_game(client, ["Ann", "Вера"], "classic")
            _enter(client, gid, [1, 1, 1, 5, 2])  # Ann: 105 in the turn
            ann, vera = player_key("Ann"), player_key("Вера")
            node = "homeassistant/sensor/kosti_t1"
            rec.wait_for(lambda m: any(t == f"{node}/score_{vera}/config" for t, _, _ in m), "Вера's score sensor")
            rec.wait_for(lambda m: any(b'"turn_points": 105' in p for t, p, _ in m if t.endswith("/state")),
                         "the state after the throw")
            configs = {t: json.loads(p) for t, p, _ in rec.messages if t.startswith("homeassistant/") and p}
            assert set(configs) == {f"{node}/{o}/config" for o in
                                    ("current_player", "turn_points", "last_throw", "camera", f"score_{ann}",
                                     f"score_{vera}")}
            assert len({c["unique_id"] for c in configs.values()}) == len(configs)
            for c in configs.values():
                assert c["state_topic"] == "kosti/t1/state" and c["availability_topic"] == "kosti/t1/availability"
                assert (c["payload_available"], c["payload_not_available"]) == ("online", "offline")
                assert c["device"]["identifiers"] == ["kosti_t1"] and c["device"]["name"] == "kosti t1"
            # Home Assistant renders value_template with Jinja2 over the JSON state: the sensors read the game
            state = json.loads([p for t, p, _ in rec.messages if t.endswith("/state") and b'"turn_points": 105' in p][-1])
            env = jinja2.Environment()

            def render(obj: str, key: str = "value_template") -> str:
                return env.from_string(configs[f"{node}/{obj}/config"][key]).render(value_json=state)

            assert render("current_player") == "Ann"
            assert render("turn_points") == "105"
            assert render("last_throw") == "1 1 1 5 2"
            assert json.loads(render("last_throw", "json_attributes_template"))["points"] == 105
            assert render("camera") == "none"
            assert (render(f"score_{ann}"), render(f"score_{vera}")) == ("0", "0")
            assert configs[f"{node}/score_{vera}/config"]["name"] == "Score Вера"
            # Another game with other players: the sensor of the player who left is taken away (an empty config)
            r = client.post("/api/games", json={"players": ["Ann", "Gleb"], "preset": "classic", "replace": True})
            assert r.status_code == 201, r.text
            rec.wait_for(lambda m: any(t == f"{node}/score_{vera}/config" and not p for t, p, _ in m),
                         "Вера's sensor to be removed")
            assert rec.last(f"{node}/score_{ann}/config")  # Ann still plays: her sensor stays
            assert rec.last(f"{node}/score_{player_key('Gleb')}/config")
    finally:
        rec.close()


def test_a_fixed_throw_is_published_again_as_a_correction(mosquitto: Mosquitto, make_client, start_game) -> None:
    rec = Recorder(mosquitto.port, ["kosti/t1/event/#"])
    try:
        with make_client(mqtt=_settings(mosquitto.port)) as client:
            _publisher(client)
            gid = start_game(client, ["Ann", "Boris"], "classic")
            _enter(client, gid, [1, 1, 1, 5, 2])  # 105
            r = client.post(f"/api/games/{gid}/fix", json={"die_index": 4, "value": 5})  # the 2 was a 5: 110
            assert r.status_code == 200, r.text
            rec.wait_for(lambda m: len(_events(rec)) == 2, "the corrected throw")
        first, fixed = _events(rec)
        assert (first["faces"], first["points"], first["correction"]) == ([1, 1, 1, 5, 2], 105, False)
        assert (fixed["faces"], fixed["points"], fixed["correction"]) == ([1, 1, 1, 5, 5], 110, True)
        assert fixed["turn_no"] == first["turn_no"] == 1 and fixed["seq"] == first["seq"] + 1
    finally:
        rec.close()


def test_a_broker_restart_mid_game_loses_no_event(persistent_mosquitto: Mosquitto, make_client, start_game) -> None:
    """The broker goes away mid-game: the game goes on, the events wait in order and arrive when it is back; a
    persistent session keeps the recorder's subscription across the restart, so what it misses is kosti's."""
    b = persistent_mosquitto
    rec = Recorder(b.port, ["kosti/t1/event/#"], session="recorder-restart")
    try:
        with make_client(mqtt=_settings(b.port)) as client:
            pub = _publisher(client)
            gid = start_game(client, ["Ann", "Boris"], "classic")
            _enter(client, gid, [1, 1, 1, 5, 2])  # Ann 105
            _bank(client, gid)
            rec.wait_for(lambda m: len(_events(rec)) == 2, "the first two events")
            b.stop()
            assert _wait(lambda: not pub.connected.is_set()), "the table did not notice the broker leave"
            _enter(client, gid, [1, 1, 1, 2, 3])  # Boris 100 — while the broker is away, the game goes on
            _bank(client, gid)
            _enter(client, gid, [2, 3, 4, 6, 6])  # Ann: nothing — bust
            snap = client.get("/api/state").json()
            assert {p["name"]: p["score"] for p in snap["state"]["players"]} == {"Ann": 105, "Boris": 100}
            b.start()
            assert pub.connected.wait(40), "the table did not reconnect"
            rec.wait_for(lambda m: len(_events(rec)) == 7, "the events made while the broker was away", 40)
        assert [e["seq"] for e in _events(rec)] == list(range(1, 8))
        assert _kinds(rec) == [("throw", "Ann"), ("turn_end", "Ann"), ("throw", "Boris"), ("turn_end", "Boris"),
                               ("throw", "Ann"), ("bust", "Ann"), ("turn_end", "Ann")]
        assert [e["seq"] for e in _events(rec)] == [json.loads(p)["seq"] for _, p, _ in rec.messages
                                                    if b'"seq"' in p][:7]  # arrived in the order made
    finally:
        rec.close()


def test_retained_state_is_published_again_to_a_broker_that_forgot_it(mosquitto: Mosquitto, make_client,
                                                                      start_game) -> None:
    with make_client(mqtt=_settings(mosquitto.port)) as client:
        pub = _publisher(client)
        gid = start_game(client, ["Ann", "Boris"], "classic")
        _enter(client, gid, [1, 1, 1, 5, 2])
        mosquitto.stop()  # no persistence: every retained message is gone with it
        assert _wait(lambda: not pub.connected.is_set()), "the table did not notice the broker leave"
        mosquitto.start()
        assert pub.connected.wait(40), "the table did not reconnect"
        rec = Recorder(mosquitto.port, ["kosti/t1/state", "kosti/t1/availability",
                                        "homeassistant/sensor/kosti_t1/current_player/config"])
        try:
            rec.wait_for(lambda m: len({t for t, _, _ in m}) == 3, "the republished retained messages", 20)
            assert rec.last("kosti/t1/availability") == b"online"
            assert json.loads(rec.last("kosti/t1/state") or b"{}")["turn_points"] == 105
        finally:
            rec.close()


def test_the_table_starts_while_the_broker_is_down(tmp_path, make_client, start_game) -> None:
    mqtt_broker.need_mosquitto()
    folder = tmp_path / "late"
    folder.mkdir()
    b = Mosquitto(folder, persistence=True)
    b.start()
    rec = Recorder(b.port, ["kosti/t1/event/#"], session="recorder-late")
    b.stop()
    try:
        with make_client(mqtt=_settings(b.port)) as client:
            pub = client.app.state.mqtt
            gid = start_game(client, ["Ann", "Boris"], "classic")  # no broker: the game starts and is played
            _enter(client, gid, [1, 1, 1, 5, 2])
            _bank(client, gid)
            assert not pub.connected.is_set()
            b.start()
            assert pub.connected.wait(40), "the table did not connect once the broker came"
            rec.wait_for(lambda m: len(_events(rec)) == 2, "the events made before the broker came", 40)
        assert _kinds(rec) == [("throw", "Ann"), ("turn_end", "Ann")]
    finally:
        rec.close()
        b.stop()


def test_mqtt_settings_refuse_bad_values_in_one_line(tmp_path) -> None:
    assert mqtt_address("broker.lan") == ("broker.lan", 1883)
    assert mqtt_address("broker.lan", tls=True) == ("broker.lan", 8883)
    assert mqtt_address("10.0.0.5:1884") == ("10.0.0.5", 1884)
    assert mqtt_address("[::1]:1885") == ("::1", 1885)
    assert MqttSettings().enabled is False and KostiConfig().mqtt.broker is None
    cases = {
        'broker = "broker.lan:99999"': "mqtt.broker",
        'broker = "bad host!"': "mqtt.broker",
        'table = "a/b"': "mqtt.table",
        'prefix = "kosti/#"': "mqtt.prefix",
        'password = "x"': "username",
        "keepalive = 1": "mqtt.keepalive",
    }
    from kosti.config import ConfigError

    for line, field in cases.items():
        p = tmp_path / "k.toml"
        p.write_text(f"[mqtt]\n{line}\n", encoding="utf-8")
        with pytest.raises(ConfigError) as exc:
            load_config(p)
        assert field in str(exc.value) and "\n" not in str(exc.value), (line, str(exc.value))
    p = tmp_path / "ok.toml"
    p.write_text('[mqtt]\nbroker = "pi.lan:1884"\ntable = "table-2"\nname = "Стол 2"\n', encoding="utf-8")
    m = load_config(p).mqtt
    assert m.enabled and m.address() == ("pi.lan", 1884) and m.table_id() == "table-2" and m.name == "Стол 2"


def test_without_paho_the_table_says_what_to_install(monkeypatch, make_client) -> None:
    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)  # as if paho-mqtt were not installed
    with pytest.raises(MqttUnavailable, match=r"pip install 'kosti\[mqtt\]'"):
        make_client(mqtt=MqttSettings(broker="127.0.0.1:1", table="t1"))


def _wait(cond, timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_the_last_will_says_offline_when_the_connection_dies(mosquitto: Mosquitto, make_client) -> None:
    """The table's connection dies without a word (as when its Pi loses power): the broker publishes the last will,
    ``offline``, retained; the table reconnects by itself and says ``online`` again."""
    import socket

    rec = Recorder(mosquitto.port, ["kosti/t1/availability"])
    try:
        with make_client(mqtt=_settings(mosquitto.port)) as client:
            pub = _publisher(client)
            rec.wait_for(lambda m: [p for _, p, _ in m] == [b"online"], "online")
            sock = pub.client.socket()
            assert sock is not None
            sock.shutdown(socket.SHUT_RDWR)  # the TCP connection ends with no MQTT DISCONNECT: the broker's last will
            rec.wait_for(lambda m: [p for _, p, _ in m][:2] == [b"online", b"offline"], "the last will")
            rec.wait_for(lambda m: [p for _, p, _ in m][-1:] == [b"online"] and len(m) >= 3, "online again", 40)
    finally:
        rec.close()


class _ReadNothing:
    """A dice reader that sees no dice (the frames are a test card): the runner still reads every frame."""

    def read(self, image):
        from kosti.vision.detections import Detections

        return Detections.empty()


def test_the_camera_sensor_follows_a_stream_that_stalls_and_recovers(mosquitto: Mosquitto, make_client) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from fault_servers import MjpegServer

    rec = Recorder(mosquitto.port, ["kosti/t1/state"])
    try:
        with MjpegServer([("frames", 5.0), ("stall", 4.0)], fps=15) as cam, \
                make_client(mqtt=_settings(mosquitto.port), source=cam.url, reader=_ReadNothing(),
                            reader_kind="models") as client:
            _publisher(client)

            def cameras() -> list[str]:
                seen = [json.loads(p)["camera"] for _, p, _ in list(rec.messages)]
                return [c for i, c in enumerate(seen) if i == 0 or seen[i - 1] != c]  # the changes

            rec.wait_for(lambda m: "ok" in cameras(), "the camera ok", 30)
            rec.wait_for(lambda m: any(c in ("stalled", "reconnecting") for c in cameras()), "the stall", 30)
            rec.wait_for(lambda m: cameras()[-1] == "ok" and len(cameras()) >= 3, "the camera ok again", 40)
            states = cameras()
            first_ok = states.index("ok")
            assert any(c in ("stalled", "reconnecting") for c in states[first_ok:]), states
    finally:
        rec.close()
