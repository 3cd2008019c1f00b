"""The dashboard hosts every game of games.md like 1000: start, camera throws, stop, undo, restart, the rules
page in both languages (FastAPI TestClient, injected throws)."""

from __future__ import annotations

from kosti.engine.games import GAME_PRESETS


def test_presets_list_every_game_with_its_rules_page(client):
    presets = client.get("/api/presets").json()["presets"]
    by_name = {p["name"]: p for p in presets}
    assert by_name["classic"]["game"] == "1000"
    for name in GAME_PRESETS:
        p = by_name[name]
        assert p["game"] != "1000" and p["rules_en"] and p["rules_ru"] and p["description_ru"]


def test_pig_on_the_table(client, throw, start_game, scores):
    gid = start_game(client, ("Ann", "Boris"), preset="pig", overrides={"order_throw": False})
    table = client.app.state.table
    s = client.get("/api/state").json()
    st = s["state"]
    assert st["game"] == "pig" and st["turn"]["dice_to_throw"] == 1 and not st["allowed"]["bank"]
    assert st["rules_page"]["ru"].startswith("Одна кость") and st["rules_summary"][0]["ru"]
    assert st["allowed"]["why_not_bank"]["ru"] != st["allowed"]["why_not_bank"]["en"]
    assert table.submit_throw(throw([4]))["applied"]
    assert table.submit_throw(throw([6]))["applied"]
    s = client.get("/api/state").json()
    assert s["state"]["turn"]["turn_points"] == 10 and s["state"]["allowed"]["bank"]
    s = client.post(f"/api/games/{gid}/bank").json()
    assert scores(s) == {"Ann": 10, "Boris": 0} and s["state"]["to_move"] == "Boris"
    out = table.submit_throw(throw([3, 4]))  # two dice seen, one thrown: held, nothing scored
    assert not out["applied"]
    client.post(f"/api/games/{gid}/discard")
    table.submit_throw(throw([1]))  # Boris loses the series
    s = client.get("/api/state").json()
    assert s["state"]["to_move"] == "Ann" and scores(s) == {"Ann": 10, "Boris": 0}
    s = client.post(f"/api/games/{gid}/undo").json()
    assert s["state"]["to_move"] == "Boris"
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["player"] for t in h["turns"]][:2] == ["Ann", "Boris"]


def test_games_without_stopping_refuse_it_with_a_reason(client, throw, start_game):
    gid = start_game(client, ("Ann", "Boris"), preset="craps")
    r = client.post(f"/api/games/{gid}/bank")
    assert r.status_code == 409
    assert r.json()["error"] and r.json()["error_ru"] != r.json()["error"]
    r = client.post(f"/api/games/{gid}/choose", json={"key": "op", "value": "plus"})
    assert r.status_code == 422


def test_a_game_survives_a_restart(make_client, throw, start_game, scores):
    c1 = make_client()
    start_game(c1, ("Ann", "Boris", "Cid"), preset="aces", overrides={"order_throw": False})
    c1.app.state.table.submit_throw(throw([1, 2, 5, 3, 6]))
    before = c1.get("/api/state").json()
    c1.app.state.store.close()
    c2 = make_client()
    after = c2.get("/api/state").json()
    assert scores(after) == scores(before) == {"Ann": 2, "Boris": 6, "Cid": 6}
    assert after["state"]["game_state"]["centre"] == 1 and after["state"]["to_move"] == "Boris"


def test_chicago_game_to_the_end(client, throw, start_game, scores):
    start_game(client, ("Ann",), preset="chicago", overrides={"rounds": 2})
    table = client.app.state.table
    table.submit_throw(throw([1, 1]))
    table.submit_throw(throw([2, 1]))
    s = client.get("/api/state").json()
    assert s["state"]["over"] and s["state"]["winner"] == "Ann" and scores(s) == {"Ann": 5}
    assert s["game"]["status"] == "finished"


def test_bets_entered_on_the_page_then_the_camera_throws(client, throw, start_game, scores):
    """Bank dice: bets through /choose (object or text), refusals with reasons, settlement from the camera."""
    gid = start_game(client, ("Ann", "Boris", "Cid"), preset="bank_dice")
    table = client.app.state.table
    s = client.get("/api/state").json()["state"]
    assert not s["allowed"]["roll"] and s["allowed"]["choices"][0]["key"] == "bet"
    assert s["allowed"]["choices"][0]["value"] is None  # a free value: typed on the page
    assert not table.submit_throw(throw([3, 3, 1]))["applied"]  # no bet yet: held, nothing settled
    client.post(f"/api/games/{gid}/discard")
    r = client.post(f"/api/games/{gid}/choose", json={"key": "bet", "value": "Ann 3 2"})
    assert r.status_code == 409 and r.json()["error_ru"]  # the banker does not bet
    r = client.post(f"/api/games/{gid}/choose", json={"key": "bet", "value": "Boris 9 2"})
    assert r.status_code == 422
    client.post(f"/api/games/{gid}/choose", json={"key": "bet", "value": {"player": "Boris", "number": 3,
                                                                          "amount": 2}})
    s = client.post(f"/api/games/{gid}/choose", json={"key": "bet", "value": "Cid 5 1"}).json()
    assert [t["en"] for p in s["state"]["players"] for t in p["tags"]] == ["banker", "bets 2 on 3", "bets 1 on 5"]
    assert table.submit_throw(throw([3, 3, 1]))["applied"]
    assert scores(client.get("/api/state").json()) == {"Ann": -3, "Boris": 4, "Cid": -1}


def test_martinetti_board_and_a_claim_over_the_websocket(client, throw, start_game, scores):
    gid = start_game(client, ("Ann", "Boris"), preset="martinetti")
    table = client.app.state.table
    table.submit_throw(throw([1, 2, 3]))
    table.submit_throw(throw([6, 6, 5]))  # needs 4: the turn passes, the dice are open to claims
    s = client.get("/api/state").json()["state"]
    assert s["game_state"]["board"] == [{"name": "Ann", "field": 3}, {"name": "Boris", "field": 0}]
    assert s["allowed"]["choices"] == []  # Boris needs a 1: nothing to claim
    with client.websocket_connect("/ws") as ws:
        ws.receive_json()
        ws.send_json({"cmd": "choose", "key": "claim", "value": "Boris", "game_id": gid})
        msg = ws.receive_json()
        while msg.get("type") == "state":
            msg = ws.receive_json()
        assert msg["type"] == "error" and msg["status"] == 409 and msg["error_ru"]
    assert scores(client.get("/api/state").json()) == {"Ann": 3, "Boris": 0}


def test_a_throw_when_the_game_waits_for_a_choice_says_why(client, throw, start_game):
    start_game(client, ("Ann", "Boris"), preset="liar_dice")
    out = client.app.state.table.submit_throw(throw([3, 3, 3, 2, 2]))
    assert not out["applied"]
    assert any("no throw is due now" in r and "стакан" in r for r in out["reasons"])
    s = client.get("/api/state").json()
    assert s["pending"] is not None  # held for the table, nothing moved
    assert s["state"]["game_state"]["phase"] == "claim" and s["state"]["game_state"]["pot"] == 0


def test_a_drawn_chicago_game_ends_with_both_winners_not_an_error(client, throw, start_game, scores):
    """A shared result: the engine's winner is a list of names; the snapshot carries it (it answered HTTP 500 when
    the response model allowed one name only), the stored game keeps them comma separated."""
    start_game(client, ("Ann", "Boris"), preset="chicago", overrides={"rounds": 1})
    table = client.app.state.table
    assert table.submit_throw(throw([6, 6]))["applied"]  # round 1 wants 2: a miss
    assert table.submit_throw(throw([5, 6]))["applied"]
    s = client.get("/api/state")
    assert s.status_code == 200
    s = s.json()
    assert s["state"]["over"] and s["state"]["winner"] == ["Ann", "Boris"] and scores(s) == {"Ann": 0, "Boris": 0}
    games = client.get("/api/games").json()["games"]
    assert games[0]["winner"] == "Ann, Boris" and games[0]["status"] == "finished"
