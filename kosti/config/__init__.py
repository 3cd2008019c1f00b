"""kosti configuration: one TOML file, environment overrides, validated at start (issue 39: one module per job).

* :mod:`kosti.config.load` — :class:`KostiConfig`, :func:`load_config`: where the file is looked for, the
  ``KOSTI_*`` environment on top;
* :mod:`kosti.config.sections` — the sections, one module each (:mod:`~kosti.config.source`,
  :mod:`~kosti.config.zones`, :mod:`~kosti.config.settle`, :mod:`~kosti.config.reader`, :mod:`~kosti.config.game`,
  :mod:`~kosti.config.server`, :mod:`~kosti.config.storage`, :mod:`~kosti.config.mqtt`) over :mod:`~kosti.config.base`;
  the reader's and settle detector's settings are declared in :mod:`kosti.vision.params`;
* :mod:`kosti.config.files` — the commented TOML generated from the sections (``deploy/kosti.toml``);
* :mod:`kosti.config.errors` — every error on one line; :mod:`kosti.config.cli` — ``kosti config``.

The configuration sits at the top of the house with the CLI and the model registry: it imports vision, engine
and the registry; none of them imports it (``tests/test_layers.py``).
"""

from kosti.config.errors import ENV_NESTED, ENV_PREFIX, ConfigError
from kosti.config.files import parse_assignment, render_config, write_default_config
from kosti.config.load import (
    CONFIG_ENV,
    MAX_CONFIG_BYTES,
    SYSTEM_CONFIG,
    KostiConfig,
    default_config_path,
    load_config,
)
from kosti.config.sections import (
    MQTT_TOPIC_LEVEL,
    SECTIONS,
    FileConfig,
    GameSettings,
    MqttSettings,
    Point,
    ReaderSettings,
    ServerSettings,
    SettleSettings,
    SourceSettings,
    StorageSettings,
    ZonesSettings,
    mqtt_address,
)

__all__ = [
    "CONFIG_ENV", "ENV_NESTED", "ENV_PREFIX", "MAX_CONFIG_BYTES", "MQTT_TOPIC_LEVEL", "SECTIONS", "SYSTEM_CONFIG",
    "ConfigError", "FileConfig", "GameSettings", "KostiConfig", "MqttSettings", "Point", "ReaderSettings",
    "ServerSettings", "SettleSettings", "SourceSettings", "StorageSettings", "ZonesSettings", "default_config_path",
    "load_config", "mqtt_address", "parse_assignment", "render_config", "write_default_config",
]
