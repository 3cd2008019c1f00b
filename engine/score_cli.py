"""``kosti score`` — score one throw under a rule preset (``../shared/docs/cli.md``).

``kosti score [--rules PRESET] [--json] FACE [FACE ...]`` prints the best legal keep of the throw
(rules.md §2.1: maximum value, ties → more dice). With ``--json`` it prints exactly one JSON
document with the keys of cli.md, in that order::

    {"rules": "classic", "faces": [1, 1, 1, 5, 2], "bust": false, "points": 105,
     "scoring_dice": [1, 1, 1, 5], "remaining_dice": 1, "hot_dice": false, "instant_win": false,
     "combinations": [{"name": "three_of_a_kind", "faces": [1, 1, 1], "points": 100},
                      {"name": "single", "faces": [5], "points": 5}]}

``faces`` echoes the input order; ``scoring_dice`` is sorted ascending. Exit codes: 0 ok; 2 bad
input (a face that is not an integer 1–6, too many dice for the preset, unknown preset), raised as
:class:`~kosti.engine.errors.BadInput` and reported by the ``kosti`` dispatcher.

:func:`add_score_parser` registers the subcommand; ``kosti.engine.cli`` calls it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import BadInput
from .presets import get_preset
from .scoring import COMBINATION_LABELS, ScoringRules, ThrowScore, score_throw
from .texts import bust_word


def scoring_rules_for_preset(name: str) -> ScoringRules:
    """The :class:`ScoringRules` of a rules.md §4 preset name (``Rules.scoring`` of
    :func:`kosti.engine.presets.get_preset`). Raises :class:`BadInput` for an unknown preset."""
    return get_preset(name).scoring


def parse_faces(values: list[str]) -> list[int]:
    """Faces from command-line words; raises :class:`BadInput` for anything but an integer 1–6."""
    faces = []
    for word in values:
        try:
            face = int(word)
        except ValueError:
            raise BadInput(f"face {word!r} is not an integer 1-6") from None
        if not 1 <= face <= 6:
            raise BadInput(f"face {face} is outside 1-6")
        faces.append(face)
    return faces


def score_document(preset: str, faces: list[int], result: ThrowScore) -> dict[str, Any]:
    """The cli.md JSON document of one scored throw (key order as in cli.md)."""
    return {
        "rules": preset,
        "faces": list(faces),
        "bust": result.bust,
        "points": result.points,
        "scoring_dice": list(result.scoring_dice),
        "remaining_dice": result.remaining_dice,
        "hot_dice": result.hot_dice,
        "instant_win": result.instant_win,
        "combinations": [c.to_dict() for c in result.combinations],
    }


def format_human(preset: str, faces: list[int], result: ThrowScore) -> str:
    """A short English/Russian description of the scored throw (free-form)."""
    thrown = " ".join(map(str, faces))
    if result.bust:
        en, ru = bust_word(get_preset(preset).dice_count == 6)  # the table's word, as the engine says it
        return f"[{preset}] {thrown}: {en.upper()} / {ru} — no scoring dice, turn points lost (0)"
    parts = ", ".join(
        "{} / {}: {} = {}".format(*COMBINATION_LABELS[c.name], " ".join(map(str, c.faces)),
                                  c.points)
        for c in result.combinations)
    lines = [f"[{preset}] {thrown}: {result.points} points / очков — {parts}",
             f"  keep / отложить: {' '.join(map(str, result.scoring_dice))}; "
             f"dice left / осталось костей: {result.remaining_dice}"]
    if result.hot_dice:
        lines.append("  hot dice — all dice scored / все кости зачётные")
    if result.instant_win:
        lines.append("  instant win / мгновенная победа")
    return "\n".join(lines)


def run_score(args: argparse.Namespace) -> int:
    """Handler of ``kosti score``; returns the exit code (0). Raises :class:`BadInput` (exit 2)."""
    faces = parse_faces(args.faces)
    rules = scoring_rules_for_preset(args.rules)
    result = score_throw(faces, rules)
    if args.json:
        sys.stdout.write(json.dumps(score_document(args.rules, faces, result), ensure_ascii=False)
                         + "\n")
    else:
        print(format_human(args.rules, faces, result))
    return 0


def add_score_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``kosti score`` on an ``argparse`` subparsers object; returns the new parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "score", help="score one throw (best legal keep) under a rule preset",
        description="Score one throw of 1-6 dice under a rule preset (rules.md §2): the best legal "
                    "keep, its points and combinations, hot dice, instant win.")
    p.add_argument("--rules", default="classic", metavar="PRESET",
                   help="rule preset name (kosti rules lists them; default: classic)")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("faces", nargs="+", metavar="FACE", help="face values 1-6, one per die")
    p.set_defaults(func=run_score)
    return p
