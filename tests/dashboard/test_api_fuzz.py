"""API fuzz over ``/openapi.json`` (issue 15): every documented route, with path ids, query values and JSON
bodies drawn from its schema and from outside it (huge integers, wrong types, junk), answers without a 5xx and
with the documented error shape. Bounded by counting, not by a clock: a fixed number of derandomized examples per
route (the same requests on every machine, however loaded), no shrinking of passing runs, and every route must get
at least one request — a check that always runs. (schemathesis does the same from the same schema; this stays
inside hypothesis, already a test dependency.)"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30),
    st.lists(st.integers(-10, 10), max_size=4), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _schema_strategy(schema: dict[str, Any], components: dict[str, Any], depth: int = 0) -> st.SearchStrategy:
    """Values for a JSON schema: mostly valid, sometimes just outside its bounds, sometimes junk."""
    if depth > 4:
        return JUNK
    if "$ref" in schema:
        return _schema_strategy(components[schema["$ref"].rsplit("/", 1)[-1]], components, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return st.one_of(*[_schema_strategy(s, components, depth + 1) for s in schema[key]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    t = schema.get("type")
    if t == "integer":
        lo, hi = schema.get("minimum", -(2**70)), schema.get("maximum", 2**70)
        return st.one_of(st.integers(lo, hi), st.integers(lo - 5, lo), st.integers(hi, hi + 2**65), JUNK)
    if t == "number":
        return st.one_of(st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False), JUNK)
    if t == "string":
        return st.one_of(st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 60), 60)),
                         st.text(min_size=0, max_size=3000), JUNK)
    if t == "boolean":
        return st.one_of(st.booleans(), JUNK)
    if t == "array":
        items = _schema_strategy(schema.get("items", {}), components, depth + 1)
        return st.one_of(st.lists(items, max_size=min(schema.get("maxItems", 8), 8) + 2), JUNK)
    if t == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = {k: _schema_strategy(v, components, depth + 1) for k, v in props.items() if k in required}
        optional = {k: _schema_strategy(v, components, depth + 1) for k, v in props.items() if k not in required}
        return st.one_of(st.fixed_dictionaries(fixed, optional=optional),
                         st.dictionaries(st.text(max_size=8), JUNK, max_size=3), JUNK)
    return JUNK


def _operations(app) -> list[tuple[str, str, dict[str, Any]]]:
    ops = []
    for path, methods in app.openapi()["paths"].items():
        if path in ("/video.mjpg",):  # an endless stream: covered by the live tests
            continue
        for method, op in methods.items():
            ops.append((method.upper(), path, op))
    return ops


@pytest.fixture
def fuzz_client(make_client, tmp_path):
    c = make_client(start_capture=False, review_dir=tmp_path / "captures", host="0.0.0.0", pin="123456")
    c.post("/api/games", json={"players": ["Ann", "Boris"]}, headers={"X-Kosti-Pin": "123456"})
    return c


def test_openapi_routes_never_answer_5xx(fuzz_client) -> None:
    app = fuzz_client.app
    components = app.openapi().get("components", {}).get("schemas", {})
    ops = _operations(app)
    assert len(ops) >= 15  # every control, read and review route is in the schema
    failures: list[str] = []
    sent: dict[str, int] = {}  # requests per "METHOD /path"

    for method, path, op in ops:
        op_key = f"{method} {path}"
        params = op.get("parameters", [])
        path_params = {p["name"]: _schema_strategy(p.get("schema", {}), components) for p in params if p["in"] == "path"}
        query_params = {p["name"]: _schema_strategy(p.get("schema", {}), components) for p in params if p["in"] == "query"}
        body_schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        body = _schema_strategy(body_schema, components) if body_schema else st.none()

        def fuzz(method: str, path: str, op_key: str, body_schema: Any, path_params: dict, query_params: dict,
                 body_strategy: Any) -> None:  # one route's fuzz, its values bound as parameters (not the loop's)
            @settings(max_examples=40, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(pp=st.fixed_dictionaries(path_params), qp=st.fixed_dictionaries(query_params), payload=body_strategy,
                   with_pin=st.booleans())
            def run(pp: dict, qp: dict, payload: Any, with_pin: bool) -> None:
                sent[op_key] = sent.get(op_key, 0) + 1
                url = path
                for k, v in pp.items():
                    url = url.replace("{" + k + "}", quote(str(v), safe="") or "_")
                query = {k: str(v) for k, v in qp.items() if v is not None}
                headers = {"X-Kosti-Pin": "123456"} if with_pin else {"X-Kosti-Pin": "000000"}
                kw: dict[str, Any] = {"params": query, "headers": headers}
                if body_schema is not None:
                    kw["json"] = payload
                fuzz_client.app.state.pin_guard._fails.clear()  # wrong PINs must not lock the fuzz out of the routes
                fuzz_client.app.state.pin_guard._locked_until = 0.0
                r = fuzz_client.request(method, url, **kw)
                if r.status_code >= 500:
                    failures.append(f"{method} {url} {kw.get('json')!r:.200} -> {r.status_code} {r.text[:200]}")
                elif r.status_code >= 400:
                    doc = r.json()
                    assert {"error", "error_ru", "status"} <= set(doc) and doc["status"] == r.status_code, (method, url, doc)

            run()

        fuzz(method, path, op_key, body_schema, path_params, query_params, body)
    print(f"fuzz: {sum(sent.values())} requests over {len(sent)} of {len(ops)} routes:",
          ", ".join(f"{k} {n}" for k, n in sorted(sent.items())))
    assert not failures, "\n".join(failures[:10])
    untested = [f"{m} {p}" for m, p, _ in ops if not sent.get(f"{m} {p}")]
    assert not untested, f"routes never requested: {untested}"


def test_websocket_commands_never_close_the_socket(fuzz_client) -> None:
    """Random WebSocket commands (every command name, the fields of every REST body, junk values): each gets an
    ``ack`` or an error in the documented shape on the same socket, never a closed socket or a 5xx."""
    from kosti.dashboard.routes.commands import COMMANDS

    fields = st.dictionaries(st.sampled_from(["game_id", "faces", "die_index", "value", "pin", "x"]), JUNK, max_size=4)
    command = st.builds(lambda cmd, f: {"cmd": cmd, **f}, st.sampled_from([*COMMANDS, "nope"]), fields)
    guard = fuzz_client.app.state.pin_guard
    with fuzz_client.websocket_connect("/ws") as ws:
        ws.receive_json()

        @settings(max_examples=150, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(msg=st.one_of(command, JUNK), with_pin=st.booleans())
        def run(msg: Any, with_pin: bool) -> None:
            guard._fails.clear()
            guard._locked_until = 0.0
            if with_pin and isinstance(msg, dict):
                msg = {**msg, "pin": "123456"}  # past the PIN: the command itself runs
            ws.send_json(msg)
            reply = ws.receive_json()
            while reply.get("type") not in ("ack", "error"):  # state pushes in between
                reply = ws.receive_json()
            if reply["type"] == "error":
                assert reply["status"] < 500 and reply["error"] and reply["error_ru"], reply

        run()
