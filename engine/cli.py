"""Engine subcommands of ``kosti``: ``rules``, ``score``, ``advise``, ``replay``, ``play``.

Contracts (``../shared/docs/cli.md``):

* ``kosti rules [--json]`` — the presets of rules.md §4:
  ``{"presets": [{"name", "dice", "target", "description", "source", "parameters"}, ...]}``.
* ``kosti score`` — registered from :mod:`kosti.engine.score_cli`.
* ``kosti advise`` — registered from :mod:`kosti.engine.advisor.cli`.
* ``kosti replay [--json] GAME.json`` — plays a recorded game; exit 0 with the final state
  (:meth:`GameState.summary`), 2 for bad input (unreadable file, malformed JSON, a face outside
  1–6, wrong number of dice, unknown preset or parameter), 3 when an event is forbidden by the rules
  (then prints ``{"error", "event_index", "state"}``).
* ``kosti play`` — an interactive score sheet for a table without a camera: players type the faces
  they threw; the engine scores, says what is allowed and saves after every action
  (``--save game.json``; ``--resume game.json``). Works from piped stdin; ``--sample [farkle]``
  plays a bundled sample game (``engine/data/sample_game.json``, ``sample_farkle.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from importlib import resources
from typing import Any, TextIO

from .errors import BadInput, RuleViolation
from .game import Bank, GameState, Keep, Roll
from .games import (
    Choose,
    Game,
    GamePreset,
    TableGame,
    action_to_json,
    game_from_json,
    game_presets,
    is_game_preset,
    new_any_game,
)
from .plurals import count_en, count_ru
from .presets import PRESET_NAMES, get_preset, read_rules_document, resolve_rules
from .replay_doc import game_from_record

SAMPLE_GAME = "sample_game.json"
#: Bundled sample games (replay format) for ``kosti play --sample [NAME]``.
SAMPLES = {"game": SAMPLE_GAME, "farkle": "sample_farkle.json"}


def register(subparsers: Any) -> None:
    """Register ``rules``, ``score``, ``advise``, ``replay`` and ``play`` on the ``kosti`` subparsers."""
    p = subparsers.add_parser("rules", help="list the rule presets (rules.md §4, games.md)",
                              description="List the rule presets of rules.md §4 (the 1000 family) "
                                          "and the other dice games of games.md, with their "
                                          "parameters.")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("--lang", choices=("en", "ru", "both"), default="both",
                   help="language of the list (default: both; --json is always the same document)")
    p.set_defaults(func=run_rules)

    from .score_cli import add_score_parser

    add_score_parser(subparsers)

    from .advisor.cli import add_advise_parser

    add_advise_parser(subparsers)

    p = subparsers.add_parser("replay", help="play a recorded game through the rules engine",
                              description="Replay a recorded game (cli.md) and print the final "
                                          "state. Exit 2: bad input; exit 3: an event the rules "
                                          "forbid.")
    p.add_argument("--json", action="store_true", help="print one JSON document (cli.md)")
    p.add_argument("game", metavar="GAME.json", help="recorded game: rules, players, events")
    p.set_defaults(func=run_replay)

    p = subparsers.add_parser(
        "play", help="keep the score of a real game: type the faces you threw",
        description="Interactive score sheet for a table without a camera. Type the faces of each "
                    "throw (e.g. '1 5 3 3 4' or '15334'), 'keep 1 5' to choose scoring dice where "
                    "the rules allow it, 'bank' (or 'хватит') to stop, 'sheet', 'undo', 'help', "
                    "'quit'. Other dice games (--rules pig, chicago, liar_dice, …: kosti rules) "
                    "add their own choices, e.g. 'claim 3 3 3 2 2', 'bet Boris 3 2', 'op third'. "
                    "Reads piped stdin too.")
    p.add_argument("--players", help="comma-separated names in seat order, e.g. Ann,Boris")
    p.add_argument("--rules", default="classic",
                   help="preset name (1000 family or another dice game: kosti rules), or a "
                        "JSON/TOML rules file (default: classic)")
    p.add_argument("--save", metavar="PATH", help="save the game here after every action")
    p.add_argument("--resume", metavar="PATH", help="resume a game saved with --save")
    p.add_argument("--sample", nargs="?", const="game", choices=tuple(SAMPLES), default=None,
                   help="play a bundled sample game: 'game' (classic 1000, the default) or "
                        "'farkle' (engine/data/sample_*.json)")
    p.add_argument("--lang", choices=("en", "ru", "both"), default="both",
                   help="language of the messages (default: both)")
    p.set_defaults(func=run_play)


# ----------------------------------------------------------------------------------------------
# kosti rules


def rules_document() -> dict[str, Any]:
    """The ``kosti rules --json`` document: the 1000-family presets of rules.md §4 (``"game":
    "1000"``) and then the games of games.md (``"game": "pig"`` etc.,
    :func:`kosti.engine.games.game_presets`)."""
    out = []
    for name in PRESET_NAMES:
        r = get_preset(name)
        out.append({"name": name, "game": "1000", "dice": r.dice_count, "target": r.target,
                    "description": r.description, "source": r.source,
                    "parameters": r.to_dict()})
    out.extend(game_presets())
    return {"presets": out}


def _without_source(text: str, source: str) -> str:
    """``text`` without a leading source ID that the line already gives in brackets ("RU-A classic rules"
    → "classic rules"; "F2 Farkle base" → "Farkle base")."""
    if not source or not text.startswith(source + " "):
        return text
    rest = text[len(source):].lstrip(" ,:")
    if rest.startswith("(") and "): " in rest:  # "RU-C (Goloviznin): entry 75" → "Goloviznin: entry 75"
        who, _, tail = rest[1:].partition("): ")
        rest = f"{who}: {tail}"
    return rest


def rules_text(doc: dict[str, Any], lang: str = "both") -> list[str]:
    """The lines of ``kosti rules`` without ``--json``: the presets grouped under their game (1000, Farkle,
    10000, then each game of games.md), each with its name, its human name, dice and target counted in words
    (:mod:`kosti.engine.plurals`), its source once, and its description in English and/or Russian
    (``lang``: ``en``, ``ru`` or ``both``)."""
    from .plurals import count_en, count_ru
    from .titles import DESCRIPTIONS_RU, GAME_TITLES, family_title, preset_title

    def say(en: str, ru: str) -> str:
        return en if lang == "en" else ru if lang == "ru" else f"{en} / {ru}"

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in doc["presets"]:
        head = family_title(p["name"]) if p["game"] == "1000" else GAME_TITLES.get(p["game"], (p["game"], p["game"]))
        groups.setdefault(head, []).append(p)
    width = max(len(p["name"]) for p in doc["presets"])
    lines: list[str] = []
    for (head_en, head_ru), presets in groups.items():
        if lines:
            lines.append("")
        lines.append(say(head_en, head_ru))
        for p in presets:
            title = say(*preset_title(p["name"]))
            dice = say(count_en(p["dice"], "die"), count_ru(p["dice"], "die"))
            to = say(f"to {p['target']}", f"до {p['target']}") if p["target"] else ""
            lines.append(f"  {p['name']:<{width}}  {title} — {dice}{', ' + to if to else ''} [{p['source']}]")
            desc_ru = p.get("description_ru") or DESCRIPTIONS_RU.get(p["name"], "")
            if lang in ("en", "both"):
                lines.append(f"  {'':<{width}}    {_without_source(p['description'], p['source'])}")
            if lang in ("ru", "both") and desc_ru:
                lines.append(f"  {'':<{width}}    {desc_ru}")
    return lines


def run_rules(args: argparse.Namespace) -> int:
    """Handler of ``kosti rules``: the JSON document (cli.md) with ``--json``, else :func:`rules_text`."""
    doc = rules_document()
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 0
    print("\n".join(rules_text(doc, getattr(args, "lang", "both"))))
    return 0


# ----------------------------------------------------------------------------------------------
# kosti replay


#: Largest game file ``kosti replay`` / ``advise`` read (bytes): a 1000-turn game is ~100 KB.
MAX_GAME_FILE_BYTES = 16 * 1024 * 1024
#: Longest integer literal in a game file (digits): scores and faces have a few; 10^30 is far past any.
MAX_INT_DIGITS = 30


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"a number with {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    import math

    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"the number {text[:30]} is out of range")
    return v


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _read_json(path: str) -> Any:
    """A game file's JSON, bounded: a regular file (not a pipe or a device such as /dev/zero) of at most
    :data:`MAX_GAME_FILE_BYTES` bytes, integers of at most :data:`MAX_INT_DIGITS` digits, no NaN/Infinity,
    nesting up to Python's recursion limit. Raises :class:`BadInput` (exit 2) with one line naming the file."""
    import os
    import stat

    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise BadInput(f"{path}: is a directory, not a game file")
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{path}: not a regular file (a pipe or a device); give a JSON game file")
        if st.st_size > MAX_GAME_FILE_BYTES:
            raise BadInput(f"{path}: {st.st_size / 2**20:.0f} MB is larger than the "
                           f"{MAX_GAME_FILE_BYTES // 2**20} MB limit for a game file")
        with open(path, "rb") as fh:
            text = fh.read(MAX_GAME_FILE_BYTES + 1).decode("utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: malformed JSON ({exc})") from None
    except ValueError as exc:
        raise BadInput(f"{path}: {exc}") from None
    except RecursionError:
        raise BadInput(f"{path}: JSON nested too deeply") from None


def replay(doc: Any) -> tuple[Game, int | None, RuleViolation | None]:
    """Play a replay document. Returns ``(state, failed_event_index, violation)``; the state is the
    one before the forbidden event when there is one. Raises :class:`BadInput` (exit 2).

    A game saved by ``kosti play --save`` (``"format": "kosti-play/1"``) is replayed too: from its
    initial state through its recorded actions."""
    if isinstance(doc, dict) and str(doc.get("format", "")).startswith("kosti-play/"):
        if not isinstance(doc.get("initial"), dict) or not isinstance(doc.get("actions", []), list):
            raise BadInput("a 'kosti play' save needs 'initial' (a game state) and 'actions' (a list)")
        gs, events = game_from_json(doc["initial"]), doc.get("actions", [])
    else:
        gs, events = game_from_record(doc)
    for i, raw in enumerate(events):
        try:
            action = gs.parse_action(raw)
        except BadInput as exc:
            raise BadInput(f"event {i}: {exc}") from None
        try:
            gs, _ = gs.apply(action)
        except RuleViolation as exc:
            return gs, i, exc
        except BadInput as exc:
            raise BadInput(f"event {i}: {exc}") from None
    return gs, None, None


def run_replay(args: argparse.Namespace) -> int:
    """Handler of ``kosti replay``: exit 0, 2 (bad input) or 3 (forbidden event)."""
    doc = _read_json(args.game)
    gs, idx, err = replay(doc)
    if err is not None:
        out = {"error": str(err), "event_index": idx, "state": gs.summary()}
        if args.json:
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        else:
            print(_sheet(gs, "both"))
        print(f"kosti replay: event {idx}: {err}", file=sys.stderr)
        return 3
    if args.json:
        sys.stdout.write(json.dumps(gs.summary(), ensure_ascii=False) + "\n")
    else:
        for line in gs.log:
            print(line)
        print(_sheet(gs, "both"))
    return 0


# ----------------------------------------------------------------------------------------------
# kosti play


def _sheet(game: Game, lang: str) -> str:
    """The score sheet as text (``lang``: ``en``, ``ru`` or ``both``) of any game."""

    def tr(en: str, ru: str) -> str:
        return en if lang == "en" else ru if lang == "ru" else f"{en}/{ru}"

    if isinstance(game, TableGame):
        return _table_sheet(game, tr, lang)
    gs = game
    assert isinstance(gs, GameState), gs  # every game is a TableGame or a 1000-family game
    lines = [f"--- {tr('Score sheet', 'Счёт')} ({gs.rules.name}) ---"]
    for i, p in enumerate(gs.players):
        marks = []
        if not p.opened and gs.rules.opening.threshold:
            marks.append(tr("not open", "не открыт"))
        if gs.in_pit(i):
            marks.append(tr("pit", "яма"))
        seat = gs.barrel_status(i)  # "on the barrel, needs 120 (attempts 1 of 3)"
        if seat is not None:
            marks.append(tr(seat.text_en, seat.text_ru))
        for n, en, ru in ((p.bolts, "bolts", "болты"), (p.falls, "falls", "падения"),
                          (0 if seat else p.barrel_attempts, "barrel attempts", "попытки на бочке"),
                          (p.dots, "dots", "точки"), (p.overshoots, "overshoots", "переборы")):
            if n:
                marks.append(f"{tr(en, ru)} {n}")
        if p.skip_next:
            marks.append(tr("skips next turn", "пропускает ход"))
        arrow = "→" if not gs.over and i == gs.turn.player else " "
        lines.append(f"{arrow} {p.name:<12} {p.score:>6}  {', '.join(marks)}".rstrip())
    if gs.rules.team_play.enabled:
        for team in gs.teams():
            names = " + ".join(gs.players[i].name for i in team)
            lines.append(f"  {tr('team', 'команда')} {names}: {gs.team_score(team[0])}")
    if gs.over:
        w = gs.winner
        winners = ", ".join(w) if isinstance(w, list) else w
        lines.append({"en": f"Game over: {winners} won", "ru": f"Игра окончена, победа: {winners}",
                      "both": f"Game over: {winners} won / Игра окончена, победа: {winners}"}[lang])
    return "\n".join(lines)


def _game_over_line(names: str, lang: str) -> str:
    return {"en": f"Game over: {names} won", "ru": f"Игра окончена, победа: {names}",
            "both": f"Game over: {names} won / Игра окончена, победа: {names}"}[lang]


def _table_sheet(g: TableGame[Any], tr: Any, lang: str) -> str:
    """Score sheet of a games.md game: one line per seat with the game's marks, then the
    game's status line."""
    unit_en, unit_ru = g.SCORE_UNIT
    lines = [f"--- {tr('Score sheet', 'Счёт')} ({g.params.name}; {tr(unit_en, unit_ru)}) ---"]
    for i, name in enumerate(g.names):
        marks = [tr(en, ru) for en, ru in g.marks(i)]
        arrow = "→" if not g.over and i == g.mover else " "
        lines.append(f"{arrow} {name:<12} {g.scores[i]:>6}  {', '.join(marks)}".rstrip())
    st = g.status()
    if st is not None and not g.over:
        lines.append(f"  {tr(st.text_en, st.text_ru)}")
    if g.over:
        w = g.winner
        lines.append(_game_over_line(", ".join(w) if isinstance(w, list) else str(w), lang))
    return "\n".join(lines)


def _not_allowed(exc: RuleViolation) -> tuple[str, str]:
    """A refusal as ``kosti play`` says it: "Not allowed: …" / "Нельзя: …", unless the reason says so itself
    ("you may not stop: …" / "остановиться нельзя: …" are not prefixed twice)."""
    en, ru = exc.reason_en, exc.reason_ru
    en = en[0].upper() + en[1:] if en.startswith("you may not") else f"Not allowed: {en}"
    ru = ru[0].upper() + ru[1:] if "нельзя" in ru.split(":")[0] else f"Нельзя: {ru}"
    return en, ru


def _say(out: TextIO, lang: str, en: str, ru: str) -> None:
    if lang == "en":
        print(en, file=out)
    elif lang == "ru":
        print(ru, file=out)
    else:
        print(en, file=out)
        print(f"  {ru}", file=out)


def _prompt(gs: Game, lang: str) -> tuple[str, str]:
    a = gs.moves()
    if isinstance(gs, TableGame):
        en, ru = a.hint.text_en, a.hint.text_ru
        if a.choices:
            by_key: dict[str, list[Any]] = {}
            for c in a.choices:
                by_key.setdefault(c.key, []).append(c)

            def opts(lang_ru: bool) -> str:
                out = []
                for key, cs in by_key.items():
                    if len(cs) == 1:  # one option: say what it does
                        c = cs[0]
                        label = c.label_ru if lang_ru else c.label_en
                        out.append(f"'{key} {'…' if c.value is None else c.value}' ({label})")
                    else:
                        out.append(f"'{key} {'|'.join(str(c.value) for c in cs)}'")
                return "; ".join(out)

            en += " — " + opts(False)
            ru += " — " + opts(True)
        return en, ru
    assert isinstance(gs, GameState), gs  # every game is a TableGame or a 1000-family game
    t = gs.turn
    en = (f"[{gs.to_move}: turn {t.points}, {count_en(t.dice, 'die')}] {a.hint.text_en}")
    ru = (f"[{gs.to_move}: за ход {t.points}, {count_ru(t.dice, 'die')}] {a.hint.text_ru}")
    if a.keep:
        keeps = "; ".join(f"{' '.join(map(str, k.faces))}={k.points}" for k in a.keeps)
        en += f" — keeps: {keeps}"
        ru += f" — варианты: {keeps}"
    return en, ru


def parse_command(line: str, choices: tuple[str, ...] = ()) -> tuple[str, Any]:
    """Parse one typed line of ``kosti play``: returns (command, argument). Commands: ``roll``
    (faces), ``keep`` (faces), ``bank``, ``sheet``, ``undo``, ``help``, ``quit``, ``empty``, and
    ``choose`` ((key, value)) for a word in the game's ``choices`` (value: JSON, else the text).
    Faces may be written "1 5 3" , "1,5,3" or "153". Raises :class:`BadInput`."""
    s = line.strip().lower()
    if not s or s.startswith("#"):
        return "empty", None
    word, _, rest = s.partition(" ")
    if word in choices:
        rest = line.strip().partition(" ")[2].strip()  # names keep their case
        value: Any = rest
        if rest[:1] in ("[", "{", '"'):  # JSON where it is plainly JSON; else the game reads the text
            try:
                value = json.loads(rest)
            except json.JSONDecodeError:
                raise BadInput(f"{word}: malformed JSON {rest!r}", f"{word}: ошибка в JSON {rest!r}") from None
        elif not rest:
            raise BadInput(f"{word}: give a value (type 'help')", f"{word}: укажите значение (введите «help»)")
        return "choose", (word, value)
    if word in ("bank", "b", "stop", "хватит", "стоп"):
        return "bank", None
    if word in ("sheet", "score", "s", "счёт", "счет"):
        return "sheet", None
    if word in ("undo", "u", "отмена"):
        return "undo", None
    if word in ("help", "h", "?", "помощь"):
        return "help", None
    if word in ("quit", "q", "exit", "выход"):
        return "quit", None
    if word in ("keep", "k", "отложить"):
        return "keep", _parse_faces(rest)
    if word in ("roll", "r", "throw"):
        return "roll", _parse_faces(rest)
    return "roll", _parse_faces(s)


def _parse_faces(text: str) -> list[int]:
    tokens = text.replace(",", " ").split()
    if len(tokens) == 1 and tokens[0].isdigit() and len(tokens[0]) > 1:
        tokens = list(tokens[0])
    faces = []
    for tok in tokens:
        if not tok.isdigit():
            raise BadInput(f"not a face or a command: {tok!r} (type 'help')",
                           f"это не очки и не команда: {tok!r} (введите «help» — помощь)")
        v = int(tok)
        if not 1 <= v <= 6:
            raise BadInput(f"a face must be 1-6, got {v}", f"на грани бывает от 1 до 6, а введено {v}")
        faces.append(v)
    if not faces:
        raise BadInput("no faces given", "очки не введены")
    return faces


HELP_EN = ("Type the faces you threw: '1 5 3 3 4' or '15334'. 'keep 1 5' sets aside chosen "
           "scoring dice (where the rules let you choose). 'bank' (or 'хватит') stops and records. "
           "'sheet' shows the score, 'undo' takes back the last action, 'quit' leaves (the game is "
           "saved with --save).")
HELP_RU = ("Введите выпавшие очки: «1 5 3 3 4» или «15334». «keep 1 5» — отложить выбранные "
           "зачётные кости (если правила позволяют). «хватит» (bank) — остановиться и записать. "
           "«sheet» — счёт, «undo» — отменить последнее действие, «quit» — выход.")


def _save(path: str | None, gs: Game, history: list[dict[str, Any]],
          initial: Game) -> None:
    """Write ``{"format", "state", "initial", "actions"}`` atomically (the initial state and the
    actions let a resumed game take back earlier actions)."""
    if not path:
        return
    doc = {"format": "kosti-play/1", "state": gs.to_json(), "initial": initial.to_json(),
           "actions": history}
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError as exc:
        raise BadInput(f"{path}: cannot save the game ({exc.strerror or exc})") from None


def _check_save_path(path: str) -> None:
    """Refuse a ``--save`` path that can never be written before the game starts (one line, exit 2), not after
    the first throw: a folder, a folder that is missing or is a regular file (``/tmp/file.csv/s.json``), or a
    folder nothing can be written in (a probe file is made and removed). Standard library only: the rules engine
    imports nothing else from kosti (``kosti.common.writable`` does the same for the other commands)."""
    if os.path.isdir(path):
        raise BadInput(f"{path}: cannot save the game (it is a folder, not a file)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        near = folder
        while not os.path.exists(near) and os.path.dirname(near) != near:
            near = os.path.dirname(near)
        why = f"the folder {folder} does not exist" if os.path.isdir(near) else f"{near} is a file, not a folder"
        raise BadInput(f"{path}: cannot save the game ({why})")
    try:
        fd, probe = tempfile.mkstemp(prefix=".kosti-write-check-", dir=folder)
    except OSError as exc:
        raise BadInput(f"{path}: cannot save the game ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def _load_save(path: str) -> tuple[list[Game], list[dict[str, Any]]]:
    """The states (initial … current) and actions of a saved game. When the saved initial state
    and actions do not reproduce the saved state, only the saved state is used (no undo)."""
    doc = _read_json(path)
    if not isinstance(doc, dict) or "state" not in doc:
        raise BadInput(f"{path}: not a game saved by 'kosti play --save'")
    gs = game_from_json(doc["state"])
    history = doc.get("actions", [])
    history = list(history) if isinstance(history, list) else []
    if "initial" in doc:
        try:
            states = [game_from_json(doc["initial"])]
            for raw in history:
                states.append(states[-1].apply(states[-1].parse_action(raw))[0])
            if states[-1] == gs:
                return states, history
        except (BadInput, RuleViolation):
            pass
    return [gs], []


def sample_game(name: str = "game") -> dict[str, Any]:
    """A bundled sample game (replay format, cli.md): ``game`` = ``engine/data/sample_game.json``
    (classic), ``farkle`` = ``engine/data/sample_farkle.json`` (farkle_official, final round)."""
    text = resources.files(__package__).joinpath("data", SAMPLES[name]).read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def _play_start(args: argparse.Namespace, out: TextIO, lang: str
                ) -> tuple[Game, Any, bool, list[Game], list[dict[str, Any]]]:
    """The opening of ``kosti play``: ``(game, input lines, echo them, states so far, actions so far)`` for
    ``--sample`` (the sample's events as the input), ``--resume`` (the saved game, then stdin) or a new game of
    ``--players`` under ``--rules`` (a preset name of either family or a rules file). Raises :class:`BadInput`."""
    if args.sample:
        gs, recorded = game_from_record(sample_game(args.sample))
        return gs, iter(_event_line(e) for e in recorded), True, [gs], []
    if args.resume:
        states, history = _load_save(args.resume)
        if args.save is None:
            args.save = args.resume
        _say(out, lang, f"Resumed {args.resume}", f"Игра продолжена: {args.resume}")
        return states[-1], sys.stdin, not sys.stdin.isatty(), states, history
    if not args.players:
        raise BadInput("--players is required (e.g. --players Ann,Boris), or use --resume")
    names = [n.strip() for n in args.players.split(",") if n.strip()]
    spec = args.rules
    rules: Any = spec  # a preset name of either family (new_any_game names them all when unknown)
    if spec.endswith((".json", ".toml")) or os.sep in spec:  # a rules file: 1000 family or another game
        doc = read_rules_document(spec)
        rules = doc if is_game_preset(doc) else resolve_rules(doc)
    gs = new_any_game(rules, names)
    return gs, sys.stdin, not sys.stdin.isatty(), [gs], []


def _say_rules(out: TextIO, lang: str, gs: Game) -> None:
    """The ``Rules: …`` line that opens ``kosti play``: the preset's title and description in the language(s) asked."""
    preset = _preset_of(gs)
    if preset is not None:
        from .titles import preset_title

        title_en, title_ru = preset_title(preset.name)
        _say(out, lang, f"Rules: {title_en} ({preset.name}) — {preset.description}",
             f"Правила: {title_ru} ({preset.name}) — {preset.description_ru}")
        return
    from .titles import DESCRIPTIONS_RU, preset_title

    assert isinstance(gs, GameState), gs  # a game without a games.md preset is the 1000 family
    rules = gs.rules
    title_en, title_ru = preset_title(rules.name)
    _say(out, lang, f"Rules: {title_en} ({rules.name}) — {rules.description}",
         f"Правила: {title_ru} ({rules.name}) — {DESCRIPTIONS_RU.get(rules.name, rules.description)}")


def run_play(args: argparse.Namespace) -> int:
    """Handler of ``kosti play``: the opening (:func:`_play_start`), then one command per input line until the
    game ends, the input ends or ``quit``; every change saved to ``--save`` at once."""
    lang = args.lang
    out = sys.stdout
    if args.save:
        _check_save_path(args.save)
    gs, lines, echo, states, history = _play_start(args, out, lang)
    _say_rules(out, lang, gs)
    print(_sheet(gs, lang), file=out)
    _save(args.save, gs, history, states[0])
    while True:
        if gs.over:
            break
        en, ru = _prompt(gs, lang)
        _say(out, lang, en, ru)
        try:
            line = next(iter(lines)) if not isinstance(lines, list) else None
        except StopIteration:
            break
        if line is None:
            break
        if echo:
            print(f"> {line.strip()}", file=out)
        try:
            cmd, arg = parse_command(line, gs.CHOICES)
        except BadInput as exc:
            _say(out, lang, f"? {exc}", f"? {exc.reason_ru}")
            continue
        if cmd == "empty":
            continue
        if cmd == "quit":
            break
        if cmd == "help":
            _say(out, lang, HELP_EN, HELP_RU)
            if gs.CHOICES:
                _say(out, lang, f"Choices of this game: {', '.join(gs.CHOICES)} VALUE",
                     f"Выбор в этой игре: {', '.join(gs.CHOICES)} ЗНАЧЕНИЕ")
            continue
        if cmd == "sheet":
            print(_sheet(gs, lang), file=out)
            continue
        if cmd == "undo":
            if len(states) > 1:
                states.pop()
                history.pop()
                gs = states[-1]
                _say(out, lang, "Last action taken back", "Последнее действие отменено")
                _save(args.save, gs, history, states[0])
            else:
                _say(out, lang, "Nothing to take back", "Нечего отменять")
            continue
        action = (Roll(arg) if cmd == "roll" else Keep(arg) if cmd == "keep"
                  else Choose(*arg) if cmd == "choose" else Bank())
        try:
            new, events = gs.apply(action)
        except RuleViolation as exc:
            _say(out, lang, *_not_allowed(exc))
            continue
        except BadInput as exc:
            _say(out, lang, f"? {exc}", f"? {exc.reason_ru}")
            continue
        for e in events:
            _say(out, lang, e.text_en, e.text_ru)
        if any(e.kind in ("bank", "turn", "win", "instant_win", "round") for e in events):
            print(_sheet(new, lang), file=out)
        gs = new
        states.append(gs)
        history.append(action_to_json(action))
        _save(args.save, gs, history, states[0])
    if not gs.over:
        print(_sheet(gs, lang), file=out)
    return 0


def _event_line(e: Any) -> str:
    if isinstance(e, dict) and "roll" in e:
        return " ".join(map(str, e["roll"]))
    if isinstance(e, dict) and "keep" in e:
        return "keep " + " ".join(map(str, e["keep"]))
    if isinstance(e, dict) and len(e) == 1 and "bank" not in e:
        (key, value), = e.items()
        return f"{key} {json.dumps(value, ensure_ascii=False)}"
    return "bank"


def _preset_of(gs: Game) -> GamePreset | None:
    """The games.md preset of a game (None for the 1000 family)."""
    from .games import GAME_PRESETS

    return GAME_PRESETS.get(gs.rules_name) if isinstance(gs, TableGame) else None
