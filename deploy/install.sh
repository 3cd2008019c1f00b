#!/usr/bin/env bash
# Install kosti as a service on Raspberry Pi OS (Bookworm or later) or another Debian-based system.
#
#   sudo deploy/install.sh [--from DIR|WHEEL] [--camera SPEC] [--host ADDR] [--port N] [--hostname NAME]
#                          [--backups N] [--backend onnx|ncnn] [--dry-run]
#   sudo deploy/install.sh --upgrade [SRC] [--dry-run]
#   sudo deploy/install.sh --uninstall [--purge] [--dry-run]
#
# Installs: apt packages (python3-picamera2, python3-venv, libcamera, avahi-daemon), a system user `kosti`
# (group video), a virtual environment /opt/kosti/venv created WITH --system-site-packages (so Debian's
# picamera2/libcamera bindings are importable), kosti with the [pi] extras, /etc/kosti/kosti.toml
# (only if absent: an existing file is never overwritten), the systemd unit kosti.service (enabled and
# started), the mDNS announcement (NAME.local, /etc/avahi/services/kosti.service) and a daily backup timer.
# Prints the dashboard URL, the PIN and a QR code to scan at the end.
#
# --from DIR|WHEEL  what to pip-install (default: the source tree this script is in)
# --camera SPEC     source.spec for a new config: picamera (default on a Pi), 0 (USB webcam), a URL, ...
# --host ADDR       address the dashboard listens on in a new config (default 0.0.0.0 = the local network;
#                   a random 6-digit PIN is generated then)
# --port N          dashboard port in a new config (default 8000)
# --backend B       reader.backend for a new config: onnx (default: ONNX Runtime with the shipped INT8 files, the
#                   reader every accuracy figure is measured on) or ncnn (the lean float16 NCNN files: faster on a
#                   Pi, reads a little worse: models/README.md "NCNN or ONNX on the Pi"; taken only when it loads)
# --hostname NAME   this machine's name, so phones open http://NAME.local:PORT/ (default: kosti when the
#                   name is still Raspberry Pi OS's default "raspberrypi", else the name is kept)
# --backups N       daily backups to keep in /var/lib/kosti/backups (default 7; 0 = no daily backup)
# --upgrade [SRC]   update an installed kosti to SRC (a source folder or a wheel; default: this script's tree):
#                   stops the service, keeps a copy of the venv and of the database, installs SRC into the venv,
#                   migrates the database, keeps the config, games and taught models, starts the service and
#                   waits for /healthz (KOSTI_UPGRADE_WAIT_S, default 120 s); a new version that does not come
#                   up is rolled back: the previous venv and database return and are started again (exit 1)
# --uninstall       stop and remove the service, the venv and the user; keeps /etc/kosti and /var/lib/kosti
# --purge           with --uninstall: also delete /etc/kosti and /var/lib/kosti (games, frames, models)
# --dry-run         print every command instead of running it (no root needed; changes nothing)
#
# Exit codes: 0 done, 2 bad arguments or unsupported system, 1 a step failed.
set -euo pipefail

# KOSTI_INSTALL_ROOT (test hook): stage every file under this absolute folder instead of /. System
# commands (apt-get, useradd, systemctl, ...) still run, so the tests put stubs first on PATH.
ROOT=${KOSTI_INSTALL_ROOT:-}
case "$ROOT" in ''|/*) ;; *) echo "install.sh: KOSTI_INSTALL_ROOT must be an absolute path" >&2; exit 2 ;; esac
PREFIX=$ROOT/opt/kosti
VENV=$PREFIX/venv
VENV_RUNTIME=/opt/kosti/venv   # as the service sees it
CONF_DIR=$ROOT/etc/kosti
CONF=$CONF_DIR/kosti.toml
RUNTIME_DATA_DIR=/var/lib/kosti   # as the service sees it (StateDirectory=kosti)
DATA_DIR=$ROOT$RUNTIME_DATA_DIR
UNIT_NAME=kosti.service
UNIT_DEST=$ROOT/etc/systemd/system/$UNIT_NAME
SERVICE_USER=kosti
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
UNIT_SRC=$SCRIPT_DIR/$UNIT_NAME
BACKUP_UNITS=(kosti-backup.service kosti-backup.timer)
AVAHI_SRC=$SCRIPT_DIR/kosti-avahi.service
AVAHI_DEST=$ROOT/etc/avahi/services/kosti.service
HOSTS=$ROOT/etc/hosts
DEFAULT_PI_HOSTNAME=raspberrypi
# Required everywhere / wanted where the distribution has them (Raspberry Pi OS archive).
APT_REQUIRED=(python3 python3-venv python3-pip)
APT_PI=(python3-picamera2 python3-libcamera libcamera-ipa rpicam-apps-lite avahi-daemon)

DRY_RUN=0
UNINSTALL=0
UPGRADE=0
PURGE=0
FROM=$(dirname "$SCRIPT_DIR")
CAMERA=""
HOST=0.0.0.0
PORT=8000
HOSTNAME_WANTED=""
BACKEND_WANTED=onnx
BACKUPS=7

die() { echo "install.sh: $1" >&2; exit "${2:-1}"; }
say() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }

# run CMD ARGS...: run a command, or with --dry-run print it (shell-quoted) prefixed by "+ ".
run() {
  if [ "$DRY_RUN" = 1 ]; then
    printf '+'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

usage() { sed -n '2,/^# Exit codes/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) DRY_RUN=1 ;;
      --uninstall) UNINSTALL=1 ;;
      --upgrade)
        UPGRADE=1
        # an optional SRC right after it (anything not starting with '-')
        if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then FROM=$2; shift; fi ;;
      --purge) PURGE=1 ;;
      --from) [ $# -ge 2 ] || die "--from needs a folder or a wheel" 2; FROM=$2; shift ;;
      --from=*) FROM=${1#--from=} ;;
      --camera) [ $# -ge 2 ] || die "--camera needs a source spec" 2; CAMERA=$2; shift ;;
      --camera=*) CAMERA=${1#--camera=} ;;
      --host) [ $# -ge 2 ] || die "--host needs an address" 2; HOST=$2; shift ;;
      --host=*) HOST=${1#--host=} ;;
      --port) [ $# -ge 2 ] || die "--port needs a number" 2; PORT=$2; shift ;;
      --port=*) PORT=${1#--port=} ;;
      --backend) [ $# -ge 2 ] || die "--backend needs onnx or ncnn" 2; BACKEND_WANTED=$2; shift ;;
      --backend=*) BACKEND_WANTED=${1#--backend=} ;;
      --hostname) [ $# -ge 2 ] || die "--hostname needs a name" 2; HOSTNAME_WANTED=$2; shift ;;
      --hostname=*) HOSTNAME_WANTED=${1#--hostname=} ;;
      --backups) [ $# -ge 2 ] || die "--backups needs a number" 2; BACKUPS=$2; shift ;;
      --backups=*) BACKUPS=${1#--backups=} ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option $1 (see --help)" 2 ;;
    esac
    shift
  done
  if [ "$PURGE" = 1 ] && [ "$UNINSTALL" = 0 ]; then die "--purge only goes with --uninstall" 2; fi
  if [ "$UPGRADE" = 1 ] && [ "$UNINSTALL" = 1 ]; then die "--upgrade and --uninstall do not go together" 2; fi
  case "$BACKEND_WANTED" in onnx|ncnn) ;; *) die "--backend must be onnx or ncnn, got '$BACKEND_WANTED'" 2 ;; esac
  case "$PORT" in
    ''|*[!0-9]*) die "--port must be a number 1-65535, got '$PORT'" 2 ;;
  esac
  if [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then die "--port must be 1-65535, got $PORT" 2; fi
  case "$BACKUPS" in
    ''|*[!0-9]*) die "--backups must be a number of days to keep (0 = none), got '$BACKUPS'" 2 ;;
  esac
  if [ -n "$HOSTNAME_WANTED" ] && ! [[ "$HOSTNAME_WANTED" =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]]; then
    die "--hostname must be letters a-z, digits and '-' (at most 63, not starting or ending with '-'), got '$HOSTNAME_WANTED'" 2
  fi
}

need_root() {
  if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "run as root: sudo $0 $*  (or add --dry-run to see what it would do)" 2
  fi
}

# The board's name from the device tree (under KOSTI_INSTALL_ROOT when staged, so tests can name a board).
PI_MODEL_FILE=$ROOT/proc/device-tree/model
is_raspberry_pi() { grep -qs "Raspberry Pi" "$PI_MODEL_FILE"; }

# Refuses (exit 2) what kosti cannot run on: a 32-bit system (armhf/armel packages, also under a 64-bit kernel:
# onnxruntime and ncnn publish no 32-bit ARM wheels, and OpenCV's are not current) and a Raspberry Pi older or
# smaller than a Pi 4 (a Pi 3, a Zero 2 W: four Cortex-A53 cores and 1 GB or 512 MB, where the reader of a
# 1280x720 throw and the dashboard do not fit beside the OS; docs/setup.md "Supported Raspberry Pis").
check_platform() {
  local machine arch model
  machine=$(uname -m)
  arch=$(dpkg --print-architecture 2>/dev/null || echo "")
  case "$arch" in
    armhf|armel|i386)
      die "a 32-bit system ($arch packages on $machine): kosti needs a 64-bit OS, e.g. Raspberry Pi OS (64-bit) Bookworm; onnxruntime and ncnn have no 32-bit wheels" 2 ;;
  esac
  case "$machine" in
    aarch64|x86_64) ;;
    armv6l|armv7l|armv8l|i?86)
      die "a 32-bit system ($machine): kosti needs a 64-bit OS, e.g. Raspberry Pi OS (64-bit) Bookworm; onnxruntime and ncnn have no 32-bit wheels" 2 ;;
    *) warn "untested processor $machine; continuing (aarch64 and x86_64 are supported)" ;;
  esac
  model=$({ tr -d '\0' < "$PI_MODEL_FILE"; } 2>/dev/null || true)
  case "$model" in
    *"Raspberry Pi 5"*|*"Raspberry Pi 4"*|*"Compute Module 4"*|*"Compute Module 5"*) ;;  # also the Pi 400 and 500
    *"Raspberry Pi"*)
      die "$model is not supported: kosti needs a Raspberry Pi 4 (2 GB or more) or 5 with the 64-bit Raspberry Pi OS Bookworm (a Pi 3 or Zero 2 W has too little memory and speed for the reader beside the dashboard)" 2 ;;
  esac
}

check_system() {
  command -v apt-get >/dev/null || die "needs a Debian-based system with apt-get (Raspberry Pi OS Bookworm or later)" 2
  local id="" version_id="" codename="" info=""
  if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091  # a system file, not part of this repository
    info=$(. /etc/os-release && printf '%s|%s|%s' "${ID:-}" "${VERSION_ID:-}" "${VERSION_CODENAME:-}")
    IFS='|' read -r id version_id codename <<<"$info"
  fi
  case "$id" in
    debian|raspbian)
      # No VERSION_ID = testing/unstable, newer than any release.
      if [[ "${version_id%%.*}" =~ ^[0-9]+$ ]] && [ "${version_id%%.*}" -lt 12 ]; then
        die "Raspberry Pi OS / Debian ${codename:-$version_id} is too old: Bookworm (12) or later is needed" 2
      fi ;;
    *) warn "untested system '${id:-unknown}'; continuing (Raspberry Pi OS Bookworm or later is supported)" ;;
  esac
  check_platform
  say "system: ${id:-unknown} ${codename:-$version_id} on $(uname -m)$(is_raspberry_pi && echo ' (Raspberry Pi)')"
}

check_from() {
  if [ -d "$FROM" ]; then
    [ -f "$FROM/pyproject.toml" ] || die "--from $FROM: not a kosti source folder (no pyproject.toml)" 2
    FROM=$(cd "$FROM" && pwd)
  elif [ -f "$FROM" ]; then
    case "$FROM" in
      *.whl) FROM=$(cd "$(dirname "$FROM")" && pwd)/$(basename "$FROM") ;;
      *) die "--from $FROM: expected a source folder or a .whl file" 2 ;;
    esac
  else
    die "--from $FROM: no such folder or wheel" 2
  fi
  [ -f "$UNIT_SRC" ] || die "missing $UNIT_SRC next to this script" 2
}

apt_install() {
  say "installing system packages"
  run apt-get update
  local pkgs=("${APT_REQUIRED[@]}") missing=() p
  for p in "${APT_PI[@]}"; do
    if apt-cache show "$p" >/dev/null 2>&1; then pkgs+=("$p"); else missing+=("$p"); fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    warn "not in this system's apt sources (not Raspberry Pi OS?): ${missing[*]}"
    warn "  without python3-picamera2 the Pi camera (picamera) cannot be used: use a USB webcam (--camera 0) or a URL"
  fi
  # --no-install-recommends keeps picamera2's GUI preview dependencies (Qt, OpenGL) off a headless Pi.
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}"
}

create_user() {
  if id "$SERVICE_USER" >/dev/null 2>&1; then
    say "user $SERVICE_USER exists; making sure it is in group video"
    run usermod --append --groups video "$SERVICE_USER"
  else
    say "creating system user $SERVICE_USER (group video)"
    getent group video >/dev/null || run groupadd --system video
    run useradd --system --user-group --groups video --home-dir "$RUNTIME_DATA_DIR" --no-create-home \
      --shell /usr/sbin/nologin --comment "kosti dice scorekeeper" "$SERVICE_USER"
  fi
  run install -d -m 0755 "$PREFIX"
  run install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$DATA_DIR"
  run install -d -o root -g "$SERVICE_USER" -m 0750 "$CONF_DIR"
}

# numpy constraint matching Debian's numpy: picamera2's simplejpeg (python3-simplejpeg) is built against
# the system numpy, and a numpy of another major version in the venv breaks its import ("numpy.dtype size
# changed, may indicate binary incompatibility"; raspberrypi/picamera2#1088, #1211).
numpy_constraint() {
  local v
  v=$(python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)
  case "$v" in
    1.*) echo "numpy<2" ;;
    2.*) echo "numpy>=2,<3" ;;
    *) echo "" ;;
  esac
}

install_venv() {
  say "creating $VENV with --system-site-packages (Debian's picamera2 stays visible)"
  if [ -x "$VENV/bin/python" ]; then
    say "reusing the existing venv"
  else
    run python3 -m venv --system-site-packages "$VENV"
  fi
  run "$VENV/bin/python" -m pip install --upgrade pip
  local constraint constraints_file=$PREFIX/constraints.txt
  constraint=$(numpy_constraint)
  local pip_args=(install --upgrade)
  if [ -n "$constraint" ]; then
    say "pinning $constraint to match the system numpy (picamera2/simplejpeg ABI)"
    if [ "$DRY_RUN" = 1 ]; then
      echo "+ echo '$constraint' > $constraints_file"
    else
      echo "$constraint" > "$constraints_file"
    fi
    pip_args+=(--constraint "$constraints_file")
  fi
  say "installing kosti[pi] from $FROM"
  run "$VENV/bin/python" -m pip "${pip_args[@]}" "${FROM}[pi]"
  if [ -f "$FROM/docs/setup.md" ] || [ "$DRY_RUN" = 1 ]; then
    run install -D -m 0644 "$FROM/docs/setup.md" "$PREFIX/docs/setup.md"
  fi
}

# Prints the reader backend for a new config: onnx (the shipped INT8 reader; on the Pi too since issue 44: the
# float16 NCNN files read epanemu-dice val's dice ~0.01 worse), or with --backend ncnn: ncnn when the active
# model version has an NCNN export and the lean ncnn backend (the ncnn package alone, no torch) loads it and
# reads a frame, else onnx.
choose_backend() {
  if [ "${BACKEND_WANTED:-onnx}" != ncnn ]; then
    echo onnx
    return
  fi
  if [ "$DRY_RUN" = 1 ]; then
    echo "ncnn-if-present"
    return
  fi
  if env XDG_DATA_HOME="$ROOT/var/lib" "$VENV/bin/python" - <<'EOF' >/dev/null 2>&1
import sys
import numpy as np
from kosti.registry import Registry
from kosti.vision.reader import DiceReader
paths = Registry().active_paths()
if not paths.has_ncnn:
    sys.exit(1)
det, cls = paths.for_backend("ncnn")
DiceReader(det, cls, backend="ncnn").read(np.zeros((96, 128, 3), np.uint8))  # files load and run
sys.exit(0)
EOF
  then
    echo ncnn
  else
    echo onnx
  fi
}

random_pin() {
  local n
  n=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  printf '%06d' $((n % 1000000))
}

write_config() {
  if [ -e "$CONF" ]; then
    say "keeping the existing $CONF (never overwritten)"
    return
  fi
  local backend camera pin
  backend=$(choose_backend)
  camera=${CAMERA:-$(is_raspberry_pi && echo picamera || echo 0)}
  PIN=$(random_pin)
  say "writing $CONF (camera $camera, http://$HOST:$PORT/, reader backend $backend)"
  if [ "$backend" = "ncnn-if-present" ]; then
    echo "  (the backend is ncnn when the installed model has an NCNN export that the lean ncnn backend loads, else onnx)"
    backend=ncnn
  fi
  local sets=(--set "source.spec=$camera" --set "server.host=$HOST" --set "server.port=$PORT"
              --set "reader.backend=$backend" --set "storage.dir=$RUNTIME_DATA_DIR")
  case "$HOST" in
    127.*|localhost|::1) PIN="" ;;
    *) sets+=(--set "server.pin=$PIN") ;;
  esac
  run env XDG_DATA_HOME="$ROOT/var/lib" "$VENV/bin/python" -m kosti.config.cli init --path "$CONF" --mode 640 "${sets[@]}"
  run chown "root:$SERVICE_USER" "$CONF"
}

# read_conf KEY: prints server.KEY from the config (empty if unset).
read_conf() {
  "$VENV/bin/python" - "$CONF" "$1" <<'EOF' 2>/dev/null || true
import sys, tomllib
with open(sys.argv[1], "rb") as fh:
    print(tomllib.load(fh).get("server", {}).get(sys.argv[2], ""))
EOF
}

install_unit() {
  say "installing $UNIT_DEST and starting the service"
  run install -D -m 0644 "$UNIT_SRC" "$UNIT_DEST"
  if sd_booted; then run systemctl daemon-reload; fi  # enable works without a running systemd, daemon-reload not
  run systemctl enable "$UNIT_NAME"
  service_start
}

# systemd runs this system (as PID 1)? A chroot or a container without it gets the service started directly.
# Dry runs and staged runs (KOSTI_INSTALL_ROOT, with systemctl stubbed) plan for systemd, as on a Pi.
sd_booted() { [ "$DRY_RUN" = 1 ] || [ -n "$ROOT" ] || [ -d /run/systemd/system ]; }
NOSYSTEMD_PID=$ROOT/run/kosti.pid
NOSYSTEMD_LOG=$DATA_DIR/kosti.log

# unit_values KEY: the values of KEY= in the installed unit, one per line.
unit_values() { sed -n "s/^$1=//p" "$UNIT_DEST"; }

# Starts (or restarts) the service. Without systemd: the unit's own command line (ExecStart=) with its
# environment (Environment=) as its user (User=, with the user's groups: video), from /, in the background,
# logging to /var/lib/kosti/kosti.log; it will not restart by itself or start at boot.
service_start() {
  if sd_booted; then
    run systemctl restart "$UNIT_NAME"
    return
  fi
  service_stop
  local user cmd=() envs=()
  user=$(unit_values User | head -1)
  read -ra cmd <<<"$(unit_values ExecStart | head -1)"
  read -ra envs <<<"$(unit_values Environment | tr '\n' ' ')"
  say "systemd is not running here (a chroot or a container): starting ${cmd[*]} as user $user, with the unit's environment (no restart on failure, no start at boot; log $NOSYSTEMD_LOG)"
  (cd / && exec setsid setpriv --reuid="$user" --regid="$user" --init-groups \
     env -i "${envs[@]}" "${cmd[@]}" >>"$NOSYSTEMD_LOG" 2>&1 </dev/null) &
  echo $! > "$NOSYSTEMD_PID"
}

# The pid of the service started without systemd, if it still runs.
nosystemd_pid() {
  local pid
  pid=$(cat "$NOSYSTEMD_PID" 2>/dev/null || true)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

service_stop() {
  if sd_booted; then
    run systemctl stop "$UNIT_NAME"
    return
  fi
  local pid _
  pid=$(nosystemd_pid) || true
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done  # TimeoutStopSec=15
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$NOSYSTEMD_PID"
}

service_running() {
  if sd_booted; then
    # Type=notify: "activating" until the dashboard says READY=1
    case "$(systemctl show --property=ActiveState --value "$UNIT_NAME" 2>/dev/null)" in
      active|activating|reloading) return 0 ;;
      *) return 1 ;;
    esac
  else
    [ -n "$(nosystemd_pid || true)" ]
  fi
}

# wait_healthy SECONDS: waits until the dashboard answers /healthz with its database usable (200, or 503 for a
# camera that is absent or down: the hardware is not the new version's fault); fails early when the service
# has stopped.
wait_healthy() {
  local limit=$1 start port host
  port=$(read_conf port); port=${port:-8000}
  host=$(read_conf host)
  case "$host" in ''|0.0.0.0|::|127.*|localhost) host=127.0.0.1 ;; esac
  start=$(date +%s)
  while [ $(( $(date +%s) - start )) -lt "$limit" ]; do
    if "$VENV/bin/python" - "http://$host:$port/healthz" <<'PY' 2>/dev/null
import json, sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        body = json.load(r)
except urllib.error.HTTPError as e:  # 503: a failing check (the body says which); anything else (403): no report
    if e.code != 503:
        sys.exit(1)
    body = json.load(e)
sys.exit(0 if body.get("database", {}).get("ok") else 1)
PY
    then
      say "the dashboard answers on port $port ($(( $(date +%s) - start )) s)"
      return 0
    fi
    service_running || { warn "the service stopped while starting"; return 1; }
    sleep 2
  done
  warn "no answer from http://$host:$port/healthz within $limit s"
  return 1
}

# The database as the service sees it (storage.db of the config), under the staging root.
db_file() {
  local db
  db=$("$VENV/bin/python" - "$CONF" <<'PY' 2>/dev/null || true
import sys
from kosti.config import load_config
print(load_config(sys.argv[1]).storage.db_path)
PY
)
  echo "$ROOT${db:-$RUNTIME_DATA_DIR/kosti.db}"
}

# as_service_user CMD...: run a command as the service user (staged runs: as is).
as_service_user() {
  if [ -n "$ROOT" ]; then run "$@"; else run setpriv --reuid="$SERVICE_USER" --regid="$SERVICE_USER" --init-groups "$@"; fi
}

rollback() {
  local why=$1 old=$2 db=$3
  trap - EXIT  # it exits itself (die)
  warn "the new version did not come up ($why): rolling back to $old"
  service_stop || true
  run rm -rf "$VENV"
  run mv "$PREVIOUS" "$VENV"
  if [ -f "$db.before-upgrade" ] || [ "$DRY_RUN" = 1 ]; then
    run rm -f "$db-wal" "$db-shm"
    run cp -p "$db.before-upgrade" "$db"
  fi
  service_start
  if [ "$DRY_RUN" = 1 ] || wait_healthy "$WAIT_S"; then
    die "upgrade failed, rolled back: $old runs again with its database as it was before the upgrade (the log: journalctl -u kosti)" 1
  fi
  die "upgrade failed and the rolled-back $old does not answer either: see journalctl -u kosti" 1
}

# --upgrade: the installed kosti → FROM, keeping the config, the games and the model registry.
do_upgrade() {
  need_root "$@"
  check_system
  check_from
  PREVIOUS=$PREFIX/venv.previous
  WAIT_S=${KOSTI_UPGRADE_WAIT_S:-120}
  if [ "$DRY_RUN" = 0 ]; then
    [ -x "$VENV/bin/kosti" ] || die "kosti is not installed here ($VENV): run install.sh without --upgrade first" 2
    [ -f "$CONF" ] || die "$CONF is missing: run install.sh without --upgrade (it writes a new one)" 2
  fi
  local old="the installed kosti" db="$DATA_DIR/kosti.db"
  if [ "$DRY_RUN" = 0 ]; then old=$("$VENV/bin/kosti" --version); db=$(db_file); fi
  say "upgrading $old to $FROM (config $CONF, games $db and the models in $DATA_DIR/models stay)"
  service_stop
  # Until the copies for a rollback exist, any exit (set -e: a full SD card failing cp) starts the unchanged
  # installed version again; after them, the rollback takes over.
  trap 'trap - EXIT; warn "the upgrade stopped before it changed anything: starting the installed version again"; service_start' EXIT
  say "keeping the previous version ($PREVIOUS) and the database ($db.before-upgrade) for a rollback"
  run rm -rf "$PREVIOUS"
  run cp -a "$VENV" "$PREVIOUS"
  if [ -f "$db" ] || [ "$DRY_RUN" = 1 ]; then
    # SQLite's online backup: a consistent copy even of a database with pages still in its WAL file.
    as_service_user "$VENV/bin/python" -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close(); s.close()' "$db" "$db.before-upgrade"
  fi
  # shellcheck disable=SC2064  # expanded now: old and db are this function's locals
  trap "rollback 'the upgrade stopped half-way' $(printf %q "$old") $(printf %q "$db")" EXIT
  # One pip command, so its own status decides (set -e does not act inside an `if`). The numpy pin the
  # install wrote (constraints.txt: picamera2's ABI) still holds.
  local pip_args=(install --upgrade)
  if [ -f "$PREFIX/constraints.txt" ]; then pip_args+=(--constraint "$PREFIX/constraints.txt"); fi
  say "installing kosti[pi] from $FROM into $VENV"
  run "$VENV/bin/python" -m pip "${pip_args[@]}" "${FROM}[pi]" || rollback "pip could not install $FROM" "$old" "$db"
  if [ -f "$FROM/docs/setup.md" ]; then run install -D -m 0644 "$FROM/docs/setup.md" "$PREFIX/docs/setup.md"; fi
  local new="the new kosti"
  if [ "$DRY_RUN" = 0 ]; then new=$("$VENV/bin/kosti" --version); fi
  if [ "$DRY_RUN" = 0 ]; then
    "$VENV/bin/python" -m kosti.config.cli check --config "$CONF" || rollback "$new refuses $CONF" "$old" "$db"
  else
    run "$VENV/bin/python" -m kosti.config.cli check --config "$CONF"
  fi
  if [ -f "$db" ] || [ "$DRY_RUN" = 1 ]; then
    say "migrating the database to $new's schema"
    as_service_user "$VENV/bin/python" -c 'import sys; from kosti.dashboard.store import Store; Store(sys.argv[1]).close()' "$db" \
      || rollback "the database could not be migrated" "$old" "$db"
  fi
  run install -D -m 0644 "$UNIT_SRC" "$UNIT_DEST"
  if sd_booted; then run systemctl daemon-reload; fi
  service_start
  if [ "$DRY_RUN" = 0 ] && ! wait_healthy "$WAIT_S"; then rollback "it stopped, or /healthz did not answer within $WAIT_S s" "$old" "$db"; fi
  trap - EXIT
  run rm -rf "$PREVIOUS"
  say "upgraded: $old -> $new (the database before the upgrade stays in $db.before-upgrade)"
}

# The name phones open (NAME.local): --hostname, else "kosti" in place of Raspberry Pi OS's default name.
choose_hostname() {
  local current
  current=$(hostname 2>/dev/null || echo "")
  if [ -n "$HOSTNAME_WANTED" ]; then echo "$HOSTNAME_WANTED"
  elif [ "$current" = "$DEFAULT_PI_HOSTNAME" ] || [ -z "$current" ]; then echo kosti
  else echo "$current"
  fi
}

set_hostname() {
  local name current
  name=$(choose_hostname)
  current=$(hostname 2>/dev/null || echo "")
  NAME=$name
  if [ "$name" = "$current" ]; then
    say "host name: $name (phones open http://$name.local:$PORT/)"
    return
  fi
  say "setting the host name to $name (was ${current:-unset}), so phones open http://$name.local:$PORT/"
  run hostnamectl set-hostname "$name"
  if [ -f "$HOSTS" ] && grep -q '^127\.0\.1\.1' "$HOSTS"; then
    run sed -i "s/^127\.0\.1\.1.*/127.0.1.1\t$name/" "$HOSTS"
  elif [ "$DRY_RUN" = 1 ]; then
    echo "+ echo '127.0.1.1 $name' >> $HOSTS"
  else
    printf '127.0.1.1\t%s\n' "$name" >> "$HOSTS"
  fi
}

# mDNS: avahi-daemon answers NAME.local and lists the dashboard as an HTTP service on the port of the config.
install_mdns() {
  local port=$PORT
  [ "$DRY_RUN" = 1 ] || port=$(read_conf port)
  port=${port:-$PORT}
  say "announcing the dashboard over mDNS as $NAME.local (avahi service file $AVAHI_DEST, port $port)"
  if [ "$DRY_RUN" = 1 ]; then
    echo "+ sed 's|<port>8000</port>|<port>$port</port>|' $AVAHI_SRC > $AVAHI_DEST"
  else
    install -d -m 0755 "$(dirname "$AVAHI_DEST")"
    sed "s|<port>8000</port>|<port>$port</port>|" "$AVAHI_SRC" > "$AVAHI_DEST"
    chmod 0644 "$AVAHI_DEST"
  fi
  run systemctl enable --now avahi-daemon.service || warn "avahi-daemon could not be started: $NAME.local will not resolve; open the IP address instead"
  if [ "$DRY_RUN" = 0 ] && ! systemctl is-active --quiet avahi-daemon.service; then
    warn "avahi-daemon is not running: phones cannot find $NAME.local; open the IP address below instead"
  fi
}

# The daily backup: kosti-backup.timer runs `kosti backup --dir /var/lib/kosti/backups --keep N` (N = --backups).
install_backup_timer() {
  local unit
  if [ "$BACKUPS" = 0 ]; then
    say "no daily backup (--backups 0)"
    if [ -e "$ROOT/etc/systemd/system/kosti-backup.timer" ]; then
      run systemctl disable --now kosti-backup.timer || true
    fi
    return
  fi
  say "daily backup at 04:30, keeping $BACKUPS in $RUNTIME_DATA_DIR/backups (kosti-backup.timer)"
  for unit in "${BACKUP_UNITS[@]}"; do
    if [ "$DRY_RUN" = 1 ]; then
      echo "+ install -D -m 0644 $SCRIPT_DIR/$unit $ROOT/etc/systemd/system/$unit  (--keep $BACKUPS)"
    else
      install -D -m 0644 "$SCRIPT_DIR/$unit" "$ROOT/etc/systemd/system/$unit"
      sed -i "s/--keep [0-9]*/--keep $BACKUPS/" "$ROOT/etc/systemd/system/$unit"
    fi
  done
  if sd_booted; then
    run systemctl daemon-reload
    run systemctl enable --now kosti-backup.timer
  else
    run systemctl enable kosti-backup.timer  # no systemd running (a chroot, a container): it runs from the next boot
  fi
}

print_access() {
  local port=$PORT pin=${PIN:-} host=$HOST ip
  if [ "$DRY_RUN" = 0 ]; then
    port=$(read_conf port)
    pin=$(read_conf pin)
    host=$(read_conf host)
  fi
  ip=$(hostname -I 2>/dev/null | awk '{print $1}')
  echo
  if [ "$DRY_RUN" = 1 ]; then
    echo "(dry run) kosti would be installed. Config: $CONF   Data: $DATA_DIR   Service: $UNIT_NAME"
    [ -z "$pin" ] || pin="(a new random 6-digit PIN)"
  else
    echo "kosti is installed. Config: $CONF   Data: $DATA_DIR   Service: $UNIT_NAME"
  fi
  case "$host" in
    127.*|localhost|::1) echo "  Dashboard: http://localhost:${port:-8000}/  (this machine only)" ;;
    *) echo "  Dashboard: http://${NAME:-$(hostname)}.local:${port:-8000}/${ip:+  or  http://$ip:${port:-8000}/}" ;;
  esac
  if [ -n "$pin" ]; then
    echo "  PIN: $pin   (server.pin in $CONF)"
  else
    echo "  PIN: none (server.pin is unset)"
  fi
  echo "  Logs: journalctl -u kosti -f     Restart after editing the config: sudo systemctl restart kosti"
  echo "  The PIN again, any time: sudo -u kosti $VENV_RUNTIME/bin/kosti pin --qr"
  if [ "$BACKUPS" != 0 ]; then
    echo "  Backups: daily, the newest $BACKUPS in $RUNTIME_DATA_DIR/backups (restore: docs/setup.md \"Backup and restore\")"
  fi
  if [ "$DRY_RUN" = 0 ] && [ -n "$pin" ]; then
    echo "  Scan to control the game from a phone (the code holds the PIN: show it only to the players):"
    "$VENV/bin/python" -m kosti pin --config "$CONF" --qr 2>/dev/null | sed -n '/[█▀▄]/p' || true
  fi
}

do_install() {
  need_root "$@"
  check_system
  check_from
  apt_install
  create_user
  install_venv
  write_config
  if [ "$DRY_RUN" = 0 ]; then
    "$VENV/bin/python" -m kosti.config.cli check --config "$CONF" \
      || die "$CONF is invalid (see above); fix it, then: sudo systemctl restart kosti" 2
  else
    run "$VENV/bin/python" -m kosti.config.cli check --config "$CONF"
  fi
  set_hostname
  install_unit
  install_mdns
  install_backup_timer
  print_access
}

do_uninstall() {
  need_root "$@"
  say "removing the kosti service, its daily backup and mDNS announcement, $PREFIX and user $SERVICE_USER"
  if [ -e "$ROOT/etc/systemd/system/kosti-backup.timer" ] || [ "$DRY_RUN" = 1 ]; then
    run systemctl disable --now kosti-backup.timer || warn "could not stop kosti-backup.timer"
  fi
  local unit
  for unit in "${BACKUP_UNITS[@]}"; do
    if [ -e "$ROOT/etc/systemd/system/$unit" ] || [ "$DRY_RUN" = 1 ]; then
      run rm -f "$ROOT/etc/systemd/system/$unit"
    fi
  done
  if [ -e "$AVAHI_DEST" ] || [ "$DRY_RUN" = 1 ]; then
    run rm -f "$AVAHI_DEST"
  fi
  if [ -e "$UNIT_DEST" ] || [ "$DRY_RUN" = 1 ]; then
    run systemctl disable --now "$UNIT_NAME" || warn "could not stop $UNIT_NAME"
    run rm -f "$UNIT_DEST"
  fi
  sd_booted || service_stop  # started directly where systemd does not run (a chroot or a container)
  if sd_booted; then run systemctl daemon-reload; fi
  run rm -rf "$PREFIX"
  if id "$SERVICE_USER" >/dev/null 2>&1 || [ "$DRY_RUN" = 1 ]; then
    run userdel "$SERVICE_USER"
  fi
  if [ "$PURGE" = 1 ]; then
    say "purging $CONF_DIR and $DATA_DIR (config, games, frames, models)"
    run rm -rf "$CONF_DIR" "$DATA_DIR"
  else
    say "kept $CONF_DIR and $DATA_DIR (config, games, frames, models); --purge removes them"
  fi
}

main() {
  parse_args "$@"
  if [ "$DRY_RUN" = 1 ]; then say "dry run: printing commands, changing nothing"; fi
  if [ "$UNINSTALL" = 1 ]; then do_uninstall "$@"
  elif [ "$UPGRADE" = 1 ]; then do_upgrade "$@"
  else do_install "$@"; fi
}

main "$@"
