"""NCNN's im2col-GEMM convolutions off (the shipped setting, :func:`kosti.vision.ncnn_backend._net`) against on:
time per read, side by side, one thread (issue 44: off lowers ``kosti run``'s peak memory below 300 MB).

Both readers in one process, alternating frame by frame so both see the same machine load; CPU time of this process
(``time.process_time``) per :meth:`DiceReader.read` of real 1280×720 frames (byler-d6 test photos resized, their dice
small enough for the zoomed second read, the costly one), medians and the ratio; and whether both read the same dice.

Usage: ``python benchmarks/ncnn_sgemm.py [--frames 8] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import cv2

SHARED = Path(__file__).resolve().parents[2] / "shared"


def reader(sgemm: bool) -> Any:
    """A DiceReader on the shipped NCNN folders with GEMM convolutions ``sgemm`` on or off."""
    import kosti.vision.ncnn_backend as nb
    from kosti.vision.reader import DiceReader

    shipped = nb._net

    def net(param: Path, weights: Path, threads: int) -> Any:
        n = shipped(param, weights, threads)
        if sgemm:  # options act when the graph is loaded: load it again with the option set
            import ncnn

            n = ncnn.Net()
            n.opt.use_vulkan_compute, n.opt.num_threads = False, max(int(threads), 1)
            n.load_param(str(param))
            n.load_model(str(weights))
        return n

    nb._net = net
    try:
        return DiceReader(backend="ncnn")
    finally:
        nb._net = shipped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    photos = sorted((SHARED / "datasets" / "byler-d6" / "images" / "test").glob("*.jpg"))[: a.frames]
    from kosti.vision.reader import load_image

    frames = [cv2.resize(load_image(p), (1280, 720)) for p in photos]
    readers = {"off (shipped)": reader(False), "on": reader(True)}
    times: dict[str, list[float]] = {k: [] for k in readers}
    same = 0
    for _ in range(a.rounds):
        for f in frames:
            reads = {}
            for k, r in readers.items():
                t = time.process_time()
                reads[k] = r.read(f)
                times[k].append(time.process_time() - t)
            x, y = reads.values()
            same += int(sorted(x.value.tolist()) == sorted(y.value.tolist()) and len(x) == len(y))
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    for k, v in med.items():
        print(f"GEMM convolutions {k:14s} median {v:7.1f} ms CPU per read ({len(times[k])} reads)")
    print(f"off / on: {med['off (shipped)'] / med['on']:.2f}; the same dice and faces in {same} of "
          f"{a.rounds * len(frames)} reads")


if __name__ == "__main__":
    main()
