"""The Raspberry Pi's lean path, checked in a virtual environment without torch or Ultralytics.

Run by ``scripts/lean_venv_check.sh`` (which makes that environment: the base dependencies, ``ncnn`` and
kosti with ``--no-deps``). Asserts torch and Ultralytics cannot even be found, then compares
``kosti read --backend ncnn --json`` with ``--backend onnx`` on every byler-d6 test photo (same count,
same faces, box IoU), runs ``kosti run`` on the virtual table with ``reader.backend = "ncnn"`` for 20 s
(stopped with SIGINT), and prints one JSON line with the peak RSS of each (``/usr/bin/time -v``) and the
median per-image time. Since reader v1.1 the ONNX files are INT8 and the NCNN ones float16 (the same
weights, 8-bit rounding apart): measured on these 50 photos, 2 photos' counts and 4 of 278 faces differ
(dice near the thresholds), the smallest box IoU 0.82. Exits 1 (the reasons on stderr) when more than
:data:`MAX_COUNT_MISMATCHES` photos' counts or :data:`MAX_FACE_MISMATCH_SHARE` of the dice's faces differ,
the smallest box IoU is under :data:`MIN_IOU`, or an NCNN run's peak RSS exceeds 300 MB (the Pi's budget).
Usage: ``python benchmarks/lean_read_check.py PATH/TO/kosti``.
"""
import glob
import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: Tolerances for INT8 ONNX against float16 NCNN (module docstring: measured 2, 4/278 and 0.82).
MIN_IOU = 0.75
MAX_COUNT_MISMATCHES = 3
MAX_FACE_MISMATCH_SHARE = 0.03
MAX_RSS_MB = 300
RUN_SECONDS = 20


def _peak_rss_mb(stderr: str) -> float:
    return int([ln for ln in stderr.splitlines() if "Maximum resident" in ln][0].split()[-1]) / 1024


def run(kosti, backend, files):
    p = subprocess.run(["/usr/bin/time", "-v", kosti, "read", "--backend", backend, "--json", *files],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout), _peak_rss_mb(p.stderr)


def run_dashboard(kosti, seconds=RUN_SECONDS):
    """Peak RSS (MB) of ``kosti run`` on the virtual table with the NCNN reader, stopped by SIGINT after
    ``seconds``; raises when it exits other than by that signal's clean shutdown."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "kosti.toml"
        cfg.write_text(f'[source]\nspec = "virtual"\n\n[reader]\nbackend = "ncnn"\n\n'
                       f'[server]\nport = {port}\n\n[storage]\ndb = "{tmp}/kosti.db"\nframes_dir = "{tmp}/frames"\n')
        p = subprocess.run(["timeout", "-s", "INT", str(seconds), "/usr/bin/time", "-v", kosti, "run",
                            "--config", str(cfg), "--reader", "models", "--players", "Ann,Boris"],
                           capture_output=True, text=True)
    # timeout exits 124 when it had to send the signal; kosti itself exits 0 (or 130) on SIGINT
    assert p.returncode in (0, 124, 130) and "Maximum resident" in p.stderr, p.stderr[-2000:]
    return _peak_rss_mb(p.stderr)


def iou(a, b):
    lt = np.maximum(a[:2], b[:2])
    rb = np.minimum(a[2:], b[2:])
    i = np.prod(np.clip(rb - lt, 0, None))
    return i / (np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - i)


def failures(report):
    """The reasons ``report`` (the printed JSON) fails the lean-path check; empty when it passes."""
    out = []
    if report["count_mismatches"] > MAX_COUNT_MISMATCHES:
        out.append(f"{report['count_mismatches']} image(s) with another number of dice in ncnn than in onnx "
                   f"(> {MAX_COUNT_MISMATCHES})")
    if report["face_mismatches"] > MAX_FACE_MISMATCH_SHARE * max(report["dice"], 1):
        out.append(f"{report['face_mismatches']} of {report['dice']} dice read another face in ncnn than in onnx "
                   f"(> {MAX_FACE_MISMATCH_SHARE:.0%})")
    if report["min_iou"] is None or report["min_iou"] < MIN_IOU:
        out.append(f"smallest box IoU {report['min_iou']} < {MIN_IOU}")
    for name, mb in report["peak_rss_mb"].items():
        if name.startswith("ncnn") and mb > MAX_RSS_MB:
            out.append(f"peak RSS of {name} {mb} MB > {MAX_RSS_MB} MB")
    return out


def main(kosti):
    assert importlib.util.find_spec("torch") is None and importlib.util.find_spec("ultralytics") is None
    photos = sorted(glob.glob(str(Path(__file__).resolve().parents[2] / "shared/datasets/byler-d6/images/test/*.jpg")))
    assert photos, "byler-d6 test photos not found beside the repository"
    one_n, rss_one_n = run(kosti, "ncnn", photos[:1])
    one_o, rss_one_o = run(kosti, "onnx", photos[:1])
    all_n, rss_all_n = run(kosti, "ncnn", photos)
    all_o, rss_all_o = run(kosti, "onnx", photos)
    rss_run = run_dashboard(kosti)
    counts, faces, ious, dice = 0, 0, [], 0
    for a, b in zip(all_o, all_n):
        if len(a["dice"]) != len(b["dice"]):
            counts += 1
            continue
        used = set()
        for d in a["dice"]:
            best = max(((iou(np.array(d["box"]), np.array(e["box"])), j) for j, e in enumerate(b["dice"]) if j not in used))
            used.add(best[1])
            ious.append(best[0])
            dice += 1
            other = b["dice"][best[1]]  # a face, and whether it was read or only the most likely one
            faces += (other["value"], other.get("uncertain", False)) != (d["value"], d.get("uncertain", False))
    report = {"images": len(photos), "dice": dice, "count_mismatches": counts, "face_mismatches": int(faces),
              "min_iou": round(float(min(ious)), 4) if ious else None,
              "peak_rss_mb": {"ncnn_1_image": round(rss_one_n), "onnx_1_image": round(rss_one_o),
                              f"ncnn_{len(photos)}_images": round(rss_all_n), f"onnx_{len(photos)}_images": round(rss_all_o),
                              f"ncnn_kosti_run_{RUN_SECONDS}s": round(rss_run)},
              "median_ms": {"ncnn": float(np.median([r["ms"] for r in all_n])), "onnx": float(np.median([r["ms"] for r in all_o]))}}
    print(json.dumps(report))
    bad_reasons = failures(report)
    for reason in bad_reasons:
        print(f"lean_read_check: FAIL: {reason}", file=sys.stderr)
    return 1 if bad_reasons else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
