"""Test-wide isolation: no test reads or writes this machine's kosti configuration or data.

A developer's ``~/.config/kosti``, a Raspberry Pi install's ``/etc/kosti/kosti.toml`` or the service's
``/var/lib/kosti`` registry would otherwise change what ``kosti demo``, ``read`` or ``run`` do inside the
tests (a roll area from a real table hides every virtual die). For the whole session ``$KOSTI_CONFIG``
names an empty file (all defaults, ``kosti.config.CONFIG_ENV``) and ``$XDG_CONFIG_HOME`` /
``$XDG_DATA_HOME`` point into the session's temporary folder, and configuration overrides exported in
the caller's shell (``KOSTI_SECTION__KEY`` or a whole ``KOSTI_SECTION``, any case) are removed; subprocesses inherit all of it. Tests of the
search order itself remove ``KOSTI_CONFIG`` with ``monkeypatch.delenv``.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _isolated_kosti_home(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("kosti-home")
    cfg = root / "kosti.toml"
    cfg.write_text("# empty: the tests run on kosti's defaults\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        from kosti.config import KostiConfig

        sections = tuple(f"kosti_{f}" for f in KostiConfig.model_fields)
        for name in list(os.environ):  # a configuration override exported in the caller's shell, any case
            if name.lower().startswith(sections):
                mp.delenv(name)
        mp.setenv("KOSTI_CONFIG", str(cfg))
        mp.setenv("XDG_CONFIG_HOME", str(root / "config"))
        mp.setenv("XDG_DATA_HOME", str(root / "data"))
        yield root
