"""Throughput of the throw-scoring core (engine/scoring.py) per scoring table.

Target (engineering brief): >= 200,000 throw scorings per second from raw faces on one core.
For each table of rules.md §2 this prints the one-off precompute time (all 923 multisets of 1-6
dice, built on first use) and the median over several runs of:

* ``score_throw`` — raw faces (a Python list in throw order) → best keep, scorings/s;
* ``score_keep``  — kept dice + their throw → value, scorings/s;
* ``legal_keeps`` — raw faces → every legal keep, calls/s.

Throws are random (fixed seed): uniform size 1..dice, uniform faces. Run:
``python benchmarks/bench_scoring.py [--runs 5] [--n 100000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from kosti.engine.scoring import TABLES, ScoringRules, legal_keeps, score_keep, score_throw

TARGET = 200_000


def _rate(fn, items, runs: int) -> float:
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(items)
        rates.append(len(items) / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per measurement (median)")
    ap.add_argument("--n", type=int, default=100_000, help="throws per run")
    args = ap.parse_args()
    rng = random.Random(1000)
    print(f"{'table':<24}{'build ms':>9}{'score_throw/s':>15}{'score_keep/s':>14}"
          f"{'legal_keeps/s':>15}  target {TARGET:,}/s")
    worst = float("inf")
    for table in TABLES:
        rules = ScoringRules(table=table)
        throws = [[rng.randint(1, 6) for _ in range(rng.randint(1, rules.dice_count))]
                  for _ in range(args.n)]
        t0 = time.perf_counter()
        score_throw([1], rules)  # builds the lookup
        build_ms = (time.perf_counter() - t0) * 1000

        def throw_loop(items, rules=rules):
            for faces in items:
                score_throw(faces, rules)

        pairs = [(s.scoring_dice, faces) for faces in throws
                 if not (s := score_throw(faces, rules)).bust]

        def keep_loop(items, rules=rules):
            for kept, faces in items:
                score_keep(kept, rules, throw=faces)

        def legal_loop(items, rules=rules):
            for faces in items:
                legal_keeps(faces, rules)

        r_throw = _rate(throw_loop, throws, args.runs)
        r_keep = _rate(keep_loop, pairs, args.runs)
        r_legal = _rate(legal_loop, throws, args.runs)
        worst = min(worst, r_throw)
        print(f"{table:<24}{build_ms:>9.1f}{r_throw:>15,.0f}{r_keep:>14,.0f}{r_legal:>15,.0f}")
    verdict = "OK" if worst >= TARGET else "BELOW TARGET"
    print(f"slowest score_throw: {worst:,.0f}/s  ({worst / TARGET:.1f}x target) {verdict}")


if __name__ == "__main__":
    main()
