"""Dashboard routes of issue 19: /api/advice follows the live state; /api/stats matches a hand count
of a stored game; the PNG plot; the page loads the self-contained panel (off for spectators)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from kosti.dashboard.app import STATIC_DIR


def test_advice_follows_the_state(client, throw, start_game):
    r = client.get("/api/advice").json()
    assert r["available"] is False and r["reason"] == "no game" and r["reason_ru"] == "игры нет"
    gid = start_game(client, preset="classic")
    a = client.get("/api/advice").json()
    assert a["available"] and a["game_id"] == gid
    assert (a["advice"]["player"], a["advice"]["dice_to_throw"], a["advice"]["turn_points"]) == ("Ann", 5, 0)
    assert a["advice"]["requirement"] == "open" and a["advice"]["advice"] == "throw"
    v0 = a["version"]
    client.app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))  # 105, one die left
    b = client.get("/api/advice").json()
    assert b["version"] > v0
    assert (b["advice"]["turn_points"], b["advice"]["dice_to_throw"], b["advice"]["may_stop"]) == (105, 1, True)
    assert b["advice"]["advice"] == "stop" and "105" in b["advice"]["why"]
    assert abs(b["advice"]["bust_probability"] - 2 / 3) < 1e-6
    client.post(f"/api/games/{gid}/bank")
    c = client.get("/api/advice").json()
    assert c["advice"]["player"] == "Boris" and c["advice"]["turn_points"] == 0


def test_each_new_turn_is_solved_before_the_page_asks(client, throw, start_game):
    """Once a page has asked for advice, every new turn's policy is solved in the background as the
    state changes, so the next /api/advice is a lookup: its turn's policy is already in the advisor's
    cache. A table that never asked for advice gets no background solves."""
    from kosti.engine.advisor.stop_or_throw import _POLICIES, policy_key

    gid = start_game(client, preset="classic")
    table = client.app.state.table
    pre = table.advisor_presolver
    table.submit_throw(throw([1, 1, 1, 5, 3]))  # Ann: 105, the state changes while no page asks
    assert pre.wait_idle(30)
    assert pre.solved == 0 and not pre.wanted  # nobody asked: nothing solved on state changes
    client.get("/api/advice")  # a page shows the advisor
    assert pre.wanted
    _POLICIES.clear()  # another test may have solved the same situation
    client.post(f"/api/games/{gid}/bank")  # Ann records 105, Boris to move
    assert pre.wait_idle(30)
    st = table.session.state
    assert st.players[st.turn.player].name == "Boris"
    assert policy_key(st) in _POLICIES and pre.solved >= 1


def test_throw_tables_are_built_when_a_game_starts_not_on_the_first_advice(client, start_game, tmp_path):
    """Starting a game builds its throw tables in the background (docs/advisor.md): once that thread is done,
    every table of the game's rules is a cache hit before any advice was asked; a game restored at start-up
    is warmed the same way."""
    from kosti.dashboard.app import DashboardConfig, create_app
    from kosti.engine.advisor.throw_tables import _dp_table

    start_game(client, preset="farkle", overrides={"target": 7350})  # rules no other test builds
    table = client.app.state.table
    table.advisor_warmup.join(10)
    assert not table.advisor_warmup.is_alive()
    rules = table.session.state.rules
    before = _dp_table.cache_info()
    for n in range(1, rules.dice_count + 1):
        _dp_table(rules, n)
    after = _dp_table.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (rules.dice_count, 0)
    # restart on the same database: the running game is restored and warmed without a request
    db = client.app.state.config.db_path
    client.app.state.store.close()
    _dp_table.cache_clear()
    app = create_app(DashboardConfig(db_path=db, start_capture=False))
    try:
        app.state.table.advisor_warmup.join(10)
        assert _dp_table.cache_info().currsize == rules.dice_count
    finally:
        app.state.store.close()


def test_stats_match_a_hand_count(client, throw, start_game):
    gid = start_game(client, preset="classic")
    table = client.app.state.table
    table.submit_throw(throw([1, 1, 1, 5, 3]))           # Ann: 105
    client.post(f"/api/games/{gid}/bank")
    table.submit_throw(throw([2, 3, 4, 6, 6]))           # Boris: zero throw
    table.submit_throw(throw([5, 2, 2, 3, 4]))           # Ann: 5, four dice left
    table.submit_throw(throw([6, 6, 6, 2]))              # Ann: 60, one die left
    table.submit_throw(throw([4]))                       # Ann: zero throw, the 65 are lost
    table.submit_throw(throw([3, 3, 2, 2, 4]))           # Boris: zero throw, then undone
    client.post(f"/api/games/{gid}/undo")
    s = client.get("/api/stats").json()
    # hand count of the five throws that stand (19 + the undone one left out)
    hand = [0] * 6
    for faces in ([1, 1, 1, 5, 3], [2, 3, 4, 6, 6], [5, 2, 2, 3, 4], [6, 6, 6, 2], [4]):
        for f in faces:
            hand[f - 1] += 1
    assert hand == [3, 4, 3, 3, 2, 5]
    assert (s["games"], s["throws"], s["dice"], s["faces"]) == (1, 5, 20, hand)
    e = 20 / 6
    chi2 = sum((c - e) ** 2 / e for c in hand)
    # closed form of the chi-square survival function with 5 degrees of freedom
    ref = math.erfc(math.sqrt(chi2 / 2)) + math.sqrt(2 / math.pi) * math.exp(-chi2 / 2) * (
        math.sqrt(chi2) + chi2 ** 1.5 / 3)
    assert abs(s["chi_square"]["statistic"] - chi2) < 1e-6
    assert abs(s["chi_square"]["p_value"] - ref) < 1e-6
    assert s["chi_square"]["enough"] is False and "too few" in s["chi_square"]["verdict"]
    assert s["per_die"]["available"] is False and "tell the dice apart" in s["per_die"]["note"]
    players = {p["player"]: p for p in s["players"]}
    ann, boris = players["Ann"], players["Boris"]
    assert (ann["turns"], ann["throws"], ann["zero_throws"]) == (2, 4, 1)
    assert ann["points_per_turn"] == 52.5                      # 105 recorded in two turns
    assert (boris["turns"], boris["throws"], boris["zero_throws"]) == (1, 1, 1)
    assert ann["luck"]["points"] == 105 + 5 + 60 + 0           # best keeps of her throws
    r = client.get("/api/stats", params={"game": 999})
    assert r.status_code == 404
    # an id past SQLite's integers is a 422 in words, not an OverflowError inside the query (found by the fuzz)
    for url in ("/api/stats", "/api/stats/faces.png"):
        r = client.get(url, params={"game": 2**63})
        assert r.status_code == 422 and r.json()["error"] == f"game id: must be at most {2**63 - 1}"
        assert r.json()["error_ru"] == f"номер игры: должно быть не больше {2**63 - 1}"


def test_stats_count_the_other_games_throws_without_luck(client, throw, start_game):
    """A games.md game (Chicago) adds its dice to the face counts; luck stays the 1000 family's (none here)."""
    start_game(client, preset="chicago", overrides={"rounds": 2})
    table = client.app.state.table
    table.submit_throw(throw([1, 2]))
    table.submit_throw(throw([6, 6]))
    s = client.get("/api/stats").json()
    assert s["games"] == 1 and s["throws"] == 2 and s["dice"] == 4
    assert s["faces"] == [1, 1, 0, 0, 0, 2]
    assert all(p["luck"]["throws"] == 0 for p in s["players"]), s["players"]


def test_faces_png(client, throw, start_game):
    start_game(client)
    client.app.state.table.submit_throw(throw([1, 2, 3, 4, 5]))
    r = client.get("/api/stats/faces.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    img = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None and img.shape[:2] == (360, 640)


def test_page_loads_the_panel_and_spectators_skip_it(client):
    page = client.get("/").text
    assert '<script src="/static/advisor.js"></script>' in page
    assert '/static/advisor.css' in page
    js = (STATIC_DIR / "advisor.js").read_text(encoding="utf-8")
    assert '"/tv"' in js and '["tv", "spectator"].includes(params.get("view"))' in js
    assert "kosti.advisor" in js
    assert client.get("/static/advisor.js").status_code == 200


def test_pig_table_gets_the_win_objective(client, throw, start_game):
    """A two-player Pig table: /api/advice carries the win objective — "throw" / "stop" with the win
    probability of each (equal to the engine's model), both languages — and follows the state; the
    model's table is solved in the warm-up thread when the game is put on the table. Three players:
    not available, with the reason in both languages."""
    from kosti.engine.advisor.pig import solve

    gid = start_game(client, ("Ann", "Boris"), preset="pig", overrides={"order_throw": False})
    table = client.app.state.table
    table.advisor_warmup.join(60)
    assert not table.advisor_warmup.is_alive()
    assert solve.cache_info().currsize >= 1
    a = client.get("/api/advice").json()
    assert a["available"] and a["objective_kind"] == "win" and a["game_id"] == gid
    adv = a["advice"]
    assert (adv["player"], adv["turn_points"], adv["may_stop"], adv["advice"]) == ("Ann", 0, False, "throw")
    assert adv["win_if_stop"] is None
    assert adv["win_if_throw"] == pytest.approx(solve(100, True).wa[0, 0], abs=1e-4)
    for f in (6, 6, 6, 6):
        table.submit_throw(throw([f]))
    b = client.get("/api/advice").json()["advice"]
    assert (b["turn_points"], b["may_stop"], b["advice"]) == (24, True, "stop")
    assert b["win_if_stop"] > b["win_if_throw"] and b["win_probability"] == b["win_if_stop"]
    assert b["why"].startswith("stop and record 24") and b["why_ru"].startswith("хватит, запишите 24")
    client.post(f"/api/games/{gid}/bank")
    c = client.get("/api/advice").json()["advice"]
    assert (c["player"], c["score"], c["opponent_score"], c["starter"]) == ("Boris", 0, 24, False)
    assert c["win_if_throw"] == pytest.approx(solve(100, True).wb[0, 24], abs=1e-4)
    r = client.post("/api/games", json={"players": ["A", "B", "C"], "preset": "pig",
                                        "overrides": {"order_throw": False}, "replace": True})
    assert r.status_code == 201, r.text
    d = client.get("/api/advice").json()
    assert d["available"] is False and "two players" in d["reason"] and "двух игроков" in d["reason_ru"]
