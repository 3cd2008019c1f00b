"""The web layer: every route documents its answer, one command table serves REST and the WebSocket, and the
table's typed errors become HTTP statuses at the edge."""

from __future__ import annotations

import json

import pytest

from kosti.dashboard.errors import Conflict, Invalid, NotFound, TableError, Unavailable
from kosti.dashboard.routes.commands import COMMANDS, parse_ws_command
from kosti.dashboard.routes.errors import error_body, status_of
from kosti.dashboard.schemas import Snapshot


def _response_schemas(app) -> dict[tuple[str, str], dict]:
    """``{(method, path): {media type: schema}}`` of each route's 2xx answer in ``app.openapi()``."""
    out = {}
    for path, ops in app.openapi()["paths"].items():
        for method, op in ops.items():
            ok = [r for code, r in op["responses"].items() if code.startswith("2")]
            out[(method, path)] = {mt: c.get("schema") for r in ok for mt, c in r.get("content", {}).items()}
    return out


@pytest.mark.parametrize("review", [False, True])
def test_every_route_documents_its_answer(make_client, tmp_path, review: bool) -> None:
    """Each path/method of /openapi.json (with and without the review and teach pages) has a 2xx answer with
    a media type; a JSON answer names a model (a ``$ref``), an image or stream declares its media type."""
    client = make_client(review_dir=tmp_path / "capture") if review else make_client()
    schemas = _response_schemas(client.app)
    assert len(schemas) >= (30 if review else 20)  # the games, controls, settings, live view, advice (review) routes
    missing = [f"{m.upper()} {p}" for (m, p), content in schemas.items() if not content]
    assert not missing, f"routes without a documented 2xx answer: {missing}"
    unnamed = [f"{m.upper()} {p}" for (m, p), content in schemas.items()
               if "application/json" in content and "$ref" not in (content["application/json"] or {})]
    assert not unnamed, f"JSON routes without a response model: {unnamed}"
    assert schemas[("get", "/api/state")]["application/json"]["$ref"].endswith("/Snapshot")
    named = {("get", "/api/advice"): "AdviceAnswer", ("get", "/api/stats"): "StatsDocument"}
    if review:  # the review and teach routers, each answer with its own model
        named |= {("get", "/api/review/stats"): "ReviewStats", ("get", "/api/review/images"): "ImageList",
                  ("get", "/api/review/images/{image_id}"): "ImageView",
                  ("put", "/api/review/images/{image_id}/labels"): "ImageView",
                  ("post", "/api/review/images/{image_id}/reviewed"): "ImageView",
                  ("get", "/api/teach/status"): "TeachStatus", ("post", "/api/teach/capture"): "CaptureAnswer",
                  ("post", "/api/teach/train"): "TeachStatus"}
    for route, model in named.items():
        assert schemas[route]["application/json"]["$ref"].endswith(f"/{model}"), (route, schemas[route])
    assert set(schemas[("get", "/snapshot.jpg")]) == {"image/jpeg"}
    assert set(schemas[("get", "/video.mjpg")]) == {"multipart/x-mixed-replace; boundary=frame"}


def test_each_command_has_a_rest_route_with_its_body_model(client) -> None:
    paths = client.app.openapi()["paths"]
    for name, command in COMMANDS.items():
        op = paths[f"/api/games/{{game_id}}/{name}"]["post"]
        body = op.get("requestBody")
        if command.body is None:
            assert body is None, name
        else:
            text = json.dumps(body["content"]["application/json"]["schema"])
            assert command.body.__name__ in text, (name, text)
            assert body.get("required", False) is (not command.body_optional), name


def test_a_bad_websocket_command_gets_the_rest_reason(client, start_game) -> None:
    """The same malformed body over REST and over the WebSocket: the same status and one-line reason."""
    gid = start_game(client)
    for cmd, fields in (("keep", {"faces": [7]}), ("fix", {"die_index": 0}), ("enter", {"faces": []}),
                        ("keep", {"faces": [1], "x": 1})):
        rest = client.post(f"/api/games/{gid}/{cmd}", json=fields)
        assert rest.status_code == 422, rest.text
        with client.websocket_connect("/ws") as ws:
            ws.receive_json()
            ws.send_json({"cmd": cmd, "game_id": gid, **fields})
            reply = ws.receive_json()
            while reply["type"] == "state":
                reply = ws.receive_json()
        assert reply["type"] == "error", reply
        assert (reply["status"], reply["error"], reply["error_ru"]) == \
            (422, rest.json()["error"], rest.json()["error_ru"]), (cmd, reply, rest.json())


def test_websocket_runs_the_rest_handler(client, throw, start_game, scores) -> None:
    """``enter`` over the socket scores like the REST route (1 5 2 3 4: the 125 run of the classic rules)."""
    gid = start_game(client)
    with client.websocket_connect("/ws") as ws:
        ws.receive_json()
        ws.send_json({"cmd": "enter", "game_id": gid, "faces": [1, 5, 2, 3, 4]})
        reply = ws.receive_json()
        while reply["type"] == "state":
            reply = ws.receive_json()
        assert reply == {"type": "ack", "cmd": "enter"}
    snap = client.get("/api/state").json()
    assert snap["state"]["turn"]["turn_points"] == 125 and snap["last_throw"]["faces"] == [1, 5, 2, 3, 4]
    Snapshot.model_validate(snap)


def test_websocket_command_without_fields_refuses_extra_ones() -> None:
    with pytest.raises(Invalid) as err:
        parse_ws_command(json.dumps({"cmd": "bank", "faces": [1]}))
    assert err.value.en == "unknown field 'faces'" and status_of(err.value) == 422


@pytest.mark.parametrize(("error", "status"), [
    (NotFound("no game 9", "игры 9 нет"), 404), (Conflict("the game is over", "игра окончена"), 409),
    (Invalid("a die shows 1–6", "на кости 1–6"), 422), (Unavailable("no camera", "нет камеры"), 503),
    (TableError(413, "too large", "слишком большая"), 413),
])
def test_typed_errors_map_to_their_status(client, error, status) -> None:
    """A domain error raised inside the table is answered at the edge with its class's status and the one
    error shape (``code`` kept), on REST and in the WebSocket's error body."""
    error.code = "replace_needed" if status == 409 else None
    table = client.app.state.table

    def refuse(*args, **kw):
        raise error

    table.session.bank = refuse  # the table refuses; the web layer only maps
    r = client.post("/api/games/1/bank")
    expected = {"error": error.en, "error_ru": error.ru, "status": status}
    if error.code:
        expected["code"] = error.code
    assert r.status_code == status and r.json() == expected
    assert error_body(error) == expected and error.to_json() == expected


def test_review_and_teach_refusals_have_the_one_error_shape(make_client, tmp_path) -> None:
    """The review and teach routers raise typed errors; in the dashboard app they are answered with the one
    error body, status by class: unknown image 404, bad labels 422, no settled throw / nothing confirmed 409."""
    client = make_client(review_dir=tmp_path / "capture")
    r = client.get("/api/review/images/20990101-000000-000")
    assert r.status_code == 404 and r.json() == {
        "error": "no image '20990101-000000-000' in the capture folder",
        "error_ru": "нет снимка '20990101-000000-000' в папке снимков", "status": 404}
    r = client.post("/api/teach/capture")
    assert r.status_code == 409 and r.json() == error_body(Conflict(
        "no settled throw yet: throw the dice and wait until they lie still",
        "ещё нет броска: бросьте кости и дождитесь, пока они остановятся"))
    r = client.post("/api/teach/train")
    assert r.status_code == 409 and set(r.json()) == {"error", "error_ru", "status"} and "at least 2" in r.json()["error"]
    r = client.get("/api/stats", params={"game": 9})
    assert r.status_code == 404 and r.json() == {"error": "no game 9", "error_ru": "игры 9 нет", "status": 404}
