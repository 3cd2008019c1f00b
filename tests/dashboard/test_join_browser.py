"""Joining from a phone and downloading a game, in headless Chromium (issue 43, items 1 and 3): the page shows the
spectators' QR code, a control QR code's ``#pin=`` is kept as the PIN and taken out of the address bar, the players'
code (with the PIN) is shown only to a page that has the PIN, the list of games links each game's exports, and /tv
shows the spectators' code without any control."""

from __future__ import annotations

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from kosti.dashboard.app import DashboardConfig, create_app


@pytest.mark.slow
def test_join_codes_and_exports_in_the_browser(tmp_path, browser, serve):
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host="0.0.0.0", pin="4826", players=["Ann", "Boris"]))
    srv = serve(app)
    d = browser()
    # the TV view's request for the players' code is refused (403): the TV shows only the spectators' code
    browser.allow("qr.svg?for=control - Failed to load resource: the server responded with a status of 403")
    wait = WebDriverWait(d, 20)
    d.get(srv.url + "/#pin=4826")  # what a phone opens from the players' QR code
    wait.until(lambda d: d.execute_script("const i = document.getElementById('join-qr');"
                                          "return i.complete && i.naturalWidth > 0 && i.src.endsWith('/api/join/qr.svg')"))
    assert d.execute_script("return localStorage.getItem('kosti.pin')") == "4826"
    assert d.execute_script("return location.hash") == "", "the PIN leaves the address bar"
    assert "http://" in d.find_element(By.ID, "join-url").text
    d.find_element(By.ID, "btn-join-control").click()
    wait.until(lambda d: d.find_element(By.ID, "join-qr").get_attribute("src").startswith("blob:"))
    assert "PIN" in d.find_element(By.ID, "join-url").text
    # the list of games links the exports of each game
    d.execute_script("document.getElementById('games').scrollIntoView()")
    links = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#games-list .game-export a"))
    hrefs = [a.get_attribute("href") for a in links]
    assert [h.rsplit("=", 1)[1] for h in hrefs] == ["csv", "json", "zip"]
    r = httpx.get(hrefs[0], timeout=10)
    assert r.status_code == 200 and r.content.startswith(b"\xef\xbb\xbfturn,round,player")
    # Russian: the section is translated
    d.find_element(By.ID, "lang-toggle").click()
    assert d.find_element(By.CSS_SELECTOR, "#join h2").get_attribute("textContent") == "Подключиться с телефона"
    # a page without the PIN does not get the players' code
    d.execute_script("localStorage.removeItem('kosti.pin')")
    d.get(srv.url + "/")
    wait.until(lambda d: d.find_element(By.ID, "btn-join-control").is_displayed())
    d.find_element(By.ID, "btn-join-control").click()
    wait.until(lambda d: d.find_element(By.ID, "pin").is_displayed())
    assert not d.find_element(By.ID, "join-qr").get_attribute("src").startswith("blob:")
    # the TV shows the spectators' code, and no button
    d.get(srv.url + "/tv")
    wait.until(lambda d: d.execute_script("const i = document.getElementById('join-qr');"
                                          "return i.complete && i.naturalWidth > 0"))
    assert d.find_element(By.ID, "join").is_displayed()
    assert not d.find_element(By.ID, "btn-join-control").is_displayed()
