"""The floor of the house: small helpers every layer may use, importing nothing else of kosti (issue 39).

* :mod:`kosti.common.redact` — hiding camera passwords in URLs, texts and log records;
* :mod:`kosti.common.ultralytics_env` — importing Ultralytics offline, its stdout kept off ours;
* :mod:`kosti.common.data_dir` — the one data-folder rule (``$XDG_DATA_HOME/kosti``);
* :mod:`kosti.common.writable` — a path a command writes to, checked before the work (exit 2 when it cannot be);
* :mod:`kosti.common.watchdog` — systemd's ``sd_notify`` (ready, watchdog pings);
* :mod:`kosti.common.mqtt_names` — the MQTT topic levels of kosti's own (a table id, a prefix).

``tests/test_layers.py`` checks that nothing here imports another part of kosti.
"""
