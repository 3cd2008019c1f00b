"""The game view-model: a game state (any game of :mod:`kosti.engine.games`) as the dashboard's JSON view,
stored throws and actions in words, and the few engine helpers the table needs (presets, new games, state
JSON, the dice counts of the next roll).

Pure functions of engine objects and store rows: no threads, no I/O beyond the :class:`Store` reads that
:func:`throw_view` and :func:`banner` make.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import JsonValue

from kosti.dashboard.json_values import JsonObject, json_faces, json_int
from kosti.dashboard.store import Store, ThrowRow
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.game import Bank
from kosti.engine.game import GameState as EngineGameState
from kosti.engine.games import GAME_PRESETS, Game, TableGame, game_from_json, game_presets, new_any_game
from kosti.engine.games.base import Moves
from kosti.engine.kinds import TurnOutcome
from kosti.engine.plurals import noun
from kosti.engine.records import Event, Reason
from kosti.engine.rules import MAX_PARAMETER as MAX_RULE_NUMBER  # noqa: F401 - the request models' bound
from kosti.engine.rules import Rules
from kosti.engine.titles import DESCRIPTIONS_RU, family_title, preset_title

#: The game on the table: any game of :mod:`kosti.engine.games` (1000 family or games.md).
GameState = Game

def list_presets() -> list[JsonObject]:
    """Every rule preset as ``{"name", "game", "dice", "target", "description", "parameters"}`` (cli.md
    ``kosti rules``) with its human name (``title`` / ``title_ru``, :mod:`kosti.engine.titles`) and
    ``description_ru``: the 1000 family (``"game": "1000"``, with its ``summary``), then the games of games.md
    with their rules pages (``rules_en`` / ``rules_ru``)."""
    from kosti.engine import list_presets as _list

    out: list[JsonObject] = [{"name": r.name, "game": "1000", "dice": r.dice_count, "target": r.target,
            "description": r.description, "description_ru": DESCRIPTIONS_RU.get(r.name, r.description),
            "title": preset_title(r.name)[0], "title_ru": preset_title(r.name)[1],
            "summary": rules_summary(r), "parameters": r.to_dict()} for r in _list()]
    for p in game_presets():
        g = GAME_PRESETS[p["name"]]
        title_en, title_ru = preset_title(p["name"])
        out.append({**p, "title": title_en, "title_ru": title_ru, "rules_en": g.rules_en, "rules_ru": g.rules_ru})
    return out


def make_game(preset: str, overrides: JsonObject | None, players: list[str]) -> Game:
    """A fresh game of any preset. Raises :class:`BadInput` (unknown preset/parameter, bad players)."""
    rules: str | JsonObject = {"preset": preset, "overrides": overrides or {}} if overrides else preset
    return new_any_game(rules, players)


def state_to_json(state: Game) -> str:
    """Serialise the game state (``to_json`` dict → text)."""
    return json.dumps(state.to_json(), ensure_ascii=False)


def state_from_json(text: str) -> Game:
    """Restore a game state written by :func:`state_to_json` (any game; 1000-family states stored before the
    games interface load unchanged)."""
    return game_from_json(json.loads(text))


def roll_sizes(state: Game | EngineGameState) -> tuple[int, ...]:
    """Every dice count the next ``Roll`` may have (one count when the keep is automatic, several in a keep
    phase where throwing k dice means keeping the rest)."""
    return tuple(state.roll_sizes())


def score_of(state: Game, name: str) -> int:
    """Recorded score of the player called ``name`` (the game's unit)."""
    return state.scores_list()[list(state.player_names).index(name)]


def _reason(r: Reason | None) -> JsonObject | None:
    return None if r is None else {"en": r.text_en, "ru": r.text_ru}


def view_state(game: Game | EngineGameState) -> JsonObject:
    """Game state → the dashboard's JSON view (scoreboard, turn, allowed actions with reasons). The same keys
    for every game; ``game`` names it (``"1000"``, ``"pig"``, …). A bare 1000-family ``GameState`` is viewed
    as its game."""
    if isinstance(game, TableGame):
        return _table_game_view(game)
    state = game
    assert isinstance(state, EngineGameState), state  # every game is a TableGame or the 1000 family's GameState
    s = state.summary()
    r = state.rules
    for i, p in enumerate(s["players"]):
        ps = state.players[i]
        p["to_move"] = (not state.over) and i == state.turn.player
        p["admission_score"] = ps.admission_score
        p["farkles"] = ps.farkles
        pit = r.pit_of(ps.score)
        p["pit"] = None if pit is None else {"lo": pit.lo, "hi": pit.hi}
        # the scoreboard's barrel line: "on the barrel, needs 120 (attempts 1 of 3)" / "на бочке, …"
        p["barrel"] = _reason(state.barrel_status(i))
    a = state.moves()
    t = state.turn
    title_en, title_ru = family_title(r.name)
    return {
        "game": "1000",
        "title": {"en": title_en, "ru": title_ru},
        "has_stop": True,
        "setup": False,
        "has_turn_points": True,
        "rules": s["rules"],
        "winner": s["winner"],
        "over": state.over,
        "to_move": s["to_move"],
        "players": s["players"],
        "turn": {
            "player": s["to_move"], "turn_points": s["turn"]["turn_points"], "dice_to_throw": state.dice_to_throw,
            "throws": t.throws, "hot": t.hot, "confirm": t.confirm, "last_roll": list(t.last_roll),
            "last_keep": list(t.last_keep), "pending_keep": None if t.pending is None else list(t.pending),
            "phase": state.phase,
        },
        "allowed": {
            "roll": a.roll, "dice": a.dice, "keep": a.keep, "bank": a.bank, "dice_options": list(roll_sizes(state)),
            "keeps": [{"faces": list(k.faces), "points": k.points} for k in a.keeps],
            "why_not_roll": _reason(a.why_not_roll), "why_not_bank": _reason(a.why_not_bank),
            "hint": _reason(a.hint),
        },
        "choose_keep": r.selection.set_aside == "at_least_one",
        "rules_summary": rules_summary(r),
        # the limits the scoreboard counts against ("bolts 2 of 3", "on the barrel 1 of 3")
        "rules_params": {"bolt_limit": r.bolts.limit if r.bolts.enabled else None,
                         "barrel_attempts": r.barrel.attempts if r.barrel.kind != "none" else None,
                         "fall_limit": r.barrel.max_falls if r.barrel.kind != "none" else None},
        "dice_count": r.dice_count,
        "log_tail": list(s["log"][-8:]),
    }


def _moves_view(m: Moves, sizes: tuple[int, ...]) -> JsonObject:
    return {"roll": m.roll, "dice": m.dice, "keep": m.keep, "bank": m.bank, "dice_options": list(sizes),
            "keeps": [{"faces": list(k.faces), "points": k.points} for k in m.keeps],
            "why_not_roll": _reason(m.why_not_roll), "why_not_bank": _reason(m.why_not_bank),
            "hint": _reason(m.hint), "choices": [c.to_json() for c in m.choices],
            "bank_label": _reason(m.bank_label)}


def _table_game_view(g: TableGame) -> JsonObject:
    """The view of a games.md game: players carry ``tags`` (``{"en", "ru"}`` marks) and the game's own keys;
    ``status`` is the game's one-line state; ``rules_page`` its rules in both languages."""
    s = g.summary()
    preset = GAME_PRESETS.get(g.params.name)
    for i, p in enumerate(s["players"]):
        p["to_move"] = (not g.over) and i == g.mover
        p["tags"] = [{"en": en, "ru": ru} for en, ru in g.marks(i)]
    unit_en, unit_ru = g.SCORE_UNIT
    extra = {k: v for k, v in s.items() if k not in ("game", "rules", "winner", "to_move", "players", "turn", "log")}
    desc = [{"en": preset.description, "ru": preset.description_ru}] if preset else []
    title_en, title_ru = g.title
    return {
        "game": g.game,
        "title": {"en": title_en, "ru": title_ru},
        "has_stop": g.HAS_STOP,
        "setup": g.in_setup,
        # a running total of the turn only where the game has one (Pig's series, Thirteen's running number)
        "has_turn_points": type(g).turn_points is not TableGame.turn_points,
        "rules": s["rules"],
        "winner": s["winner"],
        "over": g.over,
        "to_move": s["to_move"],
        "players": s["players"],
        "turn": {"player": s["to_move"], "turn_points": s["turn"]["turn_points"], "dice_to_throw": g.dice_to_throw,
                 "throws": 0, "hot": False, "confirm": False, "last_roll": [], "last_keep": [],
                 "pending_keep": None, "phase": "over" if g.over else "roll"},
        "allowed": _moves_view(g.moves(), roll_sizes(g) if not g.over else ()),
        "choose_keep": False,
        "rules_summary": desc,
        "score_unit": {"en": unit_en, "ru": unit_ru},
        "status": _reason(g.status()) if not g.over else None,
        "rules_page": {"en": preset.rules_en, "ru": preset.rules_ru} if preset else None,
        "game_state": extra,
        "dice_count": preset.dice if preset else g.dice_to_throw,
        "log_tail": list(s["log"][-8:]),
    }


def rules_summary(r: Rules) -> list[JsonValue]:
    """The house-rule modules in force, one ``{"en", "ru"}`` line each (rule names in both languages)."""
    out: list[JsonValue] = [{"en": f"{r.dice_count} dice, to {r.target}", "ru": f"{r.dice_count} костей, до {r.target}"}]
    if r.opening.threshold:
        out.append({"en": f"opening {r.opening.threshold}", "ru": f"вход {r.opening.threshold}"})
    if r.pits:
        z = ", ".join(f"{p.lo}–{p.hi}" for p in r.pits)
        out.append({"en": f"pits / ямы {z}", "ru": f"ямы / pits {z}"})
    if r.overtaking.enabled:
        out.append({"en": f"overtaking / обгон −{r.overtaking.penalty}", "ru": f"обгон / overtaking −{r.overtaking.penalty}"})
    if r.dump_truck.enabled:
        out.append({"en": f"dump truck / самосвал {r.dump_truck.value}", "ru": f"самосвал / dump truck {r.dump_truck.value}"})
    if r.bolts.enabled:
        out.append({"en": f"bolts / болты {r.bolts.limit} → −{r.bolts.penalty}",
                    "ru": f"болты / bolts {r.bolts.limit} → −{r.bolts.penalty}"})
    if r.barrel.kind != "none":
        en_k, ru_k = _BARREL_KIND_WORDS.get(r.barrel.kind, (r.barrel.kind, r.barrel.kind))
        out.append({"en": f"barrel / бочка ({en_k}) {r.barrel.entry}",
                    "ru": f"бочка / barrel ({ru_k}) {r.barrel.entry}"})
    return out


#: ``barrel.kind`` (rules.md §3.6) in words, ``(English, Russian)``, for the rules line.
_BARREL_KIND_WORDS = {"points": ("points", "по очкам"), "open": ("open, exact 1000", "открытая, ровно 1000"),
                      "capped": ("capped", "с потолком"), "final_range": ("final range", "зона перед финишем")}


def event_json(e: Event) -> JsonObject:
    """One engine event as JSON (``kind``, ``player``, ``points``, ``faces``, ``text_en``, ``text_ru``)."""
    return e.to_json()


#: Engine event kinds that mean the throw scored nothing and the turn's points are lost.
BUST_KINDS = {"bust", "three_farkles", "toxic_twos"}
#: Engine event kinds the whole table must see as a banner, most important first.
BANNER_KINDS = ("win", "instant_win", "dump_truck", "overtaken", "knocked_off", "fall", "bolt_penalty", "bolt",
                "pit", "barrel", "capped", "overshoot", "dot", "three_farkles", "toxic_twos", "bust", "skip_turn")


def score_changes(before_json: str, after_json: str) -> list[JsonValue]:
    """Players whose recorded score differs between two stored engine states: ``[{"player", "before", "after"}]``."""
    return [{"player": n, "before": before, "after": after} for n, before, after in score_deltas(before_json, after_json)]


def score_deltas(before_json: str, after_json: str) -> list[tuple[str, int, int]]:
    """:func:`score_changes` as tuples: ``(player, before, after)`` for every player whose recorded score
    differs between two stored engine states; none when a state does not load."""
    try:
        a, b = state_from_json(before_json), state_from_json(after_json)
    except (BadInput, KeyError, ValueError):
        return []
    return [(n, score_of(a, n), score_of(b, n)) for n in a.player_names if score_of(a, n) != score_of(b, n)]


#: The engine's :class:`~kosti.engine.kinds.TurnOutcome` as the word a turn row stores (``turns.outcome``),
#: the words the score sheet already knows (``OUTCOMES`` in ``static/app.js``): a dump is ``dump_truck``.
TURN_OUTCOME_WORDS: dict[TurnOutcome, str] = {
    TurnOutcome.BANK: "bank", TurnOutcome.BUST: "bust", TurnOutcome.DUMP: "dump_truck",
    TurnOutcome.OVERSHOOT: "overshoot", TurnOutcome.INSTANT_WIN: "instant_win",
}


def turn_outcome(events: Sequence[Event], over: bool) -> str | None:
    """How the action's ``events`` ended a turn, as the word the turn row stores, or ``None`` when no
    event carries an outcome (:attr:`Event.outcome`, set by the engine on the one event of an action that
    ends a turn, rules.md §3.13). A game the action ended (``over``) records ``win`` unless the turn itself
    was an instant win (§3.10); the table games of games.md mark no outcome, so their last turn is ``win``
    and their other turns ``None`` (the caller records ``end``)."""
    marked = next((e.outcome for e in events if e.outcome is not None), None)
    if marked is TurnOutcome.INSTANT_WIN:
        return TURN_OUTCOME_WORDS[marked]
    if over:
        return "win"
    return None if marked is None else TURN_OUTCOME_WORDS[marked]


def faces_text(faces: list[int]) -> str:
    """``[1, 1, 5]`` → ``"1 1 5"`` (0 = an unread die → ``?``)."""
    return " ".join(str(f) if f else "?" for f in faces)


def dice_ru(n: int) -> str:
    """The Russian word for "dice" after the number ``n`` (кость / кости / костей;
    :func:`kosti.engine.plurals.noun`)."""
    return noun(n, "die", "ru")


def action_text(kind: str, payload: JsonObject) -> tuple[str, str]:
    """A stored action in words, ``(English, Russian)``: "throw 1 1 5" / "бросок 1 1 5"."""
    faces = faces_text(json_faces(payload.get("faces")))
    if kind == "roll":
        return f"throw {faces}", f"бросок {faces}"
    if kind == "keep":
        return f"set aside {faces}", f"отложено {faces}"
    if kind == "bank":
        return "stop (record the turn)", "«хватит» (запись хода)"
    return kind, kind


#: The engine's reasons for refusing rule changes (``kosti.engine.rules``, English), in Russian: ``(regex,
#: replacement)`` applied to the text after the parameter path; the path (``opening.threshold``) is what the
#: table typed and stays as typed.
_RULES_REASONS_RU: tuple[tuple[str, str], ...] = (
    (r"unknown rule parameter \(known here: (.*)\)$", r"неизвестный параметр правил (здесь есть: \1)"),
    (r"expected an integer, got (.*)$", r"нужно целое число, а не \1"),
    (r"expected an object, got (.*)$", r"нужен объект JSON {…}, а не \1"),
    (r"expected a list, got (.*)$", r"нужен список, а не \1"),
    (r"expected true/false, got (.*)$", r"нужно true или false, а не \1"),
    (r"expected a string, got (.*)$", r"нужна строка, а не \1"),
    (r"expected (\d+) items, got (\d+)$", r"нужно элементов: \1, а дано \2"),
    (r"(.*) is not one of (.*)$", r"\1 — нет такого значения; можно: \2"),
    (r"(.*) is out of range \(at most (.*) either way\)$", r"\1 — вне допустимого (не больше \2 по модулю)"),
    (r"must be >= (\S+), got (.*)$", r"должно быть не меньше \1, а дано \2"),
    (r"must be positive, got (.*)$", r"должно быть больше нуля, а дано \1"),
    (r"may not be null$", r"не может быть null"),
    (r"unknown preset (.*); choose one of (.*) \(the 1000 family\) or (.*) \(the other games\)$",
     r"нет набора правил \1; есть: \2 (семейство «Тысячи») или \3 (другие игры)"),
    (r"unknown preset (.*); choose one of (.*)$", r"нет набора правил \1; есть: \2"),
    (r"these rules score 5 dice \(the 1000 family\); 6 dice are played with a Farkle or 10000 preset, got (.*)$",
     r"эти правила считают 5 костей (семейство «Тысячи»); 6 костями играют в фаркл или 10000, а дано \1"),
    (r"these rules score 5 or 6 dice, got (.*)$", r"эти правила считают 5 или 6 костей, а дано \1"),
    (r"the scoring of these rules has no such switch$", r"в подсчёте очков этих правил такого переключателя нет"),
)


def rules_reason_ru(msg: str) -> str:
    """The engine's English reason for refusing rule changes (``"opening.threshold: expected an integer, got
    'x'"``) in Russian (``"opening.threshold: нужно целое число, а не 'x'"``), by :data:`_RULES_REASONS_RU`;
    a reason without a Russian form is given as it is."""
    path, sep, reason = msg.partition(": ")
    if not sep:
        path, reason = "", msg
    for pattern, ru in _RULES_REASONS_RU:
        text, n = re.subn(pattern, ru, reason, count=1)
        if n:
            return (f"{path}: " if path else "") + text
    return msg


def _throw_outcome(before_json: str, after_json: str, events: list[JsonObject],
                   player: str | None) -> tuple[str, int | None]:
    """What an applied throw did: ``(outcome, points)`` for :func:`throw_view`. The 1000 family: ``bust`` or
    ``scored`` with the throw's points (its ``throw`` events). The other games: ``setup`` for an order or
    set-up throw (:attr:`Game.in_setup`), ``bust`` for a lost series, ``scored`` with the change of the
    thrower's score and turn points (negative when a throw gives dice away, Aces), ``miss`` when the throw
    changed neither (a Chicago throw off the round's sum)."""
    kinds = {e["kind"] for e in events}
    if kinds & BUST_KINDS:
        return "bust", 0
    before: Game | None
    after: Game | None
    try:
        before, after = state_from_json(before_json), state_from_json(after_json)
    except (BadInput, KeyError, ValueError):
        before = after = None
    if not isinstance(before, TableGame) or not isinstance(after, TableGame):
        return "scored", sum(json_int(e.get("points")) for e in events if e["kind"] == "throw")
    if before.in_setup:
        return "setup", None
    who = player if player in before.player_names else before.to_move
    if who is None:
        return "miss", 0
    seat = list(before.player_names).index(who)
    gain = after.scores_list()[seat] - before.scores_list()[seat]
    if after.to_move == who and before.to_move == who:  # the turn goes on: its points count too
        gain += after.turn_points - before.turn_points
    return ("scored" if gain else "miss"), gain


def throw_view(store: Store, t: ThrowRow) -> JsonObject:
    """A stored throw as JSON. ``outcome`` says what the throw did once scored: ``scored`` (``points``
    added to the turn, or the score change of another game), ``bust`` (nothing scored, the turn is lost),
    ``miss`` (another game's throw that changed nothing), ``setup`` (an order or set-up throw, no one's turn),
    or ``None`` while it is not scored."""
    outcome: str | None = None
    points: int | None = None
    events: list[JsonObject] = []
    if t.resolution in ("applied", "corrected"):
        act = store.action_for_throw(t.id)
        if act is not None:
            events = act.events
            outcome, points = _throw_outcome(act.state_before_json, act.state_after_json, events, t.player)
    return {
        "id": t.id, "faces": list(t.faces), "confidences": list(t.confidences),
        "boxes": [list(b) for b in t.boxes], "status": t.status, "reasons": list(t.reasons),
        "resolution": t.resolution, "player": t.player, "turn_no": t.turn_no,
        "image_url": f"/api/throws/{t.id}/image.jpg" if t.has_image else None,
        "created_at": t.created_at, "source": t.source, "outcome": outcome, "points": points,
        "events": [e for e in events if e["kind"] != "turn"],
    }


def banner(store: Store, game_id: int | None) -> JsonObject | None:
    """What the latest action did that the whole table must see (bust, bolt, dump truck, pit, barrel,
    overtaking, fall, win …): ``{"id": action id, "kind", "events": [...], "changes": [{"player",
    "before", "after"}]}`` or ``None``. ``kind`` is the most important event kind (:data:`BANNER_KINDS`
    order); ``changes`` lists every player whose recorded score the action changed."""
    if game_id is None:
        return None
    act = store.last_live_action(game_id)
    if act is None:
        return None
    kinds = [e["kind"] for e in act.events]
    kind = next((k for k in BANNER_KINDS if k in kinds), None)
    if kind is None:
        return None
    lost = None
    if kind in BUST_KINDS:
        try:
            before = state_from_json(act.state_before_json)
        except (BadInput, KeyError, ValueError):
            before = None
        if isinstance(before, EngineGameState):  # only the 1000 family has turn points to lose
            lost = before.turn.points or None
    return {"id": act.id, "kind": kind, "player": act.player, "created_at": act.created_at, "lost": lost,
            "events": [e for e in act.events if e["kind"] in BANNER_KINDS or e["kind"] in ("bank", "throw")],
            "changes": score_changes(act.state_before_json, act.state_after_json)}


def bank_preview(st: Game | None) -> JsonObject | None:
    """What Stop ("хватит") would do now, computed by the engine on a copy of the state (nothing is
    stored): ``{"events": [...], "changes": [{"player", "before", "after"}], "warn": bool}``; ``warn``
    when stopping costs someone points or hits a rule (pit, dump truck, overtaking, barrel, bolt).
    ``None`` when Stop is not allowed (or there is no game)."""
    if st is None or st.over or not st.moves().bank:
        return None
    try:
        after, events = st.apply(Bank())
    except (RuleViolation, BadInput):
        return None
    shown = [e for e in events if e.kind != "turn"]
    evs: list[JsonValue] = [event_json(e) for e in shown]
    deltas = score_deltas(state_to_json(st), state_to_json(after))
    changes: list[JsonValue] = [{"player": n, "before": b, "after": a} for n, b, a in deltas]
    warn = any(e.kind in BANNER_KINDS for e in shown) or any(a < b for _, b, a in deltas) \
        or (bool(deltas) and not any(a > b for _, b, a in deltas))
    return {"events": evs, "changes": changes, "warn": warn}
