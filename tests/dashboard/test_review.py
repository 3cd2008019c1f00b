"""Label review router (``kosti.dashboard.review``): list, get, save, validation, reviewed counts, PIN —
over a FastAPI app that includes only the router — and the review page driven in headless Chromium."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from kosti.dashboard.routes.review import create_review_router, pin_dependency
from kosti.datasets import capture as cap

W, H = 320, 240


def _frame(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return cv2.resize(rng.integers(0, 255, (H // 8, W // 8, 3), dtype=np.uint8), (W, H), interpolation=cv2.INTER_NEAREST)


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, list[str]]:
    """A capture folder with three images: 2 dice (one uncertain), 1 die, 0 dice."""
    w = cap.CaptureWriter(tmp_path / "cap", model="v1")
    ids = [
        w.add(_frame(0), [(5, (10, 20, 50, 60), 0.9), (0, (100, 100, 140, 140), 0.3, 2)]),
        w.add(_frame(1), [(3, (200, 50, 240, 90), 0.8)]),
        w.add(_frame(2), []),
    ]
    return tmp_path / "cap", ids


def _client(root: Path, pin: str | None = None) -> TestClient:
    app = FastAPI()
    app.include_router(create_review_router(root, pin_check=pin_dependency(pin)))
    return TestClient(app)


def test_list_and_stats(folder) -> None:
    root, ids = folder
    c = _client(root)
    body = c.get("/api/review/images").json()
    assert [it["id"] for it in body["images"]] == ids
    assert [it["dice"] for it in body["images"]] == [2, 1, 0]
    assert [it["uncertain"] for it in body["images"]] == [1, 0, 0]
    assert not any(it["reviewed"] for it in body["images"])
    assert (body["stats"]["images"], body["stats"]["reviewed"], body["stats"]["dice"]) == (3, 0, 3)
    assert c.get("/api/review/images", params={"status": "reviewed"}).json()["images"] == []
    assert c.get("/api/review/images", params={"status": "bogus"}).status_code == 422


def test_get_one_image_and_its_jpeg(folder) -> None:
    root, ids = folder
    c = _client(root)
    rec = c.get(f"/api/review/images/{ids[0]}").json()
    assert (rec["width"], rec["height"], rec["source"], rec["model"]) == (W, H, "capture", "v1")
    assert [(d["value"], d["uncertain"]) for d in rec["dice"]] == [(5, False), (2, True)]
    assert rec["dice"][0]["box"] == pytest.approx([10, 20, 50, 60], abs=0.01)
    assert rec["dice"][0]["confidence"] == pytest.approx(0.9)
    assert (rec["prev"], rec["next"], rec["next_unreviewed"]) == (None, ids[1], ids[1])
    r = c.get(rec["image_url"])
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    img = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (H, W, 3)
    assert c.get("/api/review/images/20990101-000000-000").status_code == 404
    assert "no image" in c.get("/api/review/images/nope/image.jpg").json()["error"]


def test_save_valid_labels_changes_files_and_counts(folder) -> None:
    root, ids = folder
    c = _client(root)
    new = [{"value": 6, "box": [12, 22, 52, 62]}, {"value": 2, "box": [100, 100, 140, 140]},
           {"value": 1, "box": [280, 200, 320, 240]}]
    r = c.put(f"/api/review/images/{ids[0]}/labels", json={"dice": new})
    assert r.status_code == 200, r.text
    rec = r.json()
    assert rec["reviewed"] and rec["edited"]
    assert [d["value"] for d in rec["dice"]] == [6, 2, 1]
    assert rec["stats"]["reviewed"] == 1 and rec["stats"]["dice"] == 3 + 1 + 0
    assert rec["next_unreviewed"] == ids[1]
    # The YOLO file on disk is what training reads.
    lines = (root / "labels" / f"{ids[0]}.txt").read_text().splitlines()
    assert lines[0] == "5 0.100000 0.175000 0.125000 0.166667"
    assert [line.split()[0] for line in lines] == ["5", "1", "0"]
    # Mark reviewed without changes; then un-mark.
    r = c.post(f"/api/review/images/{ids[1]}/reviewed", json={"reviewed": True})
    assert r.status_code == 200 and r.json()["reviewed"] and not r.json()["edited"]
    assert c.get("/api/review/stats").json()["reviewed"] == 2
    c.post(f"/api/review/images/{ids[1]}/reviewed", json={"reviewed": False})
    assert c.get("/api/review/stats").json()["reviewed"] == 1
    # Save without marking reviewed (keep for later).
    r = c.put(f"/api/review/images/{ids[2]}/labels", json={"dice": [{"value": 4, "box": [0, 0, 30, 30]}], "reviewed": False})
    assert r.status_code == 200 and not r.json()["reviewed"] and r.json()["dice"][0]["value"] == 4
    assert c.get("/api/review/stats").json()["reviewed"] == 1


@pytest.mark.parametrize("dice, needle", [
    ([{"value": 7, "box": [1, 1, 20, 20]}], "less than or equal to 6"),
    ([{"value": 0, "box": [1, 1, 20, 20]}], "greater than or equal to 1"),
    ([{"value": 3, "box": [1, 1, 20]}], "at least 4"),
    ([{"value": 3, "box": [20, 1, 10, 20]}], "need x1 < x2"),
    ([{"value": 3, "box": [1, 1, 20, 20]}, {"value": 2, "box": [300, 200, 400, 230]}],
     "die 1: box [300, 200, 400, 230] lies outside the 320×240 image"),
    ([{"value": 3, "box": [-5, 1, 20, 20]}], "outside the 320×240 image"),
])
def test_invalid_labels_rejected_with_a_clear_message(folder, dice, needle) -> None:
    root, ids = folder
    c = _client(root)
    before = (root / "labels" / f"{ids[0]}.txt").read_bytes()
    r = c.put(f"/api/review/images/{ids[0]}/labels", json={"dice": dice})
    assert r.status_code == 422
    assert needle in r.text
    assert (root / "labels" / f"{ids[0]}.txt").read_bytes() == before
    assert c.get("/api/review/stats").json()["reviewed"] == 0


def test_pin_enforced_when_configured(folder) -> None:
    root, ids = folder
    c = _client(root, pin="4321")
    body = {"dice": [{"value": 1, "box": [1, 1, 20, 20]}]}
    assert c.get("/api/review/images").status_code == 200  # reading stays open
    r = c.put(f"/api/review/images/{ids[0]}/labels", json=body)
    assert r.status_code == 403 and "PIN" in r.json()["error"]
    assert c.put(f"/api/review/images/{ids[0]}/labels", json=body, headers={"X-Kosti-Pin": "0000"}).status_code == 403
    assert c.post(f"/api/review/images/{ids[1]}/reviewed").status_code == 403
    assert c.get("/api/review/stats").json()["reviewed"] == 0
    assert c.put(f"/api/review/images/{ids[0]}/labels", json=body, headers={"X-Kosti-Pin": "4321"}).status_code == 200
    assert c.post(f"/api/review/images/{ids[1]}/reviewed?pin=4321").status_code == 200
    assert c.get("/api/review/stats").json()["reviewed"] == 2


def test_custom_pin_check_dependency_is_used(folder) -> None:
    root, ids = folder
    calls: list[str] = []

    def check() -> str:
        calls.append("x")
        return "tester"

    app = FastAPI()
    app.include_router(create_review_router(root, pin_check=check))
    c = TestClient(app)
    assert c.post(f"/api/review/images/{ids[0]}/reviewed").status_code == 200
    assert calls == ["x"]


def test_page_and_assets_served(folder) -> None:
    root, _ = folder
    c = _client(root)
    page = c.get("/review")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/review/review.js" in page.text and "/review/review.css" in page.text
    assert "проверено" in c.get("/review/review.js").text
    assert c.get("/review/review.css").status_code == 200


def test_empty_folder_is_created_and_listed(tmp_path: Path) -> None:
    c = _client(tmp_path / "new")
    assert c.get("/api/review/images").json()["images"] == []
    assert (tmp_path / "new").is_dir()


# -- the page in a real browser -----------------------------------------------------------------------
@pytest.fixture
def server(folder):
    """The router on a real uvicorn server in a thread; yields ``(base URL, folder, ids)``."""
    import uvicorn

    root, ids = folder
    app = FastAPI()
    app.include_router(create_review_router(root))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    for _ in range(400):  # up to 400 looks, 50 ms apart
        if srv.started:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the review server did not start")
    yield f"http://127.0.0.1:{port}", root, ids
    srv.should_exit = True
    th.join(10)


@pytest.mark.slow
def test_review_page_keys_draw_and_save_in_browser(server, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait

    url, root, ids = server
    d = browser(1200, 900)
    d.get(url + "/review")
    wait = WebDriverWait(d, 10)
    wait.until(lambda _: len(d.find_elements("css selector", "#boxes rect.box")) == 2)
    assert d.find_element("id", "counter").text == "0 of 3 reviewed"
    # Select the first box, set face 4 with the keyboard, delete the second (uncertain) box.
    boxes = d.find_elements("css selector", "#boxes rect.box")
    boxes[0].click()
    ActionChains(d).send_keys("4").perform()
    d.find_elements("css selector", "#boxes rect.box")[1].click()
    ActionChains(d).send_keys("\ue017").perform()  # Delete
    assert len(d.find_elements("css selector", "#boxes rect.box")) == 1
    # Draw a missed die: drag on empty space (image pixels ~ (250, 150)–(300, 200)), give it face 2.
    svg = d.find_element("id", "boxes")
    r = svg.rect
    sx, sy = r["width"] / W, r["height"] / H
    ActionChains(d).move_to_element_with_offset(svg, -r["width"] / 2 + 250 * sx, -r["height"] / 2 + 150 * sy) \
        .click_and_hold().move_by_offset(int(25 * sx), int(25 * sy)).move_by_offset(int(25 * sx), int(25 * sy)) \
        .release().perform()
    assert len(d.find_elements("css selector", "#boxes rect.box")) == 2
    ActionChains(d).send_keys("2").perform()
    # Enter saves as reviewed and opens the next unreviewed image.
    # A message ("Saved" for 2.5 s after each save, an error until the next action) floats over the page: the photo
    # does not move under a finger when it comes or goes, and a tap goes through it.
    top = "return document.getElementById('boxes').getBoundingClientRect().top"
    before = d.execute_script(top)
    d.execute_script("showMessage('Saved', true)")
    assert d.find_element("id", "message").is_displayed() and d.execute_script(top) == before
    assert d.execute_script("return getComputedStyle(document.getElementById('message')).pointerEvents") == "none"
    ActionChains(d).send_keys("\ue007").perform()
    wait.until(lambda _: d.find_element("id", "counter").text == "1 of 3 reviewed")
    wait.until(lambda _: ids[1] in d.find_element("id", "img-info").text)
    rec = cap.load(root, ids[0], with_image=False)
    assert rec.reviewed
    assert rec.dice.value.tolist() == [4, 2]
    np.testing.assert_allclose(rec.dice.xyxy[0], (10, 20, 50, 60), atol=0.02)
    np.testing.assert_allclose(rec.dice.xyxy[1], (250, 150, 300, 200), atol=4)  # drawn by a mouse drag
    # Russian text on the language toggle.
    d.find_element("id", "lang-toggle").click()
    assert d.find_element("id", "counter").text == "1 из 3 проверено"
    # Zoom for small dice: + enlarges the image inside its frame (the page does not widen), − restores.
    width0 = d.find_element("id", "stage").rect["width"]
    ActionChains(d).send_keys("+").perform()
    assert d.find_element("id", "zoom-level").text == "1.5×"
    assert d.find_element("id", "stage").rect["width"] == pytest.approx(1.5 * width0, abs=2)
    assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    ActionChains(d).send_keys("-").perform()
    assert d.find_element("id", "zoom-level").text == ""
    # ← goes back to the first image.
    ActionChains(d).send_keys("\ue012").perform()
    wait.until(lambda _: ids[0] in d.find_element("id", "img-info").text)


def test_router_inside_the_dashboard_app(folder, tmp_path: Path) -> None:
    """Served by ``create_app`` (``review_dir``): its validation handler formats 422s, its PIN guards writes."""
    from kosti.dashboard.app import DashboardConfig, create_app

    root, ids = folder
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="0.0.0.0", pin="2468", start_capture=False,
                                     review_dir=root))
    c = TestClient(app, base_url="http://127.0.0.1:8000")  # the dashboard refuses writes to a foreign Host
    try:
        assert c.get("/").status_code == 200 and c.get("/review").status_code == 200
        assert c.get("/api/state").json().get("review_url") == "/review"
        pin = {"X-Kosti-Pin": "2468"}
        r = c.put(f"/api/review/images/{ids[0]}/labels", json={"dice": [{"value": 9, "box": [1, 1, 9, 9]}]}, headers=pin)
        assert r.status_code == 422 and r.json()["error"] == "die value (die 1): must be at most 6"
        assert r.json()["detail"][0]["loc"][-3:] == ["dice", "0", "value"]  # the field path stays for programs
        r = c.put(f"/api/review/images/{ids[0]}/labels", json={"dice": []})
        assert r.status_code == 403 and "PIN" in r.json()["error"]
        r = c.put(f"/api/review/images/{ids[0]}/labels", json={"dice": []}, headers=pin)
        assert r.status_code == 200 and r.json()["dice"] == [] and r.json()["reviewed"]
        r = c.put(f"/api/review/images/{ids[1]}/labels", json={"dice": [{"value": 2, "box": [0, 0, 999, 9]}]}, headers=pin)
        assert r.status_code == 422 and "outside the 320×240 image" in r.json()["error"]
    finally:
        app.state.store.close()
