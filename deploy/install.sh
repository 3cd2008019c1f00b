#!/usr/bin/env bash
# Install kosti as a service on Raspberry Pi OS (Bookworm or later) or another Debian-based system.
#
#   sudo deploy/install.sh [--from DIR|WHEEL] [--camera SPEC] [--host ADDR] [--port N] [--hostname NAME]
#                          [--backups N] [--dry-run]
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
# --hostname NAME   this machine's name, so phones open http://NAME.local:PORT/ (default: kosti when the
#                   name is still Raspberry Pi OS's default "raspberrypi", else the name is kept)
# --backups N       daily backups to keep in /var/lib/kosti/backups (default 7; 0 = no daily backup)
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
PURGE=0
FROM=$(dirname "$SCRIPT_DIR")
CAMERA=""
HOST=0.0.0.0
PORT=8000
HOSTNAME_WANTED=""
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
      --purge) PURGE=1 ;;
      --from) [ $# -ge 2 ] || die "--from needs a folder or a wheel" 2; FROM=$2; shift ;;
      --from=*) FROM=${1#--from=} ;;
      --camera) [ $# -ge 2 ] || die "--camera needs a source spec" 2; CAMERA=$2; shift ;;
      --camera=*) CAMERA=${1#--camera=} ;;
      --host) [ $# -ge 2 ] || die "--host needs an address" 2; HOST=$2; shift ;;
      --host=*) HOST=${1#--host=} ;;
      --port) [ $# -ge 2 ] || die "--port needs a number" 2; PORT=$2; shift ;;
      --port=*) PORT=${1#--port=} ;;
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

is_raspberry_pi() { grep -qs "Raspberry Pi" /proc/device-tree/model; }

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

# Prints the reader backend for a new config: ncnn on aarch64 when the active model version has an NCNN
# export and the lean ncnn backend (the ncnn package alone, no torch) loads it and reads a frame, else onnx.
choose_backend() {
  if [ "$(uname -m)" != aarch64 ]; then
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
  run env XDG_DATA_HOME="$ROOT/var/lib" "$VENV/bin/python" -m kosti.config_cli init --path "$CONF" --mode 640 "${sets[@]}"
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
  run systemctl daemon-reload
  run systemctl enable "$UNIT_NAME"
  run systemctl restart "$UNIT_NAME"
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
  run systemctl daemon-reload
  run systemctl enable --now kosti-backup.timer
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
    "$VENV/bin/python" -m kosti.config_cli check --config "$CONF" \
      || die "$CONF is invalid (see above); fix it, then: sudo systemctl restart kosti" 2
  else
    run "$VENV/bin/python" -m kosti.config_cli check --config "$CONF"
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
  run systemctl daemon-reload
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
  if [ "$UNINSTALL" = 1 ]; then do_uninstall "$@"; else do_install "$@"; fi
}

main "$@"
