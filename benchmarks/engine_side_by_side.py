"""The engine of an older revision beside this checkout's, in one run: ``bench_turns`` throughput and the
``engine_digest`` of random play.

The old revision is checked out with ``git worktree add --detach`` into a temporary folder; each engine is
imported from a small layout folder (``kosti/`` with ``engine`` linked to the revision's ``engine/``) by a
child ``python -S`` (the engine is pure Python and imports nothing outside the standard library, so the
installed kosti is kept out of the way). Timed runs alternate old, new, old, new … with the same seeds, so a
busy machine slows both alike; the report gives each side's median turns per second of CPU time (as
``bench_turns.py`` measures it) and their ratio.

Usage::

    python benchmarks/engine_side_by_side.py --old 8182330 --runs 5 --turns 5000 --preset classic farkle
    python benchmarks/engine_side_by_side.py --old 8182330 --digest 260000   # also compare the digests

Exit status 1 when ``--digest`` is given and the two digests differ (the first differing line is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_TIMED = """
import json, sys
sys.path.insert(0, {bench!r})
from bench_turns import _play_turns
turns, acts, cpu, wall = _play_turns({preset!r}, {turns}, seed={seed})
print(json.dumps([turns, acts, cpu, wall]))
"""


def _layout(root: Path, engine: Path) -> Path:
    """A folder holding ``kosti/__init__.py`` and ``kosti/engine`` → ``engine`` (a link), for PYTHONPATH."""
    pkg = root / "kosti"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""kosti (engine only, for a side-by-side run)."""\n')
    (pkg / "engine").symlink_to(engine, target_is_directory=True)
    return root


def _run(layout: Path, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(layout), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=layout)
    return out.stdout


def main(argv: list[str] | None = None) -> int:
    """Time both engines (and compare their digests with ``--digest N``); print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the older revision (a commit, tag or branch)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--turns", type=int, default=5000)
    ap.add_argument("--preset", nargs="*", default=["classic", "farkle", "variant2_850_barrel"])
    ap.add_argument("--digest", type=int, default=0, help="also play this many digest actions on each side")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="kosti-side-by-side-"))
    old_tree = tmp / "old"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(old_tree), a.old], check=True)
    try:
        sides = {"old": _layout(tmp / "old-layout", old_tree / "engine"),
                 "new": _layout(tmp / "new-layout", REPO / "engine")}
        bench = str(REPO / "benchmarks")
        print(f"{'preset':<22} {'old turns/s':>12} {'new turns/s':>12} {'new/old':>8}")
        for preset in a.preset:
            rates: dict[str, list[float]] = {"old": [], "new": []}
            for seed in range(a.runs):
                for side, layout in sides.items():
                    turns, _acts, cpu, _wall = json.loads(_run(layout, _TIMED.format(
                        bench=bench, preset=preset, turns=a.turns, seed=seed)))
                    rates[side].append(turns / cpu)
            old, new = statistics.median(rates["old"]), statistics.median(rates["new"])
            print(f"{preset:<22} {old:>12,.0f} {new:>12,.0f} {new / old:>8.3f}")
        if a.digest:
            code = ("import sys; sys.path.insert(0, {b!r}); import engine_digest as d; "
                    "print(d.sha256_of(d.digest({n})))").format(b=bench, n=a.digest)
            hashes = {side: _run(layout, code).strip() for side, layout in sides.items()}
            print(f"digest of {a.digest} actions: old {hashes['old']}  new {hashes['new']}  "
                  f"{'identical' if hashes['old'] == hashes['new'] else 'DIFFERENT'}")
            if hashes["old"] != hashes["new"]:
                return 1
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
