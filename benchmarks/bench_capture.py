"""Cost of capturing throws and of serving the review page (datasets/capture.py, dashboard/routes/review.py).

Targets (why they matter):

* ``CaptureWriter.add`` of a 1280×720 settled frame with 5 dice well under the time between two throws
  (players throw every few seconds; the capture loop must not fall behind): median < 100 ms;
* the review API's per-image view (``GET /api/review/images/{id}``, which lists the folder for the
  prev/next links and the counts) stays interactive on a folder of ``--images`` captures: median < 150 ms.

Prints medians over ``--runs`` runs. Run: ``python benchmarks/bench_capture.py [--images 500] [--runs 20]``.
Everything is written under a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from kosti.datasets import capture as cap

ADD_TARGET_MS = 100.0
VIEW_TARGET_MS = 150.0


def _frame(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 255, (45, 80, 3), dtype=np.uint8)
    img = cv2.resize(small, (1280, 720), interpolation=cv2.INTER_LINEAR)  # smooth, camera-like content
    return cv2.GaussianBlur(img, (0, 0), 2)


DICE = [(v, (100.0 + 150 * i, 300.0, 140.0 + 150 * i, 340.0), 0.9) for i, v in enumerate((1, 5, 3, 6, 2))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=500, help="captures in the folder for the review timing")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    args = ap.parse_args()
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from kosti.dashboard.routes.review import create_review_router

    with tempfile.TemporaryDirectory(prefix="kosti-bench-capture-") as tmp:
        root = Path(tmp) / "cap"
        w = cap.CaptureWriter(root, model="bench")
        frames = [_frame(i) for i in range(4)]
        add_ms = []
        for i in range(args.images):
            t0 = time.perf_counter()
            w.add(frames[i % 4], DICE)
            add_ms.append((time.perf_counter() - t0) * 1e3)
        jpeg_kb = statistics.median(p.stat().st_size for p in (root / "images").iterdir()) / 1024
        # The first adds run on a small review.json; report the last --runs adds (largest index) too.
        print(f"CaptureWriter.add 1280x720, 5 dice: median {statistics.median(add_ms):.1f} ms over {len(add_ms)} "
              f"(last {args.runs}: {statistics.median(add_ms[-args.runs:]):.1f} ms; target < {ADD_TARGET_MS:.0f} ms); "
              f"JPEG median {jpeg_kb:.0f} kB")

        app = FastAPI()
        app.include_router(create_review_router(root))
        client = TestClient(app)
        ids = cap.list_ids(root)
        for name, fn in (
            ("GET /api/review/images", lambda i: client.get("/api/review/images")),
            ("GET /api/review/images/{id}", lambda i: client.get(f"/api/review/images/{ids[i * 7 % len(ids)]}")),
            ("PUT /api/review/images/{id}/labels", lambda i: client.put(
                f"/api/review/images/{ids[i * 11 % len(ids)]}/labels",
                json={"dice": [{"value": v, "box": list(b)} for v, b, _ in DICE]})),
        ):
            ms = []
            for i in range(args.runs):
                t0 = time.perf_counter()
                r = fn(i)
                ms.append((time.perf_counter() - t0) * 1e3)
                assert r.status_code == 200, r.text
            print(f"{name:36s} {args.images} images: median {statistics.median(ms):.1f} ms "
                  f"(target < {VIEW_TARGET_MS:.0f} ms)")
        t0 = time.perf_counter()
        s = cap.stats(root)
        print(f"stats(): {(time.perf_counter() - t0) * 1e3:.1f} ms for {s['images']} images, {s['dice']} dice")


if __name__ == "__main__":
    main()
