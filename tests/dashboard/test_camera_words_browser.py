"""Issue 42, item 4, in real headless Chromium: a camera that is not there (a real OpenCV device source on a
``/dev/video`` node that does not exist, retried with backoff by ``ReconnectingSource``) — the page says why in
words beside the "camera down" badge, and when kosti tries again, in English and in Russian; the spectator view
says it too.

Needs Debian's ``chromium`` and ``chromium-driver``: skipped with a reason when missing, failed when ``CI=true``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kosti.dashboard.app import DashboardConfig, create_app

MISSING = "/dev/video63"


class NoDice:
    """A reader that sees no dice (no frame ever arrives here anyway)."""

    name = "no dice (test)"

    def read(self, image):
        from kosti.vision.detections import Detections

        return Detections.empty()


@pytest.mark.slow
def test_the_page_says_why_the_camera_is_down(tmp_path, browser, serve) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    if Path(MISSING).exists():
        pytest.skip(f"{MISSING} exists on this machine")
    d = browser()
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", source=MISSING, reader=NoDice(),
                                     players=["Ann", "Boris"]))
    srv = serve(app)
    d.get(srv.url + "/")
    d.execute_script("localStorage.setItem('kosti.lang', 'en')")
    d.get(srv.url + "/")
    wait = WebDriverWait(d, 30)
    why = lambda: d.find_element(By.ID, "cam-why")  # noqa: E731
    wait.until(lambda d: why().is_displayed() and "trying again in" in why().text)
    text = why().text
    # a /dev/videoN that does not exist: nothing is plugged in (issue 44: kosti picks it up when it appears)
    assert text.startswith("no camera is connected: plug it in, kosti picks it up by itself; trying again in "), text
    assert d.find_element(By.ID, "cam").text == "camera down"
    assert d.find_element(By.ID, "cam").get_attribute("title") == text
    d.find_element(By.ID, "lang-toggle").click()
    wait.until(lambda d: "новая попытка через" in why().text)
    assert why().text.startswith("камера не подключена: подключите её, kosti найдёт её сам; новая попытка через "), \
        why().text
    d.get(srv.url + "/tv")  # the spectators see why the picture is missing, too
    wait.until(lambda d: why().is_displayed() and "камера не подключена" in why().text)
    status = app.state.table.live.source_info()["status"]
    assert status["state"] in ("reconnecting", "connecting") and status["attempts"] >= 1, status
