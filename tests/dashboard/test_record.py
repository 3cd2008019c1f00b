"""Issue 40: every game a table plays becomes a labelled real test of its own table. ``kosti run --record DIR`` on the
virtual table keeps each throw as a short clip with the throw the game recorded beside it; ``kosti watch --truth
DIR`` then replays those clips through the pipeline with the shipped reader and scores it: every throw right."""

from __future__ import annotations

import json
import time
from pathlib import Path

import ci_guard
import pytest
from waiting import wait_for

from kosti.models import CLASSIFIER_ONNX, DETECTOR_ONNX
from kosti.sim.virtual import VirtualTableSource


def _wait(pred, timeout: float = 30.0, what: str = "") -> None:
    wait_for(what, pred, timeout)


def test_a_recorded_game_scores_every_throw_right(make_client, start_game, tmp_path, capsys):
    ci_guard.shipped(DETECTOR_ONNX, "shipped detector")
    ci_guard.shipped(CLASSIFIER_ONNX, "shipped face classifier")
    rec = tmp_path / "rec"
    src = VirtualTableSource(size=(640, 360), fps=20, realtime=True, initial_throw=False, tumble_s=0.5, seed=5)
    with make_client(source_obj=src, reader_kind="truth", record_dir=rec, record_mb=50) as c:
        gid = start_game(c)
        ids: list[int] = []
        for _ in range(3):
            before = (c.get("/api/state").json()["last_throw"] or {}).get("id")
            assert c.post(f"/api/games/{gid}/throw").status_code == 200
            _wait(lambda b=before: (c.get("/api/state").json()["last_throw"] or {}).get("id") not in (None, b),
                  what="the throw")
            ids.append(c.get("/api/state").json()["last_throw"]["id"])
            _wait(lambda n=len(ids): len(list(rec.glob("*.json"))) >= n, what="the clip")  # 2 s after the read
        # each clip's truth is the throw as the game recorded it (what the table saw, here applied as read)
        last = c.get("/api/state").json()["last_throw"]
        truths = sorted(rec.glob("*.json"), key=lambda p: json.loads(p.read_text())["frame"])
        assert len(truths) == 3 and all(p.with_suffix(".avi").stat().st_size > 10_000 for p in truths)
        recorded = [json.loads(p.read_text()) for p in truths]
        assert [r["throws"] for r in recorded] == [[sorted(t.faces)] for t in src.throws[:3]]
        assert recorded[-1]["throws"] == [sorted(last["faces"])]
        for r in recorded:  # the rest starts the still time before the read, inside the clip
            assert 0.0 < r["rest_s"][0] < r["rest_s"][1]
        from kosti.cli import main

        capsys.readouterr()
        assert main(["watch", "--truth", str(rec), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        total = report["total"]
        assert (total["throws"], total["right"], total["missed"], total["extra"], total["merged"]) == (3, 3, 0, 0, 0), \
            report
        assert 0.0 <= total["read_s_max"] <= 0.6
        # The table fixes a die of the last throw (here wrongly, against what the clip shows): the clip's truth
        # follows what the game recorded, and scoring the folder again shows the disagreement.
        fixed = 1 + last["faces"][0] % 6
        assert c.post(f"/api/games/{gid}/fix", json={"die_index": 0, "value": fixed}).status_code == 200
        want = sorted([fixed, *last["faces"][1:]])
        _wait(lambda: json.loads(truths[-1].read_text())["throws"] == [want], 10, "the clip's truth to follow the fix")
    capsys.readouterr()
    assert main(["watch", "--truth", str(rec), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (total["right"], total["missed"], total["extra"], total["merged"]) == (2, 1, 1, 0)


def test_the_record_folder_keeps_to_its_size_cap_oldest_first(tmp_path):
    """A folder above its cap loses its oldest clips (and their truths) first."""
    import numpy as np

    from kosti.vision.recorder import ThrowRecorder
    from kosti.vision.throws import Die, Throw

    rec = ThrowRecorder(tmp_path, before_s=1.0, after_s=0.5, max_mb=0.0)
    rng = np.random.default_rng(1)
    t = 0.0
    for k in range(3):
        for _ in range(30):
            rec.frame(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), t, moving=True)
            t += 1 / 30
        rec.throw(Throw(frame_index=100 * k, time_s=t, dice=[Die(3, 0.9, (1, 1, 9, 9))]))
        for _ in range(20):
            rec.frame(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), t)
            t += 1 / 30
    sizes = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    assert len(sizes) == 6
    one = max(v for k, v in sizes.items() if k.endswith(".avi"))
    rec2_dir = tmp_path / "capped"
    rec2 = ThrowRecorder(rec2_dir, before_s=1.0, after_s=0.5, max_mb=2.5 * one / 1e6)
    for k in range(3):
        for _ in range(30):
            rec2.frame(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), t, moving=True)
            t += 1 / 30
        rec2.throw(Throw(frame_index=100 * k, time_s=t, dice=[Die(3, 0.9, (1, 1, 9, 9))]))
        for _ in range(20):
            rec2.frame(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8), t)
            t += 1 / 30
        time.sleep(0.02)  # (distinct modification times)
    left = sorted(p.name for p in Path(rec2_dir).glob("*.avi"))
    assert len(left) == 2 and all("_f0." not in n for n in left), left
    assert sorted(p.with_suffix(".avi").name for p in Path(rec2_dir).glob("*.json")) == left


def test_the_settings_switch_turns_recording_on_and_off(make_client, tmp_path):
    """Settings → "Keep each throw as a short clip": the clips go to clips/ beside the database, the cap is kept, and
    the switch is stored (a restart keeps recording)."""
    src = VirtualTableSource(size=(640, 360), fps=20, realtime=True, initial_throw=False, tumble_s=0.5, seed=5)
    with make_client(source_obj=src, reader_kind="truth") as c:
        s = c.get("/api/settings").json()
        assert s["record"] is False and s["record_dir"] == str(tmp_path / "clips")
        s = c.put("/api/settings", json={"record": True, "record_mb": 40}).json()
        assert s["record"] is True and s["record_mb"] == 40
        recorder = c.app.state.table.live.recorder
        assert recorder is not None and recorder.folder == tmp_path / "clips" and recorder.max_mb == 40
        assert c.put("/api/settings", json={"record_mb": 5}).status_code == 422  # under 10 MB: refused, nothing lost
        assert c.get("/api/settings").json()["record_mb"] == 40
    with make_client(source_obj=VirtualTableSource(realtime=False, initial_throw=False), reader_kind="truth") as c:
        assert c.get("/api/settings").json()["record"] is True  # stored
        assert c.put("/api/settings", json={"record": False}).json()["record"] is False
        assert c.app.state.table.live.recorder is None


@pytest.mark.slow
def test_the_record_switch_on_the_page_in_both_languages(tmp_path, browser, serve):
    """Settings → "Keep each throw as a short clip" on the table page, in English and in Russian: ticking it and
    Save turns recording on into the clips folder the hint names; the cap is sent with it."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from kosti.dashboard.app import DashboardConfig, create_app

    app = create_app(DashboardConfig(db_path=tmp_path / "a.db", start_capture=False))
    srv = serve(app)
    d = browser()
    wait = WebDriverWait(d, 20, ignored_exceptions=(StaleElementReferenceException,))
    for lang, words in (("en", "Keep each throw as a short clip, to check this table later"),
                        ("ru", "Сохранять каждый бросок коротким роликом, чтобы потом проверить этот стол")):
        d.get(srv.url + "/")
        d.execute_script(f"localStorage.setItem('kosti.lang', '{lang}')")
        d.get(srv.url + "/")
        d.execute_script("document.getElementById('settings-details').open = true")
        wait.until(lambda d: d.find_element(By.ID, "set-record").is_displayed())
        label = d.find_element(By.XPATH, "//input[@id='set-record']/following-sibling::span")
        assert label.text == words
        wait.until(lambda d: str(tmp_path / "clips") in d.find_element(By.ID, "record-hint").text)
    box = d.find_element(By.ID, "set-record")
    assert not box.is_selected()
    box.click()
    mb = d.find_element(By.ID, "set-record-mb")
    mb.clear()
    mb.send_keys("80")
    d.find_element(By.ID, "btn-save-settings").click()
    wait.until(lambda d: app.state.table.live.recorder is not None)
    assert app.state.table.live.recorder.max_mb == 80 and app.state.table.live.recorder.folder == tmp_path / "clips"
    wait.until(lambda d: "Самые старые ролики удаляются первыми" in d.find_element(By.ID, "record-hint").text)
