"""The one browser-test set-up of the dashboard tests: headless Chromium, an app served in this process, and the
check that the page logged no SEVERE console entry — used through the ``browser`` and ``serve`` fixtures
(tests/dashboard/conftest.py), which quit every driver and close every server whatever the test's outcome.

Needs Debian's ``chromium`` and ``chromium-driver`` (``bash scripts/setup --test``): a test is skipped with the
reason when they are missing, and fails when ``CI=true`` (``ci_guard``).
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ci_guard

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Chromium's arguments for every test: headless, no sandbox (containers), a phone-sized window.
ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")


def free_port() -> int:
    """A TCP port free on the loopback address now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium(width: int = 412, height: int = 1400, lang: str | None = None) -> Any:
    """A headless Chromium driver with a ``width`` × ``height`` window; ``lang`` (``ru-RU``) sets the browser's own
    language (the page's before anything is chosen on it). Skips (fails on CI) without chromium/chromedriver."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        ci_guard.missing(f"headless browser test needs {', '.join(missing)} (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for a in (*ARGS, f"--window-size={width},{height}"):
        opts.add_argument(a)
    if lang:
        accept = f"{lang},{lang.split('-')[0]}"
        opts.add_argument(f"--lang={lang}")
        opts.add_argument(f"--accept-lang={accept}")
        opts.add_experimental_option("prefs", {"intl.accept_languages": accept})
    opts.binary_location = CHROMIUM
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


class InProcessServer:
    """uvicorn serving ``app`` on a free port in a thread (so a test can inject throws into the table); ``url``."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        threading.Thread(target=self.server.run, daemon=True).start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Ask the server to stop (it ends with its thread)."""
        self.server.should_exit = True


def exact_text(locator: tuple[str, str], text: str) -> Callable[[Any], bool]:
    """A wait condition: the element's whole text is ``text`` (a score or turn points). Selenium's
    ``text_to_be_present_in_element`` matches a part, so "4" passed for "-4", "14" and "40"."""

    def check(d: Any) -> bool:
        from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

        try:
            return bool(d.find_element(*locator).text.strip() == text)
        except (NoSuchElementException, StaleElementReferenceException):
            return False

    return check


class Browsers:
    """The ``browser`` fixture: ``browser(width, height, lang=None)`` opens a driver (:func:`chromium`); at the end of
    the test every driver's console is read and must hold no SEVERE entry, then every driver quits.

    ``browser.allow(text)`` lets SEVERE entries containing ``text`` pass (an answer the page shows, such as "status
    of 409"); ``browser.allow(source="network")`` lets every refused request pass (409, 422: the page shows them)."""

    def __init__(self) -> None:
        self.drivers: list[Any] = []
        self.allowed_text: list[str] = []
        self.allowed_sources: set[str] = set()

    def __call__(self, width: int = 412, height: int = 1400, lang: str | None = None) -> Any:
        d = chromium(width, height, lang)
        self.drivers.append(d)
        return d

    def allow(self, text: str | None = None, source: str | None = None) -> None:
        """Let SEVERE entries containing ``text``, or from ``source`` (``network``), pass the final check."""
        if text is not None:
            self.allowed_text.append(text)
        if source is not None:
            self.allowed_sources.add(source)

    def severe(self, d: Any) -> list[dict[str, Any]]:
        """The SEVERE console entries of driver ``d`` since the last read that are not allowed (printed, all)."""
        logs = d.get_log("browser")
        if logs:
            print("browser log:", [e["message"][:160] for e in logs])
        return [e for e in logs if e["level"] == "SEVERE" and e.get("source") not in self.allowed_sources
                and not any(t in e["message"] for t in self.allowed_text)]

    def close(self) -> list[dict[str, Any]]:
        """Read every driver's console, quit them all; returns the SEVERE entries that were not allowed."""
        errors: list[dict[str, Any]] = []
        for d in self.drivers:
            try:
                errors += self.severe(d)
            finally:
                d.quit()
        self.drivers.clear()
        return errors
