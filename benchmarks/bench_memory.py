"""Peak memory (RSS) of ``kosti run`` reading one throw from a folder of frames (issue 44: the Pi's lean runtime,
no torch and no Ultralytics, must stay at or below 300 MB).

    python benchmarks/bench_memory.py [--kosti PATH] [--backend onnx|ncnn] [--runs 3] [--photo IMAGE] [--steps]

Each run starts ``kosti run --source FOLDER`` (``--kosti``: the ``kosti`` program of the venv to measure, e.g. the
lean venv the Pi installer makes; default: this interpreter's ``python -m kosti``) on a folder of frames made from
one photo (an empty tray, a hand passing, the photo held still for 10 s at 30 fps, as deploy/test-arm64.sh does),
with a game of two players, waits until the page answers and the throw is in the game's history, then until the
folder has played to its end (the dice lie still for 10 s: a long rest holds the most frames), reads the
process's peak resident set (``VmHWM`` in /proc/PID/status, Linux) and stops it. It prints each run (the peak at
the first throw and over the whole folder) and the median in MB (2**20 bytes).

``--steps`` instead prints the resident set after each stage of a start-up, in one process of that venv: the
interpreter, numpy + OpenCV, the inference runtime, the web stack, the dice reader's models loaded, one photo
read: where the memory goes.

Times are not measured here; memory does not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SHARED = Path(os.environ.get("KOSTI_SHARED", Path(__file__).resolve().parents[2] / "shared"))
if not (SHARED / "datasets").is_dir():
    SHARED = Path("/work/shared")
DEFAULT_PHOTO = next(iter(sorted((SHARED / "datasets" / "byler-d6" / "images" / "test").glob("*"))), None)

STEPS = r'''
import os, sys, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            yield line.split()[1]
def say(what):
    now, peak = (int(v) / 1024 for v in rss())
    print(f"{what:<44} RSS {now:6.0f} MB   peak {peak:6.0f} MB", flush=True)
say("python")
import numpy, cv2
say("+ numpy, OpenCV")
import onnxruntime
say("+ onnxruntime")
try:
    import ncnn
    say("+ ncnn")
except ImportError:
    pass
import fastapi, uvicorn, pydantic
say("+ fastapi, uvicorn, pydantic")
import kosti.dashboard.app
say("+ kosti.dashboard.app")
from kosti.vision.reader import DiceReader
r = DiceReader(backend=sys.argv[1])
say(f"+ DiceReader(backend={sys.argv[1]!r}) loaded")
img = cv2.imread(sys.argv[2])
r.read(img)
say("+ one photo read")
for _ in range(5):
    r.read(img)
say("+ five more reads")
'''


def frames_folder(photo: Path, out: Path, size: tuple[int, int] | None = (1280, 720)) -> int:
    """Write the frames of one throw into ``out`` (hard links for the still part); returns how many. ``size``
    ``(width, height)``: the photo is centred on a grey frame of the camera's size (kosti's default 1280x720:
    a live table's frames, and the buffers that hold them, have that size); ``None`` keeps the photo's size."""
    import cv2
    import numpy as np

    img = cv2.imread(str(photo))
    if img is None:
        raise SystemExit(f"bench_memory: cannot read the photo {photo}")
    if size is not None:
        w, h = size
        scale = min(1.0, w / img.shape[1], h / img.shape[0])
        img = cv2.resize(img, (int(img.shape[1] * scale), int(img.shape[0] * scale))) if scale < 1 else img
        canvas = np.full((h, w, 3), int(np.median(img)), np.uint8)
        y, x = (h - img.shape[0]) // 2, (w - img.shape[1]) // 2
        canvas[y:y + img.shape[0], x:x + img.shape[1]] = img
        img = canvas
    out.mkdir(parents=True, exist_ok=True)
    h, w = img.shape[:2]
    frames = [np.full_like(img, int(np.median(img)))] * 20
    for i in range(8):  # a dark hand sweeping across
        f = img.copy()
        x = int(w * i / 8)
        f[:, x:x + w // 4] = 30
        frames.append(f)
    for i, f in enumerate(frames):
        cv2.imwrite(str(out / f"f{i:04d}.png"), f)
    still = out / f"f{len(frames):04d}.png"
    cv2.imwrite(str(still), img)
    for i in range(len(frames) + 1, len(frames) + 300):
        os.link(still, out / f"f{i:04d}.png")
    return len(frames) + 300


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return json.loads(r.read().decode())


def _peak_mb(pid: int) -> tuple[float, float]:
    """``(VmHWM, VmRSS)`` of ``pid`` in MB."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmHWM", "VmRSS")):
            vals[line.split(":")[0]] = int(line.split()[1]) / 1024
    return vals["VmHWM"], vals["VmRSS"]


def one_run(cmd: list[str], frames: Path, backend: str, timeout_s: float,
            hold_s: float) -> tuple[float, float, list[int]]:
    """One ``kosti run`` until its first throw is stored and ``hold_s`` seconds more (the rest of the folder):
    ``(peak MB at the throw, peak MB at the end, faces)``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_DATA_HOME=f"{home}/data",
                   KOSTI_READER__BACKEND=backend, YOLO_OFFLINE="1")
        log = Path(home) / "kosti.log"  # a file, not a pipe: a full pipe would stall the server
        with log.open("w") as err:
            proc = subprocess.Popen([*cmd, "run", "--source", str(frames), "--port", str(port), "--host", "127.0.0.1",
                                     "--players", "Ann,Boris", "--db", f"{home}/k.db"],
                                    env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
        try:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise SystemExit(f"bench_memory: kosti run ended (exit {proc.returncode}): {log.read_text()[-1500:]}")
                try:
                    games = _get(port, "/api/games")
                    games = games.get("games", games) if isinstance(games, dict) else games
                    if games:
                        hist = _get(port, f"/api/games/{games[0]['id']}/history")
                        throws = hist.get("throws", []) if isinstance(hist, dict) else []
                        if throws:
                            at_throw, _ = _peak_mb(proc.pid)
                            end = time.monotonic() + hold_s
                            while time.monotonic() < end and proc.poll() is None:
                                time.sleep(0.5)
                            return at_throw, _peak_mb(proc.pid)[0], sorted(throws[0].get("faces") or [])
                except (OSError, ValueError, urllib.error.URLError):
                    pass
                time.sleep(0.5)
            raise SystemExit(f"bench_memory: no throw read within {timeout_s} s")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring); returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kosti", default=None, help="the kosti program of the venv to measure (default: python -m kosti)")
    ap.add_argument("--backend", default="onnx", choices=("onnx", "ncnn"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--photo", type=Path, default=DEFAULT_PHOTO)
    ap.add_argument("--size", default="1280x720",
                    help="frame size WxH the photo is centred in (the camera's; 'photo' = the photo's own size)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for a run's throw")
    ap.add_argument("--steps", action="store_true", help="the resident set after each start-up stage instead")
    args = ap.parse_args(argv)
    if args.photo is None or not Path(args.photo).is_file():
        ap.error("no photo: give --photo IMAGE (or set KOSTI_SHARED)")
    if args.kosti:
        kosti = Path(args.kosti)
        python = kosti.parent / "python"
        cmd = [str(kosti)]
    else:
        python, cmd = Path(sys.executable), [sys.executable, "-m", "kosti"]
    if args.steps:
        env = dict(os.environ, YOLO_OFFLINE="1")
        return subprocess.run([str(python), "-c", STEPS, args.backend, str(args.photo)], env=env, check=False).returncode
    with tempfile.TemporaryDirectory() as tmp:
        size = None if args.size == "photo" else tuple(int(v) for v in args.size.lower().split("x"))
        n = frames_folder(Path(args.photo), Path(tmp) / "frames", size)  # type: ignore[arg-type]
        print(f"kosti run --source FOLDER ({n} frames {args.size} of {Path(args.photo).name}), backend {args.backend}, "
              f"{shutil.which(cmd[0]) or cmd[0]}")
        peaks = []
        for i in range(args.runs):
            at_throw, peak, faces = one_run(cmd, Path(tmp) / "frames", args.backend, args.timeout, n / 30 + 2)
            peaks.append(peak)
            print(f"  run {i + 1}: peak RSS {peak:.0f} MB ({at_throw:.0f} MB at the first throw), throw read: {faces}",
                  flush=True)
    print(f"peak RSS median {statistics.median(peaks):.0f} MB over {len(peaks)} runs "
          f"(min {min(peaks):.0f}, max {max(peaks):.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
