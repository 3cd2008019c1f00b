"""How the live pipeline holds up through a worse camera: the seeded clip suite replayed through ``kosti watch``
after each camera fault of ``benchmarks/robustness.py``, side by side with the clips as generated.

``robustness.py`` asks whether the reader still reads a photo; this asks whether the whole throw still comes out
right when every frame of a clip is dimmer, noisier, softer or more compressed: the settle detector must still
see a spinning die move, the hand check still see a palm, the reader still read the rest. Each clip of
``kosti datasets clips`` (a shaking camera, a spinning and a tipping die, dice on a palm, hands, a pick-up, a
push, a die leaving, re-throws, a video that ends, a fixed camera, real photos shaken) is re-encoded with the
fault applied to every frame and replayed; a clip is **right** when ``kosti watch --json`` gives exactly its
throws (faces and status, in order) and each is read 0–0.5 s after the true rest — ``tests/vision/test_clips.py``'s
definition (issue 13); otherwise the table names what went wrong (:func:`judge`: ``missed``, ``extra``, ``wrong``,
``early``, ``asks`` — a throw left for the table to confirm, never a wrong score — or ``late``).

Usage: ``python benchmarks/robustness_clips.py [--faults none,dark-0.45,…] [--clips DIR] [--seed 1]
[--json OUT]``. Without ``--clips`` the suite is generated (seed ``--seed``, the real-photo clip from
``../shared/datasets`` when it is there) into a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from robustness import FAULTS, fault_names  # noqa: E402  (a sibling module)
from select_operating_point import SHARED  # noqa: E402

#: Latest a throw may be read after the true rest (issue 13, "Done means").
MAX_DELAY_S = 0.5
NO_BOXES = np.zeros((0, 4), np.float32)


def degrade(src: Path, dst: Path, fault: str) -> None:
    """Re-encode video ``src`` to ``dst`` (same codec and frame rate) with :data:`FAULTS` ``[fault]`` applied to every
    frame. Raises ``OSError`` when ``src`` cannot be read or ``dst`` written."""
    cap = cv2.VideoCapture(str(src))
    if not cap.isOpened():
        raise OSError(f"cannot read video {src}")
    fps, fourcc = cap.get(cv2.CAP_PROP_FPS), int(cap.get(cv2.CAP_PROP_FOURCC))
    writer = None
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            out = FAULTS[fault](frame, NO_BOXES)[0]
            if writer is None:
                writer = cv2.VideoWriter(str(dst), fourcc, fps, (out.shape[1], out.shape[0]))
                if not writer.isOpened():
                    raise OSError(f"cannot write video {dst}")
            writer.write(out)
    finally:
        cap.release()
        if writer is not None:
            writer.release()


def judge(clip: dict, got: dict) -> dict:
    """One clip's result: ``right`` (exactly its throws, each read 0–:data:`MAX_DELAY_S` s after the true rest), a
    one-word ``verdict``, the read delays in seconds, and the throws seen as ``[faces, status, time_s]`` (an
    unreadable die is ``"?"``).

    Verdicts, worst first: ``missed`` / ``extra`` (fewer or more throws than the clip's), ``wrong`` (a throw
    scored ``ok`` with other faces, or ``ok`` where the table must be asked, or a die that tipped over after the
    read not flagged as correcting that throw — the game would score it as a new throw — or a new throw flagged as
    a correction), ``early`` (read before the true
    rest), ``asks`` (a throw left for the table to confirm that could have been read: never a wrong score),
    ``late`` (read over :data:`MAX_DELAY_S` after the rest), ``ok``.
    """
    seen = [[sorted((0 if d.get("uncertain") else d["value"] for d in t["dice"]), key=lambda v: (v == 0, v)), t["status"],
             round(t["time_s"], 2)]
            for t in got["throws"]]
    want = [[w["faces"], w["status"]] for w in clip["throws"]]
    delays = [round(t["time_s"] - w["rest_s"], 2) for t, w in zip(got["throws"], clip["throws"])]
    corrections = [("corrects" in t) == bool(w.get("corrects")) for t, w in zip(got["throws"], clip["throws"])]
    right = [s[:2] for s in seen] == want and all(0.0 <= d <= MAX_DELAY_S for d in delays) and all(corrections)
    pairs = list(zip(seen, want))
    if len(seen) != len(want):
        verdict = "missed" if len(seen) < len(want) else "extra"
    elif any(s[1] == "ok" and (s[0] != w[0] or w[1] != "ok") for s, w in pairs) or not all(corrections):
        verdict = "wrong"
    elif any(d < 0.0 for d in delays):
        verdict = "early"
    elif any(s[:2] != w for s, w in pairs):
        verdict = "asks"
    elif any(d > MAX_DELAY_S for d in delays):
        verdict = "late"
    else:
        verdict = "ok"
    shown = [[[v if v else "?" for v in s[0]], s[1], s[2]] for s in seen]
    return {"right": right, "verdict": verdict, "delays_s": delays, "seen": shown}


def watch(path: Path, dice: int | None) -> dict:
    """``kosti watch --json`` of one video, parsed. Raises ``RuntimeError`` with its error line when it fails."""
    cmd = [sys.executable, "-m", "kosti", "watch", "--json", *(["--dice", str(dice)] if dice else []), str(path)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"kosti watch {path.name} failed: {run.stderr.strip().splitlines()[-1:]}")
    result: dict = json.loads(run.stdout)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", default="none,dark-0.45,noise-12,focus-2px,jpeg-20,warm-lamp,grey,hue+120",
                    help="comma-separated names of robustness.py's FAULTS (default %(default)s)")
    ap.add_argument("--clips", type=Path, help="a folder written by `kosti datasets clips` (default: generate one)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated suite (default %(default)s)")
    ap.add_argument("--json", type=Path, help="write the results there")
    args = ap.parse_args()
    faults = fault_names(ap, args.faults)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.clips
        if root is None:
            root = Path(tmp) / "clips"
            real = ["--real-root", str(SHARED)] if (SHARED / "byler-d6").is_dir() else ["--real-root", str(root / "-")]
            subprocess.run([sys.executable, "-m", "kosti", "datasets", "clips", "--out", str(root),
                            "--seed", str(args.seed), *real], check=True, capture_output=True)
        manifest_path = root / "clips.json"
        if not manifest_path.is_file():
            ap.error(f"no clips.json in {root} (write one with `kosti datasets clips --out {root}`)")
        clips = json.loads(manifest_path.read_text())["clips"]
        results: dict[str, dict[str, dict]] = {}
        names = [c["name"] for c in clips]
        print(f"{'fault':16s} right  " + " ".join(f"{n[:10]:>10s}" for n in names))
        for fault in faults:
            results[fault] = {}
            for clip in clips:
                path = root / clip["file"]
                if fault != "none":
                    path = Path(tmp) / f"{fault}_{clip['file']}"
                    degrade(root / clip["file"], path, fault)
                results[fault][clip["name"]] = judge(clip, watch(path, clip["dice"]))
                if fault != "none":
                    path.unlink()
            row = results[fault]
            n_right = sum(r["right"] for r in row.values())
            print(f"{fault:16s} {n_right:2d}/{len(row):<2d}  "
                  + " ".join(f"{row[n]['verdict']:>10s}" for n in names), flush=True)
    for fault, row in results.items():
        for name, r in row.items():
            if not r["right"]:
                want = [[w["faces"], w["status"], w["rest_s"]] for w in next(c for c in clips if c["name"] == name)["throws"]]
                print(f"  {fault} / {name} ({r['verdict']}): saw {r['seen']}, want {want}")
    if args.json:
        args.json.write_text(json.dumps({"clips": str(root), "seed": args.seed, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
