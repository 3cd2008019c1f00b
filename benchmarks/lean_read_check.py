"""The Raspberry Pi's lean path, checked in a virtual environment without torch or Ultralytics.

Run by ``scripts/lean_venv_check.sh`` (which makes that environment: the base dependencies, ``ncnn`` and
kosti with ``--no-deps``). Asserts torch and Ultralytics cannot even be found, then compares
``kosti read --backend ncnn --json`` with ``--backend onnx`` on every byler-d6 test photo (same count,
same faces, box IoU) and prints one JSON line with the peak RSS of each (``/usr/bin/time -v``) and the
median per-image time. Usage: ``python benchmarks/lean_read_check.py PATH/TO/kosti``.
"""
import glob
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
assert importlib.util.find_spec("torch") is None and importlib.util.find_spec("ultralytics") is None
kosti = sys.argv[1]
photos = sorted(glob.glob(str(Path(__file__).resolve().parents[2] / "shared/datasets/byler-d6/images/test/*.jpg")))
assert photos, "byler-d6 test photos not found beside the repository"
def run(backend, files):
    p = subprocess.run(["/usr/bin/time", "-v", kosti, "read", "--backend", backend, "--json", *files],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    rss = [l for l in p.stderr.splitlines() if "Maximum resident" in l][0].split()[-1]
    return json.loads(p.stdout), int(rss) / 1024
def iou(a, b):
    lt = np.maximum(a[:2], b[:2]); rb = np.minimum(a[2:], b[2:]); i = np.prod(np.clip(rb - lt, 0, None))
    return i / (np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - i)
one_n, rss_one_n = run("ncnn", photos[:1]); one_o, rss_one_o = run("onnx", photos[:1])
all_n, rss_all_n = run("ncnn", photos); all_o, rss_all_o = run("onnx", photos)
bad, ious, dice = 0, [], 0
for a, b in zip(all_o, all_n):
    if len(a["dice"]) != len(b["dice"]):
        bad += 1; continue
    used = set()
    for d in a["dice"]:
        best = max(((iou(np.array(d["box"]), np.array(e["box"])), j) for j, e in enumerate(b["dice"]) if j not in used))
        used.add(best[1]); ious.append(best[0]); dice += 1
        bad += b["dice"][best[1]]["value"] != d["value"]
print(json.dumps({"images": len(photos), "dice": dice, "mismatches": int(bad), "min_iou": round(float(min(ious)), 4),
                  "peak_rss_mb": {"ncnn_1_image": round(rss_one_n), "onnx_1_image": round(rss_one_o),
                                  f"ncnn_{len(photos)}_images": round(rss_all_n), f"onnx_{len(photos)}_images": round(rss_all_o)},
                  "median_ms": {"ncnn": float(np.median([r["ms"] for r in all_n])), "onnx": float(np.median([r["ms"] for r in all_o]))}}))
