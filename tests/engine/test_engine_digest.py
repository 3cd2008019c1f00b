"""A slice of ``benchmarks/engine_digest.py``: the engine's behaviour on seeded random play stays the same.

The slice plays one seeded game of every game spec of the digest (every 1000-family preset, four house-rule
variants, every games.md preset), 40 actions each, about one in six a deliberately random (often refused)
action. Its sha256 was recorded on the engine before the one-game-interface refactor (commit 8182330, the
old engine run from a worktree) and must not change: the events, states, moves and error messages are the
behaviour of the rules. A deliberate rule change updates ``SLICE_SHA256`` in the same commit, saying why.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "engine_digest.py"
_spec = importlib.util.spec_from_file_location("engine_digest", _SCRIPT)
assert _spec is not None and _spec.loader is not None
engine_digest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(engine_digest)

#: sha256 of ``digest(100_000, games_per_spec=1, per_game=40)`` on the engine of 8182330 (1,230 actions,
#: 154 of them refused).
SLICE_SHA256 = "9da8132010e402b6ed18a3b268cc0ba9bf5f3c2a91b116149b7697f057fd87eb"


def test_random_play_slice_is_unchanged():
    """Every game spec is played; every saved state restores equal; every refusal carries an English and a
    Russian reason; and the whole slice hashes to the digest recorded before the refactor."""
    lines = list(engine_digest.digest(100_000, games_per_spec=1, per_game=40))
    docs = [json.loads(line) for line in lines]
    started = [d["game"] for d in docs if "start" in d]
    assert started == [label for label, _ in engine_digest.game_specs()]
    steps = [d for d in docs if "i" in d]
    refused = [d for d in steps if "error" in d]
    assert len(steps) == 1230 and len(refused) == 154
    assert all(d["round_trip"] for d in steps if "state" in d)
    assert all(d["error"][0] in ("BadInput", "RuleViolation", "IllegalKeep") and d["error"][2] and d["error"][3]
               for d in refused)
    assert engine_digest.sha256_of(iter(lines)) == SLICE_SHA256
