"""A camera mounted sideways or at an angle: the table turns its picture (``rotate``), and the marked tray turns
with it, so the reader sees the far side of the table at the top (the v1.3 classifier reads a die seen from the side
by the face at the top of the die, docs/reader.md)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from kosti.vision.detections import Detections


class NoDice:
    """A reader that finds nothing (the frames' geometry is what these tests look at)."""

    def read(self, image: np.ndarray) -> Detections:
        return Detections.empty()


def _frames(folder: Path, n: int = 3) -> Path:
    """``n`` 320×180 frames, each with a red square in its top-left corner."""
    folder.mkdir()
    for i in range(n):
        img = np.full((180, 320, 3), 90, np.uint8)
        img[10:40, 10:40] = (0, 0, 255)
        cv2.imwrite(str(folder / f"f{i:03d}.png"), img)
    return folder


def _flat(poly: list[list[float]]) -> list[float]:
    return [v for p in poly for v in p]


def _red_corner(image: np.ndarray) -> tuple[bool, bool]:
    """``(top, left)``: where the red square lies in ``image``."""
    ys, xs = np.nonzero((image[:, :, 2] > 200) & (image[:, :, 0] < 50))
    h, w = image.shape[:2]
    return bool(ys.mean() < h / 2), bool(xs.mean() < w / 2)


def test_turning_the_picture_turns_the_frames_and_the_marked_tray(make_client, tmp_path):
    folder = _frames(tmp_path / "frames")
    c = make_client(source=str(folder), reader=NoDice(), start_capture=False)
    tray = [[0.1, 0.2], [0.5, 0.2], [0.5, 0.6], [0.1, 0.6]]
    assert c.put("/api/settings", json={"zones": {"roll_area": tray, "set_aside": None}}).status_code == 200
    assert c.get("/api/settings").json()["rotate"] == 0
    r = c.put("/api/settings", json={"rotate": 90})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["rotate"] == 90
    # The tray marked on the upright picture, turned a quarter clockwise with it: (x, y) → (1 - y, x).
    assert _flat(s["zones"]["roll_area"]) == pytest.approx(_flat([[0.8, 0.1], [0.8, 0.5], [0.4, 0.5], [0.4, 0.1]]))
    frame = c.app.state.table.live.source.read()
    assert frame.image.shape == (320, 180, 3)  # 320 wide, 180 high → 180 wide, 320 high
    assert _red_corner(frame.image) == (True, False)  # top-left turned clockwise → top-right
    # Turning back restores the tray exactly, and the choice is kept for the next start.
    assert _flat(c.put("/api/settings", json={"rotate": 270}).json()["zones"]["roll_area"]) == \
        pytest.approx(_flat([[0.2, 0.9], [0.2, 0.5], [0.6, 0.5], [0.6, 0.9]]))
    assert _flat(c.put("/api/settings", json={"rotate": 0}).json()["zones"]["roll_area"]) == pytest.approx(_flat(tray))
    c.put("/api/settings", json={"rotate": 180})
    c.app.state.store.close()
    c2 = make_client(source=str(folder), reader=NoDice(), start_capture=False)
    assert c2.get("/api/settings").json()["rotate"] == 180
    assert _red_corner(c2.app.state.table.live.source.read().image) == (False, False)


def test_a_bad_turn_or_the_virtual_table_is_refused_in_both_languages(make_client, tmp_path):
    folder = _frames(tmp_path / "frames")
    c = make_client(source=str(folder), reader=NoDice(), start_capture=False)
    r = c.put("/api/settings", json={"rotate": 45})
    assert r.status_code == 422 and "90" in r.text
    r = c.put("/api/settings", json={"rotate": 90.0})  # a whole number of degrees, stored as one
    assert r.status_code == 200 and r.json()["rotate"] == 90 and c.app.state.store.get_settings()["rotate"] == 90
    v = make_client(db_path=tmp_path / "v.db", start_capture=False)  # the built-in virtual table
    r = v.put("/api/settings", json={"rotate": 90})
    assert r.status_code == 422, r.text
    assert "virtual table" in r.json()["error"] and "виртуального стола" in r.text
    assert v.get("/api/settings").json()["rotate"] is None  # nothing to turn
    r = v.put("/api/settings", json={"rotate": 0, "thresholds": {"still_s": 0.5}})  # no turn: nothing to refuse
    assert r.status_code == 200 and r.json()["thresholds"]["still_s"] == 0.5 and r.json()["rotate"] is None
    assert "rotate" not in v.app.state.store.get_settings()


def test_a_switched_source_keeps_the_tables_turn(make_client, tmp_path):
    c = make_client(source=str(_frames(tmp_path / "a")), reader=NoDice(), start_capture=False)
    assert c.put("/api/settings", json={"rotate": 270}).status_code == 200
    r = c.put("/api/settings", json={"source": str(_frames(tmp_path / "b"))})
    assert r.status_code == 200 and r.json()["rotate"] == 270
    frame = c.app.state.table.live.source.read()
    assert frame.image.shape == (320, 180, 3) and _red_corner(frame.image) == (False, True)  # → bottom-left


@pytest.mark.slow
def test_the_settings_turn_the_picture_in_both_languages(tmp_path, browser, serve):
    """On the table page: Settings → Turn the picture 90° → Save turns the camera's frames; the control reads in
    Russian, and is disabled on the virtual table, whose picture is never turned."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from kosti.dashboard.app import DashboardConfig, create_app

    app = create_app(DashboardConfig(db_path=tmp_path / "a.db", source=str(_frames(tmp_path / "frames")),
                                     reader=NoDice(), start_capture=False))
    virtual = create_app(DashboardConfig(db_path=tmp_path / "b.db", start_capture=False))
    srv, srv2 = serve(app), serve(virtual)
    d = browser()
    wait = WebDriverWait(d, 20, ignored_exceptions=(StaleElementReferenceException,))
    d.get(srv.url + "/")
    d.execute_script("localStorage.setItem('kosti.lang', 'ru')")
    d.get(srv.url + "/")
    d.execute_script("document.getElementById('settings-details').open = true")
    wait.until(lambda d: d.find_element(By.ID, "set-rotate").is_displayed())
    label = d.find_element(By.XPATH, "//select[@id='set-rotate']/preceding-sibling::span")
    assert label.text == "Повернуть изображение (по часовой стрелке)"
    _upside_down_throws(app.state.table.live)  # the banner offers the turn back, in Russian
    wait.until(lambda d: d.find_element(By.ID, "turn-banner").is_displayed())
    assert "дальний край стола оказался сверху" in d.find_element(By.ID, "turn-text").text
    assert d.find_element(By.ID, "btn-turn-later").text == "Не сейчас"
    button = d.find_element(By.ID, "btn-turn")
    assert button.text == "Установить «Повернуть изображение» на 180°"
    button.click()
    wait.until(lambda d: app.state.table.settings.current()["rotate"] == 180)
    wait.until(lambda d: not d.find_element(By.ID, "turn-banner").is_displayed())
    wait.until(lambda d: Select(d.find_element(By.ID, "set-rotate")).first_selected_option.text == "180°")
    Select(d.find_element(By.ID, "set-rotate")).select_by_value("90")
    d.find_element(By.ID, "btn-save-settings").click()
    wait.until(lambda d: app.state.table.settings.current()["rotate"] == 90)
    assert app.state.table.live.source.read().image.shape == (320, 180, 3)
    # Switched to the virtual table, the control is disabled at once and says why (a later Save is not refused).
    d.find_element(By.ID, "set-source").clear()
    d.find_element(By.ID, "set-source").send_keys("virtual")
    d.find_element(By.ID, "btn-save-settings").click()
    wait.until(lambda d: not d.find_element(By.ID, "set-rotate").is_enabled())
    assert d.find_element(By.ID, "rotate-hint").text == "Изображение виртуального стола не поворачивается."
    d.find_element(By.ID, "set-still").clear()
    d.find_element(By.ID, "set-still").send_keys("0.5")
    d.find_element(By.ID, "btn-save-settings").click()
    wait.until(lambda d: app.state.table.settings.current()["thresholds"]["still_s"] == 0.5)
    d.get(srv2.url + "/")
    d.execute_script("document.getElementById('settings-details').open = true")
    wait.until(lambda d: "on" in d.find_element(By.ID, "conn").get_attribute("class"))
    wait.until(lambda d: not d.find_element(By.ID, "set-rotate").is_enabled())


def _upside_down_throws(live) -> None:
    """Feed ``live`` (a :class:`kosti.dashboard.wiring.LiveTable`) enough settled throws of dice larger towards the
    top of a 1280 × 720 frame (an angled camera mounted upside down) for the orientation check to speak."""
    from kosti.vision.orientation import MIN_THROWS
    from kosti.vision.throws import Die, Throw

    rng = np.random.default_rng(3)
    frame = np.zeros((720, 1280, 3), np.uint8)
    for i in range(MIN_THROWS):
        cx, cy = rng.uniform(150, 1130, 5), rng.uniform(100, 620, 5)
        side = 40 * np.exp(0.8 * (1 - cy / 720))
        dice = [Die(3, 0.99, (x - s / 2, y - s / 2, x + s / 2, y + s / 2)) for x, y, s in zip(cx, cy, side)]
        live._throw(Throw(frame_index=i, time_s=float(i), dice=dice, image=frame))


def test_the_table_is_told_to_turn_a_picture_whose_dice_grow_upwards(make_client, tmp_path):
    """Settled throws whose dice are larger towards the top of the frame (a camera at an angle, mounted upside down)
    make the table say which turn puts the far side at the top (``source.turn_hint``, shown on the page); turning
    the picture forgets those throws."""
    c = make_client(source=str(_frames(tmp_path / "frames")), reader=NoDice(), start_capture=False)
    live = c.app.state.table.live
    assert c.get("/api/state").json()["source"]["turn_hint"] is None
    _upside_down_throws(live)
    src = c.get("/api/state").json()["source"]
    assert src["turn_hint"] == 180 and src["rotate"] == 0
    assert c.put("/api/settings", json={"rotate": 180}).status_code == 200
    src = c.get("/api/state").json()["source"]
    assert src["turn_hint"] is None and src["rotate"] == 180 and live.orientation.throws == 0


def test_turning_the_picture_of_a_running_table_is_no_new_throw(make_client):
    """With the camera runner running, the dice lying on the table when the picture is turned are not read again as
    the next throw (the runner turns the frames between two frames: :meth:`LivePipeline.turn_view`)."""
    import time

    from kosti.vision.frame_source import FrameSource

    class StillTray(FrameSource):
        kind = "opencv"

        def _open(self) -> None: ...
        def _close(self) -> None: ...

        def _read(self, timeout):
            time.sleep(1 / 30)
            img = np.full((360, 640, 3), 80, np.uint8)
            for x, y in ((100, 80), (300, 200), (500, 120)):
                img[y:y + 40, x:x + 40] = 235
            return img, time.monotonic()

    class WhiteSquares:
        conf, value_conf = 0.5, 0.7

        def read(self, image: np.ndarray) -> Detections:
            n, labels, stats, _ = cv2.connectedComponentsWithStats((image[:, :, 0] > 200).astype(np.uint8))
            boxes = np.array([[x, y, x + w, y + h] for x, y, w, h, _ in stats[1:]], float).reshape(-1, 4)
            k = len(boxes)
            return Detections(boxes, np.full(k, 0.95), np.full(k, 5), np.full(k, 0.97))

    with make_client(source_obj=StillTray(), source="0", reader=WhiteSquares()) as c:
        live = c.app.state.table.live
        live.runner.announce_throw()  # the dice on the tray are a throw: the first rest is read
        deadline = time.monotonic() + 15
        while live.last_settled is None and time.monotonic() < deadline:
            time.sleep(0.1)
        first = live.last_settled
        assert first is not None and [d.value for d in first.dice] == [5, 5, 5]
        assert c.put("/api/settings", json={"rotate": 180}).status_code == 200
        time.sleep(3.0)  # well past the settle time: a phantom throw would have been read by now
        assert live.last_settled is first
        assert live.source.rotation == 180 and c.get("/api/settings").json()["rotate"] == 180
