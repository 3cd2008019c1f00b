"""``NAME.local`` without avahi (issue 43, item 3): a dashboard bound to the LAN announces itself with python-zeroconf
while it runs, and a second mDNS client on this machine resolves the service and the host name to the table's
address and port (real multicast on this machine's network); it stays quiet where avahi-daemon announces the table,
and says goodbye when it stops."""

from __future__ import annotations

import socket

import pytest

from kosti.dashboard import mdns
from kosti.dashboard.app import DashboardConfig, create_app
from kosti.dashboard.join import lan_address

zeroconf = pytest.importorskip("zeroconf", reason="python-zeroconf (the test extras install it: kosti[mdns])")


def _resolve(name: str, timeout_ms: int = 4000):
    zc = zeroconf.Zeroconf(ip_version=zeroconf.IPVersion.V4Only)
    try:
        return zc.get_service_info(mdns.SERVICE_TYPE, name, timeout=timeout_ms)
    finally:
        zc.close()


def test_the_dashboard_announces_itself_where_no_avahi_runs(tmp_path, monkeypatch):
    if lan_address().startswith("127."):
        pytest.skip("this machine has no network address to announce")
    monkeypatch.setattr(mdns, "AVAHI_SOCKET", tmp_path / "no-avahi-here")
    from conftest import LocalClient

    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="0.0.0.0", port=8765, mdns=True))
    host = socket.gethostname().split(".")[0].lower()
    name = mdns.service_name(host)
    with LocalClient(app):
        info = _resolve(name)
        assert info is not None, "the service resolves while the dashboard runs"
        assert info.port == 8765 and info.parsed_addresses() == [lan_address()]
        assert info.server == f"{host}.local." and info.properties[b"path"] == b"/"
    assert _resolve(name, 1500) is None, "gone once the dashboard stopped"


def test_quiet_where_avahi_announces_the_table_or_on_loopback(tmp_path, monkeypatch):
    sock = tmp_path / "avahi.socket"
    sock.touch()
    monkeypatch.setattr(mdns, "AVAHI_SOCKET", sock)
    assert mdns.announce("0.0.0.0", 8000) is None
    monkeypatch.setattr(mdns, "AVAHI_SOCKET", tmp_path / "none")
    assert mdns.announce("127.0.0.1", 8000) is None


def test_without_zeroconf_the_table_still_starts(tmp_path, monkeypatch, caplog):
    import sys

    monkeypatch.setattr(mdns, "AVAHI_SOCKET", tmp_path / "none")
    monkeypatch.setitem(sys.modules, "zeroconf", None)  # as if the package were not installed
    if lan_address().startswith("127."):
        pytest.skip("this machine has no network address to announce")
    with caplog.at_level("INFO"):
        assert mdns.announce("0.0.0.0", 8000) is None
    assert "kosti[mdns]" in caplog.text


def test_a_zeroconf_error_does_not_stop_the_table_from_starting(tmp_path, monkeypatch, caplog):
    """python-zeroconf's own errors (not OSError) are logged once; the dashboard starts and answers."""
    if lan_address().startswith("127."):
        pytest.skip("this machine has no network address to announce")
    monkeypatch.setattr(mdns, "AVAHI_SOCKET", tmp_path / "none")

    def refuse(self, *args, **kwargs):
        raise zeroconf.NonUniqueNameException("taken")

    monkeypatch.setattr(zeroconf.Zeroconf, "register_service", refuse)
    from conftest import LocalClient

    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="0.0.0.0", port=8766, mdns=True))
    with caplog.at_level("WARNING"), LocalClient(app) as client:
        assert client.get("/api/join").status_code == 200
    assert "cannot announce" in caplog.text and "taken" in caplog.text


def test_a_failing_stop_does_not_skip_the_others(tmp_path, monkeypatch):
    class Broken:
        def stop(self):
            raise RuntimeError("goodbye failed")

    monkeypatch.setattr(mdns, "announce", lambda host, port: Broken())
    from conftest import LocalClient

    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="0.0.0.0", port=8767, mdns=True))
    stopped = []
    monkeypatch.setattr(app.state.table.live, "stop", lambda: stopped.append("table"))
    with LocalClient(app) as client:
        assert client.get("/api/join").status_code == 200
    assert stopped == ["table"]
