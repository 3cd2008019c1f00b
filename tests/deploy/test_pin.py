"""``kosti pin`` (issue 43, item 3): the PIN where the table's owner looks for it, with the addresses and a QR code."""

from __future__ import annotations

from pathlib import Path

from kosti.cli import main


def _config(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "kosti.toml"
    p.write_text(text)
    return p


def test_pin_shows_the_pin_the_addresses_and_a_qr_code(tmp_path: Path, capsys) -> None:
    conf = _config(tmp_path, '[server]\nhost = "0.0.0.0"\nport = 8123\npin = "482913"\n')
    assert main(["pin", "--config", str(conf), "--qr"]) == 0
    out = capsys.readouterr().out
    assert "PIN: 482913" in out
    watch = next(line.split()[-1] for line in out.splitlines() if line.startswith("Watch:"))
    control = next(line.split()[-1] for line in out.splitlines() if line.startswith("Control:"))
    assert watch.startswith("http://") and watch.endswith(":8123/") and control == watch + "#pin=482913"
    assert sum("█" in line or "▀" in line or "▄" in line for line in out.splitlines()) > 10  # the QR code


def test_pin_on_a_loopback_only_table_needs_none(tmp_path: Path, capsys) -> None:
    conf = _config(tmp_path, '[server]\nhost = "127.0.0.1"\n')
    assert main(["pin", "--config", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "none needed" in out and "Watch:   http://127.0.0.1:8000/" in out and "Control:" not in out


def test_pin_unset_on_the_lan_says_where_the_random_one_is(tmp_path: Path, capsys) -> None:
    conf = _config(tmp_path, '[server]\nhost = "0.0.0.0"\n')
    assert main(["pin", "--config", str(conf)]) == 0
    assert "random one at every start" in capsys.readouterr().out
