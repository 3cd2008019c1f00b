"""Record the engine's behaviour on random play, so a refactor can prove it changed nothing.

Plays seeded random games of every 1000-family preset (rules.md §4, several house rules overridden
too) and every games.md preset through the one public surface (:func:`kosti.engine.games.new_any_game`,
``moves()``, ``apply()``, ``to_json()``, ``summary()``), and writes one JSON line per step: the action,
then either its events (kind, player, both texts, points, faces, outcome) and the new state (its JSON,
its summary, its moves, the queries of the game interface) or the error it raised (class, exit code,
English and Russian reason). About one action in six is a deliberately random one (a throw of a wrong
size, a stop, a keep of random faces, an unknown or random choice), so refusals are recorded too. Every
state's JSON is restored with ``game_from_json`` and must compare equal.

Usage::

    python benchmarks/engine_digest.py --actions 260000 --out /tmp/engine_before.jsonl.gz
    python benchmarks/engine_digest.py --actions 260000 --out /tmp/engine_after.jsonl.gz
    # identical engines print the same sha256 (also written beside the file as <out>.sha256)

The same seeds give the same lines on any machine: the randomness comes only from ``random.Random(seed)``
per game. ``tests/engine/test_engine_digest.py`` runs a small slice of it against a stored digest.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any, Iterator

try:  # the installed (editable) kosti, or a tree on PYTHONPATH (an old revision's engine, for the side by side)
    import kosti.engine  # noqa: F401
except ImportError:  # run as a script from a checkout without an install
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kosti.engine.errors import KostiEngineError
from kosti.engine.game import Bank, Keep, Roll
from kosti.engine.games import GAME_PRESETS, game_from_json, new_any_game
from kosti.engine.games.base import Choose, action_to_json
from kosti.engine.presets import PRESET_NAMES

#: 1000-family house rules tried on top of presets (rules.md §2 parameters, as ``overrides`` of cli.md).
HOUSE_RULES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("classic", {"selection": {"set_aside": "at_least_one"}}),
    ("classic", {"barrel": {"kind": "none"}, "hot_dice": "may_roll_or_bank"}),
    ("classic", {"bolts": {"limit": 2, "penalty": 50}, "overtaking": {"enabled": False}}),
    ("farkle", {"selection": {"set_aside": "at_least_one"}, "final_round": "none"}),
)

#: Shorter games where the full goal would take thousands of actions (the rules are otherwise the same).
SHORT: dict[str, dict[str, Any]] = {"thirteen": {"target": 1}, "pig": {"target": 60}}


def game_specs() -> list[tuple[str, Any]]:
    """``(label, rules spec for new_any_game)`` of every game the digest plays, in a fixed order."""
    specs: list[tuple[str, Any]] = [(name, name) for name in PRESET_NAMES]
    specs += [(f"{p}+{json.dumps(o, sort_keys=True)}", {"preset": p, "overrides": o}) for p, o in HOUSE_RULES]
    for name in GAME_PRESETS:
        specs.append((name, {"preset": name, "overrides": SHORT[name]} if name in SHORT else name))
    return specs


def _moves_json(m: Any) -> dict[str, Any]:
    def reason(r: Any) -> list[str] | None:
        return None if r is None else [r.text_en, r.text_ru]

    return {"roll": m.roll, "dice": m.dice, "keep": m.keep, "bank": m.bank,
            "keeps": [[list(k.faces), k.points, repr(k)] for k in m.keeps],
            "why_not_roll": reason(m.why_not_roll), "why_not_bank": reason(m.why_not_bank),
            "hint": reason(m.hint), "dice_options": list(m.dice_options),
            "choices": [c.to_json() for c in getattr(m, "choices", ())],
            "bank_label": reason(getattr(m, "bank_label", None))}


def _state_json(g: Any) -> dict[str, Any]:
    return {"json": g.to_json(), "summary": g.summary(), "to_move": g.to_move, "over": g.over,
            "winner": g.winner, "dice_to_throw": g.dice_to_throw, "rules_name": g.rules_name,
            "players": list(g.player_names), "scores": list(g.scores_list()), "title": list(g.title),
            "in_setup": g.in_setup, "turn_points": g.turn_points, "roll_sizes": list(g.roll_sizes()),
            "log_len": len(g.log), "moves": None if g.over else _moves_json(g.moves())}


def _random_action(g: Any, rng: random.Random) -> Any:
    """A legal-looking action most of the time, a random (often refused) one about every sixth step."""
    m = g.moves()
    if rng.random() < 1 / 6:
        pick = rng.randrange(5)
        if pick == 0:
            return Roll(tuple(rng.randint(1, 6) for _ in range(rng.randint(1, 6))))
        if pick == 1:
            return Bank()
        if pick == 2:
            return Keep(tuple(rng.randint(1, 6) for _ in range(rng.randint(1, 3))))
        if pick == 3:
            return Choose(rng.choice(("op", "bet", "claim", "keep", "box", "nonsense")), rng.randint(0, 12))
        return Roll((rng.randint(1, 6),) * max(1, m.dice))
    if m.keep and m.keeps:
        return Keep(rng.choice(m.keeps).faces)
    choice = g.random_choice(rng) if hasattr(g, "random_choice") else None
    if choice is not None and (not m.roll or rng.random() < 0.5):
        return choice
    if m.bank and rng.random() < 0.3:
        return Bank()
    sizes = m.dice_options or (m.dice,)
    return Roll(tuple(rng.randint(1, 6) for _ in range(rng.choice(sizes) if m.roll else max(1, m.dice))))


def _steps(label: str, spec: Any, seed: int, budget: int) -> Iterator[dict[str, Any]]:
    """The lines of one seeded game (at most ``budget`` actions; a game stuck on refusals stops there)."""
    rng = random.Random(seed)
    players = [f"P{i}" for i in range(rng.randint(2, 4))]
    if isinstance(spec, str) and spec in GAME_PRESETS or isinstance(spec, dict) and spec.get("preset") in GAME_PRESETS:
        name = spec if isinstance(spec, str) else spec["preset"]
        lo, hi = GAME_PRESETS[name].cls.PLAYERS
        players = [f"P{i}" for i in range(max(lo, min(hi, len(players))))]
    g = new_any_game(spec, players)
    yield {"game": label, "seed": seed, "start": _state_json(g)}
    for i in range(budget):
        if g.over:
            return
        a = _random_action(g, rng)
        line: dict[str, Any] = {"i": i, "action": action_to_json(a)}
        try:
            new, evs = g.apply(a)
        except KostiEngineError as exc:
            line["error"] = [type(exc).__name__, exc.exit_code, str(exc), getattr(exc, "reason_ru", None)]
            yield line
            continue
        line["events"] = [[e.kind, e.player, e.text_en, e.text_ru, e.points, list(e.faces),
                           None if e.outcome is None else str(e.outcome)] for e in evs]
        line["state"] = _state_json(new)
        back = game_from_json(json.loads(json.dumps(new.to_json())))
        line["round_trip"] = back == new
        g = new
        yield line


def digest(actions: int, games_per_spec: int = 0, first_seed: int = 0, per_game: int = 400) -> Iterator[str]:
    """JSON lines of random play, about ``actions`` actions in all, spread over every game spec
    (``games_per_spec`` seeds each, 0 = as many as the budget needs, round robin; at most ``per_game`` actions
    per game)."""
    specs = game_specs()
    done = 0
    seed = first_seed
    rounds = 0
    while done < actions and (games_per_spec == 0 or rounds < games_per_spec):
        for label, spec in specs:
            for line in _steps(label, spec, seed, min(per_game, actions - done)):
                if "i" in line:
                    done += 1
                yield json.dumps(line, ensure_ascii=False, sort_keys=True)
            seed += 1
            if done >= actions:
                return
        rounds += 1


def sha256_of(lines: Iterator[str]) -> str:
    """The sha256 (hex) of the digest's lines, each with its newline, as :func:`main` writes them."""
    h = hashlib.sha256()
    for line in lines:
        h.update((line + "\n").encode())
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Write the digest; print its sha256 and how many actions, errors and games it holds."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--actions", type=int, default=260_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="a .jsonl.gz file (outside the repository)")
    a = ap.parse_args(argv)
    h = hashlib.sha256()
    n = errors = games = 0
    with gzip.GzipFile(a.out, "wb", mtime=0) as raw:
        for line in digest(a.actions, first_seed=a.seed):
            data = (line + "\n").encode()
            h.update(data)
            raw.write(data)
            n += '"i":' in line
            errors += '"error":' in line
            games += '"start":' in line
    Path(str(a.out) + ".sha256").write_text(h.hexdigest() + "\n")
    print(f"{h.hexdigest()}  {n} actions, {errors} refused, {games} games -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
