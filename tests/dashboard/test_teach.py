"""The dashboard's teach flow (``kosti.dashboard.teach``): save the latest settled throw, refuse to train before
anything is confirmed, run a training job in the background with progress, show its before/after result."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from kosti.dashboard.routes.teach import create_teach_router
from kosti.dashboard.teach import MIN_REVIEWED, TeachJob
from kosti.dashboard.throws import TableDie, TableThrow
from kosti.datasets import capture as cap

RESULT = {"version": "20261201-090000", "activated": False, "minutes": 0.1, "held_back_images": 2,
          "before": {"precision": 1.0, "recall": 0.9, "die_accuracy": 0.94, "image_exact": 0.7},
          "after": {"precision": 1.0, "recall": 0.95, "die_accuracy": 1.0, "image_exact": 0.9},
          "refused": "classifier: die_accuracy on the reference photos fell from 0.985 to 0.976 (more than 0.005)"}


def _stand_in(tmp: Path):
    """A command that writes an Ultralytics-like progress file, then prints kosti train's JSON on stdout."""
    script = tmp / "fake_train.py"
    script.write_text(
        "import json, sys, time, pathlib\n"
        "work = pathlib.Path(sys.argv[1]); run = work / 'runs' / 'cls'; run.mkdir(parents=True)\n"
        "(run / 'args.yaml').write_text('epochs: 4\\n')\n"
        "(run / 'results.csv').write_text('epoch,time\\n1,2.0\\n')\n"
        "time.sleep(1.5)\n"
        "print('Ultralytics log line on stderr', file=sys.stderr)\n"
        f"print(json.dumps({RESULT!r}))\n")
    return lambda data, work: [sys.executable, str(script), str(work)]


def _throw(values) -> TableThrow:
    """A settled throw with its frame, as the table's ``last_settled`` holds it (0 = an unread die)."""
    dice = [TableDie(v, 0.9, [10.0 + 40 * i, 10.0, 40.0 + 40 * i, 40.0], uncertain=v == 0) for i, v in enumerate(values)]
    return TableThrow(dice=dice, image=np.full((120, 320, 3), 128, np.uint8))


def test_teach_flow_capture_train_result(tmp_path: Path) -> None:
    root = tmp_path / "cap"
    table = SimpleNamespace(last_settled=None)
    job = TeachJob(root, work_root=tmp_path, command=_stand_in(tmp_path))
    app = FastAPI()
    app.include_router(create_teach_router(root, table=table, job=job))
    c = TestClient(app)
    page = c.get("/teach")
    assert page.status_code == 200 and "teach my dice" in page.text and "научить" in page.text
    assert c.get("/teach/teach.js").status_code == 200
    # Nothing settled yet: a clear two-language refusal, nothing written.
    r = c.post("/api/teach/capture")
    assert r.status_code == 409 and r.json()["error"] and r.json()["error_ru"]
    # Two throws saved, unreviewed; an unread die without a guess is left for the reviewer to draw.
    table.last_settled = _throw([5, 2])
    assert c.post("/api/teach/capture").status_code == 201
    table.last_settled = _throw([6, 0])
    body = c.post("/api/teach/capture").json()
    assert body["images"] == 2 and body["reviewed"] == 0 and body["dice"] == 1
    ids = cap.list_ids(root)
    assert [len(cap.load(root, i, with_image=False).dice) for i in ids] == [2, 1]
    # Training is refused until enough photos are confirmed.
    r = c.post("/api/teach/train")
    assert r.status_code == 409 and str(MIN_REVIEWED) in r.json()["error"]
    for i in ids:
        cap.set_reviewed(root, i)
    r = c.post("/api/teach/train")
    assert r.status_code == 202 and r.json()["job"]["state"] == "running"
    assert c.post("/api/teach/train").status_code == 409  # one job at a time
    seen_progress = None
    for _ in range(100):
        st = c.get("/api/teach/status").json()["job"]
        if st["state"] == "running" and st["progress"] and st["progress"]["epoch"]:
            seen_progress = st["progress"]
        if st["state"] != "running":
            break
        time.sleep(0.1)
    assert st["state"] == "done", st
    assert st["result"] == json.loads(json.dumps(RESULT))
    assert seen_progress == {"stage": "classifier", "epoch": 1, "epochs": 4, "eta_s": round(2.0 * (4 - 1 + 1.5))}


def test_a_failing_training_reports_its_last_log_line(tmp_path: Path) -> None:
    root = tmp_path / "cap"
    cmd = lambda data, work: [sys.executable, "-c", "import sys; print('kosti train: no reviewed photos', file=sys.stderr); sys.exit(2)"]  # noqa: E731
    job = TeachJob(root, work_root=tmp_path, command=cmd)
    root.mkdir()
    job.start()
    for _ in range(100):
        if job.to_json()["state"] != "running":
            break
        time.sleep(0.05)
    st = job.to_json()
    assert st["state"] == "failed" and st["error"] == "kosti train: no reviewed photos"


@pytest.mark.slow
def test_main_page_links_to_the_teach_page_in_both_languages(tmp_path: Path, browser, serve) -> None:
    """With a capture folder the table page links to /teach beside /review (issue 14); without one it does not."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from kosti.dashboard.app import DashboardConfig, create_app

    with_dir = create_app(DashboardConfig(db_path=tmp_path / "a.db", start_capture=False, review_dir=tmp_path / "cap"))
    without = create_app(DashboardConfig(db_path=tmp_path / "b.db", start_capture=False))
    srv, srv2 = serve(with_dir), serve(without)
    d = browser()
    wait = WebDriverWait(d, 20, ignored_exceptions=(StaleElementReferenceException,))
    d.get(srv.url + "/")
    d.execute_script("localStorage.setItem('kosti.lang', 'en')")
    d.get(srv.url + "/")
    d.execute_script("document.getElementById('settings-details').open = true")
    wait.until(lambda d: d.find_element(By.ID, "teach-link").is_displayed())
    link = d.find_element(By.ID, "teach-link")
    assert link.text == "Teach my dice" and link.get_attribute("href") == srv.url + "/teach"
    d.find_element(By.ID, "lang-toggle").click()
    wait.until(lambda d: d.find_element(By.ID, "teach-link").text == "Научить мои кости")
    d.find_element(By.ID, "teach-link").click()
    wait.until(lambda d: d.current_url == srv.url + "/teach" and "научить" in d.title)
    # no capture folder: no /teach route, so no link to it
    d.get(srv2.url + "/")
    d.execute_script("document.getElementById('settings-details').open = true")
    wait.until(lambda d: "on" in d.find_element(By.ID, "conn").get_attribute("class"))
    assert not d.find_element(By.ID, "teach-link").is_displayed()
    assert TestClient(without, base_url="http://127.0.0.1:8000").get("/teach").status_code == 404
