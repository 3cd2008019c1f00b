"""The sections of the kosti configuration: one pydantic model per ``[section]`` of ``kosti.toml``, one module each
(:mod:`kosti.config.source`, ``zones``, ``settle``, ``reader``, ``game``, ``server``, ``storage``, ``mqtt``).

Each knob has one name from the TOML file to the constructor it feeds (``[settle] still_s`` is
``SettleDetector(still_s=…)``, ``[reader] conf`` is ``DiceReader(conf=…)``); its documentation is the
field's ``description``, which is also the comment above the key in the generated file
(:func:`kosti.config.files.render_config`, ``deploy/kosti.toml``). The reader's and the settle detector's settings
are declared once, in :mod:`kosti.vision.params`, and their fields taken from there. A field's
``json_schema_extra`` ``{"example": …}`` is the commented-out example written for an unset (``None``) key.
"""

from __future__ import annotations

from pydantic import Field, create_model

from kosti.config.base import Point, Section
from kosti.config.game import GameSettings
from kosti.config.mqtt import MQTT_TOPIC_LEVEL, MqttSettings, mqtt_address
from kosti.config.reader import ReaderSettings
from kosti.config.server import ServerSettings
from kosti.config.settle import SettleSettings
from kosti.config.source import SourceSettings
from kosti.config.storage import StorageSettings
from kosti.config.zones import ZonesSettings

__all__ = ["MQTT_TOPIC_LEVEL", "SECTIONS", "FileConfig", "GameSettings", "MqttSettings", "Point", "ReaderSettings",
           "ServerSettings", "SettleSettings", "SourceSettings", "StorageSettings", "ZonesSettings", "mqtt_address"]

#: The sections in file order: ``[name]`` → model.
SECTIONS: dict[str, type[Section]] = {
    "source": SourceSettings, "zones": ZonesSettings, "settle": SettleSettings, "reader": ReaderSettings,
    "game": GameSettings, "server": ServerSettings, "storage": StorageSettings, "mqtt": MqttSettings,
}

#: The same sections as :class:`kosti.config.KostiConfig` in a plain model: validates a file's content
#: alone, without the ``KOSTI_*`` environment (``BaseSettings`` reads it even in ``model_validate``).
FileConfig = create_model(
    "FileConfig", __base__=Section,
    **{name: (cls, Field(default_factory=cls)) for name, cls in SECTIONS.items()},  # type: ignore[call-overload]
)
