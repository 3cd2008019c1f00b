"""The "Join from a phone" card of ``/tv`` on a phone (390 × 844 px), in headless Chromium: it never covers the
game (the turn card with its points and hint, the scores), its Russian heading breaks only between words
("ПОДКЛЮЧИТЬСЯ", never "ПОДКЛ/ЮЧИТЬ/СЯ"), and a dashboard that listens on 127.0.0.1 only offers no QR code (no
phone could open it) but says, in English and Russian, to start kosti with --host 0.0.0.0.

Needs Debian's ``chromium`` and ``chromium-driver`` (``bash scripts/setup --test``)."""

from __future__ import annotations

import httpx
import pytest

#: The boxes of every shown element outside the join card (and not holding it), the join card's box, and where
#: its heading's lines break (the character before each new line).
MEASURE = """
  const join = document.getElementById('join');
  const j = join.getBoundingClientRect();
  const hit = [];
  document.querySelectorAll('main *').forEach((el) => {
    if (join.contains(el) || el.contains(join)) return;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || getComputedStyle(el).visibility === 'hidden') return;
    if (r.left < j.right - 0.5 && j.left < r.right - 0.5 && r.top < j.bottom - 0.5 && j.top < r.bottom - 0.5)
      hit.push((el.id || el.className || el.tagName) + ' ' + JSON.stringify([r.left, r.top, r.right, r.bottom]));
  });
  const h2 = join.querySelector('h2'), text = h2.firstChild, breaks = [];
  let top = null;
  for (let i = 0; i < text.length; i++) {
    const range = document.createRange();
    range.setStart(text, i); range.setEnd(text, i + 1);
    const rr = range.getClientRects()[0];
    if (!rr || rr.width === 0) continue;
    if (top !== null && rr.top > top + 2) breaks.push(text.data[i - 1] || '');
    top = rr.top;
  }
  return {hit, join: [j.left, j.top, j.right, j.bottom], shown: j.height > 0, breaks, heading: h2.textContent,
          turnShown: document.getElementById('turn-body').offsetHeight > 0};
"""


def _phone_tv(browser, serve, host: str, tmp_path, size: tuple[int, int] = (390, 844)):
    from kosti.dashboard.app import DashboardConfig, create_app

    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", host=host, pin="4826" if host != "127.0.0.1" else None,
                                     players=["Александра", "Boris"], preset="classic"))
    app.state.table.session.enter([1, 5, 2, 3, 6])  # turn points, a hint and the last throw on the turn card
    d = browser()
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": size[0], "height": size[1], "deviceScaleFactor": 2, "mobile": size[0] < 900})
    return app, serve(app), d


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("size", [(390, 844), (1280, 720)], ids=["phone", "tv"])
def test_the_join_card_covers_nothing_on_a_phone_and_its_words_stay_whole(lang, size, tmp_path, browser, serve):
    """On a phone the card flows below the game; on a TV-sized screen it sits in a corner the page leaves free."""
    from selenium.webdriver.support.ui import WebDriverWait

    app, srv, d = _phone_tv(browser, serve, "0.0.0.0", tmp_path, size)
    wait = WebDriverWait(d, 20)
    d.get(srv.url + "/tv")
    d.execute_script("localStorage.setItem('kosti.lang', arguments[0]);", lang)
    d.get(srv.url + "/tv")
    wait.until(lambda d: d.execute_script("const i = document.getElementById('join-qr');"
                                          "return i.complete && i.naturalWidth > 0"))
    wait.until(lambda d: d.execute_script("return document.getElementById('turn-body').offsetHeight > 0"))
    assert size[0] - 20 <= d.execute_script("return document.documentElement.clientWidth") <= size[0]
    m = d.execute_script(MEASURE)
    assert m["shown"] and m["turnShown"], m
    assert m["heading"] == ("Подключиться с телефона" if lang == "ru" else "Join from a phone")
    assert m["hit"] == [], m  # the card lies over nothing: turn points, hint, last die, scores
    assert all(c == " " for c in m["breaks"]), m  # lines break between words only


@pytest.mark.slow
def test_a_loopback_only_dashboard_offers_no_qr_code(tmp_path, browser, serve):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    app, srv, d = _phone_tv(browser, serve, "127.0.0.1", tmp_path)
    wait = WebDriverWait(d, 20)
    r = httpx.get(srv.url + "/api/join/qr.svg", timeout=10)
    assert r.status_code == 404 and "--host 0.0.0.0" in r.json()["error"] and "--host 0.0.0.0" in r.json()["error_ru"]
    for lang, words in (("en", "start kosti with --host 0.0.0.0"), ("ru", "запустите kosti с --host 0.0.0.0")):
        d.get(srv.url + "/tv")
        d.execute_script("localStorage.setItem('kosti.lang', arguments[0]);", lang)
        d.get(srv.url + "/tv")
        wait.until(lambda d, words=words: words in d.find_element(By.ID, "join-url").text)
        qr = d.find_element(By.ID, "join-qr")
        assert not qr.is_displayed() and not (qr.get_attribute("src") or ""), "no QR code of 127.0.0.1"
        assert d.execute_script(MEASURE)["hit"] == []
