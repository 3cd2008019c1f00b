"""WebSocket: the snapshot is pushed on every change, and commands work over the socket."""

from __future__ import annotations

import threading


def _until(ws, pred, limit: int = 40) -> dict:
    for _ in range(limit):
        msg = ws.receive_json()
        if pred(msg):
            return msg
    raise AssertionError("expected message never came")


def test_state_is_pushed_on_every_change(client, throw, start_game, scores):
    gid = start_game(client)
    table = client.app.state.table
    with client.websocket_connect("/ws") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["game"]["id"] == gid
        v0 = first["version"]
        # A throw settles in another thread (as the camera thread would deliver it).
        threading.Thread(target=table.submit_throw, args=(throw([1, 1, 1, 5, 3]),)).start()
        msg = _until(ws, lambda m: m["type"] == "state" and m["version"] > v0)
        assert msg["last_throw"]["faces"] == [1, 1, 1, 5, 3]
        assert msg["state"]["turn"]["turn_points"] == 105
        # An HTTP control from another client is pushed too.
        assert client.post(f"/api/games/{gid}/bank").status_code == 200
        msg = _until(ws, lambda m: m["type"] == "state" and scores(m)["Ann"] == 105)
        assert msg["state"]["to_move"] == "Boris"


def test_commands_over_the_socket(client, throw, start_game, scores):
    gid = start_game(client)
    table = client.app.state.table
    with client.websocket_connect("/ws") as ws:
        ws.receive_json()
        ws.send_json({"cmd": "bank"})  # nothing thrown yet: the engine says why not
        err = _until(ws, lambda m: m["type"] == "error")
        assert err["status"] == 409 and err["error"] and err["error_ru"]
        ws.send_json({"cmd": "dance"})
        assert _until(ws, lambda m: m["type"] == "error")["status"] == 422
        ws.send_text("{oops")
        assert _until(ws, lambda m: m["type"] == "error")["error"] == "malformed JSON"
        table.submit_throw(throw([1, 1, 1, 5, 3]))
        ws.send_json({"cmd": "bank", "game_id": gid})
        msg = _until(ws, lambda m: m["type"] == "state" and scores(m)["Ann"] == 105)
        assert msg["state"]["to_move"] == "Boris"
