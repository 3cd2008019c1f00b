"""``[mqtt]``: the table on an MQTT broker and Home Assistant (optional)."""

from __future__ import annotations

import importlib.util
import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from kosti.common.mqtt_names import MQTT_TOPIC_LEVEL
from kosti.config.base import Section, doc
from kosti.config.server import ServerSettings


def mqtt_address(text: str, tls: bool = False) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT`` or ``[IPv6]:PORT`` → ``(host, port)``; the port defaults to MQTT's 1883 (8883 with
    ``tls``, IANA's ports for MQTT). Raises ``ValueError`` naming what is wrong (an empty host, a port outside
    1–65535, a host that is not an IP address or a DNS name)."""
    s = text.strip()
    port = 8883 if tls else 1883
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?", s)
    if m:
        host, given = m.group(1), m.group(2)
    elif s.count(":") == 1:
        host, given = s.split(":")
    else:
        host, given = s, None
    if given is not None:
        if not given.isdigit() or not 1 <= int(given) <= 65535:
            raise ValueError(f"{text!r}: the port must be 1–65535")
        port = int(given)
    return ServerSettings._host_ok(host), port


class MqttSettings(Section):
    """MQTT and Home Assistant (``[mqtt]``, optional: ``pip install 'kosti[mqtt]'``): the dashboard publishes the table
    on a broker (:mod:`kosti.dashboard.mqtt`), and ``kosti club`` reads every table from it. Off while ``broker``
    is unset."""

    broker: str | None = Field(None, json_schema_extra={"example": "mosquitto.local:1883"}, description=doc("""
        MQTT broker as HOST or HOST:PORT (port 1883, 8883 with tls): the table publishes every throw, turn end,
        bust and game end on <prefix>/<table>/..., its state retained, and Home Assistant finds its sensors.
        Unset: no MQTT. Needs pip install 'kosti[mqtt]' (docs/mqtt.md)."""))
    table: str | None = Field(None, json_schema_extra={"example": "table-1"}, description=doc("""
        This table's id in the topics: letters, digits, - and _ (at most 64). Unset: this machine's host name."""))
    name: str | None = Field(None, json_schema_extra={"example": "Table by the window"}, description=doc("""
        The table's name as Home Assistant and the club screen show it (at most 40 characters). Unset: the id."""))
    prefix: str = Field("kosti", description=doc("""
        First topic level(s) of every kosti topic, e.g. "kosti" or "club/kosti" (kosti club reads the same)."""))
    username: str | None = Field(None, json_schema_extra={"example": "kosti"}, description=doc("""
        User name on the broker; unset: anonymous."""))
    password: str | None = Field(None, json_schema_extra={"example": "secret"}, description=doc("""
        Password for username (this file is then readable by root and kosti only: mode 0600)."""))
    tls: bool = Field(False, description=doc("""
        Connect with TLS, checking the broker's certificate against the system's certificate authorities."""))
    keepalive: Annotated[int, Field(ge=5, le=600)] = Field(30, description=doc("""
        Seconds between keep-alive pings (5–600): a table whose Pi goes off is marked offline by the broker
        (the last will) about 1.5 times this after its last word."""))
    discovery: bool = Field(True, description=doc("""
        Announce the sensors to Home Assistant (MQTT discovery): current player, each player's score, turn
        points, last throw, camera state."""))
    discovery_prefix: str = Field("homeassistant", description=doc("""
        Home Assistant's discovery prefix (its MQTT integration's setting; "homeassistant" unless changed)."""))

    @field_validator("broker")
    @classmethod
    def _broker_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        mqtt_address(v)
        return v.strip()

    @field_validator("table")
    @classmethod
    def _table_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if not MQTT_TOPIC_LEVEL.fullmatch(v.strip()):
            raise ValueError(f"{v!r}: use letters, digits, - and _ only (at most 64), e.g. table-1")
        return v.strip()

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if len(v.strip()) > 40 or any(not c.isprintable() for c in v):
            raise ValueError("at most 40 printable characters")
        return v.strip()

    @field_validator("prefix", "discovery_prefix")
    @classmethod
    def _prefix_ok(cls, v: str) -> str:
        levels = v.strip().split("/")
        if not all(MQTT_TOPIC_LEVEL.fullmatch(level) for level in levels) or len(levels) > 4:
            raise ValueError(f"{v!r}: at most 4 topic levels of letters, digits, - and _, separated by /")
        return v.strip()

    @model_validator(mode="after")
    def _usable(self) -> MqttSettings:
        if self.password is not None and self.username is None:
            raise ValueError("mqtt.password: set username too")
        if self.broker is not None and importlib.util.find_spec("paho") is None:  # kosti config check says it first
            raise ValueError("mqtt.broker: MQTT needs the paho-mqtt package, which is not installed "
                             "(pip install 'kosti[mqtt]'); or leave broker unset")
        return self

    @property
    def enabled(self) -> bool:
        """Whether the table publishes to a broker (``broker`` set)."""
        return self.broker is not None

    def address(self) -> tuple[str, int]:
        """``(host, port)`` of :attr:`broker` (:func:`mqtt_address`; ``ValueError`` when unset)."""
        if self.broker is None:
            raise ValueError("mqtt.broker is not set")
        return mqtt_address(self.broker, self.tls)

    def table_id(self) -> str:
        """:attr:`table`, or this machine's host name made a topic level (other characters become ``-``)."""
        if self.table:
            return self.table
        import socket

        host = socket.gethostname().split(".")[0]
        return re.sub(r"[^A-Za-z0-9_-]", "-", host)[:64] or "kosti"
