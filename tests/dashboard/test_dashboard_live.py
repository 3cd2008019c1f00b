"""The whole chain in-process: virtual table pixels → settle → reader → engine → snapshot (lifespan thread)."""

from __future__ import annotations

import json
import time

import ci_guard

from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
from kosti.sim.virtual import VirtualTableSource


def _wait(client, pred, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = client.get("/api/state").json()
        if pred(s):
            return s
        time.sleep(0.1)
    raise AssertionError(f"timed out; last state: {s.get('last_throw')} {s.get('pending')}")


def _source() -> VirtualTableSource:
    return VirtualTableSource(size=(640, 360), fps=20, realtime=True, initial_throw=False, tumble_s=0.5, seed=3)


def test_virtual_table_throw_is_read_and_scored(make_client, start_game, scores):
    src = _source()
    with make_client(source_obj=src, reader_kind="truth") as c:  # lifespan: capture thread runs
        gid = start_game(c)
        r = c.post(f"/api/games/{gid}/throw", json={"faces": [1, 1, 1, 5, 3]})
        assert r.status_code == 200 and r.json()["requested"] == 5
        s = _wait(c, lambda s: s["last_throw"] is not None and s["last_throw"].get("id"))
        assert sorted(s["last_throw"]["faces"]) == [1, 1, 1, 3, 5]
        assert s["last_throw"]["resolution"] == "applied" and s["state"]["turn"]["turn_points"] == 105
        assert s["source"]["kind"] == "virtual" and s["source"]["fps"] > 0  # frames flow (speed: benchmarks/)
        assert "ground truth" in s["reader"]
        # The virtual table now throws the dice the state asks for: one die is left.
        assert src.n_dice == 1
        assert c.post(f"/api/games/{gid}/bank").status_code == 200
        assert scores(c.get("/api/state").json())["Ann"] == 105
        img = c.get(f"/api/throws/{s['last_throw']['id']}/image.jpg")
        assert img.status_code == 200 and img.content[:2] == b"\xff\xd8"
        frame = c.get("/snapshot.jpg")
        assert frame.status_code == 200 and len(frame.content) > 5000  # a real rendered frame, not a placeholder
        with c.websocket_connect("/ws") as ws:  # camera health is pushed every 2 s
            for _ in range(10):
                msg = ws.receive_json()
                if msg["type"] == "source":
                    break
            assert msg["type"] == "source" and msg["source"]["kind"] == "virtual" and msg["source"]["fps"] > 0


def test_virtual_table_read_by_the_real_reader_never_scores_wrongly(make_client, start_game):
    ci_guard.shipped(DETECTOR_ONNX, "shipped detector")
    ci_guard.shipped(CLASSIFIER_ONNX, "shipped face classifier")
    src = _source()
    with make_client(source_obj=src, reader_kind="models") as c:
        gid = start_game(c)
        for _ in range(3):
            before = (c.get("/api/state").json()["last_throw"] or {}).get("id")
            assert c.post(f"/api/games/{gid}/throw").status_code == 200
            s = _wait(c, lambda s, before=before: (s["last_throw"] or {}).get("id") not in (None, before), 30)
            truth = src.throws[-1].faces
            if s["pending"] is None:  # applied at once: it must be exactly what was thrown
                assert s["last_throw"]["resolution"] == "applied"
                assert sorted(s["last_throw"]["faces"]) == truth
            else:  # held for the table: nothing was scored from it
                assert s["pending"]["id"] == s["last_throw"]["id"]
                r = c.post(f"/api/games/{gid}/confirm", json={"faces": truth})
                assert r.status_code == 200, r.text
            if c.get("/api/state").json()["state"]["over"]:
                break


def test_auto_throw_follows_the_dice_the_rules_ask_for(make_client, start_game):
    src = VirtualTableSource(size=(640, 360), fps=20, realtime=True, initial_throw=False, tumble_s=0.3,
                             auto_every_s=1.0, seed=11)
    with make_client(source_obj=src, reader_kind="truth") as c:
        gid = start_game(c)
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            h = c.get(f"/api/games/{gid}/history").json()
            rolls = [a for a in h["actions"] if a["kind"] == "roll"]
            if len(rolls) >= 4:
                break
            time.sleep(0.2)
        assert len(rolls) >= 4, h["throws"]
        # Every automatic throw had exactly the dice the engine asked for, so each was applied at once.
        from kosti.engine import GameState

        store = c.app.state.store
        for a in store.actions(gid):
            if a.kind == "roll":
                before = GameState.from_json(json.loads(a.state_before_json))
                assert len(a.payload["faces"]) == before.dice_to_throw
        applied = {r["throw_id"] for r in rolls}
        assert all(t["resolution"] == "applied" for t in h["throws"] if t["id"] in applied), h["throws"]


def test_reader_is_swapped_when_the_active_model_changes(make_client, start_game):
    """``kosti models use`` moves the registry's change token; the running table loads the new reader."""
    from kosti.dashboard.table import VirtualTruthReader

    src = _source()
    token = {"v": 1}
    built = []

    def factory():
        r = VirtualTruthReader(src)
        r.name = f"model v{token['v']}"
        built.append(r)
        return r

    first = VirtualTruthReader(src)
    first.name = "model v1"
    with make_client(source_obj=src, reader=first, reader_reload=(factory, lambda: token["v"])) as c:
        assert _wait(c, lambda s: s["reader"] == "model v1")
        token["v"] = 2
        s = _wait(c, lambda s: s["reader"] == "model v2", 10)
        assert len(built) == 1 and c.app.state.table.live.runner.detector.reader is built[0]
        gid = start_game(c)  # and the new reader reads the throws
        c.post(f"/api/games/{gid}/throw", json={"faces": [1, 1, 1, 5, 3]})
        s = _wait(c, lambda s: (s["last_throw"] or {}).get("id") is not None)
        assert s["last_throw"]["resolution"] == "applied"
