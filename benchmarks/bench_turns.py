"""Random self-play throughput of the game state machine (engine/game.py), turns per second.

Target (engineering brief): >= 5,000 turns/s on one core. For each preset this plays random games
(new game when one ends) through the public API — ``GameState.apply`` with :class:`Roll`,
:class:`Keep`, :class:`Bank` — and prints the median over several runs of completed turns per
second, plus actions per second. The driver policy is cheap on purpose (throw random faces; take
the best keep where the player may choose; stop as soon as stopping is allowed and the turn holds at
least 4 point units × 10), so the number measures the engine, not the policy. Every turn runs the
full §3.13 resolution, and every state stays immutable and JSON-serialisable.

Rates use the process CPU time (``time.process_time``), i.e. turns per second of one busy core,
so that a loaded machine does not distort them; the wall-clock rate is printed alongside.

Run: ``python benchmarks/bench_turns.py [--runs 5] [--turns 20000] [--preset classic ...]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from kosti.engine import PRESET_NAMES, Action, Bank, Keep, Roll, get_preset, new_game
from kosti.engine.standing import keep_options as _keep_options

TARGET = 5_000


def _play_turns(preset: str, n_turns: int, seed: int) -> tuple[int, int, float, float]:
    """Play until ``n_turns`` turns have completed; returns (turns, actions, cpu_s, wall_s)."""
    rules = get_preset(preset)
    rng = random.Random(seed)
    choices = rng.choices
    faces6 = (1, 2, 3, 4, 5, 6)
    players = ["A", "B", "C"]
    bank_at = 4 * rules.unit * 10
    turns = actions = 0
    c0, t0 = time.process_time(), time.perf_counter()
    while turns < n_turns:
        st = new_game(rules, players)
        while not st.over and turns < n_turns:
            t = st.turn
            action: Action
            if t.pending is not None:
                action = Keep(_keep_options(t.pending, rules)[0].faces)
            elif t.scored and t.points >= bank_at and st.stop_reason() is None:
                action = Bank()
            else:
                action = Roll(tuple(choices(faces6, k=t.dice)))
            before = (t.player, sum(p.turns for p in st.players))
            st, _ = st.apply(action)
            actions += 1
            if st.over or (st.turn.player, sum(p.turns for p in st.players)) != before:
                turns += 1
    return turns, actions, time.process_time() - c0, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per preset (median)")
    ap.add_argument("--turns", type=int, default=20_000, help="turns per run")
    ap.add_argument("--preset", nargs="*", default=list(PRESET_NAMES), help="presets to time")
    args = ap.parse_args()
    print(f"{'preset':<27} {'turns/s':>10} {'actions/s':>10} {'wall t/s':>10} {'vs target':>9}")
    medians = []
    for name in args.preset:
        tps, aps, wps = [], [], []
        for run in range(args.runs):
            turns, acts, cpu, wall = _play_turns(name, args.turns, seed=run)
            tps.append(turns / cpu)
            aps.append(acts / cpu)
            wps.append(turns / wall)
        m = statistics.median(tps)
        medians.append(m)
        print(f"{name:<27} {m:>10,.0f} {statistics.median(aps):>10,.0f} "
              f"{statistics.median(wps):>10,.0f} {m / TARGET:>8.1f}x")
    print(f"median over presets: {statistics.median(medians):,.0f} turns/s "
          f"(target >= {TARGET:,}; one core)")


if __name__ == "__main__":
    main()
