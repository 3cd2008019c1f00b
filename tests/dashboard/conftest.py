"""Shared fixtures for the dashboard tests: an app on a temporary database, injected throws, and the browser tests'
one set-up (``serve`` an app in this process, ``browser`` drivers whose consoles must stay free of SEVERE entries;
:mod:`browser_page`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from browser_page import Browsers, InProcessServer
from fastapi.testclient import TestClient

from kosti.dashboard.app import DashboardConfig, create_app
from kosti.dashboard.table import TableDie, TableThrow


def make_throw(faces: list[int], status: str = "ok", image: bool = False, reasons: list[str] | None = None) -> TableThrow:
    """A settled throw as the pipeline would deliver it: value 0 = unread die; boxes in a row, 40 px apart."""
    dice = [TableDie(int(f), 0.99 if f else 0.3, [40.0 * i, 10.0, 40.0 * i + 30, 40.0], uncertain=(f == 0))
            for i, f in enumerate(faces)]
    img = None
    if image:
        img = np.zeros((120, 240, 3), np.uint8)
        img[:, :, 1] = 110
    return TableThrow(dice, status, reasons or ([] if status == "ok" else ["test: uncertain"]), 7, 0.25, img)


class LocalClient(TestClient):
    """A TestClient that talks to the loopback address, as a browser on the table's machine does: the dashboard
    refuses state-changing requests and WebSockets naming a foreign Host (DNS rebinding guard,
    :mod:`kosti.dashboard.access`), and TestClient's default host ``testserver`` is one."""

    def __init__(self, app, **kw) -> None:
        kw.setdefault("base_url", "http://127.0.0.1:8000")
        super().__init__(app, **kw)

    def websocket_connect(self, url: str, *args, **kw):
        if url.startswith("/"):
            url = "ws://127.0.0.1:8000" + url
        return super().websocket_connect(url, *args, **kw)


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """Factory: ``make_client(**DashboardConfig fields)`` → TestClient on ``tmp_path/kosti.db`` (no camera)."""
    clients: list[TestClient] = []

    def factory(**kw) -> TestClient:
        kw.setdefault("db_path", tmp_path / "kosti.db")
        client = LocalClient(create_app(DashboardConfig(**kw)))
        clients.append(client)
        return client

    yield factory
    for c in clients:
        c.app.state.store.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., InProcessServer]]:
    """``serve(app)`` → an :class:`InProcessServer` (``.url``) of ``app`` in this process; closed after the test."""
    servers: list[InProcessServer] = []

    def factory(app) -> InProcessServer:
        srv = InProcessServer(app)
        servers.append(srv)
        return srv

    yield factory
    for srv in servers:
        srv.close()


@pytest.fixture
def browser(serve) -> Iterator[Browsers]:
    """``browser(width=412, height=1400, lang=None)`` → a headless Chromium driver. After the test — before the
    servers of ``serve`` close — every driver's console must hold no SEVERE entry (unless allowed:
    :meth:`Browsers.allow`), and every driver quits, whatever the outcome."""
    drivers = Browsers()
    try:
        yield drivers
    finally:
        errors = drivers.close()
    assert not errors, f"the page logged errors: {[e['message'][:300] for e in errors]}"


@pytest.fixture
def client(make_client) -> TestClient:
    return make_client()


def _start_game(client: TestClient, players=("Ann", "Boris"), preset: str = "classic", overrides=None,
                headers=None) -> int:
    body = {"players": list(players), "preset": preset}
    if overrides is not None:
        body["overrides"] = overrides
    r = client.post("/api/games", json=body, headers=headers or {})
    assert r.status_code == 201, r.text
    return r.json()["game"]["id"]


def _scores(snapshot: dict) -> dict[str, int]:
    return {p["name"]: p["score"] for p in snapshot["state"]["players"]}


@pytest.fixture
def throw() -> Callable[..., TableThrow]:
    """``throw(faces, status="ok", image=False)`` → a :class:`TableThrow` (0 = unread die)."""
    return make_throw


@pytest.fixture
def start_game() -> Callable[..., int]:
    """``start_game(client, players, preset, overrides, headers)`` → game id (asserts 201)."""
    return _start_game


@pytest.fixture
def scores() -> Callable[[dict], dict[str, int]]:
    """``scores(snapshot)`` → ``{player: recorded score}``."""
    return _scores


def _start_in_form(d, wait, players: str, preset: str, overrides: str | None = None, confirm: bool = True) -> None:
    """Start a game through the page's New game form in a Selenium driver ``d``: players (comma separated),
    a preset and, when given, rule changes as JSON (typed into the folded Rule changes box). With ``confirm``,
    a game still running on the table is put aside when the page asks (within 2 s)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    wait.until(lambda d: len(Select(d.find_element(By.ID, "ng-preset")).options) > 3)
    f = d.find_element(By.ID, "ng-players")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", f)
    f.clear()
    f.send_keys(players)
    Select(d.find_element(By.ID, "ng-preset")).select_by_value(preset)
    d.execute_script("document.querySelector('#new-game-form details').open = true")
    o = d.find_element(By.ID, "ng-overrides")
    o.clear()
    if overrides:
        o.send_keys(overrides)
    d.find_element(By.ID, "ng-submit").click()
    if confirm:
        try:
            WebDriverWait(d, 2).until(lambda d: d.find_element(By.ID, "confirm-dialog").get_attribute("open") is not None)
        except TimeoutException:
            return  # nothing was running: the game started
        d.find_element(By.ID, "confirm-ok").click()


@pytest.fixture
def start_in_form() -> Callable[..., None]:
    """:func:`_start_in_form` for browser tests."""
    return _start_in_form
