"""The access rules' edges that mutation testing found unguarded (issue 45; ``benchmarks/mutation.py access``):
forgetting old wrong PINs, the lock's remaining time and its message, the host names a table answers to, bare IPv6
hosts, and Origin headers that are malformed or of another scheme."""

from __future__ import annotations

import socket

import pytest

from kosti.dashboard import access
from kosti.dashboard.access import AccessError, PinGuard, allowed_host_names, request_allowed


def _wrong(g: PinGuard) -> None:
    with pytest.raises(AccessError):
        g.check("10.0.0.1", "000000")


def test_wrong_pins_are_forgotten_after_forget_s_and_not_before() -> None:
    now = [10_000.0]
    g = PinGuard("123456", free_failures=5, forget_s=3600.0, clock=lambda: now[0])
    _wrong(g)
    now[0] += 3599.0
    assert g.failures == 1  # still counts just before forget_s
    now[0] += 1.0
    assert g.failures == 0  # exactly forget_s old: forgotten


def test_the_lock_says_how_long_it_lasts_and_ends_at_zero() -> None:
    now = [500.0]
    g = PinGuard("123456", free_failures=1, base_s=2.0, clock=lambda: now[0])
    assert g.locked_for() == 0.0  # never locked
    _wrong(g)
    assert g.locked_for() == pytest.approx(2.0)
    with pytest.raises(AccessError) as e:
        g.check("10.0.0.1", "123456")
    assert e.value.status == 429 and "wait 2 s" in e.value.en and "подождите 2 с" in e.value.ru
    now[0] += 10.0
    assert g.locked_for() == 0.0  # the lock is over: no time left, not a negative one


def test_the_machine_name_its_first_label_and_mdns_name_are_allowed(monkeypatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "Kitchen-Table.lan")
    names = allowed_host_names()
    assert {"kitchen-table.lan", "kitchen-table", "kitchen-table.lan.local", "localhost"} <= names
    assert "lan" not in names


def test_no_machine_name_still_allows_loopback_and_configured_names(monkeypatch) -> None:
    def broken() -> str:
        raise OSError("no host name")

    monkeypatch.setattr(socket, "gethostname", broken)
    names = allowed_host_names(["Dice.Example.", "", "0.0.0.0", "::"])
    assert "localhost" in names and "dice.example" in names
    assert not {"", "0.0.0.0", "::"} & names  # an empty or wildcard listen address is no host name


@pytest.mark.parametrize("value, want", [("::1", ("::1", "")), ("[::1]:8000", ("::1", "8000")),
                                         ("fe80::1", ("fe80::1", "")), ("Table.:8000", ("table", "8000")),
                                         ("10.0.0.5", ("10.0.0.5", ""))])
def test_split_host_keeps_a_bare_ipv6_address_whole(value: str, want: tuple[str, str]) -> None:
    assert access._split_host(value) == want


def test_a_long_foreign_host_is_named_cut_at_80_characters() -> None:
    host = "h" * 70 + "x" * 30 + ".example"
    refused = request_allowed({"host": host}, allowed_host_names())
    assert refused is not None and refused.status == 403
    assert repr(host[:80]) in refused.en and repr(host[:80]) in refused.ru
    assert repr(host[:81]) not in refused.en and repr(host[:79]) + " " not in refused.en


@pytest.mark.parametrize("origin", ["http://[::1", "ftp://127.0.0.1:8000", "file://127.0.0.1:8000",
                                    "http://127.0.0.1:8001", "http://127.0.0.2:8000"])
def test_an_origin_that_is_malformed_or_of_another_scheme_or_port_is_foreign(origin: str) -> None:
    refused = request_allowed({"host": "127.0.0.1:8000", "origin": origin}, allowed_host_names())
    assert refused is not None and refused.status == 403 and "another site" in refused.en


def test_the_tables_own_origin_is_allowed() -> None:
    names = allowed_host_names()
    assert request_allowed({"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000"}, names) is None
    assert request_allowed({"host": "127.0.0.1", "origin": "http://127.0.0.1"}, names) is None
    assert request_allowed({"host": "127.0.0.1:80", "origin": "http://127.0.0.1"}, names) is None
