"""The games of games.md (engine/games): every rule and decision as a data-driven replay case
(tests/engine/data/games_vectors.json, played through ``kosti replay``'s engine and its CLI), and
a random-play property test per game: never crashes, scores change only through a scoring event,
the JSON round trip is exact, forbidden actions are refused with a reason."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kosti.cli import main
from kosti.engine import Bank, Keep, Roll
from kosti.engine.cli import replay
from kosti.engine.errors import BadInput, RuleViolation
from kosti.engine.games import (
    GAME_PRESETS,
    SCORE_KINDS,
    Choose,
    Game,
    GameState,
    Moves,
    TableGame,
    find_game,
    game_from_json,
    game_preset,
    new_any_game,
)
from kosti.engine.games.four_dice import P_SIX

VECTORS = json.loads((Path(__file__).parent / "data" / "games_vectors.json")
                     .read_text(encoding="utf-8"))["cases"]


def _doc(case: dict) -> dict:
    doc = {"rules": case["rules"], "players": case["players"], "events": case["events"]}
    if "scores" in case:
        doc["scores"] = case["scores"]
    return doc


def _subset(expected, actual, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        for k, v in expected.items():
            assert k in actual, f"{where}.{k} missing"
            _subset(v, actual[k], f"{where}.{k}")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize("case", VECTORS, ids=[c["id"] for c in VECTORS])
def test_games_md_rule(case):
    """One rule or decision of games.md: replay the events and check the outcome."""
    doc = _doc(case)
    if case.get("error") == 2:
        with pytest.raises(BadInput):
            replay(doc)
        return
    state, idx, err = replay(doc)
    if case.get("error") == 3:
        assert err is not None and idx == case["event_index"], (idx, err)
        assert err.reason_en and err.reason_ru and err.reason_en != err.reason_ru
        return
    assert err is None, f"event {idx}: {err}"
    exp = case["expect"]
    s = state.summary()
    if "to_move" in exp:
        assert s["to_move"] == exp["to_move"]
    if "winner" in exp:
        assert s["winner"] == exp["winner"]
    if "over" in exp:
        assert state.over is exp["over"]
    for name, score in exp.get("scores", {}).items():
        assert [p["score"] for p in s["players"] if p["name"] == name] == [score], name
    for name, keys in exp.get("players", {}).items():
        _subset(keys, next(p for p in s["players"] if p["name"] == name), name)
    _subset(exp.get("summary", {}), s, "summary")
    for text in exp.get("log_contains", []):
        assert any(text in line for line in s["log"]), (text, s["log"])


@pytest.mark.parametrize("case", [c for c in VECTORS if c.get("error") in (2, 3) or
                                  c["id"] in ("pig-highest-wins-after-round", "buck-last-loses-pays",
                                              "chicago-eleven-rounds")],
                         ids=lambda c: c["id"])
def test_games_md_rule_through_the_cli(case, tmp_path, capsys):
    """The same cases through ``kosti replay --json``: exit 0 / 2 / 3 and one JSON document."""
    path = tmp_path / "game.json"
    path.write_text(json.dumps(_doc(case)), encoding="utf-8")
    code = main(["replay", "--json", str(path)])
    cap = capsys.readouterr()
    assert code == case.get("error", 0), cap.err
    if code == 2:
        assert cap.out == "" and len(cap.err.strip().splitlines()) == 1
        return
    doc = json.loads(cap.out)
    if code == 3:
        assert set(doc) == {"error", "event_index", "state"}
        assert doc["event_index"] == case["event_index"]
        assert doc["state"]["game"] == game_preset(
            case["rules"] if isinstance(case["rules"], str) else case["rules"]["preset"]).game
    else:
        assert doc["winner"] == case["expect"]["winner"]


def test_four_dice_probability_of_the_article():
    """§8: 'the probability of a 6 is 51.8%' (1 − (5/6)^4), and it is what the rule decides over
    all 6^4 throws."""
    assert round(P_SIX * 100, 1) == 51.8
    g = new_any_game("four_dice", ["Ann", "Boris"])
    wins = 0
    for n in range(6 ** 4):
        faces = [n // 6 ** k % 6 + 1 for k in range(4)]
        after, _ = g.apply(Roll(faces))
        wins += after.scores_list()[0]
    assert wins / 6 ** 4 == pytest.approx(P_SIX)


def test_every_game_preset_listed_with_its_game(capsys):
    assert main(["rules", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    games = {p["name"]: p for p in doc["presets"] if p["game"] != "1000"}
    assert set(games) == set(GAME_PRESETS)
    assert {p["game"] for p in games.values()} == {
        "pig", "craps", "aces", "four_dice", "dead_dice", "chicago", "buck_dice",  # camera alone
        "indian_dice", "martinetti", "yacht", "high_dice", "bank_dice", "thirteen",  # a little player input
        "liar_dice", "bluff"}  # referee aids
    for p in games.values():
        assert p["description"] and p["description_ru"] and p["source"].startswith("games.md §")
        assert p["parameters"]["name"] == p["name"]
        assert "decided" in p["description"] or p["name"] in ("craps_seed", "chicago_race")


def test_a_games_own_events_are_in_its_description(capsys):
    """cli.md: ``kosti replay`` plays the other games from ``roll``, ``bank`` "and a game's own choices as documented
    in its description" — each own event is in both descriptions of ``kosti rules --json`` as JSON the replay takes."""
    assert main(["rules", "--json"]) == 0
    doc = {p["name"]: p for p in json.loads(capsys.readouterr().out)["presets"]}
    for name, preset in GAME_PRESETS.items():
        cls = preset.cls
        documented = set()
        for forms, _en, _ru in cls.EVENT_FORMS:
            for form in forms.split(" / "):
                assert form in doc[name]["description"] and form in doc[name]["description_ru"], (name, form)
                (key,) = json.loads(form)
                documented.add(key)
        assert documented == set(cls.CHOICES), name
        if not cls.CHOICES:
            assert "kosti replay" not in doc[name]["description"]


def test_an_unknown_preset_names_the_presets_of_both_families(tmp_path, capsys):
    game = tmp_path / "g.json"
    game.write_text(json.dumps({"rules": "nope", "players": ["Ann", "Boris"], "events": []}))
    for argv in (["replay", "--json", str(game)], ["watch", "--rules", "nope", str(tmp_path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "unknown preset 'nope'" in err and "classic" in err and "pig" in err and "bluff" in err, err
        assert len(err.splitlines()) == 1


def test_rules_pages_in_both_languages():
    for p in GAME_PRESETS.values():
        assert len(p.rules_en.split("\n\n")) >= 2 and len(p.rules_ru.split("\n\n")) >= 2
        assert any("\u0400" <= ch <= "\u04ff" for ch in p.rules_ru)
        assert not any("\u0400" <= ch <= "\u04ff" for ch in p.rules_en.replace("«", ""))


def test_the_1000_family_is_the_engine_state_itself():
    """The 1000 family implements the game interface directly: ``new_any_game`` gives a :class:`GameState`
    (no adapter), its moves are the one :class:`Moves` type, the JSON round trip is exact, a game's own choice is
    refused with the reason in both languages, and the registry finds it by game id and by every preset name."""
    g = new_any_game("classic", ["Ann", "Boris"])
    assert type(g) is GameState and isinstance(g, Game) and g.game == "1000"
    g2, evs = g.apply(Roll((1, 5, 3, 3, 4)))
    assert [e.points for e in evs if e.kind == "throw"] == [15] and g2.turn_points == 15
    assert game_from_json(json.loads(json.dumps(g2.to_json()))) == g2
    m = g2.moves()
    assert type(m) is Moves and m.choices == () and m.roll and m.dice == 3 and not m.bank  # opening 50 not reached
    assert g2.scores_list() == (0, 0) and g2.player_names == ("Ann", "Boris") and g2.rules_name == "classic"
    with pytest.raises(RuleViolation) as exc:
        g2.apply(Choose("op", "plus"))
    assert "op" in exc.value.reason_en and "выбора" in exc.value.reason_ru
    assert find_game("1000") is GameState and find_game("farkle") is GameState
    assert find_game("pig") is GAME_PRESETS["pig"].cls is find_game("pig")
    assert find_game("craps_seed") is GAME_PRESETS["craps"].cls
    with pytest.raises(BadInput, match="unknown preset 'nope'"):
        find_game("nope")


def test_saved_state_with_a_wrong_format_is_bad_input():
    g = new_any_game("pig", ["Ann"])
    d = g.to_json()
    with pytest.raises(BadInput):
        game_from_json({**d, "format": "kosti-nope/1"})
    with pytest.raises(BadInput):
        game_from_json({**d, "mover": 7})
    with pytest.raises(BadInput):
        game_from_json({**d, "surprise": 1})


# ------------------------------------------------------------------------------ random play

def _players(name: str, n: int) -> list[str]:
    lo, hi = game_preset(name).cls.PLAYERS
    return [f"P{i}" for i in range(max(lo, min(hi, n)))]


#: Shorter games for the property test (the rules are the same; only the goal is nearer).
SHORT = {"thirteen": {"target": 1}, "pig": {"target": 40}}


def _random_game(name: str, n_players: int, seed: int, max_actions: int = 3000):
    """Yield (state, action, new_state, events) of random legal play."""
    rng = random.Random(seed)
    rules = {"preset": name, "overrides": SHORT[name]} if name in SHORT else name
    g = new_any_game(rules, _players(name, n_players))
    for _ in range(max_actions):
        if g.over:
            return
        m = g.moves()
        choice = g.random_choice(rng)
        if choice is not None and (not m.roll or rng.random() < 0.5):
            a = choice
        elif m.bank and rng.random() < 0.25:
            a = Bank()
        else:
            assert m.roll, f"{name}: nothing to do in {g.summary()}"
            a = Roll(tuple(rng.randint(1, 6) for _ in range(m.dice)))
        new, evs = g.apply(a)
        yield g, a, new, evs
        g = new


@pytest.mark.parametrize("name", list(GAME_PRESETS))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_players=st.integers(1, 6))
def test_random_play(name, seed, n_players):
    """Never crashes; scores change only through scoring events (points = the change); the JSON
    round trip is exact; a refused stop or keep says why in both languages; the game ends."""
    last = None
    for before, action, after, evs in _random_game(name, n_players, seed):
        assert isinstance(after, TableGame) and after.names == before.names
        delta = [a - b for a, b in zip(after.scores_list(), before.scores_list())]
        by_events = [0] * len(delta)
        for e in evs:
            assert e.text_en and e.text_ru
            if e.kind in SCORE_KINDS:
                by_events[after.names.index(e.player)] += e.points
        assert delta == by_events, (action, evs)
        assert len(after.log) == len(before.log) + len(evs)
        assert game_from_json(json.loads(json.dumps(after.to_json()))) == after
        json.dumps(after.summary())
        if not after.over:
            m = after.moves()
            assert (m.roll and m.dice == after.dice_to_throw >= 1) or (
                not m.roll and m.why_not_roll is not None and after.random_choice(random.Random(0)) is not None)
            if not m.roll:
                with pytest.raises(RuleViolation):
                    after.apply(Roll((3,) * max(1, m.dice)))
            if not m.bank:
                with pytest.raises(RuleViolation) as exc:
                    after.apply(Bank())
                assert exc.value.reason_ru != exc.value.reason_en
            if not getattr(after.params, "keep_dice", False) and "keep" not in after.CHOICES:  # Yacht keeps dice
                with pytest.raises(RuleViolation):
                    after.apply(Keep((1,)))
            if m.roll:
                with pytest.raises(BadInput):
                    after.apply(Roll((3,) * (m.dice + 1)))
        if name.startswith("aces"):
            p = after.params
            assert sum(after.scores) + after.centre == p.dice_each * len(after.names)
        last = after
    assert last is not None and last.over, f"{name} did not end"
    assert last.winner is not None
    with pytest.raises(RuleViolation):
        last.apply(Roll((1,)))


def test_watch_plays_the_other_games_too():
    """``kosti watch --rules dead_dice`` starts the game of games.md, expecting its dice per throw."""
    from kosti.vision.live_cli import _new_game

    g = _new_game("dead_dice")
    assert g.game == "dead_dice" and g.dice_to_throw == 5
    g, _ = g.apply(Roll((1, 2, 3, 4, 5)))
    assert g.dice_to_throw == 3
    assert _new_game("bluff").player_names == ("Player 1", "Player 2")
