"""``kosti stats``: one JSON document from the stored games, the PNG plot, exit codes."""

from __future__ import annotations

import json

from kosti.cli import main


def _stored_game(make_client, start_game, throw, tmp_path):
    client = make_client(db_path=tmp_path / "t.db")
    gid = start_game(client)
    table = client.app.state.table
    table.submit_throw(throw([1, 1, 1, 5, 3]))
    client.post(f"/api/games/{gid}/bank")
    table.submit_throw(throw([2, 3, 4, 6, 6]))
    client.app.state.store.close()
    return tmp_path / "t.db", gid


def test_stats_json_and_plot(make_client, start_game, throw, tmp_path, capsys):
    db, gid = _stored_game(make_client, start_game, throw, tmp_path)
    png = tmp_path / "faces.png"
    code = main(["stats", "--db", str(db), "--json", "--plot", str(png)])
    out, err = capsys.readouterr()
    assert code == 0 and out.count("\n") == 1
    doc = json.loads(out)
    assert doc["faces"] == [3, 1, 2, 1, 1, 2] and doc["dice"] == 10 and doc["throws"] == 2
    assert doc["plot"] == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert {p["player"] for p in doc["players"]} == {"Ann", "Boris"}
    code = main(["stats", "--db", str(db), "--game", str(gid)])
    out, _ = capsys.readouterr()
    assert code == 0 and "хи-квадрат" in out and "10 dice" in out


def test_stats_bad_input(make_client, start_game, throw, tmp_path, capsys):
    code = main(["stats", "--db", str(tmp_path / "none.db"), "--json"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and "no such database" in err and err.count("\n") == 1
    code = main(["stats", "--db", str(tmp_path), "--json"])  # a folder, not the database file
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and "is a folder" in err and err.count("\n") == 1
    db, _ = _stored_game(make_client, start_game, throw, tmp_path)
    code = main(["stats", "--db", str(db), "--game", "77"])
    out, err = capsys.readouterr()
    assert code == 2 and "no game 77" in err
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    code = main(["stats", "--db", str(junk)])
    _, err = capsys.readouterr()
    assert code == 2 and "is damaged" in err and "move it aside" in err and err.count("\n") == 1
