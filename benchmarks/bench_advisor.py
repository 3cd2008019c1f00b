"""Time of the turn advisor (engine/advisor.py) per preset: cold solve and warm advice, one core.

Target (issue 19): advice for a state in <= 50 ms on one core. "Cold" is the first advice in a new
situation (a new turn: the DP solves the reachable part of the turn, probing the engine); "warm" is
every later advice in the same turn (memoised values, one engine call for the stop value). The
dashboard solves a turn's situation in the background as soon as the turn passes, so a player only
ever waits for the warm time; ``kosti advise`` pays the cold time once.

Times are process CPU seconds (``time.process_time``), medians over ``--runs`` situations (each run
a different pair of starting scores, so nothing is cached between runs), so a loaded machine does
not distort them.

Run: ``python benchmarks/bench_advisor.py [--runs 7] [--preset classic farkle ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from kosti.engine import PRESET_NAMES, Roll, get_preset, new_game
from kosti.engine.advisor import _dp_table, advise

TARGET_MS = 50.0


def _situation(preset: str, run: int):
    rules = get_preset(preset)
    unit = rules.unit
    # open players at ordinary scores, different in every run (no cache hits between runs)
    a = (20 + 3 * run) * unit
    b = (10 + 2 * run) * unit
    return new_game(rules, ["A", "B"], {"A": a, "B": b})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--preset", nargs="*", default=list(PRESET_NAMES))
    args = ap.parse_args()
    print(f"{'preset':<27} {'cold ms':>8} {'warm ms':>8} {'vs 50 ms (warm)':>16}")
    colds, warms = [], []
    for name in args.preset:
        rules = get_preset(name)
        for n in range(1, rules.dice_count + 1):  # the per-rules throw tables: built at start
            _dp_table(rules, n)
        cold, warm = [], []
        for run in range(args.runs):
            st = _situation(name, run)
            c0 = time.process_time()
            advise(st)
            cold.append(time.process_time() - c0)
            st2, _ = st.apply(Roll((1, 2, 3, 4, 6, 6)[:rules.dice_count]))
            if st2.turn.player == st.turn.player and not st2.over:
                c0 = time.process_time()
                for _ in range(20):
                    advise(st2)
                warm.append((time.process_time() - c0) / 20)
        c, w = statistics.median(cold) * 1000, statistics.median(warm) * 1000 if warm else 0.0
        colds.append(c)
        warms.append(w)
        print(f"{name:<27} {c:>8.1f} {w:>8.2f} {TARGET_MS / max(w, 1e-9):>15.0f}x")
    print(f"median over presets: cold {statistics.median(colds):.1f} ms, warm "
          f"{statistics.median(warms):.2f} ms (target <= {TARGET_MS:.0f} ms; one core, CPU time)")


if __name__ == "__main__":
    main()
