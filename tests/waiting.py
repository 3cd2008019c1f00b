"""Polling in tests that watch a running thing (a server, a pipeline, a broker): one helper instead of a copy per file."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(what: str, cond: Callable[[], T], timeout_s: float = 20.0, every_s: float = 0.1) -> T:
    """Call ``cond()`` every ``every_s`` seconds until it returns something truthy, and return that; after
    ``timeout_s`` seconds an AssertionError that names ``what`` was awaited."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(every_s)
