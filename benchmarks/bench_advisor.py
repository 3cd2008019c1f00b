"""Time of the turn advisor (engine/advisor/advice.py) per preset: throw tables, cold solve and warm advice, one core.

Target (issue 19): advice for a state in <= 50 ms on one core. Three costs, measured separately:

* "tables": building the per-rules throw tables (:func:`kosti.engine.advisor.prepare_tables`, from
  empty caches). The dashboard builds them in a background thread when a game is put on the table, so
  no advice waits for them there; ``kosti advise`` pays them once per run. The first build in a
  process also carries one-time set-up (about 30 ms here), so the first preset listed reads higher.
* "cold": the first advice in a new situation (a new turn: the DP solves the reachable part of the
  turn, probing the engine), with the tables already built — **not** included in this column.
* "warm": every later advice in the same turn (memoised values, one engine call for the stop value).

The dashboard page asks for advice after every state push, so the cold solve happens when the turn
begins and the player's mid-turn decisions get the warm time.

Times are process CPU seconds (``time.process_time``), medians over ``--runs`` situations (each run
a different pair of starting scores, so nothing is cached between runs), so a loaded machine does
not distort them.

The second objective, the win probability of two-player Pig (:mod:`kosti.engine.advisor.pig`), is
timed on its own line: the value iteration for target 100 (CPU seconds, once per target and
``equal_series`` setting, cached; the dashboard solves it in the background when a Pig game is put on
the table) and the advice for a state once it is solved.

Run: ``python benchmarks/bench_advisor.py [--runs 7] [--preset classic farkle ...] [--no-pig]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from kosti.engine import PRESET_NAMES, Roll, get_preset, new_game
from kosti.engine.advisor import advise, prepare_tables
from kosti.engine.advisor.throw_tables import _classes, _dp_table

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
    ap.add_argument("--no-pig", action="store_true", help="skip the Pig win-model timing")
    args = ap.parse_args()
    print(f"{'preset':<27} {'tables ms':>9} {'cold ms':>8} {'warm ms':>8} {'vs 50 ms (warm)':>16}")
    builds, colds, warms = [], [], []
    for name in args.preset:
        rules = get_preset(name)
        _dp_table.cache_clear()
        _classes.cache_clear()
        c0 = time.process_time()
        prepare_tables(rules)  # the per-rules throw tables, timed on their own: "cold" excludes them
        builds.append((time.process_time() - c0) * 1000)
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
        print(f"{name:<27} {builds[-1]:>9.1f} {c:>8.1f} {w:>8.2f} {TARGET_MS / max(w, 1e-9):>15.0f}x")
    print(f"median over presets: tables {statistics.median(builds):.1f} ms (max {max(builds):.1f}; built once per "
          f"game, in the background on the dashboard), cold {statistics.median(colds):.1f} ms (max "
          f"{max(colds):.1f}; tables not included), warm {statistics.median(warms):.2f} ms "
          f"(target <= {TARGET_MS:.0f} ms; one core, CPU time)")
    if not args.no_pig:
        _bench_pig()


def _bench_pig() -> None:
    """The Pig win model: solve time per equal_series setting (target 100) and advice time."""
    from kosti.engine.advisor.pig import advise_pig, solve
    from kosti.engine.games import new_any_game

    parts = []
    for eq in (False, True):
        solve.cache_clear()
        c0 = time.process_time()
        sol = solve(100, eq)
        parts.append(f"equal_series {str(eq).lower()}: {time.process_time() - c0:.2f} s "
                     f"({sol.iterations} sweeps)")
    game = new_any_game({"preset": "pig", "overrides": {"order_throw": False}}, ["A", "B"])
    game, _ = game.apply(Roll((4,)))
    c0 = time.process_time()
    for _ in range(20):
        advise_pig(game)
    ms = (time.process_time() - c0) / 20 * 1000
    print(f"Pig win model, target 100 (solved once per target, cached): {'; '.join(parts)}; "
          f"advice once solved {ms:.2f} ms")


if __name__ == "__main__":
    main()
