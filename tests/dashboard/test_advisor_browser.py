"""The advice and dice-statistics cards in headless Chromium: they follow the live state, speak both
languages, can be hidden, and never appear in the spectator view."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_advice_card_follows_the_game(tmp_path, throw, browser, serve):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from kosti.dashboard.app import DashboardConfig, create_app

    d = browser()
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", players=["Ann", "Boris"], preset="classic"))
    srv = serve(app)
    wait = WebDriverWait(d, 20, ignored_exceptions=(StaleElementReferenceException,))
    d.get(srv.url + "/")
    d.execute_script("localStorage.setItem('kosti.lang', 'en'); localStorage.removeItem('kosti.advisor');")
    d.get(srv.url + "/")
    wait.until(EC.visibility_of_element_located((By.ID, "advisor")))
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "THROW — Ann"))
    assert "to open the game" in d.find_element(By.ID, "adv-why").text
    wait.until(lambda d: "on" in d.find_element(By.ID, "conn").get_attribute("class"))
    app.state.table.submit_throw(throw([1, 1, 1, 5, 3]))  # 105, one die left: stop
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "STOP — Ann"))
    assert "67 % to lose the 105" in d.find_element(By.ID, "adv-why").text
    d.find_element(By.ID, "lang-toggle").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "ХВАТИТ — Ann"))
    assert "риск потерять 105" in d.find_element(By.ID, "adv-why").text
    import re

    body = d.find_element(By.ID, "adv-body").text  # Russian numbers take a decimal comma (28,3, not 28.3)
    assert re.search(r"\d,\d", body) and not re.search(r"\d\.\d", body), body
    # statistics card: the plot and the verdict
    wait.until(lambda d: d.execute_script(
        "const i = document.getElementById('st-plot'); return i.complete && i.naturalWidth > 0;"))
    assert d.find_element(By.ID, "st-verdict").text
    # hidden by the players: stays hidden after a reload
    d.find_element(By.ID, "adv-toggle").click()
    wait.until(lambda d: not d.find_elements(By.ID, "adv-verdict"))
    d.get(srv.url + "/")
    wait.until(EC.visibility_of_element_located((By.ID, "advisor")))
    assert not d.find_elements(By.ID, "adv-verdict")
    # the spectator view never builds the card
    d.get(srv.url + "/?view=tv")
    wait.until(EC.text_to_be_present_in_element((By.ID, "player-1"), "Boris"))
    assert not d.find_elements(By.ID, "advisor") and not d.find_elements(By.ID, "dice-stats")


@pytest.mark.slow
def test_advice_card_on_a_pig_table_shows_the_win_probability(tmp_path, throw, browser, serve):
    """Two-player Pig: after the order throw the card says throw / stop with the chance to win the
    game for each choice, in English and Russian; the spectator view still has no card."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from kosti.dashboard.app import DashboardConfig, create_app

    d = browser()
    app = create_app(DashboardConfig(db_path=tmp_path / "k.db", players=["Ann", "Boris"], preset="pig"))
    srv = serve(app)
    wait = WebDriverWait(d, 30, ignored_exceptions=(StaleElementReferenceException,))
    d.get(srv.url + "/")
    d.execute_script("localStorage.setItem('kosti.lang', 'en'); localStorage.removeItem('kosti.advisor');")
    d.get(srv.url + "/")
    wait.until(lambda d: "on" in d.find_element(By.ID, "conn").get_attribute("class"))
    table = app.state.table
    table.submit_throw(throw([2]))  # Ann's order throw
    table.submit_throw(throw([5]))  # Boris's: Ann threw the lowest and starts
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "THROW — Ann"))
    assert "to win the game" in d.find_element(By.ID, "adv-why").text
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-body"), "Chance to win the game if you throw"))
    for f in (6, 6, 6, 6):
        table.submit_throw(throw([f]))
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "STOP — Ann"))
    body = d.find_element(By.ID, "adv-body").text
    assert "Chance to win the game if you stop" in body and "stop and record 24" in body
    d.find_element(By.ID, "lang-toggle").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "adv-verdict"), "ХВАТИТ — Ann"))
    body = d.find_element(By.ID, "adv-body").text
    assert "Шанс выиграть партию, если остановиться" in body and "хватит, запишите 24" in body
    d.get(srv.url + "/?view=tv")
    wait.until(EC.text_to_be_present_in_element((By.ID, "player-1"), "Boris"))
    assert not d.find_elements(By.ID, "advisor")
