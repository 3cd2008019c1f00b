#!/usr/bin/env bash
# The Raspberry Pi path on an emulated arm64 Debian (issue 44): install, first start, reading, a throw, upgrade,
# rollback and uninstall, for real, inside a Debian bookworm arm64 root run by qemu-user-static.
#
#   sudo deploy/test-arm64.sh [--root-only] [--keep] [--skip-upgrade]
#
# Builds (once, then cached) a Debian bookworm arm64 root with debootstrap under qemu-user-static, copies the
# project into a fresh copy of it and runs deploy/install.sh there with the hardware absent: no camera, no
# systemd as PID 1 (the unit is checked by `systemd-analyze verify`, and started as the installer would: the
# unit's own command line and environment, as the service user). Then, inside the root:
#   kosti --version; kosti read --json of three shared photos with the NCNN backend (compared with the same
#   read on this machine: the same dice, the same faces); kosti run --source FOLDER serving the page and
#   scoring one throw from a folder of photos; kosti config check; the upgrade path (install.sh --upgrade:
#   a game and the active model survive, a broken new version is rolled back); install.sh --uninstall.
# Every step is printed with its time; the last line is "arm64: passed (N steps, T s)" or what failed.
#
# --root-only     build the cached root and stop
# --keep          leave the run's root in place afterwards (for a look inside: sudo chroot CACHE/work bash)
# --skip-upgrade  leave out the upgrade and rollback steps (the slowest part after the root)
# --resume-after STEP  go on in the root a previous run left with --keep: the steps up to and including the one
#                 whose name starts with STEP are not run again (while iterating on a later step; a release runs
#                 the whole script)
#
# Environment:
#   KOSTI_ARM64_CACHE   the cache folder (default /var/cache/kosti-arm64): base/ (the debootstrapped root),
#                       apt/ and pip/ (downloads kept between runs), wheels/ (the aarch64 wheels of kosti's
#                       dependencies, fetched by this machine's pip), work/ (this run's root, made afresh)
#   KOSTI_SHARED        the shared data (default: ../shared beside the repository, else /work/shared)
#   KOSTI_ARM64_MIRROR  the Debian mirror (default: the first URIs of this machine's apt sources)
#   KOSTI_ARM64_NEW     the version tested and upgraded to: a git revision (e.g. HEAD) instead of the working tree as
#                       it is (default: the working tree; a revision when others edit the same tree meanwhile)
#   KOSTI_ARM64_OLD     v(N), installed first by the upgrade steps (default: HEAD)
# The root gets this machine's apt sources, its pip configuration (/etc/pip.conf, PIP_* variables, the CA
# certificates they name, and the local package folders they point at, read-only), so it reaches the same
# package registries. apt's and pip's downloads are kept in the cache (apt/, pip/): a second run downloads nothing.
#
# Needs: root, the Debian packages qemu-user-static, binfmt-support and debootstrap, binfmt_misc (mounted here
# when it is not). Everything emulated runs under `nice -n 15`. Exit codes: 0 passed, 1 a step failed,
# 2 cannot run here (not root, tools missing).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${KOSTI_ARM64_CACHE:-/var/cache/kosti-arm64}
BASE=$CACHE/base
WORK=$CACHE/work
SUITE=bookworm
# Bumped when the base root's recipe changes, so a cached root of an older recipe is rebuilt.
BASE_RECIPE="2 minbase ca-certificates systemd systemd-sysv passwd sudo"
ROOT_ONLY=0
RESUME_AFTER=""
RESUMED=0
KEEP=0
SKIP_UPGRADE=0
NICE=(nice -n 15)
STEPS=0
T0=$(date +%s)

while [ $# -gt 0 ]; do
  a=$1
  case "$a" in
    --resume-after) [ $# -ge 2 ] || { echo "--resume-after needs a step name" >&2; exit 2; }; RESUME_AFTER=$2; KEEP=1; shift ;;
    --root-only) ROOT_ONLY=1 ;;
    --keep) KEEP=1 ;;
    --skip-upgrade) SKIP_UPGRADE=1 ;;
    -h|--help) sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-arm64.sh: unknown option $a (see --help)" >&2; exit 2 ;;
  esac
  shift
done

cant() { echo "arm64: cannot run here: $1" >&2; exit 2; }
fail() { echo "arm64: FAILED at step '$CURRENT': $1 ($(( $(date +%s) - T0 )) s)"; exit 1; }

# step NAME CMD...: run one step, print its time; a failing step ends the run with its name.
CURRENT=""
step() {
  local name=$1 t rc=0
  shift
  CURRENT=$name
  STEPS=$((STEPS + 1))
  if [ -n "$RESUME_AFTER" ] && [ "$RESUMED" = 0 ] && [ "$name" != "${name#root: a fresh}" ]; then
    printf '[%s] %-44s (resumed: the root of the previous run, mounted again)\n' "$(date +%H:%M:%S)" "$name"
    mount_root "$WORK"
    return 0
  fi
  if [ -n "$RESUME_AFTER" ] && [ "$RESUMED" = 0 ]; then
    [ "$name" = "${name#"$RESUME_AFTER"}" ] || RESUMED=1
    printf '[%s] %-44s (done in the previous run)\n' "$(date +%H:%M:%S)" "$name"
    [ "$RESUMED" = 0 ] || resume_service
    return 0
  fi
  printf '[%s] %-44s ...\n' "$(date +%H:%M:%S)" "$name"
  t=$(date +%s)
  # In a subshell with errexit on, so any failing command inside a step fails it (set -e does not act inside a
  # function called as `f || ...`); steps pass values on through files under $LOGS.
  set +e
  (set -e; "$@")
  rc=$?
  set -e
  printf '[%s] %-44s %s in %d s\n' "$(date +%H:%M:%S)" "$name" "$([ $rc = 0 ] && echo ok || echo FAILED)" \
    $(( $(date +%s) - t ))
  [ $rc = 0 ] || fail "exit status $rc"
}

[ "$(id -u)" = 0 ] || cant "run as root (sudo $0)"
for tool in debootstrap chroot mount umount; do
  command -v "$tool" >/dev/null || cant "$tool is missing (apt-get install qemu-user-static binfmt-support debootstrap)"
done
SHARED=${KOSTI_SHARED:-}
if [ -z "$SHARED" ]; then
  for d in "$REPO/../shared" /work/shared; do [ -d "$d/datasets" ] && { SHARED=$(cd "$d" && pwd); break; }; done
fi
[ -n "$SHARED" ] && [ -d "$SHARED/datasets/byler-d6" ] || cant "the shared data is not found (set KOSTI_SHARED)"

# --- mounts ---------------------------------------------------------------------------------------------------

# mounted_under DIR: prints the mount points at or below DIR, deepest first.
mounted_under() {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/self/mounts | sort -r
}

umount_all() {
  local dir=$1 m
  for m in $(mounted_under "$dir"); do umount -l "$m" 2>/dev/null || true; done
}

# remove_root DIR: deletes a root only when nothing is mounted in it, and never crosses into another file system.
remove_root() {
  local dir=$1
  [ -e "$dir" ] || return 0
  umount_all "$dir"
  [ -z "$(mounted_under "$dir")" ] || { echo "still mounted under $dir: $(mounted_under "$dir")" >&2; return 1; }
  rm -rf --one-file-system "$dir"
}

# mount_root DIR: /proc, a small /dev of our own (no camera nodes: the hardware is absent),
# /dev/shm, the download caches and the local package folders named by the pip configuration (read-only).
mount_root() {
  local r=$1 d
  mount -t proc proc "$r/proc"
  # No /sys: onnxruntime's cpuinfo reads this machine's x86 topology from it under qemu-user and crashes (SIGSEGV
  # on import, seen here); without it, it warns and runs. A Pi's /sys describes its own ARM cores.
  # a fresh /run, as at boot: no /run/systemd/system, so the installer sees that systemd is not running
  mount -t tmpfs -o mode=755,size=16m run-kosti "$r/run"
  mkdir -p "$r/run/lock" "$r/run/user"
  mount -t tmpfs -o mode=755,size=8m devtmpfs-kosti "$r/dev"
  mknod -m 666 "$r/dev/null" c 1 3; mknod -m 666 "$r/dev/zero" c 1 5; mknod -m 666 "$r/dev/full" c 1 7
  mknod -m 666 "$r/dev/random" c 1 8; mknod -m 666 "$r/dev/urandom" c 1 9; mknod -m 666 "$r/dev/tty" c 5 0
  mkdir -p "$r/dev/shm" "$r/dev/pts"
  mount -t tmpfs -o mode=1777,size=256m shm "$r/dev/shm"
  ln -s /proc/self/fd "$r/dev/fd"
  mkdir -p "$CACHE/apt" "$CACHE/pip" "$CACHE/wheels" "$r/var/cache/apt/archives" "$r/root/.cache/pip" \
    "$r/var/cache/kosti-wheels"
  mount --bind "$CACHE/apt" "$r/var/cache/apt/archives"
  mount --bind "$CACHE/pip" "$r/root/.cache/pip"
  mount --bind "$CACHE/wheels" "$r/var/cache/kosti-wheels" && mount -o remount,bind,ro "$r/var/cache/kosti-wheels"
  for d in $(pip_local_dirs); do
    mkdir -p "$r$d"
    mount --bind "$d" "$r$d" && mount -o remount,bind,ro "$r$d"
  done
}

# pip_local_dirs: local folders this machine's pip configuration points at (find-links, file:// indexes).
pip_local_dirs() {
  local f
  {
    for f in /etc/pip.conf /etc/xdg/pip/pip.conf "$HOME/.pip/pip.conf" "$HOME/.config/pip/pip.conf"; do
      [ -r "$f" ] && grep -E '^[[:space:]]*(find-links|extra-index-url|index-url)' "$f" | cut -d= -f2-
    done
    env | grep -E '^PIP_(FIND_LINKS|EXTRA_INDEX_URL|INDEX_URL)=' | cut -d= -f2-
  } | tr ' ' '\n' | sed -e 's|^file://||' -e 's|/simple/*$||' | grep '^/' | sort -u | while read -r f; do
    [ -d "$f" ] && echo "$f"
  done
}

# pids of the processes running inside the run's root (the service, a kosti run left behind).
root_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$WORK" ] && echo "${p#/proc/}"
  done
  return 0
}

cleanup() {
  local p
  for p in $(root_pids); do kill "$p" 2>/dev/null || true; done
  [ -d "$WORK" ] && umount_all "$WORK"
  [ -d "$BASE" ] && umount_all "$BASE"
  if [ "$KEEP" = 0 ] && [ -d "$WORK" ]; then remove_root "$WORK" || true; fi
}
trap cleanup EXIT

# in_root CMD...: run a command inside the run's root, emulated, niced, with a clean environment plus the pip
# settings of this machine.
in_root() {
  local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
              DEBIAN_FRONTEND=noninteractive YOLO_OFFLINE=1 PIP_CACHE_DIR=/root/.cache/pip)
  local v
  while IFS= read -r v; do envs+=("$v"); done < <(env | grep -E '^(PIP_[A-Z_]+|SSL_CERT_FILE|REQUESTS_CA_BUNDLE)=' || true)
  # the wheels fetched natively (fetch_wheels) beside the index: pip still asks the registry, and an index page
  # the emulated client cannot fetch (connection reset under load, seen here) no longer fails the install
  envs+=("PIP_FIND_LINKS=${PIP_FIND_LINKS:+$PIP_FIND_LINKS }/var/cache/kosti-wheels")
  "${NICE[@]}" chroot "$WORK" /usr/bin/env -i "${envs[@]}" "$@"
}

# --- the base root (cached) -------------------------------------------------------------------------------------

mirror() {
  if [ -n "${KOSTI_ARM64_MIRROR:-}" ]; then echo "$KOSTI_ARM64_MIRROR"; return; fi
  local m
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v security | head -1)
  [ -n "$m" ] || m=$(awk '/^deb / {print $2}' /etc/apt/sources.list 2>/dev/null | head -1)
  echo "${m:-http://deb.debian.org/debian}"
}

check_host() {
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    command -v update-binfmts >/dev/null && update-binfmts --enable qemu-aarch64 || true
  fi
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] \
    || { echo "no qemu-aarch64 binfmt handler: apt-get install qemu-user-static binfmt-support" >&2; return 1; }
  grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 \
    || { echo "the qemu-aarch64 handler lacks the F flag (Debian's qemu-user-static sets it)" >&2; return 1; }
  echo "qemu: $(qemu-aarch64-static --version | head -1); debootstrap $(dpkg-query -W -f='${Version}' debootstrap)"
}

build_base() {
  if [ -f "$BASE/.kosti-base" ] && [ "$(cat "$BASE/.kosti-base")" = "$BASE_RECIPE" ]; then
    echo "cached: $BASE ($(du -sh --one-file-system "$BASE" | cut -f1))"
    return 0
  fi
  remove_root "$BASE"
  mkdir -p "$CACHE/apt"
  local include=ca-certificates,systemd,systemd-sysv,passwd,sudo
  echo "debootstrap --arch=arm64 --variant=minbase --include=$include $SUITE $(mirror)"
  "${NICE[@]}" debootstrap --arch=arm64 --variant=minbase --include="$include" \
    --cache-dir="$CACHE/apt" "$SUITE" "$BASE.tmp" "$(mirror)" > "$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log"; remove_root "$BASE.tmp"; return 1; }
  mv "$BASE.tmp" "$BASE"
  echo "$BASE_RECIPE" > "$BASE/.kosti-base"
  echo "built: $BASE ($(du -sh --one-file-system "$BASE" | cut -f1))"
}

# The run's root: a fresh copy of the base, given this machine's apt sources, pip configuration and CAs.
make_work() {
  remove_root "$WORK"
  cp -a "$BASE" "$WORK"
  rm -f "$WORK/etc/apt/sources.list"
  mkdir -p "$WORK/etc/apt/sources.list.d"
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && cp "$f" "$WORK$f"
  done
  [ -f /etc/pip.conf ] && cp /etc/pip.conf "$WORK/etc/pip.conf"
  # The CAs: this machine's own, and the bundle files the pip settings name (copied over the root's own bundle at
  # the same path), so every path pip or Python is told about holds the same certificates. (update-ca-certificates
  # inside the root would say the same, in minutes of emulated openssl.)
  if [ -d /usr/local/share/ca-certificates ]; then
    cp -r /usr/local/share/ca-certificates/. "$WORK/usr/local/share/ca-certificates/"
  fi
  for f in $(pip_cert_files); do mkdir -p "$WORK$(dirname "$f")"; cp -L "$f" "$WORK$f"; done
  cp -L /etc/resolv.conf "$WORK/etc/resolv.conf"
  cp /etc/hosts "$WORK/etc/hosts"
  mount_root "$WORK"
  # Not a Pi: the installer must take the USB-webcam default and skip the Pi-only packages by itself.
  echo "root: $(in_root sh -c '. /etc/os-release; echo $PRETTY_NAME') on $(in_root uname -m)"
}

pip_cert_files() {
  {
    env | grep -E '^(PIP_CERT|SSL_CERT_FILE|REQUESTS_CA_BUNDLE)=' | cut -d= -f2-
    for f in /etc/pip.conf "$HOME/.config/pip/pip.conf"; do
      [ -r "$f" ] && grep -E '^[[:space:]]*cert[[:space:]]*=' "$f" | cut -d= -f2- | tr -d ' '
    done
  } | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done
}

step "host: qemu-user-static, binfmt_misc" check_host
step "root: debootstrap $SUITE arm64 (cached)" build_base
if [ "$ROOT_ONLY" = 1 ]; then
  echo "arm64: root built ($STEPS steps, $(( $(date +%s) - T0 )) s)"
  exit 0
fi
step "root: a fresh copy with apt, pip and CAs" make_work

# --- the project, photos and frames -------------------------------------------------------------------------

HOSTPY=$REPO/.venv/bin/python
[ -x "$HOSTPY" ] || HOSTPY=python3
OLD_REV=${KOSTI_ARM64_OLD:-HEAD}
NEW_REV=${KOSTI_ARM64_NEW:-}
PHOTOS=()
for f in "$SHARED"/datasets/byler-d6/images/test/*; do PHOTOS+=("$f"); [ ${#PHOTOS[@]} -lt 3 ] || break; done
LOGS=$CACHE/logs
# Two free ports on this machine: the chroot shares its network.
read -r PORT PORT2 < <("$HOSTPY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

copy_project() {
  mkdir -p "$WORK/src/new" "$WORK/src/old" "$WORK/src/broken" "$WORK/srv/photos" "$LOGS"
  if [ -n "$NEW_REV" ]; then
    git -C "$REPO" archive "$NEW_REV" | tar -C "$WORK/src/new" -xf -
  else
    # the working tree as it is (tracked and untracked files, not the ignored ones: no .venv, no build output)
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
      | tar -C "$WORK/src/new" -xf -
  fi
  # v(N): the last commit (KOSTI_ARM64_OLD: another revision), installed first and upgraded to the working tree
  git -C "$REPO" archive "$OLD_REV" | tar -C "$WORK/src/old" -xf -
  # a broken release: the working tree with a dashboard that cannot start
  cp -a "$WORK/src/new/." "$WORK/src/broken/"
  echo 'raise RuntimeError("a broken release made by deploy/test-arm64.sh")' >> "$WORK/src/broken/dashboard/routes/health.py"
  cp "${PHOTOS[@]}" "$WORK/srv/photos/"
  # a folder of frames: an empty tray, a hand passing, then the first photo held still for 10 s (30 fps)
  "$HOSTPY" - "${PHOTOS[0]}" "$WORK/srv/frames" <<'PY'
import os, sys
import cv2
import numpy as np
photo = cv2.imread(sys.argv[1])
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
h, w = photo.shape[:2]
empty = np.full_like(photo, int(np.median(photo)))
frames = [empty] * 20
for i in range(8):  # a dark hand sweeping across
    f = photo.copy()
    x = int(w * i / 8)
    f[:, x:x + w // 4] = 30
    frames.append(f)
names = []
for i, f in enumerate(frames):
    names.append(os.path.join(out, f"f{i:04d}.png"))
    cv2.imwrite(names[-1], f)
still = os.path.join(out, f"f{len(frames):04d}.png")
cv2.imwrite(still, photo)
for i in range(len(frames) + 1, len(frames) + 300):
    os.link(still, os.path.join(out, f"f{i:04d}.png"))
print(f"{len(os.listdir(out))} frames of {w}x{h}")
PY
  chmod -R a+rX "$WORK/srv" "$WORK/src"
  echo "${NEW_REV:-working tree} -> /src/new, $OLD_REV -> /src/old, broken -> /src/broken, ${#PHOTOS[@]} photos, ports $PORT $PORT2"
}

# The aarch64 wheels of kosti's dependencies (pyproject's dependencies, the pi extra, the build requirements, pip),
# fetched by this machine's pip for bookworm's CPython 3.11 into the cache: natively in seconds, where the emulated
# pip spends minutes on TLS alone. This machine's own pip configuration (x86 mirrors, constraints) is left out.
fetch_wheels() {
  local reqs
  mapfile -t reqs < <("$HOSTPY" - "$WORK/src/new/pyproject.toml" <<'PY'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
print("\n".join([*d["project"]["dependencies"], *d["project"]["optional-dependencies"]["pi"],
                 *d["build-system"]["requires"], "pip"]))
PY
)
  PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS="" "$HOSTPY" -m pip download -q -d "$CACHE/wheels" --only-binary=:all: \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --python-version 3.11 --implementation cp "${reqs[@]}"
  echo "$(find "$CACHE/wheels" -name '*.whl' | wc -l) wheels in $CACHE/wheels ($(du -sh "$CACHE/wheels" | cut -f1))"
}

# logged NAME CMD...: run CMD with its output in $LOGS/NAME.log; on failure show the log's end.
logged() {
  local name=$1 rc=0
  shift
  "$@" > "$LOGS/$name.log" 2>&1 || rc=$?
  if [ $rc != 0 ]; then tail -25 "$LOGS/$name.log"; echo "(the whole log: $LOGS/$name.log)"; fi
  return $rc
}

# A resumed run: the ports of the kept config, and the service started again as the installer starts it.
resume_service() {
  PORT=$(conf_value port)
  local cmd
  read -ra cmd <<<"$(sed -n 's/^ExecStart=//p' "$WORK/etc/systemd/system/kosti.service")"
  (cd "$WORK" && as_kosti "${cmd[@]}" >> "$WORK/var/lib/kosti/kosti.log" 2>&1) &
  sleep 2
  local p
  for p in $(root_pids); do
    if tr '\0' ' ' < "/proc/$p/cmdline" | grep -q "kosti run --config"; then echo "$p" > "$WORK/run/kosti.pid"; fi
  done
  wait_for "$PORT" 900 >/dev/null
}

# --- the checks -----------------------------------------------------------------------------------------------

# http PATH [METHOD BODY [PORT]]: a request to the dashboard in the root from this machine (same network),
# with the PIN of /etc/kosti/kosti.toml; prints the body, fails on an HTTP status >= 400 other than 503.
http() {
  "$HOSTPY" - "$1" "${2:-GET}" "${3:-}" "${4:-$PORT}" "$(conf_value pin)" <<'PY'
import json, sys, urllib.error, urllib.request
path, method, body, port, pin = sys.argv[1:6]
req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=body.encode() or None,
                             headers={"X-Kosti-Pin": pin, "Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.read().decode())
    sys.exit(0 if e.code == 503 else 1)
PY
}

conf_value() {
  "$HOSTPY" - "$WORK/etc/kosti/kosti.toml" "$1" <<'PY' 2>/dev/null || true
import sys, tomllib
print(tomllib.load(open(sys.argv[1], "rb")).get("server", {}).get(sys.argv[2], ""))
PY
}

# wait_for PORT SECONDS: until /healthz answers (emulated start-up takes a while).
wait_for() {
  local i
  for i in $(seq 1 "$2"); do
    if http /healthz GET "" "$1" >/dev/null 2>&1; then echo "answers after ~$i s"; return 0; fi
    sleep 1
  done
  echo "no answer on port $1 within $2 s"; return 1
}

# The camera: none. Off a Pi the installer takes camera 0 (a USB webcam), and the root has no /dev/video0: the
# service (kosti run --wait-for-camera) runs on, serving the page that says "no camera is connected: plug it in".
install_new() {
  logged install in_root bash /src/new/deploy/install.sh --port "$PORT"
  grep -E '^(==>|warning|kosti is installed|  Dashboard|  PIN)' "$LOGS/install.log" | cut -c1-160
}

# systemd-analyze verify of the installed unit inside the root. Its Documentation=man: link is checked with `man`,
# which a minimal root lacks (Raspberry Pi OS has it), so that one complaint is left out when man is absent.
verify_unit() {
  local out complaints
  out=$(in_root systemd-analyze verify /etc/systemd/system/kosti.service 2>&1 || true)
  complaints=$(echo "$out" | grep kosti.service || true)
  if ! in_root sh -c 'command -v man' >/dev/null; then
    complaints=$(echo "$complaints" | grep -v "Command 'man " || true)
  fi
  [ -z "$complaints" ] || { echo "$complaints"; return 1; }
  echo "systemd-analyze verify: no complaint${out:+ (said: $(echo "$out" | head -1 | cut -c1-100))}"
}

check_service_process() {
  local pid uid
  pid=$(cat "$WORK/run/kosti.pid")
  uid=$(awk -F: '$1 == "kosti" {print $3}' "$WORK/etc/passwd")
  [ -n "$uid" ] || { echo "no user kosti"; return 1; }
  grep -q "^Uid:[[:space:]]*${uid}[[:space:]]" "/proc/$pid/status" || { echo "pid $pid is not user kosti ($uid)"; return 1; }
  local cmd env want
  cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline")
  env=$(tr '\0' '\n' < "/proc/$pid/environ")
  want=$(sed -n 's/^ExecStart=//p' "$WORK/etc/systemd/system/kosti.service")
  case "$cmd" in *"${want#/opt/kosti/venv/bin/}"*) ;; *) echo "command line '$cmd', the unit says '$want'"; return 1 ;; esac
  for v in $(sed -n 's/^Environment=//p' "$WORK/etc/systemd/system/kosti.service"); do
    echo "$env" | grep -qx "$v" || { echo "environment lacks $v"; return 1; }
  done
  grep -q "^Groups:.*[[:space:]]$(awk -F: '$1 == "video" {print $3}' "$WORK/etc/group")\b" "/proc/$pid/status" \
    || { echo "not in group video"; return 1; }
  echo "pid $pid: user kosti (uid $uid, group video), '$cmd', the unit's environment"
}

first_start() {
  wait_for "$PORT" 900 || { tail -20 "$WORK/var/lib/kosti/kosti.log"; return 1; }
  http /healthz | "$HOSTPY" -c '
import json, sys
h = json.load(sys.stdin)
assert h["database"]["ok"] and h["disk"]["ok"], h
print("healthz:", h["status"], "- camera:", h["camera"]["state"], h["camera"].get("message", "")[:90])'
  http / | grep -q "<html" && echo "the page is served"
  http /api/state | "$HOSTPY" -c '
import json, sys
src = json.load(sys.stdin)["source"]
assert "no camera is connected" in (src.get("why") or ""), src
assert "камера не подключена" in (src.get("why_ru") or ""), src
print("the page says:", src["why"], "/", src["why_ru"])'
  grep -q "waiting for it" "$WORK/var/lib/kosti/kosti.log" && echo "the log says: $(grep -m1 "waiting for it" "$WORK/var/lib/kosti/kosti.log" | cut -c1-150)"
}

version() {
  local v h
  v=$(in_root /opt/kosti/venv/bin/kosti --version)
  h=$("$REPO/.venv/bin/kosti" --version 2>/dev/null || echo "?")
  echo "arm64: $v; this machine: $h"
  [ "$v" = "$h" ] || [ "$h" = "?" ]
}

# as_kosti CMD...: inside the root as the service user, with the unit's environment.
as_kosti() {
  local envs
  read -ra envs <<<"$(sed -n 's/^Environment=//p' "$WORK/etc/systemd/system/kosti.service" | tr '\n' ' ')"
  in_root setpriv --reuid=kosti --regid=kosti --init-groups env -i "${envs[@]}" "$@"
}

# The three photos read inside the root and on this machine with each backend: the same dice, the same faces, boxes
# within 0.02 IoU. NCNN is the brief's check; ONNX Runtime (the shipped INT8 files, the Pi's default reader) runs
# other kernels on ARM, so it is compared too. Times are emulated: relative only.
# The service's command with a config that retrying cannot mend: exit 2 and one line naming the file (systemd does
# not restart it: RestartPreventExitStatus=2), while a camera that is only absent keeps the service up (above).
bad_config() {
  local rc=0 cmd
  printf '[server]\nport = "eighty"\n' > "$WORK/etc/kosti/bad.toml"
  chmod 644 "$WORK/etc/kosti/bad.toml"
  read -ra cmd <<<"$(sed -n 's/^ExecStart=//p' "$WORK/etc/systemd/system/kosti.service" | sed 's|/etc/kosti/kosti.toml|/etc/kosti/bad.toml|')"
  (cd "$WORK" && as_kosti "${cmd[@]}" --port "$PORT2" --db /var/lib/kosti/bad-config.db) > "$LOGS/bad-config.log" 2>&1 || rc=$?
  rm -f "$WORK/etc/kosti/bad.toml"
  echo "exit $rc: $(tail -1 "$LOGS/bad-config.log")"
  [ "$rc" = 2 ] && [ "$(grep -c . "$LOGS/bad-config.log")" = 1 ] && grep -q "bad.toml" "$LOGS/bad-config.log"
}

read_photos() {
  local names=() f b t
  for f in "${PHOTOS[@]}"; do names+=("/srv/photos/$(basename "$f")"); done
  for b in ncnn onnx; do
    t=$(date +%s%N)
    (cd "$WORK" && as_kosti /opt/kosti/venv/bin/kosti read --json --backend "$b" "${names[@]}") > "$LOGS/read-arm64-$b.json"
    echo "$b: ${#names[@]} photos read in $(( ($(date +%s%N) - t) / 1000000 )) ms under the emulator (one process)"
    t=$(date +%s%N)
    XDG_DATA_HOME=$(mktemp -d) "${NICE[@]}" "$REPO/.venv/bin/kosti" read --json --backend "$b" "${PHOTOS[@]}" > "$LOGS/read-x86-$b.json"
    echo "$b: ${#names[@]} photos read in $(( ($(date +%s%N) - t) / 1000000 )) ms on this machine"
    compare_reads "$LOGS/read-arm64-$b.json" "$LOGS/read-x86-$b.json" || return 1
  done
}

compare_reads() {
  "$HOSTPY" - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def images(doc):
    items = doc["images"] if isinstance(doc, dict) and "images" in doc else doc
    return items if isinstance(items, list) else [items]
def iou(p, q):
    x1, y1, x2, y2 = max(p[0], q[0]), max(p[1], q[1]), min(p[2], q[2]), min(p[3], q[3])
    inter = max(0, x2 - x1) * max(0, y2 - y1)
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
    return inter / (area(p) + area(q) - inter)
worst, n = 1.0, 0
for ia, ib in zip(images(a), images(b), strict=True):
    da, db = ia["dice"], ib["dice"]
    fa, fb = sorted(d.get("value") or 0 for d in da), sorted(d.get("value") or 0 for d in db)
    assert fa == fb, (ia.get("image"), fa, fb)
    for d in da:
        best = max(iou(d["box"], e["box"]) for e in db if e.get("value") == d.get("value"))
        worst = min(worst, best)
    n += len(da)
    print(f"  {str(ia.get('image', '?')).split('/')[-1]}: {fa}")
assert worst > 0.9, worst  # NCNN on ARM computes in float16 (x86: float32): boxes move by about a pixel
ms = lambda doc: sorted(i.get("ms", 0) for i in images(doc))[len(images(doc)) // 2]
print(f"  the same {n} dice and faces on arm64 and x86; boxes IoU >= {worst:.4f}; "
      f"median read {ms(a):.0f} ms emulated vs {ms(b):.0f} ms here")
PY
}

# kosti run on the folder of frames with the installed configuration's reader (ONNX Runtime, the Pi's default; the lean
# runtime: no torch, no Ultralytics in the venv), as the service user; its peak memory is read from /proc (under
# qemu-user that includes the emulator's own). Not NCNN: qemu-user emulates its float16 NEON code slowly (three photos
# took 16 min against ONNX's 2.5 min on the loaded 2-core machine), so a throw did not come within the step's 15 min;
# NCNN's reading in the root is the step before (the same dice as on this machine).
folder_run() {
  in_root /opt/kosti/venv/bin/python -c 'import importlib.util as u, sys; bad = [m for m in ("torch", "ultralytics") if u.find_spec(m)]; sys.exit(f"in the venv: {bad}" if bad else 0)' \
    || return 1
  echo "the installed venv has neither torch nor Ultralytics"
  (cd "$WORK" && as_kosti /opt/kosti/venv/bin/kosti run --source /srv/frames \
     --port "$PORT2" --host 127.0.0.1 --db /var/lib/kosti/folder-test.db --players Ann,Boris > "$LOGS/folder-run.log" 2>&1) &
  FOLDER_PID=$!
  local rc=0
  wait_for "$PORT2" 900 || rc=1
  [ $rc = 0 ] && { http / GET "" "$PORT2" | grep -q "<html" && echo "the page is served"; } || rc=1
  if [ $rc = 0 ]; then
    rc=1
    local i code
    for i in $(seq 1 180); do
      code=1
      if http /api/games GET "" "$PORT2" > "$LOGS/folder-games.json" 2>/dev/null; then
        code=0
        "$HOSTPY" - "$LOGS/folder-games.json" "$LOGS/read-x86-onnx.json" "$PORT2" "$(conf_value pin)" <<'PY' || code=$?
import json, sys, urllib.request
games = json.load(open(sys.argv[1]))
games = games.get("games", games) if isinstance(games, dict) else games
if not games:
    sys.exit(1)
gid = games[0]["id"]
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[3]}/api/games/{gid}/history", headers={"X-Kosti-Pin": sys.argv[4]})
hist = json.load(urllib.request.urlopen(req, timeout=30))
throws = hist.get("throws", [])
if not throws:
    sys.exit(1)
x86 = json.load(open(sys.argv[2]))
x86 = x86["images"] if isinstance(x86, dict) and "images" in x86 else x86
want = sorted(d["value"] for d in x86[0]["dice"])
got = throws[0]
faces = sorted(got.get("faces") or [])
print(f"throw 1 of game {gid}: faces {faces} (x86 read of the photo: {want}); status {got.get('status')}")
sys.exit(0 if faces == want else 2)
PY
      fi
      if [ "$code" = 0 ]; then rc=0; break; fi
      if [ "$code" = 2 ]; then break; fi
      kill -0 "$FOLDER_PID" 2>/dev/null || { echo "kosti run ended"; break; }
      sleep 5
    done
  fi
  local p
  for p in $(root_pids_on_port "$PORT2"); do
    echo "kosti run (ONNX Runtime) peak RSS: $(awk '/VmHWM/ {printf "%d MB", $2 / 1024}' "/proc/$p/status") (qemu-user's own memory included)"
    kill "$p" 2>/dev/null || true
  done
  kill "$FOLDER_PID" 2>/dev/null || true
  [ $rc = 0 ] || tail -15 "$LOGS/folder-run.log"
  return $rc
}

# root_pids_on_port PORT: the pids of the kosti run in the root started with --port PORT (found in /proc).
root_pids_on_port() {
  local p
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$WORK" ] && tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "kosti run .*--port $1"; then
      echo "${p#/proc/}"
    fi
  done
}

config_check() {
  in_root /opt/kosti/venv/bin/kosti config check --config /etc/kosti/kosti.toml | tail -3
}

uninstall() {
  logged uninstall in_root bash /src/new/deploy/install.sh --uninstall
  [ ! -e "$WORK/opt/kosti" ] || { echo "/opt/kosti is still there"; return 1; }
  ! grep -q '^kosti:' "$WORK/etc/passwd" || { echo "user kosti is still there"; return 1; }
  [ -f "$WORK/etc/kosti/kosti.toml" ] && [ -d "$WORK/var/lib/kosti" ] || { echo "config or data removed"; return 1; }
  [ ! -e "$WORK/run/kosti.pid" ] || { echo "the service still runs"; return 1; }
  echo "removed /opt/kosti and user kosti; kept /etc/kosti and /var/lib/kosti"
}

# --- upgrade: v(N) with a game and a taught model, then the working tree, then a broken release -------------

install_old() {
  logged install-old in_root bash /src/new/deploy/install.sh --from /src/old --port "$PORT"
  wait_for "$PORT" 900 || { tail -20 "$WORK/var/lib/kosti/kosti.log"; return 1; }
  in_root /opt/kosti/venv/bin/kosti --version
}

# A game with a scored, banked throw, and a taught model version made active (the shipped files under a new
# name: what `kosti train` adds), so the upgrade has something of the table's own to keep.
play_and_teach() {
  local gid models
  http /api/games POST '{"players": ["Ann", "Boris"], "replace": true}' > "$LOGS/game.json"
  gid=$("$HOSTPY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d.get("game") or d).get("id") or d["game_id"])' "$LOGS/game.json" 2>/dev/null) \
    || gid=$(http /api/games | "$HOSTPY" -c 'import json,sys; d=json.load(sys.stdin); print((d.get("games", d))[0]["id"])')
  http "/api/games/$gid/enter" POST '{"faces": [1, 1, 1, 5, 2]}' >/dev/null
  http "/api/games/$gid/bank" POST '' >/dev/null
  http "/api/games/$gid/enter" POST '{"faces": [5, 2, 3, 4, 6]}' >/dev/null
  http /api/games > "$LOGS/games-before.json"
  models=$(in_root /opt/kosti/venv/bin/python -c 'import os, kosti.models; print(os.path.dirname(kosti.models.__file__))')
  as_kosti /opt/kosti/venv/bin/kosti models add --name taught-arm64 --activate --force \
    --det "$models/dice_det.onnx" --cls "$models/dice_cls.onnx" \
    --det-ncnn "$models/dice_det_ncnn_model" --cls-ncnn "$models/dice_cls_ncnn_model" | tail -2
  echo "$gid" > "$LOGS/game-id"
  "$HOSTPY" - "$LOGS/games-before.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = (d.get("games", d))[0]
print(f"game {g['id']}: {json.dumps(g.get('scores') or g.get('players'))[:120]}")
PY
}

# same_game: the game of play_and_teach is still there as it was, and the taught model is active.
same_game() {
  http /api/games > "$LOGS/games-after.json"
  "$HOSTPY" - "$LOGS/games-before.json" "$LOGS/games-after.json" "$(cat "$LOGS/game-id")" <<'PY'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
pick = lambda d: next(g for g in d.get("games", d) if str(g["id"]) == sys.argv[3])
b, a = pick(before), pick(after)
keys = [k for k in ("scores", "players", "turns", "status", "rules") if k in b]
assert all(a.get(k) == b.get(k) for k in keys), {k: (b.get(k), a.get(k)) for k in keys}
print(f"game {a['id']} kept ({', '.join(keys)} unchanged)")
PY
  local active
  active=$("$HOSTPY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$WORK/var/lib/kosti/models/active.json")
  [ "$active" = taught-arm64 ] || { echo "active model: $active"; return 1; }
  echo "active model: $active"
}

upgrade_to_new() {
  local before
  before=$(md5sum < "$WORK/etc/kosti/kosti.toml")
  logged upgrade in_root env KOSTI_UPGRADE_WAIT_S=900 bash /src/new/deploy/install.sh --upgrade /src/new
  grep -E '^(==>|warning)' "$LOGS/upgrade.log" | cut -c1-160
  [ "$(md5sum < "$WORK/etc/kosti/kosti.toml")" = "$before" ] || { echo "the config changed"; return 1; }
  echo "the config is unchanged"
  same_game
  in_root /opt/kosti/venv/bin/python - <<'PY'
import sqlite3
from kosti.dashboard.migrations import MIGRATIONS, latest_version
v = sqlite3.connect("/var/lib/kosti/kosti.db").execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
assert int(v) == latest_version(MIGRATIONS), v
print(f"database schema {v}: the working tree's latest")
PY
}

upgrade_broken() {
  local rc=0
  in_root env KOSTI_UPGRADE_WAIT_S=900 bash /src/new/deploy/install.sh --upgrade /src/broken > "$LOGS/upgrade-broken.log" 2>&1 || rc=$?
  grep -E '^(==>|warning|install.sh)' "$LOGS/upgrade-broken.log" | cut -c1-180
  [ $rc = 1 ] || { echo "exit status $rc, expected 1"; return 1; }
  grep -q "rolled back" "$LOGS/upgrade-broken.log" || { echo "no rollback reported"; return 1; }
  ! grep -rq "a broken release" "$WORK"/opt/kosti/venv/lib/python3*/site-packages/kosti/dashboard/routes/health.py \
    || { echo "the broken version is still installed"; return 1; }
  [ ! -e "$WORK/opt/kosti/venv.previous" ] || { echo "venv.previous left behind"; return 1; }
  wait_for "$PORT" 900
  same_game
}

purge() {
  logged purge in_root bash /src/new/deploy/install.sh --uninstall --purge
  [ ! -e "$WORK/etc/kosti" ] && [ ! -e "$WORK/var/lib/kosti" ] && [ ! -e "$WORK/opt/kosti" ] \
    || { echo "something is left"; return 1; }
  echo "removed everything"
}

# --- the run ----------------------------------------------------------------------------------------------------

step "project, photos and frames copied in" copy_project
step "aarch64 wheels fetched here (cached)" fetch_wheels
step "install.sh (no camera, no systemd)" install_new
step "unit: systemd-analyze verify" verify_unit
step "service: user, command line, environment" check_service_process
step "service: first start, /healthz, the page" first_start
step "kosti --version" version
step "a bad config: exit 2, one line" bad_config
step "kosti read --json, ncnn and onnx, 3 photos" read_photos
step "kosti run --source FOLDER: page and a throw" folder_run
step "kosti config check" config_check
step "install.sh --uninstall" uninstall
if [ "$SKIP_UPGRADE" = 0 ]; then
  step "install v(N) ($OLD_REV)" install_old
  step "v(N): a game and a taught model" play_and_teach
  step "install.sh --upgrade to the working tree" upgrade_to_new
  step "install.sh --upgrade to a broken release" upgrade_broken
  step "install.sh --uninstall --purge" purge
fi
echo "arm64: passed ($STEPS steps, $(( $(date +%s) - T0 )) s)"
