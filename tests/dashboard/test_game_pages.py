"""Each game's page speaks of its own game (issue 42 item 5) — through the API the page reads: the state names
the game and says whether it has a stop, a miss is no "+0", and an order throw is no turn on the score sheet,
in the list of games nor in the statistics (a real SQLite file, the real table)."""

from __future__ import annotations


def _state(client):
    return client.get("/api/state").json()


def test_the_state_names_the_game_and_says_whether_it_has_a_stop(make_client, start_game, tmp_path):
    client = make_client()
    start_game(client, preset="chicago")
    st = _state(client)["state"]
    assert st["title"] == {"en": "Chicago", "ru": "Чикаго"} and st["has_stop"] is False and st["setup"] is False
    assert st["has_turn_points"] is False
    client2 = make_client(db_path=tmp_path / "farkle.db")
    start_game(client2, preset="farkle")
    st = _state(client2)["state"]
    assert st["title"] == {"en": "Farkle", "ru": "Фаркл"} and st["has_stop"] is True


def test_a_chicago_miss_is_no_score_and_a_hit_scores(make_client, start_game, throw):
    client = make_client()
    start_game(client, preset="chicago")
    table = client.app.state.table
    table.submit_throw(throw([3, 4]))  # Ann: round 1 needs 2
    lt = _state(client)["last_throw"]
    assert (lt["outcome"], lt["points"]) == ("miss", 0)
    table.submit_throw(throw([1, 1]))  # Boris hits 2
    lt = _state(client)["last_throw"]
    assert (lt["outcome"], lt["points"]) == ("scored", 2)
    r = client.post(f"/api/games/{_state(client)['game']['id']}/bank")
    assert r.status_code == 409  # Chicago has no stop: the page shows no Stop button for it


def test_pig_order_throws_are_no_turn_on_the_sheet_the_list_or_the_statistics(make_client, start_game, throw):
    client = make_client()
    gid = start_game(client, preset="pig")
    table = client.app.state.table
    assert _state(client)["state"]["setup"] is True and _state(client)["state"]["has_turn_points"] is True
    table.submit_throw(throw([3]))  # Ann's order throw
    assert _state(client)["last_throw"]["outcome"] == "setup"
    table.submit_throw(throw([2]))  # Boris's: lowest, he starts
    st = _state(client)["state"]
    assert st["setup"] is False and st["to_move"] == "Boris"
    table.submit_throw(throw([4]))
    assert (_state(client)["last_throw"]["outcome"], _state(client)["last_throw"]["points"]) == ("scored", 4)
    assert client.post(f"/api/games/{gid}/bank").status_code == 200  # Boris records 4
    table.submit_throw(throw([1]))  # Ann's 1: her series is lost
    assert _state(client)["last_throw"]["outcome"] == "bust"
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["outcome"] for t in h["turns"]][:3] == ["setup", "bank", "bust"]
    rows = h["sheet"]["rows"]
    # round 1 is Boris's series and Ann's (the order throws are no round); round 2 begins with Boris again
    assert rows[0]["cells"]["Boris"]["score"] == 4 and rows[0]["cells"]["Boris"]["delta"] == 4
    assert rows[0]["cells"]["Ann"]["outcome"] == "bust" and rows[0]["cells"]["Ann"]["score"] == 0
    assert len(rows) == 2 and list(rows[1]["cells"]) == ["Boris"] and rows[1]["cells"]["Boris"]["score"] is None
    games = client.get("/api/games").json()["games"]
    assert games[0]["turns"] == 3  # Boris's, Ann's, and Boris's turn in progress; the order throws are none
    stats = {p["player"]: p for p in client.get("/api/stats").json()["players"]}
    assert stats["Boris"]["turns"] == 1 and stats["Ann"]["turns"] == 1
    assert stats["Boris"]["points_per_turn"] == 4
    # nor in the exported score sheet: a row per turn, the first Boris's
    import csv
    import io

    text = client.get(f"/api/games/{gid}/export?format=csv").content.decode("utf-8-sig")
    sheet = list(csv.DictReader(io.StringIO(text)))
    assert [r["player"] for r in sheet][:2] == ["Boris", "Ann"] and "3" not in sheet[0]["throws"].split()


def test_presets_carry_human_names_in_both_languages(make_client):
    client = make_client()
    presets = {p["name"]: p for p in client.get("/api/presets").json()["presets"]}
    assert presets["raznoobrazie_skip_barrels"]["title"] == "1000 with skip-turn barrels (Goloviznin)"
    assert presets["wikihow_10000"]["title_ru"] == "10000 (правила wikiHow)"
    assert presets["zary_custom"]["title_ru"] == "Тысяча, правила «зари»"
    assert presets["pig"]["title_ru"] == "Свинья"
    for p in presets.values():
        assert p["title"] and p["title_ru"] and "_" not in p["title"] + p["title_ru"], p["name"]
        assert p["description_ru"], p["name"]


def test_the_statistics_note_names_no_module(make_client, start_game, throw):
    client = make_client()
    start_game(client)
    client.app.state.table.submit_throw(throw([2, 3, 4, 6, 6]))
    note = client.get("/api/stats").json()["per_die"]
    assert note["note"] and "vision/" not in note["note"] and "vision/" not in note["note_ru"]


def test_kosti_stats_counts_in_words(make_client, start_game, throw, tmp_path, capsys):
    """Item 9: "1 game", "1 turn", "1 zero throw" — never "1 games" or "1 zero throws"."""
    from kosti.cli import main

    client = make_client(db_path=tmp_path / "s.db")
    gid = start_game(client)
    client.app.state.table.submit_throw(throw([2, 3, 4, 6, 6]))  # Ann: a zero throw, her turn is over
    client.app.state.store.close()
    assert main(["stats", "--db", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 game, 1 scored throw, 5 dice\n"), out
    assert "Ann: 1 turn, 1 throw, 0.0 points a turn, 1 zero throw (expected" in out, out
    assert gid == 1


def test_yacht_on_the_table(make_client, start_game, throw):
    """The dashboard: the camera reads the throws (five dice, then only the dice not kept), the page scores boxes
    and keeps through its choices."""
    client = make_client()
    gid = start_game(client, preset="yacht")
    table = client.app.state.table
    table.submit_throw(throw([2, 2, 4, 4, 4]))
    st = client.get("/api/state").json()["state"]
    assert st["title"] == {"en": "Sea dice / Yacht", "ru": "Морские кости / Яхта"} and st["has_stop"] is False
    news = [e for e in client.get("/api/state").json()["events"] if e["kind"] == "new_game"]
    assert (news[-1]["text_en"], news[-1]["text_ru"]) == ("New game: Ann, Boris (Sea dice / Yacht)",
                                                          "Новая игра: Ann, Boris (Морские кости / Яхта)")
    labels = [c["label_en"] for c in st["allowed"]["choices"]]
    assert "Full house: 16" in labels and "keep these dice, throw the rest" in labels
    r = client.post(f"/api/games/{gid}/choose", json={"key": "keep", "value": "4 4 4"})
    assert r.status_code == 200, r.text
    assert r.json()["state"]["allowed"]["dice_options"] == [2]
    table.submit_throw(throw([4, 4]))
    r = client.post(f"/api/games/{gid}/choose", json={"key": "score", "value": "yacht"})
    assert r.status_code == 200 and r.json()["state"]["players"][0]["score"] == 50
    r = client.post(f"/api/games/{gid}/choose", json={"key": "score", "value": "nonsense"})
    assert r.status_code == 422 or r.status_code == 409


def test_buck_dice_set_up_throws_are_no_turn(make_client, start_game, throw):
    """Buck dice's set-up (everyone throws three dice) and the game-point throw (one die) are stored as no one's
    turn: the first turn on the sheet is the first player's series."""
    client = make_client()
    gid = start_game(client, preset="buck_dice")
    table = client.app.state.table
    for faces in ([6, 6, 5], [1, 2, 1], [4]):  # Ann highest: she starts; Boris lowest: his die is the game point
        table.submit_throw(throw(faces))
        assert client.get("/api/state").json()["last_throw"]["outcome"] == "setup"
    st = client.get("/api/state").json()["state"]
    assert st["setup"] is False and st["to_move"] == "Ann"
    table.submit_throw(throw([2, 3, 5]))  # no game point: Ann's turn ends with nothing
    assert client.get("/api/state").json()["last_throw"]["outcome"] == "miss"
    h = client.get(f"/api/games/{gid}/history").json()
    assert [t["outcome"] for t in h["turns"]] == ["setup", "setup", "end", None]
    assert [list(r["cells"]) for r in h["sheet"]["rows"]] == [["Ann", "Boris"]]
