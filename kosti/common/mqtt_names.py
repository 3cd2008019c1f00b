"""MQTT topic levels of kosti's own (the ``[mqtt]`` config section checks them, the club reads them): a table id, or
each level of a topic prefix. MQTT 3.1.1 §4.7 reserves ``+``, ``#`` and ``/``; kosti keeps to letters, digits,
``_`` and ``-`` (at most 64) so that a level is also a safe Home Assistant ``unique_id`` part."""

from __future__ import annotations

import re

#: One MQTT topic level of kosti's own: a table id, or each level of a prefix (no ``+``, ``#`` or ``/``).
MQTT_TOPIC_LEVEL = re.compile(r"[A-Za-z0-9_-]{1,64}")
