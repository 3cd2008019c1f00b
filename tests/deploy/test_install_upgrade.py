"""deploy/install.sh --upgrade (issue 44 item 2) and the platforms the installer refuses (item 4).

The upgrade runs for real in the emulated arm64 root (``deploy/test-arm64.sh``, the release checklist of
docs/setup.md); here its logic runs staged under ``KOSTI_INSTALL_ROOT`` on this machine: a real SQLite database
migrated by the real store, a real HTTP server answering ``/healthz`` on the config's port, with only the system
commands (systemctl, pip, apt) replaced by stubs that record what they were asked to do.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "deploy" / "install.sh"
ARM64 = REPO / "deploy" / "test-arm64.sh"


def _stub(folder: Path, name: str, body: str) -> None:
    f = folder / name
    f.write_text(f'#!/bin/sh\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
    f.chmod(0o755)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("KOSTI_")}
    env.update(PATH=f"{stubs}:{os.environ['PATH']}", STUB_LOG=str(tmp_path / "calls.log"), STUB_DIR=str(stubs))
    env.update(extra)
    return env


def _run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, timeout=timeout, env=env)


# ------------------------------------------------------------------------------------------------------
# Platforms: 64-bit only, a Raspberry Pi 4 or 5.
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("machine", "arch", "model", "message"), [
    ("armv7l", "armhf", None, "a 32-bit system (armhf packages on armv7l)"),
    # Raspberry Pi OS 32-bit on a Pi 4 runs a 64-bit kernel: uname says aarch64, the packages are armhf
    ("aarch64", "armhf", "Raspberry Pi 4 Model B Rev 1.5", "a 32-bit system (armhf packages on aarch64)"),
    ("armv6l", "", None, "a 32-bit system (armv6l)"),
    ("aarch64", "arm64", "Raspberry Pi 3 Model B Plus Rev 1.3", "Raspberry Pi 3 Model B Plus Rev 1.3 is not supported"),
    ("aarch64", "arm64", "Raspberry Pi Zero 2 W Rev 1.0", "Raspberry Pi Zero 2 W Rev 1.0 is not supported"),
])
def test_unsupported_platforms_are_refused_with_one_line(tmp_path: Path, machine: str, arch: str, model: str | None,
                                                         message: str) -> None:
    env = _env(tmp_path, KOSTI_INSTALL_ROOT=str(tmp_path / "root"))
    stubs = Path(env["STUB_DIR"])
    _stub(stubs, "uname", f'if [ "$1" = -m ]; then echo {machine}; else exec /bin/uname "$@"; fi')
    _stub(stubs, "dpkg", f'[ "$1" = --print-architecture ] && [ -n "{arch}" ] && echo {arch} || exit 1')
    if model is not None:
        (tmp_path / "root/proc/device-tree").mkdir(parents=True)
        (tmp_path / "root/proc/device-tree/model").write_bytes(model.encode() + b"\0")  # as the kernel writes it
    r = _run(env, "--dry-run")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert "64-bit" in lines[0] and "Raspberry Pi OS" in lines[0]
    assert "+ apt-get" not in r.stdout, "refused before anything is planned"


@pytest.mark.parametrize("model", ["Raspberry Pi 5 Model B Rev 1.0", "Raspberry Pi 4 Model B Rev 1.5",
                                   "Raspberry Pi 400 Rev 1.0", "Raspberry Pi Compute Module 4 Rev 1.0",
                                   "Raspberry Pi 500 Rev 1.0"])
def test_a_pi_4_or_5_with_a_64_bit_os_is_accepted(tmp_path: Path, model: str) -> None:
    env = _env(tmp_path, KOSTI_INSTALL_ROOT=str(tmp_path / "root"))
    stubs = Path(env["STUB_DIR"])
    _stub(stubs, "uname", 'if [ "$1" = -m ]; then echo aarch64; else exec /bin/uname "$@"; fi')
    _stub(stubs, "dpkg", "echo arm64")
    (tmp_path / "root/proc/device-tree").mkdir(parents=True)
    (tmp_path / "root/proc/device-tree/model").write_bytes(model.encode() + b"\0")
    r = _run(env, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "on aarch64 (Raspberry Pi)" in r.stdout and "source.spec=picamera" in r.stdout


# ------------------------------------------------------------------------------------------------------
# --upgrade
# ------------------------------------------------------------------------------------------------------

def test_upgrade_dry_run_plans_stop_copy_install_migrate_start(tmp_path: Path) -> None:
    r = _run(_env(tmp_path), "--upgrade", str(REPO), "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("+ ")]
    order = ["+ systemctl stop kosti.service", "+ cp -a /opt/kosti/venv /opt/kosti/venv.previous",
             "kosti.db.before-upgrade", f"-m pip install --upgrade {REPO}\\[pi\\]",
             "kosti.config.cli check --config /etc/kosti/kosti.toml", "kosti.dashboard.store",
             "+ systemctl restart kosti.service", "+ rm -rf /opt/kosti/venv.previous"]
    at = [next(i for i, ln in enumerate(lines) if want in ln) for want in order[:-1]]
    at.append(max(i for i, ln in enumerate(lines) if order[-1] in ln))  # the copy goes once the new one runs
    assert at == sorted(at), list(zip(order, at, strict=True))
    assert not any("config_cli init" in ln for ln in lines), "an upgrade never writes a new config"
    assert not any("apt-get" in ln or "useradd" in ln for ln in lines)


@pytest.mark.parametrize(("args", "message"), [
    (["--upgrade", "--uninstall"], "--upgrade and --uninstall do not go together"),
    (["--upgrade", "/no/such/tree"], "--from /no/such/tree: no such folder or wheel"),
    (["--backend", "tflite"], "--backend must be onnx or ncnn, got 'tflite'"),
])
def test_upgrade_bad_arguments_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = _run(_env(tmp_path), "--dry-run", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A dashboard stand-in started by the systemctl stub: answers /healthz on the config's port when the version pip
# last "installed" is a good one, and exits at once (as a broken release's `kosti run` does) otherwise.
SERVER = r'''
import http.server, json, pathlib, sys
venv, port = pathlib.Path(sys.argv[1]), int(sys.argv[2])
if "broken" in (venv / "installed-from").read_text():
    sys.exit(1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"ok": False, "database": {"ok": True}, "camera": {"ok": False}}).encode()
        self.send_response(503)
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
'''


@pytest.fixture
def installed(tmp_path: Path):
    """A staged install: a venv whose python is this interpreter (kosti importable), a config on a free port, a real
    database at schema 1 with one game, and stubs for systemctl (starts :data:`SERVER`), pip and the rest."""
    root = tmp_path / "root"
    venv = root / "opt/kosti/venv"
    (venv / "bin").mkdir(parents=True)
    port = _free_port()
    env = _env(tmp_path, KOSTI_INSTALL_ROOT=str(root), KOSTI_UPGRADE_WAIT_S="20")
    stubs = Path(env["STUB_DIR"])
    (tmp_path / "server.py").write_text(SERVER)
    # the venv's python: pip "installs" by noting what it was given; everything else is this interpreter
    (venv / "bin/python").write_text(
        f'#!/bin/sh\necho "venv-python $*" >> "$STUB_LOG"\n'
        f'if [ "$1" = -m ] && [ "$2" = pip ]; then for a; do last=$a; done; echo "$last" > {venv}/installed-from; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n')
    (venv / "bin/kosti").write_text(f'#!/bin/sh\necho "kosti $(cat {venv}/installed-from)"\n')
    for f in ("python", "kosti"):
        (venv / "bin" / f).chmod(0o755)
    (venv / "installed-from").write_text("old\n")
    pid = tmp_path / "server.pid"
    _stub(stubs, "systemctl", f'case "$1" in\n'
                              f'  restart) {sys.executable} {tmp_path / "server.py"} {venv} {port} >/dev/null 2>&1 & echo $! > {pid} ;;\n'
                              f'  stop) kill "$(cat {pid} 2>/dev/null)" 2>/dev/null; rm -f {pid} ;;\n'
                              f'  show) kill -0 "$(cat {pid} 2>/dev/null)" 2>/dev/null && echo active || echo failed ;;\n'
                              f'esac\nexit 0')
    _stub(stubs, "id", 'if [ "$1" = -u ]; then echo 0; else exec /usr/bin/id "$@"; fi')
    _stub(stubs, "install", 'n=$#; i=0; while [ $i -lt $n ]; do a=$1; shift; i=$((i+1));\n'
                            '  case "$a" in -o|-g) shift; i=$((i+1));; *) set -- "$@" "$a";; esac; done\n'
                            'exec /usr/bin/install "$@"')
    from kosti.config import render_config

    conf = root / "etc/kosti/kosti.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text(render_config({"source": {"spec": "0"}, "server": {"host": "0.0.0.0", "port": port, "pin": "2468"},
                                   "storage": {"dir": "/var/lib/kosti"}}))
    data = root / "var/lib/kosti"
    data.mkdir(parents=True)
    from kosti.dashboard.migrations import SCHEMA_V1

    with closing(sqlite3.connect(data / "kosti.db")) as db, db:  # a database of the first schema, with one game
        db.executescript(SCHEMA_V1)
        db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        db.execute("INSERT INTO games (created_at, updated_at, rules_json, players_json, state_json) "
                   "VALUES (1, 1, '{}', '[\"Ann\", \"Boris\"]', '{}')")
    yield env, root, venv, data / "kosti.db", pid
    if pid.exists():
        subprocess.run(["kill", pid.read_text().strip()], capture_output=True)


def _schema(db: Path) -> int:
    with closing(sqlite3.connect(db)) as c:
        return int(c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def test_upgrade_keeps_the_games_migrates_and_a_broken_release_is_rolled_back(installed, tmp_path: Path) -> None:
    from kosti.dashboard.migrations import MIGRATIONS, latest_version

    env, root, venv, db, pid = installed
    conf = root / "etc/kosti/kosti.toml"
    conf_before = conf.read_bytes()
    good, broken = tmp_path / "good", tmp_path / "broken"
    for src in (good, broken):
        (src / "docs").mkdir(parents=True)
        (src / "pyproject.toml").write_text("[project]\nname = 'kosti'\n")

    r = _run(env, "--upgrade", str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (venv / "installed-from").read_text().strip() == f"{good}[pi]"
    assert "upgraded: kosti old -> kosti " in r.stdout
    assert _schema(db) == latest_version(MIGRATIONS), "the database was migrated"
    assert _schema(Path(f"{db}.before-upgrade")) == 1, "the copy taken before the upgrade is the old file"
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT players_json FROM games").fetchall() == [('["Ann", "Boris"]',)]
    assert conf.read_bytes() == conf_before
    assert not (root / "opt/kosti/venv.previous").exists()
    calls = (tmp_path / "calls.log").read_text()
    assert calls.index("systemctl stop kosti.service") < calls.index("-m pip install") < calls.index("systemctl restart")

    # A release whose dashboard does not start: the previous venv and the database as they were come back.
    with closing(sqlite3.connect(db)) as c, c:  # a game played on the good version (closed: the service is stopped)
        c.execute("INSERT INTO games (created_at, updated_at, rules_json, players_json, state_json) "
                  "VALUES (2, 2, '{}', '[\"Vera\"]', '{}')")
    r = _run(env, "--upgrade", str(broken))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "did not come up (it stopped, or /healthz did not answer within 20 s): rolling back to kosti" in r.stderr
    assert "upgrade failed, rolled back" in r.stderr.splitlines()[-1]
    assert (venv / "installed-from").read_text().strip() == f"{good}[pi]", "the good version is back"
    assert not (root / "opt/kosti/venv.previous").exists()
    with closing(sqlite3.connect(db)) as c:
        assert [row[0] for row in c.execute("SELECT players_json FROM games ORDER BY id")] == \
            ['["Ann", "Boris"]', '["Vera"]']
    assert pid.exists() and subprocess.run(["kill", "-0", pid.read_text().strip()]).returncode == 0, \
        "the rolled-back version runs"
    assert conf.read_bytes() == conf_before


def test_upgrade_without_an_installed_kosti_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path, KOSTI_INSTALL_ROOT=str(tmp_path / "root"))
    _stub(Path(env["STUB_DIR"]), "id", 'if [ "$1" = -u ]; then echo 0; else exec /usr/bin/id "$@"; fi')
    r = _run(env, "--upgrade", str(REPO))
    assert r.returncode == 2 and "kosti is not installed here" in r.stderr, r.stderr
    assert not (tmp_path / "calls.log").exists() or "systemctl" not in (tmp_path / "calls.log").read_text()


def test_arm64_script_parses_and_is_shellcheck_clean() -> None:
    r = subprocess.run(["bash", "-n", str(ARM64)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.access(ARM64, os.X_OK)
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (scripts/setup --test installs it)")
    for script in (ARM64, INSTALL):
        r = subprocess.run([shellcheck, "--severity=warning", str(script)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout


def test_arm64_script_refuses_without_root_in_one_line(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root and setpriv is missing: cannot drop privileges")
        d = Path(tempfile.mkdtemp(prefix="kosti-arm64-"))  # directly in /tmp: pytest's tmp is mode 700
        try:
            os.chmod(d, 0o755)
            shutil.copy2(ARM64, d / "test-arm64.sh")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", str(d / "test-arm64.sh")]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/")
        finally:
            shutil.rmtree(d, ignore_errors=True)
    else:
        r = subprocess.run(["bash", str(ARM64)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert re.fullmatch(r"arm64: cannot run here: run as root.*\n", r.stderr), r.stderr


def test_an_upgrade_that_fails_before_the_copies_exist_starts_the_installed_version_again(tmp_path: Path) -> None:
    """The service is stopped first; a full SD card failing the copy of the venv (set -e) must not leave it
    stopped: the trap starts the unchanged installed version again."""
    root = tmp_path / "root"
    env = _env(tmp_path, KOSTI_INSTALL_ROOT=str(root))
    stubs = Path(env["STUB_DIR"])
    _stub(stubs, "id", 'if [ "$1" = -u ]; then echo 0; else exec /usr/bin/id "$@"; fi')
    _stub(stubs, "uname", 'if [ "$1" = -m ]; then echo aarch64; else exec /bin/uname "$@"; fi')
    _stub(stubs, "dpkg", "echo arm64")
    _stub(stubs, "systemctl", "exit 0")
    _stub(stubs, "cp", 'case "$*" in *venv.previous*) echo "cp: No space left on device" >&2; exit 1 ;; esac\n'
                       'exec /bin/cp "$@"')
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 4 Model B Rev 1.5\0")
    venv_bin = root / "opt/kosti/venv/bin"
    venv_bin.mkdir(parents=True)
    for name, body in (("kosti", "echo kosti 0.0.1"), ("python", "exit 1")):
        (venv_bin / name).write_text(f"#!/bin/sh\n{body}\n")
        (venv_bin / name).chmod(0o755)
    (root / "etc/kosti").mkdir(parents=True)
    (root / "etc/kosti/kosti.toml").write_text("[server]\nport = 8000\n")
    r = _run(env, "--upgrade", str(REPO))
    assert r.returncode != 0 and "No space left on device" in r.stderr, r.stderr
    calls = [ln for ln in (tmp_path / "calls.log").read_text().splitlines() if ln.startswith("systemctl")]
    assert calls[-2:] == ["systemctl stop kosti.service", "systemctl restart kosti.service"], calls
    assert "starting the installed version again" in r.stderr


@pytest.mark.parametrize(("status", "body", "healthy"), [
    (200, b'{"ok": true, "database": {"ok": true}}', True),
    (503, b'{"ok": false, "database": {"ok": true}, "camera": {"ok": false}}', True),  # no camera: not its fault
    (503, b'{"ok": false, "database": {"ok": false}}', False),
    (403, b'{"error": "health and metrics answer only this machine"}', False),  # no report: not healthy
])
def test_wait_healthy_counts_only_a_report_with_a_usable_database(tmp_path: Path, status: int, body: bytes,
                                                                  healthy: bool) -> None:
    import http.server
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (tmp_path / "venv/bin").mkdir(parents=True)
        (tmp_path / "venv/bin/python").symlink_to(sys.executable)
        conf = tmp_path / "kosti.toml"
        conf.write_text(f'[server]\nhost = "0.0.0.0"\nport = {server.server_address[1]}\n')
        script = ('say() { echo "$*"; }; warn() { echo "$*" >&2; }; service_running() { return 0; }\n'
                  f'eval "$(sed -n \'/^read_conf() {{/,/^}}/p\' {INSTALL})"\n'
                  f'eval "$(sed -n \'/^wait_healthy() {{/,/^}}/p\' {INSTALL})"\n'
                  'wait_healthy 3\n')
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "VENV": str(tmp_path / "venv"), "CONF": str(conf)})
    finally:
        server.shutdown()
    assert (r.returncode == 0) is healthy, (r.stdout, r.stderr)
